"""``results/<slug>/claims.parquet``: the checkable quantities a paper's run produced (architecture §7).

Columns ``item`` (e.g. ``daneshmand2021-fig2b``), ``quantity`` (short key, e.g. ``slope_caption``), ``value``
(float; a boolean claim as 1.0/0.0; NaN when it could not be computed), ``spread`` (the value's own seed spread:
the half-width of a 95 % confidence interval over the runs the item makes, or over blocks of runs where the paper
averages many; NaN where the value has no seed spread: a closed form, a quadrature, a single deterministic run),
``runs`` (how many runs or blocks the spread was taken over; NaN for a value with no seed spread, 1 for a single
stochastic run, whose verdict is then ``inconclusive``: docs/decisions/README.md, "Verdicts") and ``note`` (free text, e.g. how the value was obtained). The scoreboard matches them to ``notebooks/reference/<slug>.yaml`` by
``(item, quantity)``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..results import read_results, write_results
from .ids import check_item_id

CLAIM_COLUMNS = ("item", "quantity", "value", "spread", "runs", "note")


class Measured(NamedTuple):
    """A claim's value with its seed spread (see the module docstring); a part may return it for any quantity
    instead of a bare float, which has no spread."""

    value: float
    spread: float = math.nan
    runs: float = math.nan


def as_text(values: pd.Series) -> pd.Series:
    """``values`` as strings, a missing value as "". A column whose every cell is missing reads as float NaN, which
    pandas will no longer fill with a string (its Pandas4Warning), so the values become objects first."""
    return values.astype(object).where(values.notna(), "").astype(str)


def validate_claims(frame: pd.DataFrame, source: str | Path, slug: str | None = None) -> pd.DataFrame:
    """``frame`` with ``value`` as float, or a ValueError naming ``source`` and the offending rows."""
    for column in ("spread", "runs"):  # claims written before the column existed: not known
        if column not in frame.columns:
            frame = frame.assign(**{column: math.nan})
    missing = [c for c in CLAIM_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{source}: claims need columns {list(CLAIM_COLUMNS)}; missing {missing}")
    frame = frame.loc[:, list(CLAIM_COLUMNS)].copy()
    for i, item in enumerate(frame["item"]):
        try:
            check_item_id(item, slug)
        except ValueError as err:
            raise ValueError(f"{source}, row {i}: {err}") from None
    try:
        frame["value"] = frame["value"].astype(float)
        frame["spread"] = frame["spread"].astype(float)
        frame["runs"] = frame["runs"].astype(float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{source}: columns `value` and `spread` must be numeric (booleans as 1.0/0.0): {err}") from None
    negative = frame[frame["spread"] < 0]
    if not negative.empty:
        raise ValueError(f"{source}: a seed spread is a half-width, >= 0; negative for "
                         f"{list(zip(negative['item'], negative['quantity']))}")
    frame["note"] = as_text(frame["note"])
    duplicated = frame[frame.duplicated(["item", "quantity"], keep=False)]
    if not duplicated.empty:
        pairs = sorted(set(zip(duplicated["item"], duplicated["quantity"])))
        raise ValueError(f"{source}: (item, quantity) produced more than once: {pairs}; emit each once")
    return frame.reset_index(drop=True)


def write_claims(
    frame: pd.DataFrame, path: str | Path, slug: str, config: Mapping[str, Any] | None = None
) -> Path:
    """Validate and write a paper's claims atomically, with provenance (results.write_results)."""
    return write_results(validate_claims(frame, path, slug), path, config=config)


def read_claims(path: str | Path) -> pd.DataFrame:
    return validate_claims(read_results(path), path)


# A paper's part: (result key -> Parquet paths, the paper's config) -> {item id: {quantity: value}}, a value
# being a float (no seed spread) or a ``Measured`` (value and spread).
ClaimPart = Callable[[Mapping[str, Sequence[str]], Mapping[str, Any]], Mapping[str, Mapping[str, "float | Measured"]]]


def spread_over_runs(values: Sequence[float] | np.ndarray) -> float:
    """The half-width of the 95 % confidence interval of the mean of ``values`` (one per run, or per block of
    runs): Student's t_{0.975, n-1} · sd / √n over the finite values; NaN with fewer than two (docs/decisions/
    README.md, "Verdicts")."""
    from scipy import stats  # here, not at the top: every Snakemake process imports this module to parse the rules

    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size < 2:
        return math.nan
    return float(stats.t.ppf(0.975, finite.size - 1) * finite.std(ddof=1) / math.sqrt(finite.size))


def measured_over_runs(values: Sequence[float] | np.ndarray) -> Measured:
    """The mean of per-run (or per-block) values with its seed spread (``spread_over_runs``)."""
    values = np.asarray(values, dtype=float)
    runs = int(np.isfinite(values).sum())
    return Measured(float(np.mean(values)) if values.size else math.nan, spread_over_runs(values), float(runs))


def blocks(values: Sequence[float] | np.ndarray, count: int) -> np.ndarray:
    """``values`` (one per run, in run order) cut into ``count`` consecutive blocks of equal size, each averaged:
    the unit of the spread where the paper averages many runs (a remainder that fills no block is dropped)."""
    values = np.asarray(values, dtype=float)
    size = values.size // count
    if size < 1:
        raise ValueError(f"{values.size} runs cannot make {count} blocks")
    return values[: size * count].reshape(count, size).mean(axis=1)


def _measured(value: "float | Measured") -> Measured:
    return value if isinstance(value, Measured) else Measured(float(value))


def measure_parts(
    slug: str, parts: Sequence[ClaimPart], results: Mapping[str, Sequence[str]], config: Mapping[str, Any]
) -> pd.DataFrame:
    """The claims frame of a paper whose parts each reduce their own results (``*_summaries.claims``).

    Parts key their quantities by the item's full id (``"meterez2024-fig1"``), as every place an item lives does
    (docs/adding.md); an id of another paper, or not an id, is an error in :func:`validate_claims`. Parts may
    contribute to the same item (e.g. the rows of one table); a quantity given twice is an error there too, never
    silently overwritten.
    """
    rows = [
        {"item": item, "quantity": quantity, "value": float(measured.value),
         "spread": float(measured.spread), "runs": float(measured.runs), "note": ""}
        for part in parts
        for item, quantities in part(results, config).items()
        for quantity, measured in ((q, _measured(v)) for q, v in quantities.items())
    ]
    return validate_claims(pd.DataFrame(rows, columns=list(CLAIM_COLUMNS)), f"claims of {slug}", slug)
