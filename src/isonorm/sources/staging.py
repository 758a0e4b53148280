"""Staging a pre-staged file (the ``local`` sources): hard link when possible, else copy; atomically.

A hard link costs no space and survives the staging folder; across file systems the file is copied. Each
file lands under a temporary name and is renamed into place, so an interrupted staging never leaves a
half-written file under its final name.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def link_or_copy(source: Path, target: Path) -> None:
    """Place ``source`` at ``target`` atomically: hard link if possible, else copy."""
    if target.exists() and os.path.samefile(source, target):
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}.staging")
    tmp.unlink(missing_ok=True)
    try:
        try:
            os.link(source, tmp)
        except OSError:  # another file system, or links not supported
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def staged_folder(path: str | Path, what: str, name: str, fix: str) -> Path:
    """The pre-staged folder ``path`` (``~`` expanded), or a FileNotFoundError saying what `path:` should be.

    ``what`` names the input ("data", "checkpoint"), ``fix`` completes "set `path:` to ...".
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        state = "is not a folder" if folder.exists() else "does not exist"
        raise FileNotFoundError(f"local {what} folder {folder} for {name} {state}; set `path:` to {fix}")
    return folder
