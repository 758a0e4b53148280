"""The GPUs a training job holds (isonorm.gpus): one, except in a local run whose jobs run on the CPU."""

from __future__ import annotations

import pytest

from isonorm import gpus


def test_a_cluster_job_always_asks_for_one_gpu():
    # the submitting host is not where the job runs: what it has says nothing
    assert gpus.job_gpus("auto", local=False) == gpus.job_gpus("cpu", local=False) == 1


def test_a_local_job_holds_a_gpu_only_if_it_will_use_one(monkeypatch):
    assert gpus.job_gpus("cpu", local=True) == 0
    assert gpus.job_gpus("cuda", local=True) == 1
    monkeypatch.setattr(gpus, "gpu_visible", lambda: True)
    assert gpus.job_gpus("auto", local=True) == 1
    monkeypatch.setattr(gpus, "gpu_visible", lambda: False)
    assert gpus.job_gpus("auto", local=True) == 0


@pytest.mark.parametrize("hidden", ["", "-1"])
def test_cuda_visible_devices_can_hide_every_gpu(monkeypatch, hidden):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", hidden)
    assert not gpus.gpu_visible()


def test_gpu_visible_agrees_with_torch():
    torch = pytest.importorskip("torch")
    assert gpus.gpu_visible() == torch.cuda.is_available()
