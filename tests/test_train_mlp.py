"""The plain MLP of the training experiments (daneshmand2021-fig4a setup)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from isonorm.models.mlp import mlp


def test_layers_activations_and_bare_last_layer():
    net = mlp([12, 8, 8, 3])
    kinds = [type(m) for m in net]
    assert kinds == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]
    assert all(m.bias is None for m in net if isinstance(m, nn.Linear))
    assert net(torch.randn(4, 12)).shape == (4, 3)


def test_norm_sits_between_linear_and_activation():
    kinds = [type(m) for m in mlp([6, 5, 4], activation="tanh", norm="batch", bias=True)]
    assert kinds == [nn.Linear, nn.BatchNorm1d, nn.Tanh, nn.Linear]


def test_xavier_uniform_gain_sqrt2_bound_and_variance():
    """U(-a, a) with a = gain·√(6/(fan_in+fan_out)) has variance a²/3 = gain²·2/(fan_in+fan_out)."""
    fan_in, fan_out = 300, 200
    weight = mlp([fan_in, fan_out], generator=torch.Generator().manual_seed(0))[0].weight
    bound = math.sqrt(2) * math.sqrt(6 / (fan_in + fan_out))
    assert weight.abs().max() <= bound
    assert weight.var().item() == pytest.approx(2 * 2 / (fan_in + fan_out), rel=0.02)


def test_generator_makes_the_init_reproducible():
    first = mlp([5, 4, 2], generator=torch.Generator().manual_seed(3))
    second = mlp([5, 4, 2], generator=torch.Generator().manual_seed(3))
    other = mlp([5, 4, 2], generator=torch.Generator().manual_seed(4))
    assert all(torch.equal(a, b) for a, b in zip(first.parameters(), second.parameters()))
    assert not torch.equal(first[0].weight, other[0].weight)


@pytest.mark.parametrize("kwargs, message", [
    (dict(widths=[5]), "at least an input and an output"),
    (dict(widths=[5, 3], activation="swish"), "unknown activation 'swish'"),
    (dict(widths=[5, 3], init="he"), "unknown init 'he'"),
    (dict(widths=[5, 3], norm="group"), "unknown norm 'group'"),
])
def test_bad_arguments_are_reported(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mlp(**kwargs)
