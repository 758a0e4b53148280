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


def test_the_products_alone_are_the_counted_products_and_update_the_weights(cpu_limits):
    depth, runs = 3, 6
    step = cpu_limits.products_work(depth, runs)
    weights = [cell.cell_contents for cell in step.__closure__ if isinstance(cell.cell_contents, list)][0]
    before = [weight.clone() for weight in weights]
    with FlopCounterMode(display=False) as counter:
        step()
    assert counter.get_total_flops() == cpu_limits.meterez_step_flop(depth, runs)
    assert [tuple(w.shape) for w in weights] == [(runs, 100, 3072), (runs, 100, 100), (runs, 100, 100),
                                                 (runs, 100, 100)]
    assert all(not torch.equal(w, b) for w, b in zip(weights, before))


def test_the_one_pass_block_passes_h_through_and_keeps_every_parameter_in_the_step(cpu_limits):
    from isonorm.experiments.meterez2024.training_grid import model_config
    from isonorm.models.bn_mlp import StackedBNMLP

    architecture = model_config(cpu_limits.GRID_CFG, 12, 10, 2)
    assert architecture.norm == "torch_bn"  # the block takes BN's weight and bias
    model = cpu_limits.one_pass_block(StackedBNMLP(architecture, [torch.Generator().manual_seed(k) for k in range(2)],
                                                   activations=["sin", "tanh"], classes=[10, 10], inputs=[12, 12]))
    h = torch.randn(2, 100, 7, requires_grad=True)
    params = [model.fc[1].bias, *model.norm_tensors(1)[:2]]
    out = model.fused_span(h, [], [params[0]], [torch.tensor(0.5)], [model.norm_tensors(1)])
    torch.testing.assert_close(out, h)
    grads = torch.autograd.grad(out.sum(), [h, *params])
    assert torch.equal(grads[0], torch.ones_like(h)) and all(torch.equal(g, torch.zeros_like(g)) for g in grads[1:])
    assert cpu_limits.step_with_one_pass_blocks(3, 2) > 0 and cpu_limits.originals_step(3, 2, 6, 1) > 0
