"""Errors the user fixes by changing a setting or a file: told in a few lines, without a Python traceback.

A wrong config key, a paper that does not exist, ``device: cuda`` on a machine without a GPU: each raises a
:class:`UserError` whose message names the cause and the fix in at most :data:`MAX_LINES` lines (its full
detail, where there is more, goes to a log the message names). Where the workflow can meet one before any job
runs (the Snakefile's config checks, the run plan that input functions build), :func:`told_briefly` turns it into
``SystemExit``: Snakemake catches every ``Exception`` and prints it with its traceback and the rule and wildcards
of the input function it came from, but lets ``SystemExit`` through, and Python prints its message alone.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

MAX_LINES = 5  # what a person reads at once on a terminal (tests/test_user_errors.py holds every case to it)


class UserError(Exception):
    """A setting or input the user must change; the message says which and how, in at most MAX_LINES lines."""


def brief(err: UserError) -> str:
    """``error: <message>`` (the kind of error is in the words, not the class name)."""
    return f"error: {str(err).strip()}"


@contextmanager
def told_briefly() -> Iterator[None]:
    """Run the block; a UserError from it ends the process with its brief message and exit status 1."""
    try:
        yield
    except UserError as err:
        raise SystemExit(brief(err)) from None
