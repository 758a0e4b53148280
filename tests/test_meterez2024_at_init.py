"""Meterez et al. 2024 at initialisation (Figs. 1, 2, 3, 5, G5, G6, E1, E2): tiny networks, seconds, offline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from isonorm.data import fetch_dataset
from isonorm.experiments.meterez2024 import at_init as m
from isonorm.experiments.meterez2024 import at_init_summaries as s
from isonorm.items import paper_items
from isonorm.metrics import explosion_rate, gram, isometry_gap
from isonorm.models.bn_mlp import single_run_reference
from isonorm.verdicts.claims import Measured
from isonorm.results import write_results
from isonorm.runtime import generator

CPU = torch.device("cpu")
PAPER_BN = {"activation": "identity", "norm": "bn", "mean_reduction": False, "force_factor": 1.0,
            "init": "orthogonal", "gain_exponent": 0.0, "gain": 1.0, "bias": False}
SWEEP = {  # the quick-preset shape of an at-init item (d = n = 16, shallow, 2 runs)
    "width": 16, "runs": 2, "depths": [5, 12], "model": PAPER_BN, "grad_layers": [1], "rate_layers": [],
    "last_isogap": False, "run_chunk": 10, "degenerate": {"distinct": 4, "repeats": 4},
    "transform": "dataset_constants", "batch_size": 16, "batch_seed": 0,
}
FIG1 = {"widths": [8, 16], "depth": 10, "runs": 2, "f": 0.005, "theory_constant": 0.015, "input_seed": 0,
        "model": {k: PAPER_BN[k] for k in ("activation", "norm", "mean_reduction", "force_factor", "init")}}


def batch(n: int = 16, features: int = 30, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, features, generator=gen), torch.randint(0, 10, (n,), generator=gen)


# ---- inputs ---------------------------------------------------------------------------------------------------

def test_near_orthogonal_input_is_the_spec_formula_and_seeded():
    x = m.near_orthogonal_input(6, 0.2, generator("t", 1))
    gen = generator("t", 1)
    u, v = torch.rand(6, 1, generator=gen), torch.rand(1, 6, generator=gen)
    torch.testing.assert_close(x, 0.8 * torch.eye(6) + 0.2 * u @ v)
    assert float(isometry_gap(gram(m.near_orthogonal_input(6, 0.0, generator("t", 2))))) == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="0 ≤ f < 1"):
        m.near_orthogonal_input(6, 1.5, generator("t"))


def test_theory_line_starts_at_phi0_and_decays_with_rate_one_over_k():
    line = m.theory_isometry_gap(3.2e-4, np.arange(100), 100, 0.015)
    k = 0.015 * 100**2 * (1 + 100 * 3.2e-4)
    assert line[0] == pytest.approx(3.2e-4)
    np.testing.assert_allclose(np.diff(np.log(line)), -1 / k)


def test_degenerate_batch_has_rank_distinct_and_repeats_labels():
    x, y = batch(16, 40)
    xd, yd = m.degenerate_batch(x, y, 4, 4)
    assert xd.shape == (16, 40) and int(torch.linalg.matrix_rank(xd)) == 4
    assert torch.equal(yd, y[:4].repeat_interleave(4))
    with pytest.raises(ValueError, match="distinct"):
        m.degenerate_batch(x, y, 20, 2)


def test_seeded_batch_is_deterministic_and_without_replacement():
    x = torch.arange(50.0).unsqueeze(1)
    y = torch.arange(50)
    xb, yb = m.seeded_batch(x, y, 20, 0)
    assert torch.equal(xb, m.seeded_batch(x, y, 20, 0)[0]) and len(set(yb.tolist())) == 20
    assert not torch.equal(xb, m.seeded_batch(x, y, 20, 1)[0])
    with pytest.raises(ValueError, match="batch_size"):
        m.seeded_batch(x, y, 51, 0)


# ---- one stack -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [PAPER_BN, {**PAPER_BN, "norm": "torch_bn", "bias": True, "activation": "tanh",
                                                "gain_exponent": 0.4, "force_factor": None}])
def test_stacked_gradients_equal_each_runs_own_loss(options):
    """Σ_r mean-CE gives every run the gradient of its own mean loss: equal to a lone eager network's."""
    x, y = batch()
    config = m.model_config(options, 30, 16, 10, 6)
    gens = [generator("stack", r) for r in range(3)]
    stacked = m.measure_stack(config, x, y, gens, device=CPU)["log_grad"]
    for run in range(3):
        net = single_run_reference(config, generator("stack", run)).train()
        F.cross_entropy(net(x), y).backward()
        linears = [layer for layer in net if isinstance(layer, torch.nn.Linear)]
        expected = torch.stack([layer.weight.grad.double().norm().log() for layer in linears])
        torch.testing.assert_close(stacked[run], expected, rtol=1e-4, atol=1e-4)


def test_last_isogap_is_phi_of_the_last_hidden_fc_output():
    x, y = batch()
    config = m.model_config(PAPER_BN, 30, 16, 10, 4)
    out = m.measure_stack(config, x, y, [generator("g", 0)], device=CPU, last_isogap=True)
    net = single_run_reference(config, generator("g", 0)).train()
    h = x
    for layer in list(net)[: 4 * 3 + 1]:  # fc_0, (norm, gain, act, fc)×3 → the fc_3 = fc_{L−1} output
        h = layer(h)
    torch.testing.assert_close(out["last_isogap"][0], isometry_gap(gram(h.detach())), rtol=1e-4, atol=1e-6)


def test_model_config_rejects_unknown_options():
    with pytest.raises(ValueError, match="unknown model option"):
        m.model_config({"activation": "identity", "widht": 3}, 4, 4, 2, 2)


# ---- Fig. 1 ------------------------------------------------------------------------------------------------------

def test_fig1_starts_at_phi_x0_matches_theory_there_and_decays():
    frame = m.fig1(FIG1, device="cpu")
    assert set(frame["source"]) == {"empirical", "theory"}
    assert len(frame) == 2 * 10 * (2 + 1)  # widths × layers × (runs + theory line)
    curves = s.fig1_curves(frame)
    for width in (8, 16):
        x0 = m.near_orthogonal_input(width, 0.005, generator(m.SLUG, "fig1", "input", 0, width))
        phi0 = float(isometry_gap(gram(x0)))
        empirical = curves[(curves.width == width) & (curves.source == "empirical")].sort_values("layer")["mean"]
        assert empirical.iloc[0] == pytest.approx(phi0, rel=1e-3)  # square orthogonal W keeps the Gram
        assert empirical.iloc[-1] < empirical.iloc[0]
    assert frame.equals(m.fig1(FIG1, device="cpu"))  # seeded


# ---- the sweeps ------------------------------------------------------------------------------------------------

def test_sweep_rows_factors_and_rates():
    cfg = {**SWEEP, "variants": [{"label": "Orthogonal"}, {"label": "Normal", "init": "xavier_normal"}],
           "rate_layers": [10], "last_isogap": True}
    x, y = batch()
    frame = m.sweep(cfg, "fig3", x, y, 10, CPU)
    counts = frame.groupby(["variant", "metric"]).size()
    assert counts[("Orthogonal", "log_grad")] == 2 * 2 and counts[("Orthogonal", "last_isogap")] == 2 * 2
    assert counts[("Orthogonal", "rate")] == 2  # R(10) exists only at depth 12
    assert set(frame["init"]) == {"orthogonal", "xavier_normal"} and set(frame["depth"]) == {5, 12}
    # R(10) is metrics M4 of the per-layer log-norms
    config = m.model_config({**PAPER_BN}, 30, 16, 10, 12)
    gens = [generator(m.SLUG, "fig3", "Orthogonal", 12, r) for r in range(2)]
    log_grad = m.measure_stack(config, x, y, gens, device=CPU)["log_grad"]
    rate = frame.query("variant == 'Orthogonal' and metric == 'rate'").sort_values("run")["value"].to_numpy()
    np.testing.assert_allclose(rate, explosion_rate(log_grad)[:, 10].numpy(), rtol=1e-6)


def test_sweep_chunking_and_grid_expansion_are_exact():
    cfg = {**SWEEP, "runs": 3, "variants": [{"label": "Without gain", "gain_exponent": 0.0}],
           "grid": {"activation": ["identity", "tanh"]}, "model": {**PAPER_BN, "norm": "torch_bn", "bias": True}}
    x, y = batch()
    whole = m.sweep(cfg, "fig5", x, y, 10, CPU)
    chunked = m.sweep({**cfg, "run_chunk": 1}, "fig5", x, y, 10, CPU)
    pd.testing.assert_frame_equal(whole, chunked)
    assert set(whole["variant"]) == {"Without gain, activation=identity", "Without gain, activation=tanh"}


def test_degenerate_inputs_keep_non_finite_values_as_nan():
    cfg = {**SWEEP, "variants": [{"label": "Degenerate", "input": "degenerate"}], "last_isogap": True}
    x, y = batch()
    frame = m.sweep(cfg, "fig2", x, y, 10, CPU)
    gaps = frame[frame.metric == "last_isogap"]["value"]
    assert gaps.isna().all()  # rank-4 Gram of 16 samples: φ = inf, stored as NaN (decision C11)
    assert s.nonfinite_count(frame) == len(gaps)
    with pytest.raises(ValueError, match="input"):
        m.sweep({**cfg, "variants": [{"label": "x", "input": "other"}]}, "fig2", x, y, 10, CPU)
    with pytest.raises(ValueError, match="grad layer"):
        m.sweep({**cfg, "grad_layers": [9]}, "fig2", x, y, 10, CPU)


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("data")
    fetch_dataset("cifar10", root, "synthetic", n_train=60, n_test=20, seed=1)
    return str(root)


@pytest.fixture(scope="module")
def item_results(data_root, tmp_path_factory) -> dict[str, list[str]]:
    """Every at-init item at quick sizes on synthetic CIFAR-10, written as Parquet."""
    out = tmp_path_factory.mktemp("results")
    grads = {**SWEEP}
    items = {
        "fig2": {**grads, "variants": [{"label": "Non-degenerate"}, {"label": "Degenerate", "input": "degenerate"}]},
        "fig3": {**grads, "model": {**PAPER_BN, "force_factor": None},
                 "variants": [{"label": "Orthogonal"}, {"label": "Normal", "init": "xavier_normal"}]},
        "fig5": {**grads, "model": {**PAPER_BN, "norm": "torch_bn", "bias": True, "force_factor": None},
                 "variants": [{"label": "Without gain", "gain_exponent": 0.0}, {"label": "With gain", "gain_exponent": 0.4}],
                 "grid": {"activation": ["identity", "sin", "tanh"]}, "last_isogap": True},
        "figg6": {**grads, "grad_layers": [0], "variants": [
            {"label": "With", "mean_reduction": True, "force_factor": None},
            {"label": "Without", "mean_reduction": False, "force_factor": 1.0}]},
        "fige1": {**grads, "depths": [30], "rate_layers": [15, 25], "model": {**PAPER_BN, "norm": "torch_bn", "bias": True},
                  "variants": [{"label": "Constant gain"}], "grid": {"activation": ["sin", "tanh"], "gain": [0.5, 0.9]}},
        "fige2": {**grads, "depths": [15, 20], "rate_layers": [10], "model": {**PAPER_BN, "norm": "torch_bn", "bias": True},
                  "variants": [{"label": "Gain schedule"}], "grid": {"activation": ["sin", "tanh"], "gain_exponent": [1.0, 0.1]}},
    }
    results = {}
    for item, cfg in items.items():
        frame = m.gradient_sweep(cfg, item=item, data_root=data_root, dataset="cifar10", device="cpu")
        path = out / f"{item}.parquet"
        write_results(frame, path, config=cfg)
        results[item] = [str(path)]
    fig1 = m.fig1(FIG1, device="cpu")
    write_results(fig1, out / "fig1.parquet", config=FIG1)
    results["fig1"] = [str(out / "fig1.parquet")]
    return results


def test_items_run_on_a_data_set_and_claims_cover_every_item(item_results):
    claims = s.claims(item_results, {})
    # every item of the claims whose job the fixture runs, as the records name them
    assert set(claims) == {item.id for item in paper_items("meterez2024")
                           if item.claims is s.claims and item.computed_by in (m.fig1, m.gradient_sweep)}
    assert {"nondegenerate_depth5", "degenerate_depth12", "nondegenerate_flat", "degenerate_explodes"} <= set(claims["meterez2024-fig2"])
    assert {"orthogonal_bounded", "normal_grows", "normal_slope_per_layer"} <= set(claims["meterez2024-fig3"])
    assert {"with_gain_all_bounded", "without_gain_nonlinear_explode", "without_gain_sin_depth12"} <= set(claims["meterez2024-fig5"])
    assert "log10_isogap_identity_depth5" in claims["meterez2024-figg5"]
    assert {"mean_offset", "min_offset", "with_depth5", "without_depth12"} <= set(claims["meterez2024-figg6"])
    assert {"sin_alpha0.5", "tanh_alpha0.9", "sin_c2", "tanh_fit_alpha0.9", "sin_curves_coincide"} <= set(claims["meterez2024-fige1"])
    assert {"sin_depth20_exp-0.1", "tanh_depth15_exp-1", "sin_rate_gain_min"} <= set(claims["meterez2024-fige2"])
    assert claims["meterez2024-fig1"]["log10_decay_d16"].value < 0 and claims["meterez2024-fig1"]["theory_equals_empirical_at_input_d8"] == 1.0
    assert "log10_decay_width_gap" in claims["meterez2024-fig1"]
    for item, quantities in claims.items():
        for name, value in quantities.items():
            if isinstance(value, Measured):  # a level of several runs carries its seed spread
                assert isinstance(value.value, float) and (math.isnan(value.spread) or value.spread >= 0), (item, name)
                continue
            assert isinstance(value, float), (item, name)
            if name.endswith(("_flat", "_explodes", "_bounded", "_grows", "_nonfinite", "_coincide", "_plateaus")):
                assert value in (0.0, 1.0), (item, name)
    # spreads over the runs where the item has several: a depth point of Fig. 3, a level of Fig. 1
    assert claims["meterez2024-fig3"]["normal_depth5"].spread > 0 and claims["meterez2024-fig1"]["log10_empirical_d8_last"].spread > 0
    assert s.claims({}, {}) == {}  # nothing run, nothing claimed


def test_explosion_fit_recovers_a_power_law():
    gains = [0.3, 0.5, 0.7, 0.9]
    rows = [dict(activation="sin", gain=a, layer=ell, run=0, metric="rate", value=0.12 * a**3)
            for a in gains for ell in (100, 200)]
    rows.append(dict(activation="sin", gain=0.1, layer=100, run=0, metric="rate", value=-0.01))  # R ≤ 0 excluded
    fit = s.explosion_fit(pd.DataFrame(rows))
    assert fit.loc[0, "c2"] == pytest.approx(3.0) and fit.loc[0, "c1"] == pytest.approx(0.12)
    assert fit.loc[0, "points"] == 8
