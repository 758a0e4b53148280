"""Where a result came from: git commit, package versions, device.

Recorded in every Parquet file's key-value metadata (architecture §5) and shown on the report's index page.
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from functools import lru_cache
from pathlib import Path

# The packages whose versions change numbers or figures.
TRACKED_PACKAGES = (
    "torch", "torchvision", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "seaborn",
    "snakemake", "papermill", "jupytext", "isonorm",
    # checkpoint stage: hook order and module outputs depend on the transformers version (decision D7)
    "transformers", "huggingface_hub", "safetensors", "tokenizers",
    "peft",  # lu2024 Table 5 (d): the LoRA merge
)


@lru_cache(maxsize=1)
def git_commit(cwd: str | Path | None = None) -> str:
    """The checkout's HEAD, with ``+dirty`` when the tree has uncommitted changes; ``unknown`` outside git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd, capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def package_versions() -> dict[str, str]:
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def device_description(device: object = None) -> str:
    """A human-readable name of the device a computation ran on (a ``torch.device`` or its name)."""
    import torch

    if device is not None and str(device).startswith("cuda") and torch.cuda.is_available():
        return f"cuda:{torch.cuda.get_device_name(torch.device(device))}"
    return f"cpu:{platform.processor() or platform.machine()}"


def provenance(device: object = None) -> dict[str, object]:
    return {
        "git_commit": git_commit(),
        "packages": package_versions(),
        "device": device_description(device),
        "python": platform.python_version(),
        "host": platform.node(),
    }
