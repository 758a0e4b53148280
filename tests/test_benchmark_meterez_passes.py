"""benchmarks/meterez_passes.py: a pass's counts split into the measurement and a part per test batch as the pass
really runs, and its projection gives back the shapes preset's measured hours at the eval batch it ran at."""

from __future__ import annotations

import pytest
import torch

from conftest import REPO, script_module


@pytest.fixture(scope="module")
def passes():
    return script_module(REPO / "benchmarks" / "meterez_passes.py")


@pytest.fixture(scope="module")
def counts(passes):
    return passes.pass_counts(passes.STACKS[0], 2)


def test_a_pass_is_the_measurement_and_a_part_per_test_batch(passes, counts):
    """Counted with one and two test batches; a pass of three then launches what the split predicts."""
    assert counts["ops_per_batch"] > 0 and counts["ops_fixed"] > 0
    assert counts["flop_per_sample"] > 0 and counts["bytes_per_sample"] > 0
    generator, stack = torch.Generator().manual_seed(1), passes.STACKS[0]
    job = passes.grid_job(stack, 2, generator, torch.device("cpu"))
    measure = passes.grid_measure(job, passes.random_split(stack, 3 * passes.BATCH, generator), passes.BATCH)
    measure(job.step.model, 1)
    with passes.OpCounter() as ops:
        measure(job.step.model, 1)
    assert ops.total == counts["ops_fixed"] + 3 * counts["ops_per_batch"]


def test_fewer_test_batches_launch_fewer_operators_and_move_the_same_data(passes, counts):
    small, whole = passes.pass_at(counts, 1000), passes.pass_at(counts, passes.TEST_SAMPLES)
    assert small["ops"] - whole["ops"] == 9 * counts["ops_per_batch"]
    assert small["flop"] == whole["flop"] and small["bytes"] == whole["bytes"]


def test_the_projection_gives_back_the_measured_hours_and_takes_the_slower_of_host_and_device(passes, counts):
    seconds = 2.0
    at_measured = passes.pass_at(counts, passes.SHAPES_EVAL_BATCH)
    row = {"depth": 2, "counts": counts, "paper_passes": 1800, "s_per_op": seconds / at_measured["ops"]}
    hours = passes.projected_hours([row], [passes.SHAPES_EVAL_BATCH, passes.TEST_SAMPLES])
    assert hours["stacks"][passes.SHAPES_EVAL_BATCH] == pytest.approx(1800 * seconds / 3600)
    assert hours["stacks"][passes.TEST_SAMPLES] < hours["stacks"][passes.SHAPES_EVAL_BATCH]
    slow_host = {**row, "s_per_op": 1e-12}  # a pass whose launches cost nothing is its device time
    device = passes.device_seconds(at_measured["flop"], at_measured["bytes"])
    assert passes.projected_hours([slow_host], [1000])["stacks"][1000] == pytest.approx(1800 * device / 3600)
    # one job per depth: two rows' passes become one, at the slower row's rate
    twin = {**row, "s_per_op": 2 * row["s_per_op"]}
    joint = passes.projected_hours([row, twin], [1000])["joint"][1000]
    assert joint == pytest.approx(1800 * 2 * seconds / 3600)


def test_the_gpu_timing_times_a_pass_at_every_eval_batch(passes, monkeypatch):
    """``--device cuda``'s timing, on the CPU over a small test split (the real one is 10,000 per data set)."""
    monkeypatch.setattr(passes, "TEST_SAMPLES", 300)
    seconds = passes.timed_pass(passes.STACKS[1], 2, [100, 300], torch.device("cpu"), repeats=1)
    assert set(seconds) == {100, 300} and all(s > 0 for s in seconds.values())
