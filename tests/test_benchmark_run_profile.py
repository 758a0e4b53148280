"""benchmarks/run_profile.py reads Snakemake's log of a run into where its minutes go (no timing asserted)."""

from __future__ import annotations

import datetime as dt

import pytest

from conftest import REPO, script_module

SCRIPT = REPO / "benchmarks" / "run_profile.py"

# Two jobs started together, then a third after the first finished; the format of Snakemake 9's run log.
LOG = """Building DAG of jobs...
Execute 2 jobs...
[Fri Nov 27 09:25:02 2026]
localrule daneshmand2021_fig3:
    output: results/quick/daneshmand2021/fig3/batch8.parquet
    jobid: 46
    wildcards: n=8
Shell command: None
[Fri Nov 27 09:25:02 2026]
rule joudaki2023_simulation:
    output: results/quick/joudaki2023/fig4.parquet
    jobid: 7
Shell command: None
[Fri Nov 27 09:25:05 2026]
Finished jobid: 46 (Rule: daneshmand2021_fig3)
1 of 3 steps (33%) done
[Fri Nov 27 09:25:05 2026]
localrule daneshmand2021_fig3:
    output: results/quick/daneshmand2021/fig3/batch4.parquet
    jobid: 45
Shell command: None
[Fri Nov 27 09:25:12 2026]
Finished jobid: 7 (Rule: joudaki2023_simulation)
[Fri Nov 27 09:25:12 2026]
Finished jobid: 45 (Rule: daneshmand2021_fig3)
3 of 3 steps (100%) done
"""


@pytest.fixture(scope="module")
def run_profile():
    return script_module(SCRIPT)


def test_the_profile_sums_each_rules_jobs_and_the_cores_busy_share(run_profile, tmp_path):
    log = tmp_path / "run.snakemake.log"
    log.write_text(LOG)
    result = run_profile.profile(*run_profile.parse(log), cores=2, startup=1.0)
    assert result["wall_s"] == 10 and result["jobs"] == 3
    rules = {row["rule"]: row for row in result["rules"]}
    assert rules["daneshmand2021_fig3"] == {"rule": "daneshmand2021_fig3", "jobs": 2, "sum_s": 10.0, "max_s": 7.0}
    assert rules["joudaki2023_simulation"]["sum_s"] == 10.0
    assert result["job_s"] == 20 and result["busy_share"] == pytest.approx(1.0)
    assert result["startup_share_of_job_s"] == pytest.approx(3 / 20)


def test_a_job_that_never_finished_is_left_out(run_profile, tmp_path):
    log = tmp_path / "cut.snakemake.log"
    log.write_text(LOG.split("[Fri Nov 27 09:25:12 2026]\nFinished jobid: 45")[0])
    jobs, _ = run_profile.parse(log)
    assert sorted(jobs) == [7, 46]


def test_the_log_gives_each_job_its_inputs_and_outputs(run_profile, tmp_path):
    log = tmp_path / "run.snakemake.log"
    log.write_text(LOG.replace("    output: results/quick/daneshmand2021/fig3/batch4.parquet",
                               "    input: results/quick/daneshmand2021/fig3/batch8.parquet, a.yaml\n"
                               "    output: results/quick/daneshmand2021/fig3/batch4.parquet"))
    jobs, _ = run_profile.parse(log)
    assert jobs[45]["input"] == ["results/quick/daneshmand2021/fig3/batch8.parquet", "a.yaml"]
    assert jobs[46]["output"] == ["results/quick/daneshmand2021/fig3/batch8.parquet"] and jobs[46]["input"] == []
    assert run_profile.waits_for(jobs) == {46: set(), 7: set(), 45: {46}}


def _jobs(durations: dict[int, int], inputs: dict[int, list[int]]) -> dict[int, dict]:
    """Jobs of the given seconds; job k writes f"out{k}" and reads the outputs of ``inputs[k]``."""
    zero = dt.datetime(2026, 11, 27)
    return {k: {"rule": "r", "start": zero, "end": zero + dt.timedelta(seconds=s), "output": [f"out{k}"],
                "input": [f"out{j}" for j in inputs.get(k, [])]} for k, s in durations.items()}


def test_the_replay_starts_the_longest_job_first_and_waits_for_inputs(run_profile):
    # one 10 s job and four of 2 s on 2 cores: longest first ends at 10 s; the 10 s job started last ends at 14
    jobs = _jobs({1: 10, 2: 2, 3: 2, 4: 2, 5: 2}, {})
    assert run_profile.replay(jobs, 2, lambda k: -run_profile.seconds(jobs[k])) == 10
    assert run_profile.replay(jobs, 2, lambda k: -k) == 14
    # a job that reads the long job's output starts after it, however many cores there are
    jobs = _jobs({1: 10, 2: 2, 3: 3}, {3: [1]})
    assert run_profile.replay(jobs, 16, lambda k: k) == 13
    assert run_profile.critical_path(jobs) == 13
    (row,) = run_profile.schedule(jobs, [2], shuffles=5)
    assert row["longest_first_s"] == 13 and row["job_s_per_core"] == 7.5 and row["random_range_s"] == [13, 13]
