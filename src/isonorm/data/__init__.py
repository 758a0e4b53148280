"""Data sets as device-resident tensors: registry, three sources, own readers, the papers' preprocessing.

``fetch_dataset`` (run by the fetch_data rule) leaves ``<root>/<name>/`` in torchvision's on-disk layout with
a ``.ready`` marker; ``load_split`` reads it with our fast readers and applies ToTensor + Normalize once.
Text corpora for language-model probes (``fetch_texts``/``load_texts``) are frozen into ``<root>/<name>/texts.json``.
Each is a kind of :func:`isonorm.sources.fetch` input (``DATASET``, ``TEXTS``; word-level corpora and
instruction sets: :mod:`.corpora`, :mod:`.instructions`).
"""

from .fetch import DATASET, fetch_dataset
from .formats import CorruptDataError, read_split
from .download import DownloadError
from .preprocess import NAMED_TRANSFORMS, Normalization, preprocess, resolve_normalization
from .registry import DATASETS, DatasetSpec, dataset_spec
from .tensors import TensorPair, load_split
from .texts import TEXT_CORPORA, TEXTS, fetch_texts, load_texts, read_texts, shipped_texts

__all__ = [
    "DATASET",
    "DATASETS",
    "NAMED_TRANSFORMS",
    "TEXTS",
    "TEXT_CORPORA",
    "CorruptDataError",
    "DatasetSpec",
    "DownloadError",
    "Normalization",
    "TensorPair",
    "dataset_spec",
    "fetch_dataset",
    "fetch_texts",
    "load_split",
    "load_texts",
    "preprocess",
    "read_split",
    "read_texts",
    "resolve_normalization",
    "shipped_texts",
]
