"""The shapes preset (docs/cost.md): it runs exactly the paper run's jobs that need a data set, a checkpoint or a
GPU; a few of them, at paper sizes, write cost records that the cost table turns into one row per job; and the
measured cost tables in benchmarks/results/ name no job that today's paper configuration lacks. A job added since a
table was measured is reported as unmeasured (a warning), not a failure: it needs nothing to be measured by the
next shapes run."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, copy_workflow, snakemake
from isonorm.outputs import output_roots
from isonorm.cost import cost_table, coverage, read_cost_table, write_cost_table

pytestmark = pytest.mark.integration
SHAPES = output_roots("shapes")
NOT_JOBS_OF_A_PAPER = {"fetch_data", "fetch_checkpoint", "paper_claims", "paper_notebook", "scoreboard",
                       "report_index", "cost_table", "all"}
MEASURED_COST_TABLES = sorted((REPO / "benchmarks" / "results").glob("cost-*.csv"))


def planned_results(workdir: Path, *config: str) -> set[str]:
    """The results files of the jobs of papers a dry run plans (``snakemake --summary``), relative to the
    run's results root."""
    done = snakemake(workdir, "--summary", *config)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:] if "\t" in line]
    root = Path(output_roots("shapes" if "presets/shapes.yaml" in config else "paper")["results"])
    return {str(Path(file).relative_to(root)) for file, _, rule, *_ in rows if rule not in NOT_JOBS_OF_A_PAPER}


@pytest.fixture(scope="module")
def paper_data_jobs(workflow_dir) -> set[str]:
    """The results files of the paper run's jobs that a data-free run leaves out. With `device=cpu`: a paper run on a
    machine without a GPU plans no training under `device: auto` (isonorm.plan), and this machine may have none."""
    every = planned_results(workflow_dir, "--config", "device=cpu")
    data_free = planned_results(workflow_dir, "--config", "compute=data-free", "device=cpu")
    assert data_free < every
    return every - data_free


def test_the_shapes_preset_runs_exactly_the_paper_jobs_that_need_data(workflow_dir, paper_data_jobs):
    assert planned_results(workflow_dir, "--configfile", "presets/shapes.yaml") == paper_data_jobs


@pytest.mark.parametrize("table", MEASURED_COST_TABLES, ids=lambda path: path.name)
def test_a_measured_cost_table_names_only_paper_jobs_and_reports_the_unmeasured_ones(table, paper_data_jobs):
    rows = read_cost_table(table)
    # a job's second output (Table 3's weights) is in no row: its job's row covers it
    found = coverage(rows, {job for job in paper_data_jobs if "/table3_weights/" not in job})
    # a row of a job removed or renamed since would count its hours in the totals (benchmarks/README.md): delete it
    assert not found.unknown, f"{table.name} has rows of jobs the paper run no longer has: {found.unknown}"
    if found.unmeasured:  # added since the table was measured: the next shapes run measures them
        warnings.warn(f"{table.name}: {len(found.unmeasured)} paper job(s) unmeasured (no row; sized from the "
                      f"defaults, not in the totals): {', '.join(found.unmeasured)}", stacklevel=1)
    assert rows.projected_hours.gt(0).all() and rows.peak_memory_gb.gt(0).all()


def test_there_is_a_measured_cost_table():
    assert MEASURED_COST_TABLES, "benchmarks/results/cost-*.csv: benchmarks/README.md's paper-settings cost is one"


# A few jobs per paper, each among the cheapest at paper sizes (seconds to a minute on a 2-core CPU).
REDUCED = [
    "lu2024/table1/sgd.parquet",  # the MNIST FNN: 3 timed steps of 118 per epoch, 20 epochs
    "joudaki2023/figb4/mnist.parquet",  # networks at init, widths up to 8192
    "meterez2024/tabled1/mnist.parquet",  # batches sampled: 2 of 100 per batch size
    "daneshmand2021/appfig6/mlp.parquet",  # 2 of 50 batches
]


def test_a_few_jobs_at_paper_sizes_write_one_cost_row_each(tmp_path, monkeypatch):
    workdir = copy_workflow(tmp_path)
    targets = [str(SHAPES["results"] / job) for job in REDUCED]
    done = snakemake(workdir, "--cores", "2", "--configfile", "presets/shapes.yaml", "--", *targets)
    assert done.returncode == 0, done.stderr[-5000:]
    monkeypatch.chdir(workdir)  # paths as the cost_table rule sees them
    table = cost_table(targets, SHAPES["results"])
    assert sorted(table.result) == sorted(REDUCED)
    assert set(table.paper) == {"lu2024", "joudaki2023", "meterez2024", "daneshmand2021"}
    fnn = table.set_index("rule").loc["lu2024_table1"]
    assert (fnn.steps_measured, fnn.paper_steps, fnn.paper_passes) == (3, 118 * 20, 21)  # MNIST: 60,000 / 512
    # projected: the full training from the timed steps, far more than the cost run's own wall time
    assert fnn.projected_hours * 3600 > 10 * fnn.wall_seconds
    assert table.fits.all() and table.projected_hours.gt(0).all()
    assert not (workdir / SHAPES["report"] / "lu2024.html").exists()  # capped results make no report

    # the memory guard: a paper run in the same checkout names the jobs a shapes run found too large
    write_cost_table(table.assign(fits=[False] + [True] * (len(table) - 1)), SHAPES["results"] / "cost.csv")
    guarded = snakemake(workdir, "-n", "--quiet")
    assert guarded.returncode == 0, guarded.stderr[-3000:]
    first = table.iloc[0]
    assert f"memory guard ({SHAPES['results']}/cost.csv): {first.rule} ({first.wildcards}): peak memory" in guarded.stderr
    # ... once: a job that a cluster executor starts parses the workflow again (mode remote) and stays silent
    in_job = snakemake(workdir, "-n", "--quiet", "--mode", "remote")
    assert "memory guard" not in in_job.stderr, in_job.stderr[-3000:]
