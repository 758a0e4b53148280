"""Reductions of the Table 5 (d) LoRA results, shared by the notebook and the claims.

Input: the frames written by :func:`isonorm.experiments.lu2024.lora.table5_lora` (one file per seed). The table
cells are PII_col (decision A1); seeds are averaged (the paper has one run, seed 42).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...verdicts.claims import Measured, measured_over_runs
from ...results import read_all_results
from .lora import TABLE_COLUMNS

RESULT_KEY = "table5_lora"  # the key of this part's files in the paper's results dict
ROW_LABELS = {"before": "Qwen (before LoRA)", "after": "LoRA (Qwen after LoRA merge)"}  # paper Table 5 rows


def pii_table(frame: pd.DataFrame, orientation: str = "columns") -> pd.DataFrame:
    """Rows "Qwen (before LoRA)" and "LoRA (...)", columns Query ... Linear_2: PII, mean over seeds."""
    part = frame[(frame.metric == "pii") & (frame.orientation == orientation)]
    table = part.groupby(["stage", "matrix"]).value.mean().unstack("matrix")
    table = table.reindex(index=list(ROW_LABELS), columns=list(TABLE_COLUMNS))
    return table.rename(index=ROW_LABELS).rename_axis(index="Model", columns=None)


def table5_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The LoRA rows of the assembled Table 5: ``pii_table``'s two rows and their change per matrix, with the
    row label as column "Model"."""
    rows = pii_table(frame)
    rows.loc["change (LoRA − Qwen)"] = rows.iloc[1] - rows.iloc[0]
    return rows.reset_index()


def pii_changes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per matrix: PII_col before/after and their difference, PII_row difference, and how much W moved."""
    pii = frame[frame.metric == "pii"].groupby(["matrix", "orientation", "stage"]).value.mean().unstack("stage")
    cols, rows = pii.xs("columns", level="orientation"), pii.xs("rows", level="orientation")
    delta = frame[frame.stage == "delta"].groupby(["matrix", "metric"]).value.mean().unstack("metric")
    out = pd.DataFrame({
        "PII_col before": cols["before"], "PII_col after": cols["after"],
        "PII_col change": cols["after"] - cols["before"],
        "PII_row change": rows["after"] - rows["before"],
    }).join(delta[["relative_change", "max_abs_change", "changed_fraction"]])
    return out.reindex(list(TABLE_COLUMNS)).rename_axis("matrix")


def training_curve(frame: pd.DataFrame) -> pd.DataFrame:
    """Loss per optimizer step and seed."""
    return frame[frame.metric == "loss"][["seed", "step", "value"]].rename(columns={"value": "loss"})


def quantity(column: str) -> str:
    """``Atten_Output`` -> ``atten_output``: the column's part of a quantity name."""
    return column.lower()


def pii_by_seed(frame: pd.DataFrame, orientation: str = "columns") -> pd.DataFrame:
    """Seeds × (stage, matrix): PII of each seed's run before and after the merge (the unit of the seed spread)."""
    part = frame[(frame.metric == "pii") & (frame.orientation == orientation)]
    return part.pivot_table(index="seed", columns=["stage", "matrix"], values="value", aggfunc="mean")


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, float | Measured]]:
    """Quantities of notebooks/reference/lu2024.yaml for Table 5 (d), under item id ``lu2024-table5``: part (d)
    of the item's claims (``table5_summaries.claims``).

    ``lora_<matrix>``: PII_col after the merge; ``lora_base_<matrix>``: before (the Qwen row, measured in the same
    job); ``lora_change_<matrix>``: after − before; ``lora_max_abs_pii_change``: the largest |change|;
    ``lora_max_pii_after``: the largest PII_col after the merge. Each is the mean over seeds with its seed spread,
    relations taken per seed. ``cfg`` is not needed (kept for the common signature).
    """
    paths = results.get(RESULT_KEY)
    if not paths:
        return {}
    by_seed = pii_by_seed(read_all_results(paths))
    before, after = by_seed["before"][list(TABLE_COLUMNS)], by_seed["after"][list(TABLE_COLUMNS)]
    change = after - before
    out: dict[str, float | Measured] = {}
    for column in TABLE_COLUMNS:
        out[f"lora_{quantity(column)}"] = measured_over_runs(after[column].to_numpy())
        out[f"lora_base_{quantity(column)}"] = measured_over_runs(before[column].to_numpy())
        out[f"lora_change_{quantity(column)}"] = measured_over_runs(change[column].to_numpy())
    out["lora_max_abs_pii_change"] = measured_over_runs(change.abs().max(axis=1).to_numpy())
    out["lora_max_pii_after"] = measured_over_runs(after.max(axis=1).to_numpy())
    return {"lu2024-table5": out}
