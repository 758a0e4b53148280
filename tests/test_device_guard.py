"""The device guard (isonorm.runtime, isonorm.gpus): ``device: auto`` on a machine whose GPU torch cannot use
stops with the driver's and the wheel's CUDA versions and the fix, instead of running the job on the CPU.

This machine has no GPU, so both sides are faked: the NVIDIA driver's /proc files and libcuda on one side,
torch's CUDA build and ``torch.cuda.is_available`` on the other."""

from __future__ import annotations

import ctypes
import logging

import pytest
import torch

from isonorm import gpus, runtime
from isonorm.runtime import UnusableGPUError, resolve_device
from isonorm.workflow import job_device


@pytest.fixture
def nvidia_driver(tmp_path, monkeypatch):
    """An NVIDIA driver 535.104.05 (CUDA 12.2) listing one GPU, as /proc and libcuda show it."""
    proc = tmp_path / "nvidia"
    (proc / "gpus" / "0000:00:06.0").mkdir(parents=True)
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    )
    monkeypatch.setattr(gpus, "NVIDIA_PROC", proc)
    monkeypatch.setattr(gpus, "ROCM_KFD", tmp_path / "kfd")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    class LibCuda:
        @staticmethod
        def cuDriverGetVersion(ref):
            ref._obj.value = 12020  # CUDA 12.2, as cuDriverGetVersion encodes it
            return 0

    monkeypatch.setattr(ctypes, "CDLL", lambda name: LibCuda())
    return proc


@pytest.fixture
def torch_without_cuda(monkeypatch):
    """torch 2.14.1's CUDA 13.0 build, which this driver cannot run."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", "13.0")


def test_the_driver_is_read_from_proc_and_libcuda(nvidia_driver):
    assert gpus.nvidia_gpu_present() and gpus.gpu_visible()
    assert gpus.nvidia_driver_version() == "535.104.05"
    assert gpus.driver_cuda_version() == "12.2"


def test_auto_stops_when_the_gpu_is_present_but_torch_cannot_use_it(nvidia_driver, torch_without_cuda):
    with pytest.raises(UnusableGPUError) as stopped:
        resolve_device("auto")
    message = str(stopped.value)
    for part in ("driver 535.104.05", "CUDA up to 12.2", "built for CUDA 13.0", "580.65.06",
                 "https://download.pytorch.org/whl/cu126", "device: cpu", "GPUs and drivers"):
        assert part in message, part


def test_an_explicit_cpu_device_runs_on_the_cpu_without_stopping(nvidia_driver, torch_without_cuda):
    assert resolve_device("cpu") == torch.device("cpu")


def test_an_explicit_cuda_device_names_the_same_cause(nvidia_driver, torch_without_cuda):
    with pytest.raises(UnusableGPUError, match="built for CUDA 13.0"):
        resolve_device("cuda")


def test_a_cpu_only_torch_build_is_named(nvidia_driver, torch_without_cuda, monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    with pytest.raises(UnusableGPUError, match="a build without CUDA"):
        resolve_device("auto")


def test_gpus_hidden_on_purpose_run_on_the_cpu(nvidia_driver, torch_without_cuda, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert resolve_device("auto") == torch.device("cpu")


def test_a_machine_without_a_gpu_runs_auto_on_the_cpu(tmp_path, monkeypatch, torch_without_cuda):
    monkeypatch.setattr(gpus, "NVIDIA_PROC", tmp_path / "absent")
    monkeypatch.setattr(gpus, "ROCM_KFD", tmp_path / "kfd")
    assert runtime.unusable_gpu() is None
    assert resolve_device("auto") == torch.device("cpu")


def test_a_resolved_device_is_handed_down_unchanged(nvidia_driver, torch_without_cuda):
    device = torch.device("cpu")
    assert resolve_device(device) is device  # no second resolution, no second guard


def test_a_job_stops_before_its_function_runs_and_logs_its_device(nvidia_driver, torch_without_cuda, caplog):
    with pytest.raises(UnusableGPUError):
        job_device({"function": "x:y", "config": {}, "kwargs": {"device": "auto"}})
    with caplog.at_level(logging.INFO, logger="isonorm"):
        assert job_device({"kwargs": {"device": "cpu"}}) == torch.device("cpu")
    assert "device: cpu:" in caplog.text
    assert job_device({"kwargs": {}}) is None  # a function without a device


def test_a_rocm_gpu_that_torch_cannot_use_is_named(tmp_path, monkeypatch, torch_without_cuda):
    monkeypatch.setattr(gpus, "NVIDIA_PROC", tmp_path / "absent")
    (tmp_path / "kfd").touch()
    monkeypatch.setattr(gpus, "ROCM_KFD", tmp_path / "kfd")
    with pytest.raises(UnusableGPUError, match="ROCm GPU"):
        resolve_device("auto")
