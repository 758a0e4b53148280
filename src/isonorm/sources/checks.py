"""Small checks of a fetch's arguments, shared by every kind of input."""

from __future__ import annotations

from typing import Any, Collection


def check_positive(**values: Any) -> None:
    """Every keyword argument is a positive integer (sizes of a fetched input), else a ValueError naming it."""
    for key, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{key} must be a positive integer, got {value!r}")


def check_source(what: str, name: str, source: str, sources: Collection[str], path: Any) -> None:
    """The source is known, and ``path`` is given exactly when the source is ``local`` (a pre-staged copy)."""
    if source not in sources:
        raise ValueError(f"unknown {what} source {source!r} for {name}; use one of {tuple(sources)}")
    if (path is None) == (source == "local"):
        raise ValueError(
            f"{what} {name}: `path` is required by source `local` and used by no other source "
            f"(got source {source!r}, path {path!r})"
        )
