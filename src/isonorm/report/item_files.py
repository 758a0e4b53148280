"""An item's files under ``report/<slug>/``, each named by the item's id: a figure as PNG (shown on the page) and PDF
and SVG (vector, for print and papers), a table as CSV (full precision, for machines), Markdown and LaTeX. The page
links them (:class:`.notebook.ItemRenderer`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # notebooks render to files; no display (before pyplot is imported)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .figure_style import fit_to_column  # noqa: E402

# Page resolution for the HTML report; the PDF/SVG copies are vector, for print and papers.
FIGURE_DPI = 120
FIGURE_FORMATS = ("png", "pdf", "svg")
TABLE_FORMATS = ("csv", "md", "tex")

# LaTeX's special characters; pandas escapes the cells (escape=True) but not the caption.
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def save_figure(fig: Figure, folder: Path, item: str) -> None:
    """``<folder>/<item>.png/.pdf/.svg`` of ``fig`` laid out at the page column's width, then ``fig`` closed."""
    folder.mkdir(parents=True, exist_ok=True)
    fit_to_column(fig)  # every figure at the page column's width, its text at the theme's size there
    # The tight box, measured once at the saved dpi: bbox_inches="tight" would draw the figure twice per format.
    # PDF and SVG share the PNG's box (their own text metrics move it by up to ~3 pt, inside the 0.1 in pad).
    fig.set_dpi(FIGURE_DPI)
    fig.canvas.draw()
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    for fmt in FIGURE_FORMATS:
        fig.savefig(folder / f"{item}.{fmt}", dpi=FIGURE_DPI, bbox_inches=tight)
    # Closed so that the inline backend does not show it a second time below the cell.
    plt.close(fig)


def save_table(frame: pd.DataFrame, folder: Path, item: str, caption: str, index: bool, float_format: str) -> None:
    """``<folder>/<item>.csv/.md/.tex`` of ``frame``: the CSV at full precision, the others with ``float_format``;
    the LaTeX table captioned and labelled with the item's id."""
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"{item}.csv", index=index)
    (folder / f"{item}.md").write_text(frame.to_markdown(index=index, floatfmt=float_format) + "\n")
    (folder / f"{item}.tex").write_text(
        frame.to_latex(
            index=index, caption=latex_escape(caption), label=item, escape=True,
            float_format=lambda v: format(v, float_format),
        )
    )


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)
