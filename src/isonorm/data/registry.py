"""The data sets the four papers train on, and the folder layout torchvision gives each on disk.

Every source (download, pre-staged folder, synthetic) leaves a data set under ``<root>/<name>/`` in exactly
the layout torchvision's own dataset class creates when called with ``root=<root>/<name>``, so one reader
serves them all. Layouts, file names and split sizes are those of torchvision's ``datasets/cifar.py`` and
``datasets/mnist.py`` (``base_folder``/``train_list``/``test_list``/``meta``; ``raw_folder``/``resources``).
Users of each data set: CIFAR-10 all four papers; CIFAR-100 lu2024 (app. tables 2-3) and meterez2024;
MNIST lu2024, meterez2024, joudaki2023; FashionMNIST meterez2024 (C.0 "Data").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..sources import Registry

Split = Literal["train", "test"]
SPLITS: tuple[Split, ...] = ("train", "test")


@dataclass(frozen=True)
class DatasetSpec:
    """One data set: where torchvision puts it, how it is stored, and what it holds."""

    name: str
    torchvision_class: str  # class in torchvision.datasets that downloads it
    layout: str  # folder (relative to the torchvision root) holding the files
    file_format: Literal["cifar", "idx"]  # pickled CIFAR batches, or MNIST idx (optionally .gz)
    split_files: dict[str, tuple[str, ...]]  # cifar: batch files per split; idx: (images, labels)
    meta_file: str | None  # CIFAR class-name file; idx data sets have none
    meta_key: str | None  # key of the class names inside the meta file (torchvision's ``meta["key"]``)
    label_key: str | None  # key of the labels inside a CIFAR batch
    image_shape: tuple[int, ...]  # (H, W, C) for colour, (H, W) for grey-scale, as stored
    num_classes: int
    split_sizes: dict[str, int]

    @property
    def channels(self) -> int:
        return self.image_shape[2] if len(self.image_shape) == 3 else 1

    def required_files(self) -> list[str]:
        """Files, relative to :attr:`layout`, that a complete copy holds (idx files may also be ``.gz``)."""
        files = [f for split in SPLITS for f in self.split_files[split]]
        return files + ([self.meta_file] if self.meta_file else [])

    def missing_files(self, layout_dir: Path) -> list[str]:
        """Required files absent from ``layout_dir``; an idx file counts as present in plain or ``.gz`` form."""
        def present(file: str) -> bool:
            if self.file_format == "idx":
                return (layout_dir / file).is_file() or (layout_dir / f"{file}.gz").is_file()
            return (layout_dir / file).is_file()

        return [f + ("[.gz]" if self.file_format == "idx" else "") for f in self.required_files() if not present(f)]


def _idx_files(prefix: str) -> tuple[str, str]:
    return (f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte")


def _mnist_like(name: str, torchvision_class: str) -> DatasetSpec:
    """MNIST and FashionMNIST share torchvision's layout (``<class>/raw``), idx files and sizes."""
    return DatasetSpec(
        name=name,
        torchvision_class=torchvision_class,
        layout=f"{torchvision_class}/raw",
        file_format="idx",
        split_files={"train": _idx_files("train"), "test": _idx_files("t10k")},
        meta_file=None,
        meta_key=None,
        label_key=None,
        image_shape=(28, 28),
        num_classes=10,
        split_sizes={"train": 60_000, "test": 10_000},
    )


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            name="cifar10",
            torchvision_class="CIFAR10",
            layout="cifar-10-batches-py",
            file_format="cifar",
            split_files={"train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",)},
            meta_file="batches.meta",
            meta_key="label_names",
            label_key="labels",
            image_shape=(32, 32, 3),
            num_classes=10,
            split_sizes={"train": 50_000, "test": 10_000},
        ),
        DatasetSpec(
            name="cifar100",
            torchvision_class="CIFAR100",
            layout="cifar-100-python",
            file_format="cifar",
            split_files={"train": ("train",), "test": ("test",)},
            meta_file="meta",
            meta_key="fine_label_names",
            label_key="fine_labels",  # the 100-class labels; torchvision's CIFAR100 reads these
            image_shape=(32, 32, 3),
            num_classes=100,
            split_sizes={"train": 50_000, "test": 10_000},
        ),
        _mnist_like("mnist", "MNIST"),
        _mnist_like("fashionmnist", "FashionMNIST"),
    )
}
DATASET_REGISTRY = Registry(DATASETS, "data set", "isonorm.data.registry.DATASETS")
dataset_spec = DATASET_REGISTRY.lookup  # the entry for a name, or an error listing the known data sets


def check_split(split: str) -> Split:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {SPLITS}")
    return split  # type: ignore[return-value]
