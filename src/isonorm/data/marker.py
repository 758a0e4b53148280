"""The ``.ready`` marker: written last and atomically, so its presence means "this data set is complete".

A fetch that is killed half-way leaves no marker and is redone by the next run; a folder with a marker is
never rewritten (DESIGN 4: downloads are resumable, complete data is kept).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomically

MARKER_NAME = ".ready"


def marker_path(dataset_dir: Path) -> Path:
    return dataset_dir / MARKER_NAME


def read_marker(dataset_dir: Path) -> dict[str, Any] | None:
    """The marker's contents, or None when the data set is absent or incomplete."""
    path = marker_path(dataset_dir)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RuntimeError(
            f"{path} is unreadable ({err}); it is written atomically, so something else changed it. "
            f"Delete {dataset_dir} and fetch the data set again."
        ) from err


def write_marker(dataset_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Atomically write ``record`` (plus a UTC timestamp) as the marker; returns what was written."""
    record = {**record, "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    path = marker_path(dataset_dir)
    write_text_atomically(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def check_source(kind: str, name: str, source: str, sources: tuple[str, ...] | frozenset[str], path: Any) -> None:
    """The source is known, and ``path`` is given exactly when the source is ``local`` (a pre-staged folder)."""
    if source not in sources:
        raise ValueError(f"unknown {kind} source {source!r} for {name}; use one of {tuple(sources)}")
    if (path is None) == (source == "local"):
        raise ValueError(
            f"{kind} {name}: `path` is required by source `local` and used by no other source "
            f"(got source {source!r}, path {path!r})"
        )


def already_complete(folder: Path, what: str, held: dict[str, Any] | None, request: dict[str, Any],
                     matches: bool) -> bool:
    """True when ``folder`` is complete and holds what was asked for; an error when it holds something else.

    ``held`` is the marker's description of the contents (None: incomplete or absent, so fetch), ``matches``
    whether it satisfies ``request``. A complete folder is never overwritten, whatever the new settings.
    """
    if held is None:
        return False
    if not matches:
        raise RuntimeError(
            f"{folder} already holds a complete {what} ({held}), but {request} was asked for. Complete data is "
            f"never overwritten: give this configuration its own root folder, or delete {folder} to fetch again."
        )
    return True


def read_frozen_json(folder: str | Path, filename: str, what: str, fetch: str) -> Any:
    """The parsed ``folder/filename`` of a fetched input that a fetch rule froze there (marker required).

    ``what`` names the input in errors ("text corpus"), ``fetch`` the function that writes it.
    """
    folder = Path(folder)
    if read_marker(folder) is None:
        raise FileNotFoundError(
            f"{folder} holds no complete {what} (no .ready marker); run its fetch rule ({fetch}) first"
        )
    path = folder / filename
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is unreadable ({err}); delete {folder} and fetch the {what} again") from err


def check_positive(**values: Any) -> None:
    """Every keyword argument is a positive integer (sizes of a fetched input), else a ValueError naming it."""
    for key, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{key} must be a positive integer, got {value!r}")


def download_dataset_file(
    repo: str, revision: str, file: str, target: Path, *, what: str, offline_sources: str, retries: int,
    backoff_s: float,
) -> Path:
    """One file of a Hugging Face *dataset* repository at a pinned revision, into ``target`` (with retries).

    Errors name the cause (unknown repository or revision, gated, unreachable) and, for an unreachable Hub,
    the ``offline_sources`` that work without it (``isonorm.checkpoints.hub.call_hub``).
    """
    from huggingface_hub import hf_hub_download

    from ..checkpoints.hub import call_hub

    return Path(call_hub(
        lambda: hf_hub_download(repo_id=repo, filename=file, repo_type="dataset", revision=revision,
                                local_dir=target),
        what=what, repo=repo, revision=revision, repo_type="dataset", retries=retries, backoff_s=backoff_s,
        offline_sources=offline_sources,
    ))
