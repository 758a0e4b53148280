"""Example et al. (2099): how independent are the columns of a random matrix? One module holds the paper's one
item: the computation (:func:`fig1`), its checkable quantities (:func:`claims`) and its record (:data:`ITEMS`,
isonorm.items). The record says the item is plain, one simulation job on its config section: the workflow
generates its rule, so the paper needs no rules file."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import torch

from ..items import Item
from ..metrics import pii
from ..verdicts.claims import Measured, measured_over_runs
from ..results import read_all_results


def fig1(cfg: Mapping[str, Any]) -> pd.DataFrame:
    """example2099-fig1: PII of the columns of a d × d matrix with N(0, 1) entries, one matrix per (width, run)."""
    rows = []
    for width in cfg["widths"]:
        for run in range(int(cfg["runs"])):
            generator = torch.Generator().manual_seed(int(cfg["seed"]) + run)
            weights = torch.randn(width, width, generator=generator, dtype=torch.float64)
            rows.append({"width": width, "run": run, "pii": float(pii(weights))})
    return pd.DataFrame(rows)


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, Measured]]:
    """example2099-fig1: the PII per width, the mean over runs with its seed spread."""
    if not results.get("fig1"):
        return {}
    frame = read_all_results(results["fig1"])
    return {"example2099-fig1": {f"pii_d{width}": measured_over_runs(g.pii) for width, g in frame.groupby("width")}}


ITEMS = (Item("example2099-fig1", "PII of a random matrix vs width", "simulation", fig1, claims=claims, plain=True),)
