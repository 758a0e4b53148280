"""Reductions of the image-MLP results (Figs. 2, 3, 7, B.4, B.6, B.7) shared by the notebook and the claims.

Inputs are the tidy frames of :mod:`.image_mlps` (one row per run, epoch, stage, batch, module). Means are
over runs × measured batches, as the originals' seaborn plots averaged their rows. Only train-stage rows
enter the figures (joudaki2023-fig2, joudaki2023-fig3, joudaki2023-fig7, joudaki2023-figb4; Fig. B.7 by the same reading).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...verdicts.claims import Measured
from ...results import read_all_results
from .spreads import measured_with_spread

# Item ids this module produces claims for, by the result key that feeds them.
ITEMS_BY_RESULT = {
    "fig2_runs": ("joudaki2023-fig2", "joudaki2023-figb6"),
    "fig3": ("joudaki2023-fig3",),
    "figb4": ("joudaki2023-figb4",),
    "fig7_runs": ("joudaki2023-fig7", "joudaki2023-figb7"),
}

# Defaults of the plotting choices, when the config does not set them: Fig. 2 shows Tanh [S caption];
# Fig. B.6 the activations of the rendered legend (decision D6); Figs. 3, 7, B.7 Sigmoid, Tanh, ReLU [S].
THREE_ACTIVATIONS = ("Sigmoid", "Tanh", "ReLU")


def train_stage(df: pd.DataFrame) -> pd.DataFrame:
    """The train-stage rows, with ``isometry`` = exp(−gap) (the y of Figs. 2 and B.6)."""
    rows = df[df.stage == "train"]
    return rows.assign(isometry=np.exp(-rows.iso_gap))


def last_epoch(df: pd.DataFrame) -> int:
    return int(df.epoch.max())


def deepest_norm(df: pd.DataFrame) -> int:
    """ℓ of the last LayerNorm module (norm-10 for depth 10)."""
    return int(df[df.kind == "norm"].layer.max())


def betas(df: pd.DataFrame) -> pd.Series:
    """β_σ per activation, as stored with the results (quadrature by default, decision D8)."""
    return df.groupby("activation").beta.first().sort_values()


def beta_label(activation: str, beta: float) -> str:
    """Legend text of Figs. B.6 and 3: "Tanh, β_σ = 1.070"."""
    return f"{activation}, β_σ = {beta:.3f}"


def beta_labels(df: pd.DataFrame) -> dict[str, str]:
    """Activation → its legend text (:func:`beta_label`), in β order: the hue of Figs. 7, B.6 and B.7."""
    return {activation: beta_label(activation, beta) for activation, beta in betas(df).items()}


def module_profile(df: pd.DataFrame, by: Sequence[str] = ("activation", "epoch")) -> pd.DataFrame:
    """Mean gap and isometry per (``by``, module), train stage, in module order."""
    rows = train_stage(df)
    keys = [*by, "position", "module", "kind", "layer"]
    return rows.groupby(keys, as_index=False)[["iso_gap", "isometry"]].mean().sort_values([*by, "position"])


def value_at(profile: pd.DataFrame, module: str, column: str = "isometry", **where: Any) -> float:
    """One mean of a :func:`module_profile`; NaN when the module or selection is absent."""
    mask = profile.module == module
    for key, value in where.items():
        mask &= profile[key] == value
    picked = profile.loc[mask, column]
    return float(picked.iloc[0]) if len(picked) else math.nan


def ln_steps(df: pd.DataFrame, by: Sequence[str] = ("activation", "epoch")) -> pd.DataFrame:
    """Isometry into (act-(ℓ−1)) and out of (norm-ℓ) every LayerNorm ℓ ≥ 1, mean over runs × batches.

    Corollary 2 ("LN never decreases isometry"): ``after >= before``. norm-0's input, the raw image batch,
    is not a module output and was never recorded, so ℓ = 0 has no step.
    """
    profile = module_profile(df, by)
    act = profile[profile.kind == "act"].assign(layer=lambda f: f.layer + 1)
    norm = profile[(profile.kind == "norm") & (profile.layer >= 1)]
    keys = [*by, "layer"]
    steps = norm[keys + ["isometry"]].merge(act[keys + ["isometry"]], on=keys, suffixes=("_after", "_before"))
    steps = steps.rename(columns={"isometry_after": "after", "isometry_before": "before"})
    return steps.assign(non_decreasing=steps.after >= steps.before)


def theory_line(beta: float, layers: np.ndarray) -> np.ndarray:
    """Fig. 3's dashed "theory": β^−ℓ, i.e. C = 1 and normalised to 1 at ℓ = 0 (decision D3)."""
    return np.power(float(beta), -np.asarray(layers, dtype=float))


def norm_gaps(df: pd.DataFrame, by: Sequence[str] = ("activation",)) -> pd.DataFrame:
    """Gap of the LayerNorm outputs norm-ℓ per (``by``, ℓ): the curves of Figs. 3 and B.7."""
    profile = module_profile(df, by)
    return profile[profile.kind == "norm"][[*by, "layer", "iso_gap"]].reset_index(drop=True)


def loss_curve(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7 (decision D15, faithful): mean and sd per (activation, epoch) of the batch CE on train-stage rows
    of the LayerNorm modules, i.e. each of the measured batches' loss repeated once per norm module, as the
    original's seaborn call aggregated them."""
    rows = df[(df.stage == "train") & (df.kind == "norm")]
    curve = rows.groupby(["activation", "beta", "epoch"]).loss.agg(["mean", "std"]).reset_index()
    return curve.sort_values(["beta", "epoch"], ignore_index=True)


def profile_extremes(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. B.4: min and max over width profiles of the mean gap, per (dataset, module)."""
    means = train_stage(df).groupby(["dataset", "profile", "position", "module"], as_index=False).iso_gap.mean()
    return means.groupby(["dataset", "position", "module"], as_index=False).iso_gap.agg(["min", "max"])


def degenerate_modules(df: pd.DataFrame) -> list[str]:
    """Modules whose gap is NaN in every row (their Gram is singular; the originals' absent points)."""
    nan = df.groupby("module").iso_gap.apply(lambda s: bool(s.isna().all()))
    return sorted(nan[nan].index)


def _flag(condition: bool) -> float:
    return 1.0 if condition else 0.0


def _min_step_in_beta_order(values: pd.Series, beta: pd.Series) -> float:
    """The smallest drop of ``values`` (per activation) from one activation to the next larger β: > 0 when they
    strictly decrease as β grows ("larger β, faster decay"), the number the paper's ordering claim states
    (docs/decisions/joudaki2023.md, "Tolerances"); NaN if any is missing."""
    ordered = values.reindex(beta.sort_values().index)
    if ordered.isna().any() or len(ordered) < 2:
        return math.nan
    return float(-np.diff(ordered.to_numpy()).max())


def _min_ln_step(steps: pd.DataFrame) -> float:
    """The smallest isometry change across a LayerNorm (after − before): ≥ 0 when LN never decreases it."""
    return float((steps.after - steps.before).min()) if len(steps) else math.nan


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    frame = pd.DataFrame({"x": x, "y": y}).dropna()
    if len(frame) < 2:
        return math.nan
    return float(frame.x.rank().corr(frame.y.rank()))


# --- claims per item ----------------------------------------------------------------------------------

def _fig2(df: pd.DataFrame, activation: str) -> dict[str, float]:
    rows = df[df.activation == activation]
    profile = module_profile(rows, ("epoch",))
    last = last_epoch(rows)
    out: dict[str, float] = {}
    # A layer the network does not have (a smaller depth than the paper's) gives no quantity: a NaN is a fault
    # (isonorm.verdicts.comparison.judge_smoke).
    modules = set(profile.module)
    for layer in (layer for layer in range(11) if f"norm-{layer}" in modules):
        out[f"init_norm{layer}"] = value_at(profile, f"norm-{layer}", epoch=0)
    for fc in ("fc-0", "fc-9"):
        if fc in modules:
            out[f"init_{fc.replace('-', '')}"] = value_at(profile, fc, epoch=0)
    for layer in (layer for layer in range(1, 11) if f"norm-{layer}" in modules):
        out[f"last_norm{layer}"] = value_at(profile, f"norm-{layer}", epoch=last)
    steps = ln_steps(rows, ("epoch",))
    out["min_ln_step_init"] = _min_ln_step(steps[steps.epoch == 0])
    out["min_ln_step_last"] = _min_ln_step(steps[steps.epoch == last])
    deepest = deepest_norm(rows)
    out["last_block_fc_act_absent"] = _flag(
        {f"fc-{deepest}", f"act-{deepest}"} <= set(degenerate_modules(rows[rows.stage == "train"])))
    return out


def _figb6(df: pd.DataFrame, activations: Sequence[str]) -> dict[str, float]:
    rows = df[df.activation.isin(activations)]
    profile = module_profile(rows)
    last, deepest = last_epoch(rows), deepest_norm(rows)
    out: dict[str, float] = {}
    for activation in activations:
        key = activation.lower()
        if activation != "Sigmoid":  # Sigmoid zig-zags; joudaki2023-figb6 compares its block extremes instead (below)
            out[f"init_deepest_norm_{key}"] = value_at(profile, f"norm-{deepest}", activation=activation, epoch=0)
        out[f"last_deepest_norm_{key}"] = value_at(profile, f"norm-{deepest}", activation=activation, epoch=last)
    # Sigmoid's zig-zag within each block: mean over blocks ℓ = 1..L−1 of the max / min of its three modules.
    sigmoid = profile[(profile.activation == "Sigmoid") & (profile.epoch == 0)
                      & (profile.layer >= 1) & (profile.layer < deepest)]
    per_block = sigmoid.groupby("layer").isometry.agg(["max", "min"])
    out["init_block_max_sigmoid"] = float(per_block["max"].mean()) if len(per_block) else math.nan
    out["init_block_min_sigmoid"] = float(per_block["min"].mean()) if len(per_block) else math.nan
    beta = betas(rows)
    deep = profile[(profile.module == f"norm-{deepest}") & (profile.epoch == 0)].set_index("activation").isometry
    out["init_isometry_beta_rank_correlation"] = _spearman(beta.to_numpy(), deep.reindex(beta.index).to_numpy())
    steps = ln_steps(rows)
    out["min_ln_step_all"] = _min_ln_step(steps)
    return out


def _fig3(df: pd.DataFrame) -> dict[str, float]:
    gaps = norm_gaps(df).set_index(["activation", "layer"]).iso_gap
    beta = betas(df)
    deepest = deepest_norm(df)
    out: dict[str, float] = {}
    for activation in THREE_ACTIVATIONS:
        key = activation.lower()
        out[f"beta_{key}"] = float(beta.get(activation, math.nan))
        out[f"gap_l0_{key}"] = float(gaps.get((activation, 0), math.nan))
        if (activation, 10) in gaps.index:  # a network as deep as the paper's (none at smaller depths)
            out[f"gap_l10_{key}"] = float(gaps[(activation, 10)])
        out[f"theory_l10_{key}"] = float(theory_line(beta[activation], 10)) if activation in beta else math.nan
    for layer in (1, 2, 4):
        if ("ReLU", layer) in gaps.index:
            out[f"gap_l{layer}_relu"] = float(gaps[("ReLU", layer)])
    at_deepest = gaps.xs(deepest, level="layer").reindex(list(THREE_ACTIVATIONS))
    out["min_gap_drop_in_beta_order_deepest"] = _min_step_in_beta_order(
        at_deepest, beta.reindex(list(THREE_ACTIVATIONS)))
    excess = [at_deepest[a] - theory_line(beta[a], deepest) if a in beta else math.nan for a in THREE_ACTIVATIONS]
    out["max_gap_over_theory_deepest"] = float(np.max(excess))
    return out


# Fig. B.4 quantities: (module, statistic) per data set; single values where joudaki2023-figb4 reads one value.
FIGB4_QUANTITIES = {
    "mnist": [("norm-0", "mean"), ("fc-0", "min"), ("fc-0", "max"), *[(f"norm-{l}", s) for l in range(1, 5)
              for s in ("min", "max")], ("norm-5", "mean")],
    "cifar10": [("norm-0", "mean"), *[(f"norm-{l}", s) for l in range(1, 6) for s in ("min", "max")]],
}


def _figb4(df: pd.DataFrame) -> dict[str, float]:
    means = train_stage(df).groupby(["dataset", "profile", "module", "kind", "layer"], as_index=False).iso_gap.mean()
    out: dict[str, float] = {}
    measured = set(means.dataset)
    for dataset, quantities in FIGB4_QUANTITIES.items():
        if dataset not in measured:
            continue  # its job did not run (a failed download at the end of a run): its rows stay unmeasured
        for module, statistic in quantities:
            values = means[(means.dataset == dataset) & (means.module == module)].iso_gap
            key = f"{dataset}_{module.replace('-', '')}" + ("" if statistic == "mean" else f"_{statistic}")
            out[key] = float(values.agg(statistic)) if len(values) else math.nan
    # "Act layers sit higher than the adjacent norm layers": gap(act-ℓ) > gap(norm-(ℓ+1)) in every profile.
    # Both relations scored as the numbers they state (docs/decisions/joudaki2023.md, "Tolerances").
    higher = []
    decays = []
    absent = []
    for (dataset, profile), group in means.groupby(["dataset", "profile"]):
        gap = group.set_index("module").iso_gap
        deepest = int(group[group.kind == "norm"].layer.max())
        higher += [gap[f"act-{l}"] - gap[f"norm-{l + 1}"] for l in range(deepest)]
        decays.append(gap[f"norm-{deepest}"] - gap["norm-1"])
        absent.append(bool(np.isnan(gap.get(f"fc-{deepest}", np.nan)) and np.isnan(gap.get(f"act-{deepest}", np.nan))))
    out["min_act_over_next_norm"] = float(np.min(higher)) if higher else math.nan
    out["max_deepest_minus_norm1"] = float(np.max(decays)) if decays else math.nan
    out["last_block_fc_act_absent"] = _flag(bool(absent) and all(absent))
    return out


def _fig7(df: pd.DataFrame) -> dict[str, float]:
    curve = loss_curve(df).set_index(["activation", "epoch"])["mean"]
    last = last_epoch(df)
    out: dict[str, float] = {}
    for activation in THREE_ACTIVATIONS:
        key = activation.lower()
        out[f"loss_e0_{key}"] = float(curve.get((activation, 0), math.nan))
        out[f"loss_e1_{key}"] = float(curve.get((activation, 1), math.nan))
        out[f"loss_last_{key}"] = float(curve.get((activation, last), math.nan))
    for epoch in (2, 4, 6):
        if ("ReLU", epoch) in curve.index:  # an epoch the run reaches (a shorter training has fewer)
            out[f"loss_e{epoch}_relu"] = float(curve[("ReLU", epoch)])
    finals = curve.xs(last, level="epoch").reindex(list(THREE_ACTIVATIONS))
    out["min_final_loss_drop_in_beta_order"] = _min_step_in_beta_order(
        finals, betas(df).reindex(list(THREE_ACTIVATIONS)))
    return out


def _figb7(df: pd.DataFrame) -> dict[str, float]:
    gaps = norm_gaps(df, ("activation", "epoch")).set_index(["activation", "epoch", "layer"]).iso_gap
    last, deepest = last_epoch(df), deepest_norm(df)
    out: dict[str, float] = {}
    changes = []
    for activation in THREE_ACTIVATIONS:
        key = activation.lower()
        start = float(gaps.get((activation, 0, deepest), math.nan))
        end = float(gaps.get((activation, last, deepest), math.nan))
        out[f"gap_l0_e0_{key}"] = float(gaps.get((activation, 0, 0), math.nan))
        out[f"gap_deepest_e0_{key}"] = start
        out[f"gap_deepest_last_{key}"] = end
        changes.append(abs(end - start) / start)
    out["max_relative_change_deepest"] = float(np.max(changes)) if not np.isnan(changes).any() else math.nan
    return out


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, Measured]]:
    """Item id → {quantity: value with its seed spread over runs} for notebooks/reference/joudaki2023.yaml;
    missing result keys are skipped (Fig. B.4 makes one run: no spread).

    ``cfg`` is the ``joudaki2023`` config section; Fig. 2's activation and Fig. B.6's activation set come from
    ``fig2_runs`` (``fig2_activation``, ``figb6_activations``).
    """
    out: dict[str, dict[str, Measured]] = {}
    if results.get("fig2_runs"):
        df = read_all_results(results["fig2_runs"])
        runs = cfg["fig2_runs"]
        out["joudaki2023-fig2"] = measured_with_spread(lambda f: _fig2(f, runs["fig2_activation"]), df)
        out["joudaki2023-figb6"] = measured_with_spread(lambda f: _figb6(f, runs["figb6_activations"]), df)
    if results.get("fig3"):
        out["joudaki2023-fig3"] = measured_with_spread(_fig3, read_all_results(results["fig3"]))
    if results.get("figb4"):
        out["joudaki2023-figb4"] = measured_with_spread(_figb4, read_all_results(results["figb4"]))
    if results.get("fig7_runs"):
        df = read_all_results(results["fig7_runs"])
        out["joudaki2023-fig7"] = measured_with_spread(_fig7, df)
        out["joudaki2023-figb7"] = measured_with_spread(_figb7, df)
    return out
