"""One entry point for every checkpoint source: ``fetch_checkpoint`` leaves a complete folder ``root/<name>``.

Sources (DESIGN 4), chosen per checkpoint in the config (``checkpoints: <name>: {source: ...}``):

- ``huggingface``: ``huggingface_hub.snapshot_download`` of the allow-listed files at the pinned revision;
- ``local``: a pre-staged folder with the same files (for air-gapped clusters);
- ``tiny``: a small random model of the same class, written locally (the quick preset; :mod:`.tiny`).

Whatever the source, the files are checked (:mod:`.validate`) and the ``.ready`` marker is written last
(:mod:`isonorm.data.marker`), recording the files' sizes so a later truncation is caught at load time. A
folder with a marker is never rewritten; asking for a different checkpoint under the same root is an error.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from typing import Sequence

from ..data.local import link_or_copy
from ..data.marker import already_complete, check_source, read_marker, write_marker
from .errors import GatedRepoAccessError, MissingCheckpointFilesError
from .hub import TOKEN_HELP, call_hub
from .registry import INDEX, CheckpointSpec, checkpoint_spec
from .shards import check_shards, read_index, select_shards
from .tiny import tiny_model_class, tiny_sizes, write_tiny
from .validate import check_files

Source = Literal["huggingface", "local", "tiny"]
SOURCES: tuple[str, ...] = ("huggingface", "local", "tiny")
REAL_SOURCES = frozenset({"huggingface", "local"})  # both yield the real weights: interchangeable


def _request(spec: CheckpointSpec, source: str, path: Any, tiny: dict[str, Any], seed: int,
             tensors: Sequence[str] | None) -> dict[str, Any]:
    check_source("checkpoint", spec.name, source, SOURCES, path)
    defaults = tiny_sizes(spec.tiny_family)
    unknown = sorted(set(tiny) - set(defaults))
    if unknown:
        raise ValueError(
            f"checkpoint {spec.name}: unknown option(s) {unknown}; source `tiny` takes {sorted(defaults)}"
        )
    if tiny and source != "tiny":
        raise ValueError(f"checkpoint {spec.name}: {sorted(tiny)} size only the `tiny` source (got {source!r})")
    if tensors is not None and not spec.sharded:
        raise ValueError(
            f"checkpoint {spec.name}: `tensors` chooses shards of a sharded checkpoint, but {spec.repo} is one "
            f"file ({spec.weights}); remove `tensors`"
        )
    if tensors is not None and (isinstance(tensors, str) or not tensors):
        raise ValueError(f"checkpoint {spec.name}: `tensors` must be a non-empty list of glob patterns, got {tensors!r}")
    shards = None if tensors is None else sorted(tensors)  # a tiny stand-in is written whole: tensors ignored
    if source == "huggingface":
        return {"source": source, "repo": spec.repo, "revision": spec.revision, "tensors": shards}
    if source == "local":
        return {"source": source, "tensors": shards}
    return {"source": source, "seed": int(seed), "sizes": {**defaults, **tiny}}


def _matches(existing: dict[str, Any], request: dict[str, Any]) -> bool:
    if existing.get("source") in REAL_SOURCES and request["source"] in REAL_SOURCES:
        # shards fetched for some tensors cannot serve a request for others (None = every shard is there)
        covered = existing.get("tensors") is None or existing.get("tensors") == request.get("tensors")
        return covered and (request["source"] == "local" or existing.get("source") == "local" or (
            existing.get("repo") == request["repo"] and existing.get("revision") == request["revision"]
        ))
    return all(existing.get(key) == value for key, value in request.items())


def _check_token(spec: CheckpointSpec) -> None:
    """A gated repository (decision: Llama-2) fails before any download when this machine has no token."""
    from huggingface_hub import get_token

    if spec.gated and not get_token():
        raise GatedRepoAccessError(
            f"checkpoint {spec.name}: {spec.repo} is a gated repository and no Hugging Face token was found. Accept "
            f"its licence at {spec.url} while logged in, then {TOKEN_HELP}. Or stage the files elsewhere and use "
            "source `local`."
        )


def _download(spec: CheckpointSpec, folder: Path, retries: int, backoff_s: float,
              tensors: Sequence[str] | None) -> list[str]:
    """Download the allow-listed files (for a sharded checkpoint: the index first, then the needed shards)."""
    from huggingface_hub import snapshot_download

    _check_token(spec)

    def fetch(patterns: list[str]) -> None:
        call_hub(
            lambda: snapshot_download(
                repo_id=spec.repo, revision=spec.revision, local_dir=folder, allow_patterns=patterns
            ),
            what=f"checkpoint {spec.name}", repo=spec.repo, revision=spec.revision, retries=retries,
            backoff_s=backoff_s, offline_sources="`local` (a pre-staged folder) or `tiny` (a small random stand-in)",
        )

    shards: list[str] = []
    if spec.sharded:
        fetch(list(spec.files))  # config.json + the index: a few kB
        if (folder / INDEX).is_file():
            shards = select_shards(read_index(folder), tensors, what=f"checkpoint {spec.name}")
    fetch([*spec.files, *shards, *spec.optional_files])
    missing = spec.missing_files(folder)
    if missing:
        raise MissingCheckpointFilesError(
            f"{spec.repo} at revision {spec.revision} has no {', '.join(missing)}; the checkpoint needs "
            f"{', '.join(spec.files)}. Pin a revision that has them (see {spec.url}/tree/main)."
        )
    return shards


def _optional_present(spec: CheckpointSpec, folder: Path) -> list[str]:
    """The optional allow-listed files a folder holds (top level, as the Hub lays them out)."""
    import fnmatch

    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in spec.files
                  and any(fnmatch.fnmatchcase(p.name, pattern) for pattern in spec.optional_files))


def _stage_local(spec: CheckpointSpec, staged: Path, folder: Path, tensors: Sequence[str] | None) -> list[str]:
    staged = Path(staged).expanduser()
    if not staged.is_dir():
        raise FileNotFoundError(
            f"local checkpoint folder {staged} for {spec.name} does not exist; set `path:` to a folder holding "
            f"{', '.join(spec.files)} (e.g. `hf download {spec.repo} --revision {spec.revision} "
            f"{' '.join(spec.files)} --local-dir <folder>` on a machine with internet), or use source "
            "`huggingface` / `tiny`."
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
        link_or_copy(staged / name, folder / name)
    return shards


def fetch_checkpoint(
    name: str,
    root: str | Path,
    source: Source = "huggingface",
    *,
    path: str | Path | None = None,
    repo: str | None = None,
    revision: str | None = None,
    retries: int = 3,
    backoff_s: float = 1.0,
    seed: int = 0,
    tensors: Sequence[str] | None = None,
    **tiny: int,
) -> Path:
    """Make ``root/<name>/`` hold the complete checkpoint from ``source``; returns that folder.

    ``repo``/``revision`` override the registry's pin (source ``huggingface``; ignored by the others).
    ``path``: the pre-staged folder (source ``local``). ``retries``/``backoff_s``: Hub retries and the first
    wait, doubling. ``seed`` and ``tiny`` (sizes, :func:`~isonorm.checkpoints.tiny.tiny_sizes` of the entry's
    family): the ``tiny`` stand-in. ``tensors``: glob patterns of the tensors a run needs; a sharded checkpoint
    then fetches (or stages) only the shards holding them (None: every shard).
    """
    # repo/revision are kept by a preset that switches the source (Snakemake merges config files key by key),
    # so other sources ignore them rather than fail.
    spec = replace(checkpoint_spec(name), **{k: v for k, v in {"repo": repo, "revision": revision}.items() if v})
    folder = Path(root) / name
    request = _request(spec, source, path, tiny, seed, tensors)
    existing = read_marker(folder)
    held = None if existing is None else {key: existing.get(key) for key in request}
    if already_complete(folder, f"checkpoint {name}", held, request,
                        existing is not None and _matches(existing, request)):
        return folder

    folder.mkdir(parents=True, exist_ok=True)
    details: dict[str, Any] = {}
    if source == "huggingface":
        shards = _download(spec, folder, retries, backoff_s, tensors)
    elif source == "local":
        shards = _stage_local(spec, Path(path), folder, tensors)
        details["path"] = str(Path(path).expanduser().resolve())
    else:
        from ..data.texts import shipped_texts

        write_tiny(spec.tiny_family, folder, shipped_texts(), seed=request["seed"], **request["sizes"])
        shards = sorted(set(read_index(folder).values())) if (folder / INDEX).is_file() else []
    required = list(spec.files) if source != "tiny" or not spec.sharded else ["config.json", INDEX]
    check_files(folder, required)
    if (folder / INDEX).is_file():
        check_shards(folder, shards, read_index(folder))
    kept = [*required, *shards, *(f for f in _optional_present(spec, folder) if f not in shards)]
    if source == "tiny":  # every file the stand-in wrote (its layout may differ from the real repository's)
        kept = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    sizes = {f: (folder / f).stat().st_size for f in dict.fromkeys(kept)}
    write_marker(folder, {
        **request, **details, "checkpoint": name,
        "repo": None if source == "tiny" else spec.repo,
        "revision": spec.revision if source == "huggingface" else None,  # a staged folder's is unknown
        "model_class": tiny_model_class(spec.tiny_family) if source == "tiny" else spec.model_class,
        "files": sizes, "shards": shards,
    })
    return folder
