"""On-device augmentation for the training engine's ``augment`` hook (isonorm.train.Augment).

``RandomCrop(32, padding=4)`` + ``RandomHorizontalFlip()`` as Lu et al.'s CIFAR scripts (A.1.4 (C)/(R)),
applied to each sample of a stacked batch (R, B, C, H, W) independently, with one torch.Generator.
torchvision crops the raw image (padding with black, pixel 0) and normalises afterwards; our data are
normalised once at load time, so the padding value must be the normalised black, ``(0 − mean) / std``
(−1 for Normalize(0.5, 0.5)): :func:`padding_fill` computes it, and the result then equals torchvision's.
"""

from __future__ import annotations

from typing import Callable

import torch

from .preprocess import Normalization


def padding_fill(norm: Normalization | None) -> float:
    """The value black (pixel 0) takes after ``norm``: 0 without normalisation, else −mean/std.

    One value for all channels, so per-channel statistics must agree (true for Normalize(0.5, 0.5)).
    """
    if norm is None:
        return 0.0
    count = max(len(norm.mean), len(norm.std))  # a single value broadcasts to every channel
    fills = {round(-norm.mean[c % len(norm.mean)] / norm.std[c % len(norm.std)], 12) for c in range(count)}
    if len(fills) != 1:
        raise ValueError(f"per-channel normalisation {norm} maps black to different values per channel; "
                         "random_crop_flip pads with one value, use a single mean/std")
    return fills.pop()


def random_crop_flip(
    batch: torch.Tensor,
    generator: torch.Generator,
    padding: int = 4,  # RandomCrop(32, padding=4) (A.1.4 (C))
    flip: bool = True,  # RandomHorizontalFlip(p=0.5) (A.1.4 (C))
    fill: float = 0.0,  # torchvision's constant fill 0, in the data's (normalised) units; see padding_fill
) -> torch.Tensor:
    """Each image of ``batch`` (..., C, H, W): zero-pad by ``padding``, crop a random H×W window, flip w.p. ½.

    Offsets and flips are drawn from ``generator`` (on the batch's device), uniformly in 0..2·padding as
    torchvision's RandomCrop does. The output has the batch's shape, dtype and device.
    """
    if batch.ndim < 3:
        raise ValueError(f"expected images (..., C, H, W), got shape {tuple(batch.shape)}")
    if padding < 0:
        raise ValueError(f"padding must be ≥ 0, got {padding}")
    *lead, channels, height, width = batch.shape
    images = batch.reshape(-1, channels, height, width)
    n, device = images.shape[0], batch.device
    padded = torch.nn.functional.pad(images, (padding, padding, padding, padding), value=fill)
    top = torch.randint(0, 2 * padding + 1, (n,), generator=generator, device=device)
    left = torch.randint(0, 2 * padding + 1, (n,), generator=generator, device=device)
    rows = top[:, None] + torch.arange(height, device=device)  # (n, H)
    cols = left[:, None] + torch.arange(width, device=device)  # (n, W)
    if flip:
        flipped = torch.rand(n, generator=generator, device=device) < 0.5
        cols = torch.where(flipped[:, None], cols.flip(1), cols)
    sample = torch.arange(n, device=device)[:, None, None]
    out = padded[sample, :, rows[:, :, None], cols[:, None, :]]  # (n, H, W, C)
    return out.permute(0, 3, 1, 2).reshape(*lead, channels, height, width)


def crop_flip_augment(fill: float = 0.0, padding: int = 4, flip: bool = True) -> Callable[[torch.Tensor, torch.Generator], torch.Tensor]:
    """The engine hook ``augment(batch, generator)`` with these settings."""
    return lambda batch, generator: random_crop_flip(batch, generator, padding=padding, flip=flip, fill=fill)
