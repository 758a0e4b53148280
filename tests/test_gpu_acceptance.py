"""The GPU acceptance command (benchmarks/gpu_acceptance.py) on a machine without a GPU: it refuses to run with
the reason, and its dry run starts every step as far as it goes without one, so the command does not rot between
the rare sessions that have a GPU."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from conftest import REPO, copy_workflow, script_module

pytestmark = pytest.mark.integration
SCRIPT = REPO / "benchmarks" / "gpu_acceptance.py"


def acceptance_module():
    return script_module(SCRIPT)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine with a GPU runs the real thing")
def test_without_a_gpu_it_says_so_and_exits_non_zero(tmp_path):
    workdir = copy_workflow(tmp_path)
    recorded = workdir / "benchmarks" / "results"
    before = {path: path.stat().st_mtime_ns for path in recorded.iterdir()}
    done = subprocess.run([sys.executable, "benchmarks/gpu_acceptance.py"], cwd=workdir, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2
    assert "GPU acceptance needs a GPU that torch can use" in done.stderr
    assert {path: path.stat().st_mtime_ns for path in recorded.iterdir()} == before  # nothing recorded


def test_the_dry_run_starts_every_step(tmp_path):
    workdir = copy_workflow(tmp_path)
    done = subprocess.run([sys.executable, "benchmarks/gpu_acceptance.py", "--dry-run"], cwd=workdir,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = workdir / "logs" / "gpu-acceptance" / "dry-run"
    collected = (logs / "tests.log").read_text()
    assert "test_cuda_graph_step_equals_eager_step" in collected  # the GPU tests import and are selected
    assert "This was a dry-run" in (logs / "shapes.log").read_text()  # the shapes DAG on CUDA is planned
    assert set(done.stdout.split()) >= {"[tests]", "[meterez]", "[fusion]", "[lu2024]", "[train_engine]", "[shapes]"}


def test_a_step_that_would_not_start_fails_the_dry_run(tmp_path, monkeypatch):
    acceptance = acceptance_module()
    monkeypatch.setattr(acceptance, "LOGS", tmp_path)
    bad = acceptance._arguments_parse("benchmarks/train_engine.py", ["--device", "cuda", "--stacks", "4"])
    monkeypatch.setitem(acceptance.DRY_RUN, "train_engine", bad)  # an option the benchmark does not have
    assert acceptance.main(["--dry-run", "--steps", "train_engine"]) == 1
    assert "unrecognized arguments: --stacks" in (tmp_path / "dry-run" / "train_engine.log").read_text()


def test_the_dry_run_fails_a_gpu_step_that_needs_a_package_of_the_workflow_alone(tmp_path, monkeypatch):
    # A GPU machine's image may have torch, transformers and pandas but not Snakemake or the notebooks' stack: the
    # tests and benchmark steps must start without them, and the dry run says which import would stop one.
    acceptance = acceptance_module()
    monkeypatch.setattr(acceptance, "LOGS", tmp_path)
    script = tmp_path / "bench.py"
    script.write_text("import torch\nfrom snakemake.io import expand\n\n\ndef parse_arguments(argv):\n    return argv\n")
    monkeypatch.setitem(acceptance.DRY_RUN, "passes", acceptance._arguments_parse(str(script), []))
    assert acceptance.main(["--dry-run", "--steps", "passes"]) == 1
    log = (tmp_path / "dry-run" / "passes.log").read_text()
    assert "ModuleNotFoundError: No module named 'snakemake" in log
    # the real tests step collects only the files that mark GPU tests, none of which needs the workflow's packages
    assert set(acceptance.GPU_TEST_FILES) <= set(acceptance.STEPS["tests"])
    assert "tests/test_train_native_stack.py" in acceptance.GPU_TEST_FILES
