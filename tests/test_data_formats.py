"""Readers of torchvision's on-disk formats and the `local` source, on tiny files written here in the
original formats (Python-2-style pickled CIFAR batches, MNIST idx files with their magic numbers)."""

from __future__ import annotations

import gzip
import io
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
import torchvision

from isonorm.data import CorruptDataError, dataset_spec, fetch_dataset, load_split, read_split
from isonorm.data.registry import DATASETS


class Py2Pickler(pickle._Pickler):
    """Pickles ``bytes`` as Python 2 ``str`` (SHORT_BINSTRING/BINSTRING), as the original CIFAR files are:
    they load with str keys under ``encoding="latin1"`` (torchvision) and bytes keys under ``"bytes"``."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_bytes(self, obj: bytes) -> None:
        n = len(obj)
        self.write((pickle.SHORT_BINSTRING + bytes([n]) if n < 256 else pickle.BINSTRING + struct.pack("<i", n)) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_bytes


def dump_original(path: Path, entry: dict) -> None:
    buffer = io.BytesIO()
    Py2Pickler(buffer, protocol=2).dump(entry)
    path.write_bytes(buffer.getvalue())


def original_layout(folder: Path, name: str, seed: int):
    """The registry entry of ``name``, a seeded generator and the (new) layout folder under ``folder``."""
    spec = dataset_spec(name)
    layout = folder / spec.layout
    layout.mkdir(parents=True)
    return spec, np.random.default_rng(seed), layout


def write_cifar_original(folder: Path, name: str, sizes: dict[str, int], seed: int = 0, py2: bool = True) -> dict:
    """Write a tiny CIFAR-10/100 in torchvision's layout; returns {file: (data (N, 3072), labels)}."""
    spec, rng, layout = original_layout(folder, name, seed)
    written = {}
    for split in ("train", "test"):
        for file in spec.split_files[split]:
            n = sizes[split]
            data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
            labels = [int(v) for v in rng.integers(0, spec.num_classes, n)]
            entry = {b"batch_label": f"batch {file}".encode(), b"data": data, b"filenames": [b"x.png"] * n}
            if name == "cifar100":
                entry.update({b"fine_labels": labels, b"coarse_labels": [v // 5 for v in labels]})
            else:
                entry[b"labels"] = labels
            if py2:
                dump_original(layout / file, entry)
            else:  # Python 3 pickle with bytes keys
                (layout / file).write_bytes(pickle.dumps(entry, protocol=2))
            written[file] = (data, labels)
    key = spec.meta_key.encode()
    dump_original(layout / spec.meta_file, {key: [f"c{i}".encode() for i in range(spec.num_classes)]})
    return written


def idx_bytes(array: np.ndarray) -> bytes:
    magic = 2051 if array.ndim == 3 else 2049  # the MNIST magic numbers of image and label files
    return struct.pack(">I", magic) + struct.pack(f">{array.ndim}I", *array.shape) + array.astype(np.uint8).tobytes()


def write_mnist_original(folder: Path, name: str, sizes: dict[str, int], gz: bool, seed: int = 0) -> dict:
    spec, rng, layout = original_layout(folder, name, seed)
    written = {}
    for split in ("train", "test"):
        images = rng.integers(0, 256, (sizes[split], 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, sizes[split], dtype=np.uint8)
        for file, array in zip(spec.split_files[split], (images, labels)):
            payload = idx_bytes(array)
            (layout / (file + ".gz" if gz else file)).write_bytes(gzip.compress(payload) if gz else payload)
        written[split] = (images, labels)
    return written


def test_registry_matches_torchvision_layouts():
    for spec in DATASETS.values():
        cls = getattr(torchvision.datasets, spec.torchvision_class)
        if spec.file_format == "cifar":
            assert spec.layout == cls.base_folder
            assert list(spec.split_files["train"]) == [f for f, _ in cls.train_list]
            assert list(spec.split_files["test"]) == [f for f, _ in cls.test_list]
            assert (spec.meta_file, spec.meta_key) == (cls.meta["filename"], cls.meta["key"])
        else:
            assert spec.layout == f"{cls.__name__}/raw"
            assert sorted(spec.required_files()) == sorted(f.removesuffix(".gz") for f, _ in cls.resources)


@pytest.mark.parametrize("py2", [True, False])
def test_cifar10_reader_decodes_channel_planes(tmp_path, py2):
    written = write_cifar_original(tmp_path, "cifar10", {"train": 3, "test": 4}, py2=py2)
    images, labels = read_split(dataset_spec("cifar10"), tmp_path, "train")
    assert images.shape == (15, 32, 32, 3) and images.dtype == np.uint8 and labels.dtype == np.int64
    # batches concatenate in file order data_batch_1..5; pixel (r, c) channel k is byte k*1024 + r*32 + c
    data = np.concatenate([written[f"data_batch_{i}"][0] for i in range(1, 6)])
    for sample, row, col, channel in [(0, 0, 0, 0), (0, 0, 1, 0), (4, 1, 0, 1), (14, 31, 30, 2)]:
        assert images[sample, row, col, channel] == data[sample, channel * 1024 + row * 32 + col]
    assert labels.tolist() == sum((written[f"data_batch_{i}"][1] for i in range(1, 6)), [])


def test_cifar100_reader_uses_fine_labels(tmp_path):
    written = write_cifar_original(tmp_path, "cifar100", {"train": 6, "test": 5})
    images, labels = read_split(dataset_spec("cifar100"), tmp_path, "test")
    assert images.shape == (5, 32, 32, 3)
    assert labels.tolist() == written["test"][1]


@pytest.mark.parametrize("name", ["cifar10", "cifar100"])
def test_cifar_reader_agrees_with_torchvision(tmp_path, monkeypatch, name):
    write_cifar_original(tmp_path, name, {"train": 2, "test": 3})
    # our files have no genuine md5; everything else is torchvision's own loading code
    monkeypatch.setattr(torchvision.datasets.cifar, "check_integrity", lambda *a, **k: True)
    cls = getattr(torchvision.datasets, dataset_spec(name).torchvision_class)
    for split in ("train", "test"):
        reference = cls(root=str(tmp_path), train=split == "train")
        images, labels = read_split(dataset_spec(name), tmp_path, split)
        np.testing.assert_array_equal(images, reference.data)
        assert labels.tolist() == list(reference.targets)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("name", ["mnist", "fashionmnist"])
def test_idx_reader_plain_and_gz(tmp_path, name, gz):
    written = write_mnist_original(tmp_path, name, {"train": 7, "test": 3}, gz=gz)
    for split in ("train", "test"):
        images, labels = read_split(dataset_spec(name), tmp_path, split)
        assert images.dtype == np.uint8 and labels.dtype == np.int64
        np.testing.assert_array_equal(images, written[split][0])
        np.testing.assert_array_equal(labels, written[split][1])


def test_idx_reader_agrees_with_torchvision(tmp_path):
    write_mnist_original(tmp_path, "mnist", {"train": 4, "test": 2}, gz=False)
    reference = torchvision.datasets.MNIST(root=str(tmp_path), train=True)
    images, labels = read_split(dataset_spec("mnist"), tmp_path, "train")
    np.testing.assert_array_equal(images, reference.data.numpy())
    np.testing.assert_array_equal(labels, reference.targets.numpy())


def _truncate(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


@pytest.mark.parametrize(
    "damage",
    ["idx_truncated", "idx_gz_truncated", "idx_bad_magic", "idx_wrong_dtype", "cifar_truncated", "cifar_not_dict",
     "cifar_missing_key", "cifar_label_out_of_range"],
)
def test_corrupt_files_name_the_file_and_the_fix(tmp_path, damage):
    if damage.startswith("idx"):
        write_mnist_original(tmp_path, "mnist", {"train": 3, "test": 2}, gz=damage == "idx_gz_truncated")
        name, split = "mnist", "train"
        path = tmp_path / "MNIST/raw" / ("train-images-idx3-ubyte" + (".gz" if damage == "idx_gz_truncated" else ""))
        raw = path.read_bytes()
        if damage in ("idx_truncated", "idx_gz_truncated"):
            _truncate(path, len(raw) - 20)
        elif damage == "idx_bad_magic":
            path.write_bytes(b"\x01" + raw[1:])
        else:
            path.write_bytes(raw[:2] + b"\x0d" + raw[3:])  # 0x0D = float
    else:
        write_cifar_original(tmp_path, "cifar10", {"train": 2, "test": 2})
        name, split = "cifar10", "test"
        path = tmp_path / "cifar-10-batches-py/test_batch"
        if damage == "cifar_truncated":
            _truncate(path, len(path.read_bytes()) // 2)
        elif damage == "cifar_not_dict":
            path.write_bytes(pickle.dumps([1, 2, 3]))
        elif damage == "cifar_missing_key":
            path.write_bytes(pickle.dumps({"data": np.zeros((2, 3072), np.uint8)}))
        else:
            path.write_bytes(pickle.dumps({"data": np.zeros((2, 3072), np.uint8), "labels": [0, 10]}))
    with pytest.raises(CorruptDataError) as err:
        read_split(dataset_spec(name), tmp_path, split)
    message = str(err.value)
    assert (path.name in message or str(path.parent) in message) and "is damaged" in message
    assert f"Delete {tmp_path} and run snakemake again" in message


def test_unpickling_errors_of_any_kind_are_damage(tmp_path):
    """Flipped bytes in a pickle can name a module that does not exist (ModuleNotFoundError), not only fail
    with the UnpicklingError family."""
    write_cifar_original(tmp_path, "cifar10", {"train": 2, "test": 2})
    path = tmp_path / "cifar-10-batches-py/test_batch"
    path.write_bytes(b"\x80\x04cnumpy1_core\nmultiarray\n.")
    with pytest.raises(CorruptDataError, match="test_batch is damaged.*ModuleNotFoundError"):
        read_split(dataset_spec("cifar10"), tmp_path, "test")


@pytest.mark.parametrize("name, file", [("cifar10", "cifar-10-batches-py/data_batch_2"),
                                        ("mnist", "MNIST/raw/train-labels-idx1-ubyte")])
def test_a_file_damaged_after_the_fetch_names_the_folder_to_delete(tmp_path, name, file):
    folder = fetch_dataset(name, tmp_path, "synthetic", n_train=10, n_test=2)
    _truncate(folder / file, (folder / file).stat().st_size - 7)  # the .ready marker stays
    with pytest.raises(CorruptDataError) as err:
        load_split(name, tmp_path, "train", transform=None)
    message = str(err.value)
    assert f"{folder / file} is damaged" in message
    assert f"Delete {folder} and run snakemake again, which fetches the data set anew." in message


def test_a_damaged_local_data_set_names_the_pre_staged_copy(tmp_path):
    staged = tmp_path / "staged"
    write_cifar_original(staged, "cifar10", {"train": 2, "test": 2})
    folder = fetch_dataset("cifar10", tmp_path / "data", "local", path=staged)
    batch = folder / "cifar-10-batches-py/test_batch"
    _truncate(batch, batch.stat().st_size // 2)  # a hard link, if staging could make one: the staged copy too
    with pytest.raises(CorruptDataError, match=f"staged \\(source `local`\\) from {staged.resolve()}.*re-stage"):
        load_split("cifar10", tmp_path / "data", "test", transform=None)
    staged_batch = staged / "cifar-10-batches-py/test_batch"
    _truncate(staged_batch, staged_batch.stat().st_size // 2)  # damaged at the source, linked or not
    with pytest.raises(CorruptDataError, match=f"pre-staged copy {staged.resolve()} .*replace it there first"):
        fetch_dataset("cifar10", tmp_path / "again", "local", path=staged)
    assert not (tmp_path / "again/cifar10/.ready").exists()


# ---- the `local` source -------------------------------------------------------------------------------

@pytest.mark.parametrize("point_at_layout", [False, True])
def test_local_source_stages_a_torchvision_folder(tmp_path, point_at_layout):
    staged = tmp_path / "staged"
    write_cifar_original(staged, "cifar10", {"train": 2, "test": 3})
    path = staged / "cifar-10-batches-py" if point_at_layout else staged
    root = tmp_path / "data"
    dataset_dir = fetch_dataset("cifar10", root, "local", path=path)
    assert dataset_dir == root / "cifar10" and (dataset_dir / ".ready").is_file()
    spec = dataset_spec("cifar10")
    for split in ("train", "test"):
        np.testing.assert_array_equal(read_split(spec, dataset_dir, split)[0], read_split(spec, staged, split)[0])
    x, y = load_split("cifar10", root, "test", transform="half")
    assert x.shape == (3, 3, 32, 32) and y.shape == (3,)


def test_local_source_accepts_gz_only_mnist(tmp_path):
    staged = tmp_path / "staged"
    written = write_mnist_original(staged, "mnist", {"train": 5, "test": 2}, gz=True)
    fetch_dataset("mnist", tmp_path / "data", "local", path=staged)
    x, y = load_split("mnist", tmp_path / "data", "train", transform=None)
    np.testing.assert_array_equal(y.numpy(), written["train"][1])


def test_local_source_lists_every_missing_file(tmp_path):
    staged = tmp_path / "staged"
    write_cifar_original(staged, "cifar10", {"train": 2, "test": 2})
    (staged / "cifar-10-batches-py/data_batch_3").unlink()
    (staged / "cifar-10-batches-py/batches.meta").unlink()
    with pytest.raises(FileNotFoundError) as err:
        fetch_dataset("cifar10", tmp_path / "data", "local", path=staged)
    message = str(err.value)
    assert "lacks 2 file(s): data_batch_3, batches.meta." in message
    assert not (tmp_path / "data/cifar10/.ready").exists()


def test_local_source_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        fetch_dataset("mnist", tmp_path / "data", "local", path=tmp_path / "nowhere")
