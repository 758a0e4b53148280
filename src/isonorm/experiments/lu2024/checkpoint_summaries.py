"""Reductions of the Table 5 (b)/(c) results, shared by the notebook and the claims (lu2024-table5 (b), lu2024-table5 (c)).

The rows of ``checkpoint_pii.table5_checkpoints`` (result keys ``table5_plms`` / ``table5_llms``; one per model,
matrix and orientation) become the paper's table rows: model, Query, Keys, Values, Atten_Output, Linear_1, Linear_2, each cell in the
orientation the table uses (decision A1). The T5 decoder's FFN cells stay empty ("-", as published); its real
values (``layer.2.DenseReluDense``) are a supplementary table.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...results import read_all_results
from .checkpoint_pii import CELLS

RESULT_KEYS = ("table5_plms", "table5_llms")  # rules/lu2024 results entries of this part


def table5_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 5 rows: model (the paper's row label), Query, Keys, Values, Atten_Output, Linear_1, Linear_2.

    Each cell is the PII in the table's orientation; a cell the paper leaves empty (T5/Decoder FFN) is NaN.
    Rows keep the order of the results (the configured model order).
    """
    used = frame[frame["orientation"] == frame["table_orientation"]].copy()
    used.loc[~used["in_table"].astype(bool), "pii"] = np.nan
    table = used.pivot_table(index="row_label", columns="cell", values="pii", sort=False, dropna=False)
    table = table.reindex(columns=list(CELLS)).reindex(pd.unique(used["row_label"]))
    return table.reset_index().rename(columns={"row_label": "model"}).rename_axis(columns=None)


def both_orientations(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell in both orientations (decision A1: always store both): model, cell, columns, rows, used."""
    wide = frame.pivot_table(index=["row_label", "cell"], columns="orientation", values="pii", sort=False)
    used = frame.drop_duplicates(["row_label", "cell"]).set_index(["row_label", "cell"])["table_orientation"]
    return wide.join(used.rename("table_uses")).reset_index().rename(columns={"row_label": "model"})


def t5_decoder_ffn(frame: pd.DataFrame) -> pd.DataFrame:
    """The supplementary T5 decoder FFN row (layer.2.DenseReluDense wi/wo) the paper shows as "-"."""
    extra = frame[~frame["in_table"].astype(bool) & (frame["orientation"] == frame["table_orientation"])]
    return extra.pivot_table(index="row_label", columns="cell", values="pii", sort=False).reset_index().rename(
        columns={"row_label": "model"}).rename_axis(columns=None)


def quantity(label: str, cell: str) -> str:
    """Reference quantity name of one cell, e.g. ("T5/Encoder", "Linear_1") → pii_t5_encoder_linear_1."""
    return "pii_" + re.sub(r"[^a-z0-9]+", "_", f"{label} {cell}".lower()).strip("_")


def _cells(rows: pd.DataFrame) -> dict[str, float]:
    return {quantity(r["model"], c): float(r[c]) for _, r in rows.iterrows() for c in CELLS if not pd.isna(r[c])}


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """{"lu2024-table5": {quantity: value}} for this part's lines of notebooks/reference/lu2024.yaml: parts (b)
    and (c) of the item's claims (``table5_summaries.claims``).

    Cells: ``pii_<row>_<cell>``. The paper's two statements as numbers [paper §4.4]: ``plm_pii_max``, the largest
    PLM cell ("all of their PIIs are close to zero"), and ``llm_over_plm_mean_pii``, the mean LLM cell over the mean
    PLM cell ("smaller than those of PLMs": below 1). Weights only, no seeds: no seed spread. A missing result key
    is skipped.
    """
    out: dict[str, float] = {}
    rows = {key: table5_rows(read_all_results(results[key])) for key in RESULT_KEYS if results.get(key)}
    for table in rows.values():
        out.update(_cells(table))
    cells = {key: table[list(CELLS)].to_numpy(dtype=float) for key, table in rows.items()}
    if "table5_plms" in cells:
        out["plm_pii_max"] = float(np.nanmax(cells["table5_plms"]))
    if set(cells) == set(RESULT_KEYS):
        out["llm_over_plm_mean_pii"] = float(np.nanmean(cells["table5_llms"]) / np.nanmean(cells["table5_plms"]))
    return {"lu2024-table5": out} if out else {}
