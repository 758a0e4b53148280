"""Reductions of the Table-5 Transformer run (``wikitext_transformer.table5_transformer``), shared by the
notebook and the claims.

The paper's row is PII_col (decision A1) of the six matrices of the LAST encoder layer (lu2024-table5-transformer: "report PII_col
of the 6 matrices of the last layer"; the paper's reason for the high Linear_2 value is that layer's missing
residual + LayerNorm) after the last epoch; with several seeds the row is their mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...verdicts.claims import Measured, measured_over_runs
from ...results import read_all_results

RESULT_KEY = "table5_transformer"  # key of the results dict (rules: lu2024 results function)
ITEM = "lu2024-table5"  # the item whose part (a) this row is
COLUMNS = ("Query", "Keys", "Values", "Atten_Output", "Linear_1", "Linear_2")  # Table 5's column order
ORIENTATION = "columns"  # decision A1: PII_col for the Transformer row
QUANTITY_PREFIX = "transformer_"  # this row's quantities inside the shared lu2024-table5 item


def _pii(frame: pd.DataFrame) -> pd.DataFrame:
    sub = frame[frame["metric"] == "pii"]
    if sub.empty:
        raise ValueError("no PII rows in the Table-5 Transformer results (metric == 'pii'); rerun the rule")
    return sub


def last_epoch(frame: pd.DataFrame) -> int:
    return int(frame["epoch"].max())


def pii_by_seed(frame: pd.DataFrame, layer: int | None = None, epoch: int | None = None,
                orientation: str = ORIENTATION) -> pd.DataFrame:
    """Seeds × the six matrices: PII of ``layer`` (None: the last) at ``epoch`` (None: the last)."""
    sub = _pii(frame)
    layer = int(sub["layer"].max()) if layer is None else int(layer)
    epoch = last_epoch(sub) if epoch is None else int(epoch)
    sub = sub[(sub["layer"] == layer) & (sub["epoch"] == epoch) & (sub["orientation"] == orientation)]
    if sub.empty:
        raise ValueError(f"no PII rows for layer {layer}, epoch {epoch}, orientation {orientation!r}")
    return sub.pivot_table(index="seed", columns="matrix", values="value").reindex(columns=list(COLUMNS))


def model_label(frame: pd.DataFrame) -> str:
    """``Transformer (6 layers, wikitext2)``: the row label, from the run's own settings."""
    return f"Transformer ({int(frame['n_layers'].iloc[0])} layers, {frame['corpus'].iloc[0]})"


def table5_row(frame: pd.DataFrame, layer: int | None = None, epoch: int | None = None,
               orientation: str = ORIENTATION) -> pd.DataFrame:
    """The Transformer row of Table 5: one row, columns model, Query, Keys, Values, Atten_Output, Linear_1,
    Linear_2 (mean over seeds), for the assembled Table 5."""
    means = pii_by_seed(frame, layer, epoch, orientation).mean()
    return pd.DataFrame([{"model": model_label(frame), **{c: float(means[c]) for c in COLUMNS}}])


def pii_trajectory(frame: pd.DataFrame, layer: int | None = None, orientation: str = ORIENTATION) -> pd.DataFrame:
    """PII per (epoch, matrix, seed) of one layer (None: the last), for the training-course figure."""
    sub = _pii(frame)
    layer = int(sub["layer"].max()) if layer is None else int(layer)
    sub = sub[(sub["layer"] == layer) & (sub["orientation"] == orientation)]
    return sub[["seed", "epoch", "matrix", "value"]].reset_index(drop=True)


def all_layers(frame: pd.DataFrame, epoch: int | None = None, orientation: str = ORIENTATION) -> pd.DataFrame:
    """Layers × matrices, mean over seeds at ``epoch`` (None: the last): the supplementary all-layer table."""
    sub = _pii(frame)
    epoch = last_epoch(sub) if epoch is None else int(epoch)
    sub = sub[(sub["epoch"] == epoch) & (sub["orientation"] == orientation)]
    table = sub.pivot_table(index="layer", columns="matrix", values="value", aggfunc="mean")
    return table.reindex(columns=list(COLUMNS))


def validation_perplexity(frame: pd.DataFrame) -> pd.DataFrame:
    """Validation perplexity per (seed, epoch)."""
    sub = frame[frame["metric"] == "val_ppl"]
    return sub[["seed", "epoch", "value"]].rename(columns={"value": "val_ppl"}).reset_index(drop=True)


def linear_2_margin(by_seed: pd.DataFrame) -> pd.Series:
    """Per seed, the last layer's Linear_2 PII minus the largest of the other five: the paper's claim (Linear_2 is
    the highest of the row) as a number, positive when it holds (docs/decisions/lu2024.md, "Tolerances")."""
    return by_seed["Linear_2"] - by_seed.drop(columns="Linear_2").max(axis=1)


def quantity(column: str) -> str:
    """``Atten_Output`` -> ``transformer_atten_output``: a quantity name of the reference file."""
    return QUANTITY_PREFIX + column.lower()


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, float | Measured]]:
    """lu2024-table5 quantities of the Transformer row (the keys of notebooks/reference/lu2024.yaml), each the mean
    over seeds with its seed spread: part (a) of the item's claims (``table5_summaries.claims``)."""
    files = results.get(RESULT_KEY)
    if not files:
        return {}
    by_seed = pii_by_seed(read_all_results(files))
    out: dict[str, float | Measured] = {quantity(c): measured_over_runs(by_seed[c].to_numpy()) for c in COLUMNS}
    out[QUANTITY_PREFIX + "linear_2_margin"] = measured_over_runs(linear_2_margin(by_seed).to_numpy())
    return {ITEM: out}
