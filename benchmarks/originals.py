"""This project against the originals' approach, workload by workload, timed in one process at identical settings.

For each shared workload the benchmark runs the project's function and a plain re-implementation of how the
authors' published code computes the same thing (written here for the benchmark from the descriptions in
docs/decisions/ and the authors' public code, not copied: the same draws, loops, dtypes and per-step work), and
records seconds and the ratio originals / project:

| workload | the originals' approach | the project's function |
|---|---|---|
| daneshmand2021 Fig. 2a (d = 512, n = 4, 50 layers, 20 runs) | a loop over runs and layers, ``np.random.randn(d, d)`` (NumPy's legacy global generator) per layer, H ← BN(W H), ln ‖HᵀH − I/n‖_F (daneshmand2021-fig2a) | ``simulations.gap_through_depth`` (the config's sampler, decision B14) |
| daneshmand2021 Fig. 2b at d = 512 (600 layers, 20 runs) | the same, 600 layers, V not logged | the same |
| joudaki2023 Fig. 4 grid (d = 1000, n = 10, 30 layers, 12 configurations × 10 runs) | Monte Carlo constants per activation; a loop over configurations, runs and layers: ``torch.randn(d, d) * gain / √d`` per layer, float32, the stats (two Gram products, two eigvalsh, two potential gaps) before and after the normalization, one dict per record, a DataFrame at the end (D.0 (A)) | ``simulations.run_grid(item="fig4")`` |
| meterez2024 SGD step (depth 100 and 500; 6 runs) | one run at a time: layers looked up by name in a Python loop, ``optim.SGD``, a shuffled copy of the data per epoch and contiguous batches, the step's accuracy and two ``loss.item()`` (C.0) | the grid's engine step, 6 runs stacked (``meterez_engine.py``) |
| lu2024 PII of a 768 × 3072 and a 4096 × 11008 matrix | a Python loop over the pairs i < j of float32 vectors made contiguous once, SciPy's cosine distance per pair (A.1.1) | ``metrics.pii_chunked`` |

Each workload is timed ``--repeats`` times, the original and the project in turn (A B A B …, so a change of the
shared machine's load reaches both), and the minimum of each is kept. Where the originals' PII loop would take
longer than ``--budget`` seconds (tens of minutes), it is timed on its first pairs and extrapolated to all of
them (the cost of a pair does not depend on which pair it is); the output says so. Writes
``results/originals-<device>-<date>.json``.

    python benchmarks/originals.py            # 10-20 minutes on a 2-core CPU
    python benchmarks/originals.py --only meterez --fused-block   # the meterez2024 steps with the fused block

``--only`` keeps one paper's workloads; ``--fused-block`` times the meterez2024 step with the engine's fused block
(config ``fused_block``) and writes ``...-fused-block.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
import yaml
from scipy.spatial.distance import cosine
from torch import nn

from meterez_engine import BATCH, LR, engine_step  # benchmarks/meterez_engine.py, next to this script

from isonorm.atomic import write_text_atomically
from isonorm.experiments.daneshmand2021.simulations import gap_through_depth
from isonorm.experiments.joudaki2023.simulations import run_grid
from isonorm.metrics import get_activation
from isonorm.metrics.pii import pii_chunked
from isonorm.provenance import provenance

CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternate(repeats: int, original, project) -> tuple[float, float]:
    """The minimum seconds of ``original()`` and ``project()`` over ``repeats`` rounds, the two in turn in each
    round; each callable returns its own seconds."""
    times = [(original(), project()) for _ in range(repeats)]
    return min(t[0] for t in times), min(t[1] for t in times)


# --- daneshmand2021: the BN chain -----------------------------------------------------------------------------


def chain_originals(width: int, batch: int, layers: int, runs: int, small: float, log: bool, seed: int = 0) -> list:
    """V(H_l) (ln V when ``log``) per run and layer, the notebook's way: ``np.random.randn`` per layer from
    NumPy's global generator, rows scaled by their norms through transposes, V = ‖HᵀH − I/n‖_F."""
    np.random.seed(seed)
    eye, out = np.eye(batch), []
    for _ in range(runs):
        h = np.zeros((width, batch))
        h[np.arange(batch), np.arange(batch)] = small
        h[0, 0] = 1.0
        gaps = np.zeros(layers)
        for layer in range(layers):
            h = np.random.randn(width, width) @ h
            h = (h.T / np.linalg.norm(h, axis=1)).T / math.sqrt(width)
            gap = np.linalg.norm(h.T @ h - eye / batch)
            gaps[layer] = np.log(gap) if log else gap
        out.append(gaps)
    return out


def daneshmand(item: str, width: int, layers: int, repeats: int) -> dict:
    cfg = {**yaml.safe_load(CONFIG.read_text())["daneshmand2021"][item], "widths": [width], "layers": layers}
    args = (width, cfg["batch"], layers, cfg["runs"], cfg["h0_small"], item == "fig2a")
    original, project = alternate(repeats, lambda: seconds(lambda: chain_originals(*args)),
                                  lambda: seconds(lambda: gap_through_depth(cfg, item=item)))
    return {"workload": f"daneshmand2021 {item}, d = {width}, n = {cfg['batch']}, {layers} layers, "
                        f"{cfg['runs']} runs", "originals_s": original, "project_s": project,
            "project": f"gap_through_depth, sampler {cfg['sampler']}"}


# --- joudaki2023: the mean-field simulator --------------------------------------------------------------------


def monte_carlo_constants(function, samples: torch.Tensor) -> tuple[float, float, float]:
    """c0, c1, E σ² on the originals' fixed 2·10⁶ normal samples, σ applied once per moment."""
    return (function(samples).mean().item(), (function(samples) * samples).mean().item(),
            (function(samples) ** 2).mean().item())


def gram_stats(x: torch.Tensor) -> dict:
    """The originals' record of one representation: iso gap and γ, each computed twice on a fresh Gram."""
    stats = {}
    for _ in range(2):
        gram = x @ x.t()
        eigenvalues = torch.linalg.eigvalsh(gram)
        stats["iso_gap"] = (torch.log(eigenvalues.mean()) - torch.log(eigenvalues).mean()).item()
        cosines = gram.abs()
        scale = torch.diag(cosines.diag() ** -0.5)
        cosines = scale @ cosines @ scale
        ratios = cosines / (1 - cosines)
        stats["gamma"] = ratios[torch.eye(ratios.size(0), dtype=torch.bool) == 0].max().item()
    return stats


def centering_means(x: torch.Tensor, centering: str, c0: float) -> torch.Tensor:
    if centering == "mf":
        return torch.Tensor([c0])
    return x.mean(dim=1, keepdim=True) if centering == "layer" else torch.Tensor([0])


def layer_originals(x: torch.Tensor, cfg: dict, function, centering: str, c0: float) -> tuple[torch.Tensor, list]:
    """One layer: a fresh W scaled in two passes (gain, then 1/√d), σ(XW + bias), stats, centering, layer norm."""
    width = cfg["widths"][0]
    w = torch.randn(width, width) * cfg["gains"][0] / np.sqrt(width)
    x = function(x @ w + cfg["bias"])
    records = [gram_stats(x)]
    means = centering_means(x, centering, c0)
    x = x - means
    norms = (x**2).mean(dim=1, keepdim=True) ** 0.5
    norm_var = (norms.var() / norms.mean() ** 2).item()
    x = x / norms
    records.append({**gram_stats(x), "mean_avg": means.mean().item(), "norm_avg": norms.mean().item(),
                    "norm_var": norm_var})
    return x, records


def simulator_originals(cfg: dict) -> pd.DataFrame:
    """Every configuration of the grid, one run and one layer at a time, as the originals' notebook."""
    n, width, depth = cfg["batch"], cfg["widths"][0], cfg["depth"]
    samples, rows = torch.randn(cfg["monte_carlo_samples"]), []
    for activation in cfg["activations"]:
        function = get_activation(activation).function
        c0, _, _ = monte_carlo_constants(function, samples)
        for centering in cfg["centerings"]:
            for run in range(cfg["runs"]):
                x = torch.randn(n, width)
                u, s, v = torch.svd(x)
                s[:1] *= cfg["degeneracy"]
                x = u @ torch.diag(s) @ v.t()
                x = x / (x**2).mean() ** 0.5
                key = {"activation": activation, "centering": centering, "run": run}
                rows.append({**key, **gram_stats(x), "l": 0, "layer": "input"})
                x = x / (x**2).mean(dim=1, keepdim=True) ** 0.5
                for layer in range(depth):
                    x, (pre, post) = layer_originals(x, cfg, function, centering, c0)
                    rows += [{**key, **pre, "l": layer + 1, "layer": "pre_norm"},
                             {**key, **post, "l": layer + 1, "layer": "post_norm"}]
    return pd.DataFrame(rows)


def joudaki(repeats: int) -> dict:
    config = yaml.safe_load(CONFIG.read_text())["joudaki2023"]
    cfg = {**config["simulator"], **config["fig4"]}
    original, project = alternate(repeats, lambda: seconds(lambda: simulator_originals(cfg)),
                                  lambda: seconds(lambda: run_grid(cfg, item="fig4")))
    configs = len(cfg["activations"]) * len(cfg["centerings"])
    return {"workload": f"joudaki2023 fig4 grid, d = {cfg['widths'][0]}, n = {cfg['batch']}, {cfg['depth']} layers, "
                        f"{configs} configurations × {cfg['runs']} runs", "originals_s": original, "project_s": project,
            "project": f"run_grid, sampler {cfg['sampler']}"}


# --- meterez2024: one SGD step of the training grid -----------------------------------------------------------


class Sin(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x)


class NamedLayerMLP(nn.Module):
    """C.0's network (order norm_act, torch BN, bias, orthogonal init) as the originals run it: fc_l, norm_l and
    act_l looked up by name in a Python loop, the gain (l + 1)^-a computed per layer."""

    def __init__(self, depth: int, width: int = 100, exponent: float = 0.4, classes: int = 10):
        super().__init__()
        self.depth, self.exponent = depth, exponent
        self.layers = nn.ModuleDict({"fc_0": nn.Linear(3072, width)})
        for layer in range(depth):
            if layer:
                self.layers[f"fc_{layer}"] = nn.Linear(width, width)
            self.layers[f"norm_{layer}"] = nn.BatchNorm1d(width)
            self.layers[f"act_{layer}"] = Sin()
        self.layers[f"fc_{depth}"] = nn.Linear(width, classes)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.view(-1, 3072)
        for layer in range(self.depth):
            gain = (layer + 1) ** -self.exponent
            x = self.layers[f"norm_{layer}"](self.layers[f"fc_{layer}"](x))
            x = self.layers[f"act_{layer}"](x * gain)
        return self.layers[f"fc_{self.depth}"](x)


def epoch_originals(model: nn.Module, optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
    """One epoch as the originals' loop: the loader shuffles a copy of the data, then steps through it in slices."""
    permutation = torch.randperm(len(y))
    x, y = x[permutation], y[permutation]
    running, correct = 0.0, 0
    for start in range(0, len(y), BATCH):
        inputs, labels = x[start:start + BATCH], y[start:start + BATCH]
        outputs = model(inputs)
        loss = F.cross_entropy(outputs, labels)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        correct += outputs.max(1)[1].eq(labels).sum().item()
        loss.item()  # the progress bar's description
        running += loss.item()
        if math.isnan(running):
            raise FloatingPointError("training loss is NaN")


def originals_epoch(depth: int, steps: int) -> Callable[[], None]:
    """An epoch of ``steps`` steps of one run as the originals train it, on random CIFAR-shaped data."""
    torch.manual_seed(depth)
    model = NamedLayerMLP(depth)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = torch.randn(steps * BATCH, 3072), torch.randint(0, 10, (steps * BATCH,))
    return lambda: epoch_originals(model, optimizer, x, y)


def meterez(depth: int, steps: int, repeats: int, fused: bool = False) -> dict:
    epoch = originals_epoch(depth, steps)
    epoch()  # warm-up
    runs = 6  # one grid job: 3 activations × CIFAR-10 and CIFAR-100

    def original() -> float:
        return seconds(epoch) / steps * runs

    original_s, project_s = alternate(repeats, original, lambda: engine_step(
        depth, steps, torch.device("cpu"), cuda_graph=False, fused=fused)[0])
    block = ", with the fused block (config fused_block)" if fused else ""
    return {"workload": f"meterez2024 SGD step, depth {depth}, {runs} runs", "originals_s": original_s,
            "project_s": project_s, "project": f"engine step, 6 runs stacked (seconds per step of all 6 runs){block}"}


# --- lu2024: PII of one matrix --------------------------------------------------------------------------------


def pii_originals(vectors: np.ndarray, budget_s: float) -> tuple[float, float, bool]:
    """Mean |cos| over the pairs i < j of the rows of ``vectors``, one SciPy cosine distance per pair, the
    originals' half-matrix loop; (seconds, PII, extrapolated).

    Stops after ``budget_s`` seconds and extrapolates the time from the pairs done (every pair costs the same)."""
    k = len(vectors)
    all_pairs, pairs, total, start = k * (k - 1) // 2, 0, 0.0, time.perf_counter()
    for i in range(k - 1):
        vector = vectors[i]
        for j in range(i + 1, k):
            total += abs(1.0 - cosine(vector, vectors[j]))
        pairs += k - 1 - i
        elapsed = time.perf_counter() - start
        if elapsed > budget_s and pairs < all_pairs:
            return elapsed * all_pairs / pairs, total / pairs, True
    return time.perf_counter() - start, total / pairs, False


def lu(shape: tuple[int, int], budget_s: float, repeats: int) -> dict:
    w = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    columns = np.ascontiguousarray(w.T.numpy())  # the columns, as the tables; float32 as the checkpoints hold them
    runs = []

    def original() -> float:
        runs.append(pii_originals(columns, budget_s))
        return runs[-1][0]

    original, project = alternate(repeats, original, lambda: seconds(lambda: pii_chunked(w, "columns")))
    _, value, extrapolated = runs[0]
    ours = float(pii_chunked(w, "columns"))
    return {"workload": f"lu2024 PII of the {shape[1]} columns of a {shape[0]} × {shape[1]} matrix",
            "originals_s": original, "project_s": project, "project": "pii_chunked, float64",
            "extrapolated": extrapolated, "agree": bool(abs(value - ours) < 1e-3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds the originals' PII loop may run")
    parser.add_argument("--meterez-steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="timings of each workload; the minimum is kept")
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--only", choices=("daneshmand", "lu", "joudaki", "meterez"), help="one paper's workloads")
    parser.add_argument("--fused-block", action="store_true",
                        help="the meterez2024 step with the fused block (config fused_block); the output file is "
                             "named ...-fused-block.json")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one core each, as a Snakemake job runs; NumPy's threads: set OMP/MKL/OPENBLAS_NUM_THREADS=1
    workloads = [  # the quick ones first: a run cut short on a busy machine keeps them
        ("daneshmand", lambda: daneshmand("fig2a", 512, 50, args.repeats)),
        ("lu", lambda: lu((768, 3072), args.budget, args.repeats)),
        ("joudaki", lambda: joudaki(args.repeats)),
        ("meterez", lambda: meterez(100, args.meterez_steps, args.repeats, args.fused_block)),
        ("meterez", lambda: meterez(500, args.meterez_steps, args.repeats, args.fused_block)),
        ("lu", lambda: lu((4096, 11008), args.budget, args.repeats)),
        ("daneshmand", lambda: daneshmand("fig2b", 512, 600, args.repeats)),
    ]
    workloads = [work for paper, work in workloads if args.only in (None, paper)]
    today = dt.date.today().isoformat()
    out = Path(args.out) / f"originals-cpu-{today}{'-fused-block' if args.fused_block else ''}.json"
    record = {"benchmark": "originals", "date": today, "threads": 1, "repeats": args.repeats,
              "statistic": "minimum over repeats", "command": " ".join(sys.argv), "results": [],
              "provenance": provenance("cpu")}
    for workload in workloads:
        row = workload()
        row["ratio"] = row["originals_s"] / row["project_s"]
        row["load_average_1min"] = os.getloadavg()[0]  # how busy the shared machine was at the workload's end
        note = " (originals extrapolated)" if row.get("extrapolated") else ""
        print(f"{row['workload']}: originals {row['originals_s']:.2f} s, project {row['project_s']:.3f} s "
              f"→ {row['ratio']:.2f}×{note}", flush=True)
        record["results"].append(row)
        record["complete"] = len(record["results"]) == len(workloads)
        write_text_atomically(out, json.dumps(record, indent=1) + "\n")  # after each row: a cut run keeps its rows
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
