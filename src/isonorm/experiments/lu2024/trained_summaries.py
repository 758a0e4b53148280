"""Reductions of the trained-network results (Tables 1–4, App. Tables 1–4, Figs. 1–2) for notebook and claims.

Inputs are the tidy frames of :mod:`.trained_nets` (one row per seed, epoch, metric, layer, orientation) and
the weights frames of the Table-3 FNN jobs. Table cells are means over the config's ``seeds`` (the paper has
one run, seed 42); "init" is epoch 0, "trained" the last epoch. PII is read in the ``columns`` orientation
(decision A1). Nothing here reads the paper's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from ...metrics import cosine_similarity_matrix, pii
from ...results import read_all_results

Results = Mapping[str, Sequence[str]]
Claims = dict[str, dict[str, float]]
ORIENTATION = "columns"  # decision A1: the tables report PII over column vectors

# Which result key feeds which item (rules/common.smk's lu2024 results function uses these keys).
OPTIMIZER_ITEMS = ("table1", "table2", "apptable2")  # rows = optimizers, columns = Layer_1..3
VARIANT_ITEMS = ("table3", "table4", "apptable3")  # rows = activation/optimizer, columns = variants


def last_epoch(frame: pd.DataFrame) -> int:
    return int(frame.epoch.max())


def _mean(frame: pd.DataFrame, **where: Any) -> float:
    mask = pd.Series(True, index=frame.index)
    for key, value in where.items():
        mask &= frame[key] == value
    values = frame.loc[mask, "value"].dropna()
    return float(values.mean()) if len(values) else math.nan


def pii_value(frame: pd.DataFrame, layer: str, epoch: int, orientation: str = ORIENTATION, **where: Any) -> float:
    """Mean PII over seeds of ``layer`` at ``epoch`` in the rows selected by ``where``."""
    return _mean(frame, metric="pii", layer=layer, orientation=orientation, epoch=epoch, **where)


def accuracy_value(frame: pd.DataFrame, metric: str = "test_accuracy", **where: Any) -> float:
    """Mean accuracy (%) over seeds after the last epoch."""
    return _mean(frame, metric=metric, epoch=last_epoch(frame), **where)


def optimizer_table(frame: pd.DataFrame, layers: Mapping[str, str], optimizers: Sequence[str],
                    with_accuracy: bool = True) -> pd.DataFrame:
    """Tables 1, 2, App. 2: one row per optimizer; per column label "init/trained" PII and the accuracy."""
    rows = []
    end = last_epoch(frame)
    for optimizer in optimizers:
        part = frame[frame.optimizer == optimizer]
        if part.empty:
            continue
        row: dict[str, Any] = {"Optimizer": optimizer}
        for label, layer in layers.items():
            row[f"PII {label} init"] = pii_value(part, layer, 0)
            row[f"PII {label} trained"] = pii_value(part, layer, end)
        if with_accuracy:
            row["ACC %"] = accuracy_value(part)
        rows.append(row)
    return pd.DataFrame(rows)


def variant_table(frame: pd.DataFrame, layer: str, combos: Sequence[tuple[str, str]],
                  variants: Sequence[str] = ("original", "norm_res"),
                  accuracies: Sequence[str] = ("test_accuracy",)) -> pd.DataFrame:
    """Tables 3, 4, App. 3: one row per (activation, optimizer); PII of ``layer`` and accuracies per variant."""
    rows = []
    end = last_epoch(frame)
    for activation, optimizer in combos:
        part = frame[(frame.activation == activation) & (frame.optimizer == optimizer)]
        if part.empty:
            continue
        row: dict[str, Any] = {"Function/Optimizer": f"{activation}/{optimizer}"}
        for variant in variants:
            row[f"PII {variant}"] = pii_value(part, layer, end, variant=variant)
        for metric in accuracies:
            for variant in variants:
                row[f"{metric} % {variant}"] = accuracy_value(part, metric, variant=variant)
        rows.append(row)
    return pd.DataFrame(rows)


def layer_profile(frame: pd.DataFrame, layers: Sequence[str], variants: Sequence[str]) -> pd.DataFrame:
    """App. Table 4: trained PII_col of ``layers`` (columns) per variant (rows)."""
    end = last_epoch(frame)
    return pd.DataFrame([
        {"Variant": variant, **{layer: pii_value(frame, layer, end, variant=variant) for layer in layers}}
        for variant in variants if (frame.variant == variant).any()
    ])


def notation_table() -> pd.DataFrame:
    """App. Table 1: the notation of the appendix (static; A-AppTable1)."""
    return pd.DataFrame([
        ["l", "number of layers"],
        ["N", "batch size"],
        ["M_l", "number of neurons in layer l"],
        ["k", "output dimension"],
        ["W^l ∈ R^{M_l × M_{l−1}}", "weight matrix of layer l"],
        ["b^l ∈ R^{M_l}", "bias of layer l"],
        ["x^l ∈ R^{M_l}", "input of layer l+1 (output of layer l)"],
        ["z^l ∈ R^{M_l}", "pre-activation of layer l"],
        ["I_k", "k × k identity matrix"],
        ["1_k", "all-ones vector of length k"],
    ], columns=["Symbol", "Meaning"])


def weight_matrix(weights: pd.DataFrame, layer: str, epoch: int | None = None, seed: int | None = None) -> np.ndarray:
    """The (out, in) weight of ``layer`` from a weights frame; ``epoch=None``: the last; ``seed=None``: the first."""
    part = weights[weights.layer == layer]
    if part.empty:
        raise ValueError(f"no saved weights of layer {layer!r}; saved: {sorted(weights.layer.unique())}")
    epoch = int(part.epoch.max()) if epoch is None else epoch
    seed = int(part.seed.min()) if seed is None else seed
    part = part[(part.epoch == epoch) & (part.seed == seed)].sort_values("row")
    if part.empty:
        raise ValueError(f"no weights of {layer!r} at epoch {epoch}, seed {seed}")
    return np.stack([np.asarray(w, dtype=np.float64) for w in part.weight])


def heatmap_matrices(W: np.ndarray) -> dict[str, np.ndarray]:
    """Figs. 1–2 panels of one weight W (out, in): |cos| over rows / columns and the Grams WWᵀ / WᵀW (A.1.2)."""
    tensor = torch.as_tensor(W, dtype=torch.float64)
    return {
        "C_row": cosine_similarity_matrix(tensor, "rows").numpy(),
        "C_col": cosine_similarity_matrix(tensor, "columns").numpy(),
        "G_row": (tensor @ tensor.T).numpy(),
        "G_col": (tensor.T @ tensor).numpy(),
    }


def matrix_pii(W: np.ndarray, orientation: str = ORIENTATION) -> float:
    return float(pii(torch.as_tensor(W, dtype=torch.float64), orientation))


def _read(results: Results, key: str) -> pd.DataFrame | None:
    files = results.get(key)
    return read_all_results(files) if files else None


def _label(text: str) -> str:
    return text.lower().replace("_", "").replace(" ", "")


def claims(results: Results, cfg: Mapping[str, Any]) -> Claims:
    """Quantities of notebooks/reference/lu2024.yaml for Tables 1–4, App. Tables 2–4 and Fig. 1.

    Keys: ``<optimizer>_<layerN>_init|trained``, ``<optimizer>_acc`` (Tables 1, 2, App. 2);
    ``<activation>_<optimizer>_pii_<variant>``, ``..._acc_<variant>`` (Tables 3, 4, App. 3; Table 4's
    accuracy is the train accuracy, App. Table 3's the test accuracy, decision A7's picks);
    ``<variant>_<layer>`` (App. Table 4); ``pii_init`` (Fig. 1) and claims (booleans as 1.0/0.0).
    """
    out: Claims = {}
    for item in OPTIMIZER_ITEMS:
        frame = _read(results, item)
        if frame is None:
            continue
        end, values = last_epoch(frame), {}
        for optimizer in frame.optimizer.unique():
            part = frame[frame.optimizer == optimizer]
            for label, layer in cfg[item]["compared_layers"].items():
                values[f"{optimizer}_{_label(label)}_init"] = pii_value(part, layer, 0)
                values[f"{optimizer}_{_label(label)}_trained"] = pii_value(part, layer, end)
            if item != "apptable2":  # App. Table 2 has no accuracy column
                values[f"{optimizer}_acc"] = accuracy_value(part)
        first = list(cfg[item]["compared_layers"].values())
        trained = {o: [pii_value(frame[frame.optimizer == o], layer, end) for layer in first]
                   for o in frame.optimizer.unique()}
        if "sgd" in trained and len(trained) > 1:  # paper §4: SGD keeps the constant layer closest to collinear
            values["sgd_keeps_layer1_most"] = float(all(trained["sgd"][0] >= v[0] for v in trained.values()))
        out[item] = values
    accuracy_metric = {"table3": "test_accuracy", "table4": "train_accuracy", "apptable3": "test_accuracy"}
    for item in VARIANT_ITEMS:
        frame = _read(results, item)
        if frame is None:
            continue
        end, values, lower = last_epoch(frame), {}, []
        # Table 3 names its headline layer; the ResNet tables share their family's (config resnet18:)
        layer = cfg[item].get("headline_layer") or cfg["resnet18"]["headline_layer"]
        for (activation, optimizer), part in frame.groupby(["activation", "optimizer"]):
            key = f"{activation}_{optimizer}"
            by_variant = {v: pii_value(part, layer, end, variant=v) for v in part.variant.unique()}
            for variant, value in by_variant.items():
                values[f"{key}_pii_{variant}"] = value
                values[f"{key}_acc_{variant}"] = accuracy_value(part, accuracy_metric[item], variant=variant)
            if {"original", "norm_res"} <= set(by_variant):
                lower.append(by_variant["norm_res"] < by_variant["original"])
        if lower:  # paper §4.3: Norm_Res gives the lower PII in every configuration
            values["norm_res_lower_pii_everywhere"] = float(all(lower))
        out[item] = values
    frame = _read(results, "apptable4")
    if frame is not None:
        end = last_epoch(frame)
        layers = cfg["apptable4"]["compared_layers"]
        values = {f"{v}_{_label(label)}": pii_value(frame, layer, end, variant=v)
                  for v in frame.variant.unique() for label, layer in layers.items()}
        if {"original", "norm_res"} <= set(frame.variant):
            values["norm_res_lowest_everywhere"] = float(all(
                pii_value(frame, layer, end, variant="norm_res") <= pii_value(frame, layer, end, variant=v)
                for layer in layers.values() for v in frame.variant.unique()))
        out["apptable4"] = values
    weights = _read(results, "fig1")
    if weights is not None:
        W = weight_matrix(weights, cfg["fig1"]["layer"], epoch=0)
        out["fig1"] = {"pii_init": matrix_pii(W),
                       "cos_unit_diagonal": float(np.allclose(np.diag(heatmap_matrices(W)["C_col"]), 1.0))}
    return out
