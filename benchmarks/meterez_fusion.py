"""The engine's fused meterez2024 training step (config `meterez2024: training: fused_block: true`,
:meth:`isonorm.models.bn_mlp.StackedBNMLP.fuse_norm_act`): each hidden layer's BatchNorm, gain and activation
compiled into one block by ``torch.compile`` (Inductor), measured against the engine's eager step (issue 31: the
grid at a fraction of its kernels).

Both steps are the grid job's own (``training_grid.grid_training``, as ``meterez_engine.engine_step`` builds it),
one with ``fused_block`` off and one with it on: the block is the fc's bias add, torch's ``F.batch_norm`` in train
mode over the (run, feature) channels with the running-stat update, the layer's gain as a tensor (so one compiled
graph serves every layer), and each activation group of runs. It reports, per depth:

- seconds per step on this CPU, eager and fused (the minimum of ``--repeats`` epochs of ``--steps`` steps), and
  the largest difference of any parameter after the same steps from the same start (float32);
- operators per step of the eager step (``OpCounter``: forward, backward, update), the operators the block
  replaces (its eager forward and backward, counted alike), and the kernels Inductor generated for it
  (the ``cpp_fused`` kernels of its compiled forward and backward, read from the generated code); hence the
  kernels per step of the fused step: eager − depth × (block's operators − 1 − block's kernels), the 1 being the
  bias add, which the eager step does inside its ``baddbmm``.

It also counts the step of the grid's *joint* job, all four data sets of a depth in one job (config
``stacks: [[cifar10, cifar100, mnist, fashionmnist]]``, 12 runs; :class:`isonorm.train.EpochPlan`): the step where
every run trains and the step where the CIFAR runs sit out (the last 100 of MNIST's 600 steps per epoch, their
running statistics restored), eager and fused, and projects the grid with one job per depth from them.

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

from meterez_engine import (  # benchmarks/meterez_engine.py, beside it
    ACTS, BATCH, EPOCHS, GRID_CFG, GRID_DEPTHS, STACKS, STEPS_PER_EPOCH, _at_grid_depth, grid_total,
)
from op_count import OpCounter

from isonorm.atomic import write_text_atomically
from isonorm.data import dataset_spec
from isonorm.experiments.meterez2024.training_grid import grid_training
from isonorm.provenance import provenance
from isonorm.train.fast_step import StackedSGDStep

RESULTS = Path(__file__).resolve().parent / "results"
SECONDS_PER_KERNEL_H100 = 57.8e-3 / 15_018  # the engine's CUDA graph at depth 1000 (meterez-cuda-2026-11-24.json)
GRID_HOURS_H100 = 28.3  # the paper grid's projected training steps on the H100, eager engine (same file)


def block_counts(model, device: torch.device) -> tuple[int, float]:
    """(operators of the eager block's forward and backward, kernels per layer of the compiled span the fused step
    runs: the C++ loops on a CPU or Triton kernels on a GPU that Inductor generated for a span of
    ``model.span_layers`` hidden layers, read from its generated code, divided by its layers; the products between
    the span's blocks are extern calls, not counted, as the eager step's products are counted apart)."""
    runs, width, layers = model.n_runs, GRID_CFG["width"], model.span_layers
    ones, zeros = (lambda grad=False: f((runs, width), requires_grad=grad, device=device)  # noqa: E731
                   for f in (torch.ones, torch.zeros))
    h = lambda: torch.randn(runs, width, BATCH, requires_grad=True, device=device)  # noqa: E731
    norm = lambda: (ones(True), zeros(True), zeros(), ones())  # noqa: E731  BN weight, bias, running stats
    block = model.norm_act_block()  # the engine's block, eager: (W xᵀ, fc bias, gain, BN weight, bias, running stats)
    inputs = h(), zeros(True), torch.tensor(0.5, device=device), *norm()
    with OpCounter() as counter:
        block(*inputs).sum().backward()
    counter.counts["sum"] -= 1  # the .sum() that starts the backward here
    counter.counts["ones_like"] -= 1
    weights = [torch.randn(runs, width, width, requires_grad=True, device=device) / width**0.5
               for _ in range(layers - 1)]
    span = torch.compile(model.layer_span(block), dynamic=False)
    args = (h(), weights, [zeros(True) for _ in range(layers)],
            [torch.tensor(0.5, device=device) for _ in range(layers)], [norm() for _ in range(layers)])
    _, codes = run_and_get_code(lambda: span(*args).sum().backward())
    kernels = sum(len(re.findall(r"^\s+(?:cpp_fused_\w+\(|triton_\w+\.run\()", code, re.M)) for code in codes)
    return counter.total, kernels / layers


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
                          run_data=run_data, run_samples=step.n_samples if step.ragged else None)


JOINT = tuple(name for stack in STACKS for name in stack)  # every data set of a depth in one job


def joint_job(depth: int, fused: bool, device: torch.device):
    """The grid's joint job at ``depth`` on random data: CIFAR-shaped data sets of 2 batches, MNIST-shaped of 3 (784
    features, zero-padded), so that its third step is one the CIFAR runs sit out; and that step's mask."""
    generator = torch.Generator().manual_seed(1)
    short = {name: STEPS_PER_EPOCH[name] < max(STEPS_PER_EPOCH.values()) for name in JOINT}
    sizes = [(2 if short[name] else 3) * BATCH for name in JOINT]
    dims = [3072 if short[name] else 784 for name in JOINT]
    x = torch.zeros(len(JOINT), max(sizes), max(dims))
    for k, (n, d) in enumerate(zip(sizes, dims)):
        x[k, :n, :d] = torch.randn(n, d, generator=generator)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (max(sizes),), generator=generator)
                     for name in JOINT])
    cfg = {**GRID_CFG, "cuda_graph": False, "fused_block": fused}
    job = grid_training(cfg, JOINT, ACTS, depth, x.to(device), y.to(device), sizes=sizes, dims=dims)
    active = torch.tensor([not short[name] for name, _ in job.runs], device=device)
    return job, active


def joint_counts(depth: int, device: torch.device) -> dict:
    """Operators of the joint job's eager step, every run training and the CIFAR runs sitting out; on CUDA also
    the kernels each launches, eager and fused, and the seconds of each CUDA-graph step."""
    index = torch.zeros(len(JOINT) * len(ACTS), BATCH, dtype=torch.long, device=device)
    job, active = joint_job(depth, False, device)
    row = {}
    for kind, mask in (("full", None), ("idle", active)):
        job.step._step(index, mask)
        with OpCounter() as counter:
            job.step._step(index, mask)
        row[f"joint_{kind}_ops_per_step"] = counter.total
    if device.type == "cuda":
        for fused in (False, True):
            name = "fused" if fused else "eager"
            job, active = joint_job(depth, fused, device)
            for kind, mask in (("full", None), ("idle", active)):
                job.step._step(index, mask)  # compiles the block
                row[f"joint_{name}_{kind}_cuda_kernels_per_step"] = cuda_kernels(lambda i: job.step._step(i, mask),
                                                                                  index)
            graphed = graph_step(job)
            for kind, mask in (("full", None), ("idle", active)):
                row[f"joint_{name}_{kind}_graph_s_per_step"] = timed(lambda i: graphed(i, mask), index, 20, 3, device)
    return row


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
    # On a GPU the grid runs the CUDA-graph steps timed below; the plain steps, seconds each at depth 1000 without a
    # graph, are timed briefly there (a tenth of the steps, once), which keeps the fusion step short on a short lease.
    plain = (steps, repeats) if device.type == "cpu" else (max(1, steps // 10), 1)
    seconds = {kind: timed(job.step._step, index, *plain, device) for kind, job in jobs.items()}
    diff = max((a - b).abs().max().item() for a, b in zip(jobs["eager"].step.model.parameters(), model.parameters()))
    block_ops, block_kernels = block_counts(model, device)
    # the block's operators the eager step dispatches: all but the bias add, which it does inside its baddbmm (the
    # fused step's bmm replaces that one for one); the bias's gradient, a sum, it does dispatch
    replaced = block_ops - 1
    fused_kernels = counter.total - depth * (replaced - block_kernels)
    joint = joint_counts(depth, device)
    for kind in ("full", "idle"):  # the block replaces the same operators in the joint job's steps
        joint[f"joint_fused_{kind}_kernels_per_step"] = (joint[f"joint_{kind}_ops_per_step"]
                                                         - depth * (replaced - block_kernels))
    row = {"depth": depth, "device": str(device), "runs": model.n_runs, "eager_s_per_step": seconds["eager"],
           "fused_s_per_step": seconds["fused"], "speedup": seconds["eager"] / seconds["fused"],
           "compile_s": compile_s, "max_parameter_difference": diff, "eager_ops_per_step": counter.total,
           "block_ops": block_ops, "block_kernels": block_kernels, "span_layers": model.span_layers,
           "fused_kernels_per_step": fused_kernels,
           "kernel_ratio": counter.total / fused_kernels, **joint}
    if device.type == "cuda":  # measured, not projected: kernels launched, and the engine's CUDA-graph path
        row |= {f"{kind}_cuda_kernels_per_step": cuda_kernels(job.step._step, index) for kind, job in jobs.items()}
        row |= {f"{kind}_graph_s_per_step": timed(graph_step(job), index, steps, repeats, device)
                for kind, job in jobs.items()}
        row["graph_speedup"] = row["eager_graph_s_per_step"] / row["fused_graph_s_per_step"]
    return row


def joint_grid_total(full: dict[int, float], idle: dict[int, float]) -> float:
    """Σ over the grid's steps with one job per depth: each epoch the CIFAR runs' 500 steps with every run training
    (``full``: seconds or kernels per step, interpolated in depth) and MNIST's 100 more with the CIFAR runs
    sitting out (``idle``)."""
    steps = sorted(set(STEPS_PER_EPOCH.values()))
    shared, alone = steps[0], steps[-1] - steps[0]
    return sum(EPOCHS * (shared * _at_grid_depth(full, depth) + alone * _at_grid_depth(idle, depth))
               for depth in GRID_DEPTHS)


def projected_grid_hours(rows: list[dict]) -> dict[str, float]:
    """The paper grid's training steps in hours (``meterez_engine.grid_total``: every step of the grid's stack jobs,
    per-step figures interpolated in depth): on the H100 from the kernels per step at its measured seconds per
    kernel, eager and fused (``h100_eager``, ``h100_fused``), and with one joint job per depth
    (``h100_joint_eager``, ``h100_joint_fused``, :func:`joint_grid_total`); and, from a CUDA run, from the
    CUDA-graph steps measured with and without the block (``graph_eager``, ``graph_fused``, ``graph_joint_*``)."""
    per_step = {"h100_eager": "eager_ops_per_step", "h100_fused": "fused_kernels_per_step"}
    at = lambda key: {row["depth"]: row[key] * SECONDS_PER_KERNEL_H100 for row in rows}  # noqa: E731
    hours = {name: grid_total(at(key), True) / 3600 for name, key in per_step.items()}
    hours["h100_joint_eager"] = joint_grid_total(at("joint_full_ops_per_step"), at("joint_idle_ops_per_step")) / 3600
    hours["h100_joint_fused"] = joint_grid_total(at("joint_fused_full_kernels_per_step"),
                                                 at("joint_fused_idle_kernels_per_step")) / 3600
    if all("fused_graph_s_per_step" in row for row in rows):
        hours |= {f"graph_{kind}": grid_total({row["depth"]: row[f"{kind}_graph_s_per_step"] for row in rows},
                                              True) / 3600 for kind in ("eager", "fused")}
        for kind in ("eager", "fused"):
            seconds = {part: {row["depth"]: row[f"joint_{kind}_{part}_graph_s_per_step"] for row in rows}
                       for part in ("full", "idle")}
            hours[f"graph_joint_{kind}"] = joint_grid_total(seconds["full"], seconds["idle"]) / 3600
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
              f"{row['fused_kernels_per_step']:g} ({row['kernel_ratio']:.2f}× fewer; the block: {row['block_ops']} "
              f"ops → {row['block_kernels']:g} kernels); largest parameter difference "
              f"{row['max_parameter_difference']:.1e}")
        print(f"  joint job (12 runs): ops per step {row['joint_full_ops_per_step']}, sitting out "
              f"{row['joint_idle_ops_per_step']}; fused kernels {row['joint_fused_full_kernels_per_step']:g}, "
              f"sitting out {row['joint_fused_idle_kernels_per_step']:g}")
        if "graph_speedup" in row:
            print(f"  CUDA kernels per step {row['eager_cuda_kernels_per_step']} → "
                  f"{row['fused_cuda_kernels_per_step']}; CUDA graph {row['eager_graph_s_per_step'] * 1e3:.2f} → "
                  f"{row['fused_graph_s_per_step'] * 1e3:.2f} ms/step ({row['graph_speedup']:.2f}×)")
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
