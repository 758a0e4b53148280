"""The simulator items of Joudaki et al. (2023) on tiny settings: grids, seeding, D4 averaging, claims."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from isonorm.experiments.joudaki2023 import simulation_summaries as s
from isonorm.verdicts.claims import Measured
from isonorm.experiments.joudaki2023 import simulations, spreads

# The smoke tests of joudaki2023-fig4 … joudaki2023-figb3: n = 4, tiny d, 2 repeats; numerics as in config.yaml.
SHARED = {
    "batch": 4, "widths": [16], "depth": 3, "runs": 2, "activation_first": [True], "gains": [1.0], "bias": 0.0,
    "constants": "quadrature", "monte_carlo_samples": 2_000_000, "constants_seed": 0, "dtype": "float32",
    "metric_dtype": "float32", "sampler": "direct",
}
ITEMS = {
    "fig4": {"activations": ["relu", "tanh", "sigmoid", "exp"], "centerings": ["none", "layer", "mf"],
             "normalizations": ["layer"], "degeneracy": 100},
    "fig5_6": {"activations": ["relu", "tanh", "sigmoid", "exp"], "centerings": ["mf"],
               "normalizations": ["none", "layer", "mf"], "degeneracy": 10},
    "fig8a": {"activations": ["relu", "tanh", "selu"], "centerings": ["layer"], "normalizations": ["none"],
              "degeneracy": 5},
    "fig8b": {"activations": ["relu"], "centerings": ["layer"], "normalizations": ["layer"],
              "activation_first": [True, False], "degeneracy": 100},
    "fig9": {"activations": ["relu"], "centerings": ["mf"], "normalizations": ["mf", "layer"], "widths": [8, 16],
             "degeneracy": 10},
    "figa1": {"activations": ["relu", "tanh", "sigmoid"], "centerings": ["layer"], "normalizations": ["layer"],
              "degeneracy": 100},
    "figb2": {"activations": ["sin", "relu", "tanh"], "centerings": ["layer"], "normalizations": ["layer"],
              "gains": [0.5, 1.0, 2.0], "degeneracy": 100, "prediction_factor": 10},
    "figb3": {"activations": ["selu", "leaky_relu", "relu", "tanh"], "degeneracy": 100, "variants": [
        {"name": "MF", "centering": "mf", "normalization": "mf", "gain": 1.0},
        {"name": "xavier", "centering": "none", "normalization": "none", "gain": "xavier"}]},
}
CONFIGURATIONS = {"fig4": 12, "fig5_6": 12, "fig8a": 3, "fig8b": 2, "fig9": 4, "figa1": 3, "figb2": 9, "figb3": 8}


def _cfg(item: str, **override) -> dict:
    return {**SHARED, **ITEMS[item], **override}


@pytest.mark.parametrize("item", sorted(ITEMS))
def test_every_item_simulates_its_whole_grid(item):
    frame = simulations.run_grid(_cfg(item), item=item)
    rows_per_configuration = SHARED["runs"] * (2 * SHARED["depth"] + 1)
    assert len(frame) == CONFIGURATIONS[item] * rows_per_configuration
    assert {"run", "layer", "stage", "iso_gap", "gamma", "activation", "centering", "normalization", "gain",
            "width", "beta", "gamma_theory", "iso_gap_theory"} <= set(frame.columns)
    assert set(frame.stage) == {"input", "pre_norm", "post_norm"}


def test_figb3_pairs_each_activation_with_named_variants():
    frame = simulations.run_grid(_cfg("figb3"), item="figb3")
    xavier = frame[frame.variant == "xavier"].groupby("activation").gain.first()
    assert xavier["relu"] == pytest.approx(math.sqrt(2)) and xavier["selu"] == pytest.approx(0.75)
    assert set(frame[frame.variant == "MF"].centering) == {"mf"}
    assert set(frame[frame.variant == "xavier"].gain_setting) == {"xavier"}


def test_a_configuration_does_not_depend_on_the_rest_of_the_grid():
    alone = simulations.run_grid(_cfg("fig4", activations=["tanh"], centerings=["mf"]), item="fig4")
    in_grid = simulations.run_grid(_cfg("fig4"), item="fig4")
    in_grid = in_grid[(in_grid.activation == "tanh") & (in_grid.centering == "mf")]
    np.testing.assert_array_equal(alone.iso_gap.to_numpy(), in_grid.iso_gap.to_numpy())


def test_a_shallower_run_reproduces_the_first_layers():
    deep = simulations.run_grid(_cfg("fig8b", depth=4), item="fig8b")
    shallow = simulations.run_grid(_cfg("fig8b", depth=2), item="fig8b")
    np.testing.assert_array_equal(shallow.iso_gap.to_numpy(), deep[deep.layer <= 2].iso_gap.to_numpy())


def test_unknown_items_and_bad_variants_are_named():
    with pytest.raises(ValueError, match="unknown joudaki2023 simulation item 'fig5'"):
        simulations.run_grid(_cfg("fig4"), item="fig5")
    with pytest.raises(ValueError, match="exactly the keys"):
        simulations.run_grid(_cfg("figb3", variants=[{"name": "MF", "centering": "mf"}]), item="figb3")
    with pytest.raises(ValueError, match="non-empty list"):
        simulations.run_grid(_cfg("fig4", activations="relu"), item="fig4")


def test_diverging_configurations_leave_nan_rows_not_errors():
    frame = simulations.run_grid(_cfg("fig5_6", activations=["exp"], normalizations=["none"], depth=6, widths=[64]),
                                  item="fig5_6")
    assert frame[frame.layer == 6].iso_gap.isna().all()
    assert np.isfinite(frame[frame.layer == 0].iso_gap).all()


# --- alternative readings (decision D19) ------------------------------------------------------------------


def test_a_reading_replaces_its_keys_and_keeps_the_seeds():
    """A reading that changes only the constants draws the same inputs and weights as the default job."""
    cfg = _cfg("fig5_6", readings={"mc": {"constants": "monte_carlo", "normalizations": ["none"]}})
    default = simulations.run_grid(cfg, item="fig5_6")
    reading = simulations.run_grid(cfg, item="fig5_6", reading="mc")
    assert set(default.reading) == {"default"} and set(reading.reading) == {"mc"}
    assert set(reading.normalization) == {"none"} and len(reading) == 4 * len(default) // 12
    own = default[default.normalization == "none"]
    np.testing.assert_array_equal(own[own.layer == 0].iso_gap.to_numpy(),
                                  reading[reading.layer == 0].iso_gap.to_numpy())
    assert not np.allclose(own.c0.to_numpy(), reading.c0.to_numpy())  # sigmoid's c0 = 1/2 only by quadrature
    with pytest.raises(ValueError, match="no reading 'bogus'.*'mc'"):
        simulations.run_grid(cfg, item="fig5_6", reading="bogus")


def test_the_printed_constants_reading_keeps_the_draws_and_changes_only_the_constants():
    """Decision D23: Fig. 9 with the originals' own act_info values of ReLU, paired with the default's runs."""
    cfg = _cfg("fig9", depth=5, readings={"mc_constants": {"constants": "printed", "normalizations": ["mf"]}})
    default = simulations.run_grid(cfg, item="fig9")
    printed = simulations.run_grid(cfg, item="fig9", reading="mc_constants")
    own = default[default.normalization == "mf"]
    assert set(printed.normalization) == {"mf"} and len(printed) == len(own)

    def before_the_constants(frame):  # the input, and the first layer before its centering: no constant yet
        rows = frame[(frame.layer == 0) | ((frame.layer == 1) & (frame.stage == "pre_norm"))]
        return rows.sort_values(["width", "layer", "run"]).iso_gap.to_numpy()

    np.testing.assert_array_equal(before_the_constants(own), before_the_constants(printed))
    assert printed.c0.iloc[0] != pytest.approx(own.c0.iloc[0], abs=1e-4)  # act_info's c0 is off by 3e-4
    with pytest.raises(ValueError, match="printed their constants"):
        simulations.run_grid(_cfg("fig9", activations=["tanh"], constants="printed"), item="fig9")


def test_more_runs_pooled_with_the_default_are_one_longer_job():
    """first_run = the item's runs: the reading's runs continue the default's, never repeat them."""
    cfg = _cfg("fig9", readings={"more_runs": {"normalizations": ["mf"], "first_run": 2, "runs": 4}})
    pooled = s.pooled_runs(simulations.run_grid(cfg, item="fig9"),
                           simulations.run_grid(cfg, item="fig9", reading="more_runs"))
    long = simulations.run_grid(_cfg("fig9", normalizations=["mf"], runs=6), item="fig9")
    order = ["width", "layer", "stage", "run"]
    pooled, long = pooled.sort_values(order, kind="stable"), long.sort_values(order, kind="stable")
    np.testing.assert_array_equal(pooled.iso_gap.to_numpy(), long.iso_gap.to_numpy())
    assert sorted(pooled.run.unique()) == list(range(6))
    overlapping = simulations.run_grid(_cfg("fig9", normalizations=["mf"], first_run=1), item="fig9")
    with pytest.raises(ValueError, match="first_run"):
        s.pooled_runs(simulations.run_grid(cfg, item="fig9"), overlapping)


def test_block_means_average_each_block_of_runs():
    frame = pd.DataFrame({"hue": "a", "run": [0, 1, 2, 3, 4, 5], "layer": 1, "stage": "post_norm",
                          "iso_gap": [1.0, 3.0, 5.0, 7.0, np.nan, 4.0]})
    blocks = s.block_means(frame, ["hue"], 2).set_index("block").iso_gap
    assert blocks.to_dict() == {0: 2.0, 1: 6.0, 2: 4.0}
    # Without NaN, the mean of equal blocks is the mean of all runs: more runs, same mean in expectation.
    full = frame.iloc[:4]
    assert s.block_means(full, ["hue"], 2).iso_gap.mean() == s.line_means(full, ["hue"]).iso_gap.iloc[0]
    with pytest.raises(ValueError, match="block_runs"):
        s.block_means(frame, ["hue"], 0)


def test_block_bands_give_each_panel_the_range_of_its_block_means_and_the_mean_of_all_runs():
    """Decision D19: what a figure averaging ``block_runs`` runs would draw, per block, and over every run."""
    frame = pd.DataFrame({"width": [10] * 4 + [20] * 4, "run": [0, 1, 2, 3] * 2, "layer": 1, "stage": "post_norm",
                          "iso_gap": [1.0, 3.0, 5.0, 7.0, 2.0, 2.0, 4.0, np.nan]})
    bands = s.block_bands(frame, "width", 2)
    assert list(bands) == [10, 20]
    assert bands[10].loc[1].to_dict() == {"min": 2.0, "max": 6.0, "mean": 4.0}
    assert bands[20].loc[1].to_dict() == pytest.approx({"min": 2.0, "max": 4.0, "mean": 8.0 / 3})


def test_block_crossings_name_each_blocks_first_layer_above_the_threshold():
    frame = pd.DataFrame({"run": [0, 0, 1, 1, 2, 2, 3, 3], "layer": [1, 2] * 4, "stage": "post_norm",
                          "iso_gap": [12.0, 20.0, 8.0, 30.0, 1.0, 2.0, 1.0, 2.0]})
    crossings = s.block_crossings(frame, 2)  # the read-off's threshold, 10 (decision D21)
    assert crossings[0] == 2.0 and math.isnan(crossings[1])
    np.testing.assert_array_equal(s.block_crossings(frame, 1, threshold=10.0), [1.0, 2.0, np.nan, np.nan])


def test_the_convention_table_sets_both_averagings_side_by_side_at_the_last_layer():
    table = s.convention_table(_toy().assign(activation="relu", width=8), "hue")
    assert table.columns.tolist() == ["curve", "layer", "iso_gap (D4)", "iso_gap post_norm only"]
    row = table.iloc[0]
    assert row.curve == "relu, 8, a" and row.layer == 1
    assert row["iso_gap (D4)"] == pytest.approx(3.0) and row["iso_gap post_norm only"] == 2.5


# --- the D4 averaging ------------------------------------------------------------------------------------


def _toy() -> pd.DataFrame:
    """Two runs, one layer: input 6 and 8; pre_norm 4 and NaN; post_norm 2 and 3."""
    return pd.DataFrame({
        "hue": "a", "run": [0, 1, 0, 1, 0, 1], "layer": [0, 0, 1, 1, 1, 1],
        "stage": ["input", "input", "pre_norm", "pre_norm", "post_norm", "post_norm"],
        "iso_gap": [6.0, 8.0, 4.0, np.nan, 2.0, 3.0],
    })


def test_faithful_line_means_average_both_stages_and_drop_nan():
    """D4: a point at l ≥ 1 is the mean of the pre_norm and post_norm rows (NaN dropped, as seaborn does)."""
    means = s.line_means(_toy(), ["hue"]).set_index("layer").iso_gap
    assert means[0] == 7.0
    assert means[1] == pytest.approx((4.0 + 2.0 + 3.0) / 3)


def test_post_norm_line_means_keep_only_post_norm_rows():
    means = s.line_means(_toy(), ["hue"], convention="post_norm").set_index("layer").iso_gap
    assert means[0] == 7.0 and means[1] == 2.5


def test_an_infinite_or_empty_mean_is_a_missing_point():
    toy = _toy()
    toy.loc[4, "iso_gap"] = np.inf
    assert np.isnan(s.line_means(toy, ["hue"]).set_index("layer").iso_gap[1])
    toy.loc[[2, 4, 5], "iso_gap"] = np.nan
    assert np.isnan(s.line_means(toy, ["hue"]).set_index("layer").iso_gap[1])
    with pytest.raises(ValueError, match="convention"):
        s.line_means(toy, ["hue"], convention="pre_norm")


def test_curve_helpers():
    series = pd.Series([2.0, 12.0, np.nan, 5.0, np.nan], index=[0, 1, 2, 3, 4])
    assert s.last_finite_layer(series) == 3
    assert s.first_layer_above(series, 10) == 1
    assert math.isnan(s.first_layer_above(series, 100))
    assert s.max_log10_gap_between(pd.Series([1.0, 10.0]), pd.Series([1.0, 1.0]), from_layer=0) == pytest.approx(1)


def test_gain_prediction_is_factor_times_initial_gap_over_beta_power():
    frame = simulations.run_grid(_cfg("figb2", activations=["tanh"]), item="figb2")
    rows = s.gain_prediction(frame, 10)
    assert (rows.stage == "post_norm").all()
    np.testing.assert_allclose(rows.prediction, 10 * rows.iso_gap0 / rows.beta_gain**rows.layer)


# --- claims ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    """Every simulator result at quick-like sizes (depth 30, so that every claimed layer exists)."""
    folder = tmp_path_factory.mktemp("sim")
    paths = {}
    for item in ITEMS:
        path = folder / f"{item}.parquet"
        simulations.run_grid(_cfg(item, depth=30), item=item).to_parquet(path)
        paths[item] = [str(path)]
    return paths


def test_claims_cover_every_item_and_are_floats(quick_results):
    out = s.claims(quick_results, {"figb2": {"prediction_factor": 10}})
    assert set(out) == set(s.SIMULATOR_ITEMS)
    for item, quantities in out.items():
        assert quantities, item
        assert all(isinstance(v, Measured) for v in quantities.values()), item
    assert out["joudaki2023-fig4"]["log10_gap_relu_l0"].value > 0  # a degenerate input is far from isometric
    assert out["joudaki2023-fig6"]["exp_mf_missing_at_last_layer"].value in (0.0, 1.0)


def test_claims_carry_the_spread_over_runs(quick_results):
    """Docs "Seed spreads": a quantity of the plotted mean curve carries the spread of the same quantity over
    the runs' own curves; the quick profile's 2 runs give a finite, non-negative half-width."""
    out = s.claims(quick_results, {"figb2": {"prediction_factor": 10}})
    measured = out["joudaki2023-fig4"]["log10_gap_relu_layer_l1"]
    value, spread = measured.value, measured.spread
    assert np.isfinite(value) and spread >= 0
    fig9 = out["joudaki2023-fig9"]
    assert fig9["max_log10_layer_over_mf_l30"].value == pytest.approx(max(
        fig9[f"log10_gap_d{d}_layer_l30"].value - fig9[f"log10_gap_d{d}_mf_l30"].value
        for d in (8, 16)), nan_ok=True)


def test_per_block_drops_an_incomplete_block():
    frame = pd.DataFrame({"run": [0, 1, 2, 3, 4], "x": [1.0, 3.0, 5.0, 7.0, 100.0]})
    assert spreads.per_block(lambda f: {"x": float(f.x.mean())}, frame, 2) == {"x": [2.0, 6.0]}


def test_claims_of_the_readings_carry_their_reading_in_the_name(quick_results, tmp_path):
    """Decisions D20–D23: each reading adds its own quantities; the default quantities stay as they were."""
    readings = {
        "fig5_6--mc_constants": ("fig5_6", "mc_constants", {"constants": "monte_carlo", "normalizations": ["none"]}),
        "fig5_6--more_runs": ("fig5_6", "more_runs", {"activations": ["exp"], "normalizations": ["mf"],
                                                      "first_run": 2, "runs": 3}),
        "fig8a--narrow": ("fig8a", "narrow", {"widths": [8]}),
        "fig9--more_runs": ("fig9", "more_runs", {"normalizations": ["mf"], "first_run": 2, "runs": 3}),
        "fig9--mc_constants": ("fig9", "mc_constants", {"constants": "printed", "normalizations": ["mf"]}),
    }
    paths = dict(quick_results)
    for key, (item, name, overrides) in readings.items():
        path = tmp_path / f"{key}.parquet"
        simulations.run_grid(_cfg(item, depth=30, readings={name: overrides}), item=item, reading=name).to_parquet(path)
        paths[key] = [str(path)]
    out = s.claims(paths, {"figb2": {"prediction_factor": 10}})
    plain = s.claims(quick_results, {"figb2": {"prediction_factor": 10}})
    for item, quantities in plain.items():
        assert ({k: v.value for k, v in out[item].items() if k in quantities}
                == pytest.approx({k: v.value for k, v in quantities.items()}, nan_ok=True))
    assert {"last_finite_layer_relu_none_mc_constants", "last_finite_layer_sigmoid_none_mc_constants",
            "last_finite_layer_exp_none_mc_constants"} <= set(out["joudaki2023-fig5"])
    assert {"first_layer_exp_mf_above_10_5runs",
            "log10_gap_exp_mf_max_to_l6_block_mean"} <= set(out["joudaki2023-fig6"])
    assert {"log10_gap_relu_min_d8", "log10_gap_relu_l30_d8", "log10_gap_selu_l30_d8"} <= set(out["joudaki2023-fig8a"])
    assert {"log10_gap_d8_mf_l30_5runs", "log10_gap_d16_mf_l30_5runs"} <= set(out["joudaki2023-fig9"])
    assert {"log10_gap_d8_mf_l30_mc_constants", "log10_gap_d16_mf_l30_mc_constants"} <= set(out["joudaki2023-fig9"])


def test_claims_skip_items_without_results(quick_results):
    out = s.claims({"fig5_6": quick_results["fig5_6"]}, {})
    assert set(out) == {"joudaki2023-fig5", "joudaki2023-fig6"}
