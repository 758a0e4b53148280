"""The mean-field simulator items of Joudaki et al. (2023): Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2 and B.3.

Each function takes its item's config section merged with the shared ``simulator`` defaults (config.yaml
``joudaki2023: simulator:`` and ``joudaki2023: <item>:``) and returns the tidy frame of
``isonorm.simulate.mean_field.simulate`` for every configuration of the item's grid: one row per (run,
layer, stage). The grid is the Cartesian product of the list-valued keys (as the originals' grid, spec D.0
(A)); Fig. B.3 instead pairs each activation with named variants (centering, normalization, gain).

Config keys (all items): ``batch`` (n), ``widths`` (d), ``depth`` (L), ``runs``, ``activations``,
``centerings``, ``normalizations``, ``activation_first`` (list of bools), ``gains`` (numbers or "xavier"),
``bias``, ``degeneracy``, and the numerics ``constants``, ``monte_carlo_samples``, ``constants_seed``,
``dtype``, ``metric_dtype``, ``sampler`` (see ``mean_field.Numerics``). Every configuration is seeded from
(paper, experiment, configuration) and every run from its index (``runtime.generator``), so a configuration's
numbers do not depend on the rest of the grid.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...runtime import resolve_device
from ...simulate.mean_field import MeanFieldNetwork, Numerics, simulate
from . import SLUG

Config = Mapping[str, Any]
log = logging.getLogger(__name__)

NUMERICS_KEYS = ("constants", "monte_carlo_samples", "constants_seed", "dtype", "metric_dtype", "sampler")
GRID_KEYS = ("widths", "centerings", "normalizations", "activation_first", "activations", "gains")
VARIANT_KEYS = ("name", "centering", "normalization", "gain")


def _require(cfg: Config, keys: tuple[str, ...], experiment: str) -> None:
    missing = [k for k in keys if k not in cfg]
    if missing:
        raise ValueError(
            f"joudaki2023 {experiment}: config lacks {missing}; set them under `joudaki2023: {experiment}:` "
            "or the shared `joudaki2023: simulator:` section"
        )


def _list(cfg: Config, key: str, experiment: str) -> list:
    value = cfg[key]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"joudaki2023 {experiment}: `{key}` must be a non-empty list, got {value!r}")
    return list(value)


def _variants(cfg: Config, experiment: str) -> list[dict[str, Any]]:
    """Fig. B.3's named (centering, normalization, gain) triples, or one unnamed triple per grid point."""
    if "variants" in cfg:
        variants = _list(cfg, "variants", experiment)
        for variant in variants:
            if not isinstance(variant, Mapping) or set(variant) != set(VARIANT_KEYS):
                raise ValueError(
                    f"joudaki2023 {experiment}: each of `variants` needs exactly the keys {VARIANT_KEYS}, "
                    f"got {variant!r}"
                )
        return [dict(v) for v in variants]
    return [
        {"name": None, "centering": c, "normalization": n, "gain": g}
        for c, n, g in itertools.product(
            _list(cfg, "centerings", experiment), _list(cfg, "normalizations", experiment),
            _list(cfg, "gains", experiment),
        )
    ]


def run_grid(experiment: str, cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Every configuration of ``experiment``'s grid, simulated and concatenated (see the module docstring)."""
    _require(cfg, ("batch", "widths", "depth", "runs", "activations", "activation_first", "bias", "degeneracy",
                   *NUMERICS_KEYS), experiment)
    if "variants" not in cfg:
        _require(cfg, ("centerings", "normalizations", "gains"), experiment)
    numerics = Numerics(**{key: cfg[key] for key in NUMERICS_KEYS})
    resolved = resolve_device(device)
    frames = []
    grid = itertools.product(
        _list(cfg, "widths", experiment), _variants(cfg, experiment),
        _list(cfg, "activation_first", experiment), _list(cfg, "activations", experiment),
    )
    for width, variant, activation_first, activation in grid:
        network = MeanFieldNetwork(
            activation=activation, centering=variant["centering"], normalization=variant["normalization"],
            activation_first=bool(activation_first), gain=variant["gain"], bias=float(cfg["bias"]),
            degeneracy=float(cfg["degeneracy"]), batch=int(cfg["batch"]), width=int(width), depth=int(cfg["depth"]),
        )
        # The depth is left out of the seed, so a shallower run reproduces the first layers of a deeper one.
        seed_parts = (SLUG, experiment, variant["name"], activation, network.centering, network.normalization,
                      network.activation_first, network.gain, network.bias, network.degeneracy, network.batch,
                      network.width)
        frame = simulate(network, int(cfg["runs"]), seed_parts, numerics, device=resolved)
        if variant["name"] is not None:
            frame.insert(0, "variant", variant["name"])
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    missing = int(out.iso_gap.isna().sum())
    if missing:
        log.info("%s: %d of %d isometry gaps are NaN (plotted as missing, as in the originals)",
                 experiment, missing, len(out))
    return out


def fig4(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. 4: layer centering vs mean-field centering (x ← LN(a − ā) vs LN(a − c0)); spec D-Fig4."""
    return run_grid("fig4", cfg, device)


def fig5_6(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Figs. 5 and 6 from one grid (as the original cell): MF centering with normalization none/layer/MF."""
    return run_grid("fig5_6", cfg, device)


def fig8a(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. 8a: layer centering without normalization for relu/tanh/selu (decision D5: the stated configs)."""
    return run_grid("fig8a", cfg, device)


def fig8b(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. 8b: LN(σ(Wx)) (activation first) vs σ(LN(Wx)) for ReLU; spec D-Fig8 (b)."""
    return run_grid("fig8b", cfg, device)


def fig9(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. 9: MF vs layer normalization (MF centering, ReLU) at widths 100, 500, 1000; spec D-Fig9."""
    return run_grid("fig9", cfg, device)


def figa1(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. A.1: γ(G^ℓ) against γ(G^1)·β^{−ℓ} (``gamma_theory``); d = 1000 by decision D2."""
    return run_grid("figa1", cfg, device)


def figb2(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. B.2: the gain α multiplying W, for sin/relu/tanh with LN (D13); ``beta_gain`` feeds the extra panel."""
    return run_grid("figb2", cfg, device)


def figb3(cfg: Config, device: str = "cpu") -> pd.DataFrame:
    """Fig. B.3: MF centering + MF normalization (gain 1) vs neither with Xavier's gain; spec D-FigB3."""
    return run_grid("figb3", cfg, device)
