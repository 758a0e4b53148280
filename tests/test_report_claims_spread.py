"""Seed spreads of claims (isonorm.verdicts.claims): the 95 % confidence half-width over runs or blocks of runs."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isonorm.verdicts.claims import Measured, blocks, measure_parts, measured_over_runs, spread_over_runs


def test_spread_is_students_half_width_over_finite_values():
    values = [1.0, 2.0, 4.0, float("nan")]
    expected = stats.t.ppf(0.975, 2) * np.std([1.0, 2.0, 4.0], ddof=1) / math.sqrt(3)
    assert spread_over_runs(values) == pytest.approx(expected)
    assert math.isnan(spread_over_runs([3.0]))  # one run: no spread, not zero
    assert spread_over_runs([2.0, 2.0, 2.0]) == 0.0


def test_measured_over_runs_gives_the_mean_and_its_spread():
    got = measured_over_runs([1.0, 3.0])
    assert got.value == 2.0 and got.spread == pytest.approx(stats.t.ppf(0.975, 1) * math.sqrt(2) / math.sqrt(2))


def test_blocks_average_consecutive_runs_and_refuse_too_few():
    assert blocks(np.arange(10.0), 5).tolist() == [0.5, 2.5, 4.5, 6.5, 8.5]
    assert blocks(np.arange(11.0), 5).size == 5  # the eleventh run fills no block
    with pytest.raises(ValueError, match="cannot make"):
        blocks([1.0, 2.0], 3)


def test_parts_may_mix_bare_values_and_measured_ones():
    def part(results, config):
        return {"daneshmand2021-fig1": {"plain": 1.5, "with_spread": Measured(2.0, 0.25)}}

    frame = measure_parts("daneshmand2021", [part], {}, {})
    spreads = dict(zip(frame["quantity"], frame["spread"]))
    assert math.isnan(spreads["plain"]) and spreads["with_spread"] == 0.25
    with pytest.raises(ValueError, match="half-width"):
        measure_parts("daneshmand2021", [lambda r, c: {"daneshmand2021-fig1": {"q": Measured(1.0, -1.0)}}], {}, {})
    assert isinstance(frame, pd.DataFrame)


def test_claims_are_keyed_by_full_item_ids_of_their_paper():
    with pytest.raises(ValueError, match="invalid item id 'fig1'"):
        measure_parts("daneshmand2021", [lambda r, c: {"fig1": {"q": 1.0}}], {}, {})
    with pytest.raises(ValueError, match="does not belong to paper 'daneshmand2021'"):
        measure_parts("daneshmand2021", [lambda r, c: {"lu2024-fig1": {"q": 1.0}}], {}, {})
