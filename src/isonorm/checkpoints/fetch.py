"""The checkpoint kind of input: ``fetch_checkpoint`` leaves a complete folder ``root/<name>``.

Sources (architecture §4), chosen per checkpoint in the config (``checkpoints: models: <name>: {source: ...}``):

- ``huggingface``: the allow-listed files at the pinned revision, in the user's Hugging Face cache
  (``HF_HUB_CACHE`` / ``HF_HOME``): used from there when cached, else downloaded there by
  ``huggingface_hub.snapshot_download``; the folder holds links to them (:mod:`.cache`);
- ``local``: a pre-staged folder with the same files (for air-gapped clusters);
- ``tiny``: a small random model of the same class, written locally (the quick preset; :mod:`.tiny`);
- ``random``: random weights at the real checkpoint's sizes, names and dtype (the shapes preset measures
  what each job costs offline; :mod:`.random_weights`).

Whatever the source, the files are checked (:mod:`.validate`) before :func:`isonorm.sources.fetch` writes
the ``.ready`` marker, which records the files' sizes so a later truncation is caught at load time. The two
real sources are interchangeable where the shards fetched cover the request.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..data.texts import shipped_texts  # the tiny tokenizers learn from the texts that ship with the project
from ..sources import (
    TOKEN_HELP, Build, GatedRepoAccessError, SourceKind, cached_snapshot, fetch, link_or_copy, staged_folder,
)
from .cache import link_into
from .errors import CorruptCheckpointError, MissingCheckpointFilesError
from .full_size import full_sizes
from .random_weights import write_random
from .registry import CHECKPOINT_REGISTRY, INDEX, CheckpointSpec
from .shards import check_shards, read_index, select_shards
from .tiny import tiny_model_class, tiny_sizes, write_tiny
from .validate import check_files

REAL_SOURCES = frozenset({"huggingface", "local"})  # both yield the real weights: interchangeable
STAND_INS = frozenset({"tiny", "random"})  # random weights written here, as the class's own model
OFFLINE_SOURCES = ("`local` (a pre-staged folder), `tiny` (a small random stand-in) or `random` (random weights "
                   "at the real sizes)")
DEPTH = "num_hidden_layers"  # a tiny size (but GPT-2's) and the `random` source's truncated depth


def checkpoint_options(spec: CheckpointSpec) -> dict[str, Any]:
    """The options of an entry: ``repo``/``revision`` override the registry's pin (source ``huggingface``;
    kept by a preset that switches the source, so the others ignore them); ``tensors``: glob patterns of the
    tensors a run needs (a sharded checkpoint then fetches or stages only the shards holding them; None:
    every shard); ``seed`` and the sizes of the entry's tiny family (:func:`~.tiny.tiny_sizes`; None: its
    default): the ``tiny`` stand-in; ``seed`` and ``num_hidden_layers`` (None: the real depth): ``random``."""
    return {"repo": None, "revision": None, "seed": 0, "tensors": None,
            **dict.fromkeys(tiny_sizes(spec.tiny_family)), DEPTH: None}


def _check_sizes(spec: CheckpointSpec, source: str, options: dict[str, Any]) -> None:
    """Size options only where they mean something: the tiny sizes with `tiny`, the depth cut with `random`."""
    tiny_keys = set(tiny_sizes(spec.tiny_family))
    given = sorted(key for key in {*tiny_keys, DEPTH} if options[key] is not None)
    allowed = tiny_keys if source == "tiny" else {DEPTH} if source == "random" else set()
    wrong = [key for key in given if key not in allowed]
    if not wrong:
        return
    if source == "random":
        raise ValueError(
            f"checkpoint {spec.name}: {wrong} size only the `tiny` source; `random` has the real sizes of "
            f"{spec.repo} and takes only `{DEPTH}` (a truncated depth): remove {wrong} or use source `tiny`"
        )
    if source == "tiny":  # only GPT-2's tiny sizes lack num_hidden_layers
        raise ValueError(f"checkpoint {spec.name}: `{DEPTH}` truncates only the `random` source; the tiny GPT-2's "
                         "depth is `n_layer`: use that, or source `random`")
    also = f" (`{DEPTH}` also truncates the `random` source)" if DEPTH in wrong else ""
    raise ValueError(f"checkpoint {spec.name}: {wrong} size only the `tiny` source{also}, not the real weights "
                     f"(got {source!r}); remove {wrong}")


def checkpoint_request(spec: CheckpointSpec, source: str, options: dict[str, Any]) -> dict[str, Any]:
    _check_sizes(spec, source, options)
    defaults = tiny_sizes(spec.tiny_family)
    tiny = {key: options[key] for key in defaults if options[key] is not None}
    tensors = options["tensors"]
    if tensors is not None and not spec.sharded:
        raise ValueError(
            f"checkpoint {spec.name}: `tensors` chooses shards of a sharded checkpoint, but {spec.repo} is one "
            f"file ({spec.weights}); remove `tensors`"
        )
    if tensors is not None and (isinstance(tensors, str) or not tensors):
        raise ValueError(f"checkpoint {spec.name}: `tensors` must be a non-empty list of glob patterns, got {tensors!r}")
    shards = None if tensors is None else sorted(tensors)  # a tiny stand-in is written whole: tensors ignored
    if source == "random":  # sizes recorded: an edit of full_size.py then shows as a different request
        return {"source": source, "seed": int(options["seed"]), "tensors": shards,
                "sizes": full_sizes(spec.name, options[DEPTH])}
    if source == "huggingface":
        return {"source": source, "repo": spec.repo, "revision": spec.revision, "tensors": shards}
    if source == "local":
        return {"source": source, "tensors": shards}
    return {"source": source, "seed": int(options["seed"]), "sizes": {**defaults, **tiny}}


def _satisfies(existing: dict[str, Any], request: dict[str, Any]) -> bool:
    """Real weights from either source serve each other, if the shards fetched cover the request."""
    if existing.get("source") not in REAL_SOURCES or request["source"] not in REAL_SOURCES:
        return False
    # shards fetched for some tensors cannot serve a request for others (None = every shard is there)
    covered = existing.get("tensors") is None or existing.get("tensors") == request.get("tensors")
    return covered and (request["source"] == "local" or existing.get("source") == "local" or (
        existing.get("repo") == request["repo"] and existing.get("revision") == request["revision"]
    ))


def _check_token(spec: CheckpointSpec) -> None:
    """A gated repository (decision A12: Llama-2) fails before any download when this machine has no token."""
    from huggingface_hub import get_token  # deferred: slow to import, only this source needs it

    if spec.gated and not get_token():
        raise GatedRepoAccessError(
            f"checkpoint {spec.name}: {spec.repo} is a gated repository and no Hugging Face token was found. Accept "
            f"its licence at {spec.url} while logged in, then {TOKEN_HELP}. Or stage the files elsewhere and use "
            "source `local`."
        )


def _download(build: Build) -> dict[str, Any]:
    """The allow-listed files from the Hugging Face cache, downloading into it only what it lacks (for a sharded
    checkpoint: the index first, then the needed shards), linked into the folder (:mod:`.cache`)."""
    spec, folder, tensors = build.entry, build.folder, build.options["tensors"]

    def snapshot(patterns: list[str], required: list[str]) -> Path:
        return cached_snapshot(
            spec.repo, spec.revision, patterns, required, what=f"checkpoint {spec.name}", retries=build.retries,
            backoff_s=build.backoff_s, offline_sources=OFFLINE_SOURCES,
            before_download=partial(_check_token, spec),  # a gated model already in the cache needs no token
        )

    shards: list[str] = []
    if spec.sharded:
        index_snapshot = snapshot(list(spec.files), list(spec.files))  # config.json + the index: a few kB
        if (index_snapshot / INDEX).is_file():
            shards = select_shards(read_index(index_snapshot), tensors, what=f"checkpoint {spec.name}")
    needed = [*spec.files, *shards]
    cached = snapshot([*needed, *spec.optional_files], needed)
    missing = [name for name in needed if not (cached / name).is_file()]
    if missing:
        raise MissingCheckpointFilesError(
            f"{spec.repo} at revision {spec.revision} has no {', '.join(missing)} in its Hugging Face cache snapshot "
            f"{cached}: either the revision lacks them (the checkpoint needs {', '.join(spec.files)}; pin a revision "
            f"that has them, see {spec.url}/tree/main), or this machine could not reach the Hub to download them "
            f"(fill the cache on a machine with internet: `hf download {spec.repo} {' '.join(missing)} --revision "
            f"{spec.revision}`)."
        )
    linked = [*needed, *_optional_present(spec, cached)]
    for leftover in folder.iterdir():  # what a killed fetch left: the marker would otherwise list it
        if leftover.name not in linked and not leftover.name.startswith(".") and not leftover.is_dir():
            leftover.unlink()
    for name in linked:
        link_into(cached / name, folder / name)
    return {"shards": shards, "snapshot": str(cached)}


def _optional_present(spec: CheckpointSpec, folder: Path) -> list[str]:
    """The optional allow-listed files a folder holds (top level, as the Hub lays them out)."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in spec.files
                  and any(fnmatch.fnmatchcase(p.name, pattern) for pattern in spec.optional_files))


def _stage_local(build: Build) -> dict[str, Any]:
    spec, tensors = build.entry, build.options["tensors"]
    staged = staged_folder(
        build.path, "checkpoint", spec.name,
        f"a folder holding {', '.join(spec.files)} (e.g. `hf download {spec.repo} --revision {spec.revision} "
        f"{' '.join(spec.files)} --local-dir <folder>` on a machine with internet), or use source "
        "`huggingface` / `tiny`.",
    )
    missing = spec.missing_files(staged)
    if missing:
        raise MissingCheckpointFilesError(
            f"local checkpoint folder {staged} for {spec.name} lacks {len(missing)} file(s): {', '.join(missing)}. "
            f"Stage all of {', '.join(spec.files)} from {spec.url} (revision {spec.revision}) and run again."
        )
    shards = select_shards(read_index(staged), tensors, what=f"checkpoint {spec.name}") if spec.sharded else []
    absent = [s for s in shards if not (staged / s).is_file()]
    if absent:
        raise MissingCheckpointFilesError(
            f"local checkpoint folder {staged} for {spec.name} lacks shard(s) {', '.join(absent)} that hold the "
            f"tensors the run needs (`tensors: {list(tensors) if tensors else 'all'}`); stage them from {spec.url} "
            f"(revision {spec.revision})."
        )
    for name in [*spec.files, *shards, *_optional_present(spec, staged)]:
        link_or_copy(staged / name, build.folder / name)
    return {"shards": shards, "path": build.staged_from}


def _write_tiny(build: Build) -> dict[str, Any]:
    folder = build.folder
    write_tiny(build.entry.tiny_family, folder, shipped_texts(), seed=build.request["seed"], **build.request["sizes"])
    return {"shards": sorted(set(read_index(folder).values())) if (folder / INDEX).is_file() else []}


def _write_random(build: Build) -> dict[str, Any]:
    request = build.request
    files = write_random(build.entry, build.folder, shipped_texts(), seed=request["seed"],
                         tensors=request["tensors"], sizes=request["sizes"])
    return {"shards": files if build.entry.sharded else []}


def _check_and_record(build: Build, extras: dict[str, Any]) -> dict[str, Any]:
    """Check the files whatever the source; the marker records each kept file's size and the model class."""
    spec, folder, source, shards = build.entry, build.folder, build.source, extras["shards"]
    required = list(spec.files) if source != "tiny" or not spec.sharded else ["config.json", INDEX]
    try:
        check_files(folder, required)
        if (folder / INDEX).is_file():
            check_shards(folder, shards, read_index(folder))
    except CorruptCheckpointError as err:
        raise CorruptCheckpointError(build.damaged_staged_copy(err)) from err
    kept = [*required, *shards, *(f for f in _optional_present(spec, folder) if f not in shards)]
    if source in STAND_INS:  # every file the stand-in wrote (its layout may differ from the real repository's)
        kept = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return {
        **extras,
        "repo": None if source in STAND_INS else spec.repo,
        "revision": spec.revision if source == "huggingface" else None,  # a staged folder's is unknown
        "model_class": tiny_model_class(spec.tiny_family) if source in STAND_INS else spec.model_class,
        "files": {f: (folder / f).stat().st_size for f in dict.fromkeys(kept)},
    }


CHECKPOINT = SourceKind(
    name="checkpoint",
    registry=CHECKPOINT_REGISTRY,
    builders={"huggingface": _download, "local": _stage_local, "tiny": _write_tiny, "random": _write_random},
    options=checkpoint_options,
    configure=lambda spec, options: replace(
        spec, **{key: options[key] for key in ("repo", "revision") if options[key]}),
    request=checkpoint_request,
    fetcher="isonorm.checkpoints.fetch_checkpoint(name, root, source)",
    satisfies=_satisfies,
    finish=_check_and_record,
    flat_marker=True,  # checkpoint_record and the loaders read `source`, `tensors`, `files` at the top level
    rule="fetch_checkpoint",
    missing_error=MissingCheckpointFilesError,
)
fetch_checkpoint = partial(fetch, CHECKPOINT)  # (name, root, source, *, path, retries, backoff_s, **options)
