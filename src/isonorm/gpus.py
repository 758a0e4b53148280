"""How many GPUs a training job holds, decided while the workflow is parsed (so without importing torch).

Training rules declare ``resources: gpu=training_gpus`` (rules/common.smk), and profiles/default pools ``gpu=1``, so that
two trainings never share a card. A local run on a machine where the jobs will not use a GPU has no card to
share: there its jobs hold none, and ``--cores`` alone bounds how many run at once (docs/configuration.md,
"GPUs"). A cluster run always asks for one: the submitting host is not where the job runs.
"""

from __future__ import annotations

import os
from pathlib import Path


def gpu_visible() -> bool:
    """Whether ``device: auto`` (isonorm.runtime.resolve_device) will find a GPU here, asked without starting
    CUDA: an NVIDIA driver's device list, or ROCm's /dev/kfd, unless CUDA_VISIBLE_DEVICES hides every device."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "0").strip() in ("", "-1"):
        return False
    return any(Path("/proc/driver/nvidia/gpus").glob("*")) or Path("/dev/kfd").exists()


def job_gpus(device: str, local: bool) -> int:
    """GPUs held by one training job: 1, except in a local run whose jobs will run on the CPU (``device: cpu``, or
    ``auto`` on a machine without a GPU)."""
    if not local:
        return 1
    return int(device != "cpu" and (device != "auto" or gpu_visible()))
