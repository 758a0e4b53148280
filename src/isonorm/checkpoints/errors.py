"""Errors of a checkpoint folder on disk: each names the cause and the way forward (architecture §4).

Errors of the Hub downloads are :mod:`isonorm.sources.errors` (shared with texts, corpora and instruction
sets). Subclasses let tests and callers tell the causes apart.
"""

from __future__ import annotations


class CheckpointError(RuntimeError):
    """A checkpoint folder cannot be used."""


class MissingCheckpointFilesError(CheckpointError):
    """A folder lacks files the checkpoint needs (a pre-staged `local` folder, or an unfinished fetch)."""


class CorruptCheckpointError(CheckpointError):
    """A file of a fetched checkpoint is truncated or unreadable."""
