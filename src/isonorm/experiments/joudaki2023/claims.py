"""The checkable quantities of Joudaki, Daneshmand, Bach (2023), measured from this run's results.

``measure`` returns one row per (item, quantity); notebooks/reference/joudaki2023.yaml holds what the paper
printed for the same keys and the scoreboard compares the two. Nothing here reads the reference. Each part of
the paper reduces its own results (``*_summaries.claims``); the β tables are reduced here.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from ...report.claims import measure_parts
from ...results import read_all_results
from . import SLUG, STRENGTH_ITEMS, gpt2_summaries, image_mlp_summaries, simulation_summaries

Results = Mapping[str, Sequence[str]]
Claims = dict[str, dict[str, float]]


def gain_label(gain: float) -> str:
    """``0.5`` -> ``a0.5``, ``1.0`` -> ``a1``: the gain part of a β quantity's name."""
    return f"a{gain:g}"


def strength_claims(results: Results, config: Mapping[str, Any]) -> Claims:
    """β by quadrature (the computed check of the printed closed forms) per activation and gain."""
    out: Claims = {}
    for item in STRENGTH_ITEMS:
        if not results.get(item):
            continue
        frame = read_all_results(results[item])
        if item == "figb1":  # the printed rows of the Fig. B.1 table (D-FigB1)
            frame = frame[frame.gain.round(6).isin([round(g, 6) for g in config["figb1"]["compared_gains"]])]
        # Quadrature, falling back to the closed form where σ(αx) overflows at the nodes.
        value = frame.quadrature.fillna(frame.closed_form)
        out[item] = {
            f"beta_{row.activation}_{gain_label(row.gain)}": v for row, v in zip(frame.itertuples(), value)
        }
        if item != "figb1":
            exact = frame.dropna(subset=["closed_form", "quadrature"])
            out[item]["closed_form_equals_quadrature"] = float(
                ((exact.closed_form - exact.quadrature).abs() < 1e-9).all()
            )
    return out


PARTS: tuple[Callable[[Results, Mapping[str, Any]], Claims], ...] = (
    strength_claims,
    simulation_summaries.claims,
    image_mlp_summaries.claims,
    gpt2_summaries.claims,
)


def measure(results: Results, config: Mapping[str, Any]) -> pd.DataFrame:
    """All quantities computable from the ``results`` files present (result key -> Parquet paths)."""
    return measure_parts(SLUG, PARTS, results, config)
