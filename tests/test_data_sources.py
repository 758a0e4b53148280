"""The `synthetic` and `torchvision` sources and the `.ready` marker semantics of `fetch_dataset` (offline)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
import torch
import torchvision

import isonorm.data.fetch as fetch_module
from isonorm.data import DATASETS, DownloadError, dataset_spec, fetch_dataset, load_split, read_split
from isonorm.data.formats import write_idx
from isonorm.sources import QUICK_PRESET_COMMAND

SIZES = {"train": 120, "test": 40}


def synthetic(root: Path, name: str = "cifar10", seed: int = 0, **sizes) -> Path:
    sizes = {"n_train": SIZES["train"], "n_test": SIZES["test"], **sizes}
    return fetch_dataset(name, root, "synthetic", seed=seed, **sizes)


def file_bytes(dataset_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(dataset_dir)): p.read_bytes() for p in sorted(dataset_dir.rglob("*")) if p.is_file()
            and p.name != ".ready"}


# ---- synthetic ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DATASETS))
def test_synthetic_has_the_real_shapes_and_classes(tmp_path, name):
    spec = dataset_spec(name)
    dataset_dir = synthetic(tmp_path, name)
    assert spec.missing_files(dataset_dir / spec.layout) == []
    marker = json.loads((dataset_dir / ".ready").read_text())
    assert marker["source"] == "synthetic" and marker["sizes"] == SIZES and marker["seed"] == 0
    for split, n in SIZES.items():
        images, labels = read_split(spec, dataset_dir, split)
        assert images.shape == (n, *spec.image_shape) and images.dtype == np.uint8
        counts = np.bincount(labels, minlength=spec.num_classes)
        assert len(counts) == spec.num_classes and counts.max() - counts.min() <= 1  # balanced


def test_synthetic_is_deterministic_in_the_seed(tmp_path):
    runs = (("a", 3), ("b", 3), ("c", 4))
    first, again, other = (file_bytes(synthetic(tmp_path / folder, "mnist", seed=seed)) for folder, seed in runs)
    assert first == again
    assert first.keys() == other.keys() and all(first[k] != other[k] for k in first)


def test_synthetic_default_sizes_are_the_real_ones():
    assert fetch_module.dataset_request(dataset_spec("mnist"), "synthetic", fetch_module.OPTIONS)["sizes"] == {
        "train": 60_000, "test": 10_000}


@pytest.mark.parametrize("name", ["cifar10", "cifar100", "mnist"])
def test_torchvision_reads_synthetic_files_like_our_reader(tmp_path, monkeypatch, name):
    """The synthetic files are genuine torchvision layout and format (only the md5 sums differ)."""
    dataset_dir = synthetic(tmp_path, name)
    monkeypatch.setattr(torchvision.datasets.cifar, "check_integrity", lambda *a, **k: True)
    reference = getattr(torchvision.datasets, dataset_spec(name).torchvision_class)(root=str(dataset_dir), train=False)
    images, labels = read_split(dataset_spec(name), dataset_dir, "test")
    np.testing.assert_array_equal(images, np.asarray(reference.data))
    np.testing.assert_array_equal(labels, np.asarray(reference.targets))


def test_synthetic_classes_are_learnable(tmp_path):
    """A linear softmax classifier's loss falls well below chance (ln 10) in a few full-batch steps."""
    synthetic(tmp_path, "cifar10", n_train=500, n_test=100)
    x, y = load_split("cifar10", tmp_path, "train", transform="half", flatten=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(x.shape[1], 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    initial = torch.nn.functional.cross_entropy(model(x), y).item()
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    x_test, y_test = load_split("cifar10", tmp_path, "test", transform="half", flatten=True)
    assert loss.item() < 0.5 * initial
    assert (model(x_test).argmax(1) == y_test).float().mean() > 0.5  # chance is 0.1


@pytest.mark.parametrize("bad", [{"n_train": 0}, {"n_test": -1}, {"n_train": 2.5}])
def test_synthetic_rejects_bad_sizes(tmp_path, bad):
    with pytest.raises(ValueError, match="positive integer"):
        synthetic(tmp_path, "mnist", **bad)


def test_sizes_of_a_real_source_are_refused(tmp_path):
    """(Unknown names, sources and `path` misuse: tests/test_sources.py, for every kind.)"""
    with pytest.raises(ValueError, match="n_train/n_test size only the `synthetic` source"):
        fetch_dataset("mnist", tmp_path, "torchvision", n_train=10)


# ---- torchvision --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, error", [("cifar10", URLError("[Errno -3] Temporary failure in name resolution")),
                                         ("mnist", OSError("Network is unreachable"))])
def test_unreachable_download_fails_after_retries_with_both_fixes(tmp_path, monkeypatch, name, error):
    calls, waits = [], []

    def unreachable(self):
        calls.append(self.root)
        raise error

    monkeypatch.setattr(getattr(torchvision.datasets, dataset_spec(name).torchvision_class), "download", unreachable)
    monkeypatch.setattr("isonorm.data.download.time.sleep", waits.append)
    with pytest.raises(DownloadError) as err:
        fetch_dataset(name, tmp_path, "torchvision", retries=2)
    message = str(err.value)
    assert len(calls) == 3 and waits == [1.0, 2.0]  # 1 try + 2 retries, doubling waits
    assert str(error) in message and type(error).__name__ in message
    assert QUICK_PRESET_COMMAND in message and "`local`" in message and dataset_spec(name).layout in message
    assert not (tmp_path / name / ".ready").exists()


def test_transient_download_failure_is_retried(tmp_path, monkeypatch):
    """The real MNIST class, with its download replaced by a flaky one that writes idx files."""
    calls = []
    rng = np.random.default_rng(0)

    def flaky(self):
        calls.append(1)
        if len(calls) == 1:
            raise URLError("timed out")
        raw = Path(self.raw_folder)
        raw.mkdir(parents=True, exist_ok=True)
        for prefix, n in (("train", 6), ("t10k", 4)):
            write_idx(raw / f"{prefix}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
            write_idx(raw / f"{prefix}-labels-idx1-ubyte", rng.integers(0, 10, n, dtype=np.uint8))

    monkeypatch.setattr(torchvision.datasets.MNIST, "download", flaky)
    monkeypatch.setattr("isonorm.data.download.time.sleep", lambda s: None)
    dataset_dir = fetch_dataset("mnist", tmp_path, "torchvision")
    assert len(calls) == 2
    marker = json.loads((dataset_dir / ".ready").read_text())
    assert marker["source"] == "torchvision" and marker["sizes"] == {"train": 6, "test": 4}


# ---- the .ready marker --------------------------------------------------------------------------------

def test_load_split_requires_the_marker(tmp_path):
    with pytest.raises(FileNotFoundError, match="no complete data set.*the fetch_data rule.*fetch_dataset"):
        load_split("cifar10", tmp_path, transform="half")


def test_interrupted_fetch_is_redone(tmp_path, monkeypatch):
    original = fetch_module.write_synthetic

    def killed_half_way(spec, dataset_dir, sizes, seed):
        original(spec, dataset_dir, sizes, seed)
        (dataset_dir / spec.layout / "test_batch").write_bytes(b"\x80\x02}q")  # a torn file
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_module, "write_synthetic", killed_half_way)
    with pytest.raises(KeyboardInterrupt):
        synthetic(tmp_path)
    assert not (tmp_path / "cifar10/.ready").exists()
    with pytest.raises(FileNotFoundError, match="no .ready marker"):
        load_split("cifar10", tmp_path, "test", transform="half")
    monkeypatch.undo()
    synthetic(tmp_path)
    assert load_split("cifar10", tmp_path, "test", transform="half").y.shape == (SIZES["test"],)
    assert file_bytes(tmp_path / "cifar10") == file_bytes(synthetic(tmp_path / "fresh"))


def test_complete_data_is_never_rewritten(tmp_path, monkeypatch):
    dataset_dir = synthetic(tmp_path)
    before = {p: p.stat().st_mtime_ns for p in dataset_dir.rglob("*")}
    marker = (dataset_dir / ".ready").read_text()
    monkeypatch.setattr(fetch_module, "write_synthetic", lambda *a: pytest.fail("complete data rewritten"))
    monkeypatch.setattr(fetch_module, "download_with_torchvision", lambda *a: pytest.fail("downloaded again"))
    assert synthetic(tmp_path) == dataset_dir  # same request: nothing to do
    for other in ({"seed": 1}, {"n_train": 60}):
        with pytest.raises(RuntimeError, match="never overwritten"):
            synthetic(tmp_path, **other)
    with pytest.raises(RuntimeError, match="never overwritten"):
        fetch_dataset("cifar10", tmp_path, "torchvision")
    assert {p: p.stat().st_mtime_ns for p in dataset_dir.rglob("*")} == before
    assert (dataset_dir / ".ready").read_text() == marker


def test_real_sources_are_interchangeable(tmp_path, monkeypatch):
    """Data staged with `local` satisfies a later `torchvision` request without any download."""
    staged = synthetic(tmp_path / "staging")
    (staged / ".ready").unlink()
    fetch_dataset("cifar10", tmp_path / "data", "local", path=staged)
    monkeypatch.setattr(fetch_module, "download_with_torchvision", lambda *a: pytest.fail("downloaded again"))
    assert fetch_dataset("cifar10", tmp_path / "data", "torchvision") == tmp_path / "data/cifar10"
