"""Helpers a paper's papermill notebook calls: :func:`open_paper` for its first cell, then :class:`ItemRenderer`.

Each figure or table is saved under ``report/<slug>/`` (PNG for the page plus PDF/SVG, or CSV + Markdown +
LaTeX) and shown in the notebook as ``<figure id="<item>">``, so that the executed notebook, converted to
``report/<slug>.html``, links every item by its id and shows its images by relative path.

Before a figure is saved, every reference of its item with a ``plot`` key (``references``: where the value sits
on the figure) is drawn on it as a "paper" marker beside this run's curves (:mod:`.paper_points`), and the
``<figure>`` element says how many with ``data-paper-points="N"`` (architecture §7); the caption names the ones
the figure could not carry. Below the caption, the item's reference values in a compact table (the paper's value,
this run's with its spread, the verdict), their notes folded under it (``markup.reference_table``): a caption says
what is drawn and with which settings, in a few lines, never a scored row's note; the method, the deviations from
the paper and the code that computed the results are folded between the two. Every figure is drawn in the report's
one style and laid out at the page column's width (:mod:`.figure_style`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import matplotlib

matplotlib.use("Agg")  # notebooks render to files; no display (before pyplot is imported)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from IPython.display import HTML, display
from matplotlib.figure import Figure

from ..results import read_all_results, read_metadata  # noqa: E402
from ..run_status import absence_text  # noqa: E402
from .bands import seeded_ci  # noqa: E402
from .figure_style import THEME, fit_to_column  # noqa: E402
from .ids import check_item_id, check_slug  # noqa: E402
from ..outputs import PAPER_PRESET  # noqa: E402
from .markup import escape, frame_table, preset_badge, reference_table, style_block, with_code  # noqa: E402
from .paper_points import PAPER_POINTS_NONE, draw_paper_points, missing_text  # noqa: E402
from .references import load_references  # noqa: E402
from .scoreboard import read_all_claims, score  # noqa: E402

# Error bands of every line plot: the mean with a seeded 95 % bootstrap CI (1000 resamples, seaborn's default
# estimator; metrics M6), seeded so that a rerun draws the same band (decision B12). The band is seaborn's
# errorbar=("ci", 95), n_boot=1000, seed=0, drawn vectorised (.bands).
CI = dict(errorbar=seeded_ci(95, n_boot=1000, seed=0))
NOT_RUN = "not run in this configuration (`compute: data-free`, or its results are missing)"
REFERENCE_DIR = Path("notebooks/reference")  # what each paper reported, relative to the workflow's folder

# LaTeX's special characters; pandas escapes the cells (escape=True) but not the caption.
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}

# Page resolution for the HTML report; the PDF/SVG copies are vector, for print and papers.
FIGURE_DPI = 120
FIGURE_FORMATS = ("png", "pdf", "svg")

class ItemRenderer:
    """Renders the items of one paper's page and remembers which ids it has used.

    ``reference_file`` None means no reported-vs-reproduced tables. ``claims_file`` may be None or not yet
    exist: the tables then show every reference as ``not-run`` rather than failing the notebook.
    """

    def __init__(
        self,
        slug: str,
        report_dir: str | Path,
        reference_file: str | Path | None,
        claims_file: str | Path | None,
        preset: str,
    ) -> None:
        self.slug = check_slug(slug)
        self.report_dir = Path(report_dir)
        self.item_dir = self.report_dir / slug
        self.preset = preset
        references = load_references(reference_file) if reference_file is not None else None
        self.references = references
        claims = read_all_claims([] if claims_file is None else [claims_file])
        # A smoke run's page compares nothing to the paper either (comparison.judge_smoke)
        self.scored = score(references, claims, smoke=preset != PAPER_PRESET) if references is not None else None
        # item id -> the HTML shown for it, in page order.
        self.rendered: dict[str, str] = {}
        # The library functions that computed an item's results (PaperPage.load): the item says it was "computed
        # by" them, so a reader finds the code from the page (grep the function in rules/). A load names the items
        # it feeds; a load that names none feeds the items its own notebook cell renders. A static item names none.
        self.sources: dict[str, list[str]] = {}
        self._cell_sources: list[str] = []
        self._sources_cell: object = None
        # Why an item's results are absent (PaperPage.load, from the run's causes), by item and for the current cell.
        self.absences: dict[str, str] = {}
        self._cell_absences: list[str] = []
        self._absences_cell: object = None

    def loaded(self, functions: Iterable[str], items: Iterable[str] = ()) -> None:
        """Results of ``functions`` were loaded for ``items`` (none: for the items this cell renders)."""
        functions, cell = [f for f in functions if f], _cell()
        if self._sources_cell != cell:
            self._cell_sources, self._sources_cell = [], cell
        for item in items:
            self.sources[item] = list(dict.fromkeys([*self.sources.get(item, []), *functions]))
        if not items:
            self._cell_sources = list(dict.fromkeys([*self._cell_sources, *functions]))

    def _computed_by(self, item: str) -> str:
        cell = self._cell_sources if self._sources_cell == _cell() else []
        sources = list(dict.fromkeys([*self.sources.get(item, []), *cell]))
        if not sources:
            return ""
        return f'<p class="computed-by">Computed by {escape(", ".join(sources))}.</p>'

    def figure(self, fig: Figure, item: str, caption: str, deviations: str | Iterable[str] | None = None,
               paper_points: str | None = None, method: str | None = None) -> None:
        """Save ``fig`` as ``<item>.png/.pdf/.svg`` and show it with caption and reported-vs-reproduced table.

        ``caption``: what is drawn and the settings this run used, in a few lines (``markup.CAPTION_LINES``);
        ``method``: how it was computed and what a careful reader needs besides, folded under the caption with the
        ``deviations`` from the paper. First the item's references with a ``plot`` key are drawn on ``fig`` as
        "paper" markers (module docstring). ``paper_points``: why this figure cannot carry the paper's values (e.g.
        "a heat map cannot carry them"); nothing is drawn and the folded part says so.
        """
        self._claim_id(item)
        drawn, note = self._paper_points(fig, item, paper_points)
        self.item_dir.mkdir(parents=True, exist_ok=True)
        fit_to_column(fig)  # every figure at the page column's width, its text at the theme's size there
        # The tight box, measured once at the saved dpi: bbox_inches="tight" would draw the figure twice per format.
        # PDF and SVG share the PNG's box (their own text metrics move it by up to ~3 pt, inside the 0.1 in pad).
        fig.set_dpi(FIGURE_DPI)
        fig.canvas.draw()
        tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
        for fmt in FIGURE_FORMATS:
            fig.savefig(self.item_dir / f"{item}.{fmt}", dpi=FIGURE_DPI, bbox_inches=tight)
        # Closed so that the inline backend does not show it a second time below the cell.
        plt.close(fig)
        links = " ".join(f'<a href="{self.slug}/{item}.{fmt}">{fmt.upper()}</a>' for fmt in FIGURE_FORMATS[1:])
        body = f'<img src="{self.slug}/{item}.png" alt="{escape(caption)}">'
        self._show(item, body, caption, deviations, links, paper_points=drawn, note=note, method=method)

    def _paper_points(self, fig: Figure, item: str, reason: str | None) -> tuple[int, str]:
        """Draw the item's ``plot`` references on ``fig``: (points drawn, caption note or "")."""
        if self.references is None:
            return 0, ""
        refs = self.references[self.references["item"] == item]
        plotted = refs[refs["plot"].notna()]
        read_off = int((refs["provenance"] == "read-off").sum())
        if reason is not None:
            if not plotted.empty:
                raise ValueError(
                    f"{item}: the notebook says its figure cannot carry the paper's values ({reason!r}), but "
                    f"notebooks/reference/{self.slug}.yaml gives `plot` for {', '.join(plotted['quantity'])}; "
                    "remove those `plot` keys or the notebook's `paper_points` reason")
            return 0, (f"The paper's read-off values are in the table below: {reason.rstrip('.')}." if read_off
                       else "")
        points = [(row.quantity, row.plot, float(row.reported)) for row in plotted.itertuples()]
        # Smaller presets have shorter curves: their figures are not stretched to the paper's x range.
        drawn, skipped = draw_paper_points(fig, item, points, within_data=self.preset != PAPER_PRESET)
        notes = []
        if skipped:
            k, n = len(skipped), len(points)
            which = (("The paper's plotted value is" if n == 1 else f"The paper's {n} plotted values are") if k == n
                     else f"{k} of the paper's {n} plotted values {'is' if k == 1 else 'are'}")
            notes.append(f"{which} not drawn: this run ({self.preset} preset) has {missing_text(skipped.values())}.")
        if not drawn and read_off and not skipped:
            notes.append(f"The paper's read-off values are in the table below; {PAPER_POINTS_NONE}.")
        return drawn, " ".join(notes)

    def table(
        self,
        frame: pd.DataFrame,
        item: str,
        caption: str,
        deviations: str | Iterable[str] | None = None,
        index: bool = False,
        float_format: str = ".4g",
        method: str | None = None,
    ) -> None:
        """Save ``frame`` as ``<item>.csv/.md/.tex`` and show it like a figure (``caption`` and ``method`` as there).

        The CSV keeps full precision (it is for machines); Markdown, LaTeX and HTML use ``float_format``.
        """
        self._claim_id(item)
        self.item_dir.mkdir(parents=True, exist_ok=True)
        frame.to_csv(self.item_dir / f"{item}.csv", index=index)
        (self.item_dir / f"{item}.md").write_text(frame.to_markdown(index=index, floatfmt=float_format) + "\n")
        (self.item_dir / f"{item}.tex").write_text(
            frame.to_latex(
                index=index, caption=latex_escape(caption), label=item, escape=True,
                float_format=lambda v: format(v, float_format),
            )
        )
        links = " ".join(f'<a href="{self.slug}/{item}.{fmt}">{fmt.upper()}</a>' for fmt in ("csv", "md", "tex"))
        self._show(item, frame_table(frame, float_format, index), caption, deviations, links, method=method)

    def not_reproducible(self, item: str, reason: str) -> None:
        """Mark an item the project cannot reproduce, saying why (its references stay ``not-run``)."""
        self._placeholder(item, "not-reproducible", "not reproducible", reason)

    def not_run(self, item: str, reason: str) -> None:
        """Mark an item whose results this run did not produce (e.g. ``compute: data-free``). The generic reason
        ``NOT_RUN`` gives way to what this run knows of the absence (:meth:`absent`): the item's own, else that of
        the results this cell found missing."""
        if reason == NOT_RUN:
            cell = self._cell_absences if self._absences_cell == _cell() else []
            reason = self.absences.get(item) or " ".join(dict.fromkeys(cell)) or NOT_RUN
        self._placeholder(item, "not-run", "not run", reason)

    def absent(self, text: str, items: Iterable[str] = ()) -> None:
        """Results that ``items`` (none: the items this cell renders) read are absent, for the reason ``text``
        (isonorm.run_status.absence_text)."""
        for item in items:
            self.absences[item] = text
        cell = _cell()
        if self._absences_cell != cell:
            self._cell_absences, self._absences_cell = [], cell
        self._cell_absences.append(text)

    def _placeholder(self, item: str, css_class: str, headline: str, reason: str) -> None:
        self._claim_id(item)
        html = (
            f'<section id="{item}" class="item {css_class}">'
            f'<h3><span class="item-id">{item}</span> {headline}</h3><p>{with_code(reason)}</p>'
            f"{self._reference_rows(item)}</section>"
        )
        self._emit(item, html)

    def _claim_id(self, item: str) -> None:
        check_item_id(item, self.slug)
        if item in self.rendered:
            raise ValueError(
                f"item id {item!r} is rendered twice on the {self.slug} page; HTML ids must be unique — "
                "give the second one its own id (e.g. its panel letter)"
            )

    def _reference_rows(self, item: str) -> str:
        if self.scored is None:
            return ""
        return reference_table(self.scored[self.scored["item"] == item])

    def _show(self, item: str, body: str, caption: str, deviations: str | Iterable[str] | None, links: str,
              paper_points: int | None = None, note: str = "", method: str | None = None) -> None:
        if isinstance(deviations, str):
            deviations = [deviations]
        deviation_text = "; ".join(deviations or [])
        # Visible: what is drawn, with this run's settings. Folded: how, what differs from the paper, the code.
        folded = [f'<p class="method">{escape(method)}</p>' if method else "",
                  f'<p class="deviations">Deviations: {escape(deviation_text)}</p>' if deviation_text else "",
                  f'<p class="paper-points-note">{escape(note)}</p>' if note else "",
                  self._computed_by(item)]
        heading = " and ".join(part for part, there in (("Method", method), ("deviations", deviation_text)) if there)
        details = (f'<details class="method"><summary>{heading.capitalize() or "Sources"}</summary>'
                   f'{"".join(folded)}</details>') if any(folded) else ""
        # The reference table sits inside the figcaption: HTML allows figcaption only first or last.
        caption_html = (
            f'<figcaption><span class="item-id">{item}</span>{preset_badge(self.preset)} '
            f'<span class="caption">{escape(caption)}</span>'
            f' <span class="downloads">{links}</span>{details}{self._reference_rows(item)}</figcaption>'
        )
        # A figure says how many of the paper's values it draws (the browser check counts them).
        points = "" if paper_points is None else f' data-paper-points="{int(paper_points)}"'
        self._emit(item, f'<figure id="{item}" class="item"{points}>{body}{caption_html}</figure>')

    def _emit(self, item: str, html: str) -> None:
        # The style block travels with the first item so that the converted page needs no other asset.
        prefix = style_block() if not self.rendered else ""
        self.rendered[item] = html
        display(HTML(prefix + html))


def _cell() -> object:
    """The notebook cell running now (IPython's execution count), or None outside a notebook."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with papermill
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


@dataclass
class PaperPage:
    """What a paper's notebook works with: its config section, its results folder and its renderer."""

    slug: str
    cfg: dict[str, Any]
    results: Path
    render: ItemRenderer
    # {results file relative to ``results``: {cause, fix, hours, device}}: files this run did not produce, and why
    # (the plan's left-out files, and at the end of a run that could not finish, its failures: isonorm.run_status)
    absent: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __iter__(self):
        """A notebook unpacks its page as ``cfg, render, load = open_paper(...)``."""
        return iter((self.cfg, self.render, self.load))

    def load(self, pattern: str, *items: str, feeds: Iterable[str] = ()) -> pd.DataFrame | None:
        """All Parquet files under the paper's results folder matching ``pattern`` (e.g. ``"fig3/*.parquet"``),
        or None when none exist (the item was not run in this configuration): then each of ``items``, the ids
        rendered from them, is shown as not run. Each of ``items`` and ``feeds`` (the items that later cells render
        from these results, and show as not run themselves), or with none named each item this cell renders, says
        which library function computed the results (from each file's provenance, architecture §5)."""
        files = sorted(self.results.glob(pattern))
        missing = [why for path, why in self.absent.items() if fnmatch.fnmatch(path, pattern)]
        if missing:
            self.render.absent(absence_text(missing), [*items, *feeds])
        if not files:
            for item in items:
                self.render.not_run(item, NOT_RUN)
            return None
        self.render.loaded([read_metadata(f).get("config", {}).get("function", "") for f in files],
                           [*items, *feeds])
        return read_all_results(files)


def open_paper(slug: str, run: dict[str, Any]) -> PaperPage:
    """The first cell of every paper notebook: read the run the notebook rule passes (papermill's one parameter
    ``run``: ``results_dir``, ``report_dir``, ``preset`` and the paper's ``config`` section), set the report's one
    figure style (``figure_style.THEME``) and open its page.

    The reported values are read from ``notebooks/reference/<slug>.yaml`` and this run's measured quantities
    from ``<results_dir>/claims.parquet`` (architecture §3), as the notebook rule declares them."""
    sns.set_theme(**THEME)
    results = Path(run["results_dir"])
    render = ItemRenderer(slug, run["report_dir"], REFERENCE_DIR / f"{slug}.yaml", results / "claims.parquet",
                          run["preset"])
    cfg = run["config"]
    absent = {str(Path(path).relative_to(results)) if Path(path).is_relative_to(results) else path: why
              for path, why in (run.get("not_run") or {}).items()}
    return PaperPage(slug, cfg, results, render, absent)
