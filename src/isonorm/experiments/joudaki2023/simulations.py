"""The mean-field simulator items of Joudaki et al. (2023): Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2 and B.3.

Each function takes its item's config section merged with the shared ``simulator`` defaults (config.yaml
``joudaki2023: simulator:`` and ``joudaki2023: <item>:``) and returns the tidy frame of
``isonorm.simulate.mean_field.simulate`` for every configuration of the item's grid: one row per (run,
layer, stage). The grid is the Cartesian product of the list-valued keys (as the originals' grid, D.0
(A)); Fig. B.3 instead pairs each activation with named variants (centering, normalization, gain).

Config keys (all items): ``batch`` (n), ``widths`` (d), ``depth`` (L), ``runs``, ``activations``,
``centerings``, ``normalizations``, ``activation_first`` (list of bools), ``gains`` (numbers or "xavier"),
``bias``, ``degeneracy``, and the numerics ``constants``, ``monte_carlo_samples``, ``constants_seed``,
``dtype``, ``metric_dtype``, ``sampler`` (see ``mean_field.Numerics``). Every configuration is seeded from
(paper, item, configuration) and every run from its index (``runtime.generator``), so a configuration's
numbers do not depend on the rest of the grid.

Alternative readings (decision D19). An item section may hold ``readings``: a name → a few of the keys above,
each one more job of the same grid with those keys replaced (``run_grid(cfg, item=…, reading=name)``): an open
setting read the other way (``constants: monte_carlo``, another width), or more runs of the same
configurations (``first_run`` = the item's ``runs``, so that the extra runs continue the item's own: run r is
seeded by its index whichever job simulates it). A reading stays in the item's seed namespace: a reading that
changes only the numerics draws the same inputs and weights as the default, a paired comparison.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...items import Item, Results, results_of
from ...runtime import resolve_device
from ...simulate.mean_field import MeanFieldNetwork, Numerics, simulate
from . import SLUG, simulation_summaries

Config = Mapping[str, Any]
log = logging.getLogger(__name__)

NUMERICS_KEYS = ("constants", "monte_carlo_samples", "constants_seed", "dtype", "metric_dtype", "sampler")
DEFAULT_READING = "default"
"""The ``reading`` column of the item's own job (its config as written); a reading's rows carry its name."""
GRID_KEYS = ("widths", "centerings", "normalizations", "activation_first", "activations", "gains")
VARIANT_KEYS = ("name", "centering", "normalization", "gain")


def _list(cfg: Config, key: str, item: str) -> list:
    value = cfg[key]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"joudaki2023 {item}: `{key}` must be a non-empty list, got {value!r}")
    return list(value)


def _variants(cfg: Config, item: str) -> list[dict[str, Any]]:
    """Fig. B.3's named (centering, normalization, gain) triples, or one unnamed triple per grid point."""
    if "variants" in cfg:
        variants = _list(cfg, "variants", item)
        for variant in variants:
            if not isinstance(variant, Mapping) or set(variant) != set(VARIANT_KEYS):
                raise ValueError(
                    f"joudaki2023 {item}: each of `variants` needs exactly the keys {VARIANT_KEYS}, "
                    f"got {variant!r}"
                )
        return [dict(v) for v in variants]
    return [
        {"name": None, "centering": c, "normalization": n, "gain": g}
        for c, n, g in itertools.product(
            _list(cfg, "centerings", item), _list(cfg, "normalizations", item),
            _list(cfg, "gains", item),
        )
    ]


def reading_config(cfg: Config, reading: str, item: str) -> dict[str, Any]:
    """The item's settings with the overrides of its reading ``reading`` (decision D19); ``readings`` dropped."""
    readings = cfg.get("readings") or {}
    if reading not in readings:
        raise ValueError(f"joudaki2023 {item}: no reading {reading!r}; the item's `readings` are {sorted(readings)}")
    overrides = readings[reading]
    if not isinstance(overrides, Mapping) or "readings" in overrides:
        raise ValueError(f"joudaki2023 {item}: reading {reading!r} must map config keys to values, got {overrides!r}")
    return {**{k: v for k, v in cfg.items() if k != "readings"}, **overrides}


def run_grid(cfg: Config, *, item: str, reading: str | None = None, device: str = "cpu") -> pd.DataFrame:
    """joudaki2023-fig4, joudaki2023-fig5, joudaki2023-fig6, joudaki2023-fig8a, joudaki2023-fig8b, joudaki2023-fig9,
    joudaki2023-figa1, joudaki2023-figb2, joudaki2023-figb3: every configuration of ``item``'s grid (one of
    :data:`SIMULATION_ITEMS`; ``fig5_6`` gives Figs. 5 and 6), simulated and concatenated; see the module
    docstring. The item names the seed namespace, so two items never share random draws.
    ``reading`` names one of the item's alternative ``readings`` to run instead of its own settings (D19)."""
    if item not in SIMULATION_ITEMS:
        raise ValueError(f"unknown joudaki2023 simulation item {item!r}; use one of {SIMULATION_ITEMS}")
    if reading is not None:
        cfg = reading_config(cfg, reading, item)
    first_run = cfg.get("first_run", 0)
    numerics = Numerics(**{key: cfg[key] for key in NUMERICS_KEYS})
    resolved = resolve_device(device)
    frames = []
    grid = itertools.product(
        _list(cfg, "widths", item), _variants(cfg, item),
        _list(cfg, "activation_first", item), _list(cfg, "activations", item),
    )
    for width, variant, activation_first, activation in grid:
        network = MeanFieldNetwork(
            activation=activation, centering=variant["centering"], normalization=variant["normalization"],
            activation_first=bool(activation_first), gain=variant["gain"], bias=float(cfg["bias"]),
            degeneracy=float(cfg["degeneracy"]), batch=int(cfg["batch"]), width=int(width), depth=int(cfg["depth"]),
        )
        # The depth is left out of the seed, so a shallower run reproduces the first layers of a deeper one.
        seed_parts = (SLUG, item, variant["name"], activation, network.centering, network.normalization,
                      network.activation_first, network.gain, network.bias, network.degeneracy, network.batch,
                      network.width)
        frame = simulate(network, int(cfg["runs"]), seed_parts, numerics, device=resolved, first_run=first_run)
        if variant["name"] is not None:
            frame.insert(0, "variant", variant["name"])
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["reading"] = DEFAULT_READING if reading is None else reading
    missing = int(out.iso_gap.isna().sum())
    if missing:
        log.info("%s: %d of %d isometry gaps are NaN (plotted as missing, as in the originals)",
                 item, missing, len(out))
    return out


# The items these functions compute, each once (isonorm.items): its title as its section in
# docs/decisions/joudaki2023.md heads it, its job, the results it reads and its claims.
# One job per grid, and one per alternative reading of a grid (decision D19).
FIG8 = '(a) "self-normalizing" activations, (b) order of activation and normalization'  # one section, two items
_SIMULATOR = dict(kind="simulation", computed_by=run_grid, claims=simulation_summaries.claims)


def _grid(grid: str) -> dict[str, Results]:
    """The file of a grid's job, and of one job per alternative reading in its config's `readings:`."""
    return {grid: Results("simulations/{simulation}.parquet", simulation=(grid,), readings=f"{grid}.readings")}


ITEMS = (
    Item("joudaki2023-fig4", "Layer centering vs mean-field centering", results=_grid("fig4"), **_SIMULATOR),
    Item("joudaki2023-fig5", "No normalization vs LayerNorm (mean-field centering)", results=_grid("fig5_6"),
         **_SIMULATOR),  # one grid for Figs. 5 and 6
    Item("joudaki2023-fig6", "LayerNorm vs mean-field normalization", results=_grid("fig5_6"), **_SIMULATOR),
    Item("joudaki2023-fig8a", FIG8, results=_grid("fig8a"), **_SIMULATOR),
    Item("joudaki2023-fig8b", FIG8, results=_grid("fig8b"), **_SIMULATOR),
    Item("joudaki2023-fig9", "LayerNorm stabilises the mean-field approximation through depth (ReLU)",
         results=_grid("fig9"), **_SIMULATOR),
    Item("joudaki2023-figa1", "Lyapunov potential γ vs depth, with the bound of Corollary A.3",
         results=_grid("figa1"), **_SIMULATOR),
    Item("joudaki2023-figb2", "The gain and the speed of reaching isometry", results=_grid("figb2"), **_SIMULATOR),
    Item("joudaki2023-figb3", "Mean-field centering and normalization vs Xavier gain", results=_grid("figb3"),
         **_SIMULATOR),
)
# The grids run_grid serves, by result key (its `item` argument; one job each, fig5_6 gives Figs. 5 and 6).
SIMULATION_ITEMS = results_of(ITEMS, run_grid)
