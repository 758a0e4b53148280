"""On-device RandomCrop(32, pad 4) + horizontal flip for stacked batches (isonorm.data.augment)."""

from __future__ import annotations

import pytest
import torch

from isonorm.data.augment import crop_flip_augment, padding_fill, random_crop_flip
from isonorm.data.preprocess import Normalization, normalize


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_shape_dtype_and_identity_without_padding_or_flip():
    batch = torch.randn(2, 5, 3, 8, 8)
    out = random_crop_flip(batch, _gen(), padding=0, flip=False)
    assert out.shape == batch.shape and out.dtype == batch.dtype
    assert torch.equal(out, batch)


def test_flip_only_gives_the_image_or_its_mirror():
    batch = torch.randn(64, 3, 6, 6)
    out = random_crop_flip(batch, _gen(), padding=0, flip=True)
    same = (out == batch).flatten(1).all(1)
    mirrored = (out == batch.flip(-1)).flatten(1).all(1)
    assert bool((same | mirrored).all())
    assert 0 < int(mirrored.sum()) < 64  # p = 1/2: both outcomes occur


def test_crop_is_a_window_of_the_padded_image():
    image = torch.randn(1, 2, 5, 5)
    out = random_crop_flip(image, _gen(3), padding=2, flip=False, fill=-7.0)[0]
    padded = torch.nn.functional.pad(image[0], (2, 2, 2, 2), value=-7.0)
    windows = [padded[:, i:i + 5, j:j + 5] for i in range(5) for j in range(5)]
    assert any(torch.equal(out, w) for w in windows)


def test_same_generator_seed_same_result_and_samples_differ():
    batch = torch.randn(3, 10, 3, 8, 8)
    a = random_crop_flip(batch, _gen(5))
    b = random_crop_flip(batch, _gen(5))
    assert torch.equal(a, b)
    hook = crop_flip_augment(fill=0.0)
    assert torch.equal(hook(batch, _gen(5)), a)


def test_normalise_then_crop_with_fill_equals_torchvision_order():
    """torchvision pads the raw image with black and normalises after; with padding_fill the orders agree."""
    raw = torch.rand(16, 3, 8, 8)
    norm = Normalization((0.5,), (0.5,))
    assert padding_fill(norm) == -1.0
    assert padding_fill(None) == 0.0
    crop_then_norm = normalize(random_crop_flip(raw, _gen(1), fill=0.0), norm)
    norm_then_crop = random_crop_flip(normalize(raw.clone(), norm), _gen(1), fill=padding_fill(norm))
    torch.testing.assert_close(crop_then_norm, norm_then_crop)


def test_bad_input_and_unequal_channel_fills_are_rejected():
    with pytest.raises(ValueError, match="images"):
        random_crop_flip(torch.randn(4, 4), _gen())
    with pytest.raises(ValueError, match="padding"):
        random_crop_flip(torch.randn(1, 1, 4, 4), _gen(), padding=-1)
    with pytest.raises(ValueError, match="per channel"):
        padding_fill(Normalization((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261)))
