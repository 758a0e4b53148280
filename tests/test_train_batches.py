"""Per-(run, epoch) batch orders: permutations, deterministic, different across runs and epochs."""

from __future__ import annotations

import pytest
import torch

from isonorm.train import EpochPlan, batch_slices, epoch_permutations, run_permutations


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


def test_an_epoch_plan_of_equal_runs_is_the_shared_permutation_in_slices():
    plan = EpochPlan([10, 10], 4, drop_last=False)
    keys = [("exp", "var", 0), ("exp", "var", 1)]
    assert torch.equal(plan.orders(keys, 2), epoch_permutations(10, [0, 1], "exp", "var", 2))
    assert [(s.start, s.stop, mask) for s, mask in plan.batches()] == [(0, 4, None), (4, 8, None), (8, 10, None)]
    assert plan.seen(3) == (3, 10) and plan.seen(1) == (1, 4)


def test_runs_of_unequal_data_sets_keep_their_own_batches_and_sit_out_the_rest():
    """MNIST (60,000) with CIFAR-10 (50,000) in one job, here 12 and 8 samples in batches of 4: the shorter run
    trains on its own 2 batches in its own order, then sits out the longer run's last step."""
    plan = EpochPlan([12, 8, 12], 4, drop_last=False)
    keys = [("exp", "a"), ("exp", "b"), ("exp", "c")]
    orders = plan.orders(keys, 5)
    assert orders.shape == (3, 12)
    for row, n, key in zip(orders, [12, 8, 12], keys):
        assert torch.equal(row[:n], run_permutations(n, [key], 5)[0])  # the order it has alone
    assert int(orders[1].max()) < 8  # its padding indexes its own samples
    steps = list(plan.batches())
    assert [(s.start, s.stop) for s, _ in steps] == [(0, 4), (4, 8), (8, 12)]
    assert steps[0][1] is None and steps[1][1] is None
    assert steps[2][1].tolist() == [True, False, True]
    batches, samples = plan.seen(3)
    assert batches.tolist() == [3, 2, 3] and samples.tolist() == [12, 8, 12]
    assert plan.seen(1)[0].tolist() == [1, 1, 1]  # a step cap cuts every run alike


def test_unequal_runs_that_leave_a_short_batch_are_refused():
    with pytest.raises(ValueError, match=r"full batches of 4.*\[10\].*separate jobs"):
        EpochPlan([12, 10], 4, drop_last=False)
    assert EpochPlan([12, 10], 4, drop_last=True).run_steps == [3, 2]
