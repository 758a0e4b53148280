"""The shapes preset's cost table and page (docs/cost.md): what each job of the paper run will cost on this device.

Every job of a shapes run stores a cost record with its results (made under the training engine's step cap,
isonorm.train.pace, and stored under the metadata key ``cost``). :func:`cost_table` gathers them into one row per
job; :func:`write_cost_page` draws the projected hours per paper and rule beside the table. ``peak_memory_gb`` is
the peak that must fit the device: CUDA's largest allocation on a GPU, the resident memory on a CPU. A job whose
peak exceeds the device's memory is flagged ``fits = False``: a paper run would fail on it here
(:func:`memory_warnings`). A table measured before a job was added has no row for it: :func:`coverage` names such
jobs as unmeasured, and the page lists them apart from its totals.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from ..atomic import atomic_write
from ..results import read_metadata
from .markup import escape, frame_table, preset_badge, style_block

COLUMNS = ["paper", "rule", "wildcards", "result", "device", "steps_measured", "seconds_per_step", "paper_steps",
           "seconds_per_pass", "paper_passes", "wall_seconds", "projected_hours", "peak_rss_gb", "peak_cuda_gb",
           "peak_memory_gb", "device_memory_gb", "fits", "extrapolated", "checkpoint_bytes",
           "resume_seconds"]
PAGE_TITLE = "What the paper run will cost"


class MissingCostRecordError(ValueError):
    """A results file of the shapes run holds no cost record: it was made by another run."""


def _relative(path: str | Path, root: Path) -> str:
    path = Path(path)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def cost_table(result_files: Sequence[str | Path], results_root: str | Path) -> pd.DataFrame:
    """One row per job (COLUMNS) from the cost records of ``result_files``; a job's other outputs (a second file
    it writes) need no record of their own. ``result`` is the job's first output relative to ``results_root``,
    the same path a paper run writes under results/."""
    root = Path(results_root)
    records, covered = {}, set()
    for file in result_files:
        record = read_metadata(file).get("cost")
        if record is not None:
            records[str(Path(file))] = record
            covered.update(str(Path(output)) for output in record["outputs"])
    missing = [str(f) for f in result_files if str(Path(f)) not in covered]
    if missing:
        raise MissingCostRecordError(
            f"{len(missing)} results file(s) hold no cost record, e.g. {missing[0]}: they were not made by a "
            "shapes run (the step cap of presets/shapes.yaml). Delete them and rerun the shapes preset"
        )
    rows = []
    for file, record in records.items():
        cuda = record.get("peak_cuda_gb")
        on_cuda = cuda is not None and cuda == cuda  # not NaN
        peak = cuda if on_cuda else record["peak_rss_gb"]
        rows.append({
            "paper": record["rule"].split("_", 1)[0],
            "rule": record["rule"],
            "wildcards": record["wildcards"],
            "result": _relative(file, root),
            **{key: record[key] for key in ("device", "steps_measured", "seconds_per_step", "paper_steps",
                                            "seconds_per_pass", "paper_passes", "wall_seconds", "projected_hours",
                                            "peak_rss_gb", "device_memory_gb", "checkpoint_bytes")},
            "peak_cuda_gb": cuda if on_cuda else float("nan"),
            "peak_memory_gb": peak,
            "fits": bool(peak <= record["device_memory_gb"]),
            "extrapolated": record.get("extrapolated", ""),
            "resume_seconds": record.get("resume_seconds", float("nan")),  # not in records of older shapes runs
        })
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(["paper", "rule", "wildcards"], ignore_index=True)


def write_cost_table(frame: pd.DataFrame, path: str | Path) -> Path:
    with atomic_write(Path(path)) as tmp:
        frame.to_csv(tmp, index=False)
    return Path(path)


def read_cost_table(path: str | Path) -> pd.DataFrame:
    text = ("wildcards", "extrapolated")  # empty for a job without wildcards / not extrapolated
    return pd.read_csv(path, dtype=dict.fromkeys(text, str), keep_default_na=False,
                       na_values={column: ["", "NaN", "nan"] for column in COLUMNS if column not in text})


@dataclass(frozen=True)
class Coverage:
    """How a cost table covers the jobs of a run, each named by its first results file (the table's ``result``).

    ``unmeasured``: jobs without a row, added since the table was measured; their cost is unknown until the shapes
    preset runs again, so they are left out of the table's totals and a run sizes them from the defaults
    (isonorm.resources). ``unknown``: rows that name no job of the run, removed or renamed since; their hours
    would count work the run no longer does."""

    unmeasured: list[str]
    unknown: list[str]


def coverage(frame: pd.DataFrame, jobs: Iterable[str]) -> Coverage:
    """Which of ``jobs`` (first results files, relative to the results root) the table ``frame`` has no row for,
    and which of its rows name none of them."""
    jobs, rows = set(jobs), set(frame.result)
    return Coverage(unmeasured=sorted(jobs - rows), unknown=sorted(rows - jobs))


def memory_warnings(frame: pd.DataFrame) -> list[str]:
    """One line per job whose peak memory exceeds the device's: a paper run would run out of memory on it."""
    return [
        f"{row.rule}{f' ({row.wildcards})' if row.wildcards else ''}: peak memory {row.peak_memory_gb:.1f} GB > {row.device_memory_gb:.1f} GB of "
        f"{row.device}; run it on a larger device (docs/cost.md)"
        for row in frame.itertuples() if not row.fits
    ]


def memory_guard(cost_csv: str | Path) -> list[str]:
    """The memory guard's lines for a paper run: the flagged jobs of a shapes run's table, if there is one."""
    if not Path(cost_csv).is_file():
        return []
    return [f"memory guard ({cost_csv}): {line}" for line in memory_warnings(read_cost_table(cost_csv))]


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
    ``unmeasured`` jobs (:func:`coverage`), which no total includes."""
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


__all__ = ["COLUMNS", "MissingCostRecordError", "cost_table", "write_cost_table", "read_cost_table", "Coverage",
           "coverage", "memory_warnings", "memory_guard", "hours_by_rule", "cost_page", "write_cost_page"]
