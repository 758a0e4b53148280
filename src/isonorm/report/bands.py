"""Error bands of the line plots: a seeded percentile bootstrap of the mean, computed in one vectorised step.

seaborn's own ``errorbar=("ci", 95), n_boot=1000, seed=0`` draws its 1000 resamples in a Python loop, one
``np.mean`` call each, for every x value of every line: most of a notebook's run time at paper settings.
:func:`bootstrap_interval` draws the same resamples (the same generator, seeded the same way for every group,
consuming its stream in the same order) in one array and returns the same interval; a test compares the two.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np


def bootstrap_interval(values, *, level: float = 95, n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The ``level`` % percentile-bootstrap interval of the mean of ``values`` (NaN-aware when NaNs occur, as
    seaborn is), from ``n_boot`` resamples drawn by ``numpy.random.default_rng(seed)``."""
    data = np.asarray(values, dtype=float)
    resamples = np.random.default_rng(seed).integers(0, len(data), (int(n_boot), len(data)), dtype=np.intp)
    mean = np.nanmean if np.isnan(data.sum()) else np.mean
    edge = (100 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample of NaNs only has no mean: NaN, left out
        boots = mean(data[resamples], axis=1)
        low, high = np.nanpercentile(boots, [edge, 100 - edge])
    return float(low), float(high)


def seeded_ci(level: float = 95, n_boot: int = 1000, seed: int = 0):
    """``errorbar=`` for seaborn: :func:`bootstrap_interval` with these settings (seaborn itself gives a group
    of one value no band)."""
    return partial(bootstrap_interval, level=level, n_boot=n_boot, seed=seed)
