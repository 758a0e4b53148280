"""Reductions of the at-init results and Table D1, shared by the notebook and the claims (meterez2024-fig1 … meterez2024-fige2).

Every reduction drops non-finite values (float32 overflow, decision C11) and reports how many it dropped, so
captions can count them. ``claims`` maps each item suffix to the quantities of notebooks/reference/
meterez2024.yaml for the at-init items and Table D1; a result key that is absent (not run) is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...verdicts.claims import Measured, blocks, spread_over_runs
from ...results import read_all_results

# Thresholds of the qualitative claims. They only turn the paper's words into a yes/no; each is far from
# the values the paper shows ([RO] read-offs), so the verdict does not hinge on them.
FLAT_TOLERANCE = 1.0  # "flat"/"bounded": max − min of the depth curve below 1 log-unit (Figs. 2, 3)
EXPLODES = 5.0  # "explodes": the deepest point lies > 5 log-units above the shallowest (Figs. 2, 3)
BOUNDED = 5.0  # "stay bounded": every with-gain mean within ±5 log-units (Fig. 5 right)
NONFINITE_MAJORITY = 0.5  # a point is "missing" (inf/NaN in float32) when most runs overflowed (Fig. 5, C11)
COINCIDE = 0.01  # E1 "the ℓ-curves nearly coincide": spread across ℓ below 0.01 (axis 0–0.1)


def finite_stats(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group: mean, std (ddof 1) and seed spread (95 % CI half-width, ``spread_over_runs``) of the finite
    values, their count, and the count of non-finite ones."""
    finite = np.isfinite(frame["value"].to_numpy(dtype=float))
    grouped = frame.assign(_finite=finite, _v=frame["value"].where(finite)).groupby(list(by), dropna=False)
    return grouped.agg(mean=("_v", "mean"), std=("_v", "std"), spread=("_v", spread_over_runs), n=("_finite", "sum"),
                       nonfinite=("_finite", lambda s: int((~s).sum()))).reset_index()


def nonfinite_count(frame: pd.DataFrame) -> int:
    """Number of non-finite values (dropped from plots, counted in captions: decision C11)."""
    return int((~np.isfinite(frame["value"].to_numpy(dtype=float))).sum())


def fig1_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean φ per (width, source, layer); theory has one value per layer."""
    return finite_stats(frame, ["width", "source", "layer"])


def depth_curves(frame: pd.DataFrame, metric: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean over runs of ``metric`` per (by…, depth[, layer])."""
    sub = frame[frame["metric"] == metric]
    return finite_stats(sub, [*by, "depth", "layer"])


def rate_means(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean R over runs per (by…, layer) for the rate rows (Figs. E1, E2)."""
    return finite_stats(frame[frame["metric"] == "rate"], [*by, "layer"])


def explosion_fit(frame: pd.DataFrame) -> pd.DataFrame:
    """Per activation: least squares of log R on log α, pooled over ℓ (decision C6), R ≤ 0 excluded.

    Fitted on the plotted points (the run means per (ℓ, α)); returns activation, c1, c2, points used.
    """
    means = rate_means(frame, ["activation", "gain"])
    rows = []
    for activation, group in means.groupby("activation"):
        usable = group[(group["mean"] > 0) & np.isfinite(group["mean"])]
        if len(usable["gain"].unique()) < 2:
            rows.append(dict(activation=activation, c1=np.nan, c2=np.nan, points=len(usable)))
            continue
        c2, log_c1 = np.polyfit(np.log(usable["gain"].astype(float)), np.log(usable["mean"]), 1)
        rows.append(dict(activation=activation, c1=float(np.exp(log_c1)), c2=float(c2), points=len(usable)))
    return pd.DataFrame(rows)


def rank_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Table D1: mean ± std (ddof 1) over batches of the rank and the mean cosine, per (dataset, n)."""
    table = frame.groupby(["dataset", "n", "metric"])["value"].agg(["mean", "std"]).unstack("metric")
    table.columns = [f"{metric}_{stat}" for stat, metric in table.columns]
    return table.reset_index()


def largest_n_cosines(frame: pd.DataFrame) -> pd.Series:
    """Table D1's note: the mean signed off-diagonal cosine per data set at the largest n, which names the
    series (App. D quotes it at n = 512, decision C10)."""
    summary = rank_summary(frame)
    largest = int(summary["n"].max())
    return summary[summary["n"] == largest].set_index("dataset")["mean_cosine_mean"].rename(largest)


def rank_table_text(frame: pd.DataFrame, order: Sequence[str] = ("cifar10", "mnist", "fashionmnist", "cifar100")) -> pd.DataFrame:
    """Table D1 as the paper prints it: data sets × n with "mean ± std" cells (2 decimals)."""
    summary = rank_summary(frame)
    summary["cell"] = [f"{m:.2f} ± {s:.2f}" for m, s in zip(summary["rank_mean"], summary["rank_std"].fillna(0))]
    table = summary.pivot(index="dataset", columns="n", values="cell")
    table.columns = [f"n={n}" for n in table.columns]
    return table.reindex([d for d in order if d in table.index] + [d for d in table.index if d not in order])


# --- claims ------------------------------------------------------------------------------------------------------
# Every at-init quantity carries its seed spread over the item's 10 runs (verdicts.claims.Measured; docs/decisions/
# meterez2024.md "Tolerances"): a quantity of a mean curve (a level, a log of a mean, a difference of two curves)
# is recomputed per run and the spread is that of the per-run values. A relation the paper states in words
# ("decays", "lies above", "grows") is scored as the number it is about (a log ratio, the smallest offset), so a
# flat curve or seed noise cannot pass it.


def _where(frame: pd.DataFrame, **where: Any) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in where.items():
        mask &= (frame[key] == value).to_numpy()
    return frame[mask]


def _mean_at(stats: pd.DataFrame, **where: Any) -> float:
    values = _where(stats, **where)["mean"]
    return float(values.iloc[0]) if len(values) else float("nan")


def _per_run(frame: pd.DataFrame, **where: Any) -> pd.Series:
    """One value per run (indexed by run) of the rows selected by ``where``; non-finite ones as NaN."""
    rows = _where(frame, **where)
    values = rows["value"].astype(float).where(np.isfinite(rows["value"].astype(float)))
    return pd.Series(values.to_numpy(), index=rows["run"].to_numpy())


def _with_spread(value: float, per_run: pd.Series | np.ndarray) -> Measured:
    """``value`` (a quantity of the mean curve) with the seed spread of its per-run values."""
    per_run = np.asarray(per_run, dtype=float)
    return Measured(float(value), spread_over_runs(per_run), float(np.isfinite(per_run).sum()))


def _log10(values: pd.Series) -> pd.Series:
    return np.log10(values.where(values > 0))


def _flag(condition: bool) -> float:
    return 1.0 if condition else 0.0


def _fig1_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    curves = fig1_curves(frame)
    last = int(frame["layer"].max())
    out: dict[str, float | Measured] = {}
    decay = {}
    for width in sorted(frame["width"].unique()):
        emp0, emp_last = (_mean_at(curves, width=width, source="empirical", layer=ell) for ell in (0, last))
        th0, th_last = (_mean_at(curves, width=width, source="theory", layer=ell) for ell in (0, last))
        run0, run_last = (_log10(_per_run(frame, width=width, source="empirical", layer=ell)) for ell in (0, last))
        out[f"log10_empirical_d{width}_first"] = _with_spread(np.log10(emp0), run0)
        out[f"log10_empirical_d{width}_last"] = _with_spread(np.log10(emp_last), run_last)
        out[f"log10_theory_d{width}_first"] = float(np.log10(th0))  # a closed form of the input: no seed spread
        out[f"log10_theory_d{width}_last"] = float(np.log10(th_last))
        # Theorem 1's own decay over the layers: what the line's formula sets, whatever the input's level
        out[f"log10_theory_decay_d{width}"] = float(np.log10(th_last / th0))
        # "decays with depth": log10 φ(last)/φ(first), per run (≤ 0 claimed)
        decay[width] = run_last - run0
        out[f"log10_decay_d{width}"] = _with_spread(np.log10(emp_last / emp0), decay[width])
        out[f"theory_equals_empirical_at_input_d{width}"] = _flag(abs(emp0 - th0) <= 1e-3 * th0)
    widths = sorted(decay)
    if len(widths) > 1:  # "the rate depends on width": the wider network decays less (difference ≥ 0 claimed)
        wide, narrow = decay[widths[-1]], decay[widths[0]]
        gap = out[f"log10_decay_d{widths[-1]}"].value - out[f"log10_decay_d{widths[0]}"].value
        out["log10_decay_width_gap"] = _with_spread(gap, (wide - narrow).dropna())
    return out


def _depth_ends(curve: pd.DataFrame) -> tuple[float, float, float]:
    """(value at the smallest depth, at the largest depth, max − min over depths) of a depth curve."""
    curve = curve.sort_values("depth")
    return float(curve["mean"].iloc[0]), float(curve["mean"].iloc[-1]), float(curve["mean"].max() - curve["mean"].min())


def _level(row: pd.Series) -> Measured:
    """A depth curve's point (run mean) with its seed spread (``finite_stats``' ``spread``)."""
    return Measured(float(row["mean"]), float(row["spread"]))


def _fig2_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    curves = depth_curves(frame, "log_grad", ["input"])
    out: dict[str, float | Measured] = {}
    names = {"batch": "nondegenerate", "degenerate": "degenerate"}
    for kind, name in names.items():
        for _, row in curves[curves["input"] == kind].iterrows():
            out[f"{name}_depth{int(row['depth'])}"] = _level(row)
    _, last_n, span_n = _depth_ends(curves[curves["input"] == "batch"])
    first_d, last_d, _ = _depth_ends(curves[curves["input"] == "degenerate"])
    out["nondegenerate_flat"] = _flag(span_n < FLAT_TOLERANCE)
    out["degenerate_explodes"] = _flag(last_d - first_d > EXPLODES and last_d > last_n + EXPLODES)
    return out


def _fig3_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    curves = depth_curves(frame, "log_grad", ["init"])
    out: dict[str, float | Measured] = {}
    for init, name in (("orthogonal", "orthogonal"), ("xavier_normal", "normal")):
        for _, row in curves[curves["init"] == init].iterrows():
            out[f"{name}_depth{int(row['depth'])}"] = _level(row)
    _, _, span_o = _depth_ends(curves[curves["init"] == "orthogonal"])
    normal = curves[curves["init"] == "xavier_normal"].sort_values("depth")
    first, last, _ = _depth_ends(normal)
    out["orthogonal_bounded"] = _flag(span_o < FLAT_TOLERANCE)
    out["normal_grows"] = _flag(last - first > EXPLODES)
    depths = normal["depth"].to_numpy(dtype=float)
    sub = frame[(frame["metric"] == "log_grad") & (frame["init"] == "xavier_normal")]
    per_run = (_per_run(sub, depth=depths[-1]) - _per_run(sub, depth=depths[0])) / (depths[-1] - depths[0])
    out["normal_slope_per_layer"] = _with_spread((last - first) / (depths[-1] - depths[0]), per_run)
    return out


def _gain_name(exponent: float) -> str:
    return "without_gain" if exponent == 0 else "with_gain"


def _fig5_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    curves = depth_curves(frame, "log_grad", ["gain_exponent", "activation"])
    out: dict[str, float | Measured] = {}
    for _, row in curves.iterrows():
        key = f"{_gain_name(row['gain_exponent'])}_{row['activation']}_depth{int(row['depth'])}"
        total = row["n"] + row["nonfinite"]
        out[key] = _level(row)
        out[f"{key}_nonfinite"] = _flag(total > 0 and row["nonfinite"] / total > NONFINITE_MAJORITY)
    with_gain = curves[curves["gain_exponent"] != 0]
    out["with_gain_all_bounded"] = _flag(
        len(with_gain) > 0 and int(with_gain["nonfinite"].sum()) == 0 and bool((with_gain["mean"].abs() < BOUNDED).all()))
    without = curves[(curves["gain_exponent"] == 0) & (curves["activation"] != "identity")]
    shallow, deep = without["depth"].min(), without["depth"].max()
    # "non-linear networks explode without gain": a deep point is non-finite or far above the shallowest
    exploded = []
    for activation, group in without.groupby("activation"):
        first = _mean_at(group, depth=shallow)
        exploded.append(bool((group["nonfinite"] > 0).any()) or _mean_at(group, depth=deep) - first > EXPLODES)
    out["without_gain_nonlinear_explode"] = _flag(bool(exploded) and all(exploded))
    return out


def _figg5_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    without = frame[frame["gain_exponent"] == 0]
    curves = depth_curves(without, "last_isogap", ["activation"])
    gaps = without[without["metric"] == "last_isogap"]
    out: dict[str, float | Measured] = {}
    for _, row in curves.iterrows():
        per_run = _log10(_per_run(gaps, activation=row["activation"], depth=row["depth"]))
        out[f"log10_isogap_{row['activation']}_depth{int(row['depth'])}"] = _with_spread(np.log10(row["mean"]), per_run)
    identity = curves[curves["activation"] == "identity"]
    if len(identity):  # "the identity's gap decays with depth": log10 φ(deepest)/φ(shallowest), ≤ 0 claimed
        first, last, _ = _depth_ends(identity)
        shallow, deep = identity["depth"].min(), identity["depth"].max()
        per_run = (_log10(_per_run(gaps, activation="identity", depth=deep))
                   - _log10(_per_run(gaps, activation="identity", depth=shallow)))
        out["identity_log10_isogap_drop"] = _with_spread(np.log10(last / first), per_run)
    tanh = curves[curves["activation"] == "tanh"]
    if len(tanh):  # "once the isometry gap plateaus": tanh's gap stays of order one at every depth
        out["tanh_isogap_plateaus"] = _flag(bool((tanh["mean"] > 0.3).all()))
    return out


def _figg6_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    curves = depth_curves(frame, "log_grad", ["mean_reduction"])
    grads = frame[frame["metric"] == "log_grad"]
    out: dict[str, float | Measured] = {}
    for _, row in curves.iterrows():
        out[f"{'with' if row['mean_reduction'] else 'without'}_depth{int(row['depth'])}"] = _level(row)
    wide = curves.pivot(index="depth", columns="mean_reduction", values="mean")
    if True in wide.columns and False in wide.columns:
        offset = wide[True] - wide[False]
        # per run: the offset curve (run r of each variant), its mean and its minimum over depths
        per_depth = pd.DataFrame({depth: _per_run(grads, mean_reduction=True, depth=depth)
                                  - _per_run(grads, mean_reduction=False, depth=depth) for depth in wide.index})
        out["mean_offset"] = _with_spread(offset.mean(), per_depth.mean(axis=1))
        # "with lies above without at every depth": the smallest offset over depths, ≥ 0 claimed
        out["min_offset"] = _with_spread(offset.min(), per_depth.min(axis=1))
    return out


def _run_fits(frame: pd.DataFrame) -> pd.DataFrame:
    """``explosion_fit`` of each run alone (activation, run, c1, c2): the seed spread of the fitted curve."""
    rows = []
    for run, part in frame[frame["metric"] == "rate"].groupby("run"):
        rows += [dict(fit, run=run) for fit in explosion_fit(part).to_dict("records")]
    return pd.DataFrame(rows)


def _fige1_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    per_layer = rate_means(frame, ["activation", "gain"])
    pooled = per_layer.groupby(["activation", "gain"])["mean"].agg(["mean", lambda s: s.max() - s.min()])
    pooled.columns = ["mean", "spread"]
    rates = frame[frame["metric"] == "rate"]
    out: dict[str, float | Measured] = {}
    for (activation, gain), row in pooled.iterrows():
        per_run = _where(rates, activation=activation, gain=gain).groupby("run")["value"].mean()
        out[f"{activation}_alpha{gain:g}"] = _with_spread(row["mean"], per_run)
    for activation, group in pooled.groupby(level="activation"):
        out[f"{activation}_curves_coincide"] = _flag(bool((group["spread"].fillna(np.inf) < COINCIDE).all()))
    runs = _run_fits(frame)
    for _, fit in explosion_fit(frame).iterrows():
        mine = runs[runs["activation"] == fit["activation"]] if len(runs) else runs
        out[f"{fit['activation']}_c2"] = _with_spread(fit["c2"], mine["c2"] if len(mine) else [])
        for alpha in (0.5, 0.9):
            per_run = mine["c1"] * alpha ** mine["c2"] if len(mine) else []
            out[f"{fit['activation']}_fit_alpha{alpha:g}"] = _with_spread(fit["c1"] * alpha ** fit["c2"], per_run)
    return out


def _fige2_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    means = rate_means(frame, ["activation", "gain_exponent", "depth"])
    rates = frame[frame["metric"] == "rate"]
    out: dict[str, float | Measured] = {}
    for _, row in means.iterrows():
        out[f"{row['activation']}_depth{int(row['depth'])}_exp{-row['gain_exponent']:g}"] = _level(row)
    for activation, group in means.groupby("activation"):
        # "the rate grows with the exponent": R(10) at the weakest shaping minus at the strongest, per depth; the
        # smallest over depths is the number the claim is about (≥ 0 claimed)
        gaps, per_run = [], []
        for depth, per_depth in group.groupby("depth"):
            per_depth = per_depth.sort_values("gain_exponent")  # a small = exponent near 0 = strong gain
            weak, strong = per_depth["gain_exponent"].iloc[0], per_depth["gain_exponent"].iloc[-1]
            gaps.append(float(per_depth["mean"].iloc[0]) - float(per_depth["mean"].iloc[-1]))
            per_run.append(_per_run(rates, activation=activation, depth=depth, gain_exponent=weak)
                           - _per_run(rates, activation=activation, depth=depth, gain_exponent=strong))
        out[f"{activation}_rate_gain_min"] = _with_spread(min(gaps), pd.concat(per_run, axis=1).min(axis=1))
    return out


def _std_with_spread(values: np.ndarray, count: int = 10) -> Measured:
    """The std (ddof 1) of the per-batch values with its seed spread: the variance is the mean of the squared
    deviations (× n/(n−1)), whose spread over ``count`` blocks of batches maps to the std as spread / (2·std). Its
    runs are the batches it is taken over, so that a printed std over as many batches (``paper_runs``) brings the
    same sampling noise into the tolerance."""
    std = float(np.std(values, ddof=1)) if values.size > 1 else math.nan
    if values.size < 2 * count:
        return Measured(std, runs=float(values.size))
    squared = (values - values.mean()) ** 2 * values.size / (values.size - 1)
    spread = spread_over_runs(blocks(squared, count))
    return Measured(std, 0.0 if std == 0 else spread / (2 * std), float(values.size))


def _tabled1_claims(frame: pd.DataFrame) -> dict[str, float | Measured]:
    summary = rank_summary(frame)
    out: dict[str, float | Measured] = {}
    for _, row in summary.iterrows():
        batches = _where(frame, dataset=row["dataset"], n=row["n"])
        ranks = batches[batches["metric"] == "rank"]["value"]
        out[f"{row['dataset']}_n{int(row['n'])}_rank_mean"] = _with_spread(row["rank_mean"], ranks)
        out[f"{row['dataset']}_n{int(row['n'])}_rank_std"] = _std_with_spread(ranks.to_numpy(dtype=float))
    for dataset, group in summary.groupby("dataset"):
        largest = group.loc[group["n"].idxmax()]
        cosines = _where(frame, dataset=dataset, n=largest["n"], metric="mean_cosine")["value"]
        out[f"{dataset}_mean_cosine_n{int(largest['n'])}"] = _with_spread(largest["mean_cosine_mean"], cosines)
        small = group[group["n"] <= 64]  # "batches are full rank for small n" (App. D)
        out[f"{dataset}_full_rank_small_n"] = _flag(bool((small["rank_mean"] == small["n"]).all()))
    return out


CLAIMS = {  # item id → (result key, reduction)
    "meterez2024-fig1": ("fig1", _fig1_claims),
    "meterez2024-fig2": ("fig2", _fig2_claims),
    "meterez2024-fig3": ("fig3", _fig3_claims),
    "meterez2024-fig5": ("fig5", _fig5_claims),
    "meterez2024-figg5": ("fig5", _figg5_claims),  # same runs as Fig. 5 (meterez2024-figg5)
    "meterez2024-figg6": ("figg6", _figg6_claims),
    "meterez2024-fige1": ("fige1", _fige1_claims),
    "meterez2024-fige2": ("fige2", _fige2_claims),
    "meterez2024-tabled1": ("tabled1", _tabled1_claims),
}


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any] | None = None) -> dict[str, dict[str, float | Measured]]:
    """Item id → {quantity: value or Measured (value, seed spread)} for the at-init items and Table D1; absent result keys are skipped.

    ``cfg`` (the paper's config) is accepted for the shared claims signature; the reductions need none of it.
    """
    out: dict[str, dict[str, float]] = {}
    for item, (key, reduce) in CLAIMS.items():
        paths = results.get(key)
        if paths:
            out[item] = reduce(read_all_results(paths))
    return out
