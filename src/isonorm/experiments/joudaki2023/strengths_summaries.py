"""The checkable quantities of Tables 2, B.1 and Fig. B.1 (``strengths.isometry_strengths``), as the scoreboard
reads them: β by quadrature per activation and gain."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...results import read_all_results

Config = Mapping[str, Any]
# item id -> the result key that feeds it (strengths.ITEMS)
CLAIMED = {"joudaki2023-table2": "table2", "joudaki2023-tableb1": "tableb1", "joudaki2023-figb1": "figb1"}


def gain_label(gain: float) -> str:
    """``0.5`` -> ``a0.5``, ``1.0`` -> ``a1``: the gain part of a β quantity's name."""
    return f"a{gain:g}"


def claims(results: Mapping[str, Sequence[str]], config: Config) -> dict[str, dict[str, float]]:
    """Tables 2, B.1 and Fig. B.1 as the scoreboard reads them: β by quadrature (the computed check of the printed
    closed forms) per activation and gain, by item id (:data:`CLAIMED`)."""
    out: dict[str, dict[str, float]] = {}
    for item, key in CLAIMED.items():
        if not results.get(key):
            continue
        frame = read_all_results(results[key])
        if item == "joudaki2023-figb1":  # the printed rows of the Fig. B.1 table
            frame = frame[frame.gain.round(6).isin([round(g, 6) for g in config["figb1"]["compared_gains"]])]
        # Quadrature, falling back to the closed form where σ(αx) overflows at the nodes.
        value = frame.quadrature.fillna(frame.closed_form)
        out[item] = {
            f"beta_{row.activation}_{gain_label(row.gain)}": v for row, v in zip(frame.itertuples(), value)
        }
        if item != "joudaki2023-figb1":
            exact = frame.dropna(subset=["closed_form", "quadrature"])
            out[item]["closed_form_equals_quadrature"] = float(
                ((exact.closed_form - exact.quadrature).abs() < 1e-9).all()
            )
    return out
