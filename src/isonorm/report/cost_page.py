"""The page of the shapes preset's cost table (docs/cost.md): what each job of the paper run will cost on this device.

The table is the cost run's (isonorm.cost.cost_table, one row per job); this module only draws it:
:func:`write_cost_page` shows the projected hours per paper and rule beside the table, the jobs whose peak memory
exceeds the device's (isonorm.cost.memory_warnings), and the jobs a table measured before they were added has no
row for (isonorm.cost.coverage), apart from its totals.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..atomic import atomic_write
from ..cost import memory_warnings
from .markup import escape, frame_table, preset_badge, style_block

PAGE_TITLE = "What the paper run will cost"


def hours_by_rule(frame: pd.DataFrame) -> pd.DataFrame:
    """Projected hours and job counts per (paper, rule), the largest first."""
    grouped = frame.groupby(["paper", "rule"], sort=False).agg(jobs=("result", "size"),
                                                               projected_hours=("projected_hours", "sum"))
    return grouped.sort_values("projected_hours", ascending=False).reset_index()


def _svg(by_rule: pd.DataFrame) -> str:
    import matplotlib
    from matplotlib.figure import Figure

    rc = {"svg.fonttype": "none", "svg.hashsalt": "isonorm-cost", "font.family": "sans-serif", "font.size": 9}
    papers = sorted(by_rule.paper.unique())
    colours = dict(zip(papers, matplotlib.colormaps["tab10"].colors))
    rows = by_rule.iloc[::-1]  # the largest on top
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(8, 0.28 * len(rows) + 1.2))
        ax = fig.add_subplot()
        bars = ax.barh(rows.rule, rows.projected_hours, color=[colours[p] for p in rows.paper])
        ax.bar_label(bars, labels=[f"{h:.3g} h" for h in rows.projected_hours], padding=3, fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("projected hours of the paper run, all jobs of the rule (log scale)")
        handles = [matplotlib.patches.Patch(color=colours[p], label=p) for p in papers]
        ax.legend(handles=handles, loc="lower right", frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
    svg = buffer.getvalue()
    return svg[svg.index("<svg"):]


def cost_page(frame: pd.DataFrame, preset: str, unmeasured: Sequence[str] = ()) -> str:
    """The HTML page: totals per paper, the figure of hours per rule, the memory guard, the whole table, and the
    ``unmeasured`` jobs (isonorm.cost.coverage), which no total includes."""
    by_paper = frame.groupby("paper").agg(jobs=("result", "size"), projected_hours=("projected_hours", "sum"),
                                          largest_peak_memory_gb=("peak_memory_gb", "max")).reset_index()
    total = frame.projected_hours.sum()
    devices = ", ".join(sorted(frame.device.unique()))
    warnings = memory_warnings(frame)
    guard = ("<p>Every job fits in the device's memory.</p>" if not warnings else
             "<ul class=\"warnings\">" + "".join(f"<li>{escape(w)}</li>" for w in warnings) + "</ul>")
    extrapolated = frame[frame.extrapolated != ""]
    notes = "".join(f"<li>{escape(r.rule)} {escape(r.wildcards)}: {escape(r.extrapolated)}</li>"
                    for r in extrapolated.itertuples())
    scope = (f"the measured jobs of the paper run, not the {len(unmeasured)} unmeasured ones listed at the end"
             if unmeasured else "the whole paper run")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{PAGE_TITLE}</title>{style_block(whole_page=True)}</head>
<body>
<h1>{PAGE_TITLE} {preset_badge(preset)}</h1>
<p>Each of the {len(frame)} jobs of the paper run that needs a data set, a checkpoint or a GPU ran at the paper's
sizes on synthetic data for a few timed steps, one measurement pass and one checkpoint write and resume, on
<strong>{escape(devices)}</strong>. Projected: <strong>{total:.1f} hours</strong> for {scope} on this
device, one job at a time (docs/cost.md says how each number is projected).</p>
<h2>Per paper</h2>{frame_table(by_paper)}
<h2>Per rule</h2><figure id="cost-figure">{_svg(hours_by_rule(frame))}</figure>
<h2>Memory guard</h2>{guard}
{f"<h2>Extrapolated</h2><ul>{notes}</ul>" if notes else ""}
<h2>Every job</h2>{frame_table(frame.drop(columns=["result"]))}
{_unmeasured_section(unmeasured)}
</body></html>
"""


def _unmeasured_section(unmeasured: Sequence[str]) -> str:
    if not unmeasured:
        return ""
    items = "".join(f"<li>{escape(job)}</li>" for job in unmeasured)
    return (f'<h2>Unmeasured</h2><p>{len(unmeasured)} job(s) of the run have no row: no total above includes them '
            f'until the shapes preset runs again (docs/cost.md).</p><ul class="unmeasured">{items}</ul>')


def write_cost_page(frame: pd.DataFrame, path: str | Path, preset: str, unmeasured: Sequence[str] = ()) -> Path:
    with atomic_write(Path(path)) as tmp:
        Path(tmp).write_text(cost_page(frame, preset, unmeasured), encoding="utf-8")
    return Path(path)


__all__ = ["PAGE_TITLE", "hours_by_rule", "cost_page", "write_cost_page"]
