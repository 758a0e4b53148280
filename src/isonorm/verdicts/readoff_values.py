"""A read-off value recomputed from what its reference row records: the coordinates it was read at and the
calibration of its figure's axis (docs/decisions/README.md, "Read-offs").

A ``readoffs`` entry of a reference file gives its figure's ``axes``: per panel, the tick pairs (value on the
entry's ``scale``, coordinate in the source file: PDF points or image pixels) that calibrate its y axis::

    axes:
      MNIST: [[1.2, 409.438], [1.0, 423.288], [0.8, 437.138]]   # value, y in pt (panel named as the rows name it)

A read-off row records where its value was read (``read``)::

    read: {panel: MNIST, at: [450.97, 451.20, 449.80, 452.11], reduce: min}

``at`` holds the coordinates of the drawn points the value comes from (vertices of a vector path, marker centres,
pixel rows of a line at the row's x); each is mapped through the least-squares line of its panel's ticks, and
``reduce`` turns the mapped values into the row's number: ``value`` (one point), ``mean``, ``min``, ``max``,
``median``, ``difference`` (first − second); over two lists of points ``max_abs_difference`` (the largest |a − b|),
``max_difference`` (the largest a − b) and ``mean_difference`` (mean a − mean b); ``combination`` (Σ wᵢ·vᵢ with the
row's ``weights``); with the row's ``x`` (data units, one per point) ``slope`` (least squares), ``loglog_slope``
(the exponent c of value ∝ x^c) and ``extrapolate`` (the least-squares line evaluated at the row's ``to``). An item
of ``at`` may be ``[panel, coordinate]`` where one row combines panels. ``panel`` may be left out when the figure
has one axis. An axis is any calibrated direction: a value read off the x axis (a layer where a curve ends) names a
panel whose ticks calibrate x.

Nothing here reads a pipeline output: tests/test_reference_readings.py recomputes every read-off value of the
reference files with :func:`recompute` and fails when the file's ``reported`` value differs from it.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np


class ReadoffError(ValueError):
    """A ``readoffs: axes`` or a row's ``read`` that cannot be evaluated."""


def _difference(values: Sequence[Any]) -> float:
    if len(values) != 2:
        raise ReadoffError(f"`difference` takes two points, got {len(values)}")
    return float(values[0] - values[1])


def _max_abs_difference(values: Sequence[Any]) -> float:
    first, second = _pair_of_lists(values, "max_abs_difference")
    return float(np.max(np.abs(first - second)))


def _max_difference(values: Sequence[Any]) -> float:
    first, second = _pair_of_lists(values, "max_difference")
    return float(np.max(first - second))


def _mean_difference(values: Sequence[Any]) -> float:
    if len(values) != 2 or not len(values[0]) or not len(values[1]):
        raise ReadoffError("`mean_difference` takes two non-empty lists of points")
    return float(np.mean(values[0]) - np.mean(values[1]))


def _pair_of_lists(values: Sequence[Any], reduce: str) -> tuple[np.ndarray, np.ndarray]:
    if len(values) != 2 or len(values[0]) != len(values[1]) or not len(values[0]):
        raise ReadoffError(f"`{reduce}` takes two equally long, non-empty lists of points")
    return np.asarray(values[0]), np.asarray(values[1])


def _single(values: Sequence[Any]) -> float:
    if len(values) != 1:
        raise ReadoffError(f"`value` takes one point, got {len(values)}")
    return float(values[0])


# reduce name -> the row's number from its mapped points; the reducers of ``WITH_X`` also take the row's ``x`` (and
# ``extrapolate`` its ``to``), the ones of ``WITH_WEIGHTS`` its ``weights`` (:func:`recompute`).
REDUCERS: dict[str, Callable[[Sequence[Any]], float]] = {
    "value": _single,
    "mean": lambda v: float(np.mean(v)),
    "min": lambda v: float(np.min(v)),
    "max": lambda v: float(np.max(v)),
    "median": lambda v: float(np.median(v)),
    "difference": _difference,
    "max_abs_difference": _max_abs_difference,
    "max_difference": _max_difference,
    "mean_difference": _mean_difference,
}
NESTED = ("max_abs_difference", "max_difference", "mean_difference")  # reducers of two lists of points
WITH_X = ("slope", "loglog_slope", "extrapolate")
WITH_WEIGHTS = ("combination",)
KEYS = ("at", "panel", "reduce", "x", "to", "weights")


def _with_x(reduce: str, values: list[float], read: Mapping[str, Any], where: str) -> float:
    """``slope``: least squares of the values over ``x``; ``loglog_slope``: of ln(value) over ln(x), the exponent c
    of a power law value ∝ x^c; ``extrapolate``: the least-squares line over ``x`` evaluated at ``to``."""
    x = read.get("x")
    if not isinstance(x, list) or len(x) != len(values) or len(values) < 2:
        raise ReadoffError(f"{where}: `{reduce}` needs `x`, one data-unit x per point (at least two)")
    xs, ys = np.asarray(x, dtype=float), np.asarray(values, dtype=float)
    if reduce == "loglog_slope":
        if (xs <= 0).any() or (ys <= 0).any():
            raise ReadoffError(f"{where}: `loglog_slope` needs positive x and values")
        return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
    slope, intercept = np.polyfit(xs, ys, 1)
    if reduce == "slope":
        return float(slope)
    to = read.get("to")
    if isinstance(to, bool) or not isinstance(to, (int, float)):
        raise ReadoffError(f"{where}: `extrapolate` needs `to`, the data-unit x to evaluate the line at")
    return float(intercept + slope * float(to))


def axis_fit(ticks: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """(intercept, slope, residual) of the least-squares line value = intercept + slope · coordinate through the
    ``ticks`` [[value, coordinate], ...]; residual: its largest disagreement at a tick, in value units."""
    array = np.asarray(ticks, dtype=float)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] < 2 or not np.isfinite(array).all():
        raise ReadoffError(f"an axis needs at least two finite [value, coordinate] ticks, got {ticks!r}")
    values, coordinates = array[:, 0], array[:, 1]
    if np.ptp(coordinates) == 0:
        raise ReadoffError(f"an axis's ticks all sit at one coordinate: {ticks!r}")
    slope, intercept = np.polyfit(coordinates, values, 1)
    residual = float(np.max(np.abs(intercept + slope * coordinates - values)))
    return float(intercept), float(slope), residual


def check_axes(axes: Any, where: str) -> dict[str, list[list[float]]]:
    """A ``readoffs`` entry's ``axes`` as {panel: ticks}, or a ReadoffError naming ``where``."""
    if not isinstance(axes, Mapping) or not axes:
        raise ReadoffError(f"{where}: `axes` must map each panel to its [value, coordinate] ticks")
    for panel, ticks in axes.items():
        try:
            axis_fit(ticks)
        except ReadoffError as err:
            raise ReadoffError(f"{where}: `axes: {panel}`: {err}") from None
    return {str(panel): [list(map(float, tick)) for tick in ticks] for panel, ticks in axes.items()}


def _panel_of(read: Mapping[str, Any], axes: Mapping[str, Any], where: str) -> str:
    panel = read.get("panel")
    if panel is None:
        if len(axes) != 1:
            raise ReadoffError(f"{where}: `read` must name its `panel`, one of {sorted(axes)}")
        return str(next(iter(axes)))
    if str(panel) not in axes:
        raise ReadoffError(f"{where}: `read: panel` {panel!r} is none of the figure's axes {sorted(axes)}")
    return str(panel)


def recompute(read: Mapping[str, Any], axes: Mapping[str, Sequence[Sequence[float]]], where: str = "read") -> float:
    """The value a row's ``read`` gives through its figure's ``axes`` (see the module docstring)."""
    if not isinstance(read, Mapping) or "at" not in read:
        raise ReadoffError(f"{where}: `read` must be a mapping with `at` (the coordinates read) and `reduce`")
    unknown = sorted(set(read) - set(KEYS))
    if unknown:
        raise ReadoffError(f"{where}: `read` has unknown key(s) {unknown}; allowed: {', '.join(KEYS)}")
    reduce = read.get("reduce", "value")
    known = (*REDUCERS, *WITH_X, *WITH_WEIGHTS)
    if reduce not in known:
        raise ReadoffError(f"{where}: `read: reduce` {reduce!r}; use one of {', '.join(known)}")
    fits = {str(panel): axis_fit(ticks) for panel, ticks in axes.items()}
    default = _panel_of(read, axes, where)

    def mapped(point: Any) -> float:
        panel, coordinate = default, point
        if isinstance(point, (list, tuple)):
            if len(point) != 2 or str(point[0]) not in fits:
                raise ReadoffError(f"{where}: a point {point!r} must be a coordinate or [panel, coordinate] with "
                                   f"a panel of {sorted(fits)}")
            panel, coordinate = str(point[0]), point[1]
        if isinstance(coordinate, bool) or not isinstance(coordinate, (int, float)) or not math.isfinite(coordinate):
            raise ReadoffError(f"{where}: a coordinate must be a finite number, got {coordinate!r}")
        intercept, slope, _ = fits[panel]
        return intercept + slope * float(coordinate)

    at = read["at"] if isinstance(read["at"], list) else [read["at"]]
    if reduce in NESTED:
        values: list[Any] = [[mapped(p) for p in part] if isinstance(part, list) else None for part in at]
        if any(v is None for v in values):
            raise ReadoffError(f"{where}: `{reduce}` takes lists of points, e.g. [[a1, a2], [b1, b2]]")
    else:
        values = [mapped(p) for p in at]
    if not values:
        raise ReadoffError(f"{where}: `read: at` holds no point")
    if reduce in WITH_X:
        return _with_x(reduce, values, read, where)
    if reduce in WITH_WEIGHTS:
        weights = read.get("weights")
        if not isinstance(weights, list) or len(weights) != len(values):
            raise ReadoffError(f"{where}: `combination` needs `weights`, one number per point")
        return float(np.dot(np.asarray(weights, dtype=float), np.asarray(values)))
    return REDUCERS[reduce](values)
