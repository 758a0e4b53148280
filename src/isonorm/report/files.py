"""Atomic text writes for report outputs: a killed job leaves the old file or none, never half a page."""

from __future__ import annotations

import os
from pathlib import Path

from ..results import atomic_path

# Report files are meant to be read by others (a web server, collaborators on a cluster); mkstemp's 0600
# would hide them. The process umask still applies on top.
READABLE = 0o644


def write_text_atomically(path: str | Path, text: str) -> Path:
    path = Path(path)
    tmp = atomic_path(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(READABLE & ~umask)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
