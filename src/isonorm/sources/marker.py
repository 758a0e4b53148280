"""The ``.ready`` marker: written last and atomically, so its presence means "this folder is complete".

A fetch that is killed half-way leaves no marker and is redone by the next run; a folder with a marker is
never rewritten (architecture §4: downloads are resumable, complete data is kept). :func:`already_complete` is the
one decision every fetch takes from it.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..atomic import write_text_atomically

MARKER_NAME = ".ready"


def marker_path(folder: Path) -> Path:
    return Path(folder) / MARKER_NAME


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker's contents, or None when the folder is absent or incomplete."""
    path = marker_path(folder)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise RuntimeError(
            f"{path} is unreadable ({err}); it is written atomically, so something else changed it. "
            f"Delete {folder} and fetch it again."
        ) from err


def write_marker(folder: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Atomically write ``record`` (plus a UTC timestamp) as the marker; returns what was written."""
    record = {**record, "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    write_text_atomically(marker_path(folder), json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


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


def refetch_hint(folder: Path, what: str) -> str:
    """The way forward from a damaged file of the fetched ``what`` in ``folder``: delete the folder and run
    snakemake again, which fetches it anew. A ``local`` input is staged by hard link where it can be
    (:func:`~.staging.link_or_copy`), so its pre-staged copy may share the damage and is named, to re-stage."""
    try:
        record = read_marker(folder) or {}
    except RuntimeError:  # the marker itself is damaged: the same way forward
        record = {}
    hint = f"Delete {folder} and run snakemake again, which fetches the {what} anew"
    if record.get("source") == "local" and record.get("path"):
        hint += (f"; it was staged (source `local`) from {record['path']}, which may share the damage (a hard "
                 "link): re-stage that copy first")
    return hint + "."
