"""The one look of every figure of the report, whatever its paper (docs/decisions/README.md, "One figure style").

Every paper notebook starts with the same seaborn theme (:data:`THEME`, set by ``notebook.open_paper``), and each
figure is brought to the page column's width before it is saved (:func:`fit_to_column`): the page shows every
image at that width (``figure.item img`` in ``markup.ITEM_STYLE``), so its text reads at the theme's size on
every page, whether the notebook drew a one-panel figure or a row of five.

What a figure shows stays the paper's (its axes, scales, colours by meaning such as a β palette, its panel
layout); only the look is shared. The authors' own looks (seaborn's darkgrid with serif fonts for meterez2024,
whitegrid at font scale 1.5 for joudaki2023, ...) are not copied: a reader moves between the four papers' pages,
and a figure is compared with the paper's through the values it carries, not its typeface.
"""

from __future__ import annotations

import warnings
from typing import Any

from matplotlib.figure import Figure
from matplotlib.layout_engine import TightLayoutEngine
from matplotlib.text import Text

# seaborn's white grid at "paper" context with tab10, mathtext for formulas (no LaTeX installation needed). The
# legend loses its frame: most legends sit outside the axes, where a frame only adds a box.
THEME: dict[str, Any] = dict(style="whitegrid", context="paper", palette="tab10", font_scale=1.1,
                             rc={"legend.frameon": False, "axes.titleweight": "bold"})

# The page column: 56em of 16 px (``figure.item img``'s max-width), in inches at the figures' resolution
# (item_files.FIGURE_DPI = 120): the width at which a saved image is shown at its own size.
COLUMN_IN = 7.5
# A narrow figure is widened to the column; its height grows with it, up to this (a taller one keeps its own).
MAX_HEIGHT_IN = 4.6
# A figure drawn wider than the column is narrowed to it, which enlarges its text relative to its panels; its
# fonts are scaled back towards the drawn proportions, but never below this fraction of the theme's size.
MIN_TEXT_SCALE = 0.8


def fit_to_column(fig: Figure) -> float:
    """Resize ``fig`` to the page column's width (module docstring) and return the factor its width changed by.

    Its axes are then packed again by a tight layout, which a layout drawn at the old size needs (its margins were
    measured for text of another relative size); a figure that has a constrained layout keeps it, which adapts by
    itself. A legend placed below the axes stays below them when anchored at the figure's bottom edge
    (``loc="upper center", bbox_to_anchor=(0.5, 0)``): the saved image's tight box takes it in."""
    width, height = fig.get_size_inches()
    factor = COLUMN_IN / width
    if factor >= 1:
        new_height = max(height, min(height * factor, MAX_HEIGHT_IN))
    else:
        new_height = height * factor
        text_scale = max(factor, MIN_TEXT_SCALE)
        for text in fig.findobj(lambda artist: isinstance(artist, Text)):
            text.set_fontsize(text.get_fontsize() * text_scale)
    fig.set_size_inches(COLUMN_IN, new_height)
    if fig.get_layout_engine() is None or isinstance(fig.get_layout_engine(), TightLayoutEngine):
        with warnings.catch_warnings():  # a figure too crowded to pack keeps its layout, which is still drawn
            warnings.simplefilter("ignore", UserWarning)
            fig.tight_layout()
    return factor
