"""``results/<slug>/claims.parquet``: the checkable quantities a paper's run produced (DESIGN 7).

Columns ``item`` (e.g. ``daneshmand2021-fig2b``), ``quantity`` (short key, e.g. ``slope_caption``), ``value``
(float; a boolean claim as 1.0/0.0; NaN when it could not be computed) and ``note`` (free text, e.g. how
the value was obtained). The scoreboard matches them to ``notebooks/reference/<slug>.yaml`` by
``(item, quantity)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..results import read_results, write_results
from .ids import check_item_id

CLAIM_COLUMNS = ("item", "quantity", "value", "note")


def validate_claims(frame: pd.DataFrame, source: str | Path, slug: str | None = None) -> pd.DataFrame:
    """``frame`` with ``value`` as float, or a ValueError naming ``source`` and the offending rows."""
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
    except (TypeError, ValueError) as err:
        raise ValueError(f"{source}: column `value` must be numeric (booleans as 1.0/0.0): {err}") from None
    frame["note"] = frame["note"].fillna("").astype(str)
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
