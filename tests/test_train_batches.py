"""Per-(run, epoch) batch orders: permutations, deterministic, different across runs and epochs."""

from __future__ import annotations

import torch

from isonorm.train import batch_slices, epoch_permutations


def test_each_row_is_a_permutation():
    order = epoch_permutations(50, [0, 1, 2], "exp", "var", 1)
    assert order.shape == (3, 50)
    for row in order:
        assert torch.equal(row.sort().values, torch.arange(50))


def test_permutations_are_deterministic():
    assert torch.equal(epoch_permutations(50, [0, 1], "exp", "var", 4), epoch_permutations(50, [0, 1], "exp", "var", 4))


def test_permutations_differ_between_runs_epochs_and_variants():
    first = epoch_permutations(50, [0, 1], "exp", "var", 1)
    assert not torch.equal(first[0], first[1])
    assert not torch.equal(first, epoch_permutations(50, [0, 1], "exp", "var", 2))
    assert not torch.equal(first, epoch_permutations(50, [0, 1], "exp", "other", 1))


def test_a_runs_order_does_not_depend_on_its_stack_mates():
    stacked = epoch_permutations(50, [5, 9], "exp", "var", 3)
    assert torch.equal(stacked[1], epoch_permutations(50, [9], "exp", "var", 3)[0])


def test_batch_slices_cover_the_epoch():
    assert [(s.start, s.stop) for s in batch_slices(10, 4, drop_last=False)] == [(0, 4), (4, 8), (8, 10)]
    assert [(s.start, s.stop) for s in batch_slices(10, 4, drop_last=True)] == [(0, 4), (4, 8)]
