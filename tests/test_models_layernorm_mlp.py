"""The LayerNorm MLP of Joudaki et al. (2023): structure, initialisation, traces, and stacked traces."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from isonorm.models.layernorm_mlp import (
    ACTIVATIONS,
    LayerNormMLP,
    module_index,
    module_kind,
)
from isonorm.runtime import generator
from isonorm.train import StackedModels


def model(activation: str = "Tanh", seed: int = 0, **kwargs) -> LayerNormMLP:
    return LayerNormMLP(12, [16, 24], 10, activation, generator=generator("test-lnmlp", seed), **kwargs)


def test_module_order_and_names():
    net = model()
    assert net.module_names == ["norm-0", "fc-0", "act-0", "norm-1", "fc-1", "act-1", "norm-2", "fc-2", "act-2"]
    kinds = [type(m) for m in net.layers]
    assert kinds == [nn.LayerNorm, nn.Linear, nn.Tanh] * 3
    assert [m.normalized_shape[0] for m in net.layers if isinstance(m, nn.LayerNorm)] == [12, 16, 24]
    assert [(m.in_features, m.out_features) for m in net.layers if isinstance(m, nn.Linear)] == [
        (12, 16), (16, 24), (24, 10)]
    assert all(m.eps == 1e-5 and m.elementwise_affine for m in net.layers if isinstance(m, nn.LayerNorm))
    assert [module_kind(n) for n in net.module_names[:3]] == ["norm", "fc", "act"]
    assert [module_index(n) for n in net.module_names] == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_act_on_logits_flag_drops_only_the_last_activation():
    net = model(act_on_logits=False)
    assert net.module_names[-2:] == ["norm-2", "fc-2"]
    x = torch.randn(5, 12)
    torch.testing.assert_close(net(x), net.layers[-1](net.layers[-2](net(x, trace=True)[-3])))


@pytest.mark.parametrize("activation", ["Sigmoid", "Tanh", "ReLU"])
def test_activation_is_applied_to_the_logits(activation):
    net = model(activation)
    trace = net(torch.randn(7, 12), trace=True)
    torch.testing.assert_close(trace[-1], getattr(nn, activation)()(trace[-2]))
    if activation == "Sigmoid":
        assert bool(((trace[-1] > 0) & (trace[-1] < 1)).all())


def test_weights_are_normal_with_variance_one_over_fan_in_and_biases_torch_default():
    net = LayerNormMLP(400, [300], 10, "ReLU", generator=generator("test-lnmlp", "stats"))
    fc = net.layers[1]
    w = fc.weight.double()
    n = w.numel()  # 120 000 draws: sd of the variance estimate ≈ √(2/n) ≈ 0.4 % relative
    assert abs(w.mean().item()) < 4 / math.sqrt(n * 400)
    assert w.var().item() * 400 == pytest.approx(1.0, rel=0.03)
    kurtosis = ((w - w.mean()) ** 4).mean() / w.var() ** 2
    assert kurtosis.item() == pytest.approx(3.0, abs=0.1)  # Gaussian, not uniform (1.8)
    bound = 1 / math.sqrt(400)
    assert bool((fc.bias.abs() <= bound).all()) and fc.bias.abs().max().item() > 0.8 * bound
    ln = net.layers[0]
    assert torch.equal(ln.weight, torch.ones(400)) and torch.equal(ln.bias, torch.zeros(400))


def test_prelu_starts_at_its_default_slope():
    net = model("PReLU")
    assert all(torch.equal(m.weight, torch.tensor([0.25])) for m in net.layers if isinstance(m, nn.PReLU))


def test_initialisation_is_determined_by_the_seed():
    first, again, other = model(seed=1), model(seed=1), model(seed=2)
    for (name, a), b, c in zip(first.state_dict().items(), again.state_dict().values(), other.state_dict().values()):
        assert torch.equal(a, b), name
        if name.startswith("layers.fc"):
            assert not torch.equal(a, c), name


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_trace_matches_the_plain_forward_and_the_sequence_of_modules(activation):
    net = model(activation)
    x = torch.randn(6, 3, 2, 2)  # flattened to 12 features, as the original's x.view(B, -1)
    trace = net(x, trace=True)
    assert isinstance(trace, tuple) and len(trace) == len(net.module_names)
    torch.testing.assert_close(trace[-1], net(x))
    h = x.flatten(1)
    for module, out in zip(net.layers, trace):
        h = module(h)
        torch.testing.assert_close(out, h)


@pytest.mark.parametrize("activation", ["PReLU", "GELU", "Sigmoid"])
def test_stacked_trace_equals_each_runs_own_trace(activation):
    nets = [model(activation, seed=s) for s in range(3)]
    stacked = StackedModels(nets)
    x = torch.randn(3, 5, 12)
    traces = stacked(x, trace=True)
    assert len(traces) == len(nets[0].module_names)
    for run, net in enumerate(nets):
        for stacked_out, own in zip(traces, net(x[run], trace=True)):
            torch.testing.assert_close(stacked_out[run], own)
    shared = stacked(x[0], shared_input=True, trace=True)  # keyword arguments also pass with a shared input
    for run, net in enumerate(nets):
        torch.testing.assert_close(shared[4][run], net(x[0], trace=True)[4])


def test_stacked_forward_without_kwargs_is_unchanged():
    nets = [model(seed=s) for s in range(2)]
    x = torch.randn(2, 4, 12)
    out = StackedModels(nets)(x)
    assert isinstance(out, torch.Tensor)
    for run, net in enumerate(nets):
        torch.testing.assert_close(out[run], net(x[run]))


def test_bad_arguments_fail_clearly():
    with pytest.raises(ValueError, match="unknown activation 'relu'"):
        LayerNormMLP(4, [4], 2, "relu")
    with pytest.raises(ValueError, match="≥ 1"):
        LayerNormMLP(4, [0], 2)
