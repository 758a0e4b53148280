"""Reductions of the Table 5 (d) LoRA results, shared by the notebook and the claims.

Input: the frames written by :func:`isonorm.experiments.lu2024.lora.table5_lora` (one file per seed). The table
cells are PII_col (decision A1); seeds are averaged (the paper has one run, seed 42).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...results import read_all_results
from .lora import TABLE_COLUMNS

RESULT_KEY = "table5_lora"  # the key of this part's files in the paper's results dict
ROW_LABELS = {"before": "Qwen (before LoRA)", "after": "LoRA (Qwen after LoRA merge)"}  # paper Table 5 rows
# The paper's qualitative reading (decision A13): a LoRA merge moves PII by at most about 0.01 per matrix.
CHANGE_BOUND = 0.01


def pii_table(frame: pd.DataFrame, orientation: str = "columns") -> pd.DataFrame:
    """Rows "Qwen (before LoRA)" and "LoRA (...)", columns Query ... Linear_2: PII, mean over seeds."""
    part = frame[(frame.metric == "pii") & (frame.orientation == orientation)]
    table = part.groupby(["stage", "matrix"]).value.mean().unstack("matrix")
    table = table.reindex(index=list(ROW_LABELS), columns=list(TABLE_COLUMNS))
    return table.rename(index=ROW_LABELS).rename_axis(index="Model", columns=None)


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


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Quantities of notebooks/reference/lu2024.yaml for Table 5 (d), under item suffix ``table5``.

    ``lora_<matrix>``: PII_col after the merge; ``lora_base_<matrix>``: before (the Qwen row, measured in the same
    job); ``lora_change_<matrix>``: after − before; ``lora_max_abs_pii_change``: the largest |change|;
    ``lora_max_pii_after``: the largest PII_col after the merge; ``lora_pii_changes_within_0.01``: 1.0 when every
    |change| ≤ 0.01 (decision A13). ``cfg`` is not needed (kept for the common signature).
    """
    paths = results.get(RESULT_KEY)
    if not paths:
        return {}
    frame = read_all_results(paths)
    table = pii_table(frame)
    before, after = table.loc[ROW_LABELS["before"]], table.loc[ROW_LABELS["after"]]
    change = after - before
    out: dict[str, float] = {}
    for column in TABLE_COLUMNS:
        out[f"lora_{quantity(column)}"] = float(after[column])
        out[f"lora_base_{quantity(column)}"] = float(before[column])
        out[f"lora_change_{quantity(column)}"] = float(change[column])
    out["lora_max_abs_pii_change"] = float(change.abs().max())
    out["lora_max_pii_after"] = float(after.max())
    out["lora_pii_changes_within_0.01"] = float((change.abs() <= CHANGE_BOUND).all())
    return {"table5": out}
