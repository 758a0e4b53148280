"""Meterez et al. 2024 at initialisation: Figs. 1, 2, 3, 5, G5, G6, E1 and E2 (meterez2024-fig1 … meterez2024-fige2).

Every figure measures fresh ``MLPWithBatchNorm`` networks (:mod:`isonorm.models.bn_mlp`) in train mode, so
batch norm uses batch statistics (C.0 "At-init notebooks"). All ``runs`` of one (variant, depth) are
stacked in one :class:`StackedBNMLP`; run r is seeded by (item, variant, depth, r) only (decision C13), and
the data batch is one seeded draw shared by every run, depth and variant (decision C12).

- ``fig1``: φ(fc_ℓ output) per layer on the synthetic input X_0 = (1−f)·I + f·u vᵀ, with the Theorem-1 line
  φ(X_0)·exp(−ℓ/k), k = C d²(1 + d φ(X_0)) (decision C16). Data-free.
- ``fig2``, ``fig3``, ``fig5`` (also Fig. G5), ``figg6``, ``fige1``, ``fige2``: one sweep over model variants ×
  depths on one CIFAR-10 train batch (Fig. 2 adds the degenerate batch of decision C2), recording what the
  item's config asks for: log‖∇W_ℓ L‖_F at ``grad_layers`` (metrics M3; which W per decision C9), the rate
  R(ℓ) at ``rate_layers`` (metrics M4, decision C6) and φ(fc_{L−1} output) (``last_isogap``, decision C8).

Results are tidy: one row per (variant, depth, run, metric, layer). Networks run in float32 as the originals
(decision C11); a value that overflowed is stored as NaN and counted by the summaries/captions, never dropped
here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from ...cost import sampled
from ...data import dataset_spec, load_split
from ...metrics import explosion_rate, grad_log_norm, gram, isometry_gap
from ...models.bn_mlp import BNMLPConfig, StackedBNMLP
from ...runtime import generator, resolve_device
from ...items import Item, Results, results_of
from . import SLUG, at_init_summaries

Config = Mapping[str, Any]

# Model options an item's ``model`` / ``variants`` may set (the BNMLPConfig fields that are not shapes).
MODEL_OPTIONS = ("activation", "norm", "mean_reduction", "force_factor", "init", "gain_exponent", "gain", "bias")
INPUT_KINDS = ("batch", "degenerate")  # the seeded data batch | its degenerate version (decision C2)


# --- inputs -------------------------------------------------------------------------------------------------


def near_orthogonal_input(width: int, f: float, gen: torch.Generator) -> torch.Tensor:
    """X_0 = (1−f)·I_d + f·u vᵀ with u, v ~ U[0,1)^d (meterez2024-fig1, ``Isometry gap.ipynb``): n = d samples."""
    if width < 2 or not 0.0 <= f < 1.0:
        raise ValueError(f"near_orthogonal_input needs width ≥ 2 and 0 ≤ f < 1, got width={width}, f={f}")
    u = torch.rand(width, 1, generator=gen)
    v = torch.rand(1, width, generator=gen)
    return (1.0 - f) * torch.eye(width) + f * (u @ v)


def theory_isometry_gap(phi0: float, layers: np.ndarray, width: int, constant: float) -> np.ndarray:
    """Theorem 1's line φ(X_0)·exp(−ℓ/k), k = C d²(1 + d φ(X_0)) (meterez2024-fig1, decision C16: C from the code)."""
    k = constant * width**2 * (1.0 + width * phi0)
    return phi0 * np.exp(-np.asarray(layers, dtype=np.float64) / k)


def seeded_batch(
    x: torch.Tensor, y: torch.Tensor, batch_size: int, seed: object
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch of ``batch_size`` distinct samples, the same for every run and depth (decision C12)."""
    if not 1 <= batch_size <= len(x):
        raise ValueError(f"batch_size {batch_size} must be between 1 and the split size {len(x)}")
    order = torch.randperm(len(x), generator=generator(SLUG, "at_init_batch", seed))[:batch_size]
    order = order.to(x.device)
    return x[order], y[order]


def degenerate_batch(
    x: torch.Tensor, y: torch.Tensor, distinct: int, repeats: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``distinct`` samples each repeated ``repeats`` times in a row: rank ``distinct`` (decision C2)."""
    if distinct < 1 or repeats < 1 or distinct > len(x):
        raise ValueError(f"degenerate_batch needs 1 ≤ distinct ≤ {len(x)} and repeats ≥ 1, got {distinct}, {repeats}")
    return x[:distinct].repeat_interleave(repeats, dim=0), y[:distinct].repeat_interleave(repeats, dim=0)


def load_batch(cfg: Config, data_root: str, dataset: str, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The item's seeded train batch (flattened, ``transform`` from the config: C.0 "Data" table)."""
    split = load_split(dataset, data_root, "train", transform=cfg["transform"], flatten=True, device=device)
    return seeded_batch(split.x, split.y, int(cfg["batch_size"]), cfg["batch_seed"])


# --- one stack of fresh networks ------------------------------------------------------------------------------


def model_config(options: Mapping[str, Any], in_features: int, width: int, out_features: int, depth: int) -> BNMLPConfig:
    """BNMLPConfig from a mapping of :data:`MODEL_OPTIONS` (unknown keys are an error)."""
    unknown = sorted(set(options) - set(MODEL_OPTIONS))
    if unknown:
        raise ValueError(f"unknown model option(s) {unknown}; use {list(MODEL_OPTIONS)}")
    opts = dict(options)
    if opts.get("force_factor") is not None:
        opts["force_factor"] = float(opts["force_factor"])
    return BNMLPConfig(in_features=in_features, width=width, out_features=out_features, depth=depth, **opts)


def measure_stack(
    config: BNMLPConfig,
    x: torch.Tensor,
    y: torch.Tensor,
    generators: Sequence[torch.Generator],
    *,
    device: torch.device,
    last_isogap: bool = False,
) -> dict[str, torch.Tensor]:
    """One forward/backward of ``len(generators)`` fresh stacked networks on the shared batch (x, y).

    The loss is Σ_r CrossEntropy_mean(logits_r, y): runs share no parameter, so each run's gradient is
    exactly that of its own mean loss (C.0 "Loss"). Returns float64 CPU tensors:
    ``log_grad`` (R, L+1): log‖∇W_ℓ‖_F of fc_0..fc_L (metrics M3); with ``last_isogap`` also
    ``last_isogap`` (R,): φ of the fc_{L−1} output's sample Gram (decision C8). Non-finite values stay.
    """
    model = StackedBNMLP(config, generators).to(device)
    model.train()  # batch statistics at init (C.0 "At-init notebooks")
    x, y = x.to(device), y.to(device)
    if last_isogap:
        logits, trace = model(x, trace=True)
    else:
        logits, trace = model(x), None
    runs, batch, classes = logits.shape
    loss = F.cross_entropy(logits.reshape(runs * batch, classes), y.repeat(runs), reduction="sum") / batch
    loss.backward()
    out = {"log_grad": torch.stack([grad_log_norm(w.grad) for w in model.weights()], dim=-1).cpu()}
    if trace is not None:
        out["last_isogap"] = isometry_gap(gram(trace["fc"][-1].detach())).cpu()
    return out


# --- Fig. 1 ---------------------------------------------------------------------------------------------------


def fig1(cfg: Config, *, device: str = "cpu") -> pd.DataFrame:
    """meterez2024-fig1: φ(H_ℓ), H_ℓ the fc_ℓ output, ℓ = 0..L−1, per width and run, plus the Theorem-1 line.

    Rows: width, run (−1 for the theory line), layer, source ("empirical" | "theory"), metric "isogap",
    value. No data set (``compute: data-free``).
    """
    target = resolve_device(device)
    depth, runs = int(cfg["depth"]), int(cfg["runs"])
    rows: list[dict[str, Any]] = []
    for width in (int(w) for w in cfg["widths"]):
        x0 = near_orthogonal_input(width, float(cfg["f"]), generator(SLUG, "fig1", "input", cfg["input_seed"], width))
        config = model_config(cfg["model"], width, width, width, depth)  # n = d = D_in; C unused (no loss)
        gens = [generator(SLUG, "fig1", width, depth, run) for run in range(runs)]
        with torch.no_grad():
            _, trace = StackedBNMLP(config, gens).to(target)(x0.to(target), trace=True)
            gaps = torch.stack([isometry_gap(gram(h)) for h in trace["fc"]], dim=-1).cpu().numpy()  # (R, L)
        for run in range(runs):
            rows += [dict(width=width, run=run, layer=layer, source="empirical", value=float(gaps[run, layer]))
                     for layer in range(depth)]
        phi0 = float(isometry_gap(gram(x0)))
        theory = theory_isometry_gap(phi0, np.arange(depth), width, float(cfg["theory_constant"]))
        rows += [dict(width=width, run=-1, layer=layer, source="theory", value=float(theory[layer]))
                 for layer in range(depth)]
    frame = pd.DataFrame(rows).assign(metric="isogap", depth=depth, f=float(cfg["f"]),
                                      theory_constant=float(cfg["theory_constant"]))
    frame["value"] = frame["value"].where(np.isfinite(frame["value"]))
    return frame


# --- the gradient sweeps: Figs. 2, 3, 5/G5, G6, E1, E2 ------------------------------------------------------------


def expand_variants(cfg: Config) -> list[dict[str, Any]]:
    """The item's variants: each entry of ``variants`` (label + overrides of ``model``, optionally ``input``)
    crossed with every combination of ``grid`` (option → list of values); labels join with ", "."""
    grid = cfg.get("grid") or {}
    keys = list(grid)
    variants = []
    for base in cfg["variants"]:
        if "label" not in base:
            raise ValueError(f"every meterez2024 variant needs a label; got {dict(base)}")
        for values in itertools.product(*(grid[k] for k in keys)):
            variant = {**base, **dict(zip(keys, values))}
            variant["label"] = ", ".join([str(base["label"])] + [f"{k}={v}" for k, v in zip(keys, values)])
            variants.append(variant)
    return variants


def _variant_factors(options: Mapping[str, Any]) -> dict[str, Any]:
    """Every model option as a results column (force_factor None = f = sqrt(n) → NaN)."""
    factors = {name: options.get(name) for name in MODEL_OPTIONS}
    factors["force_factor"] = math.nan if factors["force_factor"] is None else float(factors["force_factor"])
    return factors


def sweep(cfg: Config, item: str, x: torch.Tensor, y: torch.Tensor, classes: int, device: torch.device) -> pd.DataFrame:
    """All variants × depths × runs of one item on the batch (x, y); see the module docstring for the rows.

    Metrics: ``log_grad`` at each of ``grad_layers`` (layer = ℓ of fc_ℓ), ``rate`` R(ℓ) at each of
    ``rate_layers`` (needs depth > ℓ; skipped for shallower networks), ``last_isogap`` (layer = L−1).
    """
    width, runs, chunk = int(cfg["width"]), int(cfg["runs"]), int(cfg["run_chunk"])
    if runs < 1 or chunk < 1:
        raise ValueError(f"meterez2024 {item}: runs and run_chunk must be ≥ 1, got {runs}, {chunk}")
    rows: list[dict[str, Any]] = []
    for variant in sampled(expand_variants(cfg)):  # every variant but under a step cap (docs/cost.md)
        input_kind = variant.get("input", "batch")
        if input_kind not in INPUT_KINDS:
            raise ValueError(f"meterez2024 {item}: input {input_kind!r} unknown; use one of {INPUT_KINDS}")
        xb, yb = (x, y) if input_kind == "batch" else degenerate_batch(
            x, y, int(cfg["degenerate"]["distinct"]), int(cfg["degenerate"]["repeats"]))
        options = {**cfg["model"], **{k: v for k, v in variant.items() if k in MODEL_OPTIONS}}
        factors = dict(variant=variant["label"], input=input_kind, **_variant_factors(options))
        for depth in (int(d) for d in cfg["depths"]):
            config = model_config(options, xb.shape[-1], width, classes, depth)
            parts: list[dict[str, torch.Tensor]] = []
            for start in range(0, runs, chunk):  # run r depends on its own generator only: chunking is exact
                gens = [generator(SLUG, item, variant["label"], depth, run) for run in range(start, min(runs, start + chunk))]
                parts.append(measure_stack(config, xb, yb, gens, device=device, last_isogap=bool(cfg["last_isogap"])))
            measured = {key: torch.cat([p[key] for p in parts]) for key in parts[0]}
            rows += _sweep_rows(cfg, measured, depth, factors)
    frame = pd.DataFrame(rows)
    frame["value"] = frame["value"].where(np.isfinite(frame["value"]))  # inf/NaN → NaN, counted downstream (C11)
    return frame.assign(width=width, batch_size=len(x))


def _sweep_rows(cfg: Config, measured: Mapping[str, torch.Tensor], depth: int, factors: Mapping[str, Any]) -> list[dict]:
    log_grad = measured["log_grad"]  # (R, L+1)
    rows = []
    for layer in (int(layer) for layer in cfg["grad_layers"]):
        if layer > depth:
            raise ValueError(f"grad layer {layer} does not exist in a depth-{depth} network (fc_0..fc_{depth})")
        rows += [dict(factors, depth=depth, run=run, metric="log_grad", layer=layer, value=float(v))
                 for run, v in enumerate(log_grad[:, layer].tolist())]
    rate_layers = [int(layer) for layer in cfg["rate_layers"] if int(layer) <= depth]
    if rate_layers:
        rates = explosion_rate(log_grad)  # (R, L+1), NaN below the gap (metrics M4)
        for layer in rate_layers:
            rows += [dict(factors, depth=depth, run=run, metric="rate", layer=layer, value=float(v))
                     for run, v in enumerate(rates[:, layer].tolist())]
    if "last_isogap" in measured:
        rows += [dict(factors, depth=depth, run=run, metric="last_isogap", layer=depth - 1, value=float(v))
                 for run, v in enumerate(measured["last_isogap"].tolist())]
    return rows


def gradient_sweep(cfg: Config, *, item: str, data_root: str, dataset: str, device: str) -> pd.DataFrame:
    """One at-init item (``item`` in :data:`SWEEP_ITEMS`: meterez2024-fig2, meterez2024-fig3, meterez2024-fig5 whose
    runs also give meterez2024-figg5, meterez2024-figg6, meterez2024-fige1, meterez2024-fige2) on the seeded train
    batch of ``dataset``; the item names the seed namespace of its networks (decision C13)."""
    if item not in SWEEP_ITEMS:
        raise ValueError(f"unknown meterez2024 at-init item {item!r}; use one of {SWEEP_ITEMS}")
    target = resolve_device(device)
    x, y = load_batch(cfg, data_root, dataset, target)
    return sweep(cfg, item, x, y, dataset_spec(dataset).num_classes, target).assign(dataset=dataset)


# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/meterez2024.md heads it, its job, the results it reads and its claims.
_SWEEP = dict(kind="at_init", computed_by=gradient_sweep, claims=at_init_summaries.claims)  # one job per result key


def _sweep(item: str) -> dict[str, Results]:
    return {item: Results("at_init/{item}.parquet", item=(item,))}  # one rule for all


ITEMS = (
    Item("meterez2024-fig1", "Isometry gap through depth vs Theorem 1", "simulation", fig1,
         claims=at_init_summaries.claims, plain=True),
    Item("meterez2024-fig2", "Gradients at init: degenerate vs non-degenerate inputs", results=_sweep("fig2"), **_SWEEP),
    Item("meterez2024-fig3", "Orthogonal vs Gaussian weights: gradients through depth", results=_sweep("fig3"), **_SWEEP),
    Item("meterez2024-fig5", "Effect of the gain on gradients at init", results=_sweep("fig5"), **_SWEEP),
    Item("meterez2024-fige1", "Rate of explosion vs a constant gain (depth 1000)", results=_sweep("fige1"), **_SWEEP),
    Item("meterez2024-fige2", "Rate of explosion at ℓ = 10 vs the gain exponent", results=_sweep("fige2"), **_SWEEP),
    Item("meterez2024-figg5", "Non-linearities without shaping", results=_sweep("fig5"), **_SWEEP),  # Fig. 5's runs
    Item("meterez2024-figg6", "Mean reduction and gradient explosion", results=_sweep("figg6"), **_SWEEP),
)
# The items gradient_sweep serves, by result key (its `item` argument; one job each, fig5's runs also give G5).
SWEEP_ITEMS = results_of(ITEMS, gradient_sweep)
