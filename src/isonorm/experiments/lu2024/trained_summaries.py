"""Reductions of the trained-network results (Tables 1–4, App. Tables 1–4, Figs. 1–2) for notebook and claims.

Inputs are the tidy frames of :mod:`.trained_nets` (one row per seed, epoch, metric, layer, orientation) and
the weights frames of the Table-3 FNN jobs. Table cells are means over the config's ``seeds`` (the paper has
one run, seed 42), claimed with their seed spread; "init" is epoch 0, "trained" the last epoch. PII is read in the ``columns`` orientation
(decision A1). Nothing here reads the paper's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from ...metrics import cosine_similarity_matrix, pii
from ...verdicts.claims import Measured, measured_over_runs
from ...verdicts.comparison import FITTED_RUN
from ...results import read_all_results

Results = Mapping[str, Sequence[str]]
Claims = dict[str, dict[str, float | Measured]]
ORIENTATION = "columns"  # decision A1: the tables report PII over column vectors

# item id → the result key that feeds it, also its config section (the items' records, trained_nets.ITEMS)
OPTIMIZER_ITEMS = {"lu2024-table1": "table1", "lu2024-table2": "table2",
                   "lu2024-apptable2": "apptable2"}  # rows = optimizers, columns = Layer_1..3
VARIANT_ITEMS = {"lu2024-table3": "table3", "lu2024-table4": "table4",
                 "lu2024-apptable3": "apptable3"}  # rows = activation/optimizer, columns = variants
# The accuracy a variant table's printed one is compared with (decision A7: Table 4's are train accuracies,
# read as ResNet-CIFAR10.py logs them: the running train-mode accuracy over the last epoch's augmented batches).
COMPARED_ACCURACY = {"lu2024-table3": "test_accuracy", "lu2024-table4": "train_accuracy",
                     "lu2024-apptable3": "test_accuracy"}
# A second reading of an item's printed accuracy (decision A7's alternative for Table 4: eval mode, un-augmented
# training split, after the last epoch), claimed as ``<activation>_<optimizer>_acc_eval_<variant>``.
ALTERNATIVE_ACCURACY = {"lu2024-table4": "train_accuracy_eval"}


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


def resnet_variant_table(frame: pd.DataFrame, cfg: Mapping[str, Any], item: str) -> pd.DataFrame:
    """Table 4, App. Table 3: ``variant_table`` of the ResNet family's headline layer and activation, with the
    running train accuracy, the eval-mode train accuracy on the un-augmented split and the test accuracy
    (decision A7)."""
    resnet = cfg["resnet18"]
    combos = [(resnet["activation"], optimizer) for optimizer in cfg[item]["runs"]]
    return variant_table(frame, resnet["headline_layer"], combos, resnet["variants"],
                         accuracies=("train_accuracy", "train_accuracy_eval", "test_accuracy"))


def layer_profile(frame: pd.DataFrame, layers: Sequence[str], variants: Sequence[str]) -> pd.DataFrame:
    """App. Table 4: trained PII_col of ``layers`` (columns) per variant (rows)."""
    end = last_epoch(frame)
    return pd.DataFrame([
        {"Variant": variant, **{layer: pii_value(frame, layer, end, variant=variant) for layer in layers}}
        for variant in variants if (frame.variant == variant).any()
    ])


def notation_table() -> pd.DataFrame:
    """App. Table 1: the notation of the appendix (static; lu2024-apptable1)."""
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


def per_seed(frame: pd.DataFrame, by: Sequence[str], epoch: int, metric: str = "pii", layer: str | None = None,
             orientation: str = ORIENTATION) -> pd.DataFrame:
    """Seeds × the ``by`` groups (e.g. optimizer): ``metric`` (of ``layer`` for PII) at ``epoch``, one value each.

    The unit of a claim's seed spread (docs/decisions/lu2024.md, "Tolerances"): a table cell is the mean of a
    column, a relation between cells is computed per seed first.
    """
    mask = (frame.metric == metric) & (frame.epoch == epoch)
    if layer is not None:
        mask &= (frame.layer == layer) & (frame.orientation == orientation)
    return frame[mask].pivot_table(index="seed", columns=list(by), values="value", aggfunc="mean")


def _cells(table: pd.DataFrame, name: Callable[[Any], str]) -> dict[str, Measured]:
    """One measured cell per column of a seeds × groups table: the mean over seeds and its seed spread. A fitted
    run's label (``adam-fitted``) names its quantities ``adam_fitted_...`` (decision A3)."""
    return {name(column).replace("-", "_"): measured_over_runs(table[column].to_numpy()) for column in table.columns}


def _protocol(table: pd.DataFrame) -> pd.DataFrame:
    """The columns of the item's own protocol: its fitted runs (``<optimizer>-fitted``, decision A3) left out, so
    that a relation the paper states is measured on the runs it states it for."""
    optimizers = table.columns.get_level_values("optimizer") if "optimizer" in (table.columns.names or []) else []
    keep = [not str(o).endswith(FITTED_RUN) for o in optimizers] if len(optimizers) else [True] * table.shape[1]
    return table.loc[:, keep]


def _optimizer_claims(frame: pd.DataFrame, item: str, layers: Mapping[str, str]) -> dict[str, Measured]:
    """Tables 1, 2, App. 2: per optimizer and layer the PII at init and trained, the accuracy, and SGD's lead."""
    end, values = last_epoch(frame), {}
    for label, layer in layers.items():
        for epoch, stage in ((0, "init"), (end, "trained")):
            table = per_seed(frame, ["optimizer"], epoch, layer=layer)
            if stage == "init":  # a fitted run starts from its default run's draw: its init is no reading of its own
                table = _protocol(table)
            values |= _cells(table, lambda o: f"{o}_{_label(label)}_{stage}")
    if item != "lu2024-apptable2":  # App. Table 2 has no accuracy column
        values |= _cells(per_seed(frame, ["optimizer"], end, "test_accuracy"), lambda o: f"{o}_acc")
    first = _protocol(per_seed(frame, ["optimizer"], end, layer=next(iter(layers.values()))))
    if "sgd" in first.columns and first.shape[1] > 1:  # paper §4: SGD keeps the constant layer closest to collinear
        lead = first["sgd"] - first.drop(columns="sgd").max(axis=1)
        values["sgd_layer1_lead"] = measured_over_runs(lead.to_numpy())
    return values


def _variant_claims(frame: pd.DataFrame, layer: str, accuracy: str,
                    alternative: str | None = None) -> dict[str, Measured]:
    """Tables 3, 4, App. 3: PII and accuracy per (activation, optimizer, variant) and Norm_Res's largest change;
    with ``alternative``, that accuracy metric too, as ``..._acc_eval_<variant>`` (decision A7)."""
    end, groups = last_epoch(frame), ["activation", "optimizer", "variant"]
    values = _cells(per_seed(frame, groups, end, layer=layer), lambda g: f"{g[0]}_{g[1]}_pii_{g[2]}")
    values |= _cells(per_seed(frame, groups, end, accuracy), lambda g: f"{g[0]}_{g[1]}_acc_{g[2]}")
    if alternative is not None:
        values |= _cells(per_seed(frame, groups, end, alternative), lambda g: f"{g[0]}_{g[1]}_acc_eval_{g[2]}")
    piis = _protocol(per_seed(frame, groups, end, layer=layer))
    if {"original", "norm_res"} <= set(piis.columns.get_level_values("variant")):
        # paper §4.3: Norm_Res lowers PII in every row; the largest change (per seed) is below zero when it does
        change = piis.xs("norm_res", axis=1, level="variant") - piis.xs("original", axis=1, level="variant")
        values["norm_res_pii_change_max"] = measured_over_runs(change.max(axis=1).to_numpy())
    return values


def _profile_claims(frame: pd.DataFrame, layers: Mapping[str, str]) -> dict[str, Measured]:
    """App. Table 4: PII per variant and layer, and Norm_Res's largest gap to any other variant in any layer."""
    end, values, gaps = last_epoch(frame), {}, []
    for label, layer in layers.items():
        table = per_seed(frame, ["variant"], end, layer=layer)
        values |= _cells(table, lambda v: f"{v}_{_label(label)}")
        if {"original", "norm_res"} <= set(table.columns):
            gaps.append(table.drop(columns="norm_res").rsub(table["norm_res"], axis=0).max(axis=1))
    if gaps:  # appendix / paper §4.3: Norm_Res is the lowest of the four variants in every layer
        values["norm_res_pii_gap_max"] = measured_over_runs(pd.concat(gaps, axis=1).max(axis=1).to_numpy())
    return values


def _fig1_claims(weights: pd.DataFrame, layer: str) -> dict[str, float | Measured]:
    """Fig. 1: the PII of the drawn layer (per seed) and the unit diagonal of its cosine matrix."""
    matrices = [weight_matrix(weights, layer, epoch=0, seed=seed) for seed in sorted(weights.seed.unique())]
    diagonal = all(np.allclose(np.diag(heatmap_matrices(W)["C_col"]), 1.0) for W in matrices)
    return {"pii_init": measured_over_runs([matrix_pii(W) for W in matrices]), "cos_unit_diagonal": float(diagonal)}


def claims(results: Results, cfg: Mapping[str, Any]) -> Claims:
    """Quantities of notebooks/reference/lu2024.yaml by item id: lu2024-table1, lu2024-table2, lu2024-table3,
    lu2024-table4, lu2024-apptable2, lu2024-apptable3, lu2024-apptable4, lu2024-fig1.

    Keys: ``<optimizer>_<layerN>_init|trained``, ``<optimizer>_acc``, ``sgd_layer1_lead`` (Tables 1, 2, App. 2);
    ``<activation>_<optimizer>_pii_<variant>``, ``..._acc_<variant>``, ``norm_res_pii_change_max`` (Tables 3, 4,
    App. 3; Table 4's accuracy is the running train accuracy of the last epoch, App. Table 3's the test accuracy,
    decision A7's picks), ``..._acc_eval_<variant>`` (Table 4's alternative: eval-mode accuracy on the
    un-augmented training split);
    ``<variant>_<layer>``, ``norm_res_pii_gap_max`` (App. Table 4); ``pii_init``, ``cos_unit_diagonal`` (Fig. 1).
    Every value over seeds is the seeds' mean with its seed spread (``Measured``; NaN spread with one seed).
    """
    out: Claims = {}
    for item, key in OPTIMIZER_ITEMS.items():
        frame = _read(results, key)
        if frame is not None:
            out[item] = _optimizer_claims(frame, item, cfg[key]["compared_layers"])
    for item, key in VARIANT_ITEMS.items():
        frame = _read(results, key)
        if frame is not None:
            # Table 3 names its headline layer; the ResNet tables share their family's (config resnet18:)
            layer = cfg[key].get("headline_layer") or cfg["resnet18"]["headline_layer"]
            out[item] = _variant_claims(frame, layer, COMPARED_ACCURACY[item], ALTERNATIVE_ACCURACY.get(item))
    frame = _read(results, "apptable4")
    if frame is not None:
        out["lu2024-apptable4"] = _profile_claims(frame, cfg["apptable4"]["compared_layers"])
    weights = _read(results, "fig1")
    if weights is not None:
        out["lu2024-fig1"] = _fig1_claims(weights, cfg["fig1"]["layer"])
    return out
