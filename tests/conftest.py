"""Shared fixtures: a copy of the workflow in a temporary folder, and one quick-preset run of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def snakemake(workdir: Path, *args: str, env: dict | None = None, timeout: int = 1200) -> subprocess.CompletedProcess:
    """Run the snakemake of this interpreter's environment in ``workdir``, capturing its output."""
    command = [sys.executable, "-m", "snakemake", *args]
    return subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


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


@pytest.fixture(scope="session")
def quick_run(workflow_dir: Path) -> Path:
    """The whole DAG under presets/quick.yaml, run once per test session (a few minutes on a 2-core CPU)."""
    done = snakemake(workflow_dir, "--cores", "2", "--configfile", "presets/quick.yaml")
    if done.returncode != 0:
        pytest.fail(f"quick preset failed:\n{done.stdout[-5000:]}\n{done.stderr[-10000:]}")
    return workflow_dir
