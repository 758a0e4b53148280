"""This project against the originals' approach, workload by workload, timed in one process at identical settings.

For each shared workload the benchmark runs the project's function and a plain re-implementation of how the
authors' published code computes the same thing (written here for the benchmark from the descriptions in
docs/decisions/, not copied), and records seconds and the ratio originals / project:

| workload | the originals' approach | the project's function |
|---|---|---|
| daneshmand2021 Fig. 2a (d = 512, n = 4, 50 layers, 20 runs) | a loop over runs and layers, ``np.random.randn(d, d)`` per layer, H ← BN(W H), V in NumPy (B-Fig2a) | ``simulations.gap_through_depth`` (the config's sampler, decision B14) |
| daneshmand2021 Fig. 2b at d = 512 (600 layers, 20 runs) | the same, 600 layers | the same |
| joudaki2023 Fig. 4 grid (d = 1000, n = 10, 30 layers, 12 configurations × 10 runs) | a loop over configurations, runs and layers: ``torch.randn(d, d)`` per layer, float32, stats per layer (D.0 (A)) | ``simulations.run_grid(item="fig4")`` |
| meterez2024 SGD step (depth 100 and 500; 6 runs) | one run at a time, ``nn.Sequential`` + ``optim.SGD``, ``loss.item()`` per step (C.0) | the grid's engine step, 6 runs stacked (``meterez_engine.py``) |
| lu2024 PII of a 768 × 3072 and a 4096 × 11008 matrix | a Python loop over vector pairs with SciPy's cosine distance (A.1.1) | ``metrics.pii_chunked`` |

Where the originals' loop would take longer than ``--budget`` seconds (the 11008-column PII: tens of minutes),
it is timed on its first pairs and extrapolated to all of them; the output says so. Writes
``results/originals-<device>-<date>.json``.

    python benchmarks/originals.py            # a few minutes on a 2-core CPU
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from scipy.spatial.distance import cosine

from meterez_engine import engine_step, eager_step  # benchmarks/meterez_engine.py, next to this script

from isonorm.atomic import write_text_atomically
from isonorm.experiments.daneshmand2021.simulations import gap_through_depth
from isonorm.experiments.joudaki2023.simulations import run_grid
from isonorm.metrics import get_activation
from isonorm.metrics.pii import pii_chunked
from isonorm.provenance import provenance
from isonorm.simulate.mean_field import activation_constants

CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


# --- daneshmand2021: the BN chain -----------------------------------------------------------------------------


def chain_originals(width: int, batch: int, layers: int, runs: int, small: float, seed: int = 0) -> np.ndarray:
    """V(H_l) per run and layer, the notebook's way: NumPy draws of W per layer, one run after another."""
    rng = np.random.default_rng(seed)
    gaps = np.empty((runs, layers))
    for run in range(runs):
        h = np.zeros((width, batch))
        h[0, 0] = 1.0
        h[np.arange(1, batch), np.arange(1, batch)] = small
        for layer in range(layers):
            h = rng.standard_normal((width, width)) @ h
            h = h / np.linalg.norm(h, axis=1, keepdims=True) / math.sqrt(width)
            gram = h.T @ h
            gaps[run, layer] = np.linalg.norm(gram / np.trace(gram) - np.eye(batch) / batch)
    return gaps


def daneshmand(item: str, width: int, layers: int) -> dict:
    cfg = {**yaml.safe_load(CONFIG.read_text())["daneshmand2021"][item], "widths": [width], "layers": layers}
    original, _ = timed(lambda: chain_originals(width, cfg["batch"], layers, cfg["runs"], cfg["h0_small"]))
    project, _ = timed(lambda: gap_through_depth(cfg, item=item))
    return {"workload": f"daneshmand2021 {item}, d = {width}, n = {cfg['batch']}, {layers} layers, "
                        f"{cfg['runs']} runs", "originals_s": original, "project_s": project,
            "project": f"gap_through_depth, sampler {cfg['sampler']}"}


# --- joudaki2023: the mean-field simulator --------------------------------------------------------------------


def simulator_originals(cfg: dict) -> None:
    """Every configuration of the grid, one run and one layer at a time: a fresh float32 W per layer."""
    n, d, depth = cfg["batch"], cfg["widths"][0], cfg["depth"]
    for activation in cfg["activations"]:
        sigma, consts = get_activation(activation), activation_constants(activation)
        for centering in cfg["centerings"]:
            for run in range(cfg["runs"]):
                torch.manual_seed(run)
                x = torch.randn(n, d)
                u, s, vh = torch.linalg.svd(x, full_matrices=False)
                s[0] *= cfg["degeneracy"]
                x = (u * s) @ vh
                x = x / x.pow(2).mean().sqrt()
                x = x / x.pow(2).mean(dim=-1, keepdim=True).sqrt()
                for _ in range(depth):
                    x = sigma(x @ (torch.randn(d, d) / math.sqrt(d)))
                    torch.linalg.eigvalsh(x @ x.T)  # the pre-norm stats
                    if centering == "mf":
                        x = x - consts.c0
                    elif centering == "layer":
                        x = x - x.mean(dim=-1, keepdim=True)
                    x = x / x.pow(2).mean(dim=-1, keepdim=True).sqrt()  # layer normalization
                    torch.linalg.eigvalsh(x @ x.T)  # the post-norm stats


def joudaki() -> dict:
    config = yaml.safe_load(CONFIG.read_text())["joudaki2023"]
    cfg = {**config["simulator"], **config["fig4"]}
    original, _ = timed(lambda: simulator_originals(cfg))
    project, _ = timed(lambda: run_grid(cfg, item="fig4"))
    configs = len(cfg["activations"]) * len(cfg["centerings"])
    return {"workload": f"joudaki2023 fig4 grid, d = {cfg['widths'][0]}, n = {cfg['batch']}, {cfg['depth']} layers, "
                        f"{configs} configurations × {cfg['runs']} runs", "originals_s": original, "project_s": project,
            "project": f"run_grid, sampler {cfg['sampler']}"}


# --- meterez2024: one SGD step of the training grid -----------------------------------------------------------


def meterez(depth: int, steps: int) -> dict:
    device = torch.device("cpu")
    eager, _ = eager_step(depth, steps, device)
    engine, _ = engine_step(depth, steps, device, cuda_graph=False)
    runs = 6  # one grid job: 3 activations × CIFAR-10 and CIFAR-100
    return {"workload": f"meterez2024 SGD step, depth {depth}, {runs} runs", "originals_s": eager * runs,
            "project_s": engine, "project": "engine step, 6 runs stacked (seconds per step of all 6 runs)"}


# --- lu2024: PII of one matrix --------------------------------------------------------------------------------


def pii_originals(vectors: np.ndarray, budget_s: float) -> tuple[float, float, bool]:
    """Mean |cos| over ordered pairs by a pair loop with SciPy's cosine distance; (seconds, PII, extrapolated).

    Stops after ``budget_s`` seconds and extrapolates the time from the pairs done (the loop's cost is the
    same for every pair)."""
    k = len(vectors)
    pairs, total, start = 0, 0.0, time.perf_counter()
    for i in range(k):
        for j in range(k):
            if i != j:
                total += abs(1.0 - cosine(vectors[i], vectors[j]))
                pairs += 1
        elapsed = time.perf_counter() - start
        if elapsed > budget_s and i < k - 1:
            return elapsed * k * (k - 1) / pairs, total / pairs, True
    return time.perf_counter() - start, total / pairs, False


def lu(shape: tuple[int, int], budget_s: float) -> dict:
    w = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    original, value, extrapolated = pii_originals(w.T.double().numpy(), budget_s)  # the columns, as the tables
    project, ours = timed(lambda: pii_chunked(w, "columns"))
    return {"workload": f"lu2024 PII of the {shape[1]} columns of a {shape[0]} × {shape[1]} matrix",
            "originals_s": original, "project_s": project, "project": "pii_chunked, float64",
            "extrapolated": extrapolated, "agree": bool(abs(value - float(ours)) < 1e-3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds the originals' PII loop may run")
    parser.add_argument("--meterez-steps", type=int, default=20)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one core each, as a Snakemake job runs
    rows = [
        daneshmand("fig2a", 512, 50),
        daneshmand("fig2b", 512, 600),
        joudaki(),
        meterez(100, args.meterez_steps),
        meterez(500, args.meterez_steps),
        lu((768, 3072), args.budget),
        lu((4096, 11008), args.budget),
    ]
    for row in rows:
        row["ratio"] = row["originals_s"] / row["project_s"]
        note = " (originals extrapolated)" if row.get("extrapolated") else ""
        print(f"{row['workload']}: originals {row['originals_s']:.2f} s, project {row['project_s']:.3f} s "
              f"→ {row['ratio']:.1f}×{note}")
    today = dt.date.today().isoformat()
    out = Path(args.out) / f"originals-cpu-{today}.json"
    record = {"benchmark": "originals", "date": today, "threads": 1, "results": rows, "provenance": provenance("cpu")}
    write_text_atomically(out, json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
