"""The shapes preset's shakedown: a step cap for the training engine, and what one job would cost in full.

The shapes preset (presets/shapes.yaml, docs/cost.md) runs every job of the paper DAG that needs a data set, a
checkpoint or a GPU at the paper's sizes, but stops each training after a warm-up and a few timed optimizer
steps, one measurement pass and one checkpoint write and resume. This module only measures: a :class:`JobCost`
is one job's record, :meth:`JobCost.training` gives the engine a :class:`CappedTraining` probe for each training,
:meth:`JobCost.sampled` runs the first items of a loop over like items and counts the rest, and
:meth:`JobCost.summary` turns the timings into the full job's projected wall time on this device. It holds no
state of its own: the training engine decides which record is the job's (:mod:`isonorm.train.pace`), so the paper
run and the shakedown go through the same loop; scripts/run_experiment.py stores the summary with the job's results.
"""

from __future__ import annotations

import math
import os
import resource
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

import torch

from .resources import machine_memory_mb

T = TypeVar("T")


@dataclass(frozen=True)
class StepCap:
    """``warmup`` untimed optimizer steps (allocations, autotuning, a CUDA graph's capture), then ``steps``
    timed ones; one epoch at most. A loop over like items (the batches of a measurement pass, the runs of an
    at-init sweep) runs its first ``items`` (:meth:`JobCost.sampled`)."""

    warmup: int = 1
    steps: int = 3
    items: int = 2

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.steps < 1 or self.items < 1:
            raise ValueError(f"shakedown: warmup must be ≥ 0, steps and items ≥ 1; got warmup={self.warmup}, "
                             f"steps={self.steps}, items={self.items}")

    @classmethod
    def from_config(cls, settings: Mapping[str, Any]) -> "StepCap":
        return cls(warmup=int(settings["warmup"]), steps=int(settings["steps"]), items=int(settings["items"]))


def _seconds_since(start: float, device: torch.device | None = None) -> float:
    """Seconds since ``start``, after the device (None: any CUDA device in use) has finished its queued work
    (CUDA kernels run asynchronously)."""
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device is None and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    return time.perf_counter() - start


@dataclass
class TrainingCost:
    """The timings of one capped :func:`~isonorm.train.train_epochs` call and the size of the full training:
    ``steps_per_epoch`` × ``epochs`` optimizer steps, a measurement pass after every epoch (plus one at init),
    ``checkpoints`` checkpoint writes."""

    steps_per_epoch: int
    epochs: int
    checkpoints: int
    warmup_seconds: list[float] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    init_pass_seconds: float = 0.0
    pass_seconds: list[float] = field(default_factory=list)
    checkpoint_seconds: float = 0.0
    checkpoint_bytes: int = 0
    resume_seconds: float = 0.0

    @property
    def measured_seconds(self) -> float:
        """What of the shakedown's wall time this training spent in the timed parts."""
        return (sum(self.warmup_seconds) + sum(self.step_seconds) + self.init_pass_seconds + sum(self.pass_seconds)
                + self.checkpoint_seconds + self.resume_seconds)

    @property
    def seconds_per_step(self) -> float:
        timed = self.step_seconds or self.warmup_seconds  # an epoch shorter than the warm-up: its steps
        return statistics.median(timed) if timed else math.nan

    @property
    def projected_seconds(self) -> float:
        """The full training: every step at the timed rate, every pass and checkpoint as the timed one."""
        per_pass = statistics.median(self.pass_seconds) if self.pass_seconds else 0.0
        return (self.steps_per_epoch * self.epochs * self.seconds_per_step + self.init_pass_seconds
                + self.epochs * per_pass + self.checkpoints * self.checkpoint_seconds)


class TrainingProbe:
    """What the engine calls around its steps, passes and checkpoints. This base class changes nothing (the
    paper run); :class:`CappedTraining` times them and stops after the cap."""

    def step(self, run: Callable[[], None]) -> None:
        run()

    def capped(self, n_steps: int) -> bool:
        """True once ``n_steps`` steps of the current epoch are all this run trains."""
        return False

    def measure(self, run: Callable[[], Mapping[str, Any]], epoch: int) -> Mapping[str, Any]:
        return run()

    def checkpoint(self, save: Callable[[], Path], resume: Callable[[], None]) -> None:
        save()

    @property
    def stops_training(self) -> bool:
        """True after the capped epoch: the engine ends the training there."""
        return False


class CappedTraining(TrainingProbe):
    def __init__(self, job: "JobCost", cost: TrainingCost, device: torch.device) -> None:
        self.job, self.cost, self.device = job, cost, device

    def step(self, run: Callable[[], None]) -> None:
        """Time the step; the micro-batches :meth:`JobCost.sampled` left out count at the rate of those it ran."""
        seconds = self._timed(run)[1]
        warm = len(self.cost.warmup_seconds) < self.job.cap.warmup
        (self.cost.warmup_seconds if warm else self.cost.step_seconds).append(seconds)

    def capped(self, n_steps: int) -> bool:
        return n_steps >= self.job.cap.warmup + self.job.cap.steps

    def _timed(self, run: Callable[[], Any]) -> tuple[Any, float]:
        """``run()`` and its seconds, the items of its :meth:`JobCost.sampled` loops that were left out included."""
        self.job._timing, self.job._timed_extra = True, 0.0
        start = time.perf_counter()
        try:
            result = run()
            return result, _seconds_since(start, self.device) + self.job._timed_extra
        finally:
            self.job._timing = False

    def measure(self, run: Callable[[], Mapping[str, Any]], epoch: int) -> Mapping[str, Any]:
        """Time the pass; the batches :meth:`JobCost.sampled` left out count at the rate of those it ran."""
        measured, seconds = self._timed(run)
        if epoch == 0:
            self.cost.init_pass_seconds += seconds
        else:
            self.cost.pass_seconds.append(seconds)
        return measured

    def checkpoint(self, save: Callable[[], Path], resume: Callable[[], None]) -> None:
        """One write and one resume from it (the path a killed paper job takes), both timed."""
        start = time.perf_counter()
        path = save()
        self.cost.checkpoint_seconds = _seconds_since(start, self.device)
        self.cost.checkpoint_bytes = Path(path).stat().st_size
        start = time.perf_counter()
        resume()
        self.cost.resume_seconds = _seconds_since(start, self.device)

    @property
    def stops_training(self) -> bool:
        return True


@dataclass
class JobCost:
    """The record of one shakedown job: its cap and every training it ran."""

    cap: StepCap
    trainings: list[TrainingCost] = field(default_factory=list)
    unsampled_seconds: float = 0.0  # what the items :meth:`sampled` left out would take, outside steps and passes
    extrapolated_total: float = 0.0  # every such estimate so far, passes included (nested loops read it)
    depth: tuple[int, int, int] | None = None  # (layers run, real layers, bytes per layer): see scale_depth
    started: float = field(default_factory=time.perf_counter)  # the job's wall time counts from here without /proc
    _timing: bool = False  # a training's step or measurement pass is being timed
    _timed_extra: float = 0.0  # what that step's or pass's left-out items would take

    def training(self, steps_per_epoch: int, epochs: int, checkpoint_every: int,
                 device: torch.device) -> CappedTraining:
        """The engine's probe for one more training of this job, its cost appended to :attr:`trainings`."""
        checkpoints = epochs // checkpoint_every + (epochs % checkpoint_every != 0)
        cost = TrainingCost(steps_per_epoch=steps_per_epoch, epochs=epochs, checkpoints=checkpoints)
        self.trainings.append(cost)
        return CappedTraining(self, cost, device)

    def sampled(self, items: Iterable[T]) -> Iterator[T]:
        """The first ``cap.items`` of a loop over like items (a measurement pass's batches, an at-init sweep's
        runs); the time the others would take, at the rate of these (their own left-out inner items included), is
        added to the job's projection. Loops whose items differ in cost (depths of a sweep) must not be sampled."""
        items = list(items)
        if len(items) <= self.cap.items:
            yield from items
            return
        kept = self.cap.items
        before, start = self.extrapolated_total, time.perf_counter()
        yield from items[:kept]
        ran = _seconds_since(start) + self.extrapolated_total - before
        self.add_unsampled(ran * (len(items) - kept) / kept)

    def scale_depth(self, run: int, real: int, layer_bytes: int) -> None:
        """This job runs a model cut to ``run`` of its ``real`` layers at full width (a job too large for the
        machine, docs/cost.md): :meth:`summary` scales time by real/run and adds the other layers' weights to the
        peak memory."""
        self.depth = (run, real, layer_bytes)

    def add_unsampled(self, seconds: float) -> None:
        self.extrapolated_total += seconds
        if self._timing:
            self._timed_extra += seconds
        else:
            self.unsampled_seconds += seconds

    def elapsed_seconds(self) -> float:
        """The job's wall time so far: from its process's start where the system says it (Linux,
        :func:`process_seconds`), else since this record was made."""
        return process_seconds() or time.perf_counter() - self.started

    def summary(self, wall_seconds: float, device: torch.device | str) -> dict[str, Any]:
        """The job's cost row (docs/cost.md): the timed parts, and the full job's projected wall time = the
        shakedown's untimed part (imports, data, model building, writing results) + every training in full."""
        device = torch.device(device)
        setup = max(wall_seconds - sum(t.measured_seconds for t in self.trainings), 0.0)
        projected = setup + self.unsampled_seconds + sum(t.projected_seconds for t in self.trainings)
        steps = [s for t in self.trainings for s in t.step_seconds]
        peak_rss, peak_cuda = peak_rss_gb(), (torch.cuda.max_memory_allocated(device) / 2**30
                                              if device.type == "cuda" else math.nan)
        extrapolated = ""
        if self.depth is not None:  # a model cut in depth: the missing layers' time and weights added
            run, real, layer_bytes = self.depth
            projected *= real / run
            missing_gb = (real - run) * layer_bytes / 2**30
            peak_rss, peak_cuda = peak_rss + (device.type != "cuda") * missing_gb, peak_cuda + missing_gb
            extrapolated = (f"ran {run} of {real} layers at full width: time × {real / run:g} (an upper bound: the "
                            f"embeddings and output layer do not grow with depth), peak memory + {missing_gb:.1f} "
                            f"GB for the other {real - run} layers' weights")
        return {
            "device": _device_name(device),
            "device_memory_gb": _device_memory_gb(device),
            "wall_seconds": wall_seconds,
            "trainings": len(self.trainings),
            "steps_measured": len(steps),
            "seconds_per_step": statistics.median(steps) if steps else math.nan,
            "paper_steps": sum(t.steps_per_epoch * t.epochs for t in self.trainings),
            "seconds_per_pass": statistics.median(p for t in self.trainings for p in t.pass_seconds)
            if any(t.pass_seconds for t in self.trainings) else math.nan,
            "paper_passes": sum(t.epochs + (t.init_pass_seconds > 0) for t in self.trainings),
            "checkpoint_bytes": max((t.checkpoint_bytes for t in self.trainings), default=0),
            # what a paper job killed mid-run pays to resume (not in the projection: an uninterrupted run never does)
            "resume_seconds": max((t.resume_seconds for t in self.trainings), default=0.0),
            "projected_hours": projected / 3600,
            "peak_rss_gb": peak_rss,
            "peak_cuda_gb": peak_cuda,
            "extrapolated": extrapolated,
        }


def process_seconds() -> float | None:
    """Seconds since this process started: the interpreter's start and the imports included, which a job of the
    paper run pays as well (Linux /proc; None elsewhere)."""
    try:
        after_name = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start_ticks = int(after_name[19])  # field 22, starttime, in clock ticks after boot
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)


def peak_rss_gb() -> float:
    """The process's peak resident memory (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def _device_memory_gb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory / 2**30
    return machine_memory_mb() / 1024
