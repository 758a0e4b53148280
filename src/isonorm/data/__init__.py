"""Data sets as device-resident tensors: registry, three sources, own readers, the papers' preprocessing.

``fetch_dataset`` (run by the data rule) leaves ``<root>/<name>/`` in torchvision's on-disk layout with a
``.ready`` marker; ``load_split`` reads it with our fast readers and applies ToTensor + Normalize once.
"""

from .fetch import SOURCES, fetch_dataset
from .formats import CorruptDataError, read_split
from .download import DownloadError
from .preprocess import NAMED_TRANSFORMS, Normalization, preprocess, resolve_normalization
from .registry import DATASETS, DatasetSpec, dataset_spec
from .tensors import TensorPair, load_split

__all__ = [
    "DATASETS",
    "NAMED_TRANSFORMS",
    "SOURCES",
    "CorruptDataError",
    "DatasetSpec",
    "DownloadError",
    "Normalization",
    "TensorPair",
    "dataset_spec",
    "fetch_dataset",
    "load_split",
    "preprocess",
    "read_split",
    "resolve_normalization",
]
