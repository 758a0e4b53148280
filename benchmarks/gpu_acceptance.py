"""Everything that needs a GPU, in one command, with its figures written under benchmarks/results/.

    python benchmarks/gpu_acceptance.py             # on a CUDA machine: about half an hour on an H100
    python benchmarks/gpu_acceptance.py --dry-run   # any machine: checks that every step would start

Steps, in order (``--steps`` picks some):

- ``tests``: the GPU-marked tests (``pytest -m gpu``: the CUDA-graph training step, stacked CUDA training,
  CUDA metrics and inits against the CPU);
- ``meterez``: ``benchmarks/meterez_engine.py`` on CUDA (the meterez2024 grid's step against an eager loop);
- ``fusion``: ``benchmarks/meterez_fusion.py`` on CUDA (the fused block of that step: CUDA kernels per step,
  eager and fused, and the engine's CUDA-graph step with and without it; the same for the joint job of a depth,
  both its graphs, the one where every run trains and the one where the CIFAR runs sit out);
- ``passes``: ``benchmarks/meterez_passes.py`` on CUDA (the meterez2024 grid's evaluation passes timed at eval batch
  sizes 1000 to 10,000, against the projection from the shapes preset's pass times);
- ``lu2024``: ``benchmarks/lu2024_bounds.py`` on CUDA (each lu2024 training step timed against its arithmetic
  and launch floors, and the LoRA job profiled: a micro-batch's wall time against the time its kernels ran, and a
  whole optimizer step against its 16 micro-batches);
- ``train_engine``: ``benchmarks/train_engine.py`` on CUDA (the stacked engine against the notebooks' loop);
- ``shapes``: the shapes preset on CUDA (docs/cost.md): every data, checkpoint and GPU job of the paper run at
  paper sizes for a few steps, and its cost table, copied to ``benchmarks/results/cost-cuda-<date>.csv``. When
  some jobs fail, the jobs that ran still give a table, ``shapes-cuda-<date>-partial.csv``, and the summary names
  the failed ones.

Each step's output goes to ``logs/gpu-acceptance/<step>.log``; a failed step does not stop the next. The summary,
``benchmarks/results/gpu-acceptance-cuda-<date>.json``, holds the device, driver and torch build, each step's
command, exit status and wall time, the tests' count line, the engines' ratios and the cost table's GPU hours
and peak CUDA memory. Exit status 0 only when every step passed. On a machine where torch cannot use a GPU it
says why (isonorm.runtime's device guard) and exits with 2 before running anything; ``--dry-run`` instead
checks each step without a GPU: the GPU tests are collected, the benchmark scripts parse their arguments, and
Snakemake plans the shapes DAG (``-n``). The first two run with the packages of the workflow alone blocked
(``WORKFLOW_ONLY``), since every step but ``shapes`` must run on a GPU machine's Python without them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
LOGS = REPO / "logs" / "gpu-acceptance"
SHAPES_RESULTS = REPO / "results" / "shapes"  # the shapes preset's results root (isonorm.outputs)

PYTHON = sys.executable
# The test files that mark any GPU test: the tests step collects only these, so that it needs no package of the
# workflow alone (below) and runs on a GPU machine's own Python with torch and the project's numerics stack.
GPU_TEST_FILES = sorted(str(path.relative_to(REPO)) for path in (REPO / "tests").glob("test_*.py")
                        if "mark.gpu" in path.read_text())
# What each step runs. Sizes: the benchmarks' own GPU settings (benchmarks/README.md); the shapes preset names
# `device=cuda`, so that a GPU torch cannot use stops its jobs instead of running them on the CPU.
STEPS = {
    "tests": [PYTHON, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-o", "addopts=-ra", *GPU_TEST_FILES],
    "meterez": [PYTHON, "benchmarks/meterez_engine.py", "--device", "cuda", "--depths", "100", "500", "1000",
                "--steps", "50"],
    # the engine's fused block (`meterez2024: training: fused_block`) and the joint job of a depth (all four data sets
    # in one stack), both off until measured here: CUDA kernels per step and the CUDA-graph steps, with and without
    "fusion": [PYTHON, "benchmarks/meterez_fusion.py", "--device", "cuda", "--depths", "100", "500", "1000",
               "--steps", "50"],
    # the grid's evaluation passes at the config's whole-test-set batch against the shapes preset's 1000
    "passes": [PYTHON, "benchmarks/meterez_passes.py", "--device", "cuda"],
    # what bounds the lu2024 trainings, the LoRA job's above all (its projection is an upper bound until profiled)
    "lu2024": [PYTHON, "benchmarks/lu2024_bounds.py", "--device", "cuda"],
    "train_engine": [PYTHON, "benchmarks/train_engine.py", "--device", "cuda", "--runs", "4", "--epochs", "3"],
    "shapes": [PYTHON, "-m", "snakemake", "--cores", "all", "--configfile", "presets/shapes.yaml",
               "--config", "device=cuda"],
}


# The packages that only the workflow and its report need (Snakemake, the notebooks, the config's schema check). A GPU
# machine's image may lack them; every step but `shapes` runs without them, which the dry run checks by blocking them.
WORKFLOW_ONLY = ("snakemake", "papermill", "jupytext", "nbformat", "nbconvert", "IPython", "ipykernel", "jsonschema")


def block_workflow_only() -> None:
    """Make the packages of :data:`WORKFLOW_ONLY` look absent in this process (the dry run's checks): a ``None`` in
    ``sys.modules`` fails their import (ModuleNotFoundError) and makes ``importlib.util.find_spec`` answer
    None, as on a machine without them, so libraries that probe for them optionally behave as they would there."""
    for name in WORKFLOW_ONLY:
        sys.modules[name] = None  # type: ignore[assignment]


# the start of a dry-run check's `python -c` code: this file imported from its folder, the workflow's packages blocked
_BLOCKED = ("import runpy, sys; sys.path.insert(0, 'benchmarks'); "
            "import gpu_acceptance; gpu_acceptance.block_workflow_only(); ")


def _arguments_parse(script: str, argv: list[str]) -> list[str]:
    """A command that imports a benchmark script and parses ``argv`` with its own parser, running nothing, with the
    workflow's own packages unimportable."""
    # the script's folder first on sys.path, as `python script.py` puts it (its imports of its neighbours)
    check = (f"{_BLOCKED}sys.path[0:0] = [{str(Path(script).parent)!r}]; "
             f"runpy.run_path({script!r})['parse_arguments'](sys.argv[1:])")
    return [PYTHON, "-c", check, *argv]


def _tests_collected() -> list[str]:
    """The tests step's pytest run collecting only, with the workflow's own packages unimportable."""
    pytest_args = STEPS["tests"][3:] + ["--collect-only", "-q"]
    return [PYTHON, "-c", f"{_BLOCKED}import pytest; sys.exit(pytest.main(sys.argv[1:]))", *pytest_args]


# The same steps without a GPU, each started as far as it goes without one: the GPU tests collected, the benchmarks'
# imports and arguments (both without the packages of the workflow alone), the shapes DAG planned.
DRY_RUN = {
    "tests": _tests_collected(),
    "meterez": _arguments_parse(STEPS["meterez"][1], STEPS["meterez"][2:]),
    "fusion": _arguments_parse(STEPS["fusion"][1], STEPS["fusion"][2:]),
    "passes": _arguments_parse(STEPS["passes"][1], STEPS["passes"][2:]),
    "lu2024": _arguments_parse(STEPS["lu2024"][1], STEPS["lu2024"][2:]),
    "train_engine": _arguments_parse(STEPS["train_engine"][1], STEPS["train_engine"][2:]),
    # `device=cuda` stops even a dry run on a machine without a GPU (isonorm.plan); `device=cpu` plans the same DAG
    "shapes": [("device=cpu" if arg == "device=cuda" else arg) for arg in STEPS["shapes"]] + ["-n", "--quiet", "rules"],
}


def run_step(name: str, command: list[str], log_dir: Path) -> dict:
    """Run one step from the repository root, its output to ``log_dir/<name>.log``."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{name}.log"
    shown = log.relative_to(REPO) if log.is_relative_to(REPO) else log
    print(f"[{name}] {' '.join(command)}  (log: {shown})", flush=True)
    start = time.perf_counter()
    with log.open("w") as out:
        code = subprocess.run(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - start
    print(f"[{name}] {'passed' if code == 0 else f'FAILED (exit {code})'} in {seconds:.0f} s", flush=True)
    return {"step": name, "command": command, "returncode": code, "seconds": round(seconds, 1), "log": str(log)}


def tests_line(log: Path) -> str | None:
    """pytest's closing count line, e.g. ``6 passed, 900 deselected in 17.13s``."""
    lines = [line.strip("= ") for line in log.read_text().splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return lines[-1] if lines else None


def benchmark_file(pattern: str, date: str) -> dict | None:
    path = RESULTS / pattern.format(date=date)
    return json.loads(path.read_text()) if path.exists() else None


def shapes_cost(date: str, started: float) -> dict:
    """The shapes run's cost table, copied under benchmarks/results/; a partial one when jobs failed."""
    from isonorm.cost import cost_table, read_cost_table, write_cost_table

    complete = SHAPES_RESULTS / "cost.csv"
    if complete.exists() and complete.stat().st_mtime >= started:
        target = RESULTS / f"cost-cuda-{date}.csv"
        shutil.copy2(complete, target)
        table, missing = read_cost_table(target), []
    else:  # some jobs failed: the cost records of those that ran this time
        ran = [path for path in SHAPES_RESULTS.glob("*/*/*.parquet")
               if path.stat().st_mtime >= started and path.parent.parent.name != "benchmarks"]
        if not ran:
            return {"table": None, "jobs": 0}
        table = cost_table(ran, SHAPES_RESULTS)
        target = RESULTS / f"shapes-cuda-{date}-partial.csv"
        write_cost_table(table, target)
        missing = None  # the failed jobs are named in the shapes log
    return {
        "table": str(target.relative_to(REPO)), "jobs": int(len(table)), "failed_jobs": missing,
        "gpu_hours": round(float(table.projected_hours.sum()), 2),
        "gpu_hours_by_paper": table.groupby("paper").projected_hours.sum().round(2).to_dict(),
        "peak_cuda_gb_max": round(float(table.peak_cuda_gb.max()), 2),
        "jobs_that_do_not_fit": table.loc[~table.fits.astype(bool), "result"].tolist(),
    }


def device_facts() -> dict:
    import torch

    from isonorm import gpus

    return {"device": torch.cuda.get_device_name(), "driver": gpus.nvidia_driver_version(),
            "driver_cuda": gpus.driver_cuda_version(), "torch": torch.__version__, "torch_cuda": torch.version.cuda}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", nargs="+", choices=list(STEPS), default=list(STEPS))
    parser.add_argument("--dry-run", action="store_true", help="check each step without a GPU, run nothing")
    args = parser.parse_args(argv)

    if args.dry_run:
        done = [run_step(name, DRY_RUN[name], LOGS / "dry-run") for name in args.steps]
        return 0 if all(step["returncode"] == 0 for step in done) else 1

    from isonorm.runtime import UnusableGPUError, resolve_device

    try:
        resolve_device("cuda")
    except UnusableGPUError as problem:
        print(f"GPU acceptance needs a GPU that torch can use; none here: {problem}", file=sys.stderr)
        return 2
    date = dt.date.today().isoformat()
    started = time.time()
    summary = {"benchmark": "gpu_acceptance", "date": date, **device_facts(), "steps": []}
    for name in args.steps:
        step = run_step(name, STEPS[name], LOGS)
        if name == "tests":
            step["summary"] = tests_line(Path(step["log"]))
        elif name == "meterez" and (found := benchmark_file("meterez-cuda-{date}.json", date)):
            step.update({key: found[key] for key in ("eager_s_per_step", "engine_s_per_step", "projected_grid_hours")})
        elif name == "fusion" and (found := benchmark_file("meterez-fusion-cuda-{date}.json", date)):
            step["results"] = found["results"]
            step["projected_grid_hours"] = found.get("projected_grid_hours")
        elif name == "passes" and (found := benchmark_file("meterez-passes-cuda-{date}.json", date)):
            step["pass_hours"] = found["projected_pass_hours"]
        elif name == "lu2024" and (found := benchmark_file("lu2024-bounds-cuda-{date}.json", date)):
            step["results"] = [{key: row.get(key) for key in ("job", "gpu_s_per_step", "verdict", "wall_s",
                                                              "cuda_kernel_s", "cuda_kernels", "host_op_s", "step_s",
                                                              "step_overhead_s")}
                               for row in found["results"]]
        elif name == "train_engine" and (found := benchmark_file("cuda-{date}.json", date)):
            step["ratio_naive_over_engine"] = found["ratio_naive_over_engine"]
        elif name == "shapes":
            step["cost"] = shapes_cost(date, started)
        summary["steps"].append(step)
        (RESULTS / f"gpu-acceptance-cuda-{date}.json").write_text(json.dumps(summary, indent=2) + "\n")
    failed = [step["step"] for step in summary["steps"] if step["returncode"] != 0]
    print(f"wrote benchmarks/results/gpu-acceptance-cuda-{date}.json; "
          + (f"FAILED: {', '.join(failed)}" if failed else "every step passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
