"""The engine's running train accuracy (``train_stacked(..., running_accuracy=True)``, statistic ``train_acc``).

It must be what a textbook loop that sums ``correct`` over its batches logs (lu2024 decision A7,
``ResNet-CIFAR10.py``): the train-mode predictions of each step's forward pass, on the (augmented) batch that step
trains on, before the update, pooled over the epoch's samples. Counted here by hand, one run at a time, and compared
with the stacked engine, so a mix-up of runs in the stack, an eval-mode or after-the-update forward pass, an
un-augmented input or a mean over batches instead of samples all fail.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from isonorm.models.mlp import mlp
from isonorm.runtime import generator
from isonorm.train import CheckpointError, OptimizerConfig, TrainConfig, build_optimizer, train_stacked

N, DIM, CLASSES = 37, 5, 3  # batch 8: four full batches and a short one of 5


def toy_data():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(N, DIM, generator=gen, dtype=torch.float64)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()  # learnable: the accuracy moves during an epoch


def fresh_models(run_ids):
    return [mlp([DIM, 7, 6, CLASSES], norm="batch", generator=generator("test", "acc-init", r)).double()
            for r in run_ids]


def reversed_features(batch: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A deterministic 'augmentation': the hand loop can apply it too, and it changes the predictions."""
    return batch.flip(-1)


def hand_running_accuracy(model: nn.Module, x, y, run: int, config: TrainConfig,
                          augment) -> tuple[list[float], list[float]]:
    """One run alone: its own batch order, train mode, the logits of each step before its update. Returns the
    accuracy pooled over the epoch's samples (the original's correct / total) and, to show that the test can tell
    them apart, the mean of the batches' accuracies (which weighs the short last batch as a full one)."""
    optimizer = build_optimizer(model.parameters(), config.optimizer)
    model.train()
    accuracies, batch_means = [], []
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(N, generator=generator(config.experiment, config.variant, run, epoch))
        correct = seen = 0
        per_batch = []
        for start in range(0, N, config.batch_size):
            index = order[start : start + config.batch_size]
            inputs = x[index] if augment is None else augment(x[index], None)
            logits = model(inputs)
            hits = int((logits.argmax(dim=-1) == y[index]).sum())
            correct, seen = correct + hits, seen + len(index)
            per_batch.append(hits / len(index))
            optimizer.zero_grad()
            F.cross_entropy(logits, y[index]).backward()
            optimizer.step()
        accuracies.append(correct / seen)
        batch_means.append(sum(per_batch) / len(per_batch))
    return accuracies, batch_means


def config(epochs: int = 3, checkpoint=None) -> TrainConfig:
    return TrainConfig("test", "running-acc", epochs=epochs, batch_size=8, optimizer=OptimizerConfig("sgd", lr=0.5),
                       measure_at_init=True, checkpoint_path=checkpoint, device="cpu")


@pytest.mark.parametrize("augment", [None, reversed_features], ids=["plain", "augmented"])
def test_running_accuracy_is_the_hand_count_over_each_runs_steps(augment):
    x, y = toy_data()
    run_ids = [5, 0, 9]
    result = train_stacked(fresh_models(run_ids), x, y, config(), run_ids=run_ids, augment=augment,
                           running_accuracy=True)
    history = result.history
    assert history[history.epoch == 0].train_acc.isna().all()  # nothing trained at epoch 0
    per_run, pooling_matters = {}, False
    for run in run_ids:
        expected, batch_means = hand_running_accuracy(fresh_models([run])[0], x, y, run, config(), augment)
        got = history[(history.run == run) & (history.epoch > 0)].sort_values("epoch").train_acc.tolist()
        assert got == pytest.approx(expected, abs=1e-12), run
        per_run[run] = expected
        pooling_matters |= any(abs(a - b) > 1e-9 for a, b in zip(expected, batch_means))
    # the test can tell: the runs differ, the accuracy moves over the epochs, pooling differs from batch means
    assert len({tuple(v) for v in per_run.values()}) == len(run_ids)
    assert any(len(set(v)) > 1 for v in per_run.values())
    assert pooling_matters


def test_recording_the_accuracy_changes_no_other_number():
    x, y = toy_data()
    plain = train_stacked(fresh_models([0, 1]), x, y, config())
    counted = train_stacked(fresh_models([0, 1]), x, y, config(), running_accuracy=True)
    assert "train_acc" not in plain.history and "train_acc" in counted.history
    assert plain.history.equals(counted.history.drop(columns="train_acc"))
    for name, tensor in plain.models.params.items():
        assert torch.equal(tensor, counted.models.params[name]), name


def test_running_accuracy_resumes_and_refuses_a_checkpoint_without_it(tmp_path):
    x, y = toy_data()
    whole = train_stacked(fresh_models([0, 1]), x, y, config(3), running_accuracy=True).history
    path = tmp_path / "ckpt.pt"
    train_stacked(fresh_models([0, 1]), x, y, config(2, path), running_accuracy=True)
    resumed = train_stacked(fresh_models([0, 1]), x, y, config(3, path), running_accuracy=True).history
    assert resumed.equals(whole)
    other = tmp_path / "without.pt"
    train_stacked(fresh_models([0, 1]), x, y, config(2, other))  # its history has no train_acc
    with pytest.raises(CheckpointError):
        train_stacked(fresh_models([0, 1]), x, y, config(3, other), running_accuracy=True)
