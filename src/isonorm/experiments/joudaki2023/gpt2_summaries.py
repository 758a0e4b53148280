"""Reductions of the Fig. B.5 probe (``gpt2_probe.figb5``) shared by the notebook and the claims.

Every value is a mean over the texts (the figure's line), per mode: ``train`` (dropout on, the published
setting) or ``eval`` (decision D7's variant). Quantities are keyed by the paper's block indices (h.7-h.11);
a run with other blocks (the quick preset's tiny model) yields only the block-free claims.
"""

from __future__ import annotations

import math

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...verdicts.claims import Measured
from ...results import read_all_results
from .spreads import measured_with_spread

PAPER_BLOCKS = (7, 8, 9, 10, 11)  # joudaki2023-figb5: blocks with index > 6 of GPT-2 small
PRIMARY_MODE = "train"  # D7: train-mode dropout as published


def entry_means(frame: pd.DataFrame, mode: str = PRIMARY_MODE) -> pd.DataFrame:
    """Mean gap over texts per entry (li, module, block, layernorm), in entry order, for one mode."""
    sub = frame[frame["mode"] == mode]
    if sub.empty:
        raise ValueError(f"no Fig. B.5 rows in mode {mode!r}; modes present: {sorted(frame['mode'].unique())}")
    return (sub.groupby(["li", "module", "block", "layernorm"], as_index=False, sort=True)
            .iso_gap.mean())


def add_ln_pairs(frame: pd.DataFrame, mode: str = PRIMARY_MODE) -> pd.DataFrame:
    """Per text, block and position k (1, 2): the gap at the residual stream (Add_k) and after ln_k."""
    sub = frame[frame["mode"] == mode]
    adds = sub[sub.module.str.contains(r"\.Add_\d+$")].assign(k=lambda d: d.module.str.extract(r"Add_(\d+)$")[0])
    lns = sub[sub.layernorm].assign(k=lambda d: d.module.str.extract(r"ln_(\d+)$")[0])
    pairs = adds.merge(lns, on=["text", "block", "k"], suffixes=("_add", "_ln"))
    out = pairs[["text", "block", "k", "iso_gap_add", "iso_gap_ln"]].rename(
        columns={"iso_gap_add": "add", "iso_gap_ln": "ln"})
    out["k"] = out["k"].astype(int)
    return out.assign(drop=out["add"] - out["ln"]).sort_values(["text", "block", "k"], ignore_index=True)


def pair_means(frame: pd.DataFrame, mode: str = PRIMARY_MODE) -> pd.DataFrame:
    """Mean over texts of the Add and LN gaps per (block, k)."""
    return add_ln_pairs(frame, mode).groupby(["block", "k"], as_index=False)[["add", "ln", "drop"]].mean()


def max_ln_over_add(frame: pd.DataFrame, mode: str = PRIMARY_MODE) -> float:
    """The claim as the number it states (docs/decisions/joudaki2023.md, "Tolerances"): the largest mean gap
    after a LayerNorm minus that of its input; < 0 when every LayerNorm lowers the gap."""
    means = pair_means(frame, mode)
    return float((means["ln"] - means["add"]).max()) if len(means) else math.nan


def block_outputs_feed_next(frame: pd.DataFrame, mode: str = PRIMARY_MODE) -> bool:
    """Block output h.i equals the next block's Add_1 (the same tensor: the residual stream)."""
    means = entry_means(frame, mode).set_index("module").iso_gap
    blocks = sorted(frame.block.unique())
    pairs = [(f"h.{b}", f"h.{b + 1}.Add_1") for b in blocks if f"h.{b + 1}.Add_1" in means.index]
    return bool(pairs) and all(np.isclose(means[a], means[b], rtol=1e-9, atol=0) for a, b in pairs)


def _frame_claims(frame: pd.DataFrame) -> dict[str, float]:
    mode = PRIMARY_MODE if PRIMARY_MODE in set(frame["mode"]) else min(frame["mode"].unique())
    means = entry_means(frame, mode)
    by_name = means.set_index("module").iso_gap
    top = means.loc[means.iso_gap.idxmax()]
    last = int(frame.block.max())
    out: dict[str, float] = {
        "max_gap": float(top.iso_gap),
        "argmax_is_last_attn_c_proj": float(top.module == f"h.{last}.attn.c_proj"),
        "max_ln_over_add": max_ln_over_add(frame, mode),
        "block_output_equals_next_add": float(block_outputs_feed_next(frame, mode)),
    }
    mlp = means[means.module.str.contains(r"\.mlp(?:\.|$)")]
    out["mlp_gap_min"], out["mlp_gap_max"] = float(mlp.iso_gap.min()), float(mlp.iso_gap.max())
    for row in pair_means(frame, mode).itertuples():
        if row.block in PAPER_BLOCKS:
            out[f"add_h{row.block}_{row.k}"] = float(row.add)
            out[f"ln_h{row.block}_{row.k}"] = float(row.ln)
    for module, key in (("attn.resid_dropout", "resid_dropout"), ("attn", "attn")):
        if f"h.{PAPER_BLOCKS[-1]}.{module}" in by_name.index:
            out[f"{key}_h{PAPER_BLOCKS[-1]}"] = float(by_name[f"h.{PAPER_BLOCKS[-1]}.{module}"])
    if "eval" in set(frame["mode"]):
        out["max_ln_over_add_eval"] = max_ln_over_add(frame, "eval")
    return out


def claims(results: Mapping[str, Sequence[str]], cfg: Mapping[str, Any]) -> dict[str, dict[str, Measured]]:
    """{"joudaki2023-figb5": {quantity: value}} from the ``figb5`` results (nothing when they were not run); each
    value with its spread over the texts, the figure's own 95 % band ("Seed spreads")."""
    if not results.get("figb5"):
        return {}
    frame = read_all_results(results["figb5"])
    return {"joudaki2023-figb5": measured_with_spread(_frame_claims, frame.assign(run=frame.text))}
