"""Resumable checkpoints: resuming reproduces the uninterrupted run; unusable files fail loudly."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from isonorm.runtime import derive_seed
from isonorm.train import CheckpointError, OptimizerConfig, TrainConfig, train_stacked


def data():
    gen = torch.Generator().manual_seed(1)
    return torch.randn(30, 4, generator=gen), torch.randint(2, (30,), generator=gen)


def models(seed: str, n_runs: int = 2) -> list[nn.Module]:
    """A dropout net, so resuming must also restore the random stream, and Adam, so the optimizer state."""
    built = []
    for run in range(n_runs):
        torch.manual_seed(derive_seed("test-checkpoint", seed, run))
        built.append(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2)))
    return built


def config(path, epochs: int, **overrides) -> TrainConfig:
    settings = dict(epochs=epochs, batch_size=7, optimizer=OptimizerConfig("adam", lr=1e-2),
                    checkpoint_path=path, checkpoint_every=1, device="cpu")
    settings.update(overrides)
    return TrainConfig("test", "checkpoint", **settings)


def accuracy(stacked, epoch):
    x, y = data()
    with torch.no_grad():
        return {"accuracy": (stacked(x, shared_input=True).argmax(-1) == y).double().mean(dim=1)}


def test_resumed_training_equals_uninterrupted_training(tmp_path):
    x, y = data()
    uninterrupted = train_stacked(models("a"), x, y, config(None, 4), measure=accuracy)

    path = tmp_path / "run.ckpt"
    train_stacked(models("a"), x, y, config(path, 2), measure=accuracy)  # "killed" after epoch 2
    # Different starting weights: everything must come from the checkpoint.
    resumed = train_stacked(models("b"), x, y, config(path, 4), measure=accuracy)

    for name, tensor in uninterrupted.models.params.items():
        torch.testing.assert_close(resumed.models.params[name], tensor, rtol=0, atol=0, msg=name)
    assert resumed.history.equals(uninterrupted.history)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]  # no temporary file left behind


def test_corrupt_checkpoint_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "run.ckpt"
    path.write_bytes(b"not a checkpoint, e.g. a file cut short by a killed job")
    x, y = data()
    with pytest.raises(CheckpointError, match=rf"(?s){path}.*unreadable.*delete {path}"):
        train_stacked(models("a"), x, y, config(path, 2))


def test_checkpoint_of_another_training_is_refused(tmp_path):
    path = tmp_path / "run.ckpt"
    x, y = data()
    train_stacked(models("a"), x, y, config(path, 1))
    with pytest.raises(CheckpointError, match=rf"(?s){path}.*batch_size.*delete {path}"):
        train_stacked(models("a"), x, y, config(path, 2, batch_size=5))
    with pytest.raises(CheckpointError, match="different training.*optimizer"):
        train_stacked(models("a"), x, y, config(path, 2, optimizer=OptimizerConfig("sgd", lr=0.1)))


def test_checkpoint_with_more_epochs_than_asked_is_refused(tmp_path):
    path = tmp_path / "run.ckpt"
    x, y = data()
    train_stacked(models("a"), x, y, config(path, 3))
    with pytest.raises(CheckpointError, match="already holds 3 epochs"):
        train_stacked(models("a"), x, y, config(path, 2))


def test_checkpoints_are_written_every_n_epochs(tmp_path):
    path = tmp_path / "run.ckpt"
    x, y = data()
    train_stacked(models("a"), x, y, config(path, 3, checkpoint_every=2))
    # epoch 2 (every 2) and epoch 3 (the last) were saved; the file holds the last one
    assert torch.load(path, weights_only=True)["epoch"] == 3
