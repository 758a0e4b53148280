"""The training engine: the one epoch loop, around a pluggable step that trains R stacked runs at once.

:func:`train_epochs` owns what every training shares: per-(run, epoch) seeded batch orders, resuming from a
fingerprinted checkpoint, per-run epoch caps, stopping runs whose loss turns non-finite, measurement
callbacks and the tidy history. A :class:`Step` owns the model and one optimisation step on index batches:

- :class:`isonorm.train.vmap_step.VmapStep`: R ordinary modules stacked with torch.func, any element-wise
  torch optimizer, an optional on-device augmentation (:func:`train_stacked` builds it);
- :class:`isonorm.train.fast_step.StackedSGDStep`: a natively stacked module, foreach SGD, device-side
  gather, a CUDA graph on CUDA (the meterez2024 grid).

Each run sees its own batch order, so stacking changes the speed, not the result (tests/test_train_stacked.py).
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Protocol, Sequence

import pandas as pd
import torch
from torch import nn

from ..cost import costed_training
from ..runtime import resolve_device
from .batches import EpochPlan
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TrainConfig
from .history import epoch_rows, history_frame, untrained
from .optimizers import build_optimizer
from .progress import Progress
from .stacking import StackedModels
from .vmap_step import Augment, VmapStep

log = logging.getLogger(__name__)

# measure(model, epoch) -> {metric name: (R,) or (R, K) values}: called after every epoch (and at epoch 0 with
# ``measure_at_init``) on the step's model; it sets the model's mode and gradient needs itself (train_stacked
# calls its measures in eval mode without gradients).
Measure = Callable[[Any, int], Mapping[str, Any]]


class Step(Protocol):
    """One optimisation step of R stacked runs, and what the loop needs around it.

    ``model`` is what measures receive; ``n_samples`` the training samples per run (batch orders permute
    ``range(n_samples)``), or one count per run for runs of unequal data sets (:class:`EpochPlan`: a run sits
    out the steps after its own batches, and the step is then called with an ``active`` mask); index batches
    go to ``device``; ``stats`` names the epoch statistics, ``train_loss`` first (the loop stops runs on it).
    """

    model: Any
    n_runs: int
    n_samples: int | Sequence[int]
    device: torch.device
    stats: tuple[str, ...]

    def epoch(self, epoch: int) -> ContextManager[None]:
        """Entered around an epoch's steps: train mode, zeroed accumulators, the epoch's seeded randomness."""

    def __call__(self, index: torch.Tensor, active: torch.Tensor | None = None) -> None:
        """One step on batch ``index`` (R, B) of sample indices, on ``device``; with ``active`` (R,) bool, the
        inactive runs' parameters, buffers and statistics stay as they are (only steps with per-run
        ``n_samples`` get one)."""

    def epoch_stats(self, n_batches, n_samples) -> Mapping[str, torch.Tensor]:
        """Each of ``stats`` as an (R,) tensor, after ``n_batches`` steps on ``n_samples`` samples per run (ints,
        or (R,) float64 tensors for per-run ``n_samples``)."""

    def fingerprint(self) -> dict:
        """What of the step must match for a checkpoint to continue it (data and parameter shapes)."""

    def state_dict(self) -> dict:
        """What a checkpoint saves to resume the step (model tensors, optimizer state)."""

    def load_state_dict(self, state: dict) -> None:
        """Restore a :meth:`state_dict` in place."""


@dataclass
class TrainResult:
    """The trained model and its history: one row per recorded (run, epoch), the statistics and the measures.

    ``train_loss`` at epoch e ≥ 1 is the mean of the mini-batch cross-entropies of epoch e, as accumulated
    while training (daneshmand2021 Fig. 4a: "running training loss ..., not a separate evaluation pass");
    ``train_acc``, where the step records it, is likewise the running accuracy over epoch e's batches. At
    epoch 0 (measurements of the fresh networks) the statistics are NaN unless a measure supplies them. ``stopped``
    maps a run stopped on a non-finite loss to that epoch (``TrainConfig.stop_non_finite``).
    """

    models: Any
    history: pd.DataFrame
    stopped: dict[Any, int] = field(default_factory=dict)


def _fingerprint(step: Step, config: TrainConfig, run_ids: list, seed_keys: list, extra: Mapping) -> dict:
    """What must match for a checkpoint to continue this training (JSON-normalised, so tuples compare). The
    epoch count and caps are not part of it: resuming with more epochs extends a finished training."""
    return json.loads(json.dumps({
        "experiment": config.experiment,
        "variant": config.variant,
        "run_ids": run_ids,
        "seed_keys": seed_keys,
        "batch_size": config.batch_size,
        "drop_last": config.drop_last,
        "optimizer": config.optimizer.as_dict(),
        **step.fingerprint(),
        **extra,
    }))


def train_epochs(
    step: Step,
    config: TrainConfig,
    *,
    run_ids: Sequence[Any] | None = None,
    seed_keys: Sequence[Sequence[Any]] | None = None,
    measure: Measure | None = None,
    fingerprint: Mapping[str, Any] | None = None,
) -> TrainResult:
    """Train the step's R runs for ``config.epochs`` epochs: THE epoch loop.

    ``run_ids`` (default 0..R-1) name the runs in the history; run r's epoch-e batch order is
    ``generator(*seed_keys[r], e)``, by default seeded by (experiment, variant, run id). ``measure`` runs
    after every epoch (and at epoch 0 with ``config.measure_at_init``). With ``config.checkpoint_path`` set,
    training resumes from that file when it exists; ``fingerprint`` adds what else must match (say the
    architecture). A run is recorded up to its cap (``config.run_epochs``) and, with
    ``config.stop_non_finite``, up to the epoch before its loss turns non-finite; once no run can be
    recorded any more, training ends.
    """
    n_runs = step.n_runs
    run_ids = list(range(n_runs)) if run_ids is None else list(run_ids)
    if len(run_ids) != n_runs or len(set(run_ids)) != n_runs:
        raise ValueError(f"give {n_runs} distinct run ids, one per stacked run; got {run_ids}")
    keys = [(config.experiment, config.variant, run) for run in run_ids] if seed_keys is None else list(seed_keys)
    if len(keys) != n_runs:
        raise ValueError(f"give one seed key per stacked run ({n_runs}), got {len(keys)}")
    caps = config.caps(n_runs)
    label = f"{config.experiment}/{config.variant}"
    signature = _fingerprint(step, config, run_ids, keys, fingerprint or {})
    checkpoint = Path(config.checkpoint_path) if config.checkpoint_path is not None else None

    rows: list[dict] = []
    stopped: dict[Any, int] = {}
    done = 0
    if checkpoint is not None and checkpoint.exists():
        payload = load_checkpoint(checkpoint, signature, step.device)
        done = payload["epoch"]
        if done > config.epochs:
            raise CheckpointError(
                f"checkpoint {checkpoint} already holds {done} epochs, more than the {config.epochs} asked for; "
                f"delete {checkpoint} or raise epochs"
            )
        step.load_state_dict(payload["state"])
        rows, stopped = payload["history"], payload["stopped"]
        log.info("%s: resuming from %s after epoch %d", label, checkpoint, done)
    sizes = [step.n_samples] * n_runs if isinstance(step.n_samples, int) else list(step.n_samples)
    plan = EpochPlan(sizes, config.batch_size, config.drop_last, step.device)
    steps_per_epoch = plan.steps
    # the cost run's one hook (isonorm.cost): the loop's epochs, steps, measures and checkpoint writes go through
    # it; it changes nothing but in the shapes preset, whose step cap times them and stops after one epoch's few steps
    costed = costed_training(step, measure, steps_per_epoch, max(caps, default=0) - done, config.checkpoint_every,
                             step.device)
    progress = Progress(label, config.epochs, done + 1, steps_per_epoch)  # rate and time left, in the job's log
    if done == 0 and config.measure_at_init and measure is not None:
        at_init = costed.measure(step.model, 0)
        rows += epoch_rows(run_ids, 0, untrained(step.stats, n_runs), at_init, [True] * n_runs)

    def recordable(epoch: int) -> list[bool]:
        return [run not in stopped and epoch <= cap for run, cap in zip(run_ids, caps)]

    epochs = costed.epochs(range(done + 1, config.epochs + 1))
    for epoch in epochs:
        if not any(recordable(epoch)):  # every run stopped or capped (a checkpoint of a finished training)
            break
        progress.start_epoch(epoch)
        order = plan.orders(keys, epoch).to(step.device)
        n_steps = 0
        with step.epoch(epoch):
            for columns, mask in costed.steps(plan.batches()):
                if mask is None:
                    costed.step(order[:, columns])  # (R, B): run r's mini-batch
                else:  # some runs' batches are done: they sit the step out
                    costed.step(order[:, columns], mask)
                n_steps += 1
                progress.step(n_steps)
        n_batches, n_seen = plan.seen(n_steps)
        stats = {name: values.tolist() for name, values in step.epoch_stats(n_batches, n_seen).items()}  # host sync
        active = recordable(epoch)
        for r, run in enumerate(run_ids):
            if config.stop_non_finite and active[r] and not math.isfinite(stats["train_loss"][r]):
                log.warning("%s run %s: non-finite train loss in epoch %d; run stopped", label, run, epoch)
                stopped[run], active[r] = epoch, False
        measured = costed.measure(step.model, epoch) if measure is not None else {}
        rows += epoch_rows(run_ids, epoch, stats, measured, active)
        losses = [loss for loss, keep in zip(stats["train_loss"], active) if keep]
        log.info("%s epoch %d/%d: mean train loss %.4f over %d runs, %s", label, epoch, config.epochs,
                 sum(losses) / len(losses) if losses else math.nan, len(losses), progress.epoch_line())
        last = epoch == epochs[-1] or not any(recordable(epoch + 1))
        if checkpoint is not None and (epoch % config.checkpoint_every == 0 or last):
            payload = {"fingerprint": signature, "epoch": epoch, "state": step.state_dict(), "history": rows,
                       "stopped": stopped}
            costed.checkpoint(
                lambda: save_checkpoint(checkpoint, payload),
                lambda: step.load_state_dict(load_checkpoint(checkpoint, signature, step.device)["state"]))
    return TrainResult(step.model, history_frame(rows, step.stats), dict(stopped))


def _check_inputs(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, run_ids: list[int]) -> None:
    if len(run_ids) != len(models):
        raise ValueError(f"got {len(models)} models but {len(run_ids)} run ids; give one run id per model")
    if len(set(run_ids)) != len(run_ids):
        raise ValueError(f"run ids must be distinct (they seed the batch order), got {run_ids}")
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"x and y must hold the same, non-zero number of samples; got {x.shape[0]} and {y.shape[0]}")
    if y.is_floating_point() or y.is_complex():
        raise ValueError(f"y must hold integer class labels, got dtype {y.dtype}")


def _in_eval_mode(measure: Measure) -> Measure:
    """``measure`` called without gradients on the networks in eval mode."""

    def measured(models: StackedModels, epoch: int) -> Mapping[str, Any]:
        models.eval()
        with torch.no_grad():
            return measure(models, epoch)

    return measured


def train_stacked(
    models: Sequence[nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    config: TrainConfig,
    measure: Measure | None = None,
    run_ids: Sequence[int] | None = None,
    augment: Augment | None = None,
    running_accuracy: bool = False,
) -> TrainResult:
    """Train ``models`` (R independently initialised copies of one architecture) on (x, y), all at once.

    ``x`` (N, ...) and ``y`` (N, ...) integer labels are moved once to the device and indexed per batch.
    ``run_ids`` (default 0..R-1) name the runs in the history and seed their batch orders. ``measure``
    (models: :class:`StackedModels`, epoch) is called in eval mode without gradients after every epoch (and
    at epoch 0 when ``config.measure_at_init``). With ``config.checkpoint_path`` set, training resumes from
    that file when it exists. ``augment`` transforms each training mini-batch on the device (never the
    measurements); see :data:`Augment`. ``running_accuracy`` adds the statistic ``train_acc``: each run's
    running train-mode accuracy (a fraction) over the epoch's (augmented) mini-batches, from the logits of the
    steps themselves (:class:`VmapStep`).
    """
    run_ids = list(range(len(models))) if run_ids is None else [int(r) for r in run_ids]
    _check_inputs(models, x, y, run_ids)
    step = stacked_step(models, x, y, config, augment, running_accuracy)
    return train_epochs(step, config, run_ids=run_ids, measure=None if measure is None else _in_eval_mode(measure))


def stacked_step(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, config: TrainConfig,
                 augment: Augment | None = None, running_accuracy: bool = False) -> VmapStep:
    """The step :func:`train_stacked` trains with: ``models`` stacked on ``config.device``, the data moved there
    once, the config's optimizer over the stacked parameters (``benchmarks/lu2024_bounds.py`` counts it)."""
    device = resolve_device(config.device)
    x, y = x.to(device), y.to(device=device, dtype=torch.long)
    stacked = StackedModels(models, device)
    return VmapStep(stacked, build_optimizer(stacked.params.values(), config.optimizer), x, y, config, augment,
                    running_accuracy)
