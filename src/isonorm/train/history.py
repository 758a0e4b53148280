"""The tidy history of a training: one row per (run, epoch) with the step's epoch statistics and the measures.

Rows are plain dicts of Python numbers (so a checkpoint holds them and ``torch.load(weights_only=True)`` reads
them back): a measure of shape (R,) gives each run a float, one of shape (R, K) a list of K floats (a profile,
say one value per layer; meterez2024's per-layer isometry gaps).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import pandas as pd
import torch

KEYS = ("run", "epoch")


def _per_run(name: str, value: Any, n_runs: int) -> list:
    tensor = torch.as_tensor(value)
    if tensor.dim() not in (1, 2) or tensor.shape[0] != n_runs:
        raise ValueError(
            f"measure returned {name!r} with shape {tuple(tensor.shape)}; it must give one value per stacked run, "
            f"shape ({n_runs},), or one row per run, shape ({n_runs}, K)"
        )
    return tensor.detach().double().cpu().tolist()


def epoch_rows(
    run_ids: Sequence[Any],
    epoch: int,
    stats: Mapping[str, Sequence[float]],
    measured: Mapping[str, Any],
    recorded: Sequence[bool],
) -> list[dict]:
    """The rows of ``epoch`` for the ``recorded`` runs: keys, ``stats`` (name → one float per run), ``measured``.

    At epoch 0 nothing has been trained: the statistics are NaN and a measurement may supply them
    (meterez2024 evaluates the fresh networks on the training set, as run.py does); later a measure must not
    reuse their names.
    """
    rows = [{"run": run, "epoch": epoch, **{name: values[r] for name, values in stats.items()}}
            for r, run in enumerate(run_ids)]
    for name, value in measured.items():
        if name in KEYS or (name in stats and epoch > 0):
            raise ValueError(f"measure returned a metric named {name!r}, which is a history column; rename it")
        for row, item in zip(rows, _per_run(name, value, len(run_ids))):
            row[name] = item
    return [row for row, keep in zip(rows, recorded) if keep]


def untrained(stat_names: Sequence[str], n_runs: int) -> dict[str, list[float]]:
    """The statistics of epoch 0: NaN, nothing having been trained."""
    return {name: [math.nan] * n_runs for name in stat_names}


def history_frame(rows: list[dict], stat_names: Sequence[str]) -> pd.DataFrame:
    """The rows as a frame (columns run, epoch, the statistics, the measures, in order of first appearance)."""
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=[*KEYS, *stat_names])
