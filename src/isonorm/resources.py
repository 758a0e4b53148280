"""Job sizes: the threads, memory (MB) and runtime (minutes) of every job of the workflow (docs/cluster.md, "Job
sizes").

Every rule declares ``threads``, ``mem_mb``, ``runtime`` and ``cpus_per_task`` through rules/common.smk, which asks
:class:`JobSizes` here. A job's memory and runtime come from a measured cost table (the shapes preset's
``cost.csv``, docs/cost.md) times a margin where the table has the job's row (same rule, same wildcards), and from
:data:`DEFAULTS` (one per kind of rule) otherwise. Threads always come from :data:`DEFAULTS`: the tables are
measured with one thread per job, so they say nothing about how a job scales with more. Before a local run starts
any job, :func:`check_fits` holds each job's memory against this machine's (:func:`machine_memory_mb`).

Sources of the defaults (each value below names its own):

- ``benchmarks/results/cost-cpu-2026-11-24.csv``: the shapes preset's committed table, 87 jobs at paper sizes on a
  2-core CPU, one thread per job (docs/cost.md);
- the data-free jobs, which no cost table holds, measured for this module: the paper configuration with
  ``compute: data-free`` on the same kind of 2-core CPU (2026-11-25), peak resident memory (``ru_maxrss``) and
  wall time of each job's process, with other work loading the machine several times over (so the times are
  upper bounds);
- ``benchmarks/results/notebook-render-cpu-2026-11-24.json``: a paper notebook's render, the largest local job
  measured.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from .outputs import PAPER_PRESET, output_roots
from .runtime import machine_memory_mb
from .user_errors import UserError

# How much more than measured a job asks for, unless the config says otherwise (`resources: margin`). The same
# job's projection varies by about 10% from run to run (docs/cost.md: a median 10% between two tables of one
# machine), and a projection leaves out writing the results and lu2024's ResNet-18 train-accuracy pass (about a
# third of an epoch); 1.5 covers both with room.
DEFAULT_MARGIN = 1.5
# Floors for a job sized from a table row. Runtime: a SLURM job starts Snakemake twice before the job's own
# process (the plugin's job step, then the job), about 10 s each on the test cluster, and the shortest rows
# project seconds; 10 minutes is never reached by those fixed costs. Memory: the interpreter with torch, pandas and
# this package imported holds 581 MiB before a job does anything (measured on the 2-core CPU above).
MIN_RUNTIME = 10
MIN_MEM_MB = 1000


@dataclass(frozen=True)
class JobSize:
    """What one job asks for. ``resumable``: the job trains from a checkpoint (architecture §8), so a retry after
    its time limit goes on where it stopped and needs no more time; any other job starts over, and its retry asks
    for ``attempt`` times the runtime."""

    threads: int
    mem_mb: int
    runtime: int  # minutes
    resumable: bool = False

    def attempt(self, attempt: int) -> JobSize:
        """The size of the ``attempt``-th try (1 = the first): memory grows with each retry, since a job killed
        for its memory fails the same way again; runtime too, unless the job resumes."""
        return replace(self, mem_mb=self.mem_mb * attempt,
                       runtime=self.runtime if self.resumable else self.runtime * attempt)


def _mb(gib: float, margin: float = DEFAULT_MARGIN) -> int:
    """A measured peak (GiB, as the cost tables hold it) times the margin, in MB (SLURM's MB are MiB)."""
    return max(MIN_MEM_MB, math.ceil(gib * 1024 * margin))


def _minutes(minutes: float, margin: float = DEFAULT_MARGIN) -> int:
    return max(MIN_RUNTIME, math.ceil(minutes * margin))


# One default per kind of rule (rules/common.smk: LOCAL, SIMULATION, AT_INIT, TRAINING), for the jobs a cost table
# does not hold: all of them without a table, the data-free and local jobs always.
DEFAULTS: dict[str, JobSize] = {
    # Local rules (fetches, claims, notebooks, scoreboard, report) run on the submitting host; Snakemake bounds
    # them only under `--resources mem_mb=…`. Memory: a notebook render peaked at 994 MiB. Runtime is not
    # enforced for them; an hour covers a notebook render (22 s measured) many times over.
    "local": JobSize(threads=1, mem_mb=_mb(994 / 1024), runtime=60),
    # Data-free simulations (random chains, β, the mean-field simulator, networks at init without data), tens of
    # small jobs of one thread each, one SLURM job each (GROUPS, below). Measured over its 53 jobs:
    # the largest peak 1005 MiB (joudaki2023_simulation_reading, fig9, more_runs); the longest 8.2 min
    # (daneshmand2021_fig3, n = 74; the jobs' wall times add up to 65 min on the loaded machine, against the
    # 7 min for the whole data-free run (benchmarks/README.md) on a quiet one).
    "simulation": JobSize(threads=1, mem_mb=_mb(1005 / 1024), runtime=_minutes(8.2)),
    # Jobs that read a data set or a checkpoint and train nothing (networks at init on images, Table D1, GPT-2's
    # probe, checkpoint PII), on wide matrices (widths up to 8192, depth-1000 stacks, 7B checkpoints' SVDs) that
    # use several threads. Committed CPU table: the largest peak 4.05 GiB (joudaki2023_fig3, 4.042 rounded up),
    # the longest projection 5.4 min (joudaki2023_fig3, 0.0888 h).
    "at_init": JobSize(threads=4, mem_mb=_mb(4.05), runtime=_minutes(5.4)),
    # Trainings: one GPU (rules/common.smk training_gpus) and four threads, profiles/slurm's `cores: 4`. Memory:
    # the committed CPU table's largest training but LoRA, 5.60 GiB (daneshmand2021_appfig7, svd, 75 extra
    # layers, 5.596 rounded up); on a GPU the weights live on the card, so this bounds the host's share from
    # above. Runtime: no table measures the cluster's device, and on the 2-core CPU single trainings project up
    # to 286 h (meterez2024_training); a day, a common partition limit, is asked, and a longer training is cut
    # there and resumes from its checkpoint when Snakemake resubmits it (`retries` in profiles/slurm).
    "training": JobSize(threads=4, mem_mb=_mb(5.60), runtime=24 * 60, resumable=True),
}
# Rules whose measured needs exceed their kind's default.
RULE_DEFAULTS: dict[str, JobSize] = {
    # The LoRA fine-tuning of Qwen-7B builds the whole model in host memory before it moves to the GPU: 32.96 GiB in
    # float32 in the committed CPU table (32.955 rounded up; about half in the paper's bf16). It keeps no
    # resumable checkpoint (the rule passes none), so a retry starts over and asks for more time.
    "lu2024_table5_lora": replace(DEFAULTS["training"], mem_mb=_mb(32.96), resumable=False),
}
KINDS = tuple(DEFAULTS)
# The cluster group of each kind (rules/common.smk `group: <KIND>.group`): on SLURM the jobs of a group are bundled,
# up to profiles/slurm's `group-components` per SLURM job, instead of one SLURM job each; locally, groups change
# nothing. The SLURM plugin runs a group's jobs one after another (snakemake-executor-plugin-slurm 2.8.0 starts the
# group's Snakemake with `--jobs 1`; upstream issue #469), while Snakemake sizes the group for its jobs side by side
# up to profiles/slurm's `cores` threads. The two agree only for jobs that take all `cores` threads, one per layer:
# the group then asks for those CPUs and the sum of its jobs' times, what its serial run needs. So only the at-init
# jobs (4 threads, `cores: 4`) are grouped. One-thread simulations in a group of 16 would hold 4 CPUs and use one,
# and could outrun a time asked for 4 layers; they go one SLURM job each. Trainings and local rules stay alone.
GROUPS: dict[str, str] = {"at_init": "at_init"}
_ANNOUNCED: set[str] = set()  # lines JobSizes.announce printed in this process


def wildcard_key(wildcards: Mapping[str, Any] | str) -> frozenset[tuple[str, str]]:
    """A job's wildcards as a comparable key: from the job's own (a mapping) or from a cost table's ``wildcards``
    column (``init=svd,extra=15``, written by isonorm.workflow.costed_experiment; empty for none)."""
    if isinstance(wildcards, str):
        pairs = [item.split("=", 1) for item in wildcards.split(",") if item]
        return frozenset((key, value) for key, value in pairs)
    return frozenset((str(key), str(value)) for key, value in wildcards.items())  # Snakemake's Wildcards too


@dataclass(frozen=True)
class Measured:
    """One row of a cost table: the job's projected hours and peak resident memory on the measured device."""

    projected_hours: float
    peak_rss_gb: float


class JobSizes:
    """The size of every job: its cost-table row times ``margin`` where ``table`` has one, else the defaults.

    Memory comes from ``peak_rss_gb``, the host's resident memory (what SLURM's ``--mem`` bounds; on a GPU the
    card's own memory is a separate column), runtime from ``projected_hours`` (the whole job, uninterrupted, on
    the measured device). A value missing from a row (not a number) falls back to the default.
    """

    def __init__(self, table: pd.DataFrame | None = None, margin: float = DEFAULT_MARGIN, source: str | None = None):
        if margin < 1:
            raise ValueError(f"resources: margin must be at least 1 (a job asks for its measured need times it), "
                             f"got {margin}")
        self.margin = margin
        self.source = source
        self.rows: dict[tuple[str, frozenset], Measured] = {}
        for row in (table.itertuples() if table is not None else ()):
            self.rows[(row.rule, wildcard_key(row.wildcards or ""))] = Measured(
                float(row.projected_hours), float(row.peak_rss_gb))

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], preset: str) -> JobSizes:
        """From the config's ``resources`` section. ``cost_table``: a path, ``auto`` or null. ``auto`` reads the
        shapes run's table (results/shapes/cost.csv) when it exists and this run is the paper configuration,
        whose sizes that table measured (like the memory guard, rules/cost.smk); any other preset, with other
        sizes, gets the defaults. A path is read for any preset and must exist. Null: the defaults only."""
        path, margin = settings.get("cost_table"), settings.get("margin", DEFAULT_MARGIN)
        if path == "auto":
            shapes = Path(output_roots("shapes")["results"], "cost.csv")
            path = shapes if preset == PAPER_PRESET and shapes.is_file() else None
        if path is None:
            return cls(margin=margin)
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"resources: cost_table: {path} does not exist; give a cost table (the shapes preset writes "
                "results/shapes/cost.csv, docs/cost.md), `auto`, or null for the defaults")
        from .cost import read_cost_table

        return cls(read_cost_table(path), margin=margin, source=str(path))

    def measured(self, rule: str, wildcards: Mapping[str, Any]) -> Measured | None:
        """The cost-table row of the job (rule and wildcards), if the table has one."""
        return self.rows.get((rule, wildcard_key(wildcards)))

    def size(self, rule: str, kind: str, wildcards: Mapping[str, Any], attempt: int = 1) -> JobSize:
        """The job's size at its ``attempt``-th try: the table's row times the margin, else the defaults."""
        if kind not in DEFAULTS:
            raise ValueError(f"unknown kind of rule {kind!r} for {rule}; known: {', '.join(KINDS)}")
        default = RULE_DEFAULTS.get(rule, DEFAULTS[kind])
        row = self.measured(rule, wildcards)
        if row is None:
            return default.attempt(attempt)
        mem_mb = _mb(row.peak_rss_gb, self.margin) if math.isfinite(row.peak_rss_gb) else default.mem_mb
        runtime = (_minutes(row.projected_hours * 60, self.margin) if math.isfinite(row.projected_hours)
                   else default.runtime)
        return replace(default, mem_mb=mem_mb, runtime=runtime).attempt(attempt)

    def announce(self) -> None:
        """Print :meth:`describe` to stderr once per process when a cost table is read (the main Snakemake
        process may parse the workflow more than once)."""
        line = self.describe()
        if self.source is not None and line not in _ANNOUNCED:
            _ANNOUNCED.add(line)
            print(line, file=sys.stderr)

    def describe(self) -> str:
        """One line for the start of a run: where the job sizes come from."""
        if self.source is None:
            return "job sizes: defaults of isonorm.resources (no cost table)"
        return (f"job sizes: {len(self.rows)} jobs from {self.source} (memory and runtime x {self.margin:g}), "
                "the others from the defaults of isonorm.resources")


class OversizeError(UserError):
    """Jobs of a local run that ask for more memory than this machine has (docs/cluster.md, "Job sizes")."""


@dataclass(frozen=True)
class JobNeed:
    """What one job of a run asks for in memory: its ``mem_mb`` as Snakemake evaluated it (this module's size,
    or a `set-resources` override), named as the run's lines name it, with the paper whose results it writes
    (None: none, e.g. a fetch)."""

    label: str
    mem_mb: int
    paper: str | None


def check_fits(needs: Sequence[JobNeed], machine_mb: int, papers: Sequence[str]) -> None:
    """Stop a local run before any job starts when one of its jobs asks for more memory than this machine has:
    such a job swaps for hours or is killed, after the hours its inputs took (docs/cluster.md, "Job sizes").
    ``papers``: the run's, for the fix that runs the others."""
    over = sorted((need for need in needs if need.mem_mb > machine_mb), key=lambda need: -need.mem_mb)
    if not over:
        return
    largest, others = over[0], [paper for paper in papers if paper not in {need.paper for need in over}]
    many, them = (f"{len(over)} jobs of this run ask", "them") if len(over) > 1 else ("1 job of this run asks", "it")
    lines = [
        f"{many} for more memory (`mem_mb`) than this machine has, {machine_mb / 1024:.1f} GB"
        + ("; the largest:" if len(over) > 1 else ":"),
        f"{largest.label}: {largest.mem_mb / 1024:.1f} GB (its cost-table peak x `resources: margin`, or its default).",
        f"To start {them} anyway (swapping for hours, or killed): `--config 'resources={{oversize: run}}'`.",
        "To run the others: name their results as targets" + (", or leave the paper out" if others else "")
        + " (docs/cluster.md, \"Job sizes\")" + (":" if others else "."),
    ]
    if others:
        lines.append(f"`--config 'papers=[{', '.join(others)}]'`")
    raise OversizeError("\n".join(lines))


__all__ = ["DEFAULT_MARGIN", "MIN_RUNTIME", "MIN_MEM_MB", "JobSize", "DEFAULTS", "RULE_DEFAULTS", "KINDS", "GROUPS",
           "wildcard_key", "Measured", "JobSizes", "OversizeError", "JobNeed", "machine_memory_mb", "check_fits"]
