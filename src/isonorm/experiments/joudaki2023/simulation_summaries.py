"""Reductions of the mean-field simulator results shared by the notebook and the scoreboard.

The originals plot these results with two helpers (D.0 (A)):

* ``plot_line_graph`` (Figs. 4, 5, 6, 8a, 8b, 9, B.2, B.3) does not filter by stage, so each point at
  l ≥ 1 is the mean over the pre_norm AND post_norm rows of every run (2 × runs values) and l = 0 is the
  input row. Decision D4: keep this ("faithful"); the post_norm-only variant is kept for QA.
* ``plot_line`` (Fig. A.1 and the extra panel of Fig. B.2) keeps post_norm rows only and overlays a theory
  column.

Seaborn drops NaN rows before averaging; a mean that is infinite is not drawn either. ``line_means`` does
the same and reports both as NaN, a missing point. ``claims`` measures the quantities of the reference file
(notebooks/reference/joudaki2023.yaml) on these plotted values; read-offs from log-scale figures are
compared as log10 values.

Alternative readings (decision D19) come as result keys ``<experiment>--<reading>``: Fig. 5 with the
originals' Monte Carlo constants (D20), Fig. 6's exp curve and Fig. 9's MF curves over 100 runs instead of 10
(D21, D23), Fig. 9's MF curves with the constants the originals printed (D23), Fig. 8a at a narrower width (D22). Their quantities carry the reading in their name; a reading
with more runs is pooled with the item's own runs (:func:`pooled_runs`) and split into blocks of the item's
run count (:func:`block_means`) to show how much a mean over that many runs varies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from ...verdicts.claims import Measured, measured_over_runs
from ...results import read_all_results
from .spreads import Reducer, measured_with_spread, per_block

Convention = Literal["faithful", "post_norm"]
Claims = dict[str, dict[str, "float | Measured"]]

RESULT_KEYS = {
    "joudaki2023-fig4": "fig4", "joudaki2023-fig5": "fig5_6", "joudaki2023-fig6": "fig5_6",
    "joudaki2023-fig8a": "fig8a", "joudaki2023-fig8b": "fig8b", "joudaki2023-fig9": "fig9",
    "joudaki2023-figa1": "figa1", "joudaki2023-figb2": "figb2", "joudaki2023-figb3": "figb3",
}
"""Result key (one Parquet file per simulator experiment) of each item id; Figs. 5 and 6 share one grid."""

SIMULATOR_ITEMS = tuple(RESULT_KEYS)
"""Item ids of the simulator figures (architecture §2), in the paper's order."""

READINGS = {"joudaki2023-fig5": ("fig5_6--mc_constants",), "joudaki2023-fig6": ("fig5_6--more_runs",),
            "joudaki2023-fig8a": ("fig8a--narrow",), "joudaki2023-fig9": ("fig9--more_runs", "fig9--mc_constants")}
"""Result keys of the alternative readings each item draws or scores beside its default (decisions D19–D23)."""

CONFIG_COLUMNS = ("activation", "centering", "normalization", "activation_first", "gain", "bias", "degeneracy",
                  "batch", "width", "depth")

# Which configurations each plot_line_graph figure shows, and which column is its hue, by item id.
PLOTTED = {
    "joudaki2023-fig4": ("centering", ["mf", "layer"]),  # D10: MF first = blue, layer second = orange (caption)
    "joudaki2023-fig5": ("normalization", ["none", "layer"]),
    "joudaki2023-fig6": ("normalization", ["layer", "mf"]),
    "joudaki2023-fig8a": ("activation", ["relu", "tanh", "selu"]),
    "joudaki2023-fig8b": ("activation_first", [True, False]),
    "joudaki2023-fig9": ("normalization", ["mf", "layer"]),
    "joudaki2023-figb2": ("gain", [0.5, 1.0, 2.0]),
    "joudaki2023-figb3": ("variant", ["MF", "xavier"]),
}

EXP_MF_THRESHOLD = 10.0
"""Fig. 6's read-off: the exp curve with MF normalization exceeds 10 within the first layers (decision D21)."""
EARLY_LAST_LAYER = 6
"""The last layer of "the first layers" of that read-off: where the exp curve spikes before it blows up (D21)."""


def line_rows(frame: pd.DataFrame, convention: Convention = "faithful") -> pd.DataFrame:
    """The rows a line graph averages per layer: input at l = 0, then both stages (faithful, D4) or post_norm."""
    if convention == "faithful":
        return frame
    if convention == "post_norm":
        return frame[frame.stage.isin(["input", "post_norm"])]
    raise ValueError(f"convention {convention!r} is not 'faithful' or 'post_norm'")


def line_means(
    frame: pd.DataFrame, by: Sequence[str], y: str = "iso_gap", convention: Convention = "faithful"
) -> pd.DataFrame:
    """The plotted value per (``by``, layer): mean of ``y`` over runs (and stages), as seaborn draws it.

    NaN values are dropped before averaging (seaborn's ``dropna``); a layer without a finite value, or whose
    mean is infinite, gets NaN: the originals show it as a missing point.
    """
    rows = line_rows(frame, convention)
    means = rows.groupby([*by, "layer"], dropna=False)[y].mean().reset_index()
    means[y] = means[y].where(np.isfinite(means[y]))
    return means


def select(frame: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    """Rows whose columns equal the given values (floats compared with a tolerance)."""
    mask = pd.Series(True, index=frame.index)
    for column, value in equal.items():
        if isinstance(value, float):
            mask &= np.isclose(frame[column].astype(float), value)
        else:
            mask &= frame[column] == value
    return frame[mask]


def value_at(means: pd.DataFrame, layer: int, y: str = "iso_gap", **equal: Any) -> float:
    """The plotted value at ``layer`` of the curve selected by ``equal`` (NaN when missing)."""
    hit = select(means, layer=layer, **equal)
    return float(hit[y].iloc[0]) if len(hit) == 1 else math.nan


def curve(means: pd.DataFrame, y: str = "iso_gap", **equal: Any) -> pd.Series:
    """One plotted curve as a Series indexed by layer."""
    return select(means, **equal).set_index("layer")[y].sort_index()


def plotted_curve(frame: pd.DataFrame, **equal: Any) -> pd.Series:
    """The curve a figure draws for the rows ``equal`` selects: their :func:`line_means` over all their runs."""
    return curve(line_means(select(frame, **equal), []))


def early_part(series: pd.Series, last_layer: int = EARLY_LAST_LAYER) -> pd.Series:
    """A curve at ℓ = 1 … ``last_layer``: where Fig. 6's exp curve spikes before it blows up (decision D21)."""
    return series[(series.index >= 1) & (series.index <= last_layer)]


def last_finite_layer(series: pd.Series) -> float:
    """The deepest layer with a drawn point (NaN if none): where a diverging curve stops."""
    finite = series[np.isfinite(series)]
    return float(finite.index.max()) if len(finite) else math.nan


def first_layer_above(series: pd.Series, threshold: float) -> float:
    """The first layer whose plotted value exceeds ``threshold`` (NaN if never)."""
    above = series[series > threshold]
    return float(above.index.min()) if len(above) else math.nan


def log10(value: float) -> float:
    """log10 for read-offs from log-scale axes ([RO] rule: compare on log10 values); NaN stays NaN."""
    return math.log10(value) if value > 0 else math.nan


def max_log10_gap_between(a: pd.Series, b: pd.Series, from_layer: int = 1) -> float:
    """Largest |log10 a − log10 b| over the layers ≥ ``from_layer`` where both curves are drawn."""
    both = pd.concat([a, b], axis=1).dropna()
    both = both[(both.index >= from_layer) & (both > 0).all(axis=1)]
    return float(np.abs(np.log10(both.iloc[:, 0]) - np.log10(both.iloc[:, 1])).max()) if len(both) else math.nan


def pooled_runs(default: pd.DataFrame, more: pd.DataFrame) -> pd.DataFrame:
    """The configurations of ``more`` (a reading with more runs, D19) with the default's runs of the same
    configurations prepended: one sample of every run. Overlapping run indices are an error (the reading's
    ``first_run`` must be at least the item's ``runs``), since a run would then count twice."""
    keys = [c for c in CONFIG_COLUMNS if c in more.columns]
    configurations = more[keys].drop_duplicates()
    own = default.merge(configurations, on=keys, how="inner")
    overlap = set(own.run) & set(more.run)
    if overlap:
        raise ValueError(f"the extra runs repeat run indices {sorted(overlap)[:5]} of the item's own runs; set the "
                         "reading's first_run to the item's runs (decision D19)")
    return pd.concat([own, more], ignore_index=True)


def block_means(frame: pd.DataFrame, by: Sequence[str], block_runs: int, y: str = "iso_gap",
                convention: Convention = "faithful") -> pd.DataFrame:
    """:func:`line_means` of each block of ``block_runs`` consecutive run indices (run // block_runs), with a
    ``block`` column: what a figure averaging that many runs would draw, once per independent block."""
    if block_runs < 1:
        raise ValueError(f"block_runs must be ≥ 1, got {block_runs}")
    blocks = frame.assign(block=frame.run // block_runs)
    return line_means(blocks, [*by, "block"], y=y, convention=convention)


def block_bands(pooled: pd.DataFrame, column: str, block_runs: int) -> dict[Any, pd.DataFrame]:
    """Per value of ``column`` (a figure's panel) of a reading pooled with the default's runs (decision D19):
    per layer the ``min`` and ``max`` over the :func:`block_means` of ``block_runs`` runs, and the ``mean`` over
    all runs (the :func:`plotted_curve`)."""
    bands = {}
    for value, rows in pooled.groupby(column, sort=False):
        spread = block_means(rows, [], block_runs).groupby("layer").iso_gap.agg(["min", "max"])
        bands[value] = spread.assign(mean=plotted_curve(rows))
    return bands


def block_crossings(rows: pd.DataFrame, block_runs: int, threshold: float = EXP_MF_THRESHOLD) -> list[float]:
    """The first layer above ``threshold`` of each block's mean of ``block_runs`` runs, in block order (NaN where
    a block never crosses): where a figure averaging that many runs would cross it (decision D21)."""
    return [first_layer_above(curve(block), threshold)
            for _, block in block_means(rows, [], block_runs).groupby("block")]


def convention_table(frame: pd.DataFrame, hue: str) -> pd.DataFrame:
    """QA of decision D4: each curve's value at the last layer averaged as the originals did (both stages) and
    over post_norm rows only; one row per (activation, width, ``hue``) curve."""
    by = list(dict.fromkeys(["activation", "width", hue]))
    last = frame.layer.max()
    both = {}
    for convention in ("faithful", "post_norm"):
        means = line_means(frame, by, convention=convention)
        both[convention] = means[means.layer == last]
    merged = both["faithful"].merge(both["post_norm"], on=[*by, "layer"], suffixes=(" (D4)", " post_norm only"))
    merged.insert(0, "curve", merged[by].astype(str).agg(", ".join, axis=1))
    return merged[["curve", "layer", "iso_gap (D4)", "iso_gap post_norm only"]]


def runs_label(frame: pd.DataFrame) -> str:
    """``"100runs"``: the number of distinct runs of ``frame``, as a quantity suffix."""
    return f"{frame.run.nunique()}runs"


def theory_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``plot_line``'s rows: post_norm only (Fig. A.1; the extra Fig. B.2 panel)."""
    return frame[frame.stage == "post_norm"]


def gain_prediction(frame: pd.DataFrame, factor: float) -> pd.DataFrame:
    """Fig. B.2's extra panel: post_norm rows with ``prediction`` = factor·iso_gap0/β(σ(α·))^ℓ (joudaki2023-figb2)."""
    rows = theory_rows(frame).copy()
    rows["prediction"] = factor * rows.iso_gap0 / rows.beta_gain**rows.layer
    return rows


# --- claims -------------------------------------------------------------------------------------------


def _fig4(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["activation", "centering"])
    out: dict[str, float] = {}
    points = {"relu": (1, 15, 30), "tanh": (30,), "sigmoid": (1, 30), "exp": (30,)}
    diffs = []
    for act, layers in points.items():
        out[f"log10_gap_{act}_l0"] = log10(value_at(means, 0, activation=act, centering="layer"))
        for centering in ("layer", "mf"):
            for layer in layers:
                out[f"log10_gap_{act}_{centering}_l{layer}"] = log10(
                    value_at(means, layer, activation=act, centering=centering))
        diffs.append(max_log10_gap_between(curve(means, activation=act, centering="layer"),
                                           curve(means, activation=act, centering="mf")))
    out["max_log10_diff_mf_vs_layer"] = float(np.nanmax(diffs)) if not np.all(np.isnan(diffs)) else math.nan
    return out


def _fig5(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["activation", "normalization"])
    out = {"log10_gap_l0": log10(float(select(means, layer=0).iso_gap.mean()))}
    for act in ("relu", "tanh", "sigmoid", "exp"):
        out[f"log10_gap_{act}_layer_l30"] = log10(value_at(means, 30, activation=act, normalization="layer"))
    none = {act: curve(means, activation=act, normalization="none") for act in ("relu", "tanh", "sigmoid", "exp")}
    out["log10_gap_relu_none_max"] = log10(float(none["relu"].max()))
    out["last_finite_layer_relu_none"] = last_finite_layer(none["relu"])
    out["log10_gap_tanh_none_l30"] = log10(value_at(means, 30, activation="tanh", normalization="none"))
    out["last_finite_layer_sigmoid_none"] = last_finite_layer(none["sigmoid"])
    out["last_finite_layer_exp_none"] = last_finite_layer(none["exp"])
    return out


def _fig6(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["activation", "normalization"])
    out: dict[str, float] = {}
    for act in ("relu", "tanh", "sigmoid", "exp"):
        out[f"log10_gap_{act}_layer_l30"] = log10(value_at(means, 30, activation=act, normalization="layer"))
    for act in ("tanh", "sigmoid"):
        out[f"log10_gap_{act}_mf_l30"] = log10(value_at(means, 30, activation=act, normalization="mf"))
        out[f"max_log10_diff_mf_vs_layer_{act}"] = max_log10_gap_between(
            curve(means, activation=act, normalization="layer"), curve(means, activation=act, normalization="mf"))
    relu_mf = curve(means, activation="relu", normalization="mf")
    out["log10_gap_relu_mf_min"] = log10(float(relu_mf[relu_mf.index >= 1].min()))
    out["log10_gap_relu_mf_l30"] = log10(value_at(means, 30, activation="relu", normalization="mf"))
    exp_mf = curve(means, activation="exp", normalization="mf")
    out["first_layer_exp_mf_above_10"] = first_layer_above(exp_mf, EXP_MF_THRESHOLD)
    out["exp_mf_missing_at_last_layer"] = float(not np.isfinite(exp_mf.iloc[-1]))
    return out


def _fig8a(df: pd.DataFrame, suffix: str = "") -> dict[str, float]:
    means = line_means(df, ["activation"])
    relu = curve(means, activation="relu")
    out = {
        "log10_gap_relu_min": log10(float(relu[relu.index >= 1].min())),
        "log10_gap_relu_l30": log10(value_at(means, 30, activation="relu")),
        "log10_gap_selu_l30": log10(value_at(means, 30, activation="selu")),
        "log10_gap_tanh_l30": log10(value_at(means, 30, activation="tanh")),
    }
    if not suffix:
        out = {"log10_gap_l0": log10(float(select(means, layer=0).iso_gap.mean())), **out}
    return {f"{name}{suffix}": value for name, value in out.items()}


def _fig5_mc_constants(df: pd.DataFrame) -> dict[str, float]:
    """Decision D20: where the curves without normalization stop with the originals' Monte Carlo c0."""
    return {f"last_finite_layer_{act}_none_mc_constants":
            last_finite_layer(plotted_curve(df, activation=act, normalization="none"))
            for act in ("relu", "sigmoid", "exp") if act in set(df.activation)}


def _fig6_more_runs(default: pd.DataFrame, more: pd.DataFrame) -> Claims:
    """Decision D21: exp with MF normalization averaged over every run (the item's and the reading's), and the
    height of the early spike that a mean over the paper's run count reaches (one per block of that many runs:
    the figure's "> 10 by ℓ ≈ 5" is a statement about a 10-run mean, not about the pooled one)."""
    runs = pooled_runs(default, more)
    label = runs_label(runs)

    def crossing(frame: pd.DataFrame) -> dict[str, float]:
        return {f"first_layer_exp_mf_above_10_{label}": first_layer_above(
            plotted_curve(frame, activation="exp", normalization="mf"), EXP_MF_THRESHOLD)}

    def height(frame: pd.DataFrame) -> dict[str, float]:
        exp_mf = plotted_curve(frame, activation="exp", normalization="mf")
        return {"log10_gap_exp_mf_max_to_l6_block_mean": log10(float(early_part(exp_mf).max()))}

    block_runs = default.run.nunique()
    spike = per_block(height, runs, block_runs)
    return {**measured_with_spread(crossing, runs, block_runs),
            **{name: measured_over_runs(values) for name, values in spike.items()}}


def _fig9_more_runs(default: pd.DataFrame, more: pd.DataFrame) -> Claims:
    """Decision D23: the MF curve at ℓ = 30 averaged over every run, per width; the spread over blocks of the
    item's run count."""
    runs = pooled_runs(default, more)

    def at_l30(frame: pd.DataFrame) -> dict[str, float]:
        out = {}
        for width in sorted(runs.width.unique()):
            mf = plotted_curve(frame, width=int(width), normalization="mf")
            label = runs_label(select(runs, width=int(width), normalization="mf"))
            out[f"log10_gap_d{int(width)}_mf_l30_{label}"] = log10(float(mf.get(30, math.nan)))
        return out

    return measured_with_spread(at_l30, runs, default.run.nunique())


def _fig9_mc_constants(df: pd.DataFrame) -> dict[str, float]:
    """Decision D23: the MF curve at ℓ = 30 per width, with the originals' own Monte Carlo constants of ReLU."""
    return {f"log10_gap_d{int(width)}_mf_l30_mc_constants":
            log10(float(plotted_curve(df, width=int(width), normalization="mf").get(30, math.nan)))
            for width in sorted(df.width.unique())}


def _fig8b(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["activation_first"])
    out = {"log10_gap_l0": log10(float(select(means, layer=0).iso_gap.mean()))}
    for first, name in ((True, "act_first"), (False, "norm_first")):
        for layer in ((1, 15, 30) if first else (1, 30)):
            out[f"log10_gap_{name}_l{layer}"] = log10(value_at(means, layer, activation_first=first))
    return out


def _fig9(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["width", "normalization"])
    out: dict[str, float] = {}
    excess = []
    for width in sorted(df.width.unique()):
        d = int(width)
        mf = curve(means, width=d, normalization="mf")
        ln = curve(means, width=d, normalization="layer")
        out[f"log10_gap_d{d}_layer_l30"] = log10(float(ln.get(30, math.nan)))
        out[f"log10_gap_d{d}_mf_min"] = log10(float(mf[mf.index >= 1].min()))
        out[f"log10_gap_d{d}_mf_l30"] = log10(float(mf.get(30, math.nan)))
        excess.append(out[f"log10_gap_d{d}_layer_l30"] - out[f"log10_gap_d{d}_mf_l30"])
    # "LayerNorm ends below MF normalization at every width", scored as the number it states (joudaki2023-fig9): the
    # largest excess of the LN curve over the MF curve at ℓ = 30, in decades (< 0 when LN is below everywhere).
    out["max_log10_layer_over_mf_l30"] = float(np.max(excess))
    return out


def _figa1(df: pd.DataFrame) -> dict[str, float]:
    rows = theory_rows(df)
    means = rows.groupby(["activation", "layer"])[["gamma", "gamma_theory"]].mean().reset_index()
    out: dict[str, float] = {}
    for act in ("relu", "tanh", "sigmoid"):
        out[f"log10_gamma_{act}_l1"] = log10(value_at(means, 1, "gamma", activation=act))
        out[f"log10_gamma_{act}_l30"] = log10(value_at(means, 30, "gamma", activation=act))
        out[f"log10_gamma_theory_{act}_l30"] = log10(value_at(means, 30, "gamma_theory", activation=act))
    # "Below the theory everywhere except ReLU's first layer" (joudaki2023-figa1 [RO]), as seen on a log axis: the
    # largest excess of the empirical curve over the theory from l = 2 on, in decades (≤ 0 when below).
    deeper = means[means.layer >= 2]
    out["max_log10_excess_over_theory_from_l2"] = float(np.log10(deeper.gamma / deeper.gamma_theory).max())
    return out


def _figb2(df: pd.DataFrame, factor: float) -> dict[str, float]:
    means = line_means(df, ["activation", "gain"])
    out: dict[str, float] = {}
    for act in ("sin", "relu", "tanh"):
        for gain in (0.5, 1.0, 2.0):
            out[f"log10_gap_{act}_a{gain:g}_l30"] = log10(value_at(means, 30, activation=act, gain=gain))
    out["log10_gap_sin_a2_l8"] = log10(value_at(means, 8, activation="sin", gain=2.0))
    relu = [curve(means, activation="relu", gain=g) for g in (0.5, 1.0, 2.0)]
    out["max_log10_spread_relu_over_gains"] = max(
        max_log10_gap_between(relu[i], relu[j]) for i in range(3) for j in range(i + 1, 3))
    tanh = gain_prediction(select(df, activation="tanh"), factor)
    predicted = tanh.groupby(["gain", "layer"]).prediction.mean()
    for gain in (0.5, 1.0, 2.0):
        out[f"log10_prediction_tanh_a{gain:g}_l30"] = log10(float(predicted.get((gain, 30), math.nan)))
    return out


def _figb3(df: pd.DataFrame) -> dict[str, float]:
    means = line_means(df, ["activation", "variant"])
    out: dict[str, float] = {}
    for act in ("selu", "leaky_relu", "relu", "tanh"):
        for variant in ("MF", "xavier"):
            out[f"log10_gap_{act}_{variant.lower()}_l30"] = log10(
                value_at(means, 30, activation=act, variant=variant))
    # The claims of joudaki2023-figb3 as the numbers they state: MF's improvement over Xavier at ℓ = 30 in decades.
    gain = {act: out[f"log10_gap_{act}_xavier_l30"] - out[f"log10_gap_{act}_mf_l30"]
            for act in ("selu", "leaky_relu", "relu", "tanh")}
    out["min_log10_mf_gain_relu_leaky_relu_selu"] = min(gain[a] for a in ("relu", "leaky_relu", "selu"))
    out["log10_mf_gain_margin_relu_leaky_relu"] = min(gain["relu"], gain["leaky_relu"]) - max(gain["selu"], gain["tanh"])
    return out


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> Claims:
    """The simulator items' quantities (item id -> {quantity: value}) from the result files present.

    ``results`` maps the result keys (experiment names: fig4, fig5_6, ...) to Parquet paths; a missing key
    skips its items. ``cfg`` is the ``joudaki2023`` config (only Fig. B.2's ``prediction_factor`` is read).
    Every value is a ``Measured``: the quantity on the plotted curves with its seed spread over runs (or over
    blocks of the item's run count for a reading with more runs); booleans are 1.0/0.0; a value that cannot
    be measured (a missing point) is NaN.
    """
    reducers: dict[str, Reducer] = {
        "joudaki2023-fig4": _fig4, "joudaki2023-fig5": _fig5, "joudaki2023-fig6": _fig6, "joudaki2023-fig8a": _fig8a,
        "joudaki2023-fig8b": _fig8b, "joudaki2023-fig9": _fig9, "joudaki2023-figa1": _figa1,
        "joudaki2023-figb3": _figb3,
        "joudaki2023-figb2": lambda df: _figb2(df, float(cfg["figb2"]["prediction_factor"]))}
    # Readings (D19): reduced alone (a setting read another way) or pooled with the item's own runs (more runs).
    reading_reducers = {
        "fig5_6--mc_constants": lambda own, reading: measured_with_spread(_fig5_mc_constants, reading),
        "fig5_6--more_runs": _fig6_more_runs,
        "fig8a--narrow": lambda own, reading: measured_with_spread(
            lambda df: _fig8a(df, suffix="_d" + "_".join(map(str, sorted(reading.width.unique())))), reading),
        "fig9--more_runs": _fig9_more_runs,
        "fig9--mc_constants": lambda own, reading: measured_with_spread(_fig9_mc_constants, reading),
    }
    loaded: dict[str, pd.DataFrame] = {}

    def load(key: str) -> pd.DataFrame:
        if key not in loaded:
            loaded[key] = read_all_results(results[key])
        return loaded[key]

    out: Claims = {}
    for item in SIMULATOR_ITEMS:
        key = RESULT_KEYS[item]
        if not results.get(key):
            continue
        out[item] = dict(measured_with_spread(reducers[item], load(key)))
        for reading in READINGS.get(item, ()):
            if results.get(reading):
                out[item].update(reading_reducers[reading](load(key), load(reading)))
    return out
