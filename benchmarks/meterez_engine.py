"""Steps per second and ops per step of the meterez2024 training engine vs a plain eager loop; the grid cost.

Model: the training architecture of meterez2024-fig4 (width 100, batch 100, torch BN + bias, orthogonal, gain
exponent 0.4, plain SGD lr 0.001) on CIFAR-shaped random inputs (3072 features). Methods:

- ``eager``: one ``single_run_reference`` network (nn.Sequential, 10 classes), ``torch.optim.SGD``,
  ``loss.item()`` per step, as run.py does; every run trained one after another → steps/s of ONE run.
- ``engine``: what one grid job runs (config ``stacks``), built by the grid's own
  ``training_grid.grid_training``: :class:`StackedBNMLP` with sin, tanh and identity × CIFAR-10 and
  CIFAR-100 (10 and 100 classes) stacked, R = 6, and :class:`StackedSGDStep` (device-side gather from both
  data sets, foreach SGD, on CUDA one CUDA-graph replay per step), trained by the engine's epoch loop
  (``isonorm.train.train_epochs``: the job's per-run batch orders, the per-epoch loss sync) for two epochs of
  ``--steps`` steps; the second epoch is timed → steps/s of the stack, each step advancing all six runs.

Projection of the ``paper`` grid (4 data sets × 3 activations × depths {100, 500, 1000} × 1000 epochs; 500
steps/epoch for CIFAR, 600 for MNIST/FashionMNIST; C.Z): eager trains 36 runs one by one; the engine
runs one job per (stack, depth), cifar10+cifar100 and mnist+fashionmnist, each step at the engine's time at
that depth (linear in depth between the measured depths; the MNIST stack's smaller first layer is counted at
CIFAR's cost). The per-epoch test pass and measurement are not included (≈ 5–10 % more, C.Z).

Ops per step: on a GPU a width-100 step is bound by kernel launches, so the benchmark also counts the ATen
operators one step dispatches (``benchmarks/op_count.py``, ``OpCounter``: forward, backward and update; views and
allocations excluded) — a device-independent count that a CPU can measure. From the engine's count it derives
the grid's total ops and the time per op at which the grid would take 24 h (the goal) and 8 h
(stretch): a GPU that executes the captured graph faster than that per op meets the goal. Usage:

    python benchmarks/meterez_engine.py --device auto --depths 100 1000 --steps 20
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from op_count import OpCounter  # benchmarks/op_count.py, next to this script

from isonorm.atomic import write_text_atomically
from isonorm.data import dataset_spec
from isonorm.experiments.meterez2024.training_grid import grid_training
from isonorm.models.bn_mlp import BNMLPConfig, single_run_reference
from isonorm.provenance import provenance
from isonorm.runtime import generator, resolve_device

ACTS = ("sin", "tanh", "identity")  # meterez2024-fig4 panels
STEPS_PER_EPOCH = {"cifar10": 500, "cifar100": 500, "mnist": 600, "fashionmnist": 600}  # 50000/100, 60000/100
STACKS = (("cifar10", "cifar100"), ("mnist", "fashionmnist"))  # config.yaml meterez2024: training: stacks
GRID_DEPTHS = (100, 500, 1000)  # meterez2024-fig4
EPOCHS = 1000  # decision C5 "paper" preset
GOAL_HOURS = {"goal": 24.0, "stretch": 8.0}  # the grid's speed goal on one H200
N_SAMPLES, BATCH, LR = 5000, 100, 0.001  # random data held on the device (eager); meterez2024-fig4 batch and lr
GRID_CFG = {  # the keys of config.yaml meterez2024: training: that grid_training reads, at meterez2024-fig4's values
    "width": 100, "batch_size": BATCH, "lr": LR, "epochs": 2, "activations": list(ACTS), "gain_exponent": 0.4,
    "norm": "torch_bn", "bias": True, "init": "orthogonal", "checkpoint_every": 1, "measure_on_copy": False,
    "cuda_graph": "auto", "fused_block": False,
}


def _config(depth: int, classes: int) -> BNMLPConfig:
    return BNMLPConfig(in_features=3072, width=100, out_features=classes, depth=depth, norm="torch_bn", bias=True,
                       gain_exponent=0.4)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(one_step, steps: int, device: torch.device) -> float:
    _sync(device)
    start = time.perf_counter()
    for i in range(steps):
        one_step(i)
    _sync(device)
    return (time.perf_counter() - start) / steps


def eager_step(depth: int, steps: int, device: torch.device) -> tuple[float, int]:
    """One run, run.py style (nn.Sequential + optim.SGD + loss.item() per step): seconds and ops per step."""
    x = torch.randn(N_SAMPLES, 3072, device=device)
    y = torch.randint(0, 10, (N_SAMPLES,), device=device)
    model = single_run_reference(_config(depth, 10), generator("bench", depth, "sin"), "sin").to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def one(_: int) -> None:
        idx = torch.randint(0, N_SAMPLES, (BATCH,), device=device)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()

    one(0)
    with OpCounter() as counter:
        one(0)
    return _timed(one, steps, device), counter.total


def engine_step(depth: int, steps: int, device: torch.device, cuda_graph: bool | None,
                fused: bool = False) -> tuple[float, int | None]:
    """One grid job's stack (3 activations × CIFAR-10 and CIFAR-100) as ``grid_training`` builds it, trained by
    the engine for two epochs of ``steps`` steps on random data: seconds per step of the second epoch (the
    first holds the warm-up) and ops per step (counted on an eager twin of the step: a graph replay
    dispatches no operator). ``fused``: with the fused block (config ``fused_block``); ops are then None, its
    compiled kernels being no ATen operators (``meterez_fusion.py`` counts them)."""
    stack, n = STACKS[0], steps * BATCH
    x = torch.randn(len(stack), n, 3072, device=device)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (n,), device=device) for name in stack])
    cfg = {**GRID_CFG, "cuda_graph": "auto" if cuda_graph is None else cuda_graph, "fused_block": fused}
    job = grid_training(cfg, stack, ACTS, depth, x, y)
    ends: list[float] = []

    def clock(model, epoch: int) -> dict:
        ends.append(time.perf_counter())  # called after the epoch's loss sync, as the grid's measurement is
        return {}

    job.train(measure=clock)
    index = torch.randint(0, n, (len(job.runs), BATCH), device=device)
    if fused:
        return (ends[2] - ends[1]) / steps, None
    with OpCounter() as counter:
        job.step._step(index)  # the captured computation, run eagerly once
    return (ends[2] - ends[1]) / steps, counter.total


def _at_grid_depth(per_depth: dict[int, float], depth: int) -> float:
    """``per_depth`` at a grid depth: linear in depth between measured depths, proportional from one."""
    depths = sorted(per_depth)
    if len(depths) == 1:
        return per_depth[depths[0]] * depth / depths[0]
    return float(np.interp(depth, depths, [per_depth[d] for d in depths]))


def grid_steps_per_depth(engine: bool) -> int:
    """Steps of the paper grid at one depth: 36/3 runs one by one (eager), or one stack job per data-set
    stack (engine)."""
    if engine:
        return sum(STEPS_PER_EPOCH[stack[0]] for stack in STACKS) * EPOCHS
    return len(ACTS) * sum(STEPS_PER_EPOCH.values()) * EPOCHS


def grid_total(per_step: dict[int, float], engine: bool) -> float:
    """Σ over the grid's steps of ``per_step`` (seconds or ops per step, interpolated in depth)."""
    return sum(grid_steps_per_depth(engine) * _at_grid_depth(per_step, depth) for depth in GRID_DEPTHS)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``argv``, default ``sys.argv[1:]``); benchmarks/gpu_acceptance.py --dry-run checks its own."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--no-graph", action="store_true", help="eager engine even on CUDA")
    parser.add_argument("--out", default="benchmarks/results")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_arguments()
    device = resolve_device(args.device)
    torch.set_grad_enabled(True)
    eager, engine, eager_ops, engine_ops = {}, {}, {}, {}
    runs = len(ACTS) * len(STACKS[0])
    for depth in args.depths:
        eager[depth], eager_ops[depth] = eager_step(depth, args.steps, device)
        engine[depth], engine_ops[depth] = engine_step(depth, args.steps, device, False if args.no_graph else None)
        print(f"depth {depth}: eager {1 / eager[depth]:.2f} steps/s (1 run), {eager_ops[depth]} ops/step; "
              f"engine {1 / engine[depth]:.2f} steps/s ({runs} runs/step), {engine_ops[depth]} ops/step → per "
              f"run-step {runs * eager[depth] / engine[depth]:.2f}× faster, "
              f"{runs * eager_ops[depth] / engine_ops[depth]:.2f}× fewer ops")
    hours = {"eager": grid_total(eager, False) / 3600, "engine": grid_total(engine, True) / 3600}
    grid_ops = {"eager": grid_total(eager_ops, False), "engine": grid_total(engine_ops, True)}
    break_even_us = {goal: h * 3600 / grid_ops["engine"] * 1e6 for goal, h in GOAL_HOURS.items()}
    print(f"projected paper grid on {device}: eager {hours['eager']:.1f} h, engine {hours['engine']:.1f} h "
          "(training steps only)")
    print(f"paper grid: {grid_ops['eager']:.3g} ops eager, {grid_ops['engine']:.3g} ops engine; the engine meets "
          f"24 h at ≤ {break_even_us['goal']:.2f} µs/op and 8 h at ≤ {break_even_us['stretch']:.2f} µs/op")
    record = {
        "benchmark": "meterez_engine", "device": str(device), "steps": args.steps,
        "eager_s_per_step": eager, "engine_s_per_step": engine, "runs_per_engine_step": runs,
        "eager_ops_per_step": eager_ops, "engine_ops_per_step": engine_ops,
        "cuda_graph": device.type == "cuda" and not args.no_graph,
        "projected_grid_hours": hours, "grid_ops": grid_ops, "break_even_us_per_op": break_even_us,
        "provenance": provenance(),
    }
    name = f"meterez-{device.type}-{dt.date.today().isoformat()}.json"
    path = Path(args.out) / name
    write_text_atomically(path, json.dumps(record, indent=2, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
