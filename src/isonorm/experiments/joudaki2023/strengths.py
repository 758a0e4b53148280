"""Tables 2 and B.1 and Fig. B.1: the isometry strength β_σ in closed form, by quadrature and by Monte Carlo.

Spec joudaki2023 D-Table2, D-TableB1, D-FigB1 and decision D8: closed forms and exact quadrature are the
primary values; the originals' (here seeded) Monte Carlo estimate is kept beside them to show where the
printed digits come from. β of σ(α·x) uses the library's estimators (``isonorm.metrics.hermite``); nothing
here integrates on its own.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ...metrics import (
    CLOSED_FORMS,
    NonFiniteActivationError,
    isometry_strength,
    isometry_strength_closed_form,
)

Config = Mapping[str, Any]


def _closed_form(activation: str, gain: float) -> float:
    return isometry_strength_closed_form(activation, gain) if activation in CLOSED_FORMS else np.nan


def _quadrature(activation: str, gain: float) -> float:
    """β by quadrature, or NaN where σ(α·x) overflows float64 at the nodes (exp at α ≳ 8; spec D-FigB1 [I])."""
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


def table2(cfg: Config) -> pd.DataFrame:
    """Table 2: β of He1, He2, sin, exp(x − 2), step and ReLU at gain 1, by all three estimators."""
    return _strength_rows(list(cfg["activations"]), [1.0], cfg)


def tableb1(cfg: Config) -> pd.DataFrame:
    """Table B.1: β of sin(αx), exp(αx) and max(αx, 0) at the printed gains α."""
    return _strength_rows(list(cfg["activations"]), list(cfg["gains"]), cfg)


def figb1(cfg: Config) -> pd.DataFrame:
    """Fig. B.1: β(α) for α = start, start + step, … < stop (the original's torch.arange(0.1, 10, 0.1))."""
    start, stop, step = cfg["gains"]["start"], cfg["gains"]["stop"], cfg["gains"]["step"]
    # Integer steps avoid arange's float drift (0.1 * 3 != 0.3), so the printed α values are hit exactly.
    gains = [round(start + i * step, 10) for i in range(int(round((stop - start) / step)))]
    return _strength_rows(list(cfg["activations"]), gains, cfg)
