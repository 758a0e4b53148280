"""The grid job with `fused_block: true` (the engine's fused block, which benchmarks/meterez_fusion.py measures) trains
as the eager one does, and Inductor fuses the block (the benchmark's counts); no speed is asserted here."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from conftest import REPO, script_module

# Inductor compiles the block to C++: seconds, and a C++ compiler (skipped with the reason where there is none)
CXX = os.environ.get("CXX", "g++")
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which(CXX) is None, reason=f"no C++ compiler ({CXX}) for torch.compile")]


@pytest.fixture(scope="module")
def fusion():
    return script_module(REPO / "benchmarks" / "meterez_fusion.py")


def test_the_fused_step_trains_as_the_eager_one_and_fuses_the_block(fusion):
    depth, stack, batch = 3, fusion.STACKS[0], fusion.BATCH
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(len(stack), 2 * batch, 3072, generator=generator)
    y = torch.stack([torch.randint(0, 10, (2 * batch,), generator=generator) for _ in stack])
    index = torch.randint(0, 2 * batch, (2 * len(fusion.ACTS), batch), generator=generator)
    jobs = [fusion.grid_training({**fusion.GRID_CFG, "cuda_graph": False, "fused_block": fused}, stack, fusion.ACTS,
                                 depth, x, y) for fused in (False, True)]
    model = jobs[1].step.model
    assert model.fused_span is not None and jobs[0].step.model.fused_span is None
    for _ in range(3):
        for job in jobs:
            job.step._step(index)
    eager = dict(jobs[0].step.model.state_dict())
    for name, value in model.state_dict().items():  # parameters and the BN running statistics
        torch.testing.assert_close(value, eager[name], rtol=1e-5, atol=1e-5, msg=name)
    ops, kernels = fusion.block_counts(model, torch.device("cpu"))
    assert 0 < kernels < ops  # Inductor fused the block's operators


def test_the_joint_jobs_idle_step_restores_two_running_statistics_per_layer(fusion):
    """The step the CIFAR runs sit out in the one job per depth: the all-runs step's operators plus the restore of
    each layer's running mean and variance and a few per step, nothing per run."""
    counts = {depth: fusion.joint_counts(depth, torch.device("cpu")) for depth in (2, 4)}
    per_layer = {kind: (counts[4][f"joint_{kind}_ops_per_step"] - counts[2][f"joint_{kind}_ops_per_step"]) / 2
                 for kind in ("full", "idle")}
    assert per_layer["idle"] - per_layer["full"] == 2
    assert 0 < counts[2]["joint_idle_ops_per_step"] - counts[2]["joint_full_ops_per_step"] - 2 * 2 <= 10


def test_the_projected_grid_hours_scale_with_the_kernels_and_take_measured_graph_steps_when_given(fusion):
    rows = [{"depth": depth, "eager_ops_per_step": 15 * depth + 18, "fused_kernels_per_step": 6 * depth + 18,
             "joint_full_ops_per_step": 15 * depth + 18, "joint_idle_ops_per_step": 17 * depth + 26,
             "joint_fused_full_kernels_per_step": 6 * depth + 18, "joint_fused_idle_kernels_per_step": 8 * depth + 26}
            for depth in (100, 500, 1000)]
    hours = fusion.projected_grid_hours(rows)
    assert set(hours) == {"h100_eager", "h100_fused", "h100_joint_eager", "h100_joint_fused"}  # projected only
    assert 0.39 < hours["h100_fused"] / hours["h100_eager"] < 0.41  # ≈ 6/15 of the kernels
    # one job per depth: 600 steps of 12 runs a epoch instead of 500 + 600 of 6, 100 of them restoring statistics
    assert 0.55 < hours["h100_joint_eager"] / hours["h100_eager"] < 0.57
    assert 0.57 < hours["h100_joint_fused"] / hours["h100_fused"] < 0.59
    measured = [{**row, "eager_graph_s_per_step": 0.002 * row["depth"], "fused_graph_s_per_step": 0.001 * row["depth"],
                 **{f"joint_{kind}_{part}_graph_s_per_step": 0.002 * row["depth"] for kind in ("eager", "fused")
                    for part in ("full", "idle")}} for row in rows]
    hours = fusion.projected_grid_hours(measured)
    assert hours["graph_fused"] == pytest.approx(hours["graph_eager"] / 2)
    assert hours["graph_joint_eager"] == pytest.approx(hours["graph_eager"] * 600 / 1100)
