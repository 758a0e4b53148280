"""The ``local`` source: a pre-staged folder in torchvision's layout (for air-gapped clusters, architecture §4).

The folder may be the torchvision root (holding e.g. ``cifar-10-batches-py/``) or that layout folder itself.
Files are hard-linked into the data root when both are on one file system, otherwise copied
(:func:`isonorm.sources.link_or_copy`).
"""

from __future__ import annotations

from pathlib import Path

from ..sources import link_or_copy, staged_folder
from .registry import DatasetSpec, dataset_spec


def locate_layout(spec: DatasetSpec, staged: Path) -> Path:
    """The folder inside ``staged`` that holds the files (``staged/<layout>`` or ``staged`` itself)."""
    nested = staged / spec.layout
    if nested.is_dir() or spec.missing_files(staged):
        return nested
    return staged


def missing_layout(spec: DatasetSpec, layout_dir: Path) -> str | None:
    """``<layout_dir> for <name> lacks N file(s): …`` and where ``path:`` may point; None when nothing is missing."""
    missing = spec.missing_files(layout_dir)
    if not missing:
        return None
    return (f"{layout_dir} for {spec.name} lacks {len(missing)} file(s): {', '.join(missing)}. `path:` may name the "
            f"torchvision root (holding `{spec.layout}/`) or that folder itself")


def layout_problem(name: str, staged: Path) -> str | None:
    """What keeps the existing ``staged`` from being data set ``name`` in torchvision's layout (None: nothing).
    Asked by the config check (isonorm.config_check.check_local_sources) before any job, so that a folder staged
    wrong stops the run at once rather than when its fetch job runs; the same words as :func:`stage_local`."""
    spec = dataset_spec(name)
    if not staged.is_dir():
        return f"{staged} for {name} is not a folder"
    return missing_layout(spec, locate_layout(spec, staged))


def stage_local(spec: DatasetSpec, staged: Path, dataset_dir: Path) -> None:
    """Check that ``staged`` holds every file of ``spec`` and link/copy them to ``dataset_dir/<layout>``."""
    staged = staged_folder(
        staged, "data", spec.name,
        f"the folder where torchvision.datasets.{spec.torchvision_class}(root, download=True) put the data (it "
        f"holds `{spec.layout}/`), or use source `torchvision` / `synthetic`.",
    )
    layout_dir = locate_layout(spec, staged)
    missing = missing_layout(spec, layout_dir)
    if missing:
        raise FileNotFoundError(
            f"local data folder {missing}. Stage the complete layout ({', '.join(spec.required_files())}), e.g. "
            "by copying the root of a torchvision download, and run again."
        )
    target_dir = dataset_dir / spec.layout
    target_dir.mkdir(parents=True, exist_ok=True)
    for file in spec.required_files():
        variants = [file, f"{file}.gz"] if spec.file_format == "idx" else [file]
        for name in variants:
            if (layout_dir / name).is_file():
                link_or_copy(layout_dir / name, target_dir / name)
