"""One entry point for every data source: ``fetch_dataset`` leaves a complete data set under ``root/<name>``.

Sources (DESIGN 4), chosen per data set in the config:

- ``torchvision``: the real download (:mod:`.download`);
- ``local``: a pre-staged folder in torchvision's layout (:mod:`.local`);
- ``synthetic``: a deterministic stand-in written in the same layout (:mod:`.synthetic`).

Whatever the source, the files are parsed once by the pipeline's own readers (so a corrupt copy fails here,
not in a training job) and the ``.ready`` marker is written last. A data set that already has a marker is
never rewritten; asking for different data under the same root is an error, not a silent overwrite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from .download import download_with_torchvision
from .formats import read_split
from .local import stage_local
from .marker import already_complete, check_source, read_marker, write_marker
from .registry import SPLITS, DatasetSpec, dataset_spec
from .synthetic import write_synthetic

Source = Literal["torchvision", "local", "synthetic"]
SOURCES: tuple[str, ...] = ("torchvision", "local", "synthetic")
REAL_SOURCES = frozenset({"torchvision", "local"})  # both yield the real data set: interchangeable


def _request(
    spec: DatasetSpec, source: str, path: str | Path | None, n_train: int | None, n_test: int | None, seed: int
) -> dict[str, Any]:
    """Validate the arguments and describe the data they ask for (compared with an existing marker)."""
    check_source("data", spec.name, source, SOURCES, path)
    if source != "synthetic":
        if n_train is not None or n_test is not None:
            raise ValueError(
                f"data set {spec.name}: n_train/n_test size only the `synthetic` source; source {source!r} "
                "always yields the full real data set (use `limit` when loading to take fewer samples)"
            )
        return {"source": source}
    sizes = {"train": spec.split_sizes["train"] if n_train is None else n_train,
             "test": spec.split_sizes["test"] if n_test is None else n_test}
    for split, n in sizes.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"synthetic {spec.name}: n_{split} must be a positive integer, got {n!r}")
    return {"source": source, "sizes": sizes, "seed": int(seed)}


def _matches(existing: dict[str, Any], request: dict[str, Any]) -> bool:
    if existing.get("source") in REAL_SOURCES and request["source"] in REAL_SOURCES:
        return True
    return all(existing.get(key) == value for key, value in request.items())


def fetch_dataset(
    name: str,
    root: str | Path,
    source: Source,
    path: str | Path | None = None,
    retries: int = 3,
    n_train: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    *,
    backoff_s: float = 1.0,
) -> Path:
    """Make ``root/<name>/`` hold the complete data set from ``source``; returns that folder.

    ``path``: the pre-staged folder (source ``local`` only). ``retries``/``backoff_s``: download retries and
    the first wait, doubling (source ``torchvision``). ``n_train``/``n_test`` (default: the real sizes) and
    ``seed``: size and seed of the ``synthetic`` stand-in.
    """
    spec = dataset_spec(name)
    dataset_dir = Path(root) / name
    request = _request(spec, source, path, n_train, n_test, seed)
    existing = read_marker(dataset_dir)
    held = None if existing is None else {key: existing.get(key) for key in request}
    if already_complete(dataset_dir, name, held, request, existing is not None and _matches(existing, request)):
        return dataset_dir

    dataset_dir.mkdir(parents=True, exist_ok=True)
    details: dict[str, Any] = {}
    if source == "torchvision":
        download_with_torchvision(spec, dataset_dir, retries, backoff_s)
    elif source == "local":
        stage_local(spec, Path(path), dataset_dir)
        details["path"] = str(Path(path).expanduser().resolve())
    else:
        write_synthetic(spec, dataset_dir, request["sizes"], request["seed"])
    sizes = {split: len(read_split(spec, dataset_dir, split)[1]) for split in SPLITS}
    write_marker(dataset_dir, {**request, **details, "dataset": name, "sizes": sizes})
    return dataset_dir
