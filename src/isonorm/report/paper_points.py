"""The paper's values drawn on a reproduced figure (architecture §7): every reference with a ``plot`` key becomes
a star labelled "paper" beside this run's curves, in the colour of the curve it belongs to, so that agreement is
seen without reading a table. Called by ``ItemRenderer.figure`` before the figure is saved
(:func:`draw_item_points`), which also says in the caption what could not be drawn, and why.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.transforms import IdentityTransform

from ..outputs import PAPER_PRESET
from ..verdicts.references import PlotSpec

# The paper's values on a figure: a large star with a black edge above every curve, filled with the colour of
# the curve it belongs to (black for a value of no single curve), and one legend entry "paper" per legend.
PAPER_LABEL = "paper"
# Not clipped: a value at the edge of limits the notebook fixed (xlim starting at layer 1) shows whole.
PAPER_MARKER = dict(linestyle="none", marker="*", markersize=15, markeredgecolor="black", markeredgewidth=1.0,
                    zorder=10, clip_on=False)
PAPER_LEGEND_MARKER = dict(linestyle="none", marker="*", markersize=11, markerfacecolor="white",
                           markeredgecolor="black", markeredgewidth=1.0)
NO_SERIES_COLOR = "black"
PAPER_POINTS_NONE = ("none of them is a single point of these curves (a mean, extremum or plateau without a "
                     "stated x, a slope, a count or an ordering)")



class PaperPointNotFound(LookupError):
    """A ``plot`` reference names a panel, series or tick label that the figure does not have: ``what`` (one of
    ``panel``, ``curve``, ``x tick``, or ``x range`` for an x beyond the data), ``wanted`` and the ``available``."""

    def __init__(self, message: str, what: str, wanted: Any = None, available: Iterable[Any] = ()) -> None:
        super().__init__(message)
        self.what, self.wanted, self.available = what, wanted, [str(a) for a in available]


def missing_text(missing: Iterable[PaperPointNotFound]) -> str:
    """'no panel d=100 / d=500 (it has d=16 / d=32); no data at the x of 5 values' for a caption."""
    def names(values: list[str]) -> str:  # " / ": labels may hold commas ("ReLU, β_σ = 1.266")
        return " / ".join(values[:8]) + (" / …" if len(values) > 8 else "")

    groups: dict[str, list[PaperPointNotFound]] = {}
    for err in missing:
        groups.setdefault(err.what, []).append(err)
    parts = []
    for what, errs in groups.items():
        if what == "x range":
            parts.append(f"no data at the x of {len(errs)} value{'s' if len(errs) > 1 else ''}")
            continue
        wanted = list(dict.fromkeys(str(err.wanted) for err in errs))
        has = f" (it has {names(errs[0].available)})" if errs[0].available and what != "x tick" else ""
        parts.append(f"no {what} {names(wanted)}{has}")
    return "; ".join(parts)


def draw_item_points(fig: Figure, item: str, references: pd.DataFrame, reason: str | None,
                     preset: str) -> tuple[int, str]:
    """Draw the ``plot`` rows of ``item`` among the paper's ``references`` on ``fig``: (points drawn, the caption's
    note on what is not drawn, or ""). ``reason``: why the figure cannot carry the paper's values (the notebook's
    ``paper_points``); then nothing is drawn, and an item with ``plot`` rows is an error."""
    refs = references[references["item"] == item]
    plotted = refs[refs["plot"].notna()]
    read_off = int((refs["provenance"] == "read-off").sum())
    if reason is not None:
        if not plotted.empty:
            raise ValueError(
                f"{item}: the notebook says its figure cannot carry the paper's values ({reason!r}), but "
                f"the paper's reference file gives `plot` for {', '.join(plotted['quantity'])}; "
                "remove those `plot` keys or the notebook's `paper_points` reason")
        return 0, (f"The paper's read-off values are in the table below: {reason.rstrip('.')}." if read_off
                   else "")
    points = [(row.quantity, row.plot, float(row.reported)) for row in plotted.itertuples()]
    # Smaller presets have shorter curves: their figures are not stretched to the paper's x range.
    drawn, skipped = draw_paper_points(fig, item, points, within_data=preset != PAPER_PRESET)
    notes = []
    if skipped:
        k, n = len(skipped), len(points)
        which = (("The paper's plotted value is" if n == 1 else f"The paper's {n} plotted values are") if k == n
                 else f"{k} of the paper's {n} plotted values {'is' if k == 1 else 'are'}")
        notes.append(f"{which} not drawn: this run ({preset} preset) has {missing_text(skipped.values())}.")
    if not drawn and read_off and not skipped:
        notes.append(f"The paper's read-off values are in the table below; {PAPER_POINTS_NONE}.")
    return drawn, " ".join(notes)


def draw_paper_points(fig: Figure, item: str, points: Iterable[tuple[str, PlotSpec, float]],
                      within_data: bool = False) -> tuple[int, dict[str, PaperPointNotFound]]:
    """Draw the paper's values ``(quantity, plot, reported)`` on ``fig``; returns (number drawn, skipped).

    A point whose panel, series or tick label the figure lacks is skipped, and ``skipped`` maps its quantity to
    what was missing, for the caption: a run can lack a curve the paper has (a grid cut short, a curve that
    overflowed), and a figure that says so beats a notebook that fails after a day of training. With
    ``within_data`` a point beyond the x range of the panel's data is skipped too (a smaller preset's curves
    are shorter); otherwise the axis is widened to show it. Always an error: a label that matches several
    curves, and a value that the panel's axis cannot show (``pow10`` on a linear axis, a non-positive value on
    a log axis) — both are mistakes in the reference file, not in the run.
    """
    x_ranges = {id(ax): _x_range(ax) for ax in fig.axes}  # this run's data, before any marker is added
    by_axes: dict[int, tuple[Axes, list[tuple[float, float, Any]]]] = {}
    skipped: dict[str, PaperPointNotFound] = {}
    for quantity, spec, reported in points:
        where = f"{item}: paper value {quantity!r} (plot: {spec.describe()})"
        try:
            ax = _find_panel(fig, spec.panel)
            x = _resolve_x(ax, spec)
            color = NO_SERIES_COLOR if spec.series is None else _series_color(fig, ax, spec.series)
        except PaperPointNotFound as err:
            skipped[quantity] = err
            continue
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        y = spec.y_value(reported)
        log_y = ax.get_yscale() == "log"
        if spec.y == "pow10" and not log_y:
            raise ValueError(f"{where}: `y: pow10` but the panel's y axis is {ax.get_yscale()}, not log")
        if not math.isfinite(y) or (log_y and y <= 0):
            raise ValueError(f"{where}: y = {y!r} cannot be shown on a {ax.get_yscale()} axis "
                             "(a log10 value on a log axis needs `y: pow10`)")
        lo, hi = x_ranges[id(ax)]
        if within_data and not (lo - 1e-9 * max(1.0, abs(lo)) <= x <= hi + 1e-9 * max(1.0, abs(hi))):
            skipped[quantity] = PaperPointNotFound(f"x = {x:g} is beyond this run's data ({lo:g} to {hi:g})",
                                                   "x range", x)
            continue
        by_axes.setdefault(id(ax), (ax, []))[1].append((x, y, color))
    handle = Line2D([], [], label=PAPER_LABEL, **PAPER_LEGEND_MARKER)
    legends_done: set[int] = set()
    for ax, marks in by_axes.values():
        for x, y, color in marks:
            ax.plot([x], [y], markerfacecolor=color, label=f"_{PAPER_LABEL}", **PAPER_MARKER)
            _keep_in_view(ax, "x", x)
            _keep_in_view(ax, "y", y)
        _add_legend_entry(fig, ax, handle, legends_done)
    return sum(len(marks) for _, marks in by_axes.values()), skipped


def _x_range(ax: Axes) -> tuple[float, float]:
    lo, hi = ax.dataLim.intervalx
    return (float(lo), float(hi)) if math.isfinite(lo) and math.isfinite(hi) else (math.inf, -math.inf)


def _match(wanted: str, labels: Iterable[str], what: str) -> str | None:
    """The label equal to ``wanted``, else the one label that starts with it followed by a non-alphanumeric
    character (``ReLU`` for ``ReLU, β_σ = 1.266``); None when there is none, ValueError when several."""
    labels = list(dict.fromkeys(labels))
    if wanted in labels:
        return wanted
    prefixed = [lab for lab in labels if lab.startswith(wanted) and not lab[len(wanted)].isalnum()]
    if len(prefixed) > 1:
        raise ValueError(f"{what} {wanted!r} matches several: {prefixed}; write one of them in full")
    return prefixed[0] if prefixed else None


def _find_panel(fig: Figure, panel: str | int | None) -> Axes:
    if not fig.axes:
        raise PaperPointNotFound("the figure has no axes", "panel", panel)
    if panel is None:
        return fig.axes[0]
    if isinstance(panel, int):
        if panel >= len(fig.axes):
            raise PaperPointNotFound(f"no panel {panel}: the figure has {len(fig.axes)} axes", "panel", panel,
                                     range(len(fig.axes)))
        return fig.axes[panel]
    visible = [ax for ax in fig.axes if ax.get_visible()]
    titles = [ax.get_title() for ax in visible]
    title = _match(panel, titles, "panel")
    if title is None:
        raise PaperPointNotFound(f"no panel titled {panel!r}; titles: {titles}", "panel", panel, titles)
    return visible[titles.index(title)]


def _resolve_x(ax: Axes, spec: PlotSpec) -> float:
    if not isinstance(spec.x, str):
        return float(spec.x)
    # From the formatter, not the tick label texts: a panel that shares its x axis hides its own labels.
    locs = ax.xaxis.get_majorticklocs()
    labels = list(ax.xaxis.get_major_formatter().format_ticks(locs))
    if spec.x not in labels:
        ticks = [lab for lab in labels if lab]
        raise PaperPointNotFound(f"no x tick labelled {spec.x!r}; ticks: {ticks}", "x tick", spec.x, ticks)
    return float(locs[labels.index(spec.x)]) + spec.dx


def _handle_color(handle: Any) -> Any:
    if not handle.get_visible():
        return None
    if isinstance(handle, Line2D):
        return handle.get_color()
    if hasattr(handle, "get_facecolor"):
        face = handle.get_facecolor()
        return face[0] if getattr(face, "ndim", 1) == 2 and len(face) else face
    return None


def _legend_entries(legend: Legend | None) -> list[tuple[str, Any]]:
    if legend is None:
        return []
    return [(text.get_text(), _handle_color(h)) for h, text in zip(legend.legend_handles, legend.get_texts())
            if h is not None and _handle_color(h) is not None]


def _series_color(fig: Figure, ax: Axes, series: str) -> Any:
    """The colour of the line labelled ``series``: the panel's own lines and legend first, then the other
    panels' legends and the figure's (a figure often shows one legend for all its panels)."""
    entries = [(line.get_label(), line.get_color()) for line in ax.get_lines()
               if not line.get_label().startswith("_")]
    entries += _legend_entries(ax.get_legend())
    others = [a for a in fig.axes if a is not ax]
    for other in others:
        entries += _legend_entries(other.get_legend())
    for legend in fig.legends:
        entries += _legend_entries(legend)
    for other in others:
        entries += [(line.get_label(), line.get_color()) for line in other.get_lines()
                    if not line.get_label().startswith("_")]
    label = _match(series, [lab for lab, _ in entries], "series")
    if label is None:
        labels = list(dict.fromkeys(lab for lab, _ in entries if lab != PAPER_LABEL))
        raise PaperPointNotFound(f"no series labelled {series!r}; labels: {labels}", "curve", series, labels)
    return next(color for lab, color in entries if lab == label)


def _keep_in_view(ax: Axes, axis: str, value: float) -> None:
    """Widen an axis whose limits the notebook fixed when the paper's value lies outside them."""
    if (ax.get_autoscalex_on() if axis == "x" else ax.get_autoscaley_on()):
        return  # autoscaling takes in the marker
    get_lim, set_lim = (ax.get_xlim, ax.set_xlim) if axis == "x" else (ax.get_ylim, ax.set_ylim)
    scale = ax.get_xscale() if axis == "x" else ax.get_yscale()
    lo, hi = get_lim()
    inverted = lo > hi
    lo, hi = min(lo, hi), max(lo, hi)
    if lo <= value <= hi:
        return
    if scale == "log":
        lo, hi = min(lo, value / 1.5), max(hi, value * 1.5)
    else:
        margin = 0.05 * (max(hi, value) - min(lo, value))
        lo, hi = min(lo, value - margin), max(hi, value + margin)
    set_lim((hi, lo) if inverted else (lo, hi))


def _add_legend_entry(fig: Figure, ax: Axes, handle: Line2D, done: set[int]) -> None:
    """One "paper" entry in the legend that serves ``ax``: its own, else the figure's, else another panel's
    (a figure with one legend for all panels), else a new one on ``ax``."""
    legend = ax.get_legend() or (fig.legends[0] if fig.legends else None)
    if legend is None:
        legend = next((a.get_legend() for a in fig.axes if a.get_legend() is not None), None)
    if legend is None:
        ax.legend(handles=[handle], loc="best", fontsize="small")
        done.add(id(ax.get_legend()))
        return
    if id(legend) in done:
        return
    labels = [text.get_text() for text in legend.get_texts()]
    if PAPER_LABEL in labels:
        done.add(id(legend))
        return
    title = legend.get_title()
    kwargs = dict(
        # The anchor in display units, kept live (it follows the figure's size and dpi) by the identity transform.
        loc=legend._loc, bbox_to_anchor=legend.get_bbox_to_anchor(), bbox_transform=IdentityTransform(),
        # A figure legend laid out in one row stays in one row (a second row would run into the axes' labels).
        ncols=legend._ncols + (isinstance(legend.parent, Figure) and legend._ncols == len(labels) > 1),
        fontsize=legend._fontsize,
        frameon=legend.get_frame_on(), title=title.get_text() or None, title_fontsize=title.get_fontsize(),
        markerscale=legend.markerscale,
    )
    handles = [*legend.legend_handles, handle]
    labels = [*labels, PAPER_LABEL]
    parent = legend.parent
    if isinstance(parent, Figure):
        legend.remove()  # a figure keeps a list of legends; an axes' new legend replaces its old one
    done.add(id(parent.legend(handles, labels, **kwargs)))
