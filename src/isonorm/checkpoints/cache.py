"""A `huggingface` checkpoint folder is a set of links into the user's Hugging Face cache.

The weights stay where ``huggingface_hub`` keeps them (``<cache>/models--<org>--<name>/snapshots/<commit>/``,
the cache taken from ``HF_HUB_CACHE`` or ``HF_HOME``; :func:`isonorm.sources.cached_snapshot`), so a model
already cached is neither downloaded nor copied again. The project folder ``<root>/<name>/`` holds one
symbolic link per file the run needs, each to ``<snapshot>/<file>``, and the ``.ready`` marker records the
snapshot: the Snakemake outputs stay where they were, and every reader (``transformers``, ``safetensors``, the
config readers) opens the folder as before. The link's target names the commit, so a load re-checks that each
file still comes from the snapshot of the pinned revision (:func:`check_links`). A file damaged in the cache
is named with the way to remove it there (:func:`cache_hint`): fetching the folder again would otherwise link
the same damaged file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import CheckpointError, CorruptCheckpointError, MissingCheckpointFilesError


def link_into(target: Path, link: Path) -> None:
    """Make ``link`` a symbolic link to ``target`` (absolute), atomically: a temporary link renamed into place,
    replacing whatever a killed fetch left there."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(target, tmp)
    except OSError as err:  # a file system without symbolic links: copying tens of GB is not the answer
        raise CheckpointError(
            f"cannot create the link {link} -> {target} ({err}): the checkpoint folder must be on a file system with "
            "symbolic links. Move `checkpoints: root:` to one, or stage the files and use source `local`."
        ) from err
    os.replace(tmp, link)


def _cache_entry(path: Path) -> tuple[Path, Path] | None:
    """(the file's entry in its cache snapshot, the snapshot) for a file of a folder linked into the cache, or
    for an entry of a snapshot itself (its link to ``../../blobs/<hash>`` is relative); None for a plain file."""
    if not path.is_symlink():
        return None
    target = Path(os.readlink(path))
    entry = target if target.is_absolute() else path  # an absolute link: ours; a relative one: the cache's own
    return entry, entry.parent


def _repo_id(snapshot: Path) -> str:
    """``org/name`` from ``<cache>/models--org--name/snapshots/<commit>`` (huggingface_hub's folder name)."""
    return snapshot.parent.parent.name.removeprefix("models--").replace("--", "/", 1)


def cache_hint(folder: Path, path: Path | None = None) -> str | None:
    """The way forward from a missing or damaged file of a checkpoint whose files live in the Hugging Face cache
    (``path``, else any file of ``folder``); None when the folder holds plain files (no cache involved)."""
    folder = Path(folder)
    if path is not None:  # a plain file (or none at all) in a linked folder: the folder's own way forward
        found = _cache_entry(Path(path))
    elif folder.is_dir():
        found = next((hit for p in sorted(folder.iterdir()) if (hit := _cache_entry(p)) is not None), None)
    else:
        found = None
    if found is None:
        return None
    entry, snapshot = found
    is_snapshot = folder.resolve() == snapshot.resolve()  # the check ran on the cache's snapshot itself (fetching)
    again = "run snakemake again" if is_snapshot else f"delete {folder} and run snakemake again"
    if path is not None and not Path(path).exists():  # a dangling link (to the snapshot, or on to its blob)
        return (f"{path} links to {os.path.realpath(path)}, which is gone: the Hugging Face cache was cleaned, or "
                f"is not mounted on this machine (HF_HUB_CACHE / HF_HOME). Make that cache visible here, or {again}, "
                "which fetches the checkpoint into the cache anew.")
    cache = snapshot.parent.parent.parent
    name = entry.name if path is not None else "<file>"
    return (f"The file lives in the Hugging Face cache snapshot {snapshot}, so the damage is there: remove it from "
            f"the cache (`hf cache rm hf://models/{_repo_id(snapshot)}/{name} --cache-dir {cache} --yes`), then "
            f"{again}, which downloads it anew (on an offline machine, copy an intact cache instead).")


def check_links(folder: Path, record: dict[str, Any]) -> None:
    """Each file the marker lists links to the cache snapshot it records, which is the pinned revision's and
    still there; clear errors otherwise (a folder edited by hand, a cache cleaned or not mounted)."""
    snapshot, revision = Path(record["snapshot"]), record.get("revision")
    again = f"Delete {folder} and run snakemake again, which links it to the pinned revision's snapshot."
    if snapshot.name != revision:
        raise CorruptCheckpointError(f"{folder}/.ready records the cache snapshot {snapshot}, which is not that of "
                                     f"the pinned revision {revision}. {again}")
    for name in record["files"]:
        path = folder / name
        target = Path(os.readlink(path)) if path.is_symlink() else None
        if target != snapshot / name:
            state = "is not a link" if target is None else f"links to {target}"
            raise CorruptCheckpointError(
                f"{path} {state}, not to {snapshot / name} (the Hugging Face cache snapshot of {record.get('repo')} "
                f"at the pinned revision {revision}, recorded in {folder}/.ready). {again}"
            )
    if not snapshot.is_dir():
        raise MissingCheckpointFilesError(
            f"{folder} links into the Hugging Face cache snapshot {snapshot}, which is gone: the cache was cleaned, or "
            f"is not mounted on this machine (HF_HUB_CACHE / HF_HOME). Make that cache visible here, or delete "
            f"{folder} and run snakemake again, which fetches the checkpoint into the cache anew."
        )
