"""The loop's behaviour: learning, the history's shape, measures, logging and input errors."""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import pandas as pd
import pytest
import torch

from isonorm.models.mlp import mlp
from isonorm.runtime import generator
from isonorm.train import OptimizerConfig, TrainConfig, predict, train_stacked


def separable_blobs(n: int = 200):
    """Two Gaussian blobs 6σ apart: a linearly separable 2-class problem."""
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(2, (n,), generator=gen)
    x = torch.randn(n, 2, generator=gen) + 3.0 * (2 * y[:, None] - 1).float()
    return x, y


def nets(n_runs: int = 3):
    return [mlp([2, 16, 2], generator=generator("test", "loop", r)) for r in range(n_runs)]


def accuracy(stacked, epoch):
    x, y = separable_blobs()
    return {"accuracy": (predict(stacked, x, batch_size=64).argmax(-1) == y).double().mean(dim=1)}


CONFIG = TrainConfig("test", "loop", epochs=10, batch_size=25, optimizer=OptimizerConfig("sgd", lr=0.05),
                     device="cpu")


def test_loss_decreases_on_a_separable_problem():
    x, y = separable_blobs()
    history = train_stacked(nets(), x, y, CONFIG, measure=accuracy).history
    for _, run in history.groupby("run"):
        losses = run.set_index("epoch").train_loss
        assert losses[10] < 0.5 * losses[1]
        assert run.set_index("epoch").accuracy[10] > 0.95


def test_history_is_tidy_with_a_fresh_network_row():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=2, batch_size=50, device="cpu")
    history = train_stacked(nets(2), x, y, config, measure=accuracy, run_ids=[4, 7]).history
    assert list(history.columns) == ["run", "epoch", "train_loss", "accuracy"]
    assert sorted(zip(history.run, history.epoch)) == [(r, e) for r in (4, 7) for e in (0, 1, 2)]
    fresh = history[history.epoch == 0]
    assert fresh.train_loss.isna().all() and fresh.accuracy.notna().all()


def test_no_measure_gives_loss_only():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=1, batch_size=50, device="cpu")
    history = train_stacked(nets(2), x, y, config).history
    assert list(history.columns) == ["run", "epoch", "train_loss"] and len(history) == 2


def test_progress_is_logged(caplog):
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=2, batch_size=50, device="cpu")
    with caplog.at_level(logging.INFO, logger="isonorm.train"):
        train_stacked(nets(2), x, y, config)
    assert any("epoch 2/2" in message and "mean train loss" in message for message in caplog.messages)


@pytest.mark.parametrize("measure, message", [
    (lambda stacked, epoch: {"accuracy": torch.zeros(5)}, r"shape \(5,\).*shape \(2,\)"),
    (lambda stacked, epoch: {"epoch": torch.zeros(2)}, "history column"),
])
def test_bad_measure_is_reported(measure, message):
    x, y = separable_blobs()
    with pytest.raises(ValueError, match=message):
        train_stacked(nets(2), x, y, TrainConfig("test", "loop", epochs=1, device="cpu"), measure=measure)


@pytest.mark.parametrize("call, message", [
    (lambda x, y: train_stacked(nets(2), x, y[:-1], CONFIG), "same, non-zero number of samples"),
    (lambda x, y: train_stacked(nets(2), x, y.float(), CONFIG), "integer class labels"),
    (lambda x, y: train_stacked(nets(2), x, y, CONFIG, run_ids=[0]), "one run id per model"),
    (lambda x, y: train_stacked(nets(2), x, y, CONFIG, run_ids=[1, 1]), "distinct"),
])
def test_bad_inputs_are_reported(call, message):
    x, y = separable_blobs()
    with pytest.raises(ValueError, match=message):
        call(x, y)


def test_train_config_validates():
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig("test", "loop", batch_size=0)
    with pytest.raises(ValueError, match="checkpoint_every"):
        TrainConfig("test", "loop", checkpoint_every=0)


def test_zero_epochs_measures_only_the_fresh_networks():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=0, device="cpu")
    history = train_stacked(nets(2), x, y, config, measure=accuracy).history
    assert history.epoch.tolist() == [0, 0] and all(math.isnan(v) for v in history.train_loss)


def test_augmentation_is_applied_to_training_batches_only_and_is_reproducible():
    """The hook sees every training mini-batch (R, B, ...) and a seeded generator on the data's device."""
    x, y = separable_blobs()
    seen = []

    def jitter(batch, gen):
        seen.append(tuple(batch.shape))
        return batch + 0.1 * torch.randn(batch.shape, generator=gen, device=batch.device)

    config = TrainConfig("test", "augment", epochs=2, batch_size=50, device="cpu")
    first = train_stacked(nets(2), x, y, config, augment=jitter).history
    assert seen and set(seen) == {(2, 50, 2)} and len(seen) == 2 * 4  # 2 epochs × 4 batches, never measured
    again = train_stacked(nets(2), x, y, config, augment=jitter).history
    plain = train_stacked(nets(2), x, y, config).history
    assert first.train_loss.equals(again.train_loss)
    assert not first.train_loss.equals(plain.train_loss)


def poisoned_nets(poisoned: tuple[int, ...]):
    """``nets(2)`` with NaN weights in the runs ``poisoned``: their loss is non-finite from the first batch."""
    built = nets(2)
    with torch.no_grad():
        for run in poisoned:
            next(built[run].parameters()).fill_(math.nan)
    return built


def test_per_run_caps_record_each_run_up_to_its_cap_while_the_stack_trains_on():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=3, batch_size=50, device="cpu", run_epochs=(1, 3))
    capped = train_stacked(nets(2), x, y, config, measure=accuracy).history
    full = train_stacked(nets(2), x, y, replace(config, run_epochs=None), measure=accuracy).history
    pd.testing.assert_frame_equal(capped, full[(full.run == 1) | (full.epoch <= 1)].reset_index(drop=True),
                                  check_exact=True)


def test_a_run_with_a_non_finite_loss_stops_and_the_others_go_on(tmp_path):
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=2, batch_size=50, device="cpu", stop_non_finite=True,
                         checkpoint_path=tmp_path / "run.ckpt")
    train_stacked(poisoned_nets((0,)), x, y, config, measure=accuracy)
    result = train_stacked(poisoned_nets((0,)), x, y, replace(config, epochs=3), measure=accuracy)  # resumed
    assert result.stopped == {0: 1}
    assert result.history[result.history.run == 0].epoch.tolist() == [0]  # its later rows are absent
    healthy = train_stacked(nets(2), x, y, replace(config, epochs=3, checkpoint_path=None), measure=accuracy)
    pd.testing.assert_frame_equal(result.history[result.history.run == 1].reset_index(drop=True),
                                  healthy.history[healthy.history.run == 1].reset_index(drop=True))


def test_without_stops_a_non_finite_run_is_recorded():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=1, batch_size=50, device="cpu")
    result = train_stacked(poisoned_nets((0,)), x, y, config)
    assert result.stopped == {} and math.isnan(result.history.set_index(["run", "epoch"]).train_loss[0, 1])


def test_training_ends_once_every_run_has_stopped(tmp_path):
    x, y = separable_blobs()
    path = tmp_path / "run.ckpt"
    config = TrainConfig("test", "loop", epochs=5, batch_size=50, device="cpu", stop_non_finite=True,
                         checkpoint_path=path, checkpoint_every=10)
    result = train_stacked(poisoned_nets((0, 1)), x, y, config, measure=accuracy)
    assert result.stopped == {0: 1, 1: 1} and result.history.epoch.tolist() == [0, 0]
    assert torch.load(path, weights_only=True)["epoch"] == 1  # saved when it ended, so a rerun trains no more


def test_a_measure_may_give_each_run_a_profile():
    x, y = separable_blobs()
    config = TrainConfig("test", "loop", epochs=1, batch_size=50, device="cpu")
    history = train_stacked(nets(2), x, y, config, measure=lambda s, e: {"p": torch.arange(6.0).view(2, 3)}).history
    assert history.p.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] * 2


def test_per_run_caps_are_checked():
    with pytest.raises(ValueError, match="run_epochs must lie in 0..epochs"):
        TrainConfig("test", "loop", epochs=2, run_epochs=(1, 3))
    x, y = separable_blobs()
    with pytest.raises(ValueError, match="one per run"):
        train_stacked(nets(2), x, y, TrainConfig("test", "loop", epochs=1, device="cpu", run_epochs=(1,)))
