"""Tables 2 and B.1 and Fig. B.1: the isometry strength β_σ in closed form, by quadrature and by Monte Carlo.

joudaki2023-table2, joudaki2023-tableb1, joudaki2023-figb1 and decision D8: closed forms and exact quadrature are the
primary values; the originals' (here seeded) Monte Carlo estimate is kept beside them to show where the
printed digits come from. β of σ(α·x) uses the library's estimators (``isonorm.metrics.hermite``); nothing
here integrates on its own.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...items import Item, Results, results_of
from ...metrics import (
    CLOSED_FORMS,
    NonFiniteActivationError,
    isometry_strength,
    isometry_strength_closed_form,
)
from . import strengths_summaries

Config = Mapping[str, Any]


def _closed_form(activation: str, gain: float) -> float:
    return isometry_strength_closed_form(activation, gain) if activation in CLOSED_FORMS else np.nan


def _quadrature(activation: str, gain: float) -> float:
    """β by quadrature, or NaN where σ(α·x) overflows float64 at the nodes (exp at α ≳ 8; joudaki2023-figb1 [I])."""
    try:
        return isometry_strength(activation, "quadrature", gain=gain)
    except NonFiniteActivationError:
        return np.nan


def _strength_rows(activations: list[str], gains: list[float], cfg: Config) -> pd.DataFrame:
    rows = []
    for activation in activations:
        for gain in gains:
            rows.append({
                "activation": activation,
                "gain": float(gain),
                "closed_form": _closed_form(activation, gain),
                "quadrature": _quadrature(activation, gain),
                "monte_carlo": isometry_strength(
                    activation, "monte_carlo", n_samples=cfg["monte_carlo_samples"], seed=cfg["seed"], gain=gain
                ),
                "monte_carlo_samples": cfg["monte_carlo_samples"],
            })
    frame = pd.DataFrame(rows)
    # The value shown in tables and legends: exact where a closed form exists, quadrature otherwise (D8).
    frame["beta"] = frame.closed_form.fillna(frame.quadrature)
    return frame


def gain_values(gains: Sequence[float] | Mapping[str, float]) -> list[float]:
    """The gains α of an item: a list as given (Table 2: [1], Table B.1: its printed α), or a range
    ``{start, stop, step}`` read as the original's ``torch.arange(start, stop, step)`` (Fig. B.1)."""
    if not isinstance(gains, Mapping):
        return [float(g) for g in gains]
    start, stop, step = gains["start"], gains["stop"], gains["step"]
    # Integer steps avoid arange's float drift (0.1 * 3 != 0.3), so the printed α values are hit exactly.
    return [round(start + i * step, 10) for i in range(int(round((stop - start) / step)))]


def isometry_strengths(cfg: Config) -> pd.DataFrame:
    """joudaki2023-table2, joudaki2023-tableb1, joudaki2023-figb1 (:data:`STRENGTH_ITEMS`, one job
    each): β of every activation at every gain of the item, by all three estimators; one row per (activation,
    gain)."""
    return _strength_rows(list(cfg["activations"]), gain_values(cfg["gains"]), cfg)


def _strengths(item: str) -> dict[str, Results]:
    return {item: Results("strengths/{item}.parquet", item=(item,))}  # one job per item, one rule for all


# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/joudaki2023.md heads it, its job, the results it reads (their files) and its claims.
ITEMS = (  # β in closed form, by quadrature and by Monte Carlo: one job per item
    Item("joudaki2023-table2", "Closed-form isometry strengths", "simulation", isometry_strengths,
         _strengths("table2"), strengths_summaries.claims),
    Item("joudaki2023-tableb1", "β as a function of the gain α", "simulation", isometry_strengths,
         _strengths("tableb1"), strengths_summaries.claims),
    Item("joudaki2023-figb1", "β vs the gain α", "simulation", isometry_strengths, _strengths("figb1"),
         strengths_summaries.claims),
)
# The items isometry_strengths serves, by result key (its config section; one job each).
STRENGTH_ITEMS = results_of(ITEMS, isometry_strengths)
