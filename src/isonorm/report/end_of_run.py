"""The report of a run that could not produce every result (docs/architecture.md, "A report from every run").

Snakemake runs the report rules only once every result they read exists. When a job fails (a download that cannot
be reached, a gated checkpoint, a bug), ``keep-going`` still runs every job it can, and then the run's ``onerror``
hook (rules/report.smk) calls :func:`report_what_exists`: the same four steps as the report rules
(:mod:`.stages`, isonorm.verdicts.stages), on the results that exist. Each paper's claims are measured from the files of its result keys
that exist (a key's jobs are one per data set or variant: the MNIST rows of a figure whose CIFAR-10 download failed
are measured) and scored against its reference file (a reference without a claim is ``not-run``, with the
root cause when an input of its item could not be made, or ``failed`` when a job of its item failed; a row measured
from part of its item's results says so; a paper whose claims
could not be measured has all its references ``not-run``); its page renders every item it can and shows
the others as not run, with the cause of each missing file (isonorm.run_status) and the setting or step that
produces it; the scoreboard puts the papers' scored rows together and the index opens with the run's summary. A
page whose own rendering fails is replaced by one that says so, so that every page of the site exists.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..atomic import write_text_atomically
from ..run_status import one_line
from .markup import escape, style_block
from ..verdicts import stages as verdict_stages
from . import stages

log = logging.getLogger("isonorm")


def reference_file(slug: str) -> Path:
    """What the paper reported, ``notebooks/reference/<slug>.yaml`` in the workflow's folder (the folder Snakemake
    runs in). The report rules get these files as inputs (rules/report.smk); this hook runs outside any rule, so it
    names them itself, as it names the notebooks."""
    return Path("notebooks/reference") / f"{slug}.yaml"


def _present(results: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each result key with the files of it that exist (the keys with none left out). A key's files are its jobs'
    (one per data set, variant or depth); a claims function reduces those it is given, so the rows of the data sets
    that could be had are measured when another's download failed, and scoring marks the item's other rows (failed,
    or not run with the root cause) and its measured ones as measured from part of its results
    (scoreboard.unfinished_rows)."""
    present = {key: [f for f in files if Path(f).is_file()] for key, files in results.items()}
    return {key: files for key, files in present.items() if files}


def _up_to_date(page: Path, inputs: Sequence[str]) -> bool:
    if not page.is_file():
        return False
    made = page.stat().st_mtime
    return all(Path(f).is_file() and Path(f).stat().st_mtime <= made for f in inputs)


def _failed_page(page: Path, slug: str, cause: str, log_path: str) -> None:
    write_text_atomically(page, f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(slug)}: not rendered</title>{style_block(whole_page=True)}
</head><body><h1>{escape(slug)}</h1>
<p class="failed-page">This page could not be rendered from the results this run has: {escape(cause)}.
The log says more: <code>{escape(log_path)}</code>.</p></body></html>
""")


def report_what_exists(
    *,
    papers: Sequence[str],
    config: Mapping[str, Any],
    results_root: str | Path,
    report_root: str | Path,
    logs_root: str | Path,
    planned: Callable[[str], Mapping[str, Sequence[str]]],
    claims: Mapping[str, Sequence[str]],
    not_run: Callable[[str], Mapping[str, Mapping[str, Any]]],
    summary: Sequence[str],
    unfinished: Callable[[str], Mapping[str, Mapping[str, str]]] = lambda slug: {},
    origins: Callable[[str], Mapping[str, str]] = lambda slug: {},
) -> list[str]:
    """Every paper page, the scoreboard and the index from the results that exist; returns one line per report step
    that failed (each page that failed is replaced by one saying why). ``planned(slug)``: the paper's results by key
    that the run planned; ``claims``: its claims functions; ``not_run(slug)``: {file: why} of its absent files;
    ``unfinished(slug)``: {item id: {state, cause, log}} of its items this run did not finish (their rows say why);
    ``origins(slug)``: {item id: where its numbers come from} (rules/common.smk ``item_origins``, over
    isonorm.bundles, which this layer does not import: the workflow passes it), the scored rows' ``origin``."""
    results_root, report_root, logs_root = Path(results_root), Path(report_root), Path(logs_root)
    problems: list[str] = []
    scored_files = []
    for slug in papers:
        results = planned(slug)
        present = _present(results)
        claims_file, scored_file = results_root / slug / "claims.parquet", results_root / slug / "scored.csv"
        page = report_root / f"{slug}.html"
        measured = []
        try:  # seconds: measured again whatever exists, as the paper_claims job would
            verdict_stages.measure_claims(slug, claims[slug], present, config, claims_file)
            measured.append(claims_file)
        except Exception as err:  # noqa: BLE001 - reported in the summary and on the page; the other papers go on
            log.exception("claims of %s from the results that exist", slug)
            problems.append(f"claims of {slug} could not be measured: {one_line(err)}")
        try:  # without claims, every reference of the paper is not-run
            verdict_stages.paper_scored(reference_file(slug), measured, config["preset"], scored_file, unfinished(slug),
                                        origins=origins(slug))
            scored_files.append(scored_file)
        except Exception as err:  # noqa: BLE001 - as above; the page shows no reference tables
            log.exception("scoring of %s", slug)
            problems.append(f"the references of {slug} could not be scored: {one_line(err)}")
        notebook_log = logs_root / slug / "notebook.log"
        every_file = [f for files in results.values() for f in files]
        if all(Path(f).is_file() for f in every_file) and _up_to_date(page, every_file):
            continue  # every result is there and the paper_notebook job of this run rendered the page from them
        try:
            stages.paper_page(slug, Path("notebooks") / f"{slug}.py", results_root / slug, page,
                              results_root / slug / "notebook.ipynb", config, not_run(slug), notebook_log,
                              references=reference_file(slug),
                              scored=scored_file if scored_file in scored_files else None)
        except Exception as err:  # noqa: BLE001 - as above
            log.exception("page of %s from the results that exist", slug)
            _failed_page(page, slug, one_line(err), str(notebook_log))
            problems.append(f"page of {slug} could not be rendered: {one_line(err)} (log: {notebook_log})")
    board = results_root / "scoreboard.csv"
    verdict_stages.scoreboard(scored_files, board)
    stages.site_index(report_root / "index.html", board, papers, [reference_file(slug) for slug in papers], config,
                      results_root / "benchmarks", [*summary, *problems])
    return problems
