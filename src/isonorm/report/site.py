"""The report's index page: papers, scoreboard, runtime per rule and provenance (architecture §1, §3, §7).

``report/index.html`` is static and self-contained (inline CSS, no script, no external asset) so that it
opens offline and from a cluster's file system. Links go only to pages that exist, so it never has a
broken link while papers are still being reproduced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import yaml

from .benchmarks import read_benchmarks, runtime_per_rule
from .comparison import VERDICTS
from ..atomic import write_text_atomically
from .markup import PAPER_PRESET, escape, format_number, frame_table, style_block, verdict_cell
from .scoreboard import match_rates, read_scoreboard, summarize_scoreboard

PAGE_TITLE = "Reproduction report: normalization, orthogonality and isometry"


def _paper_rows(report_dir: Path, papers: list[Mapping[str, str]], scoreboard: pd.DataFrame) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("paper", "title", *VERDICTS, "total"))
    rows = []
    for paper in papers:
        missing = [k for k in ("slug", "title", "html") if k not in paper]
        if missing:
            raise ValueError(f"paper entry {dict(paper)} lacks {missing}; give each paper slug, title and html")
        slug = escape(paper["slug"])
        if (report_dir / paper["html"]).is_file():
            link = f'<a href="{escape(paper["html"])}">{slug}</a>'
        else:
            link = f'{slug} <em>(not yet reproduced)</em>'
        counts = scoreboard.loc[scoreboard["paper"] == paper["slug"], "verdict"].value_counts()
        cells = "".join(f"<td>{int(counts.get(v, 0))}</td>" for v in VERDICTS)
        rows.append(
            f'<tr id="paper-{slug}"><td>{link}</td><td>{escape(paper["title"])}</td>{cells}'
            f"<td>{int(counts.sum())}</td></tr>"
        )
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _scoreboard_table(report_dir: Path, papers: list[Mapping[str, str]], scoreboard: pd.DataFrame) -> str:
    pages = {p["slug"]: p["html"] for p in papers if (report_dir / p["html"]).is_file()}
    head = "".join(f"<th>{escape(c)}</th>" for c in scoreboard.columns)
    rows = []
    for row in scoreboard.itertuples(index=False):
        cells = []
        for column, value in zip(scoreboard.columns, row):
            if column == "verdict":
                cells.append(verdict_cell(value))
            elif column == "item" and row.paper in pages:
                cells.append(f'<td><a href="{escape(pages[row.paper])}#{escape(value)}">{escape(value)}</a></td>')
            else:
                cells.append(f"<td>{escape(format_number(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _runtime(benchmark_files: Iterable[str | Path]) -> str:
    jobs = read_benchmarks(benchmark_files)
    if jobs.empty:
        return "<p>No benchmark files yet.</p>"
    return (
        frame_table(runtime_per_rule(jobs), float_format=".1f")
        + f"<details><summary>Per job ({len(jobs)})</summary>{frame_table(jobs, float_format='.1f')}</details>"
    )


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


def build_index(
    report_dir: str | Path,
    scoreboard_csv: str | Path,
    papers: list[Mapping[str, str]],
    config: Mapping[str, Any],
    benchmark_files: Iterable[str | Path],
    provenance: Mapping[str, Any],
    preset: str,
) -> Path:
    """Write ``report_dir/index.html`` atomically and return its path.

    ``papers``: one ``{"slug", "title", "html"}`` per paper, ``html`` relative to ``report_dir`` (e.g.
    ``lu2024.html``); ``provenance``: e.g. ``isonorm.provenance.provenance()`` (nested mappings such as
    ``packages`` become collapsible tables).
    """
    report_dir = Path(report_dir)
    scoreboard = read_scoreboard(scoreboard_csv)
    banner = (
        ""
        if preset == PAPER_PRESET
        else f'<p class="preset-banner">Made with the <strong>{escape(preset)}</strong> preset, not the '
        "paper-faithful configuration: sizes and data are reduced, so numbers are not comparable to the papers "
        "and verdicts only show that the pipeline runs.</p>"
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{PAGE_TITLE}</title>{style_block(whole_page=True)}</head>
<body>
<h1>{PAGE_TITLE}</h1>
{banner}
<section id="papers"><h2>Papers</h2>{_paper_rows(report_dir, papers, scoreboard)}</section>
<section id="summary"><h2>Scoreboard summary</h2>{frame_table(summarize_scoreboard(scoreboard), index=True)}</section>
<section id="match-rates"><h2>Match rates by where the reported number comes from</h2>
<p>Matches among the scored references (match or mismatch), per paper: <em>printed</em> in the paper's text, a
table, a caption or a legend; <em>read-off</em> from a figure (about ±5 % of the axis span); <em>derived</em>
from the authors' code or data. Column <code>provenance</code> of the scoreboard.</p>
{frame_table(match_rates(scoreboard), index=True)}</section>
<section id="scoreboard"><h2>Scoreboard</h2>
<p>Each reported number next to the reproduced one (also in <code>results/scoreboard.csv</code>).</p>
{_scoreboard_table(report_dir, papers, scoreboard)}</section>
<section id="runtime"><h2>Runtime per rule</h2>{_runtime(benchmark_files)}</section>
<section id="provenance"><h2>Provenance</h2>{_provenance(provenance, config)}</section>
</body></html>
"""
    return write_text_atomically(report_dir / "index.html", page)
