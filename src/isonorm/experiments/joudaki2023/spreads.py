"""Seed spreads of joudaki2023's claims (docs/decisions/joudaki2023.md, "Seed spreads"): a quantity of a figure's
mean curve, measured again on each run's (or each block of runs') own curve; the spread of those values is the
claim's seed spread (``verdicts.claims.spread_over_runs``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from ...verdicts.claims import Measured, spread_over_runs

Reducer = Callable[[pd.DataFrame], dict[str, float]]
"""A figure's reduction: its results (rows with a ``run`` column) -> {quantity: value}."""


def per_block(reduce: Reducer, frame: pd.DataFrame, block_runs: int = 1) -> dict[str, list[float]]:
    """``reduce`` applied to each block of ``block_runs`` consecutive run indices (each run alone by default),
    quantity -> one value per complete block: a quantity of a mean curve measured on each run's (or block's)
    own curve. An incomplete last block is dropped."""
    unit = frame.run // block_runs
    sizes = frame.groupby(unit).run.nunique()
    values = [reduce(part) for block, part in frame.groupby(unit) if sizes[block] == block_runs]
    return {name: [v.get(name, math.nan) for v in values] for name in (values[0] if values else {})}


def measured_with_spread(reduce: Reducer, frame: pd.DataFrame, block_runs: int = 1) -> dict[str, Measured]:
    """Each quantity of ``reduce`` on the plotted (all-run) curves, with its seed spread: the 95 % half-width
    over the same quantity measured per run, or per block of ``block_runs`` runs where a reading pools many."""
    value = reduce(frame)
    units = per_block(reduce, frame, block_runs)
    return {name: Measured(float(v), spread_over_runs(units.get(name, [])), _finite(units.get(name, [])))
            for name, v in value.items()}


def _finite(values: list[float]) -> float:
    """How many runs (or blocks) the spread was taken over: the claims' ``runs``."""
    return float(sum(1 for v in values if math.isfinite(v)))
