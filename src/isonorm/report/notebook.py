"""Helpers a paper's papermill notebook calls: :func:`open_paper` for its first cell, then :class:`ItemRenderer`.

Each figure or table is saved under ``report/<slug>/`` (:mod:`.item_files`: PNG for the page plus PDF/SVG, or CSV +
Markdown + LaTeX) and shown in the notebook as ``<figure id="<item>">``, so that the executed notebook, converted to
``report/<slug>.html``, links every item by its id and shows its images by relative path.

Before a figure is saved, every reference of its item with a ``plot`` key (``references``: where the value sits
on the figure) is drawn on it as a "paper" marker beside this run's curves (:mod:`.paper_points`), and the
``<figure>`` element says how many with ``data-paper-points="N"`` (architecture §7); the caption names the ones
the figure could not carry. Below the caption, the item's rows of the paper's scored claims (scored once, by the
paper_claims rule: :func:`.scoreboard.score_files`) in a compact table (the paper's value, this run's with its
spread, the verdict), their notes folded under it (``markup.reference_table``): a caption says what is drawn and
with which settings, in a few lines, never a scored row's note; the method, the deviations from the paper and the
code that computed the results (:mod:`.item_notes`) are folded between the two. Every figure is drawn in the
report's one style and laid out at the page column's width (:mod:`.figure_style`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import matplotlib

matplotlib.use("Agg")  # notebooks render to files; no display (before pyplot is imported)
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from IPython.display import HTML, display  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ..results import read_all_results, read_metadata  # noqa: E402
from ..run_status import absence_text  # noqa: E402
from .bands import seeded_ci  # noqa: E402
from .figure_style import THEME  # noqa: E402
from ..verdicts.ids import check_item_id, check_slug  # noqa: E402
from .item_files import FIGURE_FORMATS, TABLE_FORMATS, save_figure, save_table  # noqa: E402
from .item_notes import ItemNotes  # noqa: E402
from .markup import escape, frame_table, preset_badge, reference_table, style_block, with_code  # noqa: E402
from .paper_points import draw_item_points  # noqa: E402
from ..verdicts.references import load_references  # noqa: E402
from ..verdicts.scoreboard import read_scored  # noqa: E402

# Error bands of every line plot: the mean with a seeded 95 % bootstrap CI (1000 resamples, seaborn's default
# estimator; metrics M6), seeded so that a rerun draws the same band (decision B12). The band is seaborn's
# errorbar=("ci", 95), n_boot=1000, seed=0, drawn vectorised (.bands).
CI = dict(errorbar=seeded_ci(95, n_boot=1000, seed=0))
NOT_RUN = "not run in this configuration (`compute: data-free`, or its results are missing)"


class ItemRenderer:
    """Renders the items of one paper's page and remembers which ids it has used: each item's id checked, its
    files saved (:mod:`.item_files`), its HTML shown.

    ``references``: the paper's reference file, loaded (:func:`.references.load_references`), whose ``plot`` rows
    are drawn on the figures; ``scored``: the paper's scored rows (:func:`.scoreboard.read_scored`), shown under
    each item. None: no paper points, no reported-vs-reproduced tables. ``notes``: what the loads said about the
    items (:class:`.item_notes.ItemNotes`).
    """

    def __init__(
        self,
        slug: str,
        report_dir: str | Path,
        references: pd.DataFrame | None,
        scored: pd.DataFrame | None,
        preset: str,
    ) -> None:
        self.slug = check_slug(slug)
        self.report_dir = Path(report_dir)
        self.item_dir = self.report_dir / slug
        self.preset = preset
        self.references = references
        self.scored = scored
        self.notes = ItemNotes()
        # item id -> the HTML shown for it, in page order.
        self.rendered: dict[str, str] = {}

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
        drawn, note = (0, "") if self.references is None else draw_item_points(
            fig, item, self.references, paper_points, self.preset)
        save_figure(fig, self.item_dir, item)
        body = f'<img src="{self.slug}/{item}.png" alt="{escape(caption)}">'
        self._show(item, body, caption, deviations, self._links(item, FIGURE_FORMATS[1:]), paper_points=drawn,
                   note=note, method=method)

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
        save_table(frame, self.item_dir, item, caption, index, float_format)
        self._show(item, frame_table(frame, float_format, index), caption, deviations,
                   self._links(item, TABLE_FORMATS), method=method)

    def not_reproducible(self, item: str, reason: str) -> None:
        """Mark an item the project cannot reproduce, saying why (its references stay ``not-run``)."""
        self._placeholder(item, "not-reproducible", "not reproducible", reason)

    def not_run(self, item: str, reason: str) -> None:
        """Mark an item whose results this run did not produce (e.g. ``compute: data-free``). The generic reason
        ``NOT_RUN`` gives way to what this run knows of the absence (``notes``, :meth:`.ItemNotes.absence`): the
        item's own, else that of the results this cell found missing."""
        if reason == NOT_RUN:
            reason = self.notes.absence(item) or NOT_RUN
        self._placeholder(item, "not-run", "not run", reason)

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

    def _links(self, item: str, formats: Iterable[str]) -> str:
        return " ".join(f'<a href="{self.slug}/{item}.{fmt}">{fmt.upper()}</a>' for fmt in formats)

    def _computed_by(self, item: str) -> str:
        sources = self.notes.computed_by(item)
        if not sources:
            return ""
        return f'<p class="computed-by">Computed by {escape(", ".join(sources))}.</p>'

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


@dataclass
class PaperPage:
    """What a paper's notebook works with: its config section, its results folder and its renderer; the settings
    each of its results was computed with (:meth:`settings`)."""

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
            self.render.notes.absent(absence_text(missing), [*items, *feeds])
        if not files:
            for item in items:
                self.render.not_run(item, NOT_RUN)
            return None
        self.render.notes.loaded([job_run(f).get("function", "") for f in files], [*items, *feeds])
        return read_all_results(files)

    def settings(self, pattern: str) -> dict[str, Any]:
        """The settings the results matching ``pattern`` were computed with: the item's config as its job got it
        (the paper's shared section with the item's own merged over it, rules/common.smk ``item_settings``), from
        the files' provenance (architecture §5). A caption names these, not the config section merged again here.
        Called where :meth:`load` found the results; the files of one pattern come from one item's settings."""
        files = sorted(self.results.glob(pattern))
        if not files:
            raise FileNotFoundError(f"no results under {self.results} match {pattern!r}: settings are read from "
                                    "the results a job wrote (ask for them where `load` found results)")
        found = [job_run(f).get("config") for f in files]
        if found[0] is None or any(settings != found[0] for settings in found[1:]):
            raise ValueError(f"{pattern!r}: the results' provenance does not hold one item's settings "
                             f"({', '.join(str(f.relative_to(self.results)) for f in files)})")
        return found[0]


def job_run(path: Path) -> dict[str, Any]:
    """The run of the job that wrote a results file, as its provenance holds it: the library ``function``, its
    ``config`` (the item's settings) and ``kwargs`` (scripts/run_experiment.py, rules/common.smk ``experiment``)."""
    return read_metadata(path).get("config", {})


def open_paper(slug: str, run: dict[str, Any]) -> PaperPage:
    """The first cell of every paper notebook: read the run the notebook rule passes (papermill's one parameter
    ``run``: ``results_dir``, ``report_dir``, ``preset``, the paper's ``config`` section, and the rule's inputs
    ``references``, the paper's reference file, and ``scored``, its claims scored against it by the paper_claims
    rule), set the report's one figure style (``figure_style.THEME``) and open its page. Without ``references`` or
    ``scored`` the page draws no paper points or shows no reported-vs-reproduced tables."""
    sns.set_theme(**THEME)
    results = Path(run["results_dir"])
    references = load_references(run["references"]) if run.get("references") else None
    scored = read_scored(run["scored"]) if run.get("scored") else None
    render = ItemRenderer(slug, run["report_dir"], references, scored, run["preset"])
    cfg = run["config"]
    absent = {str(Path(path).relative_to(results)) if Path(path).is_relative_to(results) else path: why
              for path, why in (run.get("not_run") or {}).items()}
    return PaperPage(slug, cfg, results, render, absent)
