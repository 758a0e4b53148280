"""The data-set kind of input: ``fetch_dataset`` leaves a complete data set under ``root/<name>``.

Sources (architecture §4), chosen per data set in the config:

- ``torchvision``: the real download (:mod:`.download`);
- ``local``: a pre-staged folder in torchvision's layout (:mod:`.local`);
- ``synthetic``: a deterministic stand-in written in the same layout (:mod:`.synthetic`).

Whatever the source, the files are parsed once by the pipeline's own readers (so a corrupt copy fails here,
not in a training job) before :func:`isonorm.sources.fetch` writes the ``.ready`` marker. The two real
sources are interchangeable: data staged with ``local`` satisfies a later ``torchvision`` request.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import Build, SourceKind, check_positive, fetch
from .download import download_with_torchvision
from .formats import CorruptDataError, read_split
from .local import stage_local
from .registry import DATASET_REGISTRY, SPLITS, DatasetSpec
from .synthetic import write_synthetic

REAL_SOURCES = frozenset({"torchvision", "local"})  # both yield the real data set: interchangeable
# n_train/n_test (default: the real sizes) and seed: size and seed of the `synthetic` stand-in.
OPTIONS: dict[str, Any] = {"n_train": None, "n_test": None, "seed": 0}


def dataset_request(spec: DatasetSpec, source: str, options: dict[str, Any]) -> dict[str, Any]:
    """The data the options ask for (compared with an existing marker)."""
    n_train, n_test = options["n_train"], options["n_test"]
    if source != "synthetic":
        if n_train is not None or n_test is not None:
            raise ValueError(
                f"data set {spec.name}: n_train/n_test size only the `synthetic` source; source {source!r} "
                "always yields the full real data set (use `limit` when loading to take fewer samples)"
            )
        return {"source": source}
    sizes = {"train": spec.split_sizes["train"] if n_train is None else n_train,
             "test": spec.split_sizes["test"] if n_test is None else n_test}
    check_positive(n_train=sizes["train"], n_test=sizes["test"])
    return {"source": source, "sizes": sizes, "seed": int(options["seed"])}


def _torchvision(build: Build) -> dict[str, Any]:
    download_with_torchvision(build.entry, build.folder, build.retries, build.backoff_s)
    return {}


def _local(build: Build) -> dict[str, Any]:
    stage_local(build.entry, build.path, build.folder)
    return {"path": build.staged_from}


def _synthetic(build: Build) -> dict[str, Any]:
    write_synthetic(build.entry, build.folder, build.request["sizes"], build.request["seed"])
    return {}


def _read_back(build: Build, extras: dict[str, Any]) -> dict[str, Any]:
    """Parse every split with the pipeline's own reader; the marker records the sizes found."""
    try:
        sizes = {split: len(read_split(build.entry, build.folder, split)[1]) for split in SPLITS}
    except CorruptDataError as err:
        raise CorruptDataError(build.damaged_staged_copy(err)) from err
    return {**extras, "sizes": sizes}


DATASET = SourceKind(
    name="dataset",
    registry=DATASET_REGISTRY,
    builders={"torchvision": _torchvision, "local": _local, "synthetic": _synthetic},
    options=OPTIONS,
    request=dataset_request,
    fetcher="isonorm.data.fetch_dataset(name, root, source)",
    satisfies=lambda existing, request: existing.get("source") in REAL_SOURCES and request["source"] in REAL_SOURCES,
    finish=_read_back,
    flat_marker=True,  # load_split and the report read `source`/`sizes` at the top level
)
fetch_dataset = partial(fetch, DATASET)  # (name, root, source, *, path, retries, backoff_s, **OPTIONS)
