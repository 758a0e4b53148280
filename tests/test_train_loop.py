"""The loop's behaviour: learning, the history's shape, measures, logging and input errors."""

from __future__ import annotations

import logging
import math

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
