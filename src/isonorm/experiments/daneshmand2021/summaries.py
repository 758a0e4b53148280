"""Reductions of the raw results that both the notebook and the scoreboard use (one definition each).

All take tidy frames as written by the experiment modules and return small frames or scalars.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd


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
