"""Errors of the checkpoint and Hub stages: each names the cause and the way forward (DESIGN 4).

Hub errors (:class:`HubError`) are shared with the text corpora (``isonorm.data.texts``), which download from
the same Hub; checkpoint errors (:class:`CheckpointError`) are about a folder on disk. Subclasses let tests
and callers tell the causes apart.
"""

from __future__ import annotations


class HubError(RuntimeError):
    """A download from the Hugging Face Hub failed."""


class HubNotFoundError(HubError):
    """The repository, the revision or a file does not exist on the Hub (or is private)."""


class GatedRepoAccessError(HubError):
    """The repository is gated and this machine's token has not been granted access."""


class HubUnreachableError(HubError):
    """The Hub could not be reached after all retries (offline machine, proxy, outage)."""


class CheckpointError(RuntimeError):
    """A checkpoint folder cannot be used."""


class MissingCheckpointFilesError(CheckpointError):
    """A folder lacks files the checkpoint needs (a pre-staged `local` folder, or an unfinished fetch)."""


class CorruptCheckpointError(CheckpointError):
    """A file of a fetched checkpoint is truncated or unreadable."""
