"""The line plots' error band: the vectorised bootstrap gives exactly seaborn's own seeded ("ci", 95) band."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import seaborn as sns  # noqa: E402
from seaborn._statistics import EstimateAggregator  # noqa: E402

from isonorm.report.bands import bootstrap_interval, seeded_ci  # noqa: E402
from isonorm.report.notebook import CI  # noqa: E402


@pytest.mark.parametrize("n", [2, 3, 10, 57])
@pytest.mark.parametrize("with_nan", [False, True])
def test_interval_equals_seaborns_bootstrap(n, with_nan):
    values = np.random.default_rng(n).lognormal(size=n)
    if with_nan:
        values[n // 2] = np.nan  # seaborn then bootstraps nanmean
    seaborn_band = EstimateAggregator("mean", ("ci", 95), n_boot=1000, seed=0)(pd.DataFrame({"y": values}), "y")
    assert bootstrap_interval(values) == (seaborn_band["ymin"], seaborn_band["ymax"])


def test_other_levels_and_seeds_follow_seaborn_too():
    values = np.random.default_rng(7).normal(size=20)
    for level, seed in ((68, 0), (95, 3), (99, 11)):
        band = EstimateAggregator("mean", ("ci", level), n_boot=500, seed=seed)(pd.DataFrame({"y": values}), "y")
        assert bootstrap_interval(values, level=level, n_boot=500, seed=seed) == (band["ymin"], band["ymax"])


def test_lineplot_draws_the_same_band_as_seaborns_ci():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": np.repeat(np.arange(6), 5), "y": rng.normal(size=30)})
    frame.loc[3, "y"] = np.nan
    bands = []
    for errorbar in (CI, dict(errorbar=("ci", 95), n_boot=1000, seed=0)):
        fig, ax = plt.subplots()
        sns.lineplot(data=frame, x="x", y="y", ax=ax, **errorbar)
        bands.append(ax.collections[0].get_paths()[0].vertices.copy())
        plt.close(fig)
    np.testing.assert_array_equal(bands[0], bands[1])


def test_a_single_value_and_all_nan_resamples_give_no_band_edge():
    assert seeded_ci()([1.0, 1.0]) == (1.0, 1.0)
    low, high = bootstrap_interval([np.nan, np.nan, 2.0])
    assert low == high == 2.0  # resamples of NaNs only have no mean and are left out
