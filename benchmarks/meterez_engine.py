"""Steps per second of the meterez2024 training engine vs a plain eager one-model loop, and the grid cost.

Model: the training architecture of spec C-Fig4 (width 100, batch 100, torch BN + bias, orthogonal, gain
exponent 0.4, plain SGD lr 0.001) on CIFAR-10-shaped random inputs (3072 features, 10 classes). Methods:

- ``eager``: one ``single_run_reference`` network (nn.Sequential), ``torch.optim.SGD``, ``loss.item()`` per
  step, as run.py does; three activations trained one after another → steps/s of ONE run.
- ``engine``: :class:`StackedBNMLP` with the three activations stacked (R = 3) and :class:`StackedSGDStep`
  (device-side gather, foreach SGD, on CUDA one CUDA-graph replay per step) → steps/s of the stack, each
  step advancing all R runs.

Projection of the ``paper`` grid (4 data sets × 3 activations × depths {100, 500, 1000} × 1000 epochs; 500
steps/epoch for CIFAR, 600 for MNIST/FashionMNIST; spec C.Z): with the engine one job = one (data set, depth)
trains all 3 activations, so grid steps = Σ_datasets Σ_depths steps_per_epoch · epochs, each at the
engine's time per step at that depth (linear interpolation in depth between the measured depths). The
per-epoch test pass and measurement are not included (≈ 5–10 % more, spec C.Z). Usage:

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

from isonorm.atomic import write_text_atomically
from isonorm.models.bn_mlp import BNMLPConfig, StackedBNMLP, single_run_reference
from isonorm.provenance import provenance
from isonorm.runtime import generator, resolve_device
from isonorm.train.fast_step import StackedSGDStep

ACTS = ("sin", "tanh", "identity")  # spec C-Fig4 panels
STEPS_PER_EPOCH = {"cifar10": 500, "cifar100": 500, "mnist": 600, "fashionmnist": 600}  # 50000/100, 60000/100
GRID_DEPTHS = (100, 500, 1000)  # spec C-Fig4
EPOCHS = 1000  # decision C5 "paper" preset


def _config(depth: int) -> BNMLPConfig:
    return BNMLPConfig(in_features=3072, width=100, out_features=10, depth=depth, norm="torch_bn", bias=True,
                       gain_exponent=0.4)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def eager_seconds_per_step(depth: int, steps: int, device: torch.device) -> float:
    """One run at a time, run.py style (nn.Sequential + optim.SGD + loss.item() per step)."""
    x = torch.randn(5000, 3072, device=device)
    y = torch.randint(0, 10, (5000,), device=device)
    model = single_run_reference(_config(depth), generator("bench", depth, "sin"), "sin").to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    def one(i: int) -> None:
        idx = torch.randint(0, 5000, (100,), device=device)
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
    one(0)
    _sync(device)
    start = time.perf_counter()
    for i in range(steps):
        one(i)
    _sync(device)
    return (time.perf_counter() - start) / steps


def engine_seconds_per_step(depth: int, steps: int, device: torch.device, cuda_graph: bool | None) -> float:
    """All three activations stacked; one call advances every run by one step."""
    x = torch.randn(5000, 3072, device=device)
    y = torch.randint(0, 10, (5000,), device=device)
    model = StackedBNMLP(_config(depth), [generator("bench", depth, a) for a in ACTS], activations=ACTS).to(device)
    step = StackedSGDStep(model, x, y, len(ACTS), 100, 0.001, cuda_graph=cuda_graph)
    index = torch.randint(0, 5000, (steps + 1, len(ACTS), 100), device=device)
    step(index[0])
    _sync(device)
    start = time.perf_counter()
    for i in range(1, steps + 1):
        step(index[i])
    step.loss_sum.cpu()  # the engine syncs once per epoch; count one sync
    _sync(device)
    return (time.perf_counter() - start) / steps


def grid_hours(seconds_per_step: dict[int, float], runs_per_job: int) -> float:
    """Projected hours of the paper grid when one job holds ``runs_per_job`` activations of one (data set,
    depth) and a step costs ``seconds_per_step`` (interpolated linearly in depth)."""
    depths = sorted(seconds_per_step)
    total = 0.0
    for depth in GRID_DEPTHS:
        per_step = float(np.interp(depth, depths, [seconds_per_step[d] for d in depths])) if len(depths) > 1 \
            else seconds_per_step[depths[0]] * depth / depths[0]
        jobs = len(ACTS) // runs_per_job
        total += sum(STEPS_PER_EPOCH.values()) * EPOCHS * per_step * jobs
    return total / 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--no-graph", action="store_true", help="eager engine even on CUDA")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    device = resolve_device(args.device)
    torch.set_grad_enabled(True)
    eager, engine = {}, {}
    for depth in args.depths:
        eager[depth] = eager_seconds_per_step(depth, args.steps, device)
        engine[depth] = engine_seconds_per_step(depth, args.steps, device, False if args.no_graph else None)
        print(f"depth {depth}: eager {1 / eager[depth]:.2f} steps/s (1 run); engine {1 / engine[depth]:.2f} "
              f"steps/s ({len(ACTS)} runs/step) → speed-up per run-step "
              f"{len(ACTS) * eager[depth] / engine[depth]:.2f}×")
    naive_h, engine_h = grid_hours(eager, 1), grid_hours(engine, len(ACTS))
    print(f"projected paper grid on {device}: eager {naive_h:.1f} h, engine {engine_h:.1f} h (training steps only)")
    record = {
        "benchmark": "meterez_engine", "device": str(device), "steps": args.steps,
        "eager_s_per_step": eager, "engine_s_per_step": engine, "runs_per_engine_step": len(ACTS),
        "cuda_graph": device.type == "cuda" and not args.no_graph,
        "projected_grid_hours": {"eager": naive_h, "engine": engine_h}, "provenance": provenance(),
    }
    name = f"meterez-{device.type}-{dt.date.today().isoformat()}.json"
    path = Path(args.out) / name
    write_text_atomically(path, json.dumps(record, indent=2, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
