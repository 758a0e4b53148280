"""Atomic file writes (architecture §5): a killed job leaves the old file or none, never half of one.

Every output of the pipeline (Parquet results, checkpoints, data files, markers, report pages) is written
through :func:`atomic_write`: a temporary sibling that replaces the target only once fully written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

# Outputs are meant to be read by others (a web server, collaborators on a cluster); mkstemp's 0600 would
# hide them. The process umask still applies on top.
READABLE = 0o644


@contextlib.contextmanager
def atomic_write(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write to; it replaces ``path`` when the block succeeds and is
    removed when it fails. Its name ends in ``.tmp`` and then ``path``'s own suffix, so that a writer that reads the
    format from the suffix (papermill's ``.ipynb``) takes it for what it is."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(READABLE & ~umask)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomically(path: str | Path, text: str) -> Path:
    with atomic_write(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes_atomically(path: str | Path, payload: bytes) -> Path:
    with atomic_write(path) as tmp:
        tmp.write_bytes(payload)
    return Path(path)
