"""A prototype of the fused meterez2024 training step: each layer's BatchNorm, gain and activation compiled into one
block (``torch.compile``, Inductor), measured against the engine's eager step (issue 31: the grid at a fraction of
its kernels).

Not the engine yet: the prototype swaps the forward of the grid job's :class:`StackedBNMLP` (built by the grid's
own ``training_grid.grid_training``, as ``meterez_engine.engine_step`` does) for one whose every hidden layer is
``fc`` (the engine's ``baddbmm``) followed by the compiled block ``norm_act``: torch's ``F.batch_norm`` in train
mode over the (run, feature) channels with the running-stat update, the layer's gain as a tensor (so one compiled
graph serves every layer), and each activation group of runs. It reports, per depth:

- seconds per step on this CPU, eager and fused (the minimum of ``--repeats`` epochs of ``--steps`` steps), and
  the largest difference of any parameter after the same steps from the same start (float32);
- operators per step of the eager step (``OpCounter``: forward, backward, update), the operators the block
  replaces (its eager forward and backward, counted alike), and the kernels Inductor generated for the block
  (the ``cpp_fused`` kernels of its compiled forward and backward, read from the generated code); hence the
  kernels per step of the fused step: eager − depth × (block's operators − block's kernels).

On a GPU the step is bound by kernel launches (the engine's CUDA graph runs about 3.9 µs per kernel on an H100,
benchmarks/README.md), so the projected grid hours scale with the kernels per step; Triton may split a block
into more kernels than the CPU's C++ backend does, which the projection states as a range. Usage:

    OMP_NUM_THREADS=1 python benchmarks/meterez_fusion.py --depths 100 500
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
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

from meterez_engine import ACTS, BATCH, GRID_CFG, STACKS  # benchmarks/meterez_engine.py, beside it
from op_count import OpCounter

from isonorm.atomic import write_text_atomically
from isonorm.data import dataset_spec
from isonorm.experiments.meterez2024.training_grid import grid_training
from isonorm.models.bn_mlp import BN_EPS, BN_MOMENTUM
from isonorm.provenance import provenance

RESULTS = Path(__file__).resolve().parent / "results"
SECONDS_PER_KERNEL_H100 = 57.8e-3 / 15_018  # the engine's CUDA graph at depth 1000 (meterez-cuda-2026-11-24.json)
GRID_HOURS_H100 = 28.3  # the paper grid's projected training steps on the H100, eager engine (same file)


def norm_act_block(model):
    """The block of one hidden layer after its ``fc``: BN (train mode, running stats updated), gain, activation."""
    sizes, sigmas = model.group_sizes, [sigma for sigma, _ in model.groups]

    def norm_act(h, weight, bias, running_mean, running_var, gain):
        runs, width, batch = h.shape
        out = F.batch_norm(h.reshape(1, runs * width, batch), running_mean.view(-1), running_var.view(-1),
                           weight.view(-1), bias.view(-1), training=True, momentum=BN_MOMENTUM, eps=BN_EPS)
        z = out.view(runs, width, batch) * gain
        return torch.cat([sigma(chunk) for sigma, chunk in zip(sigmas, torch.split(z, sizes, dim=0))], dim=0)

    return norm_act


def fuse(model, block) -> None:
    """Replace ``model.forward`` by the fused one (train mode, no trace)."""
    gains = [torch.tensor(float(gain)) for gain in model.gains]

    def forward(x, trace=False):
        xt = x.mT if x.dim() == 3 else x.T.expand(model.n_runs, *x.T.shape)
        for layer in range(model.config.depth):
            norm = model.norm[layer]
            xt = block(model.fc[layer](xt), norm.weight, norm.bias, norm.running_mean, norm.running_var, gains[layer])
        logits = model.fc[-1](xt)
        if model.logit_mask is not None:
            logits = logits + model.logit_mask
        return logits.mT

    model.forward = forward


def block_counts(model) -> tuple[int, int]:
    """(operators of the eager block's forward and backward, kernels of the compiled block's)."""
    runs, width = model.n_runs, GRID_CFG["width"]
    args = lambda: (torch.randn(runs, width, BATCH, requires_grad=True), torch.ones(runs, width, requires_grad=True),  # noqa: E731
                    torch.zeros(runs, width, requires_grad=True), torch.zeros(runs, width), torch.ones(runs, width),
                    torch.tensor(0.5))
    block = norm_act_block(model)
    inputs = args()
    with OpCounter() as counter:
        block(*inputs).sum().backward()
    counter.counts["sum"] -= 1  # the .sum() that starts the backward here
    counter.counts["ones_like"] -= 1
    inputs = args()
    _, codes = run_and_get_code(lambda: torch.compile(block, dynamic=False)(*inputs).sum().backward())
    kernels = sum(len(re.findall(r"^\s+cpp_fused_\w+\(", code, re.M)) for code in codes)
    return counter.total, kernels


def timed(job, index, steps: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            job.step._step(index)
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def measure(depth: int, steps: int, repeats: int) -> dict:
    stack, n = STACKS[0], steps * BATCH
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(len(stack), n, 3072, generator=generator)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (n,), generator=generator) for name in stack])
    index = torch.randint(0, n, (2 * len(ACTS), BATCH), generator=generator)
    jobs = {kind: grid_training({**GRID_CFG, "cuda_graph": False}, stack, ACTS, depth, x, y)
            for kind in ("eager", "fused")}
    model = jobs["fused"].step.model
    fuse(model, torch.compile(norm_act_block(model), dynamic=False))
    start = time.perf_counter()
    jobs["fused"].step._step(index)  # compiles
    compile_s = time.perf_counter() - start
    jobs["eager"].step._step(index)
    with OpCounter() as counter:
        jobs["eager"].step._step(index)
    jobs["fused"].step._step(index)  # both have taken the same steps from the same start
    seconds = {kind: timed(job, index, steps, repeats) for kind, job in jobs.items()}
    diff = max((a - b).abs().max().item() for a, b in zip(jobs["eager"].step.model.parameters(), model.parameters()))
    block_ops, block_kernels = block_counts(model)
    fused_kernels = counter.total - depth * (block_ops - block_kernels)
    return {"depth": depth, "runs": model.n_runs, "eager_s_per_step": seconds["eager"],
            "fused_s_per_step": seconds["fused"], "cpu_speedup": seconds["eager"] / seconds["fused"],
            "compile_s": compile_s, "max_parameter_difference": diff, "eager_ops_per_step": counter.total,
            "block_ops": block_ops, "block_kernels_cpu": block_kernels, "fused_kernels_per_step": fused_kernels,
            "kernel_ratio": counter.total / fused_kernels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for depth in args.depths:
        row = measure(depth, args.steps, args.repeats)
        rows.append(row)
        print(f"depth {depth}: eager {row['eager_s_per_step'] * 1e3:.1f} ms/step, fused "
              f"{row['fused_s_per_step'] * 1e3:.1f} ms/step ({row['cpu_speedup']:.2f}×, compiled in "
              f"{row['compile_s']:.0f} s); ops/kernels per step {row['eager_ops_per_step']} → "
              f"{row['fused_kernels_per_step']} ({row['kernel_ratio']:.2f}× fewer; the block: {row['block_ops']} ops → "
              f"{row['block_kernels_cpu']} kernels); largest parameter difference {row['max_parameter_difference']:.1e}")
    out = RESULTS / f"meterez-fusion-cpu-{dt.date.today().isoformat()}.json"
    write_text_atomically(out, json.dumps({
        "benchmark": "meterez_fusion", "date": dt.date.today().isoformat(), "threads": 1,
        "statistic": "minimum over repeats", "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "load_average_1min_at_end": os.getloadavg()[0], "results": rows, "args": vars(args),
        "h100_seconds_per_kernel": SECONDS_PER_KERNEL_H100, "h100_grid_hours_engine": GRID_HOURS_H100,
        "provenance": provenance("cpu")}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
