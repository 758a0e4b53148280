"""The engine's fused meterez2024 training step (config `meterez2024: training: fused_block: true`,
:meth:`isonorm.models.bn_mlp.StackedBNMLP.fuse_norm_act`): each hidden layer's BatchNorm, gain and activation
compiled into one block by ``torch.compile`` (Inductor), measured against the engine's eager step (issue 31: the
grid at a fraction of its kernels).

Both steps are the grid job's own (``training_grid.grid_training``, as ``meterez_engine.engine_step`` builds it),
one with ``fused_block`` off and one with it on: torch's ``F.batch_norm`` in train mode over the (run, feature)
channels with the running-stat update, the layer's gain as a tensor (so one compiled graph serves every layer),
and each activation group of runs. It reports, per depth:

- seconds per step on this CPU, eager and fused (the minimum of ``--repeats`` epochs of ``--steps`` steps), and
  the largest difference of any parameter after the same steps from the same start (float32);
- operators per step of the eager step (``OpCounter``: forward, backward, update), the operators the block
  replaces (its eager forward and backward, counted alike), and the kernels Inductor generated for it
  (the ``cpp_fused`` kernels of its compiled forward and backward, read from the generated code); hence the
  kernels per step of the fused step: eager − depth × (block's operators − block's kernels).

On a GPU the step is bound by kernel launches (the engine's CUDA graph runs about 3.9 µs per kernel on an H100,
benchmarks/README.md), so the projected grid hours scale with the kernels per step; Triton may split a block
into more kernels than the CPU's C++ backend does, which the projection states as a range. With ``--device
cuda`` (a step of ``gpu_acceptance.py``) the script measures instead of projecting: the CUDA kernels one step
launches, eager and fused (the profiler's count), and the seconds per step of the engine's own path, one CUDA
graph per step, with and without the fused block. Usage:

    OMP_NUM_THREADS=1 python benchmarks/meterez_fusion.py --depths 100 500
    python benchmarks/meterez_fusion.py --device cuda --depths 100 500 1000 --steps 50
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import time
from pathlib import Path

import torch
from torch._inductor.utils import run_and_get_code

from meterez_engine import ACTS, BATCH, GRID_CFG, STACKS, grid_total  # benchmarks/meterez_engine.py, beside it
from op_count import OpCounter

from isonorm.atomic import write_text_atomically
from isonorm.data import dataset_spec
from isonorm.experiments.meterez2024.training_grid import grid_training
from isonorm.provenance import provenance
from isonorm.train.fast_step import StackedSGDStep

RESULTS = Path(__file__).resolve().parent / "results"
SECONDS_PER_KERNEL_H100 = 57.8e-3 / 15_018  # the engine's CUDA graph at depth 1000 (meterez-cuda-2026-11-24.json)
GRID_HOURS_H100 = 28.3  # the paper grid's projected training steps on the H100, eager engine (same file)


def block_counts(model, device: torch.device) -> tuple[int, int]:
    """(operators of the eager block's forward and backward, kernels of the compiled block's: C++ loops on a CPU,
    Triton kernels on a GPU, read from Inductor's generated code)."""
    runs, width = model.n_runs, GRID_CFG["width"]
    args = lambda: (torch.randn(runs, width, BATCH, requires_grad=True, device=device),  # noqa: E731
                    torch.tensor(0.5, device=device), torch.ones(runs, width, requires_grad=True, device=device),
                    torch.zeros(runs, width, requires_grad=True, device=device), torch.zeros(runs, width, device=device),
                    torch.ones(runs, width, device=device))
    block = model.norm_act_block()  # the engine's block, eager: (h, gain, weight, bias, running mean and variance)
    inputs = args()
    with OpCounter() as counter:
        block(*inputs).sum().backward()
    counter.counts["sum"] -= 1  # the .sum() that starts the backward here
    counter.counts["ones_like"] -= 1
    inputs = args()
    _, codes = run_and_get_code(lambda: torch.compile(block, dynamic=False)(*inputs).sum().backward())
    kernels = sum(len(re.findall(r"^\s+(?:cpp_fused_\w+\(|triton_\w+\.run\()", code, re.M)) for code in codes)
    return counter.total, kernels


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(step, index, steps: int, repeats: int, device: torch.device) -> float:
    """The minimum over ``repeats`` of the seconds per step of ``steps`` calls of ``step(index)``."""
    best = float("inf")
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        for _ in range(steps):
            step(index)
        sync(device)
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def cuda_kernels(step, index) -> int:
    """The CUDA kernels one call of ``step(index)`` launches (the profiler's kernel events)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(index)
        torch.cuda.synchronize()
    return sum(1 for event in prof.events() if event.device_type == torch.autograd.DeviceType.CUDA)


def graph_step(job) -> StackedSGDStep:
    """The engine's CUDA-graph step over the job's model and data (captured now, with the model as it is)."""
    step = job.step
    run_data = None if step.run_data is None else step.run_data.view(-1)
    return StackedSGDStep(step.model, step.x, step.y, step.n_runs, step.batch_size, step.lr, cuda_graph=True,
                          run_data=run_data)


def measure(depth: int, steps: int, repeats: int, device: torch.device) -> dict:
    stack, n = STACKS[0], steps * BATCH
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(len(stack), n, 3072, generator=generator).to(device)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (n,), generator=generator)
                     for name in stack]).to(device)
    index = torch.randint(0, n, (2 * len(ACTS), BATCH), generator=generator).to(device)
    jobs = {kind: grid_training({**GRID_CFG, "cuda_graph": False, "fused_block": kind == "fused"}, stack, ACTS, depth,
                                x, y) for kind in ("eager", "fused")}
    model = jobs["fused"].step.model
    start = time.perf_counter()
    jobs["fused"].step._step(index)  # compiles
    sync(device)
    compile_s = time.perf_counter() - start
    jobs["eager"].step._step(index)
    with OpCounter() as counter:
        jobs["eager"].step._step(index)
    jobs["fused"].step._step(index)  # both have taken the same steps from the same start
    seconds = {kind: timed(job.step._step, index, steps, repeats, device) for kind, job in jobs.items()}
    diff = max((a - b).abs().max().item() for a, b in zip(jobs["eager"].step.model.parameters(), model.parameters()))
    block_ops, block_kernels = block_counts(model, device)
    fused_kernels = counter.total - depth * (block_ops - block_kernels)
    row = {"depth": depth, "device": str(device), "runs": model.n_runs, "eager_s_per_step": seconds["eager"],
           "fused_s_per_step": seconds["fused"], "speedup": seconds["eager"] / seconds["fused"],
           "compile_s": compile_s, "max_parameter_difference": diff, "eager_ops_per_step": counter.total,
           "block_ops": block_ops, "block_kernels": block_kernels, "fused_kernels_per_step": fused_kernels,
           "kernel_ratio": counter.total / fused_kernels}
    if device.type == "cuda":  # measured, not projected: kernels launched, and the engine's CUDA-graph path
        row |= {f"{kind}_cuda_kernels_per_step": cuda_kernels(job.step._step, index) for kind, job in jobs.items()}
        row |= {f"{kind}_graph_s_per_step": timed(graph_step(job), index, steps, repeats, device)
                for kind, job in jobs.items()}
        row["graph_speedup"] = row["eager_graph_s_per_step"] / row["fused_graph_s_per_step"]
    return row


def projected_grid_hours(rows: list[dict]) -> dict[str, float]:
    """The paper grid's training steps in hours (``meterez_engine.grid_total``: every step of the grid's stack jobs,
    per-step figures interpolated in depth): on the H100 from the kernels per step at its measured seconds per
    kernel, eager and fused (``h100_eager``, ``h100_fused``); and, from a CUDA run, from the CUDA-graph step
    measured with and without the block (``graph_eager``, ``graph_fused``)."""
    per_step = {"h100_eager": "eager_ops_per_step", "h100_fused": "fused_kernels_per_step"}
    hours = {name: grid_total({row["depth"]: row[key] * SECONDS_PER_KERNEL_H100 for row in rows}, True) / 3600
             for name, key in per_step.items()}
    if all("fused_graph_s_per_step" in row for row in rows):
        hours |= {f"graph_{kind}": grid_total({row["depth"]: row[f"{kind}_graph_s_per_step"] for row in rows},
                                              True) / 3600 for kind in ("eager", "fused")}
    return hours


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


def main() -> None:
    args = parse_arguments()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    rows = []
    for depth in args.depths:
        row = measure(depth, args.steps, args.repeats, device)
        rows.append(row)
        print(f"depth {depth} on {device}: eager {row['eager_s_per_step'] * 1e3:.1f} ms/step, fused "
              f"{row['fused_s_per_step'] * 1e3:.1f} ms/step ({row['speedup']:.2f}×, compiled in "
              f"{row['compile_s']:.0f} s); ops/kernels per step {row['eager_ops_per_step']} → "
              f"{row['fused_kernels_per_step']} ({row['kernel_ratio']:.2f}× fewer; the block: {row['block_ops']} ops → "
              f"{row['block_kernels']} kernels); largest parameter difference {row['max_parameter_difference']:.1e}")
        if "graph_speedup" in row:
            print(f"  CUDA kernels per step {row['eager_cuda_kernels_per_step']} → {row['fused_cuda_kernels_per_step']};"
                  f" CUDA graph {row['eager_graph_s_per_step'] * 1e3:.2f} → {row['fused_graph_s_per_step'] * 1e3:.2f} "
                  f"ms/step ({row['graph_speedup']:.2f}×)")
    hours = projected_grid_hours(rows)
    print("projected paper grid, training steps: " + ", ".join(f"{name} {h:.1f} h" for name, h in hours.items()))
    out = RESULTS / f"meterez-fusion-{device.type}-{dt.date.today().isoformat()}.json"
    write_text_atomically(out, json.dumps({
        "benchmark": "meterez_fusion", "date": dt.date.today().isoformat(),
        "threads": 1 if device.type == "cpu" else None, "statistic": "minimum over repeats",
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "load_average_1min_at_end": os.getloadavg()[0],
        "results": rows, "args": vars(args), "h100_seconds_per_kernel": SECONDS_PER_KERNEL_H100,
        "h100_grid_hours_engine": GRID_HOURS_H100, "projected_grid_hours": hours,
        "provenance": provenance(device.type)}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
