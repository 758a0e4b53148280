"""What GPU this machine has, asked without importing torch or starting CUDA: the run plan (isonorm.plan) decides
from it whether a local run trains and how many GPUs a training job holds (docs/configuration.md, "GPUs"); the
device guard (isonorm.runtime) names the driver and CUDA versions when torch cannot use the GPU.
"""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

NVIDIA_PROC = Path("/proc/driver/nvidia")  # the kernel driver's view: its GPUs and its version
ROCM_KFD = Path("/dev/kfd")  # ROCm's kernel device: present where an AMD GPU is


def gpu_visible() -> bool:
    """Whether ``device: auto`` (isonorm.runtime.resolve_device) will find a GPU here, asked without starting
    CUDA: an NVIDIA driver's device list, or ROCm's /dev/kfd, unless CUDA_VISIBLE_DEVICES hides every device."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", "0").strip() in ("", "-1"):
        return False
    return nvidia_gpu_present() or ROCM_KFD.exists()


def nvidia_gpu_present() -> bool:
    """Whether the NVIDIA kernel driver lists a GPU (whatever CUDA_VISIBLE_DEVICES says)."""
    return any((NVIDIA_PROC / "gpus").glob("*"))


def nvidia_driver_version() -> str | None:
    """The NVIDIA kernel driver's version, e.g. ``"535.104.05"``, from /proc; None without one."""
    try:
        text = (NVIDIA_PROC / "version").read_text()
    except OSError:
        return None
    found = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+(?:\.\d+)+)", text)
    return found.group(1) if found else None


def driver_cuda_version() -> str | None:
    """The newest CUDA version the installed driver supports, e.g. ``"12.2"`` (libcuda's cuDriverGetVersion,
    what nvidia-smi prints as "CUDA Version"); None where libcuda cannot be loaded."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int()
        if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"
