"""meterez2024 training grid (Figs. 4, 6, F1, F2, G1–G4): contracts on synthetic data at tiny sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from isonorm.data import fetch_dataset
from isonorm.experiments.meterez2024 import training_grid as tg
from isonorm.experiments.meterez2024 import training_summaries as ts
from isonorm.experiments.meterez2024.grid_jobs import group_members, training_groups
from isonorm.train import CheckpointError

CFG = {  # the quick preset's shape (width ≤ 16, tiny depth, 2 epochs), meterez2024-fig4 smoke test
    "width": 12, "batch_size": 20, "lr": 0.001, "epochs": 2, "activations": ["sin", "tanh", "identity"],
    "gain_exponent": 0.4, "norm": "torch_bn", "bias": True, "init": "orthogonal", "transform": "dataset_constants",
    "measure_epochs": [1, 2], "checkpoint_every": 1, "eval_batch_size": 50, "measure_on_copy": False,
    "cuda_graph": "auto", "fused_block": False,
}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("data")
    fetch_dataset("cifar10", root, "synthetic", n_train=100, n_test=40, seed=1)
    fetch_dataset("cifar100", root, "synthetic", n_train=100, n_test=40, seed=2)
    fetch_dataset("mnist", root, "synthetic", n_train=80, n_test=40, seed=3)
    return str(root)


@pytest.fixture(scope="module")
def stacked(data_root) -> pd.DataFrame:
    return tg.train_grid_job(CFG, data_root=data_root, dataset="cifar10", device="cpu", depth=4)


def test_stacked_activations_equal_separate_trainings(stacked, data_root) -> None:
    alone = tg.train_grid_job(CFG, data_root=data_root, dataset="cifar10", device="cpu", depth=4,
                              activations=["tanh"])
    mine = stacked[stacked.activation == "tanh"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine[tg.COLUMNS[:-1]], alone[tg.COLUMNS[:-1]])
    np.testing.assert_allclose(mine.value, alone.value, rtol=1e-4, atol=1e-6)


def test_frame_schema_and_contents(stacked) -> None:
    assert list(stacked.columns) == tg.COLUMNS
    epochs = stacked[stacked.layer == -1]
    assert sorted(epochs.epoch.unique()) == [0, 1, 2]
    assert set(epochs.metric) == set(tg.EPOCH_METRICS)
    acc = epochs[epochs.metric.str.endswith("acc")].value
    assert ((acc >= 0) & (acc <= 1)).all()
    layers = stacked[stacked.layer >= 0]
    assert sorted(layers.epoch.unique()) == [1, 2]
    w = layers[(layers.metric == "weight_isogap") & (layers.activation == "sin")]
    assert sorted(w.layer.unique()) == list(range(5))  # fc_0..fc_L
    assert (w.value >= -1e-9).all()  # φ ≥ 0 (AM ≥ GM); finite: width 12 > 10 classes keeps W_L W_Lᵀ full rank
    fc = layers[(layers.metric == "fc_isogap") & (layers.activation == "sin") & (layers.epoch == 1)]
    assert fc.set_index("layer").value.loc[4] != fc.set_index("layer").value.loc[4]  # NaN at ℓ = L


def test_resume_from_checkpoint_gives_same_frame(data_root, tmp_path, stacked) -> None:
    ckpt = tmp_path / "ckpt.pt"
    first = tg.train_grid_job({**CFG, "epochs": 1}, data_root=data_root, dataset="cifar10", device="cpu",
                              checkpoint=str(ckpt), depth=4)
    assert ckpt.exists() and first.epoch.max() == 1
    resumed = tg.train_grid_job(CFG, data_root=data_root, dataset="cifar10", device="cpu",
                                checkpoint=str(ckpt), depth=4)
    pd.testing.assert_frame_equal(resumed, stacked, check_exact=True)
    with pytest.raises(CheckpointError, match=rf"(?s){ckpt}.*different training.*optimizer.*delete {ckpt}"):
        tg.train_grid_job({**CFG, "lr": 0.01}, data_root=data_root, dataset="cifar10", device="cpu",
                          checkpoint=str(ckpt), depth=4)


def test_non_finite_loss_stops_run_cleanly(data_root) -> None:
    frame = tg.train_grid_job({**CFG, "lr": 1e30, "epochs": 2, "measure_epochs": []}, data_root=data_root,
                              dataset="cifar10", device="cpu", depth=2, activations=["identity"])
    stopped = frame[frame.metric == "stopped"]
    assert len(stopped) == 1
    assert frame[(frame.layer == -1) & (frame.metric == "train_loss")].epoch.max() < stopped.value.iloc[0]


def test_epoch_caps_and_claims(stacked) -> None:
    assert tg.epochs_for({"epochs": 1000, "epoch_caps": {"cifar10": {1000: 300}}}, "cifar10", 1000) == 300
    assert tg.epochs_for({"epochs": 1000, "epoch_caps": {"cifar10": {"500": 500}}}, "cifar10", 500) == 500
    assert tg.epochs_for({"epochs": 1000}, "mnist", 100) == 1000
    curves = ts.accuracy_curves(stacked)
    assert {"dataset", "depth", "activation", "epoch", "train_acc", "test_acc"} <= set(curves.columns)
    profiles = ts.layer_profiles(stacked, "weight_isogap")
    assert {"epoch", "layer", "value"} <= set(profiles.columns)


def test_data_set_stack_equals_each_data_set_alone(stacked, data_root) -> None:
    """cifar10+cifar100 in one job (10 and 100 classes, padded fc_L): each run's rows as trained alone; the
    budget caps apply per data set."""
    caps = {"cifar100": {4: 1}}
    pair = tg.train_grid_job({**CFG, "epoch_caps": caps}, data_root=data_root, dataset="cifar10+cifar100",
                             device="cpu", depth=4)
    assert set(pair.dataset) == {"cifar10", "cifar100"}
    mine = pair[pair.dataset == "cifar10"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine[tg.COLUMNS[:-1]], stacked[tg.COLUMNS[:-1]])
    np.testing.assert_allclose(mine.value, stacked.value, rtol=1e-4, atol=1e-6)
    alone = tg.train_grid_job({**CFG, "epochs": 1}, data_root=data_root, dataset="cifar100", device="cpu", depth=4)
    other = pair[pair.dataset == "cifar100"].reset_index(drop=True)
    assert other.epoch.max() == 1  # its cap, though the stack trained on to epoch 2
    pd.testing.assert_frame_equal(other[tg.COLUMNS[:-1]], alone[tg.COLUMNS[:-1]])
    np.testing.assert_allclose(other.value, alone.value, rtol=1e-4, atol=1e-6)
    w_last = mine[(mine.metric == "weight_isogap") & (mine.layer == 4)].value
    assert np.isfinite(w_last).all()  # φ(W_L) on cifar10's own 10 rows, not the 90 zero rows of padding


def test_data_sets_of_unequal_shape_share_a_group(stacked, data_root, tmp_path) -> None:
    """cifar10+mnist in one job, as the grid's one job per depth on a GPU (benchmarks/README.md): 100 samples of
    3,072 features and 80 of 784, so MNIST's runs take a zero-padded fc_0 and sit out the epoch's fifth step;
    each run's rows are those it has trained alone (cifar10's bit for bit: the padding changes none of its sums)."""
    pair = tg.train_grid_job(CFG, data_root=data_root, dataset="cifar10+mnist", device="cpu", depth=4)
    mine = pair[pair.dataset == "cifar10"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, stacked)
    alone = tg.train_grid_job(CFG, data_root=data_root, dataset="mnist", device="cpu", depth=4)
    other = pair[pair.dataset == "mnist"].reset_index(drop=True)
    pd.testing.assert_frame_equal(other[tg.COLUMNS[:-1]], alone[tg.COLUMNS[:-1]])
    np.testing.assert_allclose(other.value, alone.value, rtol=1e-5, atol=1e-6)
    ckpt = str(tmp_path / "pair.pt")  # resumed after epoch 1, it goes on as if never stopped
    tg.train_grid_job({**CFG, "epochs": 1}, data_root=data_root, dataset="cifar10+mnist", device="cpu", depth=4,
                      checkpoint=ckpt)
    resumed = tg.train_grid_job(CFG, data_root=data_root, dataset="cifar10+mnist", device="cpu", depth=4,
                                checkpoint=ckpt)
    pd.testing.assert_frame_equal(resumed, pair, check_exact=True)
    with pytest.raises(ValueError, match="full batches of 30"):  # 80 MNIST samples leave a short batch
        tg.train_grid_job({**CFG, "batch_size": 30}, data_root=data_root, dataset="cifar10+mnist", device="cpu",
                          depth=2)
    with pytest.raises(ValueError, match="distinct"):
        tg.group_members("cifar10+cifar10")


def test_the_evaluation_does_not_depend_on_its_batch_size(data_root) -> None:
    """Eval-mode BN uses the running statistics, so the test pass's batches are free (config eval_batch_size: one
    batch of the whole test set on a GPU, where a pass is launch-bound): losses to float rounding, accuracies equal,
    for a padded group (cifar10 with mnist's fewer samples) and a batch that leaves a short last one."""
    train = tg.group_split(["cifar10", "mnist"], data_root, "train", "dataset_constants", "cpu")
    test = tg.group_split(["cifar10", "mnist"], data_root, "test", "dataset_constants", "cpu")
    job = tg.grid_training(CFG, ["cifar10", "mnist"], CFG["activations"], 3, train.x, train.y, sizes=train.sizes,
                           dims=train.dims)
    job.train()  # running statistics away from their initial values
    model = job.step.model
    whole = tg.evaluate(model, test.x, test.y, test.x.shape[1], job.run_data, test.sizes)
    for batch in (7, 40):
        loss, acc = tg.evaluate(model, test.x, test.y, batch, job.run_data, test.sizes)
        np.testing.assert_allclose(loss, whole[0], rtol=1e-6)
        np.testing.assert_array_equal(acc, whole[1])
    assert model.training  # evaluate restores the mode it found


def test_job_names_follow_the_configured_groups() -> None:
    training = {"datasets": ["cifar10", "cifar100", "mnist", "fashionmnist"],
                "stacks": [["cifar10", "cifar100"], ["mnist", "svhn"]]}
    # a group keeps only listed data sets; a listed data set outside every group trains alone
    assert training_groups(training) == ["cifar10+cifar100", "mnist", "fashionmnist"]
    assert training_groups({**training, "stacks": []}) == training["datasets"]
    assert [group_members(name) for name in training_groups(training)][0] == ["cifar10", "cifar100"]
    with pytest.raises(ValueError, match="appear in two stacks"):
        training_groups({**training, "stacks": [["cifar10", "mnist"], ["mnist"]]})


def test_the_notebooks_selections_of_the_grid() -> None:
    """What the accuracy and profile figures draw: their data set's rows, accuracy from epoch 1 (log axis)."""
    rows = [dict(dataset=d, depth=4, activation="sin", epoch=e, layer=-1, metric="train_acc", value=0.5)
            for d in ("cifar10", "mnist") for e in (0, 1, 2)]
    rows += [dict(dataset=d, depth=4, activation="sin", epoch=1, layer=layer, metric="weight_isogap", value=v)
             for d in ("cifar10", "mnist") for layer, v in enumerate([0.1, np.nan, np.inf])]
    frame = pd.DataFrame(rows)
    curves = ts.plotted_accuracy(frame, "meterez2024-figg1")
    assert set(curves.dataset) == {"mnist"} and list(curves.epoch) == [1, 2]
    assert ts.plotted_accuracy(None, "meterez2024-fig4").empty
    assert set(ts.profile_runs(frame).dataset) == {ts.PROFILE_DATASET}
    assert ts.layer_profiles(ts.profile_runs(None), "weight_isogap").empty
    assert ts.nonfinite_points(frame, "weight_isogap") == 4 and ts.nonfinite_points(None, "weight_isogap") == 0
