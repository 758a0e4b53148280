"""The GPUs a training job holds (isonorm.plan.RunPlan.gpus_per_training): one, except in a local run whose jobs
run on the CPU; and what isonorm.gpus sees of this machine's GPU."""

from __future__ import annotations

import pytest

from isonorm import gpus
from isonorm.plan import RunPlan


def gpus_per_training(device: str, local: bool) -> int:
    return RunPlan.of({"device": device, "compute": "all"}, local=local).gpus_per_training


def test_a_cluster_job_always_asks_for_one_gpu():
    # the submitting host is not where the job runs: what it has says nothing
    assert gpus_per_training("auto", local=False) == gpus_per_training("cpu", local=False) == 1


def test_a_local_job_holds_a_gpu_only_if_it_will_use_one(monkeypatch):
    assert gpus_per_training("cpu", local=True) == 0
    assert gpus_per_training("cuda", local=True) == 1
    monkeypatch.setattr(gpus, "gpu_visible", lambda: True)
    assert gpus_per_training("auto", local=True) == 1
    monkeypatch.setattr(gpus, "gpu_visible", lambda: False)
    assert gpus_per_training("auto", local=True) == 0


@pytest.mark.parametrize("hidden", ["", "-1"])
def test_cuda_visible_devices_can_hide_every_gpu(monkeypatch, hidden):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", hidden)
    assert not gpus.gpu_visible()


def test_gpu_visible_agrees_with_torch():
    torch = pytest.importorskip("torch")
    assert gpus.gpu_visible() == torch.cuda.is_available()
