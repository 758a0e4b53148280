"""The work benchmarks/cpu_limits.py counts for a workload is what the workload computes: its matrix products'
FLOP as torch's own counter sees them (a fraction of the machine's limit against a wrong count means nothing)."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from conftest import REPO, script_module

SCRIPT = REPO / "benchmarks" / "cpu_limits.py"


@pytest.fixture(scope="module")
def cpu_limits():
    return script_module(SCRIPT)


def test_the_fig3_count_is_the_spectrum_chains_products(cpu_limits):
    from isonorm.experiments.daneshmand2021.simulations import _smallest_sigma_min

    runs, d, n, layers = 2, 64, 8, 3
    gen = torch.Generator().manual_seed(0)
    h0 = torch.randn(runs, d, n, dtype=torch.float64, generator=gen)
    with FlopCounterMode(display=False) as counter:
        _smallest_sigma_min(h0, layers, gen, "spectrum")
    draws, flop = cpu_limits.fig3_work(layers, runs, d, n)
    initial_gram = 2 * runs * n * n * d  # the spectrum of H0, before the first layer
    assert counter.get_total_flops() == flop + initial_gram
    assert draws == layers * runs * d * n


def test_the_meterez_count_is_one_engine_steps_products(cpu_limits):
    from isonorm.data import dataset_spec
    from isonorm.experiments.meterez2024.training_grid import grid_training

    depth, stack, batch = 3, cpu_limits.STACKS[0], cpu_limits.BATCH
    x = torch.randn(len(stack), 2 * batch, 3072)
    y = torch.stack([torch.randint(0, dataset_spec(name).num_classes, (2 * batch,)) for name in stack])
    job = grid_training({**cpu_limits.GRID_CFG, "cuda_graph": False}, stack, cpu_limits.ACTS, depth, x, y)
    index = torch.randint(0, 2 * batch, (len(job.runs), batch))
    with FlopCounterMode(display=False) as counter:
        job.step._step(index)
    assert counter.get_total_flops() == cpu_limits.meterez_step_flop(depth, len(job.runs))
