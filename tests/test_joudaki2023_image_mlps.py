"""Image-MLP experiments of Joudaki et al. (2023) on tiny synthetic data sets (offline, seconds)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from isonorm.data import fetch_dataset, load_split
from isonorm.experiments.joudaki2023 import image_mlp_summaries as s
from isonorm.experiments.joudaki2023 import image_mlps as m
from isonorm.metrics import isometry_strength, training_isometry_gap
from isonorm.models.layernorm_mlp import LayerNormMLP
from isonorm.verdicts.claims import Measured
from isonorm.runtime import generator
from isonorm.train import StackedModels

COMMON = {
    "transform": "half", "eps": 1e-8, "measure_batches": 6, "shuffle_test": False, "act_on_logits": True,
    "beta_method": "quadrature",
}
RUNS = {**COMMON, "width": 24, "hidden_layers": 2, "batch_size": 16, "runs": 2, "reduce_mean": True,
        "stages": ["train", "test"], "num_epochs": 3, "lr": 0.01, "checkpoint_every": 1}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("data")
    for name in ("cifar10", "mnist"):
        fetch_dataset(name, root, "synthetic", n_train=120, n_test=48, seed=1)
    return str(root)


@pytest.fixture(scope="module")
def tanh_runs(data_root) -> pd.DataFrame:
    return m.train_run_set(RUNS, activation="Tanh", data_root=data_root, dataset="cifar10", device="cpu",
                           checkpoint=None, item="fig2_runs")


# ---- measurement pieces --------------------------------------------------------------------------------

def test_module_gap_is_the_training_gap_and_nan_when_singular_by_construction():
    h = torch.randn(3, 8, 9, dtype=torch.float64)
    torch.testing.assert_close(m.module_isometry_gap(h, False, 1e-8), training_isometry_gap(h, False, 1e-8, 1))
    torch.testing.assert_close(m.module_isometry_gap(h, True, 1e-8), training_isometry_gap(h, True, 1e-8, 1))
    assert torch.isnan(m.module_isometry_gap(h[:, :, :7], False, 1e-8)).all()  # 7 features < 8 samples
    assert torch.isnan(m.module_isometry_gap(h[:, :, :8], True, 1e-8)).all()  # centring leaves rank 7 < 8
    assert torch.isfinite(m.module_isometry_gap(h[:, :, :8], False, 1e-8)).all()


def test_measurement_batches_are_seeded_per_run_and_keep_a_short_last_batch():
    batches = m.measurement_batches(50, 8, 6, [0, 1], True, "t", "train", 0)
    assert [tuple(b.shape) for b in batches] == [(2, 8)] * 6
    again = m.measurement_batches(50, 8, 6, [1], True, "t", "train", 0)
    assert all(torch.equal(a[1], b[0]) for a, b in zip(batches, again))  # run 1 does not depend on its stack
    assert not torch.equal(batches[0][0], batches[0][1])
    taken = torch.cat(batches, dim=1)
    assert all(len(set(row.tolist())) == 48 for row in taken)  # without replacement
    short = m.measurement_batches(20, 8, 6, [0], False)
    assert [b.shape[1] for b in short] == [8, 8, 4] and torch.equal(torch.cat(short, 1)[0], torch.arange(20))


def test_stacked_measure_equals_each_run_measured_alone(data_root):
    cfg = {**RUNS, "num_classes": 10}
    x, y = load_split("cifar10", data_root, "train", transform="half", flatten=True)
    nets = [LayerNormMLP(x.shape[1], [24, 24], 10, "ReLU", generator=generator("t", r)) for r in (0, 1)]
    names = nets[0].module_names
    together = m.ModuleMeasure({"train": (x, y)}, cfg, names, [0, 1], "v")(StackedModels(nets), 0)
    for run, net in enumerate(nets):
        alone = m.ModuleMeasure({"train": (x, y)}, cfg, names, [run], "v")(StackedModels([net]), 0)
        for key, value in alone.items():
            torch.testing.assert_close(together[key][run], value[0], equal_nan=True, msg=key)


# ---- a tiny training run -------------------------------------------------------------------------------

def test_training_run_rows_cover_every_run_epoch_stage_batch_and_module(tanh_runs):
    df = tanh_runs
    modules = 3 * (RUNS["hidden_layers"] + 1)
    per_stage = {"train": 6, "test": 3}  # 48 test samples in batches of 16: the test pass runs out after 3
    expected = RUNS["runs"] * RUNS["num_epochs"] * sum(per_stage.values()) * modules
    assert len(df) == expected
    assert sorted(df.epoch.unique()) == [0, 1, 2]
    assert df.groupby("stage").batch.nunique().to_dict() == per_stage
    assert df.epoch_train_loss[df.epoch == 0].isna().all() and df.epoch_train_loss[df.epoch > 0].notna().all()
    assert df.loss.notna().all() and df.accuracy.between(0, 1).all()
    assert df.beta.unique().tolist() == [pytest.approx(isometry_strength("tanh"))]
    # The logits (10 features < 16 samples) have a singular Gram: NaN, as the originals' absent points.
    assert s.degenerate_modules(df) == ["act-2", "fc-2"]
    assert df[~df.module.isin(["fc-2", "act-2"])].iso_gap.notna().all()


def test_loss_is_one_value_per_batch_and_changes_with_training(tanh_runs):
    per_batch = tanh_runs.groupby(["run", "epoch", "stage", "batch"]).loss.nunique()
    assert (per_batch == 1).all()
    first = tanh_runs[(tanh_runs.epoch == 0) & (tanh_runs.stage == "train")].loss.mean()
    last = tanh_runs[(tanh_runs.epoch == 2) & (tanh_runs.stage == "train")].loss.mean()
    assert first != last


def test_layernorm_never_decreases_isometry_at_init(tanh_runs):
    """Corollary 2 with the centred Gram (reduce_mean): LN's output Gram is the row-normalised Gram of its
    centred input, and normalising the diagonal can only raise det^(1/n)/mean-diagonal (AM–GM)."""
    init = tanh_runs[(tanh_runs.epoch == 0)]
    wide = init.pivot_table(index=["run", "stage", "batch"], columns="module", values="iso_gap")
    for layer in range(1, RUNS["hidden_layers"] + 1):
        assert (wide[f"norm-{layer}"] <= wide[f"act-{layer - 1}"] + 1e-6).all(), layer


def test_training_is_deterministic(data_root, tanh_runs):
    again = m.train_run_set(RUNS, activation="Tanh", data_root=data_root, dataset="cifar10", device="cpu",
                            checkpoint=None, item="fig2_runs")
    pd.testing.assert_frame_equal(again, tanh_runs)
    other_item = m.train_run_set(RUNS, activation="Tanh", data_root=data_root, dataset="cifar10", device="cpu",
                                 checkpoint=None, item="fig7_runs")
    assert not np.allclose(other_item.iso_gap, tanh_runs.iso_gap, equal_nan=True)


def test_resuming_from_a_checkpoint_gives_identical_results(data_root, tanh_runs, tmp_path):
    checkpoint = tmp_path / "runs.ckpt"
    kwargs = {"activation": "Tanh", "data_root": data_root, "dataset": "cifar10", "device": "cpu",
              "checkpoint": str(checkpoint), "item": "fig2_runs"}
    m.train_run_set({**RUNS, "num_epochs": 2}, **kwargs)  # stops after epoch 1, as a killed job would
    assert checkpoint.exists()
    resumed = m.train_run_set(RUNS, **kwargs)
    pd.testing.assert_frame_equal(resumed, tanh_runs)


def test_bad_config_fails_clearly(data_root):
    with pytest.raises(ValueError, match="stages"):
        m.train_run_set({**RUNS, "stages": ["valid"]}, item="fig2_runs", activation="Tanh", data_root=data_root,
                        dataset="cifar10", device="cpu", checkpoint=None)
    with pytest.raises(ValueError, match="unknown activation"):
        m.beta("tanh")


# ---- at-init items and claims --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def at_init(data_root) -> dict[str, pd.DataFrame]:
    fig3_cfg = {**COMMON, "width": 32, "hidden_layers": 3, "batch_size": 16, "runs": 2, "reduce_mean": False,
                "stages": ["train"], "activations": ["Sigmoid", "Tanh", "ReLU"]}
    profiles = {"fixed": [12] * 3, "growing": [12, 24, 48], "narrowing": [48, 24, 12], "interchanging": [12, 24, 12]}
    figb4_cfg = {**COMMON, "batch_size": 12, "runs": 1, "reduce_mean": False, "stages": ["train"],
                 "activation": "ReLU", "width_profiles": profiles}
    return {
        "fig3": m.fig3(fig3_cfg, data_root=data_root, dataset="cifar10", device="cpu"),
        "figb4": pd.concat([m.figb4(figb4_cfg, data_root=data_root, dataset=d, device="cpu")
                            for d in ("mnist", "cifar10")], ignore_index=True),
    }


def test_fig3_rows_and_theory_line(at_init):
    df = at_init["fig3"]
    assert set(df.activation) == {"Sigmoid", "Tanh", "ReLU"} and (df.epoch == 0).all()
    assert df.groupby("activation").run.nunique().tolist() == [2, 2, 2]
    assert df.groupby(["activation", "run"]).batch.nunique().eq(6).all()
    gaps = s.norm_gaps(df)
    assert sorted(gaps.layer.unique()) == [0, 1, 2, 3]
    beta = s.betas(df)
    np.testing.assert_allclose(s.theory_line(beta["ReLU"], [0, 1, 2]), beta["ReLU"] ** -np.arange(3.0))
    assert s.theory_line(beta["ReLU"], [0])[0] == 1.0
    labels = s.beta_labels(df)  # the legend of Figs. 7, B.6, B.7: in β order, "Act, β_σ = …"
    assert list(labels) == list(beta.index) == ["Sigmoid", "Tanh", "ReLU"]
    assert labels["ReLU"] == s.beta_label("ReLU", beta["ReLU"]) == f"ReLU, β_σ = {beta['ReLU']:.3f}"


def test_figb4_profiles_and_first_module_shared(at_init):
    df = at_init["figb4"]
    assert set(df.profile) == {"fixed", "growing", "narrowing", "interchanging"}
    assert set(df.dataset) == {"mnist", "cifar10"}
    means = df[df.module == "norm-0"].groupby(["dataset", "profile"]).iso_gap.mean()
    assert means.notna().all()
    assert s.degenerate_modules(df[df.dataset == "mnist"]) == ["act-3", "fc-3"]


def test_figb4_claims_of_one_data_set_leave_the_others_unmeasured(at_init):
    """At the end of a run whose CIFAR-10 download failed, only MNIST's file exists: its rows are measured, and
    CIFAR-10's are absent (scored failed with the job's cause), not NaN values."""
    mnist_only = s._figb4(at_init["figb4"][at_init["figb4"].dataset == "mnist"])
    assert "mnist_norm0" in mnist_only and not any(q.startswith("cifar10_") for q in mnist_only)
    both = s._figb4(at_init["figb4"])
    assert {q for q in both if q.startswith("mnist_")} == {q for q in mnist_only if q.startswith("mnist_")}


def test_claims_on_quick_size_results(tmp_path, tanh_runs, at_init, data_root):
    frames = {"fig2_runs": tanh_runs, "fig3": at_init["fig3"], "figb4": at_init["figb4"]}
    runs = {a: m.train_run_set({**RUNS, "reduce_mean": False}, activation=a, data_root=data_root,
                               dataset="cifar10", device="cpu", checkpoint=None, item="fig7_runs")
            for a in ("Sigmoid", "ReLU")}
    frames["fig7_runs"] = pd.concat([tanh_runs, *runs.values()], ignore_index=True)
    results = {}
    for key, frame in frames.items():
        path = tmp_path / f"{key}.parquet"
        frame.to_parquet(path)
        results[key] = [str(path)]
    out = s.claims(results, {"fig2_runs": {"fig2_activation": "Tanh", "figb6_activations": ["Tanh"]}})
    assert set(out) == {"joudaki2023-fig2", "joudaki2023-figb6", "joudaki2023-fig3", "joudaki2023-figb4",
                        "joudaki2023-fig7", "joudaki2023-figb7"}
    for item, quantities in out.items():
        assert all(isinstance(v, Measured) for v in quantities.values()), item
    assert out["joudaki2023-fig2"]["min_ln_step_init"].value >= 0  # Corollary 2: LN never decreases isometry
    assert out["joudaki2023-fig2"]["last_block_fc_act_absent"].value == 1.0
    assert "init_norm10" not in out["joudaki2023-fig2"]  # deeper than the tiny network: left out, not NaN
    assert out["joudaki2023-fig3"]["beta_relu"].value == pytest.approx(isometry_strength("relu"))
    assert out["joudaki2023-fig3"]["theory_l10_relu"].value == pytest.approx(isometry_strength("relu") ** -10)
    assert out["joudaki2023-fig3"]["gap_l1_relu"].spread >= 0  # over the 2 runs
    assert math.isnan(out["joudaki2023-figb4"]["mnist_norm0"].spread)  # one run: no seed spread
    assert out["joudaki2023-figb4"]["last_block_fc_act_absent"].value == 1.0
    assert math.isfinite(out["joudaki2023-fig7"]["min_final_loss_drop_in_beta_order"].value)
    assert out["joudaki2023-figb7"]["max_relative_change_deepest"].value >= 0
    assert s.claims({}, {}) == {}
