"""meterez2024-figx1, the example item of docs/adding.md ("An item in an existing paper"): the isometry gap φ of a
batch of Gaussian inputs, n = d samples in R^d, against the width d. Data-free; its claims are the mean φ per width."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import torch

from ...metrics import gram, isometry_gap
from ...report.claims import Measured, measured_over_runs
from ...results import read_all_results


def figx1(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """meterez2024-figx1: φ of d Gaussian samples in R^d, one batch per (width, run)."""
    rows = []
    for width in cfg["widths"]:
        for run in range(int(cfg["runs"])):
            batch = torch.randn(width, width, generator=torch.Generator().manual_seed(int(cfg["seed"]) + run))
            rows.append({"width": width, "run": run, "phi": float(isometry_gap(gram(batch)))})
    return pd.DataFrame(rows)


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, Measured]]:
    """meterez2024-figx1: the mean φ per width over the runs, with its seed spread."""
    if not results.get("figx1"):
        return {}
    frame = read_all_results(results["figx1"])
    return {"meterez2024-figx1": {f"phi_d{w}": measured_over_runs(g.phi) for w, g in frame.groupby("width")}}
