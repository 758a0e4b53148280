"""The ``synthetic`` source: a deterministic stand-in with the real data set's shapes, dtype and classes.

It is written to disk in torchvision's layout and format, so the quick preset runs the very reader and
preprocessing code of the full pipeline (architecture §4). Each class has its own random mean image; a sample is
its class mean plus Gaussian pixel noise, rounded to uint8. Classes are therefore (nearly linearly)
separable and a network's training loss falls, as the training curves of the papers need.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .formats import write_cifar_batch, write_cifar_meta, write_idx
from .registry import SPLITS, DatasetSpec

NOISE_STD = 64.0  # pixel noise (of 0..255) around the class mean: overlap, yet learnable in a few steps
CHUNK = 10_000  # samples generated at a time, bounding memory for full-size stand-ins (CIFAR: 120 MB)


def synthetic_split(
    rng: np.random.Generator, class_means: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` balanced, shuffled labels and their images (class mean + noise, clipped to 0..255)."""
    num_classes = len(class_means)
    labels = rng.permutation(np.arange(n) % num_classes).astype(np.int64)
    images = np.empty((n, *class_means.shape[1:]), dtype=np.uint8)
    for start in range(0, n, CHUNK):
        part = labels[start : start + CHUNK]
        noise = rng.standard_normal((len(part), *class_means.shape[1:]), dtype=np.float32) * NOISE_STD
        images[start : start + CHUNK] = np.clip(np.rint(class_means[part] + noise), 0, 255).astype(np.uint8)
    return images, labels


def write_synthetic(spec: DatasetSpec, dataset_dir: Path, sizes: dict[str, int], seed: int) -> None:
    """Write a synthetic ``spec`` with ``sizes[split]`` samples per split, fully determined by ``seed``."""
    rng = np.random.default_rng(seed)
    class_means = rng.uniform(0.0, 255.0, size=(spec.num_classes, *spec.image_shape)).astype(np.float32)
    layout_dir = dataset_dir / spec.layout
    layout_dir.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        images, labels = synthetic_split(rng, class_means, sizes[split])
        files = spec.split_files[split]
        if spec.file_format == "idx":
            image_file, label_file = files
            write_idx(layout_dir / image_file, images)
            write_idx(layout_dir / label_file, labels.astype(np.uint8))
        else:  # CIFAR-10 spreads its training set over five batch files, as the original does
            for file, part in zip(files, np.array_split(np.arange(len(labels)), len(files))):
                write_cifar_batch(layout_dir / file, images[part], labels[part], spec.label_key, f"synthetic {file}")
    if spec.meta_file:
        names = [f"synthetic_class_{c}" for c in range(spec.num_classes)]
        write_cifar_meta(layout_dir / spec.meta_file, {spec.meta_key: names})
