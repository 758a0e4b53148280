"""The cost run: the shapes preset's step cap, what each job would cost in full, and the table of those costs.

The shapes preset (presets/shapes.yaml, docs/cost.md) runs every job of the paper DAG that needs a data set, a
checkpoint or a GPU at the paper's sizes, but stops each training after a warm-up and a few timed optimizer steps,
one measurement pass and one checkpoint write and resume. Everything that run is lives here, in one module:

- the step cap (:class:`StepCap`, the configuration key :data:`CAP_SETTING`) and the job's record of what it
  measured (:class:`JobCost`: each capped training's :class:`TrainingCost`, and :meth:`JobCost.summary`, the full
  job's projected wall time and peak memory on this device);
- the context of one capped job: :func:`capped` makes a fresh record the job's, in a context variable, and
  everything the cap changes reads it from here: the training engine's one hook (:func:`costed_training`, a
  :class:`CostedTraining` that :func:`~isonorm.train.train_epochs` trains through), every loop over like items
  (:func:`sampled`) and a model cut in depth (:func:`scale_depth`). Outside :func:`capped` all three change
  nothing, so the paper run and the cost run go through the same code, and model and experiment code never ask
  which run they are in;
- the cost table (:func:`cost_table`, one row per job from the records stored with the results), which the shapes
  preset writes and a paper run reads (its job sizes, isonorm.resources; its projected hours, isonorm.plan; its
  memory guard, :func:`memory_guard`). The HTML page that draws it is the report's (isonorm.report.cost_page).

It is one place so that the cap, what it measures and what is made of the measurements change together, and it
sits at the bottom of the library's layers (docs/architecture.md §2): it imports nothing of isonorm but atomic
writes, the results contract and the device helpers, so the engine, the workflow and the report can all use it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import resource
import statistics
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import pandas as pd
import torch

from .atomic import atomic_write
from .results import read_metadata
from .runtime import machine_memory_mb

T = TypeVar("T")
log = logging.getLogger(__name__)

# The configuration key of the step cap (schemas/config.schema.yaml); null: no cap. Its name is older than this
# module's and is kept: presets and users' config files set it.
CAP_SETTING = "shakedown"


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
            raise ValueError(f"{CAP_SETTING}: warmup must be ≥ 0, steps and items ≥ 1; got warmup={self.warmup}, "
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
        """What of the cost run's wall time this training spent in the timed parts."""
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


class CostedTraining:
    """The training engine's one hook into the cost run (:func:`costed_training`): the loop trains through it.

    It holds the training's ``step`` and ``measure`` and bounds its loops: :meth:`epochs` the epochs the loop runs,
    :meth:`steps` the batches of one epoch; the loop calls :meth:`step`, :meth:`measure` and :meth:`checkpoint`
    where it would call the step, the measure and the checkpoint write. This base class is the full run and changes
    nothing; :class:`CappedTraining` times each call and ends the training after the capped steps of one epoch."""

    def __init__(self, step: Callable[..., None], measure: Callable[[Any, int], Mapping[str, Any]] | None) -> None:
        self._step, self._measure = step, measure

    def epochs(self, epochs: range) -> range:
        return epochs

    def steps(self, batches: Iterable[T]) -> Iterable[T]:
        return batches

    def step(self, *args: Any) -> None:
        self._step(*args)

    def measure(self, model: Any, epoch: int) -> Mapping[str, Any]:
        return self._measure(model, epoch)

    def checkpoint(self, save: Callable[[], Path], resume: Callable[[], None]) -> None:
        save()


class CappedTraining(CostedTraining):
    """One training of a capped job, its timings in ``cost`` (one of its :class:`JobCost`'s trainings)."""

    def __init__(self, step: Callable[..., None], measure: Callable[[Any, int], Mapping[str, Any]] | None,
                 job: "JobCost", cost: TrainingCost, device: torch.device) -> None:
        super().__init__(step, measure)
        self.job, self.cost, self.device = job, cost, device

    def epochs(self, epochs: range) -> range:
        """The first epoch only; the loop writes its checkpoint, as after a training's last epoch."""
        if epochs:
            log.info("cost run: this training stops after %d steps of epoch %d",
                     min(self.job.cap.warmup + self.job.cap.steps, self.cost.steps_per_epoch), epochs[0])
        return epochs[:1]

    def steps(self, batches: Iterable[T]) -> Iterator[T]:
        """The epoch's first warm-up and timed steps."""
        return itertools.islice(batches, self.job.cap.warmup + self.job.cap.steps)

    def step(self, *args: Any) -> None:
        """Time the step; the micro-batches :meth:`JobCost.sampled` left out count at the rate of those it ran."""
        seconds = self._timed(lambda: self._step(*args))[1]
        warm = len(self.cost.warmup_seconds) < self.job.cap.warmup
        (self.cost.warmup_seconds if warm else self.cost.step_seconds).append(seconds)

    def _timed(self, run: Callable[[], Any]) -> tuple[Any, float]:
        """``run()`` and its seconds, the items of its :meth:`JobCost.sampled` loops that were left out included."""
        self.job._timing, self.job._timed_extra = True, 0.0
        start = time.perf_counter()
        try:
            result = run()
            return result, _seconds_since(start, self.device) + self.job._timed_extra
        finally:
            self.job._timing = False

    def measure(self, model: Any, epoch: int) -> Mapping[str, Any]:
        """Time the pass; the batches :meth:`JobCost.sampled` left out count at the rate of those it ran."""
        measured, seconds = self._timed(lambda: self._measure(model, epoch))
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


@dataclass
class JobCost:
    """The record of one capped job: its cap and every training it ran."""

    cap: StepCap
    trainings: list[TrainingCost] = field(default_factory=list)
    unsampled_seconds: float = 0.0  # what the items :meth:`sampled` left out would take, outside steps and passes
    extrapolated_total: float = 0.0  # every such estimate so far, passes included (nested loops read it)
    depth: tuple[int, int, int] | None = None  # (layers run, real layers, bytes per layer): see scale_depth
    started: float = field(default_factory=time.perf_counter)  # the job's wall time counts from here without /proc
    _timing: bool = False  # a training's step or measurement pass is being timed
    _timed_extra: float = 0.0  # what that step's or pass's left-out items would take

    def training(self, step: Callable[..., None], measure: Callable[[Any, int], Mapping[str, Any]] | None,
                 steps_per_epoch: int, epochs: int, checkpoint_every: int, device: torch.device) -> CappedTraining:
        """The engine's hook for one more training of this job, its cost appended to :attr:`trainings`."""
        checkpoints = epochs // checkpoint_every + (epochs % checkpoint_every != 0)
        cost = TrainingCost(steps_per_epoch=steps_per_epoch, epochs=epochs, checkpoints=checkpoints)
        self.trainings.append(cost)
        return CappedTraining(step, measure, self, cost, device)

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
        cost run's untimed part (imports, data, model building, writing results) + every training in full."""
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


# --- the context of one capped job -------------------------------------------------------------------------------

_RECORD: ContextVar[JobCost | None] = ContextVar("isonorm.cost", default=None)


@contextlib.contextmanager
def capped(settings: StepCap | Mapping[str, Any] | None) -> Iterator[JobCost | None]:
    """Cap the job that runs in the block by ``settings`` (a :class:`StepCap`, or the configuration's
    ``{warmup, steps, items}``) and yield its fresh cost record; with no settings (None or empty: every preset
    but shapes) change nothing and yield None. One job, one record: a cap inside a cap is refused. The record
    lives in a :class:`~contextvars.ContextVar` that this sets and resets, so nothing of one job reaches the next
    one in the same process."""
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


def costed_training(step: Callable[..., None], measure: Callable[[Any, int], Mapping[str, Any]] | None,
                    steps_per_epoch: int, epochs: int, checkpoint_every: int,
                    device: torch.device) -> CostedTraining:
    """The hook :func:`~isonorm.train.train_epochs` trains through (:class:`CostedTraining`): under a step cap one
    that times the training's parts and stops it (its cost appended to the job's record), else one that changes
    nothing."""
    record = _RECORD.get()
    if record is None:
        return CostedTraining(step, measure)
    return record.training(step, measure, steps_per_epoch, epochs, checkpoint_every, device)


def scale_depth(run: int, real: int, layer_bytes: int) -> None:
    """Say that this job runs a model cut to ``run`` of its ``real`` layers at full width (a job too large for
    the machine, docs/cost.md); under a step cap its projection then scales to the real depth
    (:meth:`JobCost.scale_depth`). A no-op otherwise."""
    record = _RECORD.get()
    if record is not None:
        record.scale_depth(run, real, layer_bytes)


# --- the cost table ------------------------------------------------------------------------------------------------

COLUMNS = ["paper", "rule", "wildcards", "result", "device", "steps_measured", "seconds_per_step", "paper_steps",
           "seconds_per_pass", "paper_passes", "wall_seconds", "projected_hours", "peak_rss_gb", "peak_cuda_gb",
           "peak_memory_gb", "device_memory_gb", "fits", "extrapolated", "checkpoint_bytes",
           "resume_seconds"]


class MissingCostRecordError(ValueError):
    """A results file of the shapes run holds no cost record: it was made by another run."""


def _relative(path: str | Path, root: Path) -> str:
    path = Path(path)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def cost_table(result_files: Sequence[str | Path], results_root: str | Path) -> pd.DataFrame:
    """One row per job (COLUMNS) from the cost records of ``result_files`` (each job's :meth:`JobCost.summary`,
    stored under the metadata key ``cost``); a job's other outputs (a second file it writes) need no record of
    their own. ``result`` is the job's first output relative to ``results_root``, the same path a paper run writes
    under results/. ``peak_memory_gb`` is the peak that must fit the device: CUDA's largest allocation on a GPU,
    the resident memory on a CPU; a job whose peak exceeds the device's memory has ``fits = False``: a paper run
    would fail on it here (:func:`memory_warnings`)."""
    root = Path(results_root)
    records, covered = {}, set()
    for file in result_files:
        record = read_metadata(file).get("cost")
        if record is not None:
            records[str(Path(file))] = record
            covered.update(str(Path(output)) for output in record["outputs"])
    missing = [str(f) for f in result_files if str(Path(f)) not in covered]
    if missing:
        raise MissingCostRecordError(
            f"{len(missing)} results file(s) hold no cost record, e.g. {missing[0]}: they were not made by a "
            "shapes run (the step cap of presets/shapes.yaml). Delete them and rerun the shapes preset"
        )
    rows = []
    for file, record in records.items():
        cuda = record.get("peak_cuda_gb")
        on_cuda = cuda is not None and cuda == cuda  # not NaN
        peak = cuda if on_cuda else record["peak_rss_gb"]
        rows.append({
            "paper": record["rule"].split("_", 1)[0],
            "rule": record["rule"],
            "wildcards": record["wildcards"],
            "result": _relative(file, root),
            **{key: record[key] for key in ("device", "steps_measured", "seconds_per_step", "paper_steps",
                                            "seconds_per_pass", "paper_passes", "wall_seconds", "projected_hours",
                                            "peak_rss_gb", "device_memory_gb", "checkpoint_bytes")},
            "peak_cuda_gb": cuda if on_cuda else float("nan"),
            "peak_memory_gb": peak,
            "fits": bool(peak <= record["device_memory_gb"]),
            "extrapolated": record.get("extrapolated", ""),
            "resume_seconds": record.get("resume_seconds", float("nan")),  # not in records of older shapes runs
        })
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.sort_values(["paper", "rule", "wildcards"], ignore_index=True)


def write_cost_table(frame: pd.DataFrame, path: str | Path) -> Path:
    with atomic_write(Path(path)) as tmp:
        frame.to_csv(tmp, index=False)
    return Path(path)


def read_cost_table(path: str | Path) -> pd.DataFrame:
    text = ("wildcards", "extrapolated")  # empty for a job without wildcards / not extrapolated
    return pd.read_csv(path, dtype=dict.fromkeys(text, str), keep_default_na=False,
                       na_values={column: ["", "NaN", "nan"] for column in COLUMNS if column not in text})


@dataclass(frozen=True)
class Coverage:
    """How a cost table covers the jobs of a run, each named by its first results file (the table's ``result``).

    ``unmeasured``: jobs without a row, added since the table was measured; their cost is unknown until the shapes
    preset runs again, so they are left out of the table's totals and a run sizes them from the defaults
    (isonorm.resources). ``unknown``: rows that name no job of the run, removed or renamed since; their hours
    would count work the run no longer does."""

    unmeasured: list[str]
    unknown: list[str]


def coverage(frame: pd.DataFrame, jobs: Iterable[str]) -> Coverage:
    """Which of ``jobs`` (first results files, relative to the results root) the table ``frame`` has no row for,
    and which of its rows name none of them."""
    jobs, rows = set(jobs), set(frame.result)
    return Coverage(unmeasured=sorted(jobs - rows), unknown=sorted(rows - jobs))


def memory_warnings(frame: pd.DataFrame) -> list[str]:
    """One line per job whose peak memory exceeds the device's: a paper run would run out of memory on it."""
    return [
        f"{row.rule}{f' ({row.wildcards})' if row.wildcards else ''}: peak memory {row.peak_memory_gb:.1f} GB > {row.device_memory_gb:.1f} GB of "
        f"{row.device}; run it on a larger device (docs/cost.md)"
        for row in frame.itertuples() if not row.fits
    ]


def memory_guard(cost_csv: str | Path) -> list[str]:
    """The memory guard's lines for a paper run: the flagged jobs of a shapes run's table, if there is one."""
    if not Path(cost_csv).is_file():
        return []
    return [f"memory guard ({cost_csv}): {line}" for line in memory_warnings(read_cost_table(cost_csv))]


__all__ = ["CAP_SETTING", "StepCap", "TrainingCost", "CostedTraining", "CappedTraining", "JobCost", "process_seconds",
           "peak_rss_gb", "capped", "sampled", "costed_training", "scale_depth", "COLUMNS", "MissingCostRecordError",
           "cost_table", "write_cost_table", "read_cost_table", "Coverage", "coverage", "memory_warnings",
           "memory_guard"]
