"""Job sizes (isonorm.resources, rules/common.smk): every rule declares threads, mem_mb, runtime and cpus_per_task;
a cost table's row sizes its job (times the margin), the defaults the others; a dry run with the SLURM profile
shows what each job will ask sbatch for."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO, snakemake
from isonorm.cost import COLUMNS, read_cost_table
from isonorm.resources import (DEFAULT_MARGIN, DEFAULTS, GROUPS, MIN_MEM_MB, MIN_RUNTIME, RULE_DEFAULTS, JobNeed,
                               JobSize, JobSizes, OversizeError, check_fits, machine_memory_mb, wildcard_key)
from isonorm.user_errors import MAX_LINES, brief

COMMITTED_TABLE = "benchmarks/results/cost-cpu-2026-11-24.csv"
KIND_NAMES = {"LOCAL": "local", "SIMULATION": "simulation", "AT_INIT": "at_init", "TRAINING": "training"}


def rule_kinds(workdir: Path = REPO) -> dict[str, str]:
    """Rule name -> the kind of job it declares (`threads: TRAINING.threads`, `resources: **TRAINING.resources`
    and, but for local rules, `group: TRAINING.group` -> training), from rules/*.smk; a rule made with `use rule
    <template> as <name> with:` and no such lines of its own has its template's kind. A rule that declares none, or
    lines of different kinds, maps to ''. The templates of rules/experiment_jobs.smk (`<kind>_job`) are no jobs and
    not listed."""
    declared, templates, bases = {}, set(), {}
    for smk in sorted((workdir / "rules").glob("*.smk")):
        block = r"\n((?:[ \t]+.*\n|\n)*)"
        for match in re.finditer(rf"^(?:rule (\w+):|use rule (\w+) as (\w+) with:){block}", smk.read_text(),
                                 re.MULTILINE):
            plain, base, derived, body = match.groups()
            name = plain or derived
            if base:
                bases[name] = base
            if smk.name == "experiment_jobs.smk" and name.endswith("_job"):  # not plain_simulation, a real rule
                templates.add(name)
            lines = [re.search(pattern, body, re.MULTILINE) for pattern in (
                r"^\s+threads: (\w+)\.threads$", r"^\s+resources: \*\*(\w+)\.resources$", r"^\s+group: (\w+)\.group$")]
            if not any(lines):
                continue
            names = {m and m.group(1) for m in lines[:2]} | ({lines[2] and lines[2].group(1)} if "LOCAL" not in
                                                            {m and m.group(1) for m in lines[:2]} else set())
            declared[name] = KIND_NAMES.get(names.pop(), "") if len(names) == 1 else ""

    def kind(name: str) -> str:
        return declared[name] if name in declared else kind(bases[name]) if name in bases else ""

    return {name: kind(name) for name in {*declared, *bases} - templates}


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{column: row.get(column, float("nan")) for column in COLUMNS} for row in rows])


# --- the rules ---------------------------------------------------------------------------------------

def test_every_rule_declares_threads_memory_runtime_and_cpus_of_one_kind():
    kinds = rule_kinds()  # rules/*.smk: every rule but the Snakefile's target rule `all`, which runs nothing
    assert len(kinds) >= 35, sorted(kinds)
    assert {rule for rule, kind in kinds.items() if not kind} == set()
    assert kinds["daneshmand2021_fig4b"] == kinds["lu2024_table5_lora"] == "training"
    assert kinds["plain_simulation"] == "simulation"
    assert kinds["fetch_data"] == kinds["report_index"] == "local"


def test_the_defaults_cover_the_committed_cost_table():
    """Each default names its source; for the jobs of the committed table that source is the table itself, so
    every row's memory (and, for the jobs that train nothing, runtime) times the margin fits its rule's default."""
    kinds, frame = rule_kinds(), read_cost_table(REPO / COMMITTED_TABLE)
    assert len(frame) == 87
    for row in frame.itertuples():
        default = RULE_DEFAULTS.get(row.rule, DEFAULTS[kinds[row.rule]])
        assert default.mem_mb >= math.ceil(row.peak_rss_gb * 1024 * DEFAULT_MARGIN), row
        if kinds[row.rule] != "training":
            assert default.runtime >= math.ceil(row.projected_hours * 60 * DEFAULT_MARGIN), row


# --- JobSizes -------------------------------------------------------------------------------------------

def test_a_row_sizes_its_job_by_rule_and_wildcards_times_the_margin():
    sizes = JobSizes(table([
        {"rule": "r_train", "wildcards": "init=svd,extra=15", "projected_hours": 2.0, "peak_rss_gb": 4.0},
        {"rule": "r_train", "wildcards": "init=svd,extra=75", "projected_hours": 10.0, "peak_rss_gb": 8.0},
        {"rule": "r_once", "wildcards": "", "projected_hours": 0.001, "peak_rss_gb": 0.1},
    ]), margin=2.0)
    # wildcards match whatever their order; memory and runtime are the row's times the margin, threads the kind's
    size = sizes.size("r_train", "training", {"extra": "15", "init": "svd"})
    assert size == JobSize(threads=DEFAULTS["training"].threads, mem_mb=8192, runtime=240, resumable=True)
    assert sizes.size("r_train", "training", {"init": "svd", "extra": "75"}).mem_mb == 16384
    # a tiny row gets the floors, a job without a row the defaults
    assert (sizes.size("r_once", "simulation", {}).mem_mb, sizes.size("r_once", "simulation", {}).runtime) == (
        MIN_MEM_MB, MIN_RUNTIME)
    assert sizes.size("r_train", "training", {"init": "xavier", "extra": "15"}) == DEFAULTS["training"]
    assert sizes.size("lu2024_table5_lora", "training", {}) == RULE_DEFAULTS["lu2024_table5_lora"]
    with pytest.raises(ValueError, match="unknown kind"):
        sizes.size("r_train", "gpu", {})


def test_a_missing_value_of_a_row_falls_back_to_the_default():
    sizes = JobSizes(table([{"rule": "r", "wildcards": "", "projected_hours": float("nan"), "peak_rss_gb": 2.0}]))
    size = sizes.size("r", "at_init", {})
    assert (size.runtime, size.mem_mb) == (DEFAULTS["at_init"].runtime, math.ceil(2.0 * 1024 * DEFAULT_MARGIN))


def test_a_retry_asks_for_more_memory_and_more_time_unless_it_resumes():
    training, simulation = DEFAULTS["training"], DEFAULTS["simulation"]
    assert training.attempt(3) == JobSize(training.threads, 3 * training.mem_mb, training.runtime, True)
    assert simulation.attempt(2) == JobSize(simulation.threads, 2 * simulation.mem_mb, 2 * simulation.runtime)
    sizes = JobSizes()
    assert sizes.size("x", "training", {}, attempt=2).runtime == training.runtime


def test_wildcards_of_the_table_and_of_a_job_compare_equal():
    assert wildcard_key("stack=cifar10+cifar100,depth=100") == wildcard_key({"depth": 100, "stack": "cifar10+cifar100"})
    assert wildcard_key("") == wildcard_key({}) == frozenset()


def test_the_config_picks_the_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    auto = {"cost_table": "auto", "margin": 1.5}
    assert JobSizes.from_settings(auto, "paper").source is None  # no shapes run yet: defaults
    shapes = tmp_path / "results" / "shapes" / "cost.csv"
    shapes.parent.mkdir(parents=True)
    table([{"rule": "r", "wildcards": "", "projected_hours": 1.0, "peak_rss_gb": 1.0}]).to_csv(shapes, index=False)
    assert JobSizes.from_settings(auto, "paper").source == "results/shapes/cost.csv"
    assert JobSizes.from_settings(auto, "paper").size("r", "simulation", {}).runtime == 90
    # another preset runs other sizes than the table measured: defaults, unless it names a table itself
    assert JobSizes.from_settings(auto, "quick").source is None
    assert JobSizes.from_settings({"cost_table": str(shapes), "margin": 1.0}, "quick").size("r", "simulation",
                                                                                            {}).runtime == 60
    assert JobSizes.from_settings({"cost_table": None, "margin": 1.5}, "paper").source is None
    with pytest.raises(FileNotFoundError, match="cost_table: nowhere.csv does not exist"):
        JobSizes.from_settings({"cost_table": "nowhere.csv", "margin": 1.5}, "paper")
    with pytest.raises(ValueError, match="margin must be at least 1"):
        JobSizes(margin=0.5)


# --- the memory stop of a local run (docs/cluster.md, "Job sizes") ------------------------------------------------

PAPERS = ["daneshmand2021", "joudaki2023", "lu2024", "meterez2024"]


def test_jobs_that_fit_this_machine_go_on():
    check_fits([JobNeed("lu2024_table1[optimizer=sgd]", 4096, "lu2024"), JobNeed("fetch_data[name=mnist]", 1491, None)],
               machine_mb=4096, papers=PAPERS)  # equal is enough
    assert 1024 < machine_memory_mb() < 2**40  # this machine's physical memory, in MiB


def test_a_job_too_large_stops_the_run_with_the_largest_and_the_fixes():
    needs = [JobNeed("lu2024_table5_lora", 50619, "lu2024"), JobNeed("lu2024_table1[optimizer=sgd]", 1000, "lu2024"),
             JobNeed("daneshmand2021_appfig7[init=svd, extra=75]", 30000, "daneshmand2021")]
    with pytest.raises(OversizeError) as stop:
        check_fits(needs, machine_mb=24064, papers=PAPERS)
    lines = brief(stop.value).splitlines()
    assert len(lines) <= MAX_LINES and max(map(len, lines)) <= 110, lines
    assert lines[0] == ("error: 2 jobs of this run ask for more memory (`mem_mb`) than this machine has, 23.5 GB; "
                        "the largest:")
    assert lines[1].startswith("lu2024_table5_lora: 49.4 GB (")
    assert "`--config 'resources={oversize: run}'`" in lines[2]
    assert lines[4] == "`--config 'papers=[joudaki2023, meterez2024]'`"  # the papers without an oversized job


def test_when_every_paper_has_a_job_too_large_only_targets_run_the_others():
    with pytest.raises(OversizeError) as stop:
        check_fits([JobNeed("lu2024_table5_lora", 50619, "lu2024")], machine_mb=24064, papers=["lu2024"])
    lines = str(stop.value).splitlines()
    assert lines[0].startswith("1 job of this run asks for more memory") and lines[0].endswith("23.5 GB:")
    assert lines[-1] == 'To run the others: name their results as targets (docs/cluster.md, "Job sizes").'


def test_the_presets_whose_jobs_are_not_the_paper_sizes_go_on():
    """The job sizes are the paper run's: the quick preset's tiny jobs and the shapes preset's capped ones (whose
    purpose is to find the job that does not fit) set `resources: oversize: run`; the paper run and the budget
    preset (the paper's models, fewer epochs) keep config.yaml's `stop`."""
    oversize = {name: (yaml.safe_load((REPO / "presets" / f"{name}.yaml").read_text()).get("resources") or {}).get(
        "oversize") for name in ("quick", "shapes", "budget")}
    assert yaml.safe_load((REPO / "config.yaml").read_text())["resources"]["oversize"] == "stop"
    assert oversize == {"quick": "run", "shapes": "run", "budget": None}


# --- what a dry run shows ---------------------------------------------------------------------------------

def dry_run_jobs(text: str) -> list[dict]:
    """Every job of ``snakemake -n`` output (a group's members included): rule, wildcards, threads, resources and
    the cluster group it is bundled in (None: none)."""
    jobs, current, group = [], None, None
    for line in text.splitlines():
        if m := re.search(r"Group job (\w+) ", line):
            group = m.group(1)
        elif m := re.match(r"(\s*)(?:local)?rule (\w+):$", line):
            # a group's members are listed indented under its "Group job" line
            current = {"rule": m.group(2), "wildcards": {}, "threads": 1, "resources": {},
                       "group": group if m.group(1) else None}
            jobs.append(current)
        elif current is not None and (m := re.match(r"\s+(wildcards|threads|resources): (.*)$", line)):
            key, value = m.groups()
            if key == "threads":
                current["threads"] = int(value)
            else:
                current[key] = dict(re.findall(r"(\w+)=([^,]+)", value))
        elif not line.strip():
            current = None
    return jobs


def test_a_group_is_sized_for_its_jobs_one_after_another():
    """The SLURM plugin runs a group's jobs one at a time (isonorm.resources.GROUPS); Snakemake sizes a group for
    its jobs side by side up to profiles/slurm's `cores` threads. Only a kind whose jobs take all `cores` threads,
    one job per layer, gets a size that fits its serial run (its jobs' CPUs, the sum of their times): only such a
    kind may be grouped, and every grouped kind has `group-components` in the profile."""
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert GROUPS, "no kind is grouped"
    for kind, group in GROUPS.items():
        assert DEFAULTS[kind].threads == profile["cores"], (kind, DEFAULTS[kind].threads, profile["cores"])
        assert profile["group-components"][group] > 1, group
    assert set(profile["group-components"]) == set(GROUPS.values())


@pytest.mark.integration
def test_a_dry_run_with_the_slurm_profile_shows_each_jobs_size_from_the_table(workflow_dir):
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        pytest.skip("snakemake-executor-plugin-slurm is not installed: pip install -r envs/cluster.txt")
    done = snakemake(workflow_dir, "-n", "--workflow-profile", "profiles/slurm", "--config",
                     f"resources={{cost_table: {COMMITTED_TABLE}}}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"job sizes: 87 jobs from {COMMITTED_TABLE} (memory and runtime x 1.5)" in done.stderr
    jobs = [job for job in dry_run_jobs(done.stdout) if job["rule"] != "all"]
    kinds = rule_kinds(workflow_dir)
    assert {job["rule"] for job in jobs} == set(kinds) - {"cost_table"}  # the paper DAG: every other rule
    sizes = JobSizes(read_cost_table(workflow_dir / COMMITTED_TABLE), margin=1.5)
    from_table = 0
    for job in jobs:
        resources = job["resources"]
        assert {"mem_mb", "runtime", "cpus_per_task"} <= set(resources), job
        assert job["group"] == GROUPS.get(kinds[job["rule"]]), job  # its kind's group; a training never one
        expected = sizes.size(job["rule"], kinds[job["rule"]], job["wildcards"])
        shown = (job["threads"], int(resources["mem_mb"]), int(resources["runtime"]), int(resources["cpus_per_task"]))
        assert shown == (expected.threads, expected.mem_mb, expected.runtime, expected.threads), job
        from_table += sizes.measured(job["rule"], job["wildcards"]) is not None
    assert from_table == 87  # every row of the table sized its job
    lora = next(job for job in jobs if job["rule"] == "lu2024_table5_lora")
    assert (lora["threads"], lora["resources"]["mem_mb"], lora["resources"]["runtime"]) == (4, "50619", "26733")


@pytest.mark.integration
def test_a_local_run_gives_each_job_one_thread(workflow_dir):
    """profiles/default's max-threads: 1, so that --cores N runs N jobs side by side as the shapes preset measured."""
    done = snakemake(workflow_dir, "-n", "--forceall", "--configfile", "presets/quick.yaml", "--",
                     "results/quick/lu2024/table1/sgd.parquet")
    assert done.returncode == 0, done.stderr
    (training,) = [job for job in dry_run_jobs(done.stdout) if job["rule"] == "lu2024_table1"]
    assert (training["threads"], training["resources"]["cpus_per_task"]) == (1, "1"), training
    assert training["resources"]["mem_mb"] == str(DEFAULTS["training"].mem_mb)
