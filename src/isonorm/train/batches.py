"""Mini-batch order: one permutation per (run, epoch), batches are index slices (architecture §8, no DataLoader)."""

from __future__ import annotations

from typing import Iterator, Sequence

import torch

from ..runtime import generator


def run_permutations(n_samples: int, seed_keys: Sequence[Sequence[object]], epoch: int) -> torch.Tensor:
    """(R, n_samples) int64 on the CPU: row r shuffles the data set with ``generator(*seed_keys[r], epoch)``.

    Each row has its own generator, so a run's batch order does not depend on which other runs share its
    stack, and it is the same on any device (drawn on the CPU).
    """
    return torch.stack([torch.randperm(n_samples, generator=generator(*key, epoch)) for key in seed_keys])


def epoch_permutations(
    n_samples: int, run_ids: Sequence[object], experiment: str, variant: str, epoch: int
) -> torch.Tensor:
    """:func:`run_permutations` with run ``run_ids[r]`` seeded by ``derive_seed(experiment, variant, run, epoch)``.

    A run id is anything with a stable ``str`` (an index, or a name such as an activation).
    """
    return run_permutations(n_samples, [(experiment, variant, run) for run in run_ids], epoch)


def batch_slices(n_samples: int, batch_size: int, drop_last: bool) -> Iterator[slice]:
    """Consecutive column slices of a permutation; the last short batch is kept unless ``drop_last``
    (torch DataLoader's default keeps it, as the original notebooks did)."""
    stop = n_samples - n_samples % batch_size if drop_last else n_samples
    for start in range(0, stop, batch_size):
        yield slice(start, min(start + batch_size, stop))
