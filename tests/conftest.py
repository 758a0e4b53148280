"""Shared fixtures: a copy of the workflow in a temporary folder, and one quick-preset run of it (made after a run
in the paper configuration's output root, so that tests can check the two never touch each other's files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import hashlib
import re

import pytest
import yaml

from isonorm.outputs import PAPER_PRESET, output_roots
from isonorm.user_errors import MAX_LINES

REPO = Path(__file__).resolve().parents[1]
PAPERS = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["papers"]  # a run's papers, in order
QUICK = output_roots("quick")  # results/quick, report/quick, logs/quick
PAPER = output_roots(PAPER_PRESET)  # results, report, logs
# What a run must never lose: its results and report. (Logs are left out: other tests in the same folder write
# paper-root logs, e.g. of a failed download or config check.)
RESULT_ROOTS = {kind: PAPER[kind] for kind in ("results", "report")}
# A run in the paper configuration's output root that a test can afford: the preset name `paper` (which picks the
# root) with the quick preset's sizes, the data-free items only, and one paper's results, claims and rendered
# page (lu2024: its one data-free job takes seconds). Paper sizes would take hours; the root, not the sizes, is
# what the tests look at: a quick run that wrote any file there, a scoreboard included, would add to its digests.
PAPER_ROOT_RUN = ("--configfile", "presets/quick.yaml", "--config", "preset=paper", "compute=data-free", "--",
                  f"{PAPER['results']}/lu2024/claims.parquet", f"{PAPER['report']}/lu2024.html")


def script_module(path: Path, name: str | None = None):
    """A script of the repository that is not part of the package (benchmarks/, envs/), imported as a module
    under ``name`` (default: its stem). Registered in ``sys.modules`` first (a dataclass looks its module up
    while its class is made), with its folder on ``sys.path`` (benchmarks import each other from beside them)."""
    import importlib.util

    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def hub_answers(monkeypatch):
    """Tests fake the Hub's downloads (huggingface_hub's functions), so the reachability probe that precedes them
    answers "reachable" here; tests/test_sources_offline.py puts the real probe back and fakes the network away."""
    monkeypatch.setattr("isonorm.sources.hub.hub_unreachable", lambda *args, **kwargs: None)


def snakemake(workdir: Path, *args: str, env: dict | None = None, timeout: int = 1200) -> subprocess.CompletedProcess:
    """Run the snakemake of this interpreter's environment in ``workdir``, capturing its output."""
    command = [sys.executable, "-m", "snakemake", *args]
    return subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


TRACEBACK = re.compile(r'Traceback \(most recent call last\)|^\s*File ".*", line \d+', re.M)


def error_lines(completed: subprocess.CompletedProcess) -> list[str]:
    """The lines from `error:` on, what the user reads of the error (Snakemake's own preamble comes before it),
    after checking that the run failed and printed no traceback."""
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0, output
    assert not TRACEBACK.search(output), output
    lines = output.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    assert starts, output
    shown = lines[starts[0]:]
    assert len(shown) <= MAX_LINES, "\n".join(shown)
    return shown


def copy_workflow(target: Path) -> Path:
    """The repository's tracked (and untracked, not ignored) files, without any outputs."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    for name in listed:
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def workflow_dir(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def file_digests(workdir: Path, roots: dict[str, Path], skip: dict[str, Path]) -> dict[str, str]:
    """{path: sha256} of every file under ``roots``, leaving out the subfolders ``skip`` (of the same kind)."""
    digests = {}
    for kind, root in roots.items():
        for path in sorted((workdir / root).rglob("*")):
            if path.is_file() and not path.is_relative_to(workdir / skip[kind]):
                digests[str(path.relative_to(workdir))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.fixture(scope="session")
def paper_root_run(workflow_dir: Path) -> dict[str, str]:
    """PAPER_ROOT_RUN in the workflow copy, before the quick run; returns the digests of its results and report."""
    done = snakemake(workflow_dir, "--cores", "2", *PAPER_ROOT_RUN)
    if done.returncode != 0:
        pytest.fail(f"run in the paper root failed:\n{done.stdout[-5000:]}\n{done.stderr[-10000:]}")
    return file_digests(workflow_dir, RESULT_ROOTS, skip=QUICK)


@pytest.fixture(scope="session")
def quick_run(workflow_dir: Path, paper_root_run: dict[str, str]) -> Path:
    """The whole DAG under presets/quick.yaml, run once per test session (a few minutes on a 2-core CPU), in the
    same folder as (and after) ``paper_root_run``."""
    done = snakemake(workflow_dir, "--cores", "2", "--configfile", "presets/quick.yaml")
    if done.returncode != 0:
        pytest.fail(f"quick preset failed:\n{done.stdout[-5000:]}\n{done.stderr[-10000:]}")
    return workflow_dir
