"""The report's index and scoreboard pages (architecture §1, §3, §7).

``report/index.html`` answers "how much of each paper reproduces, and which items fail" at a glance: the
headline with where its numbers come from (computed here, imported from a bundle), a verdict figure (inline SVG),
the item grid, the papers with their counts, match rates by provenance, then runtime per rule and provenance.
``report/scoreboard.html`` holds the whole scoreboard, sortable and filterable. Both are static and self-contained (inline CSS and SVG; the scoreboard page's small script is
inline too) so that they open offline and from a cluster's file system. Links go only to pages and item ids
that exist, so the index never has a broken link while papers are still being reproduced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import pandas as pd
import yaml

from ..atomic import write_text_atomically
from ..results import read_metadata
from .archive import lay_out_archive
from .benchmarks import read_benchmarks, runtime_per_rule
from ..verdicts.comparison import WEAK_MEANING
from .item_grid import grid_html, item_tiles, linked_items
from .markup import PAPER_PRESET, escape, frame_table, style_block, with_code
from ..verdicts.scoreboard import (apart_counts, headline, is_smoke, match_rates, origin_line, read_scoreboard,
                                   summarize_scoreboard, verdict_columns)
from .scoreboard_page import scoreboard_page
from .verdict_figure import verdict_figure

PAGE_TITLE = "Reproduction report: normalization, orthogonality and isometry"


# The paper rows' columns beside the headline counts (scoreboard.apart_counts; docs/decisions/README.md,
# "Verdicts"): matches only within the reported value's seed noise, weak matches, alternative readings that
# match, consistency checks that hold, fitted readings.
APART = {
    "matches within seed noise": lambda c: str(int(c["seed_noise"])),
    "weak matches": lambda c: str(int(c["weak"])),
    "alternatives match": lambda c: f"{int(c['alternatives_match'])} / {int(c['alternatives'])}",
    "consistency holds": lambda c: f"{int(c['consistency_hold'])} / {int(c['consistency'])}",
    "fitted": lambda c: str(int(c["fitted"])),
}


class SitePages(NamedTuple):
    """The two pages ``build_index`` writes."""

    index: Path
    scoreboard: Path


def _check_papers(papers: list[Mapping[str, str]]) -> None:
    for paper in papers:
        missing = [k for k in ("slug", "title", "html") if k not in paper]
        if missing:
            raise ValueError(f"paper entry {dict(paper)} lacks {missing}; give each paper slug, title and html")


def _paper_rows(pages: Mapping[str, str], papers: list[Mapping[str, str]], scoreboard: pd.DataFrame,
                items: Mapping[str, int]) -> str:
    verdicts, apart_columns = verdict_columns(scoreboard), ({} if is_smoke(scoreboard) else APART)
    head = "".join(f"<th>{h}</th>" for h in ("paper", "title", "items", *verdicts, "total", *apart_columns))
    rows = []
    summary, apart = summarize_scoreboard(scoreboard), apart_counts(scoreboard)
    for paper in papers:
        slug = escape(paper["slug"])
        link = f'<a href="{escape(pages[paper["slug"]])}">{slug}</a>' if paper["slug"] in pages else (
            f"{slug} <em>(not yet reproduced)</em>")
        counts = summary.loc[paper["slug"]] if paper["slug"] in summary.index else pd.Series(0, summary.columns)
        side = apart.loc[paper["slug"]] if paper["slug"] in apart.index else pd.Series(0, apart.columns)
        cells = "".join(f"<td>{int(counts.get(v, 0))}</td>" for v in (*verdicts, "total"))
        cells += "".join(f"<td>{escape(cell(side))}</td>" for cell in apart_columns.values())
        rows.append(
            f'<tr id="paper-{slug}"><td>{link}</td><td>{escape(paper["title"])}</td>'
            f'<td>{items.get(paper["slug"], 0)}</td>{cells}</tr>'
        )
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _apart_sentence(scoreboard: pd.DataFrame) -> str:
    """The index's words for what the headline leaves out (docs/decisions/README.md, "Verdicts")."""
    c = apart_counts(scoreboard).loc["total"]
    return (f"{c['alternatives_match']} of {c['alternatives']} alternative readings match; "
            f"{c['consistency_hold']} of {c['consistency']} consistency checks hold; {c['fitted']} fitted "
            "readings (a setting chosen to agree with the paper: listed on the scoreboard page, never a match).")


def _runtime(benchmark_files: Iterable[str | Path]) -> str:
    jobs = read_benchmarks(benchmark_files)
    if jobs.empty:
        return "<p>No benchmark files yet.</p>"
    return (
        frame_table(runtime_per_rule(jobs), float_format=".1f")
        + f"<details><summary>Per job ({len(jobs)})</summary>{frame_table(jobs, float_format='.1f')}</details>"
    )


def job_devices(result_files: Iterable[str | Path], results_root: str | Path) -> pd.DataFrame:
    """``result, device``: the device each job ran on, as its results file's provenance records it (the job's
    resolved device, isonorm.workflow.job_device), one row per file."""
    root = Path(results_root)
    rows = [{"result": str(Path(path).relative_to(root)) if Path(path).is_relative_to(root) else str(path),
             "device": read_metadata(path).get("device", "not recorded")} for path in result_files]
    return pd.DataFrame(rows, columns=["result", "device"])


def _devices(devices: pd.DataFrame) -> str:
    if devices.empty:
        return ""
    counts = devices.groupby("device").size().rename("jobs").reset_index()
    return (f"<h3 id=\"devices\">Device per job</h3>{frame_table(counts)}"
            f"<details><summary>Per job ({len(devices)})</summary>{frame_table(devices)}</details>")


def _provenance(provenance: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    scalars = {k: v for k, v in provenance.items() if not isinstance(v, Mapping)}
    mappings = {k: v for k, v in provenance.items() if isinstance(v, Mapping)}
    items = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in scalars.items())
    parts = [f'<table class="data">{items}</table>']
    for name, mapping in mappings.items():
        rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in mapping.items())
        parts.append(f'<details><summary>{escape(name)}</summary><table class="data">{rows}</table></details>')
    config_yaml = yaml.safe_dump(dict(config), sort_keys=False, default_flow_style=False)
    parts.append(f"<details><summary>config</summary><pre>{escape(config_yaml)}</pre></details>")
    return "".join(parts)


def _made_with(preset: str, provenance: Mapping[str, Any]) -> str:
    commit = provenance.get("git_commit")
    line = f'<p class="made-with">Made with the <strong>{escape(preset)}</strong> preset'
    line += f", git commit <code>{escape(commit)}</code>.</p>" if commit else ".</p>"
    if preset == PAPER_PRESET:
        return line
    return line + (
        f'<p class="preset-banner">Made with the <strong>{escape(preset)}</strong> preset, not the '
        "paper-faithful configuration: sizes and data are reduced, so its numbers are not compared to the papers; "
        "the report shows what ran, what was computed and what failed.</p>"
    )


def _run_section(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li>{with_code(line)}</li>" for line in lines)
    return f'<section id="this-run"><h2>This run</h2><ul class="run-summary">{items}</ul></section>'


def build_index(
    report_dir: str | Path,
    scoreboard_csv: str | Path,
    papers: list[Mapping[str, str]],
    config: Mapping[str, Any],
    benchmark_files: Iterable[str | Path],
    provenance: Mapping[str, Any],
    preset: str,
    devices: pd.DataFrame | None = None,
    run_summary: Sequence[str] = (),
) -> SitePages:
    """Write ``report_dir/index.html`` and ``report_dir/scoreboard.html`` atomically; return both paths.
    Then lay the whole site out again, as hard links, in ``report_dir/_archive/``, the folder that
    ``snakemake --report`` packs (``isonorm.report.archive``).

    ``papers``: one ``{"slug", "title", "html"}`` per paper, ``html`` relative to ``report_dir`` (e.g.
    ``lu2024.html``); the item grid reads each existing page for its item ids. ``provenance``: e.g.
    ``isonorm.provenance.provenance()`` (nested mappings such as ``packages`` become collapsible tables), the
    index job's own; ``devices``: the device of every experiment job (:func:`job_devices`), shown with it;
    ``run_summary``: what this run computed, left out or could not run, and how to finish it
    (isonorm.run_status.summary_lines), shown under the headline.
    """
    report_dir = Path(report_dir)
    _check_papers(papers)
    scoreboard = read_scoreboard(scoreboard_csv)
    pages = {p["slug"]: p["html"] for p in papers if (report_dir / p["html"]).is_file()}
    grid = item_tiles(report_dir, papers, scoreboard)
    made_with = _made_with(preset, provenance)
    rows = len(scoreboard)
    smoke = is_smoke(scoreboard)
    if smoke:  # not compared to the papers: what ran, what was computed, what failed (comparison.judge_smoke)
        note = ("A smoke run checks that the pipeline works end to end: its sizes or data are reduced, so its numbers "
                "are not compared to the papers. A failure is a value that came out NaN or infinite, or an item "
                "whose own job failed.")
        items_note = ("Every figure and table of each paper, coloured by the worst state among its quantities (failed, "
                      "then not run, then not produced at these sizes, then computed).")
        rates_link, rates = "", ""
    else:
        note = (f"Only default readings of a reproduction count; a match is weak when {WEAK_MEANING}. "
                f"Counted apart: {_apart_sentence(scoreboard)}")
        items_note = ("Every figure and table of each paper, coloured by the worst verdict among its default reference "
                      "values (failed, then mismatch, then inconclusive, then not run, then match).")
        rates_link = '<a href="#match-rates">match rates</a> · '
        rates = f"""<section id="match-rates"><h2>Match rates by where the reported number comes from</h2>
<p>Matches among the scored default rows (match, mismatch or failed), per paper: <em>printed</em> in the
paper's text, a table, a caption or a legend; <em>read-off</em> from a figure; <em>derived</em> from the authors'
code or data. Column <code>provenance</code> of the scoreboard.</p>
{frame_table(match_rates(scoreboard), index=True)}</section>"""
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{PAGE_TITLE}</title>{style_block(whole_page=True)}</head>
<body>
<h1>{PAGE_TITLE}</h1>
{made_with}
<nav><a href="#verdicts">{"quantities" if smoke else "verdicts"}</a> · <a href="#items">items</a> · <a href="#papers">papers</a> ·
{rates_link}<a href="scoreboard.html">scoreboard ({rows} rows)</a> ·
<a href="#runtime">runtime</a> · <a href="#provenance">provenance</a></nav>
<p id="headline" class="headline"><strong>{escape(headline(scoreboard))}</strong></p>
<p id="origins" class="note">{escape(origin_line(scoreboard))} (the rows the headline counts; column
<code>origin</code> of the scoreboard: device, date and commit of each).</p>
<p class="note">{escape(note)}</p>
{_run_section(run_summary)}<section id="verdicts"><h2>{"Quantities" if smoke else "Verdicts"} per paper</h2>{verdict_figure(scoreboard, [p["slug"] for p in papers])}</section>
<section id="items"><h2>Items</h2>
<p class="note">{escape(items_note)} Hover for the counts; click to open the item on its
paper's page. Dashed tiles are items of the scoreboard that no page shows.</p>
{grid_html(grid, pages)}</section>
<section id="papers"><h2>Papers</h2>
<p class="note">The paper's items (its tiles above), then its default scoreboard rows by verdict, then what is
counted apart: weak matches, alternative readings that match, consistency checks that hold, fitted readings.</p>
{_paper_rows(pages, papers, scoreboard, {slug: len(tiles) for slug, tiles in grid.items()})}</section>
{rates}
<section id="scoreboard"><h2>Scoreboard</h2>
<p>All {rows} rows, each reported number next to the reproduced one, sortable and filterable by verdict,
paper, reading, weak mark and item: <a href="scoreboard.html">the scoreboard page</a> (also <code>{escape(str(scoreboard_csv))}</code>).</p>
</section>
<section id="runtime"><h2>Runtime per rule</h2>{_runtime(benchmark_files)}</section>
<section id="provenance"><h2>Provenance</h2>{_provenance(provenance, config)}{_devices(
    devices if devices is not None else job_devices([], "."))}</section>
</body></html>
"""
    board = scoreboard_page(scoreboard, linked_items(grid), PAGE_TITLE, made_with, str(scoreboard_csv))
    pages = SitePages(
        index=write_text_atomically(report_dir / "index.html", page),
        scoreboard=write_text_atomically(report_dir / "scoreboard.html", board),
    )
    # The last page of the site is written: lay it out for `snakemake --report report.zip` (report/archive.py).
    lay_out_archive(report_dir, papers)
    return pages
