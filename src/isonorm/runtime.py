"""Device choice, the machine's memory and deterministic seeding (architecture §8)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os

import torch

from . import gpus


class UnusableGPUError(RuntimeError):
    """A GPU is present but torch cannot use it: ``device: auto`` would quietly run the job on the CPU."""


# The driver a CUDA build of torch needs (NVIDIA's CUDA release notes, minimum Linux driver of each major
# version; minor versions of one major run on its minimum driver): the pinned torch is a CUDA 13.0 build.
MINIMUM_DRIVER = {"12": "525.60.13", "13": "580.65.06"}


def unusable_gpu() -> str | None:
    """Why a job here would not use the GPU the machine has, with the fix; None when there is no GPU (or
    CUDA_VISIBLE_DEVICES hides every one) or torch can use it. Reads the driver from /proc and libcuda."""
    if not gpus.gpu_visible() or torch.cuda.is_available():
        return None
    wheel = torch.version.cuda
    build = f"torch {torch.__version__}, " + (f"built for CUDA {wheel}" if wheel else "a build without CUDA")
    if not gpus.nvidia_gpu_present():
        return (f"a ROCm GPU (/dev/kfd) is present, but {build} cannot use it. Install torch's ROCm build of the same "
                "version (https://pytorch.org/get-started/locally/), or set `device: cpu` to run on the CPU on purpose.")
    driver, driver_cuda = gpus.nvidia_driver_version(), gpus.driver_cuda_version()
    needs = MINIMUM_DRIVER.get((wheel or "").split(".")[0])
    torch_version = torch.__version__.split("+")[0]
    try:
        vision = f' "torchvision=={importlib.metadata.version("torchvision").split("+")[0]}+cu126"'
    except importlib.metadata.PackageNotFoundError:
        vision = ""
    fixes = [f"update the NVIDIA driver to {needs} or newer (what CUDA {wheel} needs)"] if needs else []
    fixes += [
        "install the same torch (and torchvision) built for the driver's CUDA from PyTorch's own index, e.g. for a "
        f'CUDA 12 driver `pip install "torch=={torch_version}+cu126"{vision} --index-url '
        "https://download.pytorch.org/whl/cu126 --extra-index-url https://pypi.org/simple`",
        "set `device: cpu` (--config device=cpu) to run on the CPU on purpose",
    ]
    return (
        f"an NVIDIA GPU is present (driver {driver or 'unknown'}, which supports CUDA up to "
        f"{driver_cuda or 'an unknown version'}), but {build} cannot use it, so the job would run on the CPU. "
        f'Fix it (docs/configuration.md, "GPUs and drivers"): {"; or ".join(fixes)}.'
    )


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``auto`` means CUDA when torch can use it, the CPU on a machine without a GPU, and an error
    (:class:`UnusableGPUError`) on a machine whose GPU torch cannot use; anything else is passed to
    ``torch.device``. A ``torch.device`` is returned as it is: a job resolves its device once
    (:func:`isonorm.workflow.job_device`) and hands the result down."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        problem = unusable_gpu()
        if problem:
            raise UnusableGPUError(f"config `device: auto`: {problem}")
        return torch.device("cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise UnusableGPUError(
            f"config asks for device {device!r} but torch cannot use CUDA here: "
            + (unusable_gpu() or "this machine has no GPU; set `device: auto` (or `cpu`) in the config")
        )
    return resolved


def machine_memory_mb() -> int:
    """This machine's physical memory in MB (MiB, as ``mem_mb`` counts them): what a local job can hold at most."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from (experiment, variant, run, ...): same parts, same seed, on every machine.

    Decision B12 takes the run index as the seed; hashing it together with the experiment and
    variant keeps the streams of different experiments independent while staying reproducible.
    """
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def generator(*parts: object, device: str | torch.device = "cpu") -> torch.Generator:
    """A torch Generator seeded with :func:`derive_seed` of ``parts``."""
    gen = torch.Generator(device=device)
    gen.manual_seed(derive_seed(*parts))
    return gen
