"""The data-free items of Daneshmand et al. (2021): random chains of Gaussian linear layers.

Every function takes its item's config section (config.yaml: ``daneshmand2021: <item>:``) and returns a
tidy DataFrame, one row per (variant, run, layer). Settings and decisions: daneshmand2021-fig1,
daneshmand2021-fig2a, daneshmand2021-fig2b, daneshmand2021-fig3, daneshmand2021-appfigg and the decisions of
docs/decisions/daneshmand2021.md. Runs of one variant are simulated together as a batch of shape (runs, d, n).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from ...metrics import abs_cosine, orthogonality_gap_of_gram
from ...runtime import generator
from ...simulate import batch_normalize, run_chain, spectrum_chain
from ...items import Item, Results
from . import SLUG, paper_summaries

Config = Mapping[str, Any]
DTYPE = torch.float64  # chains are tiny; float64 keeps the 1e-6 entries of the Fig. 2 start exact


def _tidy(values: torch.Tensor, first_layer: int, **factors: Any) -> pd.DataFrame:
    """(layers, runs) tensor -> rows (run, layer, value) tagged with constant ``factors``."""
    layers, runs = values.shape
    frame = pd.DataFrame(
        {
            "run": np.tile(np.arange(runs), layers),
            "layer": np.repeat(np.arange(first_layer, first_layer + layers), runs),
            "value": values.reshape(-1).cpu().numpy(),
        }
    )
    for name, value in factors.items():
        frame.insert(0, name, value)
    return frame


def diagonal_start(width: int, batch: int, small: float, runs: int) -> torch.Tensor:
    """H0 = diag(1, small, ..., small) in a d x n block: "diagonal H0 with one relatively large value"
    (Fig. 2 caption; code: small = 1e-6)."""
    h0 = torch.zeros(runs, width, batch, dtype=DTYPE)
    h0[:, 0, 0] = 1.0
    idx = torch.arange(1, batch)
    h0[:, idx, idx] = small
    return h0


def warmup_cosine(cfg: Config) -> pd.DataFrame:
    """daneshmand2021-fig1: |cos| of two samples through a BN chain (almost aligned start) and a vanilla chain
    (orthogonal start) that share every W. Recorded before each layer: layer 1 = input."""
    d, layers, runs, eps = cfg["width"], cfg["layers"], cfg["runs"], cfg["eps"]
    gen = generator(SLUG, "fig1")
    bn = torch.zeros(runs, d, 2, dtype=DTYPE)
    bn[:, 0, 0], bn[:, 0, 1], bn[:, 1, 1] = 1.0, 1.0 - eps, eps
    vanilla = torch.zeros(runs, d, 2, dtype=DTYPE)
    vanilla[:, 0, 0], vanilla[:, 1, 1] = 1.0, 1.0
    records = {"BN": [], "Vanilla": []}
    for _ in range(layers):
        records["BN"].append(abs_cosine(bn))
        records["Vanilla"].append(abs_cosine(vanilla))
        w = torch.randn(runs, d, d, generator=gen, dtype=DTYPE)
        bn = batch_normalize(w @ bn)
        vanilla = w @ vanilla
        # A scalar rescaling leaves the cosine unchanged and keeps 50 products of randn(32, 32) finite.
        vanilla = vanilla / vanilla.flatten(1).norm(dim=1)[:, None, None]
    return pd.concat(
        [_tidy(torch.stack(v), 1, network=name, width=d) for name, v in records.items()], ignore_index=True
    ).rename(columns={"value": "abs_cosine"})


def gap_through_depth(cfg: Config, item: str) -> pd.DataFrame:
    """daneshmand2021-fig2a, daneshmand2021-fig2b: V(H_l) for l = 1..layers of the BN chain from the diagonal
    start, for every width; ``item`` names the seed namespace."""
    frames = []
    for d in cfg["widths"]:
        gen = generator(SLUG, item, d)
        h0 = diagonal_start(d, cfg["batch"], cfg["h0_small"], cfg["runs"])
        chain = spectrum_chain(h0, cfg["layers"], gen, sampler=cfg["sampler"])
        # V is invariant under rotations of the samples: the gap of diag(spectrum) is that of the Gram
        gaps = [orthogonality_gap_of_gram(torch.diag_embed(eigvals)) for eigvals in chain]
        frames.append(_tidy(torch.stack(gaps), 1, width=d))
    return pd.concat(frames, ignore_index=True).rename(columns={"value": "orthogonality_gap"})


def assumption_a1_grid(cfg: Config) -> pd.DataFrame:
    """daneshmand2021-fig3: does A1(threshold * alpha0, layers) hold, per (n, d) and run?

    Decision B3: H0 Gaussian scaled to unit Frobenius norm before alpha0 = sigma_min(H0); A1 fails in a run
    when min over layers k = 1..L of sigma_min(H_k) < threshold * alpha0. sigma_min is the n-th singular
    value, the square root of the smallest eigenvalue of the Gram H^T H; for d < n it is 0, so A1 cannot hold
    (no full-rank representation) and the chain is not simulated.

    ``batch`` is the simulated batch size. Both readings of decision B15 use these rows: the offset reading
    simulates n - batch_offset for every configured n (``summaries.a1_batches``, one job per batch size) and
    labels its pixels n (``summaries.a1_grid``); the chain and the test of A1 are the same.
    """
    rows = []
    for n in cfg["batch_sizes"]:
        for d in cfg["widths"]:
            gen = generator(SLUG, "fig3", n, d)
            h0 = torch.randn(cfg["runs"], d, n, generator=gen, dtype=DTYPE)
            h0 = h0 / h0.flatten(1).norm(dim=1)[:, None, None]
            alpha0 = _sigma_min(h0)
            smallest = _smallest_sigma_min(h0, cfg["layers"], gen, cfg["sampler"])
            for run in range(cfg["runs"]):
                rows.append(
                    {
                        "batch": n, "width": d, "run": run,
                        "alpha0": alpha0[run].item(), "min_sigma_min": smallest[run].item(),
                        "holds": bool(d >= n and smallest[run] >= cfg["threshold"] * alpha0[run]),
                    }
                )
    return pd.DataFrame(rows)


def _smallest_sigma_min(h0: torch.Tensor, layers: int, gen: torch.Generator, sampler: str) -> torch.Tensor:
    """min over layers k = 1..layers of sigma_min(H_k) per run; 0 without a chain when d < n (no full rank)."""
    runs, d, n = h0.shape
    if d < n:
        return torch.zeros(runs, dtype=h0.dtype)
    smallest = torch.full((runs,), math.inf, dtype=h0.dtype)
    for eigvals in spectrum_chain(h0, layers, gen, sampler=sampler):
        smallest = torch.minimum(smallest, eigvals[..., 0].clamp_min(0).sqrt())
    return smallest


def _sigma_min(h: torch.Tensor) -> torch.Tensor:
    """n-th singular value of each (d, n) matrix of the batch (0 when d < n)."""
    if h.shape[-2] < h.shape[-1]:
        return torch.zeros(h.shape[0], dtype=h.dtype)
    return torch.linalg.svdvals(h)[..., -1]


def activation_fluctuations(cfg: Config) -> pd.DataFrame:
    """daneshmand2021-appfigg: L(Q) = ||M_l - K||_F with M_l = H_l^T H_l / d for non-linear BN chains.

    As coded: H <- W act(H), rows scaled to unit norm without the 1/sqrt(d) factor; K is the mean
    of M over ``reference_layers`` layers of a first chain from H0 ~ randn(d, n); L is averaged over
    ``measure_layers`` layers of a second, fresh chain. Decision B16: ``runs`` independent runs per (activation,
    width), simulated as one batch (the code made one), each with its own K, and every chain first runs
    ``burn_in`` layers that neither average counts (the code counted from layer 1; 0 gives its averages).
    One row per (activation, width, run).
    """
    runs, burn_in = cfg["runs"], cfg["burn_in"]
    frames = []
    for activation in cfg["activations"]:
        for d in cfg["widths"]:
            gen = generator(SLUG, "appfigg", activation, d)

            def grams(layers: int) -> torch.Tensor:
                """(layers, runs, n, n): M_l for l = burn_in + 1 .. burn_in + layers of a fresh chain."""
                h0 = torch.randn(runs, d, cfg["batch"], generator=gen, dtype=DTYPE)
                chain = run_chain(h0, burn_in + layers, gen, activation=activation,
                                  sampler=cfg["sampler"], scale=False)
                return torch.stack([h.transpose(-1, -2) @ h / d for i, h in enumerate(chain) if i >= burn_in])

            reference = grams(cfg["reference_layers"]).mean(dim=0)
            deviation = torch.linalg.matrix_norm(grams(cfg["measure_layers"]) - reference).mean(dim=0)
            frames.append(pd.DataFrame({"activation": activation, "width": d, "run": np.arange(runs),
                                        "avg_deviation": deviation.cpu().numpy()}))
    return pd.concat(frames, ignore_index=True)


# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/daneshmand2021.md heads it, its job, the results it reads and its claims.
ITEMS = (
    Item("daneshmand2021-fig1", "Warm-up: |cos| of two samples through depth, BN vs vanilla", "simulation",
         warmup_cosine, claims=paper_summaries.claims, plain=True),
    Item("daneshmand2021-fig2a", "Log orthogonality gap through depth", "simulation", gap_through_depth,
         {"fig2a": Results("fig2a/width{width}.parquet", width="fig2a.widths")}, paper_summaries.claims),
    Item("daneshmand2021-fig2b", "Average gap vs width (log–log)", "simulation", gap_through_depth,
         {"fig2b": Results("fig2b/width{width}.parquet", width="fig2b.widths")}, paper_summaries.claims),
    Item("daneshmand2021-fig3", "Validity of Assumption A1 over (n, d)", "simulation", assumption_a1_grid,
         {"fig3": Results("fig3/batch{n}.parquet", n=lambda section: paper_summaries.a1_batches(section["fig3"]))}, paper_summaries.claims),
    Item("daneshmand2021-appfigg",
         "Appendix-G conjecture: fluctuations of the Gram matrix for non-linear activations", "simulation",
         activation_fluctuations, {"appfigg": Results("appfigg/{activation}.parquet",
                                                      activation="appfigg.activations")}, paper_summaries.claims),
)
