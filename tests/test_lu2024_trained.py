"""Lu et al. 2024 at toy sizes: the trained-network jobs (Tables 1–4, App. Tables 2–4, Fig. 2), Fig. 1's fresh FNN."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from isonorm.data import fetch_dataset
from isonorm.experiments.lu2024 import trained_nets as tn
from isonorm.experiments.lu2024 import trained_summaries as ts
from isonorm.verdicts.claims import measured_over_runs
from isonorm.results import read_results, write_results

OPTIMIZERS = {"sgd": {"lr": 1e-3, "momentum": 0.9}, "adam": {"lr": 1e-3}}
COMMON = dict(seeds=[42], epochs=1, checkpoint_every=1, train_limit=128, test_limit=64, optimizers=OPTIMIZERS)
FNN = dict(COMMON, transform="to_tensor", batch_size=64, test_batch_size=64, test_train_mode=True, width=16,
           blocks=3, shared_norm=True, variant="norm_res", activation="gelu",
           constant_init={"layer": "linearH.1", "value": 0.1}, pii_layers=["linear", "linearH.0", "linearH.1", "linearH.2"],
           save_weights=["linearH.0"])
CNN = dict(COMMON, transform="half", batch_size=64, test_batch_size=32, augment=True, crop_padding=4)
SUMMARY_CFG = {
    "table1": {"compared_layers": {"Layer_1": "linearH.1", "Layer_2": "linearH.2", "Layer_3": "linearH.0"}},
    "table2": {"compared_layers": {"Layer_1": "conv1", "Layer_2": "conv2", "Layer_3": "conv3"}},
    "apptable2": {"compared_layers": {"Layer_1": "conv1", "Layer_2": "conv2", "Layer_3": "conv3"}},
    "table3": {"headline_layer": "linearH.2"}, "table4": {"headline_layer": "layer1.0.conv1"},
    "apptable3": {"headline_layer": "layer1.0.conv1"},
    "apptable4": {"compared_layers": {"Hidden layer 1": "linearH.0", "Hidden layer 2": "linearH.1"}},
    "fig1": {"layer": "linearH.0"},
}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    for name in ("mnist", "cifar10"):
        fetch_dataset(name, root, "synthetic", n_train=128, n_test=64)
    return str(root)


def _kw(root, dataset):
    return dict(data_root=root, dataset=dataset, device="cpu", checkpoint=None)


def test_fnn_job_rows_bounds_constant_layer_and_weights(data_root, tmp_path):
    weights_path = tmp_path / "w.parquet"
    frame = tn.fnn(FNN, item="table1", optimizer="sgd", weights_path=str(weights_path), **_kw(data_root, "mnist"))
    assert set(frame.metric) == {"pii", "test_accuracy", "train_loss"}
    assert sorted(frame.epoch.unique()) == [0, 1]
    piis = frame[frame.metric == "pii"]
    assert set(piis.orientation) == {"columns", "rows"}  # decision A1: both orientations stored
    assert piis.value.between(0, 1).all()
    assert ts.pii_value(frame, "linearH.1", 0) == pytest.approx(1.0)  # constant 0.1 init → collinear
    acc = frame[frame.metric == "test_accuracy"].value
    assert acc.between(0, 100).all()
    weights = read_results(weights_path)
    assert sorted(weights.epoch.unique()) == [0, 1] and len(weights) == 2 * 16
    for epoch in (0, 1):  # the saved matrix reproduces the measured PII
        W = ts.weight_matrix(weights, "linearH.0", epoch=epoch)
        assert ts.matrix_pii(W) == pytest.approx(ts.pii_value(frame, "linearH.0", epoch), rel=1e-5)


def test_fnn_job_is_deterministic_and_seeds_stack(data_root):
    cfg = dict(FNN, constant_init=None, seeds=[1, 2])
    a = tn.fnn(cfg, item="table3", optimizer="adam", variant="original", activation="relu", **_kw(data_root, "mnist"))
    b = tn.fnn(cfg, item="table3", optimizer="adam", variant="original", activation="relu", **_kw(data_root, "mnist"))
    pd.testing.assert_frame_equal(a, b)
    assert sorted(a.seed.unique()) == [1, 2]
    first = a[(a.metric == "pii") & (a.epoch == 0)].groupby("seed").value.sum()
    assert first[1] != first[2]  # each seed draws its own network


def test_fig1_draws_the_weights_a_table3_job_starts_from(data_root, tmp_path):
    """Fig. 1 is data-free: it draws the network alone, and gets the epoch-0 weights of the Table-3 jobs, which
    every variant draws identically."""
    cfg = dict(FNN, constant_init=None, epochs=0, seeds=[42, 7])
    drawn = tn.fig1(dict(cfg, dataset="mnist", layer="linearH.0"))
    assert sorted(drawn.seed.unique()) == [7, 42] and set(drawn.epoch) == {0}
    for variant in ("original", "norm_res"):
        path = tmp_path / f"{variant}.parquet"
        tn.fnn(cfg, item="table3", optimizer="adam", variant=variant, activation="gelu", weights_path=str(path),
               **_kw(data_root, "mnist"))
        trained = read_results(path)
        for seed in (42, 7):
            assert (ts.weight_matrix(drawn, "linearH.0", epoch=0, seed=seed)
                    == ts.weight_matrix(trained, "linearH.0", epoch=0, seed=seed)).all()
    W = ts.weight_matrix(drawn, "linearH.0", epoch=0)
    assert W.shape == (16, 16)
    assert ts.heatmap_matrices(W)["C_col"].diagonal() == pytest.approx(1.0)


def test_simple_cnn_and_resnet_jobs(data_root):
    cnn = dict(CNN, width=4, fc_width=8, constant_init={"layer": "conv1", "value": 0.1},
               pii_layers=["conv1", "conv2", "conv3"])
    frame = tn.simple_cnn(cnn, item="table2", optimizer="adam", **_kw(data_root, "cifar10"))
    assert ts.pii_value(frame, "conv1", 0) == pytest.approx(1.0)
    res = dict(CNN, width=2, activation="gelu", train_accuracy=True, pii_layers=["layer1.0.conv1"])
    frame = tn.resnet18(res, item="table4", variant="original", optimizer="sgd", **_kw(data_root, "cifar10"))
    running = frame[frame.metric == "train_accuracy"]  # the engine's running accuracy over the epoch's batches
    assert running[running.epoch == 0].value.isna().all()  # nothing trained at epoch 0
    assert running[running.epoch == 1].value.between(0, 100).all()
    clean = frame[frame.metric == "train_accuracy_eval"]  # eval mode, un-augmented split, after the last epoch only
    assert clean[clean.epoch == 0].value.isna().all()
    assert clean[clean.epoch == 1].value.between(0, 100).all()


def test_resnet_train_accuracy_is_the_running_one_over_the_augmented_batches(data_root, monkeypatch):
    """The job's ``train_accuracy`` is the engine's ``train_acc`` in %, counted on the augmented batches: with the
    augmentation swapped for one that makes every batch useless, the running accuracy follows it and the
    eval-mode accuracy on the clean split does not see it."""
    res = dict(CNN, width=2, activation="gelu", train_accuracy=True, pii_layers=["layer1.0.conv1"], epochs=2,
               seeds=[42, 43])
    seen: list = []
    original = tn.train_stacked

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(result.history)
        return result

    monkeypatch.setattr(tn, "train_stacked", spy)
    frame = tn.resnet18(res, item="table4", variant="norm_res", optimizer="adam", **_kw(data_root, "cifar10"))
    history = seen[-1]
    for row in history[history.epoch > 0].itertuples():
        value = frame[(frame.metric == "train_accuracy") & (frame.seed == row.run) & (frame.epoch == row.epoch)]
        assert value.value.item() == pytest.approx(100.0 * row.train_acc)

    monkeypatch.setattr(tn, "crop_flip_augment", lambda **_: lambda batch, gen: torch.zeros_like(batch))
    blind = tn.resnet18(res, item="table4", variant="norm_res", optimizer="adam", **_kw(data_root, "cifar10"))
    running = blind[(blind.metric == "train_accuracy") & (blind.epoch == 2)].value
    assert running.max() <= 100.0 * 26 / 128  # one class for all blank inputs: at most its share (≤ 26 of 128)
    assert not running.equals(frame[(frame.metric == "train_accuracy") & (frame.epoch == 2)].value)


def test_unknown_optimizer_and_layer_fail_clearly(data_root):
    with pytest.raises(ValueError, match="no entry under optimizers"):
        tn.fnn(FNN, item="table1", optimizer="rmsprop", **_kw(data_root, "mnist"))
    with pytest.raises(ValueError, match="no layer"):
        tn.layer_matrix({"a.weight": torch.zeros(1, 2, 2)}, "b")


def test_heatmaps_and_notation_table():
    W = torch.randn(6, 4, dtype=torch.float64).numpy()
    maps = ts.heatmap_matrices(W)
    assert maps["C_row"].shape == (6, 6) and maps["C_col"].shape == (4, 4)
    assert maps["C_col"].diagonal() == pytest.approx(1.0)
    assert maps["G_col"] == pytest.approx(W.T @ W)
    assert list(ts.notation_table().columns) == ["Symbol", "Meaning"]


def test_claims_from_results_files(data_root, tmp_path):
    paths: dict[str, list[str]] = {}

    def save(key, frame):
        path = tmp_path / f"{key}-{len(paths.get(key, []))}.parquet"
        write_results(frame, path)
        paths.setdefault(key, []).append(str(path))

    for optimizer in OPTIMIZERS:
        save("table1", tn.fnn(FNN, item="table1", optimizer=optimizer, **_kw(data_root, "mnist")))
    cfg = dict(FNN, constant_init=None)
    for variant in ("original", "norm_res"):
        weights = tmp_path / f"w-{variant}.parquet"
        save("table3", tn.fnn(cfg, item="table3", optimizer="adam", variant=variant, activation="gelu",
                              weights_path=str(weights), **_kw(data_root, "mnist")))
        paths.setdefault("table3_weights", []).append(str(weights))
    save("fig1", tn.fig1(dict(cfg, dataset="mnist", layer="linearH.0")))
    claims = ts.claims(paths, SUMMARY_CFG)
    assert set(claims) == {"lu2024-table1", "lu2024-table3", "lu2024-fig1"}
    assert claims["lu2024-table1"]["sgd_layer1_init"].value == pytest.approx(1.0)
    assert {"sgd_acc", "adam_layer3_trained", "sgd_layer1_lead"} <= set(claims["lu2024-table1"])
    assert {"gelu_adam_pii_original", "gelu_adam_acc_norm_res", "norm_res_pii_change_max"} <= set(
        claims["lu2024-table3"])
    change = claims["lu2024-table3"]["norm_res_pii_change_max"].value  # a number: Norm_Res's PII minus Original's
    assert change == pytest.approx(claims["lu2024-table3"]["gelu_adam_pii_norm_res"].value
                                   - claims["lu2024-table3"]["gelu_adam_pii_original"].value)
    assert claims["lu2024-fig1"]["cos_unit_diagonal"] == 1.0
    assert 0 < claims["lu2024-fig1"]["pii_init"].value < 1
    assert all(math.isnan(m.spread) for m in claims["lu2024-table1"].values())  # one seed: no seed spread


def test_table4_default_claim_reads_the_running_train_accuracy_and_the_eval_one_is_the_alternative(tmp_path):
    """Decision A7: Table 4's ``..._acc_<variant>`` is the running train accuracy of the last epoch,
    ``..._acc_eval_<variant>`` the eval-mode accuracy on the clean split; App. Table 3 keeps the test accuracy."""
    rows = []
    for seed in (42, 43):  # Original's values; Norm_Res's are 10 points higher
        for metric, offset in (("train_accuracy", 0.0), ("train_accuracy_eval", 5.0), ("test_accuracy", -9.0)):
            for epoch in (0, 1, 2):
                value = math.nan if epoch == 0 or (metric == "train_accuracy_eval" and epoch < 2) else (
                    60.0 + offset + epoch + 0.1 * (seed - 42))
                rows.append({"seed": seed, "epoch": epoch, "metric": metric, "layer": None, "orientation": None,
                             "value": value})
        rows += [{"seed": seed, "epoch": epoch, "metric": "pii", "layer": "layer1.0.conv1",
                  "orientation": "columns", "value": 0.2} for epoch in (0, 1, 2)]
    frame = pd.DataFrame(rows)
    paths = {}
    for item in ("table4", "apptable3"):
        for variant in ("original", "norm_res"):
            part = frame.assign(item=item, activation="gelu", optimizer="adam", variant=variant)
            shift = 0.0 if variant == "original" else 10.0
            part = part.assign(value=part.value.where(part.metric == "pii", part.value + shift))
            path = tmp_path / f"{item}-{variant}.parquet"
            write_results(part, path)
            paths.setdefault(item, []).append(str(path))
    claims = ts.claims(paths, SUMMARY_CFG | {"resnet18": {"headline_layer": "layer1.0.conv1"}})
    table4, app3 = claims["lu2024-table4"], claims["lu2024-apptable3"]
    assert table4["gelu_adam_acc_original"] == measured_over_runs([62.0, 62.1])  # running, last epoch
    assert table4["gelu_adam_acc_eval_original"] == measured_over_runs([67.0, 67.1])
    assert table4["gelu_adam_acc_norm_res"] == measured_over_runs([72.0, 72.1])
    assert table4["gelu_adam_acc_eval_norm_res"] == measured_over_runs([77.0, 77.1])
    assert app3["gelu_adam_acc_original"] == measured_over_runs([53.0, 53.1])  # test accuracy
    assert not any("_acc_eval_" in key for key in app3)


def test_claims_carry_the_seed_spread_over_seeds():
    """Two seeds: each cell is their mean with Student's 95 % half-width; relations are computed per seed."""
    rows = [{"seed": seed, "epoch": epoch, "metric": "pii", "layer": "linearH.1", "orientation": "columns",
             "optimizer": optimizer, "value": value}
            for seed, sgd, adam in ((42, 0.9, 0.5), (43, 0.7, 0.6))
            for optimizer, value in (("sgd", sgd), ("adam", adam)) for epoch in (0, 1)]
    rows += [{**row, "metric": "test_accuracy", "layer": None, "orientation": None, "value": 90.0 + row["seed"]}
             for row in rows if row["epoch"] == 1]
    out = ts._optimizer_claims(pd.DataFrame(rows), "lu2024-table1", {"Layer_1": "linearH.1"})
    assert out["sgd_layer1_trained"] == measured_over_runs([0.9, 0.7])
    assert out["sgd_layer1_lead"] == measured_over_runs([0.4, 0.1])  # per seed, not from the means
    assert out["adam_acc"].value == pytest.approx(132.5) and out["adam_acc"].spread > 0


def test_a_fitted_run_trains_with_its_items_overrides_and_is_claimed_apart(data_root):
    """A run labelled ``<optimizer>-fitted`` (decision A3) trains with the optimizer's settings updated by the item's
    ``fitted`` entry, records that learning rate, and its quantities are named ``<optimizer>_fitted_...``: the
    trained cells only (its init is its default run's draw), and it never enters SGD's lead over the others."""
    cfg = dict(FNN, fitted={"adam": {"lr": 0.05}})
    assert tn.optimizer_config(cfg, "adam-fitted", "t").lr == 0.05 and tn.optimizer_config(cfg, "adam", "t").lr == 1e-3
    with pytest.raises(ValueError, match="no `fitted: sgd:` entry"):
        tn.optimizer_config(cfg, "sgd-fitted", "t")
    frames = [tn.fnn(cfg, item="table1", optimizer=run, **_kw(data_root, "mnist")) for run in ("sgd", "adam",
                                                                                            "adam-fitted")]
    frame = pd.concat(frames, ignore_index=True)
    assert frame[frame.optimizer == "adam-fitted"].lr.unique().tolist() == [0.05]
    claims = ts._optimizer_claims(frame, "lu2024-table1", SUMMARY_CFG["table1"]["compared_layers"])
    assert {"adam_fitted_layer1_trained", "adam_fitted_acc"} <= set(claims)
    assert not any(q.startswith("adam_fitted") and q.endswith("_init") for q in claims)
    per_seed = ts.per_seed(frame, ["optimizer"], 1, layer="linearH.1")
    assert claims["sgd_layer1_lead"].value == pytest.approx(float(per_seed["sgd"].iloc[0] - per_seed["adam"].iloc[0]))


def test_a_jobs_settings_hold_only_what_it_reads():
    """A job's params (Snakemake reruns a job whose params change) leave out what only the claims and the notebook
    read, so that adding a run or changing a compared layer reruns no existing job; a fitted run keeps its own
    optimizer's entry and fitted override, a default run no fitted entry at all."""
    item = dict(FNN, runs=["sgd", "adam", "adam-fitted"], fitted={"adam": {"lr": 0.05}},
                compared_layers={"Layer_1": "linearH.1"})
    default, fitted = tn.job_settings(item, "adam"), tn.job_settings(item, "adam-fitted")
    assert not {"runs", "compared_layers", "fitted"} & set(default) and default["optimizers"] == {"adam": {"lr": 1e-3}}
    assert fitted["fitted"] == {"adam": {"lr": 0.05}} and tn.optimizer_config(fitted, "adam-fitted", "t").lr == 0.05
    more = dict(item, runs=[*item["runs"], "sgd-fitted"], fitted={**item["fitted"], "sgd": {"lr": 0.1}},
                compared_layers={"Layer_1": "linearH.2"})
    assert tn.job_settings(more, "adam") == default and tn.job_settings(more, "adam-fitted") == fitted
    with pytest.raises(ValueError, match=r"lists 'gelu-sgd-fitted', a fitted reading, but `lu2024: table3: fitted`"):
        tn.check_fitted_runs({"runs": ["gelu-sgd-fitted"]}, "lu2024: table3")
