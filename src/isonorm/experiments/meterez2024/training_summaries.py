"""Reductions of the training-grid frames (training_grid.py), shared by the notebook and the claims.

"mid" layers are ℓ ∈ [L/4, 3L/4] (the figures' flat middle, meterez2024-fig6/meterez2024-figf1/meterez2024-figf2 read-offs "mid-layer"); a
"final" value is the last epoch a run recorded (runs that stopped, or budget caps, end earlier; decision C5
"plots show whatever epochs exist"). Log quantities are log10; their tolerances are the figures' read-off
precisions (docs/decisions/meterez2024.md, "Tolerances"). One run per configuration (meterez2024-fig4): no seed spread.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...results import read_all_results

RESULT_KEY = "training"  # results entry: every (data-set group, depth) job's Parquet file
ITEM_DATASET = {"meterez2024-fig4": "cifar10", "meterez2024-figg1": "mnist", "meterez2024-figg2": "fashionmnist",
                "meterez2024-figg3": "cifar100", "meterez2024-figg4": "cifar10"}  # meterez2024-fig4, meterez2024-figg1–meterez2024-figg4
SHAPED = ("sin", "tanh")
PROFILE_DATASET = "cifar10"  # the runs whose per-layer profiles Figs. 6, F1 and F2 show (meterez2024-fig6, meterez2024-figf1)


def accuracy_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, depth, activation, epoch): train/test loss and accuracy as columns."""
    epochs = frame[frame.layer == -1]
    epochs = epochs[epochs.metric != "stopped"]
    wide = epochs.pivot_table(index=["dataset", "depth", "activation", "epoch"], columns="metric",
                              values="value", aggfunc="first").reset_index()
    wide.columns.name = None
    return wide


def plotted_accuracy(frame: pd.DataFrame | None, item: str) -> pd.DataFrame:
    """The curves an accuracy figure draws: its data set's (``ITEM_DATASET``) from epoch 1 on, since epoch 0 (init)
    cannot sit on the log epoch axis (meterez2024-fig4); empty when the grid did not run (``frame`` None)."""
    if frame is None:
        return pd.DataFrame(columns=["dataset", "depth", "activation", "epoch"])
    curves = accuracy_curves(frame)
    return curves[(curves.dataset == ITEM_DATASET[item]) & (curves.epoch >= 1)]


def profile_runs(frame: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of the runs Figs. 6, F1 and F2 draw (``PROFILE_DATASET``); empty when the grid did not run."""
    if frame is None:
        return pd.DataFrame({"dataset": pd.Series(dtype=str), "depth": pd.Series(dtype=int),
                             "activation": pd.Series(dtype=str), "epoch": pd.Series(dtype=int),
                             "layer": pd.Series(dtype=int), "metric": pd.Series(dtype=str),
                             "value": pd.Series(dtype=float)})
    return frame[frame.dataset == PROFILE_DATASET]


def nonfinite_points(frame: pd.DataFrame | None, metric: str) -> int:
    """Non-finite values of ``metric`` over the whole grid, dropped from its plots (C11); 0 when not run."""
    if frame is None:
        return 0
    return int((~np.isfinite(frame[frame.metric == metric].value.to_numpy(dtype=float))).sum())


def stopped_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs stopped by a non-finite loss: dataset, depth, activation, epoch (C11: counted in captions)."""
    return frame[frame.metric == "stopped"][["dataset", "depth", "activation", "epoch"]].reset_index(drop=True)


def layer_profiles(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per-layer values of ``metric`` (dataset, depth, activation, epoch, layer, value), finite only."""
    rows = frame[(frame.layer >= 0) & (frame.metric == metric)]
    rows = rows[np.isfinite(rows.value)]
    return rows[["dataset", "depth", "activation", "epoch", "layer", "value"]].reset_index(drop=True)


def mid_median(profile: pd.DataFrame, depth: int) -> float:
    """Median over the middle layers ℓ ∈ [L/4, 3L/4] of one profile (NaN when empty)."""
    mid = profile[(profile.layer >= depth / 4) & (profile.layer <= 3 * depth / 4)]
    return float(mid.value.median()) if len(mid) else math.nan


def _log10(value: float) -> float:
    return math.log10(value) if value > 0 else math.nan


def _final(curves: pd.DataFrame, metric: str) -> float:
    if curves.empty:
        return math.nan
    last = curves[curves.epoch == curves.epoch.max()]
    return float(last[metric].mean())


def _select(curves: pd.DataFrame, dataset: str, activation: str, depth: int | None = None) -> pd.DataFrame:
    rows = curves[(curves.dataset == dataset) & (curves.activation == activation)]
    return rows if depth is None else rows[rows.depth == depth]


def _mean_over_depths(curves: pd.DataFrame, dataset: str, activation: str, how) -> float:
    values = [how(part) for _, part in _select(curves, dataset, activation).groupby("depth")]
    values = [v for v in values if np.isfinite(v)]
    return float(np.mean(values)) if values else math.nan


def _at_epoch(curves: pd.DataFrame, epoch: int, metric: str) -> float:
    rows = curves[curves.epoch == epoch]
    return float(rows[metric].mean()) if len(rows) else math.nan


def _profile_claims(frame: pd.DataFrame, dataset: str, depth: int, activation: str) -> dict[str, float]:
    """log10 mid/ends of φ(W_ℓ) and ‖∇W_ℓ L‖ per measured epoch, and φ's monotone increase with epoch."""
    out: dict[str, float] = {}
    phi = layer_profiles(frame, "weight_isogap")
    phi = phi[(phi.dataset == dataset) & (phi.depth == depth) & (phi.activation == activation)]
    grad = layer_profiles(frame, "grad_fro_norm")
    grad = grad[(grad.dataset == dataset) & (grad.depth == depth) & (grad.activation == activation)]
    mids = []
    for epoch, part in phi.groupby("epoch"):
        mids.append(mid_median(part, depth))
        out[f"phi_mid_log10_d{depth}_{activation}_e{epoch}"] = _log10(mids[-1])
        out[f"phi_last_log10_d{depth}_{activation}_e{epoch}"] = _log10(float(part[part.layer == depth].value.mean()))
        out[f"phi_first_log10_d{depth}_{activation}_e{epoch}"] = _log10(float(part[part.layer == 0].value.mean()))
    if len(mids) >= 2:  # "increases monotonically with epoch": strictly, so a flat profile does not pass
        out[f"phi_mid_increases_d{depth}_{activation}"] = float(all(b > a for a, b in zip(mids, mids[1:])))
    for epoch, part in grad.groupby("epoch"):
        out[f"grad_mid_log10_d{depth}_{activation}_e{epoch}"] = _log10(mid_median(part, depth))
        out[f"grad_first_log10_d{depth}_{activation}_e{epoch}"] = _log10(float(part[part.layer == 0].value.mean()))
        out[f"grad_last_log10_d{depth}_{activation}_e{epoch}"] = _log10(float(part[part.layer == depth].value.mean()))
    if len(grad):
        out[f"grad_no_vanishing_d{depth}_{activation}"] = float(grad.value.min() > 1e-3)
    return out


def _accuracy_claims(curves: pd.DataFrame, dataset: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for act in ("sin", "tanh", "identity"):
        for split in ("train", "test"):
            metric = f"{split}_acc"
            out[f"{act}_{metric}_epoch1"] = _mean_over_depths(curves, dataset, act, lambda c: _at_epoch(c, 1, metric))
            out[f"{act}_{metric}_final"] = _mean_over_depths(curves, dataset, act, lambda c: _final(c, metric))
            out[f"{act}_{metric}_peak"] = _mean_over_depths(curves, dataset, act,
                                                           lambda c: float(c[c.epoch >= 1][metric].max()))
            for depth in sorted(_select(curves, dataset, act).depth.unique()):
                part = _select(curves, dataset, act, int(depth))
                out[f"{act}_{metric}_final_d{depth}"] = _final(part, metric)
                out[f"{act}_{metric}_peak_d{depth}"] = float(part[part.epoch >= 1][metric].max())
    shaped = [out.get(f"{a}_train_acc_final", math.nan) for a in SHAPED]
    if all(np.isfinite(shaped)) and np.isfinite(out.get("identity_train_acc_final", math.nan)):
        # "identity is much worse": its final train accuracy minus the lower of the shaped ones (≤ 0 claimed)
        out["identity_train_gap"] = out["identity_train_acc_final"] - min(shaped)
    deep = [out.get(f"identity_test_acc_final_d{d}", math.nan) for d in (500, 1000)]
    deep = [v for v in deep if np.isfinite(v)]
    if deep and np.isfinite(out.get("identity_test_acc_peak_d500", math.nan)):
        # C17: identity test accuracy collapses at depth ≥ 500 (final well below its peak)
        out["identity_test_collapse_deep"] = float(max(deep) < 0.5 * out["identity_test_acc_peak_d500"])
    return {k: v for k, v in out.items() if np.isfinite(v)}


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping) -> dict[str, dict[str, float]]:
    """Quantities of notebooks/reference from the training Parquet files, by item id: meterez2024-fig4,
    meterez2024-fig6, meterez2024-figf1, meterez2024-figf2, meterez2024-figg1, meterez2024-figg2, meterez2024-figg3,
    meterez2024-figg4."""
    if RESULT_KEY not in results or not results[RESULT_KEY]:
        return {}
    frame = read_all_results(results[RESULT_KEY])
    curves = accuracy_curves(frame)
    out: dict[str, dict[str, float]] = {}
    for item, dataset in ITEM_DATASET.items():
        if (curves.dataset == dataset).any():
            values = _accuracy_claims(curves, dataset)
            if item == "meterez2024-fig4":
                values = {k: v for k, v in values.items() if "train" in k}
            elif item == "meterez2024-figg4":
                values = {k: v for k, v in values.items() if "test" in k}
            out[item] = values
    depths = sorted(frame[frame.dataset == "cifar10"].depth.unique())
    if depths:
        deepest = int(max(depths))
        out["meterez2024-fig6"] = {k: v for k, v in _profile_claims(frame, "cifar10", deepest, "tanh").items() if np.isfinite(v)}
        f1: dict[str, float] = {}
        f2: dict[str, float] = {}
        for depth in depths:
            for act in SHAPED:
                for key, value in _profile_claims(frame, "cifar10", int(depth), act).items():
                    if np.isfinite(value):
                        (f1 if key.startswith("phi") else f2)[key] = value
        out["meterez2024-figf1"], out["meterez2024-figf2"] = f1, f2
    return out
