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


class EpochPlan:
    """The steps of one epoch for R runs of ``sizes[r]`` training samples each.

    Runs of one data set (or of data sets of one size) take :func:`batch_slices` of their shared permutation,
    every run active at every step. Runs of unequal data sets share a job too (say MNIST's 60,000 images with
    CIFAR-10's 50,000): the epoch takes the longest run's steps, each run its own batches in its own order, and
    a run whose batches are done *sits out* the remaining steps: the step gets an ``active`` mask (R,) and must
    change nothing of an inactive run (its parameters, its BatchNorm running statistics, its epoch statistics).
    So every run sees exactly the batches it would see alone, and an epoch ends for all runs at once. Unequal runs
    must split into full batches (``size % batch_size == 0`` or ``drop_last``): a short batch of one run in the
    middle of the others' steps would need a batch of another shape.
    """

    def __init__(self, sizes: Sequence[int], batch_size: int, drop_last: bool, device: torch.device | str = "cpu"):
        self.sizes = [int(n) for n in sizes]
        self.batch_size, self.drop_last = int(batch_size), bool(drop_last)
        self.uniform = len(set(self.sizes)) == 1
        ragged = [n for n in self.sizes if n % self.batch_size]
        if not self.uniform and ragged and not self.drop_last:
            raise ValueError(
                f"runs of unequal data sets ({sorted(set(self.sizes))} samples) train in one job only in full batches "
                f"of {self.batch_size}; {sorted(set(ragged))} samples leave a short batch: train those data sets in "
                "separate jobs, or drop the last batch (drop_last)"
            )
        if self.uniform:
            self.run_steps = [sum(1 for _ in batch_slices(self.sizes[0], self.batch_size, self.drop_last))] * len(
                self.sizes)
        else:
            self.run_steps = [n // self.batch_size for n in self.sizes]
        self.steps = max(self.run_steps)
        self.device = torch.device(device)
        # the masks of the steps some runs sit out: one per distinct set of active runs, made once on the device
        steps = torch.tensor(self.run_steps)
        self._masks = {k: (steps > k).to(self.device) for k in sorted(set(self.run_steps)) if k < self.steps}

    def orders(self, seed_keys: Sequence[Sequence[object]], epoch: int) -> torch.Tensor:
        """(R, columns) int64 on the CPU: run r's batch order of the epoch (:func:`run_permutations`, the order it
        has alone), for unequal runs padded with its own first indices over the steps it sits out."""
        if self.uniform:
            return run_permutations(self.sizes[0], seed_keys, epoch)
        width = self.steps * self.batch_size
        rows = []
        for n, key in zip(self.sizes, seed_keys):
            order = run_permutations(n, [key], epoch)[0]
            rows.append(order.repeat(-(-width // n))[:width])  # the padding is never trained on
        return torch.stack(rows)

    def batches(self) -> Iterator[tuple[slice, torch.Tensor | None]]:
        """Each step's column slice of :meth:`orders` and its ``active`` mask (None: every run active)."""
        if self.uniform:
            for columns in batch_slices(self.sizes[0], self.batch_size, self.drop_last):
                yield columns, None
            return
        for k in range(self.steps):
            start = k * self.batch_size
            mask = None
            for bound in self._masks:
                if k >= bound:
                    mask = self._masks[bound]
            yield slice(start, start + self.batch_size), mask

    def seen(self, n_steps: int) -> tuple[int, int] | tuple[torch.Tensor, torch.Tensor]:
        """Batches and samples each run trained on in the epoch's first ``n_steps`` steps: two ints for equal
        runs, else two (R,) float64 tensors on the device."""
        if self.uniform:
            n = self.sizes[0]
            stop = n - n % self.batch_size if self.drop_last else n
            return n_steps, min(n_steps * self.batch_size, stop)
        batches = torch.tensor([min(n_steps, k) for k in self.run_steps], dtype=torch.float64, device=self.device)
        return batches, batches * self.batch_size
