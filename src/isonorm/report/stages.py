"""The page and index rules' steps, each one function: called by the rule scripts (scripts/render_notebook.py,
build_index.py) when every result is there, and by the end of a run that could not produce them all
(:mod:`.end_of_run`), with what exists. One implementation, two callers. The claims and scoreboard steps are the
verdicts' (isonorm.verdicts.stages): a page shows the rows they scored and decides nothing.
"""

from __future__ import annotations

from glob import glob
from pathlib import Path
from typing import Any, Mapping, Sequence


def paper_page(slug: str, notebook: str | Path, results_dir: str | Path, page: str | Path, executed: str | Path,
               config: Mapping[str, Any], not_run: Mapping[str, Mapping[str, Any]], log_path: str | Path | None,
               references: str | Path | None, scored: str | Path | None) -> None:
    """``<REPORT>/<slug>.html`` and its item files: the paper's notebook run with papermill. ``not_run``: results
    files this run did not produce and why (isonorm.plan, isonorm.run_status), shown on the items that read them.
    ``references`` (the paper's reference file) and ``scored`` (its scored rows, :func:`isonorm.verdicts.stages.paper_scored`) are passed on
    to the notebook; None: no paper points, no reported-vs-reproduced tables."""
    from .render import render_paper_notebook

    render_paper_notebook(
        notebook=notebook, executed=executed, page=page, log_path=log_path,
        parameters={"run": {  # the notebook's one parameter (isonorm.report.notebook.open_paper)
            "results_dir": str(results_dir),
            "report_dir": str(Path(page).parent),
            "preset": config["preset"],
            "config": dict(config[slug]),
            "not_run": {str(path): dict(why) for path, why in not_run.items()},
            "references": None if references is None else str(references),
            "scored": None if scored is None else str(scored),
        }},
    )


def site_index(index: str | Path, scoreboard_csv: str | Path, papers: Sequence[str], references: Sequence[str | Path],
               config: Mapping[str, Any], benchmarks: str | Path, run_summary: Sequence[str] = ()) -> None:
    """``<REPORT>/index.html`` and ``scoreboard.html`` (and the archive folder), the papers titled by their
    ``references`` files (in the order of ``papers``), with ``run_summary``: what this run computed, what it did
    not and why (isonorm.run_status.summary_lines)."""
    from ..provenance import provenance
    from .papers import paper_pages
    from .site import build_index, job_devices

    results = Path(benchmarks).parent  # <RESULTS>/benchmarks
    build_index(
        report_dir=Path(index).parent,
        scoreboard_csv=scoreboard_csv,
        papers=paper_pages(papers, references),
        config=dict(config),
        benchmark_files=sorted(glob(f"{benchmarks}/**/*.tsv", recursive=True)),
        provenance=provenance(),
        preset=config["preset"],
        # every experiment's results file, <RESULTS>/<slug>/<experiment>/<variant>.parquet, and its device (by
        # slug: the paper configuration's root holds other presets' roots)
        devices=job_devices(sorted(p for slug in papers for p in results.glob(f"{slug}/*/*.parquet")), results),
        run_summary=run_summary,
    )
