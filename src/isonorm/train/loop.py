"""The training engine: R runs of one architecture trained together as one batched computation.

The loss minimised is Σ_r mean_b CE_r: run r's parameters enter only its own term, so the gradient each run
receives is exactly the one a separate training would compute, and the element-wise optimizers of
``optimizers.py`` then update every run as R separate optimizers would. Each run sees its own batch order
(``batches.epoch_permutations``), so stacking changes the speed, not the result (tests/test_train_stacked.py).
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..runtime import derive_seed, resolve_device
from .batches import batch_slices, epoch_permutations
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .optimizers import build_optimizer
from .stacking import StackedModels

log = logging.getLogger(__name__)

# measure(models, epoch) -> {metric name: tensor of shape (R,)}, called without gradients, models in eval mode.
Measure = Callable[[StackedModels, int], Mapping[str, torch.Tensor]]
# augment(batch, generator) -> batch of the same shape: a random transform of each run's mini-batch (R, B, ...)
# applied on the device before the forward pass (e.g. random crops and flips); the generator lives on the
# data's device and is seeded per (experiment, variant, epoch), so augmented training stays reproducible.
Augment = Callable[[torch.Tensor, torch.Generator], torch.Tensor]

RESERVED_COLUMNS = ("run", "epoch", "train_loss")


@dataclass
class TrainResult:
    """The trained stack and its history: one row per (run, epoch) with ``train_loss`` and the measures.

    ``train_loss`` at epoch e ≥ 1 is the mean of the mini-batch cross-entropies of epoch e, as accumulated
    while training (daneshmand2021 Fig. 4a: "running training loss ..., not a separate evaluation pass");
    at epoch 0 (measurements of the fresh networks) it is NaN, nothing having been trained.
    """

    models: StackedModels
    history: pd.DataFrame


def _measure_rows(
    stacked: StackedModels, measure: Measure | None, epoch: int, run_ids: list[int], losses: list[float]
) -> list[dict]:
    rows = [{"run": run, "epoch": epoch, "train_loss": loss} for run, loss in zip(run_ids, losses)]
    if measure is None:
        return rows
    stacked.eval()
    with torch.no_grad():
        values = measure(stacked, epoch)
    for name, value in values.items():
        if name in RESERVED_COLUMNS:
            raise ValueError(f"measure returned a metric named {name!r}, which is a history column; rename it")
        tensor = torch.as_tensor(value)
        if tensor.shape != (len(run_ids),):
            raise ValueError(
                f"measure returned {name!r} with shape {tuple(tensor.shape)}; it must give one value per "
                f"stacked run, shape ({len(run_ids)},)"
            )
        for row, item in zip(rows, tensor.detach().double().cpu().tolist()):
            row[name] = item
    return rows


def _train_epoch(
    stacked: StackedModels,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    run_ids: list[int],
    config: TrainConfig,
    epoch: int,
    augment: Augment | None = None,
) -> list[float]:
    """One epoch for all runs; returns each run's mean mini-batch loss."""
    n_runs, n_samples = len(run_ids), x.shape[0]
    order = epoch_permutations(n_samples, run_ids, config.experiment, config.variant, epoch).to(x.device)
    generator = None
    if augment is not None:
        generator = torch.Generator(device=x.device)
        generator.manual_seed(derive_seed(config.experiment, config.variant, "augment", epoch))
    loss_sum = torch.zeros(n_runs, device=x.device, dtype=torch.float64)  # float64: no digits lost over many batches
    n_batches = 0
    stacked.train()
    for columns in batch_slices(n_samples, config.batch_size, config.drop_last):
        index = order[:, columns]  # (R, B): run r's mini-batch
        inputs = x[index] if augment is None else augment(x[index], generator)
        logits = stacked(inputs)  # (R, B, ..., k)
        per_sample = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[index].reshape(-1), reduction="none")
        per_run = per_sample.view(n_runs, -1).mean(dim=1)
        optimizer.zero_grad(set_to_none=True)
        per_run.sum().backward()
        optimizer.step()
        loss_sum += per_run.detach()
        n_batches += 1
    return (loss_sum / n_batches).tolist()  # the epoch's single host sync


def _fingerprint(
    stacked: StackedModels, x: torch.Tensor, run_ids: list[int], config: TrainConfig
) -> dict:
    """What must match for a checkpoint to continue this training (JSON-normalised, so tuples compare)."""
    shapes = {name: list(t.shape) for name, t in {**stacked.params, **stacked.buffers}.items()}
    return json.loads(json.dumps({
        "experiment": config.experiment,
        "variant": config.variant,
        "run_ids": run_ids,
        "data_shape": list(x.shape),
        "batch_size": config.batch_size,
        "drop_last": config.drop_last,
        "optimizer": config.optimizer.as_dict(),
        "shapes": shapes,
    }))


def _check_inputs(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, run_ids: list[int]) -> None:
    if len(run_ids) != len(models):
        raise ValueError(f"got {len(models)} models but {len(run_ids)} run ids; give one run id per model")
    if len(set(run_ids)) != len(run_ids):
        raise ValueError(f"run ids must be distinct (they seed the batch order), got {run_ids}")
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"x and y must hold the same, non-zero number of samples; got {x.shape[0]} and {y.shape[0]}")
    if y.is_floating_point() or y.is_complex():
        raise ValueError(f"y must hold integer class labels, got dtype {y.dtype}")


def train_stacked(
    models: Sequence[nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    config: TrainConfig,
    measure: Measure | None = None,
    run_ids: Sequence[int] | None = None,
    augment: Augment | None = None,
) -> TrainResult:
    """Train ``models`` (R independently initialised copies of one architecture) on (x, y), all at once.

    ``x`` (N, ...) and ``y`` (N, ...) integer labels are moved once to the device and indexed per batch.
    ``run_ids`` (default 0..R-1) name the runs in the history and seed their batch orders. ``measure`` is
    called after every epoch (and at epoch 0 when ``config.measure_at_init``). With
    ``config.checkpoint_path`` set, training resumes from that file when it exists. ``augment`` transforms
    each training mini-batch on the device (never the measurements); see :data:`Augment`.
    """
    run_ids = list(range(len(models))) if run_ids is None else [int(r) for r in run_ids]
    _check_inputs(models, x, y, run_ids)
    device = resolve_device(config.device)
    x, y = x.to(device), y.to(device=device, dtype=torch.long)
    stacked = StackedModels(models, device)
    optimizer = build_optimizer(stacked.params.values(), config.optimizer)
    fingerprint = _fingerprint(stacked, x, run_ids, config)
    checkpoint = Path(config.checkpoint_path) if config.checkpoint_path is not None else None

    rows: list[dict] = []
    done = 0
    if checkpoint is not None and checkpoint.exists():
        payload = load_checkpoint(checkpoint, fingerprint, device)
        done = payload["epoch"]
        if done > config.epochs:
            raise CheckpointError(
                f"checkpoint {checkpoint} already holds {done} epochs, more than the {config.epochs} asked for; "
                f"delete {checkpoint} or raise epochs"
            )
        stacked.load_state(payload["models"])
        optimizer.load_state_dict(payload["optimizer"])
        rows = payload["history"]
        log.info("%s/%s: resuming from %s after epoch %d", config.experiment, config.variant, checkpoint, done)
    elif config.measure_at_init and measure is not None:
        rows += _measure_rows(stacked, measure, 0, run_ids, [math.nan] * len(run_ids))

    # Dropout masks come from the global RNG (vmap's randomness="different"); seeding it per epoch inside a
    # fork keeps runs reproducible and resumable without disturbing the caller's random state.
    cuda_devices = list(range(torch.cuda.device_count()))
    for epoch in range(done + 1, config.epochs + 1):
        started = time.perf_counter()
        with torch.random.fork_rng(devices=cuda_devices):
            torch.manual_seed(derive_seed(config.experiment, config.variant, "dropout", epoch))
            losses = _train_epoch(stacked, optimizer, x, y, run_ids, config, epoch, augment)
        rows += _measure_rows(stacked, measure, epoch, run_ids, losses)
        log.info(
            "%s/%s epoch %d/%d: mean train loss %.4f over %d runs, %.1f s",
            config.experiment, config.variant, epoch, config.epochs,
            sum(losses) / len(losses), len(losses), time.perf_counter() - started,
        )
        if checkpoint is not None and (epoch % config.checkpoint_every == 0 or epoch == config.epochs):
            save_checkpoint(checkpoint, {
                "fingerprint": fingerprint,
                "epoch": epoch,
                "models": stacked.state(),
                "optimizer": optimizer.state_dict(),
                "history": rows,
            })
    history = pd.DataFrame(rows) if rows else pd.DataFrame(columns=list(RESERVED_COLUMNS))
    return TrainResult(stacked, history)
