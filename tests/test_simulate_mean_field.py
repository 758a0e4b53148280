"""The mean-field simulator of Joudaki et al. (2023): theorems, closed forms, contracts, determinism, NaN."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from isonorm.metrics import isometry_gap, isometry_strength
from isonorm.metrics import gaussian_moments
from isonorm.runtime import generator
from isonorm.simulate import mean_field as mf
from isonorm.simulate.mean_field import MeanFieldNetwork, Numerics, simulate

TINY = {"batch": 4, "width": 32, "depth": 4}
F64 = Numerics(dtype="float64", metric_dtype="float64")


def _gap(x: torch.Tensor) -> float:
    return float(isometry_gap(x @ x.mT))


# --- Theorem 1 / Corollaries 2 and 3: normalisation never decreases isometry ---------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 6),
    extra=st.integers(0, 10),
    log_scales=st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6),
    seed=st.integers(0, 2**31 - 1),
)
def test_layer_norm_never_decreases_isometry(n, extra, log_scales, seed):
    """Corollary 2 (LN(x) = x / RMS(x), Table 1, no centering): I(G̃) ≥ I(G)(1 + Var(a)/ā²), a_i = ‖x_i‖.

    In gaps: −log I(G̃) ≤ −log I(G) − log(1 + Var a / ā²); rows get random scales over six decades.
    """
    d = n + extra
    gen = torch.Generator().manual_seed(seed)
    scales = 10.0 ** torch.tensor(log_scales[:n], dtype=torch.float64)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64) * scales[:, None]
    norms = x.norm(dim=1)
    bonus = math.log(1 + float(norms.var(unbiased=False) / norms.mean() ** 2))
    after = mf.normalize(x, "layer", variance=1.0)
    assert _gap(after) <= _gap(x) - bonus + 1e-9 * (1 + _gap(x))


@settings(max_examples=30, deadline=None)
@given(d=st.integers(2, 5), extra=st.integers(0, 8), seed=st.integers(0, 2**31 - 1))
def test_batch_norm_never_decreases_isometry_of_the_feature_covariance(d, extra, seed):
    """Corollary 3: BN scales each feature (column, over the n samples) to unit RMS; I(XᵀX) cannot drop."""
    gen = torch.Generator().manual_seed(seed)
    n = d + extra
    x = torch.randn(n, d, generator=gen, dtype=torch.float64) * torch.rand(d, generator=gen, dtype=torch.float64).add(0.01)
    after = mf.normalize(x, "batch", variance=1.0)
    assert float(isometry_gap(after.mT @ after)) <= float(isometry_gap(x.mT @ x)) + 1e-9


def test_simulated_layer_norm_never_increases_the_gap():
    """In the simulator itself (no centering): every post_norm gap ≤ its pre_norm gap (Corollary 2)."""
    net = MeanFieldNetwork("tanh", centering="none", normalization="layer", degeneracy=10, **TINY)
    frame = simulate(net, 3, ("test", "corollary2"), F64)
    pre = frame[frame.stage == "pre_norm"].set_index(["run", "layer"]).iso_gap
    post = frame[frame.stage == "post_norm"].set_index(["run", "layer"]).iso_gap
    assert (post <= pre + 1e-9).all()


# --- the pieces -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("degeneracy", [1.0, 5.0, 100.0])
def test_degenerate_input_has_the_stated_singular_values_and_unit_mean_square(degeneracy):
    x = mf.degenerate_input(6, 40, degeneracy, generator("t", degeneracy), torch.float64, "cpu")
    raw = torch.randn(6, 40, generator=generator("t", degeneracy), dtype=torch.float64)
    ratio = torch.linalg.svdvals(x) / torch.linalg.svdvals(raw)
    # Same draws: every singular value is rescaled alike, except the largest, which gains the factor.
    assert float(x.pow(2).mean()) == pytest.approx(1.0, rel=1e-12)
    torch.testing.assert_close(ratio[1:], ratio[1:].mean().expand(5), rtol=1e-9, atol=0)
    assert float(ratio[0] / ratio[1]) == pytest.approx(degeneracy, rel=1e-9)


@pytest.mark.parametrize(
    ("activation", "gain"),
    [("relu", math.sqrt(2)), ("tanh", 5 / 3), ("selu", 3 / 4), ("sigmoid", 1.0), ("identity", 1.0),
     ("leaky_relu", math.sqrt(2 / (1 + 0.01**2)))],
)
def test_xavier_gain_is_torch_calculate_gain(activation, gain):
    assert mf.resolve_gain("xavier", activation) == pytest.approx(gain, rel=1e-12)
    assert MeanFieldNetwork(activation, gain="xavier").gain_value == pytest.approx(gain, rel=1e-12)


def test_xavier_gain_for_an_unknown_nonlinearity_is_a_clear_error():
    with pytest.raises(ValueError, match="calculate_gain has no gain for 'sin'"):
        MeanFieldNetwork("sin", gain="xavier")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("centering", "mean", "centering 'mean'"), ("normalization", "rms", "normalization 'rms'"),
     ("activation", "swish", "unknown activation"), ("gain", "he", "number or 'xavier'"),
     ("degeneracy", 0.0, "degeneracy")],
)
def test_bad_configurations_are_rejected_with_the_cause(field, value, message):
    kwargs = {"activation": "relu", field: value}
    with pytest.raises(ValueError, match=message):
        MeanFieldNetwork(**kwargs)


def test_bad_numerics_are_rejected():
    with pytest.raises(ValueError, match="constants method"):
        Numerics(constants="exact")
    with pytest.raises(ValueError, match="dtype"):
        Numerics(dtype="float16")
    with pytest.raises(ValueError, match="sampler"):
        Numerics(sampler="qr")


def test_relu_constants_in_closed_form():
    """c0 = 1/√(2π), c1 = 1/2, E σ² = 1/2 for ReLU, and β from them equals isometry_strength."""
    moments = mf.activation_constants("relu")
    assert moments.c0 == pytest.approx(1 / math.sqrt(2 * math.pi), abs=1e-12)
    assert moments.c1 == pytest.approx(0.5, abs=1e-12)
    assert moments.second_moment == pytest.approx(0.5, abs=1e-12)
    assert moments.strength == pytest.approx(isometry_strength("relu"), abs=1e-12)


def test_monte_carlo_constants_are_the_act_info_estimate():
    exact = gaussian_moments("tanh")
    estimate = mf.activation_constants("tanh", "monte_carlo", n_samples=20_000, seed=3)
    assert estimate.c1 == pytest.approx(exact.c1, abs=5 * math.sqrt(exact.second_moment / 20_000))
    assert estimate == mf.activation_constants("tanh", "monte_carlo", n_samples=20_000, seed=3)


def test_printed_constants_are_a_monte_carlo_estimate_of_relus():
    """Decision D23: the originals' printed act_info('relu') is a Monte Carlo estimate of the exact constants (within
    a few standard errors of 2·10⁶ samples), with c1 = E σ² as ReLU's always are (both are E[x²; x > 0])."""
    printed, exact = mf.activation_constants("relu", "printed"), mf.activation_constants("relu")
    standard_error = math.sqrt(exact.variance / mf.ACT_INFO_SAMPLES)
    assert printed != exact
    assert printed.c0 == pytest.approx(exact.c0, abs=3 * standard_error)
    assert printed.second_moment == pytest.approx(exact.second_moment, abs=3 * math.sqrt(1.25 / mf.ACT_INFO_SAMPLES))
    assert printed.c1 == printed.second_moment
    with pytest.raises(ValueError, match="printed their constants"):
        mf.activation_constants("relu", "printed", gain=2.0)
    Numerics(constants="printed")  # a method the simulator accepts


def test_mean_field_centering_agrees_with_layer_centering():
    """Subtracting c0 = E σ vs each row's mean (Fig. 4's claim): with the same draws the gaps agree closely."""
    common = {"normalization": "layer", "degeneracy": 10, "batch": 4, "width": 512, "depth": 3}
    seed = ("test", "centering")
    layer = simulate(MeanFieldNetwork("relu", centering="layer", **common), 4, seed, F64)
    meanfield = simulate(MeanFieldNetwork("relu", centering="mf", **common), 4, seed, F64)
    deep = (layer.layer >= 1) & (layer.stage == "post_norm")
    relative = (meanfield.iso_gap[deep] - layer.iso_gap[deep]).abs() / layer.iso_gap[deep]
    assert relative.max() < 0.15
    # while not centring at all is clearly worse (c0 ≠ 0 adds a direction common to all samples)
    none = simulate(MeanFieldNetwork("relu", centering="none", **common), 4, seed, F64)
    assert none.iso_gap[deep].mean() > 1.5 * layer.iso_gap[deep].mean()


def test_mean_field_normalization_gives_unit_second_moment_on_average():
    net = MeanFieldNetwork("tanh", centering="mf", normalization="mf", batch=8, width=2048, depth=1)
    x = torch.randn(1, 8, 2048, generator=generator("t"), dtype=torch.float64)
    constants = mf.activation_constants("tanh")
    out = mf.normalize(mf.center(torch.tanh(x), net.centering, constants.c0), net.normalization, constants.variance)
    assert float(out.pow(2).mean()) == pytest.approx(1.0, abs=0.05)


# --- the simulation: layout, theory columns, seeding, divergence ----------------------------------------


def test_frame_layout_and_theory_columns():
    net = MeanFieldNetwork("relu", degeneracy=5, **TINY)
    frame = simulate(net, 3, ("test", "layout"), F64)
    assert len(frame) == 3 * (2 * TINY["depth"] + 1)
    assert frame[frame.layer == 0].stage.eq("input").all()
    assert set(frame[frame.layer >= 1].stage) == {"pre_norm", "post_norm"}
    first = frame[(frame.stage == "post_norm") & (frame.layer == 1)].set_index("run")
    np.testing.assert_allclose(frame.gamma0, frame.run.map(first.gamma))
    np.testing.assert_allclose(frame.gamma_theory, frame.gamma0 / frame.beta**frame.layer)
    np.testing.assert_allclose(frame.iso_gap_theory, 2 * TINY["batch"] * frame.gamma0 / frame.beta**frame.layer)
    assert frame.beta.iloc[0] == pytest.approx(isometry_strength("relu"), abs=1e-12)
    assert (frame.iso_gap[np.isfinite(frame.iso_gap)] >= -1e-9).all()


def test_beta_gain_is_the_strength_of_the_scaled_activation():
    frame = simulate(MeanFieldNetwork("tanh", gain=2.0, **TINY), 1, ("test", "gain"), F64)
    assert frame.beta_gain.iloc[0] == pytest.approx(isometry_strength("tanh", gain=2.0), abs=1e-12)
    assert frame.gain.iloc[0] == 2.0 and frame.gain_setting.iloc[0] == "2.0"


def test_runs_are_seeded_individually():
    net = MeanFieldNetwork("tanh", **TINY)
    two = simulate(net, 2, ("test", "seed"))
    three = simulate(net, 3, ("test", "seed"))
    again = simulate(net, 2, ("test", "seed"))
    other = simulate(net, 2, ("test", "other"))
    np.testing.assert_array_equal(two.iso_gap, again.iso_gap)
    np.testing.assert_array_equal(two.iso_gap, three[three.run < 2].iso_gap)
    assert not np.allclose(two.iso_gap, other.iso_gap)


def test_more_runs_continue_the_first_ones():
    """Decision D19: runs 0..1 and then runs 2..4 (first_run = 2) are exactly the rows of one 5-run job."""
    net = MeanFieldNetwork("relu", centering="mf", normalization="mf", **TINY)
    five = simulate(net, 5, ("test", "more"))
    first = simulate(net, 2, ("test", "more"))
    more = simulate(net, 3, ("test", "more"), first_run=2)
    assert sorted(more.run.unique()) == [2, 3, 4]
    both = pd.concat([first, more]).sort_values(["layer", "stage", "run"], kind="stable")
    five = five.sort_values(["layer", "stage", "run"], kind="stable")
    for column in ("run", "iso_gap", "gamma", "iso_gap0", "gamma_theory"):
        np.testing.assert_array_equal(both[column].to_numpy(), five[column].to_numpy())
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="first_run"):
            simulate(net, 2, ("test", "more"), first_run=bad)


def _last_drawn_layer(frame) -> int:
    drawn = frame[frame.stage == "post_norm"].groupby("layer").iso_gap.apply(lambda gaps: gaps.notna().any())
    return int(drawn[drawn].index.max())


def test_sigmoid_without_normalization_stops_where_float32_and_the_constant_c0_decide():
    """Decision D20 on a small case (n = 10 as the paper, d = 256): x ← σ(xW) − c0 shrinks about 4× per layer.
    In float32 with the exact c0 = 1/2 the values fall below the resolution of σ near 1/2 and the chain stops;
    in float64 it keeps going; the originals' Monte Carlo c0 (off by ~1e-4) leaves an offset that makes the
    Gram nearly rank one, so the chain stops earlier still."""
    net = MeanFieldNetwork("sigmoid", centering="mf", normalization="none", degeneracy=10, batch=10, width=256,
                           depth=16)
    exact = _last_drawn_layer(simulate(net, 2, ("test", "sigmoid")))
    monte_carlo = _last_drawn_layer(simulate(net, 2, ("test", "sigmoid"), Numerics(constants="monte_carlo")))
    in_float64 = _last_drawn_layer(simulate(net, 2, ("test", "sigmoid"), F64))
    assert monte_carlo < exact < in_float64 == 16


def test_a_diverging_run_becomes_nan_without_stopping_the_simulation(caplog):
    """exp without normalisation overflows within a few layers: NaN from there on, logged, no exception."""
    net = MeanFieldNetwork("exp", centering="mf", normalization="none", degeneracy=10, batch=4, width=64, depth=8)
    with caplog.at_level(logging.INFO, logger="isonorm.simulate.mean_field"):
        frame = simulate(net, 3, ("test", "diverge"))
    assert len(frame) == 3 * 17
    assert frame[frame.layer == 8].iso_gap.isna().all()
    assert np.isfinite(frame[frame.layer == 0].iso_gap).all()
    assert "non-finite" in caplog.text


@pytest.mark.parametrize("sampler", ["direct", "cholesky"])
def test_gaussian_layer_preserves_the_gram_in_expectation(sampler):
    """E[(XW)(XW)ᵀ] = d·X Xᵀ for W ~ N(0, 1)^{d×d}: both samplers draw X W exactly in distribution."""
    d = 4096
    x = torch.randn(3, 4, 8, generator=generator("t", "x"), dtype=torch.float64).repeat(1, 1, d // 8)
    gens = [generator("t", sampler, run) for run in range(3)]
    h = mf._gaussian_layer(x, gens, sampler)
    assert h.shape == x.shape
    target = x @ x.mT
    torch.testing.assert_close(h @ h.mT / d, target, rtol=0, atol=0.12 * float(target.abs().max()))


def test_gaussian_layer_keeps_a_non_finite_run_nan_and_the_others_finite():
    x = torch.ones(2, 3, 16, dtype=torch.float64)
    x[1, 0, 0] = float("inf")
    h = mf._gaussian_layer(x, [generator("a"), generator("b")], "cholesky")
    assert torch.isfinite(h[0]).all() and torch.isnan(h[1]).all()


def test_activation_after_the_linear_map_changes_the_recursion():
    first = simulate(MeanFieldNetwork("relu", activation_first=True, **TINY), 2, ("t", "order"), F64)
    second = simulate(MeanFieldNetwork("relu", activation_first=False, **TINY), 2, ("t", "order"), F64)
    pre1 = first[(first.stage == "pre_norm") & (first.layer == 1)].iso_gap.to_numpy()
    pre2 = second[(second.stage == "pre_norm") & (second.layer == 1)].iso_gap.to_numpy()
    assert not np.allclose(pre1, pre2)
