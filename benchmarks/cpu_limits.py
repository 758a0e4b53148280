"""How close the project's CPU workloads come to what this machine can do, on one thread.

The machine's rates, measured here: a float32 matrix product's FLOP/s (2048 × 2048 × 2048, the BLAS torch ships)
and the normal draws per second of ``torch.randn`` in float32 (the fastest generator at hand; NumPy's is measured
beside it). Each workload is timed with the project's own function, and its irreducible work is counted from its
settings: the normal draws it needs and the floating-point operations of its matrix products. Its *limit* is the
seconds that work takes at the machine's rates (draws / draw rate + FLOP / FLOP rate); *at limit* = limit /
measured seconds, 100 % meaning nothing is left but the draws and the products. The meterez2024 step's products
are small (6 runs' 100 × 100 by 100 × 100, batched), which no BLAS runs at a 2048³ product's rate: its *shape
limit* takes them at the rate this machine reaches for that product (``stacked_100_flop_per_s``, measured beside
the others), and the step is timed with the fused block too (config ``fused_block``).

What the meterez2024 step's time is made of, in the same round: its matrix products and SGD update alone, in the
stack's layout with weights and saved activations of the step's sizes, so as cold in the cache (``products_work``);
the engine's step with each hidden layer's block reduced to one elementwise pass each way
(``step_with_one_pass_blocks``: no batch statistics, no gain, no activation); and the originals' approach
(``originals.py``'s stand-in, six runs one after another), against which the issue's goal of 2× is set.

| workload | counted work |
|---|---|
| daneshmand2021 Fig. 3, its largest cell (d = 4096, n = 90, 10 runs; ``--layers`` of its 1000) | per layer and run: d·n draws, the n × d × n Gram product (the spectrum sampler, decision B14) |
| joudaki2023 Fig. 4 grid, the paper configuration (``simulations.run_grid``) | per layer and run: d² draws of W (the originals' ``direct`` sampler), the n × d × d product X W |
| meterez2024 training step, a grid job's stack of 6 runs (``meterez_engine.engine_step``), depths 100 and 500 | the products of the forward (2·B·Σ in·out per run), the weights' gradients and the inputs' gradients (all but the data's); the operators one step dispatches (``OpCounter``) and the seconds per operator; the parts of its time (above) |

Each round measures the rates, then every workload (minimum of ``--repeats`` timings); the medians over
``--rounds`` rounds are kept, as the CPU's clock moves between rounds. Run on an otherwise idle machine; writes
``results/cpu-limits-<date>.json``:

    OMP_NUM_THREADS=1 python benchmarks/cpu_limits.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import time
from pathlib import Path
from typing import Callable
from unittest import mock

import numpy as np
import torch
import yaml

from meterez_engine import ACTS, BATCH, GRID_CFG, LR, STACKS, engine_step  # benchmarks/meterez_engine.py, beside it
from originals import originals_epoch  # benchmarks/originals.py, beside it

from isonorm.atomic import write_text_atomically
from isonorm.experiments.daneshmand2021.simulations import _smallest_sigma_min
from isonorm.experiments.joudaki2023.simulations import run_grid
from isonorm.models.bn_mlp import FUSED_LAYERS, StackedBNMLP
from isonorm.provenance import provenance

CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"
RESULTS = Path(__file__).resolve().parent / "results"


def best_of(repeats: int, work) -> float:
    """The minimum wall seconds of ``repeats`` calls of ``work`` (after one untimed call)."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def synced(work: Callable[[], None], device: torch.device) -> Callable[[], None]:
    """``work`` that returns once the device has finished it."""
    def run() -> None:
        work()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return run


def machine_rates(repeats: int) -> dict:
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    sgemm = 2 * 2048**3 / best_of(repeats, lambda: a @ b)
    # the meterez2024 step's own products: 6 runs' 100 × 100 weights by 100 × 100 activations (width and batch
    # 100), which no BLAS runs at a 2048³ product's rate; 100 of them per timing
    runs, width = 2 * len(ACTS), GRID_CFG["width"]
    w, h = torch.randn(runs, width, width), torch.randn(runs, width, BATCH)
    products = 100
    small = products * 2 * runs * width * width * BATCH / best_of(
        repeats, lambda: [torch.bmm(w, h) for _ in range(products)])
    draws = 10 * 4096 * 90  # the size of one Fig. 3 layer's draw
    generator = torch.Generator().manual_seed(0)
    torch_rate = draws / best_of(repeats, lambda: torch.randn(draws, generator=generator))
    rng, out = np.random.Generator(np.random.PCG64(0)), np.empty(draws, dtype=np.float32)
    numpy_rate = draws / best_of(repeats, lambda: rng.standard_normal(out=out, dtype=np.float32))
    return {"sgemm_flop_per_s": sgemm, "stacked_100_flop_per_s": small, "randn_per_s": torch_rate,
            "numpy_pcg64_per_s": numpy_rate}


def limit(draws: float, flop: float, rates: dict) -> float:
    return draws / rates["randn_per_s"] + flop / rates["sgemm_flop_per_s"]


def fig3_work(layers: int, runs: int, d: int, n: int) -> tuple[int, int]:
    """(draws, FLOP) of ``layers`` layers of the spectrum chain: a (d, n) draw and an n × d × n product per run."""
    return layers * runs * d * n, layers * runs * 2 * n * n * d


def meterez_step_flop(depth: int, runs: int, width: int = 100, inputs: int = 3072, logits: int = 100) -> int:
    """FLOP of the matrix products of one training step of ``runs`` stacked networks: the forward's
    2·B·Σ in·out, then as much again for the weights' gradients, and for the inputs' gradients of every layer but
    the first (the data need none)."""
    first = 2 * BATCH * inputs * width
    forward = first + 2 * BATCH * ((depth - 1) * width * width + width * logits)
    return runs * (3 * forward - first)


def daneshmand_fig3(rates: dict, layers: int, repeats: int) -> dict:
    d, n, runs = 4096, 90, 10
    gen = torch.Generator().manual_seed(0)
    h0 = torch.randn(runs, d, n, dtype=torch.float64, generator=gen)
    h0 = h0 / h0.flatten(1).norm(dim=1)[:, None, None]
    seconds = best_of(repeats, lambda: _smallest_sigma_min(h0, layers, gen, "spectrum"))
    draws, flop = fig3_work(layers, runs, d, n)
    return {"workload": f"daneshmand2021 Fig. 3 cell d = {d}, n = {n}, {runs} runs, {layers} layers (spectrum)",
            "seconds": seconds, "draws": draws, "flop": flop, "limit_s": limit(draws, flop, rates)}


def joudaki_fig4(rates: dict, repeats: int) -> dict:
    config = yaml.safe_load(CONFIG.read_text())["joudaki2023"]
    cfg = {**config["simulator"], **config["fig4"]}
    d, n = cfg["widths"][0], cfg["batch"]
    layers = len(cfg["activations"]) * len(cfg["centerings"]) * cfg["runs"] * cfg["depth"]
    seconds = best_of(repeats, lambda: run_grid(cfg, item="fig4"))
    draws = layers * d * d if cfg["sampler"] == "direct" else layers * n * d
    flop = layers * 2 * n * d * d
    return {"workload": f"joudaki2023 Fig. 4 grid, d = {d}, n = {n}, {layers} layers in all (sampler "
                        f"{cfg['sampler']})", "seconds": seconds, "draws": draws, "flop": flop,
            "limit_s": limit(draws, flop, rates)}


def products_work(depth: int, runs: int, width: int = 100, inputs: int = 3072,
                  logits: int = 100) -> Callable[[], None]:
    """One step's matrix products and SGD update alone, in the stack's layout: forward every weight (runs, out,
    in) times the activations (runs, in, B), keeping each layer's input; backward every weight's gradient and every
    input's gradient but the data's; then W -= lr · gradient. Nothing else of the step (the count of
    ``meterez_step_flop``)."""
    generator = torch.Generator().manual_seed(depth)
    sizes = [inputs] + [width] * depth + [logits]
    weights = [torch.randn(runs, out, fan_in, generator=generator) / fan_in**0.5
               for fan_in, out in zip(sizes, sizes[1:])]
    data = torch.randn(runs, inputs, BATCH, generator=generator)

    def step() -> None:
        saved, x = [], data
        for weight in weights:
            saved.append(x)
            x = torch.bmm(weight, x)
        grad = torch.ones_like(x)
        for layer in reversed(range(len(weights))):
            weight_grad = torch.bmm(grad, saved[layer].mT)
            if layer:
                grad = torch.bmm(weights[layer].mT, grad)
            weights[layer].add_(weight_grad, alpha=-LR)

    return step


def one_pass_block(model: StackedBNMLP) -> StackedBNMLP:
    """``fuse_norm_act`` for :func:`step_with_one_pass_blocks`: each hidden layer's block reduced to one elementwise
    pass each way (h plus a scalar; its backward sums the gradient for it), the fc bias and BN's weight and bias
    kept in the graph times zero, so that the step still computes and applies a gradient for each of them, as the
    real step does."""
    def block(h, bias, gain, weight, shift, *running_stats):
        return h + (bias.sum() + weight.sum() + shift.sum()) * 0

    model.fused_span = model.layer_span(block)  # eager: no compiled call's cost either
    return model


def step_with_one_pass_blocks(depth: int, steps: int) -> float:
    """Seconds per step of the engine's step with :func:`one_pass_block` as every hidden layer's block: the step
    with blocks of almost no cost."""
    with mock.patch.object(StackedBNMLP, "fuse_norm_act", one_pass_block):
        return engine_step(depth, steps, torch.device("cpu"), None, fused=True)[0]


def originals_step(depth: int, steps: int, runs: int, repeats: int) -> float:
    """Seconds per step of ``runs`` runs as the originals train them, one after another (``originals.py``)."""
    return best_of(repeats, originals_epoch(depth, steps)) / steps * runs


def meterez_step(rates: dict, depth: int, steps: int, repeats: int) -> dict:
    """The engine's step, eager and with the fused block (config ``fused_block``), against the limit at the 2048³
    product's rate and at the rate of its own stacked 100 × 100 products (``shape_limit_s``); what its time is made
    of (its products and update alone, the step with one-pass blocks) and the originals' step beside it."""
    seconds, ops = engine_step(depth, steps, torch.device("cpu"), None)
    fused, _ = engine_step(depth, steps, torch.device("cpu"), None, fused=True)
    runs = 2 * len(ACTS)  # CIFAR-10 and CIFAR-100 × the activations; 100 logits (CIFAR-10's padded)
    flop = meterez_step_flop(depth, runs, GRID_CFG["width"])
    shape_limit = flop / rates["stacked_100_flop_per_s"]
    return {"workload": f"meterez2024 step, depth {depth}, {runs} runs stacked", "seconds": seconds, "draws": 0,
            "flop": flop, "limit_s": limit(0, flop, rates), "ops": ops, "us_per_op": seconds / ops * 1e6,
            "shape_limit_s": shape_limit, "at_shape_limit": shape_limit / seconds, "fused_seconds": fused,
            "fused_at_shape_limit": shape_limit / fused, "span_layers": FUSED_LAYERS,
            "products_seconds": best_of(repeats, products_work(depth, runs, GRID_CFG["width"])),
            "one_pass_blocks_seconds": step_with_one_pass_blocks(depth, steps),
            "originals_seconds": originals_step(depth, steps, runs, repeats)}


def one_round(args: argparse.Namespace) -> tuple[dict, list[dict]]:
    """The machine's rates, then every workload against them (measured back to back: the CPU's clock drifts)."""
    rates = machine_rates(args.repeats)
    rows = [daneshmand_fig3(rates, args.layers, args.repeats), joudaki_fig4(rates, args.repeats),
            *(meterez_step(rates, depth, args.steps, args.repeats) for depth in args.depths)]
    for row in rows:
        row["at_limit"] = row["limit_s"] / row["seconds"]
        row["draw_share_of_limit"] = (row["draws"] / rates["randn_per_s"]) / row["limit_s"]
    return rates, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timings of each workload per round; the minimum")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of rates and workloads; the median is kept")
    parser.add_argument("--layers", type=int, default=50, help="layers of the Fig. 3 cell timed (of 1000)")
    parser.add_argument("--steps", type=int, default=10, help="steps of a timed meterez2024 epoch")
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 500])
    args = parser.parse_args()
    torch.set_num_threads(1)
    rounds = [one_round(args) for _ in range(args.rounds)]
    rates = {key: statistics.median(r[key] for r, _ in rounds) for key in rounds[0][0]}
    print(f"sgemm {rates['sgemm_flop_per_s'] / 1e9:.1f} GFLOP/s (6 × 100³ batched: "
          f"{rates['stacked_100_flop_per_s'] / 1e9:.1f}); torch.randn {rates['randn_per_s'] / 1e6:.0f} M "
          f"draws/s (NumPy PCG64 {rates['numpy_pcg64_per_s'] / 1e6:.0f} M/s); one thread, medians of "
          f"{args.rounds} rounds")
    summary = []
    for index, first in enumerate(rounds[0][1]):
        per_round = [rows[index] for _, rows in rounds]
        medians = [key for key in ("seconds", "limit_s", "at_limit", "draw_share_of_limit", "shape_limit_s",
                                   "at_shape_limit", "fused_seconds", "fused_at_shape_limit", "products_seconds",
                                   "one_pass_blocks_seconds", "originals_seconds") if key in first]
        row = {**first, **{key: statistics.median(r[key] for r in per_round) for key in medians},
               "at_limit_range": [min(r["at_limit"] for r in per_round), max(r["at_limit"] for r in per_round)]}
        if "ops" in row:
            row["us_per_op"] = row["seconds"] / row["ops"] * 1e6
        summary.append(row)
        extra = f", {row['ops']} ops, {row['us_per_op']:.1f} µs/op" if "ops" in row else ""
        if "shape_limit_s" in row:
            extra += (f"; at its products' own rate {row['at_shape_limit']:.0%} at limit, with the fused block "
                      f"{row['fused_seconds']:.3f} s, {row['fused_at_shape_limit']:.0%}; its products and update "
                      f"alone {row['products_seconds']:.3f} s, the step with one-pass blocks "
                      f"{row['one_pass_blocks_seconds']:.3f} s; the originals {row['originals_seconds']:.3f} s "
                      f"({row['originals_seconds'] / row['fused_seconds']:.2f}× the fused step)")
        low, high = row["at_limit_range"]
        print(f"{row['workload']}: {row['seconds']:.3f} s, limit {row['limit_s']:.3f} s ({row['at_limit']:.0%} at "
              f"limit, {low:.0%}–{high:.0%} over the rounds; draws {row['draw_share_of_limit']:.0%} of the limit)"
              f"{extra}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"cpu-limits-{dt.date.today().isoformat()}.json"
    write_text_atomically(out, json.dumps({
        "benchmark": "cpu_limits", "date": dt.date.today().isoformat(), "threads": 1,
        "statistic": "median over rounds of the minimum over repeats",
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "load_average_1min_at_end": os.getloadavg()[0], "rates": rates, "workloads": summary,
        "rounds": [{"rates": r, "workloads": rows} for r, rows in rounds], "args": vars(args),
        "provenance": provenance("cpu")}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
