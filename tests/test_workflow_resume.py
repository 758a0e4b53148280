"""Integration: a run that lost jobs resumes by the same command, and ends equal to a clean run.

lu2024 under the quick preset, in a copy of the workflow whose own src/ is imported (PYTHONPATH). Faults are planted
that strike once, as a node failure or an out-of-memory kill does: a marker file, written as the fault strikes,
keeps it from striking again, so the same command, given again unchanged, meets no fault. Two runs:

- App. Table 4's jobs: one is killed (SIGKILL: no record, no traceback, as the kernel's OOM killer or a lost node
  leaves it), the other raises. The run ends with the report from what exists; the same command then runs exactly
  the two lost jobs and the report again.
- Ctrl-C of the whole run while a training job runs (two results and the claims removed, so that it has work): the
  terminal's SIGINT to the run's process group. The run says "stopped" once, with the command that resumes it;
  that command then finishes it.

Each resumed run ends with rc 0, and its results files and scored rows equal those of the session's clean quick
run (tests/conftest.py ``quick_run``), byte for byte.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import QUICK, copy_workflow, snakemake

pytestmark = pytest.mark.integration

RUN = ("--cores", "2", "--configfile", "presets/quick.yaml", "--config", "papers=[lu2024]")
PAPER = Path(QUICK["results"]) / "lu2024"


def plant_once(workdir: Path, faults: dict[str, str]) -> None:
    """In trained_nets.fnn, for App. Table 4's job of each variant in ``faults``: the statement given, run once (a
    marker beside the workflow copy records that it struck)."""
    module = workdir / "src" / "isonorm" / "experiments" / "lu2024" / "trained_nets.py"
    text = module.read_text(encoding="utf-8")
    anchor = re.search(r"def fnn\(.*?\) -> pd\.DataFrame:\n(\s+\"\"\".*?\"\"\"\n)", text, re.S)
    planted = "".join(
        f'    if item == "apptable4" and variant == "{variant}" and not __import__("os").path.exists("{marker}"):\n'
        f'        open("{marker}", "w").close()\n'
        f"        {statement}\n"
        for variant, statement in faults.items() for marker in [str(workdir / f"struck-{variant}")])
    module.write_text(text[:anchor.end()] + planted + text[anchor.end():], encoding="utf-8")


def results_digests(workdir: Path) -> dict[str, bytes]:
    """Every results file of lu2024 (its jobs' Parquet files, its claims and its scored rows), by path."""
    root = workdir / PAPER
    files = [*root.rglob("*.parquet"), root / "scored.csv"]
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(files)}


def assert_equal_to_clean_run(workdir: Path, clean: Path) -> None:
    resumed, reference = results_digests(workdir), results_digests(clean)
    assert sorted(resumed) == sorted(reference)
    differ = [name for name in reference if resumed[name] != reference[name]]
    assert not differ, f"resumed results differ from a clean run's: {differ}"
    board = (workdir / QUICK["results"] / "scoreboard.csv").read_text(encoding="utf-8").splitlines()
    clean_board = (clean / QUICK["results"] / "scoreboard.csv").read_text(encoding="utf-8").splitlines()
    assert board == [clean_board[0], *(row for row in clean_board[1:] if row.startswith("lu2024,"))]


def resume(workdir: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    again = snakemake(workdir, *RUN, env=env)
    assert again.returncode == 0, again.stderr[-4000:]
    assert "have their results: all of them." in again.stderr
    return again


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    workdir = copy_workflow(tmp_path_factory.mktemp("resume"))
    return workdir, {"PYTHONPATH": str(workdir / "src")}


def test_a_killed_and_a_failed_training_job_resume_by_the_same_command(env, quick_run):
    workdir, environment = env
    plant_once(workdir, {"original": "__import__('os').kill(__import__('os').getpid(), 9)",
                         "norm_res": "raise RuntimeError('planted: fails once')"})
    first = snakemake(workdir, *RUN, env=environment)
    assert first.returncode != 0
    summary = first.stderr[first.stderr.index("=== end of run ==="):]
    assert "failed: lu2024_apptable4[variant=original]: it ended without finishing" in summary
    assert "failed: lu2024_apptable4[variant=norm_res]: RuntimeError: planted: fails once" in summary
    assert "to finish: fix the causes above" in summary and "Traceback" not in first.stderr
    assert (workdir / QUICK["report"] / "index.html").is_file()  # the report from what exists
    again = resume(workdir, environment)
    ran = set(re.findall(r"^(?:local)?rule (\w+):", again.stdout + again.stderr, re.M))
    assert "lu2024_apptable4" in ran and not ran & {"lu2024_table1", "lu2024_fig1", "fetch_data"}, ran
    assert_equal_to_clean_run(workdir, quick_run)


def test_ctrl_c_stops_the_run_once_and_the_same_command_resumes_it(env, quick_run):
    workdir, environment = env
    # Work for the run: two results and the claims that read them gone (the claims too, or Snakemake, deciding from
    # the targets down, would find the report up to date and look no further)
    for name in ("apptable4/original.parquet", "table1/sgd.parquet", "claims.parquet"):
        (workdir / PAPER / name).unlink(missing_ok=True)
    started = workdir / "struck-sleep"
    plant_once(workdir, {"original": f"open('{started}', 'w').close(); __import__('time').sleep(600)"})
    command = [sys.executable, "-m", "snakemake", *RUN]
    run = subprocess.Popen(command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, **environment}, start_new_session=True)
    deadline = time.monotonic() + 600
    while not started.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert started.exists(), "the planted training job never started"
    time.sleep(1)
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C on a terminal sends: the whole foreground process group
    out, err = run.communicate(timeout=600)
    assert run.returncode != 0
    assert err.count("stopped: the run was stopped (Ctrl-C)") == 1, err[-4000:]
    assert "resume it with `" in err and "not finished:" not in err
    assert "KeyboardInterrupt" not in err, err[-4000:]
    again = resume(workdir, environment)
    assert re.search(r"^(?:local)?rule lu2024_apptable4:", again.stdout + again.stderr, re.M)
    assert_equal_to_clean_run(workdir, quick_run)
