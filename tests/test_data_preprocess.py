"""Preprocessing equals torchvision's ToTensor + Normalize; `load_split` gives device tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms

from isonorm.data import NAMED_TRANSFORMS, dataset_spec, fetch_dataset, load_split, preprocess, read_split
from isonorm.data.preprocess import DATASET_CONSTANTS, resolve_normalization


def torchvision_reference(images: np.ndarray, norm) -> torch.Tensor:
    """What the papers' DataLoaders produced: PIL image (as torchvision's datasets build it) -> transforms."""
    steps = [transforms.ToTensor()] + ([transforms.Normalize(norm.mean, norm.std)] if norm else [])
    pipeline = transforms.Compose(steps)
    mode = "L" if images.ndim == 3 else None  # torchvision's MNIST passes mode="L"; CIFAR none
    return torch.stack([pipeline(Image.fromarray(image, mode=mode)) for image in images])


COMMON = ["to_tensor", "half", "mnist_constants", "dataset_constants"]
PAIRS = [("cifar10", t) for t in COMMON + ["cifar10_constants", "cifar100_constants"]] + [
    (name, t) for name in ("mnist", "fashionmnist") for t in COMMON + ["fashionmnist_constants"]]


def test_every_named_transform_is_checked_against_torchvision():
    assert {t for _, t in PAIRS} == set(NAMED_TRANSFORMS) | {"dataset_constants"}


@pytest.mark.parametrize("name, transform", PAIRS)
def test_matches_torchvision_transforms(name, transform):
    spec = dataset_spec(name)
    images = np.random.default_rng(0).integers(0, 256, (5, *spec.image_shape), dtype=np.uint8)
    images[0] = 0
    images[1] = 255  # the ends of the range
    norm = resolve_normalization(transform, name)
    expected = torchvision_reference(images, norm)
    got = preprocess(torch.from_numpy(images), norm)
    assert got.dtype == torch.float32 and got.shape == (5, spec.channels, *spec.image_shape[:2])
    assert torch.equal(got, expected)
    assert torch.equal(preprocess(torch.from_numpy(images), norm, flatten=True), expected.view(5, -1))


def test_scalar_statistics_broadcast_to_every_channel():
    images = torch.from_numpy(np.random.default_rng(1).integers(0, 256, (3, 32, 32, 3), dtype=np.uint8))
    scalar = preprocess(images, resolve_normalization("mnist_constants", "cifar10"))
    per_channel = preprocess(images, resolve_normalization({"mean": [0.1307] * 3, "std": [0.3081] * 3}, "cifar10"))
    assert torch.equal(scalar, per_channel)


def test_known_values():
    images = torch.tensor([[[0, 255], [51, 102]]], dtype=torch.uint8)  # one 2x2 grey image
    assert torch.equal(preprocess(images, None), torch.tensor([[[[0.0, 1.0], [0.2, 0.4]]]]))
    half = preprocess(images, resolve_normalization("half", "mnist"))
    torch.testing.assert_close(half, torch.tensor([[[[-1.0, 1.0], [-0.6, -0.2]]]]))


def test_dataset_constants_pick_the_data_set():
    for name, named in DATASET_CONSTANTS.items():
        assert resolve_normalization("dataset_constants", name) == NAMED_TRANSFORMS[named]


@pytest.mark.parametrize(
    "transform, match",
    [("zscore", "unknown transform"), ({"mean": [0.5, 0.5], "std": [0.5, 0.5]}, "channel"),
     ({"mean": 0.5, "std": 0.0}, "positive"), ({"mean": 0.5}, "not understood"),
     ("cifar10_constants", "channel")],
)
def test_bad_transforms_are_named(transform, match):
    with pytest.raises(ValueError, match=match):
        resolve_normalization(transform, "mnist")


@pytest.fixture
def cifar_root(tmp_path):
    fetch_dataset("cifar10", tmp_path, "synthetic", n_train=30, n_test=20, seed=5)
    return tmp_path


def test_load_split_preprocesses_the_whole_split(cifar_root):
    pair = load_split("cifar10", cifar_root, "test", transform="half", flatten=True)
    images, labels = read_split(dataset_spec("cifar10"), cifar_root / "cifar10", "test")
    assert pair.x.shape == (20, 3072) and pair.x.dtype == torch.float32 and pair.y.dtype == torch.int64
    assert torch.equal(pair.x, preprocess(torch.from_numpy(images), NAMED_TRANSFORMS["half"], flatten=True))
    assert pair.y.tolist() == labels.tolist()
    x, y = pair  # unpacks like a tuple
    assert x is pair.x and y is pair.y


def test_load_split_limit_keeps_the_first_samples(cifar_root):
    full = load_split("cifar10", cifar_root, "train", transform=None)
    part = load_split("cifar10", cifar_root, "train", transform=None, limit=7)
    assert torch.equal(part.x, full.x[:7]) and torch.equal(part.y, full.y[:7])
    with pytest.raises(ValueError, match="limit"):
        load_split("cifar10", cifar_root, "train", transform=None, limit=0)
    with pytest.raises(ValueError, match="split"):
        load_split("cifar10", cifar_root, "validation", transform=None)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_load_split_on_cuda_equals_cpu(cifar_root):
    cpu = load_split("cifar10", cifar_root, "train", transform="cifar10_constants")
    gpu = load_split("cifar10", cifar_root, "train", transform="cifar10_constants", device="cuda")
    assert gpu.x.is_cuda and gpu.y.is_cuda
    torch.testing.assert_close(gpu.x.cpu(), cpu.x, rtol=0, atol=1e-6)
    assert torch.equal(gpu.y.cpu(), cpu.y)
