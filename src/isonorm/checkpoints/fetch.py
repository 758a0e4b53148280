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

from ..data.local import link_or_copy
from ..data.marker import already_complete, check_source, read_marker, write_marker
from .errors import MissingCheckpointFilesError
from .hub import call_hub
from .registry import CheckpointSpec, checkpoint_spec
from .tiny import TINY_GPT2, write_tiny_gpt2
from .validate import check_files

Source = Literal["huggingface", "local", "tiny"]
SOURCES: tuple[str, ...] = ("huggingface", "local", "tiny")
REAL_SOURCES = frozenset({"huggingface", "local"})  # both yield the real weights: interchangeable


def _request(spec: CheckpointSpec, source: str, path: Any, tiny: dict[str, Any], seed: int) -> dict[str, Any]:
    check_source("checkpoint", spec.name, source, SOURCES, path)
    unknown = sorted(set(tiny) - set(TINY_GPT2))
    if unknown:
        raise ValueError(
            f"checkpoint {spec.name}: unknown option(s) {unknown}; source `tiny` takes {sorted(TINY_GPT2)}"
        )
    if tiny and source != "tiny":
        raise ValueError(f"checkpoint {spec.name}: {sorted(tiny)} size only the `tiny` source (got {source!r})")
    if source == "huggingface":
        return {"source": source, "repo": spec.repo, "revision": spec.revision}
    if source == "local":
        return {"source": source}
    return {"source": source, "seed": int(seed), "sizes": {**TINY_GPT2, **tiny}}


def _matches(existing: dict[str, Any], request: dict[str, Any]) -> bool:
    if existing.get("source") in REAL_SOURCES and request["source"] in REAL_SOURCES:
        return request["source"] == "local" or existing.get("source") == "local" or (
            existing.get("repo") == request["repo"] and existing.get("revision") == request["revision"]
        )
    return all(existing.get(key) == value for key, value in request.items())


def _download(spec: CheckpointSpec, folder: Path, retries: int, backoff_s: float) -> None:
    from huggingface_hub import snapshot_download

    call_hub(
        lambda: snapshot_download(
            repo_id=spec.repo, revision=spec.revision, local_dir=folder, allow_patterns=list(spec.files)
        ),
        what=f"checkpoint {spec.name}", repo=spec.repo, revision=spec.revision, retries=retries,
        backoff_s=backoff_s, offline_sources="`local` (a pre-staged folder) or `tiny` (a small random stand-in)",
    )
    missing = spec.missing_files(folder)
    if missing:
        raise MissingCheckpointFilesError(
            f"{spec.repo} at revision {spec.revision} has no {', '.join(missing)}; the checkpoint needs "
            f"{', '.join(spec.files)}. Pin a revision that has them (see {spec.url}/tree/main)."
        )


def _stage_local(spec: CheckpointSpec, staged: Path, folder: Path) -> None:
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
    for name in spec.files:
        link_or_copy(staged / name, folder / name)


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
    **tiny: int,
) -> Path:
    """Make ``root/<name>/`` hold the complete checkpoint from ``source``; returns that folder.

    ``repo``/``revision`` override the registry's pin (source ``huggingface``; ignored by the others).
    ``path``: the pre-staged folder (source ``local``). ``retries``/``backoff_s``: Hub retries and the first
    wait, doubling. ``seed`` and ``tiny`` (n_layer, n_embd, n_head, n_positions, vocab_size): the ``tiny``
    stand-in.
    """
    # repo/revision are kept by a preset that switches the source (Snakemake merges config files key by key),
    # so other sources ignore them rather than fail.
    spec = replace(checkpoint_spec(name), **{k: v for k, v in {"repo": repo, "revision": revision}.items() if v})
    folder = Path(root) / name
    request = _request(spec, source, path, tiny, seed)
    existing = read_marker(folder)
    held = None if existing is None else {key: existing.get(key) for key in request}
    if already_complete(folder, f"checkpoint {name}", held, request,
                        existing is not None and _matches(existing, request)):
        return folder

    folder.mkdir(parents=True, exist_ok=True)
    details: dict[str, Any] = {}
    if source == "huggingface":
        _download(spec, folder, retries, backoff_s)
    elif source == "local":
        _stage_local(spec, Path(path), folder)
        details["path"] = str(Path(path).expanduser().resolve())
    else:
        from ..data.texts import shipped_texts

        write_tiny_gpt2(folder, shipped_texts(), seed=request["seed"], **request["sizes"])
    check_files(folder, spec.files)
    sizes = {f: (folder / f).stat().st_size for f in spec.files}
    write_marker(folder, {
        **request, **details, "checkpoint": name,
        "repo": None if source == "tiny" else spec.repo,
        "revision": spec.revision if source == "huggingface" else None,  # a staged folder's is unknown
        "model_class": spec.model_class, "files": sizes,
    })
    return folder
