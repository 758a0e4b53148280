"""The pace of a job: in full, or under the shapes preset's step cap (docs/cost.md). The engine owns it.

Every run trains and loops in full, except a job that the workflow runs inside :func:`capped` with the
configuration's step cap (the key :data:`CAP_SETTING`, presets/shapes.yaml). Inside it the job's cost record
(:class:`isonorm.shakedown.JobCost`) is the current context's, and it reaches what the cap changes through this
module alone: :func:`train_epochs` asks :func:`training_probe` for its probe, loops over like items run through
:func:`sampled`, a model cut in depth says so with :func:`scale_depth`. Outside it all three change nothing, so
model and experiment code never ask which run they are in. The record lives in a :class:`~contextvars.ContextVar`
that :func:`capped` sets and resets, so nothing of one job reaches the next one in the same process.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Any, Iterable, Iterator, Mapping, TypeVar

import torch

from ..shakedown import JobCost, StepCap, TrainingProbe

T = TypeVar("T")

CAP_SETTING = "shakedown"  # the configuration key of the step cap (schemas/config.schema.yaml); null: no cap
_RECORD: ContextVar[JobCost | None] = ContextVar("isonorm.train.pace", default=None)


@contextlib.contextmanager
def capped(settings: StepCap | Mapping[str, Any] | None) -> Iterator[JobCost | None]:
    """Cap the job that runs in the block by ``settings`` (a :class:`StepCap`, or the configuration's
    ``{warmup, steps, items}``) and yield its fresh cost record; with no settings (None or empty: every preset
    but shapes) change nothing and yield None. One job, one record: a cap inside a cap is refused."""
    if not settings:
        yield None
        return
    if _RECORD.get() is not None:
        raise RuntimeError("a capped job is already running in this context; one job has one cost record")
    record = JobCost(settings if isinstance(settings, StepCap) else StepCap.from_config(settings))
    token = _RECORD.set(record)
    try:
        yield record
    finally:
        _RECORD.reset(token)


def sampled(items: Iterable[T]) -> Iterator[T]:
    """The items of a loop over like items (a measurement pass's batches, an at-init sweep's runs): all of them,
    or under a step cap the first few, the others counted at their rate (:meth:`JobCost.sampled`). Loops whose
    items differ in cost (depths of a sweep) must not be sampled."""
    record = _RECORD.get()
    return iter(list(items)) if record is None else record.sampled(items)


def training_probe(steps_per_epoch: int, epochs: int, checkpoint_every: int, device: torch.device) -> TrainingProbe:
    """The probe :func:`train_epochs` calls around its steps, passes and checkpoints: under a step cap one that
    times them and stops (appended to the job's record), else the no-op :class:`TrainingProbe`."""
    record = _RECORD.get()
    if record is None:
        return TrainingProbe()
    return record.training(steps_per_epoch, epochs, checkpoint_every, device)


def scale_depth(run: int, real: int, layer_bytes: int) -> None:
    """Say that this job runs a model cut to ``run`` of its ``real`` layers at full width (a job too large for
    the machine, docs/cost.md); under a step cap its projection then scales to the real depth
    (:meth:`JobCost.scale_depth`). A no-op otherwise."""
    record = _RECORD.get()
    if record is not None:
        record.scale_depth(run, real, layer_bytes)
