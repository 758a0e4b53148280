"""The verdict figure of the index: per paper, a stacked bar of its reference values by verdict, as inline SVG.

The bars count only the headline rows, default readings of a reproduction (``scoreboard.summarize_scoreboard``):
alternative and fitted readings and consistency checks are counted apart (docs/decisions/README.md, "Verdicts").

Inline SVG keeps the page one self-contained file. matplotlib is imported on first use so that importing
``isonorm.report`` stays light.
"""

from __future__ import annotations

import io
import re
from typing import Sequence

import pandas as pd

from ..verdicts.comparison import COMPUTED, FAILED, INCONCLUSIVE, MATCH, MISMATCH, NO_REFERENCE, NOT_PRODUCED, NOT_RUN
from .markup import VERDICT_COLOURS, VERDICT_EDGES, smoke_states
from ..verdicts.scoreboard import is_smoke, summarize_scoreboard

# The verdicts a bar stacks, left to right; no-reference rows (a measured quantity no reference lists) have
# nothing to reproduce and are counted in the caption instead.
BAR_VERDICTS = (MATCH, MISMATCH, INCONCLUSIVE, FAILED, NOT_RUN)
# A smoke run's bars: every quantity it measured or should have, none compared to the paper.
SMOKE_BARS = (COMPUTED, FAILED, NOT_PRODUCED, NOT_RUN)
FIGURE_ID = "verdict-figure"


def verdict_counts(scoreboard: pd.DataFrame, slugs: Sequence[str]) -> pd.DataFrame:
    """Rows ``slugs`` (in that order), columns the bars' verdicts and ``no-reference``: how many rows have each."""
    counts = summarize_scoreboard(scoreboard)
    bars = SMOKE_BARS if is_smoke(scoreboard) else BAR_VERDICTS
    return counts.reindex(index=list(slugs), columns=[*bars, NO_REFERENCE], fill_value=0).astype(int)


def _svg(counts: pd.DataFrame, bars: Sequence[str] = BAR_VERDICTS) -> str:
    import matplotlib
    from matplotlib.figure import Figure

    rc = {"svg.fonttype": "none", "svg.hashsalt": "isonorm-verdicts", "font.family": "sans-serif",
          "font.size": 10}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(8, 0.45 * len(counts) + 1.1))
        ax = fig.add_subplot()
        slugs = list(counts.index)[::-1]  # first paper on top
        left = pd.Series(0, index=slugs)
        totals = counts.loc[slugs, list(bars)].sum(axis=1)
        longest = max(int(totals.max()) if len(totals) else 0, 1)
        for verdict in bars:
            widths = counts.loc[slugs, verdict]
            drawn = ax.barh(slugs, widths, left=left, height=0.6, color=VERDICT_COLOURS[verdict],
                            edgecolor=VERDICT_EDGES[verdict], linewidth=0.8, label=verdict)
            labels = [str(w) if w and w >= 0.06 * longest else "" for w in widths]
            ax.bar_label(drawn, labels=labels, label_type="center", fontsize=9)
            left = left + widths
        good, worse = (COMPUTED, (FAILED,)) if bars == SMOKE_BARS else (MATCH, (MISMATCH, INCONCLUSIVE, FAILED))
        for y, slug in enumerate(slugs):
            matched, total = counts.loc[slug, good], totals[slug]
            text = f"{matched} of {total} {good} ({100 * matched / total:.0f} %)" if total else "no reference values"
            text += "".join(f", {counts.loc[slug, v]} {v}" for v in worse if counts.loc[slug, v])
            ax.text(total + 0.01 * longest, y, " " + text, va="center", fontsize=9)
        ax.set_xlim(0, longest * 1.45)
        ax.set_xlabel("quantities" if bars == SMOKE_BARS else "reference values")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(ncols=len(bars), loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, fontsize=9)
        fig.tight_layout()
        buffer = io.StringIO()
        # the tight box holds the labels right of the longest bar, which the axes do not
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML declaration and doctype: the SVG sits inside HTML
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)


def verdict_figure(scoreboard: pd.DataFrame, slugs: Sequence[str]) -> str:
    """``<figure id="verdict-figure">`` with the inline SVG bars and a caption."""
    counts = verdict_counts(scoreboard, slugs)
    if is_smoke(scoreboard):
        svg = _svg(counts, SMOKE_BARS).replace("<svg ", '<svg role="img" aria-label="Quantities per paper" ', 1)
        return (
            f'<figure id="{FIGURE_ID}" class="verdict-figure">{svg}<figcaption>Quantities of each paper this smoke run '
            f"measured, none compared to the paper (its sizes or data are reduced): {smoke_states()}."
            "</figcaption></figure>"
        )
    no_reference = int((scoreboard["verdict"] == NO_REFERENCE).sum()) if len(scoreboard) else 0
    svg = _svg(counts).replace("<svg ", '<svg role="img" aria-label="Reference values per paper by verdict" ', 1)
    return (
        f'<figure id="{FIGURE_ID}" class="verdict-figure">{svg}<figcaption>Reference values of each paper by '
        "verdict, default readings of a reproduction only: <em>match</em> (the reproduced value, with its seed "
        "spread, is within the tolerance), <em>mismatch</em>, <em>inconclusive</em> (the run's spread is too wide to "
        "decide at the tolerance, or the value is one run's), <em>failed</em> (the item ran but the value is "
        "missing, NaN or infinite), <em>not-run</em> (the item produced no value in this run). Alternative and "
        "fitted readings and consistency checks are counted apart (the headline above). Rows with no reference "
        "value (quantities the run measured that no paper reports: "
        f"{no_reference} in all) are left out of the bars.</figcaption></figure>"
    )

