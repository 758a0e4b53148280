"""The ``local`` source: a pre-staged folder in torchvision's layout (for air-gapped clusters, architecture §4).

The folder may be the torchvision root (holding e.g. ``cifar-10-batches-py/``) or that layout folder itself.
Files are hard-linked into the data root when both are on one file system, otherwise copied
(:func:`isonorm.sources.link_or_copy`).
"""

from __future__ import annotations

from pathlib import Path

from ..sources import link_or_copy, staged_folder
from .registry import DatasetSpec


def locate_layout(spec: DatasetSpec, staged: Path) -> Path:
    """The folder inside ``staged`` that holds the files (``staged/<layout>`` or ``staged`` itself)."""
    nested = staged / spec.layout
    if nested.is_dir() or spec.missing_files(staged):
        return nested
    return staged


def stage_local(spec: DatasetSpec, staged: Path, dataset_dir: Path) -> None:
    """Check that ``staged`` holds every file of ``spec`` and link/copy them to ``dataset_dir/<layout>``."""
    staged = staged_folder(
        staged, "data", spec.name,
        f"the folder where torchvision.datasets.{spec.torchvision_class}(root, download=True) put the data (it "
        f"holds `{spec.layout}/`), or use source `torchvision` / `synthetic`.",
    )
    layout_dir = locate_layout(spec, staged)
    missing = spec.missing_files(layout_dir)
    if missing:
        raise FileNotFoundError(
            f"local data folder {layout_dir} for {spec.name} lacks {len(missing)} file(s): {', '.join(missing)}. "
            f"`path:` may name the torchvision root (holding `{spec.layout}/`) or that folder itself. "
            f"Stage the complete layout ({', '.join(spec.required_files())}), e.g. by copying the root of a "
            "torchvision download, and run again."
        )
    target_dir = dataset_dir / spec.layout
    target_dir.mkdir(parents=True, exist_ok=True)
    for file in spec.required_files():
        variants = [file, f"{file}.gz"] if spec.file_format == "idx" else [file]
        for name in variants:
            if (layout_dir / name).is_file():
                link_or_copy(layout_dir / name, target_dir / name)
