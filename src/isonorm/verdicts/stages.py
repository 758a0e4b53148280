"""The claims and scoreboard rules' steps, each one function: called by the rule scripts (scripts/measure_claims.py,
build_scoreboard.py) when every result is there, and by the end of a run that could not produce them all
(isonorm.report.end_of_run), with what exists. One implementation, two callers.

A paper's claims are scored once, by its claims step (:func:`paper_claims`: :func:`measure_claims`, then
:func:`paper_scored`, which the end of a run calls apart, so that a paper whose claims fail is still scored); its
page shows those rows and the scoreboard puts every paper's rows together. Each step reads the reference files it
is given, as its rule declares them: none of them knows where the workflow keeps them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

log = logging.getLogger("isonorm")


def paper_claims(slug: str, claim_functions: Sequence[str], results: Mapping[str, Sequence[str]],
                 config: Mapping[str, Any], output: str | Path, reference: str | Path, scored: str | Path,
                 origins: Mapping[str, str] | None = None) -> None:
    """The paper_claims rule: the paper's claims measured (:func:`measure_claims`, ``output``), then scored against
    its ``reference`` file (:func:`paper_scored`, ``scored``), each row saying where its number came from
    (``origins``: {item id: origin text}, rules/common.smk ``item_origins``)."""
    measure_claims(slug, claim_functions, results, config, output)
    paper_scored(reference, [output], config["preset"], scored, origins=origins)


def measure_claims(slug: str, claim_functions: Sequence[str], results: Mapping[str, Sequence[str]],
                   config: Mapping[str, Any], output: str | Path) -> None:
    """``<RESULTS>/<slug>/claims.parquet``: the quantities the paper's claims functions measure from ``results``
    (result key -> files; a key the run did not produce is absent, and its items' quantities with it)."""
    from ..results import write_results
    from ..callables import resolve
    from .claims import measure_parts

    parts = [resolve(spec) for spec in claim_functions]
    frame = measure_parts(slug, parts, results, config[slug])
    write_results(frame, output, config={"paper": slug, "preset": config["preset"]})


def paper_scored(reference: str | Path, claims: Sequence[str | Path], preset: str, output: str | Path,
                 unfinished: Mapping[str, Mapping[str, str]] | None = None,
                 origins: Mapping[str, str] | None = None) -> None:
    """``<RESULTS>/<slug>/scored.csv``: the paper's ``reference`` values scored against its ``claims`` files (none,
    or none that exists: every reference ``not-run``), as the scoreboard scores them (:func:`.scoreboard.score_files`,
    a smoke run's rows for a preset other than the paper's). ``unfinished``: {item id: {state, cause, log}} of the
    items this run did not finish (the end of a run that could not finish); their unmeasured rows say why
    (:func:`.scoreboard.unfinished_rows`). ``origins``: {item id: where its numbers come from}
    (isonorm.bundles.ledger.item_origins), the rows' ``origin`` column (:func:`.scoreboard.row_origins`)."""
    from .scoreboard import score_files, unfinished_rows, write_scored

    write_scored(unfinished_rows(score_files([reference], claims, preset, origins), unfinished or {}), output)


def scoreboard(scored: Sequence[str | Path], output: str | Path) -> None:
    """``<RESULTS>/scoreboard.csv``: every paper's scored rows (:func:`paper_scored`), put together."""
    from . import summarize_scoreboard, write_scoreboard
    from .scoreboard import apart_counts, headline, read_scored, scoreboard_of

    board = scoreboard_of(read_scored(path) for path in scored)
    write_scoreboard(board, output)
    # The headline counts default readings of a reproduction only (docs/decisions/README.md, "Verdicts").
    log.info("scoreboard: %s\n%s\ncounted apart:\n%s", headline(board), summarize_scoreboard(board).to_string(),
             apart_counts(board).to_string())
