"""Preprocessing exactly as the papers' code did: ``ToTensor`` then ``Normalize(mean, std)``, once, on device.

``ToTensor`` maps uint8 HWC images to float32 CHW in [0, 1]; ``Normalize`` subtracts a per-channel mean and
divides by a per-channel std, a single value broadcasting to every channel (as torchvision does, which is
how daneshmand2021 applied the MNIST constants to CIFAR-10). The arithmetic is torchvision's own
(``float().div(255)``, ``sub_(mean).div_(std)``), so the result equals torchvision's transforms bit for bit.
A transform is named below or given as ``{"mean": [...], "std": [...]}`` in the config.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import torch

from .registry import dataset_spec


@dataclass(frozen=True)
class Normalization:
    """Per-channel ``Normalize(mean, std)``; one value applies to all channels."""

    mean: tuple[float, ...]
    std: tuple[float, ...]


NAMED_TRANSFORMS: dict[str, Normalization | None] = {
    # ToTensor only, pixels in [0, 1]: A.1.4 (F) "ToTensor only, values in [0,1], flattened; no
    # mean/std normalisation" (MNIST FNN); daneshmand2021-appfig7a/b SVD init "ToTensor only, no normalisation".
    "to_tensor": None,
    # Normalize(0.5, 0.5) -> [-1, 1]: daneshmand2021-fig4a "ToTensor + Normalize(0.5, 0.5) (→ [−1,1])";
    # A.1.4 (C)/(R) "Normalize(mean 0.5, std 0.5 per channel)"; D.0 (B)
    # "Normalize(0.5, 0.5) per channel ... for MNIST, FashionMNIST, CIFAR10 and CIFAR100".
    "half": Normalization((0.5,), (0.5,)),
    # MNIST statistics: C.0 "Data" table (MNIST 0.1307 / 0.3081); daneshmand2021-appfig6a/daneshmand2021-appfig6b
    # "Normalize(0.1307, 0.3081) (MNIST constants broadcast to 3 channels)" on CIFAR-10.
    "mnist_constants": Normalization((0.1307,), (0.3081,)),
    # Per-data-set statistics of meterez2024's src/constants.py: C.0 "Data" table.
    "fashionmnist_constants": Normalization((0.2860,), (0.3530,)),
    "cifar10_constants": Normalization((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261)),
    "cifar100_constants": Normalization((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
}

# ``dataset_constants`` picks the statistics of the data set being loaded (meterez2024 trains on all four
# with its per-data-set table, C.0 "Data").
DATASET_CONSTANTS = {
    "mnist": "mnist_constants",
    "fashionmnist": "fashionmnist_constants",
    "cifar10": "cifar10_constants",
    "cifar100": "cifar100_constants",
}

TransformSpec = str | Mapping[str, Sequence[float] | float] | None


def _as_tuple(value: Sequence[float] | float) -> tuple[float, ...]:
    return tuple(float(v) for v in value) if isinstance(value, (list, tuple)) else (float(value),)


def resolve_normalization(transform: TransformSpec, dataset: str) -> Normalization | None:
    """The ``Normalize`` a config's ``transform`` asks for on ``dataset`` (None: ``ToTensor`` only)."""
    choices = f"{sorted(NAMED_TRANSFORMS) + ['dataset_constants']} or {{mean: [...], std: [...]}}"
    if transform is None:
        return None
    if isinstance(transform, str):
        if transform == "dataset_constants":
            if dataset not in DATASET_CONSTANTS:
                raise ValueError(f"no dataset_constants for {dataset!r}; give {{mean: [...], std: [...]}}")
            transform = DATASET_CONSTANTS[dataset]
        if transform not in NAMED_TRANSFORMS:
            raise ValueError(f"unknown transform {transform!r}; use one of {choices}")
        norm = NAMED_TRANSFORMS[transform]
        if norm is None:
            return None
    elif isinstance(transform, Mapping) and set(transform) == {"mean", "std"}:
        norm = Normalization(_as_tuple(transform["mean"]), _as_tuple(transform["std"]))
    else:
        raise ValueError(f"transform {transform!r} not understood; use one of {choices}")
    channels = dataset_spec(dataset).channels
    for label, values in (("mean", norm.mean), ("std", norm.std)):
        if len(values) not in (1, channels):
            raise ValueError(
                f"transform {label} {values} has {len(values)} values; {dataset} has {channels} channel(s)"
            )
    if min(norm.std) <= 0:
        raise ValueError(f"transform std {norm.std} must be positive")
    return norm


def to_tensor(images: torch.Tensor) -> torch.Tensor:
    """torchvision ``ToTensor`` on a batch: uint8 (N, H, W[, C]) -> float32 (N, C, H, W) in [0, 1]."""
    if images.dtype != torch.uint8 or images.ndim not in (3, 4):
        raise ValueError(f"expected uint8 images (N, H, W) or (N, H, W, C), got {images.dtype} {tuple(images.shape)}")
    chw = images.unsqueeze(1) if images.ndim == 3 else images.permute(0, 3, 1, 2).contiguous()
    return chw.float().div(255)


def normalize(x: torch.Tensor, norm: Normalization) -> torch.Tensor:
    """torchvision ``Normalize`` (in place on ``x``) on a (N, C, H, W) batch."""
    mean = torch.as_tensor(norm.mean, dtype=x.dtype, device=x.device).view(-1, 1, 1)
    std = torch.as_tensor(norm.std, dtype=x.dtype, device=x.device).view(-1, 1, 1)
    return x.sub_(mean).div_(std)


def preprocess(images: torch.Tensor, norm: Normalization | None, flatten: bool = False) -> torch.Tensor:
    """``ToTensor`` + optional ``Normalize`` + optional flatten to (N, C·H·W) in CHW order (as ``x.view(N, -1)``)."""
    x = to_tensor(images)
    if norm is not None:
        x = normalize(x, norm)
    return x.reshape(len(x), -1) if flatten else x
