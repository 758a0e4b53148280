"""Stacking R runs gives exactly R separate trainings (same seeds, same batch order), on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from isonorm.models.mlp import mlp
from isonorm.runtime import generator
from isonorm.train import OptimizerConfig, StackedModels, TrainConfig, build_optimizer, predict, train_stacked


def toy_data(n: int = 37, dim: int = 5, classes: int = 3, dtype=torch.float64):
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, dim, generator=gen, dtype=dtype), torch.randint(classes, (n,), generator=gen)


def fresh_models(run_ids, norm=None, dtype=torch.float64):
    return [mlp([5, 7, 6, 3], norm=norm, generator=generator("test", "init", r)).to(dtype) for r in run_ids]


def plain_training(model: nn.Module, x, y, run: int, config: TrainConfig) -> list[float]:
    """The textbook loop for one run: its own permutation per epoch, one optimizer, mean CE per batch."""
    optimizer = build_optimizer(model.parameters(), config.optimizer)
    epoch_losses = []
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(x.shape[0], generator=generator(config.experiment, config.variant, run, epoch))
        losses = []
        for start in range(0, x.shape[0], config.batch_size):
            index = order[start : start + config.batch_size]
            loss = F.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        epoch_losses.append(sum(losses) / len(losses))
    return epoch_losses


OPTIMIZERS = [
    OptimizerConfig("sgd", lr=0.05),
    OptimizerConfig("sgd", lr=0.05, momentum=0.9, weight_decay=1e-3),
    OptimizerConfig("adam", lr=1e-2),
    OptimizerConfig("adamw", lr=1e-2),
    OptimizerConfig("rmsprop", lr=1e-3, momentum=0.5),
]


@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=lambda o: f"{o.name}-m{o.momentum}")
@pytest.mark.parametrize("norm", [None, "batch"])
def test_stacked_training_equals_separate_trainings(optimizer, norm):
    x, y = toy_data()
    run_ids = [3, 0, 11]  # arbitrary ids: each run's seeds follow its id, not its position in the stack
    config = TrainConfig("test", "stacked", epochs=3, batch_size=8, optimizer=optimizer,
                         measure_at_init=False, device="cpu")
    result = train_stacked(fresh_models(run_ids, norm), x, y, config, run_ids=run_ids)

    for position, run in enumerate(run_ids):
        reference = fresh_models([run], norm)[0]
        losses = plain_training(reference, x, y, run, config)
        trained = result.models.run_state_dict(position)
        for name, tensor in reference.state_dict().items():
            torch.testing.assert_close(trained[name], tensor, rtol=1e-9, atol=1e-11, msg=name)
        history = result.history[result.history.run == run].sort_values("epoch")
        assert history.epoch.tolist() == [1, 2, 3]
        torch.testing.assert_close(torch.tensor(history.train_loss.tolist(), dtype=torch.float64),
                                   torch.tensor(losses, dtype=torch.float64), rtol=1e-9, atol=1e-11)


def test_training_is_deterministic_on_cpu():
    x, y = toy_data(dtype=torch.float32)
    config = TrainConfig("test", "determinism", epochs=2, batch_size=10,
                         optimizer=OptimizerConfig("adam", lr=1e-2), device="cpu")
    first, second = (train_stacked(fresh_models([0, 1], dtype=torch.float32), x, y, config) for _ in range(2))
    for name, tensor in first.models.params.items():
        assert torch.equal(tensor, second.models.params[name]), name
    assert first.history.equals(second.history)


def test_predict_matches_each_unstacked_run_and_leaves_buffers_alone():
    x, _ = toy_data()
    stacked = StackedModels(fresh_models([0, 1], norm="batch"))
    running_mean = stacked.buffers["1.running_mean"].clone()
    logits = predict(stacked, x, batch_size=8)
    assert logits.shape == (2, x.shape[0], 3)
    for run, module in enumerate(stacked.unstack()):
        torch.testing.assert_close(logits[run], module.eval()(x))
    predict(stacked, x, batch_size=8, train_mode=True)
    assert torch.equal(stacked.buffers["1.running_mean"], running_mean)


def test_stacking_rejects_different_architectures():
    with pytest.raises(ValueError, match="same architecture"):
        StackedModels([mlp([5, 7, 3]), mlp([5, 8, 3])])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_training_matches_cpu_training():
    x, y = toy_data()
    results = {}
    for device in ("cpu", "cuda"):
        config = TrainConfig("test", "cuda", epochs=2, batch_size=8, measure_at_init=False, device=device)
        results[device] = train_stacked(fresh_models([0, 1]), x, y, config)
    for name, tensor in results["cpu"].models.params.items():
        torch.testing.assert_close(results["cuda"].models.params[name].cpu(), tensor, rtol=1e-9, atol=1e-11)
