"""Load a split once as device-resident tensors (architecture §8: no per-sample DataLoader in hot loops)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import torch

from ..runtime import resolve_device
from .fetch import DATASET
from .formats import read_split
from .preprocess import TransformSpec, preprocess, resolve_normalization
from .registry import check_split, dataset_spec


class TensorPair(NamedTuple):
    """Inputs (float32, preprocessed) and labels (int64) of one split, on one device."""

    x: torch.Tensor
    y: torch.Tensor


def load_split(
    name: str,
    root: str | Path,
    split: str = "train",
    *,
    transform: TransformSpec,
    flatten: bool = False,
    device: str | torch.device = "cpu",
    limit: int | None = None,
) -> TensorPair:
    """Read ``root/<name>`` (left there by :func:`fetch_dataset`) and preprocess it once on ``device``.

    ``transform``: a name from ``NAMED_TRANSFORMS``, ``"dataset_constants"``, ``{mean, std}`` or None (each
    paper's choice lives in the config). ``limit``: keep the first ``limit`` samples in file order.
    ``device``: anything :func:`isonorm.runtime.resolve_device` accepts, ``"auto"`` included.
    """
    spec = dataset_spec(name)
    split = check_split(split)
    norm = resolve_normalization(transform, name)
    dataset_dir = Path(root) / name
    DATASET.require_complete(dataset_dir)  # absent or interrupted fetch: an error naming the fetch
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    images, labels = read_split(spec, dataset_dir, split)
    target = device if isinstance(device, torch.device) else resolve_device(device)
    # Move uint8 (4x smaller than float32) and convert on the device.
    images_t = torch.from_numpy(images[:limit]).to(target)
    labels_t = torch.from_numpy(labels[:limit]).to(target)
    return TensorPair(preprocess(images_t, norm, flatten=flatten), labels_t)
