"""Fast readers (and writers) of torchvision's on-disk formats, straight to uint8 numpy arrays.

We do not read through torchvision's dataset classes: their md5 checks reject the synthetic files of the
quick preset, and their per-sample PIL transforms are slow (decision D14: "GPU-resident"
preprocessed tensors). The formats:

- CIFAR (https://www.cs.toronto.edu/~kriz/cifar.html): each batch is a pickled dict with ``data``, a uint8
  array (N, 3072) holding each image as 1024 red, then 1024 green, then 1024 blue bytes (row-major 32x32),
  and the labels (``labels`` for CIFAR-10, ``fine_labels`` for CIFAR-100) as a list of ints. The original
  files were pickled by Python 2, so keys load as ``str`` with ``encoding="latin1"`` (as torchvision loads
  them) and as ``bytes`` in files written by Python 3 with bytes keys; both are accepted.
- idx (http://yann.lecun.com/exdb/mnist/): big-endian header ``0x00 0x00 <type> <ndim>`` then ``ndim``
  uint32 sizes, then the data; type 0x08 = unsigned byte (magic 2051 for images, 2049 for labels).
  torchvision keeps both the downloaded ``.gz`` and the extracted file; either is read.

Images come back as (N, H, W, C) for colour and (N, H, W) for grey-scale, labels as int64 (N,).
"""

from __future__ import annotations

import gzip
import pickle
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import write_bytes_atomically
from ..sources import refetch_hint
from .registry import DatasetSpec, Split

IDX_UBYTE = 0x08  # idx type code of unsigned bytes, the only one MNIST/FashionMNIST use
PICKLE_PROTOCOL = 4  # of the CIFAR batches we write (see write_cifar_batch)


class CorruptDataError(RuntimeError):
    """A data file exists but cannot be parsed (truncated download, interrupted copy, wrong file)."""


def _corrupt(path: Path, dataset_dir: Path, detail: str) -> CorruptDataError:
    return CorruptDataError(f"{path} is damaged (truncated or corrupt): {detail}. "
                            + refetch_hint(dataset_dir, "data set"))


def idx_path(layout_dir: Path, file: str) -> Path:
    """The plain idx file if present, else its ``.gz`` (the plain name when neither exists)."""
    plain = layout_dir / file
    gz = layout_dir / f"{file}.gz"
    return gz if not plain.is_file() and gz.is_file() else plain


def read_idx(path: Path, dataset_dir: Path) -> np.ndarray:
    """An idx file (plain or ``.gz``) as a uint8 array of the shape its header states."""
    try:  # a bytearray, so that the arrays viewing it are writable (torch.from_numpy warns otherwise)
        raw = bytearray(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())
    except (OSError, EOFError, zlib.error) as err:
        raise _corrupt(path, dataset_dir, f"cannot read/decompress ({err})") from err
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise _corrupt(path, dataset_dir, "not an idx file (bad magic number)")
    if raw[2] != IDX_UBYTE:
        raise _corrupt(path, dataset_dir, f"idx type code {raw[2]:#04x}, expected unsigned byte {IDX_UBYTE:#04x}")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise _corrupt(path, dataset_dir, "header truncated")
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    expected = int(np.prod(shape))
    if len(raw) - header != expected:
        raise _corrupt(path, dataset_dir, f"header says {shape} = {expected} bytes, file holds {len(raw) - header}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def _load_pickle(path: Path, dataset_dir: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            entry = pickle.load(handle, encoding="latin1")
    except Exception as err:  # unpickling damaged bytes "may raise other exceptions, including (but not
        # necessarily limited to) AttributeError, EOFError, ImportError, and IndexError"
        # (https://docs.python.org/3/library/pickle.html#pickle.UnpicklingError); flipped bytes in a CIFAR batch
        # also gave ModuleNotFoundError and MemoryError
        raise _corrupt(path, dataset_dir, f"cannot unpickle ({type(err).__name__}: {err})") from err
    if not isinstance(entry, dict):
        raise _corrupt(path, dataset_dir, f"expected a pickled dict, found {type(entry).__name__}")
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in entry.items()}


def read_cifar_batch(path: Path, label_key: str, pixels: int, dataset_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """One pickled CIFAR batch as its raw ((N, C·H·W) uint8, (N,) int64), rows in the file's CHW order."""
    entry = _load_pickle(path, dataset_dir)
    if "data" not in entry or label_key not in entry:
        raise _corrupt(path, dataset_dir, f"missing key 'data' or {label_key!r} (found {sorted(entry)})")
    data = np.asarray(entry["data"])
    labels = np.asarray(entry[label_key], dtype=np.int64)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != pixels:
        raise _corrupt(path, dataset_dir, f"'data' is {data.dtype} {data.shape}, expected uint8 (N, {pixels})")
    if labels.shape != (data.shape[0],):
        raise _corrupt(path, dataset_dir, f"{len(labels)} labels for {data.shape[0]} images")
    return data, labels


def read_split(spec: DatasetSpec, dataset_dir: Path, split: Split) -> tuple[np.ndarray, np.ndarray]:
    """All images and labels of one split of a data set stored under ``dataset_dir`` (= ``<root>/<name>``)."""
    layout_dir = dataset_dir / spec.layout
    files = spec.split_files[split]
    if spec.file_format == "cifar":
        height, width, channels = spec.image_shape
        pixels = height * width * channels
        parts = [read_cifar_batch(layout_dir / f, spec.label_key, pixels, dataset_dir) for f in files]
        data = np.concatenate([p[0] for p in parts])
        labels = np.concatenate([p[1] for p in parts])
        # Stored channel-first (R plane, G plane, B plane), as torchvision transposes it to HWC; a view, not a
        # copy, so that ToTensor's transpose back to CHW finds the memory already in that order.
        images = data.reshape(-1, channels, height, width).transpose(0, 2, 3, 1)
    else:
        image_file, label_file = (idx_path(layout_dir, f) for f in files)
        images = read_idx(image_file, dataset_dir)
        labels = read_idx(label_file, dataset_dir).astype(np.int64)
        if images.shape[1:] != spec.image_shape or labels.ndim != 1 or len(labels) != len(images):
            raise _corrupt(
                image_file, dataset_dir,
                f"images {images.shape} with labels {labels.shape}, expected (N, *{spec.image_shape}) and (N,)",
            )
    if labels.size and (labels.min() < 0 or labels.max() >= spec.num_classes):
        raise _corrupt(layout_dir, dataset_dir, f"labels outside 0..{spec.num_classes - 1}")
    return images, labels


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write a uint8 array as an (uncompressed) idx file, atomically."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, IDX_UBYTE, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
    write_bytes_atomically(path, header + array.tobytes())


def write_cifar_batch(path: Path, images: np.ndarray, labels: np.ndarray, label_key: str, batch_label: str) -> None:
    """Write (N, H, W, C) uint8 images as a pickled CIFAR batch (str keys, as torchvision reads them).

    Protocol 4, not the originals' Python-2 protocol 2: Python 3's protocol 2 stores bytes as latin-1 text
    (1.5x larger, 5x slower to load); every reader, torchvision's included, loads either.
    """
    entry = {
        "batch_label": batch_label,
        label_key: [int(v) for v in labels],
        "data": np.ascontiguousarray(images.transpose(0, 3, 1, 2)).reshape(len(images), -1),
        "filenames": [f"{batch_label}_{i:06d}.png" for i in range(len(images))],
    }
    write_bytes_atomically(path, pickle.dumps(entry, protocol=PICKLE_PROTOCOL))


def write_cifar_meta(path: Path, names: dict[str, list[str]]) -> None:
    """Write a CIFAR meta file (``label_names`` or ``fine_label_names``/``coarse_label_names``)."""
    write_bytes_atomically(path, pickle.dumps(names, protocol=PICKLE_PROTOCOL))
