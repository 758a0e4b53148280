"""What a run computes on the machine it is on, decided when Snakemake builds the jobs (docs/configuration.md,
"What a run computes").

Every results file of a paper is registered under one of three needs (rules/common.smk ``register_results``):
``data_free`` (random networks, no data set), ``needs_data`` (a data set, a corpus or a checkpoint; no training)
and ``trains`` (a network is trained). A run plans all three unless

- ``compute: data-free``: only the data-free files;
- a local run with ``device: auto`` on a machine without a GPU (and not the shapes preset, which measures what
  each job costs on this machine): no training. The paper's trainings would take about 1,700 hours on one CPU
  core (1,676 h for 87 of its 97 data and GPU jobs, benchmarks/results/cost-cpu-2026-11-24.csv); ``device: cpu``
  trains here anyway, on purpose.

Each file left out has a cause, shown on its items in the report with the setting that computes it. ``device:
cuda`` on a machine without a GPU stops before any job. A cluster run plans every training (the submitting
host says nothing about the GPU nodes), and so does a machine whose GPU torch cannot use: its jobs stop loudly
(isonorm.runtime.unusable_gpu), never train on the CPU unnoticed.

Only the executor tells a local run from a cluster run, and Snakemake knows it only after parsing the rules:
the plan is made on first use, from the input functions, when the jobs are built (a dry run included).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from . import gpus
from .user_errors import UserError

DATA_FREE, NEEDS_DATA, TRAINS = "data_free", "needs_data", "trains"
NEEDS = (DATA_FREE, NEEDS_DATA, TRAINS)


class DeviceUnavailableError(UserError, RuntimeError):
    """The config names a CUDA device that this machine does not have."""


@dataclass(frozen=True)
class LeftOut:
    """Why a results file is not computed by this run, and the setting that computes it."""

    cause: str
    fix: str

    def as_dict(self) -> dict[str, str]:
        return {"cause": self.cause, "fix": self.fix}


@dataclass(frozen=True)
class RunPlan:
    """The run's device settings and what they leave out (module docstring)."""

    device: str  # the config's device: auto | cpu | cuda | cuda:N
    compute: str  # all | data-free
    local: bool  # the jobs run on this machine (not a cluster executor)
    gpu_here: bool  # isonorm.gpus.gpu_visible(): a GPU that `device: auto` would pick
    measures_cost: bool  # the shapes preset: every job runs a few steps at paper sizes to project its cost

    @classmethod
    def of(cls, config: Mapping[str, Any], *, local: bool, measures_cost: bool = False) -> RunPlan:
        """The plan of a run of ``config`` here; ``measures_cost``: the shapes preset's step cap is set."""
        return cls(device=str(config["device"]), compute=str(config["compute"]), local=local,
                   gpu_here=gpus.gpu_visible(), measures_cost=measures_cost)

    def check(self) -> None:
        """``device: cuda`` (or ``cuda:N``) in a local run on a machine without a GPU: stop before any job."""
        if self.local and self.device.startswith("cuda") and not self.gpu_here:
            raise DeviceUnavailableError("\n".join([
                f"config `device: {self.device}`, but this machine has no GPU, so every training would fail as it "
                "starts",
                "(no NVIDIA driver lists one, or CUDA_VISIBLE_DEVICES hides them all). Instead:",
                "  `--config device=auto` runs here what needs no GPU (the trainings are then reported as not run);",
                "  `--config device=cpu` trains on the CPU on purpose;",
                "  a cluster profile sends the trainings to GPU nodes (docs/cluster.md).",
            ]))

    @property
    def trains_here(self) -> bool:
        """Whether this run trains networks (``compute: all``, and a GPU, or ``device: cpu``, or a cluster)."""
        return self.left_out(TRAINS) is None

    @property
    def gpus_per_training(self) -> int:
        """`resources: gpu` of one training job: 1 (profiles/default pools one, so two trainings never share a
        card), except in a local run whose jobs run on the CPU (``device: cpu``, or ``auto`` without a GPU), where
        that pool would only make them wait for each other. A cluster job always asks for one: the submitting
        host is not where it runs."""
        if not self.local:
            return 1
        return int(self.device != "cpu" and (self.device != "auto" or self.gpu_here))

    def left_out(self, need: str) -> LeftOut | None:
        """Why files of ``need`` are not computed by this run, or None when they are."""
        if need not in NEEDS:
            raise ValueError(f"unknown need {need!r}; known: {NEEDS}")
        if need == DATA_FREE:
            return None
        if self.compute == "data-free":
            return LeftOut("needs a data set, a checkpoint or a GPU, and this run is `compute: data-free`",
                           "--config compute=all")
        if (need == TRAINS and self.local and self.device == "auto" and not self.gpu_here
                and not self.measures_cost):
            return LeftOut("trains a network, and this machine has no GPU (`device: auto`)", "--config device=cpu")
        return None

    def device_line(self) -> str:
        """One line for the start of a run: the device its jobs will use, and what that leaves out."""
        where = "this machine" if self.local else "the cluster's nodes"
        if self.device == "auto":
            device = ("its GPU" if self.gpu_here else "its CPU (no GPU found)") if self.local else (
                "their GPU where they have one (`device: auto`)")
        else:
            device = f"`{self.device}`"
        line = f"device: the jobs run on {where}, on {device}"
        if self.compute == "data-free":
            return line + "; `compute: data-free`: only the items that need no data set or GPU are computed"
        if not self.trains_here:
            return (line + "; no training is planned: each training item is reported as not run (with its projected "
                    "cost where the shapes preset measured it); `--config device=cpu` trains on the CPU anyway")
        return line


def projected_costs(cost_csv: str | Path) -> dict[str, tuple[float, str]]:
    """{results file relative to its preset's root: (projected hours, the device measured)} from the shapes
    preset's cost table (docs/cost.md); empty without one."""
    path = Path(cost_csv)
    if not path.is_file():
        return {}
    from .cost import read_cost_table  # pandas and torch: only when a table exists

    table = read_cost_table(path)
    return {str(row.result): (float(row.projected_hours), str(row.device)) for row in table.itertuples()}


def shapes_command(device: str) -> str:
    """The command that measures the cost table for a run on ``device`` (the config's): the shapes preset, with
    the same device unless ``auto``, so that a run on the CPU of a machine with a GPU gets CPU hours."""
    command = "snakemake --cores all --configfile presets/shapes.yaml"
    return command if device == "auto" else f"{command} --config device={device}"


def cost_lines(costs: Mapping[str, tuple[float, str]], jobs: Sequence[Sequence[str]], trainings: Collection[str],
               table: str, device: str) -> list[str]:
    """Two lines for the start of a paper run: the hours the shapes preset's cost table (``costs``, from
    :func:`projected_costs`; ``table`` its path) projects for the data and GPU ``jobs`` this run will run (each
    named by its results files, relative to the results root: a table's row names a job's first one), the
    ``trainings`` among them apart, the device it measured them on and how many jobs it covers; or, without a
    table, how to measure one (``device``: the config's). Empty when no such job is planned."""
    if not jobs:
        return []
    trained = [job for job in jobs if any(f in trainings for f in job)]
    if not costs:
        return [f"cost: no cost table ({table}) projects the {len(jobs)} data and GPU jobs this run will run"
                + (f", {len(trained)} of them trainings;" if trained else ";"),
                f"  `{shapes_command(device)}` measures one on this machine (docs/cost.md)"]

    def measured(of: Sequence[Sequence[str]]) -> list[tuple[float, str]]:
        return [next(costs[f] for f in job if f in costs) for job in of if any(f in costs for f in job)]

    found, in_trainings = measured(jobs), measured(trained)
    hours, trained_hours = sum(h for h, _ in found), sum(h for h, _ in in_trainings)
    devices = ", ".join(sorted({device for _, device in found})) or "no device"
    split = (f"trainings {trained_hours:.1f} h ({len(in_trainings)} of {len(trained)}), the others "
             f"{hours - trained_hours:.1f} h ({len(found) - len(in_trainings)} of {len(jobs) - len(trained)})"
             if trained else "no training planned")
    return [f"cost: {hours:.1f} h projected for {len(found)} of the {len(jobs)} data and GPU jobs this run will run, "
            f"one at a time on {devices}",
            f"  as {table} measured them (docs/cost.md): {split}"
            + (f"; {len(jobs) - len(found)} without a row, unprojected" if len(found) < len(jobs) else "")]
