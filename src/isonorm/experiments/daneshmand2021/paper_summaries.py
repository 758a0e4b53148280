"""The reductions of Daneshmand et al. (2021)'s results that the notebook and the scoreboard share (one definition
each: tidy frames in, small frames or scalars out), and its checkable quantities, measured from this run's results.

:func:`claims` gives every quantity per item id (isonorm.experiments.daneshmand2021.items names it; the
paper_claims rule writes them as one row per (item, quantity)); notebooks/reference/daneshmand2021.yaml holds
what the paper printed for the same keys, and the scoreboard compares the two. Nothing here reads the reference.

Every item with several runs gives its quantities with their seed spread (``verdicts.claims.Measured``): the
95 % half-width over runs, or over batches where the figure averages batches of one network (Appendix Fig. 6).
A relation the paper states (BN ends below vanilla, the wider plateau is lower, the loss grows with depth) is
scored as the number it relates, a difference or a slope, never as a boolean a flat curve passes
(docs/decisions/daneshmand2021.md, "Tolerances").
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...verdicts.claims import Measured, measured_over_runs
from ...results import read_all_results


def slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y against x."""
    return float(np.polyfit(x, y, 1)[0])


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ln y against ln x: the exponent of a power law y ∝ x^slope."""
    return slope(np.log(x), np.log(y))


def window_average(gaps: pd.DataFrame, window: tuple[int, int], code_offset: bool = False) -> pd.DataFrame:
    """Fig. 2b per (width, run): ln of the mean of V over layers window[0]..window[1].

    ``code_offset`` reproduces the code's division of every run by the number of runs (daneshmand2021-fig2b:
    "a bug: divides each run by 20"), i.e. subtracts ln(runs).
    """
    lo, hi = window
    inside = gaps[(gaps.layer >= lo) & (gaps.layer <= hi)]
    per_run = inside.groupby(["width", "run"], as_index=False).orthogonality_gap.mean()
    per_run["log_avg_gap"] = np.log(per_run.orthogonality_gap)
    if code_offset:
        per_run["log_avg_gap"] -= math.log(gaps.run.nunique())
    per_run["log_width"] = np.log(per_run.width)
    return per_run


def plateau(frame: pd.DataFrame, value: str, by: str, last_fraction: float = 0.5) -> pd.Series:
    """Mean of ``value`` over runs and over the last ``last_fraction`` of the layers, per ``by``."""
    return plateau_per_run(frame, value, by, last_fraction).groupby(level=0).mean()


def plateau_per_run(frame: pd.DataFrame, value: str, by: str, last_fraction: float = 0.5,
                    unit: str = "run") -> pd.Series:
    """Mean of ``value`` over the last ``last_fraction`` of the layers, per (``by``, ``unit``): the plateau of
    each run (or batch), whose spread is the plateau's seed spread."""
    cutoff = frame.layer.min() + (1 - last_fraction) * (frame.layer.max() - frame.layer.min())
    return frame[frame.layer >= cutoff].groupby([by, unit])[value].mean()


def slope_per_run(frame: pd.DataFrame, x: str, y: str, unit: str = "run") -> pd.Series:
    """Least-squares slope of ``y`` against ``x`` per ``unit``: their mean is the slope of the mean curve."""
    return pd.Series({key: slope(g[x].to_numpy(), g[y].to_numpy()) for key, g in frame.groupby(unit)})


def a1_grid(grid: pd.DataFrame, batch_offset: int = 0, batches: Sequence[int] | None = None) -> pd.DataFrame:
    """Fig. 3 pixels: A1 held in every run of (batch, width)?

    ``batch`` is the pixel's batch size as the figure labels it: the simulated batch size plus ``batch_offset``
    (0: the literal reading; the configured ``batch_offset``: the offset reading of decision B15). ``batches``
    keeps these labels only (the configured ``batch_sizes``: the results also hold the offset reading's runs).
    """
    pixels = grid.groupby(["batch", "width"], as_index=False).holds.all()
    pixels["batch"] += batch_offset
    if batches is not None:
        pixels = pixels[pixels.batch.isin(list(batches))].reset_index(drop=True)
    return pixels


def a1_batches(cfg: Mapping[str, Any]) -> list[int]:
    """Batch sizes Fig. 3 simulates, one job each: the configured ``batch_sizes`` (literal reading) and, for the
    offset reading (decision B15), every configured n minus ``batch_offset`` that is still at least 1."""
    sizes = set(cfg["batch_sizes"])
    sizes |= {n - cfg["batch_offset"] for n in cfg["batch_sizes"] if n - cfg["batch_offset"] >= 1}
    return sorted(sizes)


# The paper's blue curve of Fig. 3, d = (n - 28)^1.8 [paper caption], and its legend.
A1_CURVE_OFFSET, A1_CURVE_EXPONENT = 28, 1.8
A1_CURVE_LABEL = f"d = (n − {A1_CURVE_OFFSET})^{A1_CURVE_EXPONENT}"


def a1_curve(n: np.ndarray) -> np.ndarray:
    """The paper's blue curve d = (n - 28)^1.8 (Fig. 3 caption)."""
    return np.clip(n - float(A1_CURVE_OFFSET), 0, None) ** A1_CURVE_EXPONENT


def a1_image(grid: pd.DataFrame, batch_offset: int = 0, batches: Sequence[int] | None = None) -> pd.DataFrame:
    """Fig. 3 as drawn: the pixels of :func:`a1_grid` as a table, widths descending down the rows and the batch
    labels ``batches`` across the columns; NaN where nothing was simulated (n - ``batch_offset`` < 1)."""
    return (a1_grid(grid, batch_offset, batches).pivot(index="width", columns="batch", values="holds")
            .reindex(columns=batches).sort_index(ascending=False))


def a1_curve_pixels(image: pd.DataFrame, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """The paper's curve in the pixel coordinates of an :func:`a1_image` (columns linear in n, rows log2-spaced
    widths), (columns, rows) where it lies on the grid."""
    widths = image.index.to_numpy()[::-1]
    n = np.linspace(image.columns.min(), image.columns.max(), points)
    d = a1_curve(n)
    inside = (d >= widths.min()) & (d <= widths.max())
    col = np.interp(n[inside], image.columns, range(image.shape[1]))
    row = image.shape[0] - 1 - np.interp(np.log2(d[inside]), np.log2(widths), range(len(widths)))
    return col, row


def a1_boundary_log2_over_curve(pixels: pd.DataFrame) -> float:
    """Fig. 3: how far the black/white boundary lies above the paper's curve, in octaves of d (mean over n).

    Per pixel label n whose curve lies inside the grid's widths: the boundary is the geometric mean of the
    smallest width from which A1 holds at every larger width and the grid width below it (half an octave
    outside the grid when every, or no, width holds); the result is the mean of log2(boundary / curve) over
    those n. 0 puts the boundary on the curve; the grid resolves it to half a pixel (docs/decisions/
    daneshmand2021.md, "Tolerances")."""
    widths = np.sort(pixels.width.unique()).astype(float)
    offsets = []
    for n, column in pixels.groupby("batch"):
        curve = float(a1_curve(np.array([n]))[0])
        if not widths[0] <= curve <= widths[-1]:
            continue
        holds = column.set_index("width").holds.reindex(widths).fillna(False).to_numpy(dtype=bool)
        failing = np.flatnonzero(~holds)
        lowest_white = failing[-1] + 1 if failing.size else 0
        below = widths[lowest_white - 1] if lowest_white > 0 else widths[0] / 2
        above = widths[lowest_white] if lowest_white < widths.size else widths[-1] * 2
        offsets.append(math.log2(math.sqrt(below * above) / curve))
    return float(np.mean(offsets)) if offsets else math.nan


def final_epoch_loss(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Training loss of the last epoch per run (Fig. 4a, 5: "training loss after 30 epochs")."""
    last = frame[frame.epoch == frame.epoch.max()]
    return last[by + ["run", "train_loss"]].reset_index(drop=True)


def initial_gap(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Spectral orthogonality gap of the freshly initialised network, per run (Fig. 4a, decision B4)."""
    first = frame[frame.epoch == 0]
    return first[by + ["run", "spectral_gap"]].reset_index(drop=True)


# --- the checkable quantities ------------------------------------------------------------------------------

Quantities = dict[str, "float | Measured"]
# The one activation whose curve the published Appendix-G figure shows (under all four labels, decision B8).
PUBLISHED_APPFIGG_LINE = "sin"


def _fig1(df: pd.DataFrame) -> Quantities:
    last = df[df.layer == df.layer.max()].pivot(index="run", columns="network", values="abs_cosine")
    return {
        "bn_plateau": measured_over_runs(plateau_per_run(df, "abs_cosine", "network", 0.6)["BN"]),
        "vanilla_last_layer": measured_over_runs(last["Vanilla"]),
        # the two chains share every W, so a run's difference is paired
        "bn_minus_vanilla_at_end": measured_over_runs(last["BN"] - last["Vanilla"]),
    }


def _fig2a(df: pd.DataFrame) -> Quantities:
    df = df.assign(log_gap=np.log(df.orthogonality_gap))
    plateaus = plateau_per_run(df, "log_gap", "width", 0.5)
    widths = sorted(df.width.unique())
    out: Quantities = {f"log_gap_plateau_d{w}": measured_over_runs(plateaus[w]) for w in widths}
    out["log_gap_start"] = measured_over_runs(df[df.layer == 1].log_gap)
    out["wider_minus_narrower_log_plateau"] = measured_over_runs(plateaus[widths[-1]] - plateaus[widths[0]])
    return out


def _fig2b(df: pd.DataFrame, cfg: Mapping[str, Any]) -> Quantities:
    """Slopes of ln(window average of V) against ln d, one per run (their mean is the plotted mean's slope)."""
    caption = window_average(df, tuple(cfg["caption_window"]))
    code = window_average(df, tuple(cfg["code_window"]), code_offset=True)
    return {
        "slope_caption": measured_over_runs(slope_per_run(caption, "log_width", "log_avg_gap")),
        "slope_code": measured_over_runs(slope_per_run(code, "log_width", "log_avg_gap")),
    }


def _fig3(df: pd.DataFrame, cfg: Mapping[str, Any]) -> Quantities:
    """The literal reading (the figure's default) and, suffixed ``_offset``, the offset reading (decision B15).
    A pixel says whether A1 held in all runs, a statistic of the 10 runs together: no seed spread."""
    out: Quantities = {}
    for suffix, offset in (("", 0), ("_offset", cfg["batch_offset"])):
        grid = a1_grid(df, offset, cfg["batch_sizes"])
        above = grid.width >= a1_curve(grid.batch.to_numpy())
        if above.any():  # a grid that reaches the curve (a smaller one has no cell above it: no quantity)
            out[f"holds_fraction_above_curve{suffix}"] = grid[above].holds.mean()
        boundary = a1_boundary_log2_over_curve(grid)
        if not math.isnan(boundary):  # NaN: no batch size whose curve lies inside the grid's widths
            out[f"boundary_log2_over_curve{suffix}"] = boundary
    return out


def _appfigg(df: pd.DataFrame) -> Quantities:
    """Decision B16: the slope of ln avg L(Q) against ln d per run, and the published line's levels per run, each
    with its spread over the runs (the mean of the per-run slopes is the slope of the mean curve)."""
    df = df.assign(log_width=np.log(df.width), log_avg_deviation=np.log(df.avg_deviation))
    out: Quantities = {
        f"slope_{act}": measured_over_runs(slope_per_run(g, "log_width", "log_avg_deviation"))
        for act, g in df.groupby("activation")
    }
    # the published line's end points, at the narrowest and widest d: sin's, drawn under every label (B8)
    line = df[df.activation == PUBLISHED_APPFIGG_LINE]
    for width in sorted({line.width.min(), line.width.max()} if len(line) else set()):
        out[f"log_avg_deviation_{PUBLISHED_APPFIGG_LINE}_d{width}"] = measured_over_runs(
            line[line.width == width].log_avg_deviation)
    return out


def _depth_training(df: pd.DataFrame) -> dict[str, Quantities]:
    """Fig. 4a and 5: growth with depth as the per-run slope against depth (per layer)."""
    xavier = df[df.init == "xavier"]
    loss = final_epoch_loss(xavier, ["depth"])
    gap = initial_gap(xavier, ["depth"])
    loss_slope = measured_over_runs(slope_per_run(loss, "depth", "train_loss"))
    fig4a = {
        "loss_slope_per_layer": loss_slope,
        "init_gap_slope_per_layer": measured_over_runs(slope_per_run(gap, "depth", "spectral_gap")),
    }
    fig5: Quantities = {"xavier_loss_slope_per_layer": loss_slope}
    if {"xavier", "iterative"} <= set(df.init):
        both = final_epoch_loss(df, ["init", "depth"])
        deepest = both[both.depth == both.depth.max()].pivot(index="run", columns="init", values="train_loss")
        fig5["iterative_minus_xavier_loss_at_max_depth"] = measured_over_runs(
            deepest["iterative"] - deepest["xavier"])
    return {"daneshmand2021-fig4a": fig4a, "daneshmand2021-fig5": fig5}


def _fig4b(df: pd.DataFrame) -> Quantities:
    """Change from the start of training to its last epoch, per run (the gap from initialisation, epoch 0; the
    loss from the first epoch's, the first one measured)."""
    per_run = df.pivot_table(index="epoch", columns="run", values=["train_loss", "spectral_gap"])
    gap, loss = per_run["spectral_gap"], per_run["train_loss"].dropna(how="all")
    return {
        "gap_change": measured_over_runs(gap.iloc[-1] - gap.iloc[0]),
        "loss_change": measured_over_runs(loss.iloc[-1] - loss.iloc[0]),
    }


def _appfig6(df: pd.DataFrame) -> dict[str, Quantities]:
    """One network per normalisation, 50 batches: the batches are the figure's unit of variation (B9)."""
    out = {}
    for arch, item in (("mlp", "daneshmand2021-appfig6a"), ("convnet", "daneshmand2021-appfig6b")):
        sub = df[df.arch == arch]
        if sub.empty:
            continue
        gaps = sub.pivot_table(index="layer", columns=["norm", "batch"], values="orthogonality_gap")
        first, last = gaps.iloc[0], gaps.iloc[-1]
        out[item] = {
            "gap_start": measured_over_runs(first["none"]),
            "bn_plateau": measured_over_runs(
                plateau_per_run(sub, "orthogonality_gap", "norm", 0.8, unit="batch")["batchnorm"]),
            "vanilla_last_layer": measured_over_runs(last["none"]),
            "vanilla_gap_change": measured_over_runs(last["none"] - first["none"]),
            "bn_gap_change": measured_over_runs(last["batchnorm"] - first["batchnorm"]),
        }
    return out


def _appfig7(df: pd.DataFrame) -> dict[str, Quantities]:
    """Panel a has the fewer extra layers, panel b the more."""
    out: dict[str, Quantities] = {}
    for item, extra in zip(("daneshmand2021-appfig7a", "daneshmand2021-appfig7b"), sorted(df.extra_layers.unique())):
        last = df[(df.extra_layers == extra) & (df.epoch == df.epoch.max())]
        loss = last.pivot(index="run", columns="init", values="train_loss")
        out[item] = {f"final_loss_{init}": measured_over_runs(loss[init]) if init in loss else np.nan
                     for init in ("xavier", "svd")}
        if {"xavier", "svd"} <= set(loss.columns):
            out[item]["svd_minus_xavier_final_loss"] = measured_over_runs(loss["svd"] - loss["xavier"])
    return out


def claims(results: Mapping[str, Sequence[str]], config: Mapping[str, Any]) -> dict[str, Quantities]:
    """All quantities computable from the ``results`` files present (result key -> Parquet paths), per item id."""
    def frame(key: str) -> pd.DataFrame:
        return read_all_results(results[key])

    by_item: dict[str, Quantities] = {}
    if results.get("fig1"):
        by_item["daneshmand2021-fig1"] = _fig1(frame("fig1"))
    if results.get("fig2a"):
        by_item["daneshmand2021-fig2a"] = _fig2a(frame("fig2a"))
    if results.get("fig2b"):
        by_item["daneshmand2021-fig2b"] = _fig2b(frame("fig2b"), config["fig2b"])
    if results.get("fig3"):
        by_item["daneshmand2021-fig3"] = _fig3(frame("fig3"), config["fig3"])
    if results.get("appfigg"):
        by_item["daneshmand2021-appfigg"] = _appfigg(frame("appfigg"))
    if results.get("depth_training"):
        by_item.update(_depth_training(frame("depth_training")))
    if results.get("fig4b"):
        by_item["daneshmand2021-fig4b"] = _fig4b(frame("fig4b"))
    if results.get("appfig6"):
        by_item.update(_appfig6(frame("appfig6")))
    if results.get("appfig7"):
        by_item.update(_appfig7(frame("appfig7")))
    return by_item

