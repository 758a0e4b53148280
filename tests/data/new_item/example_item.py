"""meterez2024-figx1, the example item of docs/adding.md ("An item in an existing paper"): the isometry gap φ of a
batch of Gaussian inputs, n = d samples in R^d, against the width d. Data-free; its claims are the mean φ per width.
Its record (:data:`ITEMS`) says it is plain: one simulation job on its config section, whose rule the workflow
generates."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import torch

from ...items import Item
from ...metrics import gram, isometry_gap
from ...verdicts.claims import Measured, measured_over_runs
from ...results import read_all_results
from ...runtime import generator


def figx1(cfg: Mapping[str, Any], *, device: str = "cpu") -> pd.DataFrame:
    """meterez2024-figx1: φ of d Gaussian samples in R^d; the runs of a width drawn as one stack of batches."""
    runs = int(cfg["runs"])
    frames = []
    for width in cfg["widths"]:
        batches = torch.randn(runs, width, width, generator=generator(cfg["seed"], width, device=device), device=device)
        frames.append(pd.DataFrame({"width": width, "run": range(runs), "phi": isometry_gap(gram(batches)).cpu()}))
    return pd.concat(frames, ignore_index=True)


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, Measured]]:
    """meterez2024-figx1: the mean φ per width over the runs, with its seed spread."""
    if not results.get("figx1"):
        return {}
    by_width = read_all_results(results["figx1"]).groupby("width").phi
    return {"meterez2024-figx1": {f"phi_d{width}": measured_over_runs(phi) for width, phi in by_width}}


ITEMS = (Item("meterez2024-figx1", "Isometry gap of a Gaussian batch vs width", "simulation", figx1, claims=claims,
              plain=True),)
