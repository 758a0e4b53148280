"""Mini-batch order: one permutation per (run, epoch), batches are index slices (DESIGN 8, no DataLoader)."""

from __future__ import annotations

from typing import Iterator, Sequence

import torch

from ..runtime import generator


def epoch_permutations(
    n_samples: int, run_ids: Sequence[object], experiment: str, variant: str, epoch: int
) -> torch.Tensor:
    """(R, n_samples) int64 on the CPU: row r shuffles the data set for run ``run_ids[r]`` in ``epoch``.

    A run id is anything with a stable ``str`` (an index, or a name such as an activation).

    Each row comes from its own generator seeded with ``derive_seed(experiment, variant, run, epoch)``, so a
    run's batch order does not depend on which other runs share its stack, and it is the same on any
    device (drawn on the CPU).
    """
    return torch.stack(
        [torch.randperm(n_samples, generator=generator(experiment, variant, run, epoch)) for run in run_ids]
    )


def batch_slices(n_samples: int, batch_size: int, drop_last: bool) -> Iterator[slice]:
    """Consecutive column slices of a permutation; the last short batch is kept unless ``drop_last``
    (torch DataLoader's default keeps it, as the original notebooks did)."""
    stop = n_samples - n_samples % batch_size if drop_last else n_samples
    for start in range(0, stop, batch_size):
        yield slice(start, min(start + batch_size, stop))
