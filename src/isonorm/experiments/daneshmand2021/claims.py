"""The checkable quantities of Daneshmand et al. (2021), measured from this run's results.

``measure`` returns one row per (item, quantity); notebooks/reference/daneshmand2021.yaml holds what the
paper printed for the same keys, and the scoreboard compares the two. Nothing here reads the reference.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...results import read_all_results
from . import SLUG
from . import summaries as s


def _fig1(df: pd.DataFrame) -> dict[str, float]:
    means = df.groupby(["network", "layer"]).abs_cosine.mean()
    last = df.layer.max()
    return {
        "bn_plateau": s.plateau(df, "abs_cosine", "network", 0.6)["BN"],
        "vanilla_last_layer": means["Vanilla", last],
        "bn_below_vanilla_at_end": float(means["BN", last] < means["Vanilla", last]),
    }


def _fig2a(df: pd.DataFrame) -> dict[str, float]:
    df = df.assign(log_gap=np.log(df.orthogonality_gap))
    plateaus = s.plateau(df, "log_gap", "width", 0.5)
    widths = sorted(plateaus.index)
    out = {f"log_gap_plateau_d{w}": plateaus[w] for w in widths}
    out["log_gap_start"] = df[df.layer == 1].log_gap.mean()
    out["wider_lower_plateau"] = float(plateaus[widths[-1]] < plateaus[widths[0]])
    return out


def _fig2b(df: pd.DataFrame, cfg: Mapping[str, Any]) -> dict[str, float]:
    caption = s.window_average(df, tuple(cfg["caption_window"])).groupby("width").orthogonality_gap.mean()
    code = s.window_average(df, tuple(cfg["code_window"]), code_offset=True).groupby("width").log_avg_gap.mean()
    return {
        "slope_caption": s.loglog_slope(caption.index.to_numpy(), caption.to_numpy()),
        "slope_code": s.slope(np.log(code.index.to_numpy()), code.to_numpy()),
    }


def _fig3(df: pd.DataFrame, cfg: Mapping[str, Any]) -> dict[str, float]:
    """The literal reading (the figure's default) and, suffixed ``_offset``, the offset reading (decision B15)."""
    out = {}
    for suffix, offset in (("", 0), ("_offset", cfg["batch_offset"])):
        grid = s.a1_grid(df, offset, cfg["batch_sizes"])
        above = grid.width >= s.a1_curve(grid.batch.to_numpy())
        out[f"holds_fraction_above_curve{suffix}"] = grid[above].holds.mean() if above.any() else np.nan
        out[f"fails_fraction_below_curve{suffix}"] = (~grid[~above].holds).mean() if (~above).any() else np.nan
    return out


def _appfigg(df: pd.DataFrame) -> dict[str, float]:
    return {
        f"slope_{act}": s.loglog_slope(g.width.to_numpy(), g.avg_deviation.to_numpy())
        for act, g in df.groupby("activation")
    }


def _depth_training(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    xavier = df[df.init == "xavier"]
    loss = s.final_epoch_loss(xavier, ["depth"])
    gap = s.initial_gap(xavier, ["depth"])
    fig4a = {
        "loss_increases_with_depth": float(s.increasing(loss.depth, loss.train_loss)),
        "init_gap_increases_with_depth": float(s.increasing(gap.depth, gap.spectral_gap)),
    }
    fig5: dict[str, float] = {"xavier_loss_increases_with_depth": fig4a["loss_increases_with_depth"]}
    if {"xavier", "iterative"} <= set(df.init):
        both = s.final_epoch_loss(df, ["init", "depth"])
        deepest = both[both.depth == both.depth.max()].groupby("init").train_loss.mean()
        fig5["iterative_below_xavier_at_max_depth"] = float(deepest["iterative"] < deepest["xavier"])
    return {"fig4a": fig4a, "fig5": fig5}


def _fig4b(df: pd.DataFrame) -> dict[str, float]:
    per_epoch = df.groupby("epoch")[["train_loss", "spectral_gap"]].mean()
    trained = per_epoch[per_epoch.index >= 1]
    return {
        "gap_decreases": float(trained.spectral_gap.iloc[-1] < per_epoch.spectral_gap.iloc[0]),
        "loss_decreases": float(trained.train_loss.iloc[-1] < trained.train_loss.iloc[0]),
    }


def _appfig6(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    out = {}
    for arch, item in (("mlp", "appfig6a"), ("convnet", "appfig6b")):
        sub = df[df.arch == arch]
        if sub.empty:
            continue
        means = sub.groupby(["norm", "layer"]).orthogonality_gap.mean()
        first, last = sub.layer.min(), sub.layer.max()
        out[item] = {
            "gap_start": sub[sub.layer == first].orthogonality_gap.mean(),
            "bn_plateau": s.plateau(sub, "orthogonality_gap", "norm", 0.8)["batchnorm"],
            "vanilla_last_layer": means["none", last],
            "vanilla_gap_increases": float(means["none", last] > means["none", first]),
            "bn_gap_decreases": float(means["batchnorm", last] < means["batchnorm", first]),
        }
    return out


def _appfig7(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    out = {}
    for item, extra in zip(("appfig7a", "appfig7b"), sorted(df.extra_layers.unique())):
        last = df[(df.extra_layers == extra) & (df.epoch == df.epoch.max())].groupby("init").train_loss.mean()
        out[item] = {"final_loss_xavier": last.get("xavier", np.nan), "final_loss_svd": last.get("svd", np.nan)}
        if {"xavier", "svd"} <= set(last.index):
            out[item]["svd_below_xavier"] = float(last["svd"] < last["xavier"])
    return out


def measure(results: Mapping[str, Sequence[str]], config: Mapping[str, Any]) -> pd.DataFrame:
    """All quantities computable from the ``results`` files present (item key -> Parquet paths)."""
    by_item: dict[str, dict[str, float]] = {}
    if results.get("fig1"):
        by_item["fig1"] = _fig1(read_all_results(results["fig1"]))
    if results.get("fig2a"):
        by_item["fig2a"] = _fig2a(read_all_results(results["fig2a"]))
    if results.get("fig2b"):
        by_item["fig2b"] = _fig2b(read_all_results(results["fig2b"]), config["fig2b"])
    if results.get("fig3"):
        by_item["fig3"] = _fig3(read_all_results(results["fig3"]), config["fig3"])
    if results.get("appfigg"):
        by_item["appfigg"] = _appfigg(read_all_results(results["appfigg"]))
    if results.get("depth_training"):
        by_item.update(_depth_training(read_all_results(results["depth_training"])))
    if results.get("fig4b"):
        by_item["fig4b"] = _fig4b(read_all_results(results["fig4b"]))
    if results.get("appfig6"):
        by_item.update(_appfig6(read_all_results(results["appfig6"])))
    if results.get("appfig7"):
        by_item.update(_appfig7(read_all_results(results["appfig7"])))
    rows = [
        {"item": f"{SLUG}-{item}", "quantity": quantity, "value": float(value), "note": ""}
        for item, quantities in by_item.items()
        for quantity, value in quantities.items()
    ]
    return pd.DataFrame(rows, columns=["item", "quantity", "value", "note"])
