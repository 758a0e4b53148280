"""Optimizers built by name, with their hyper-parameters; bad names fail with the list of choices."""

from __future__ import annotations

import pytest
import torch

from isonorm.train import OptimizerConfig, build_optimizer


def params():
    return [torch.zeros(3, requires_grad=True)]


@pytest.mark.parametrize(
    "name, cls", [("sgd", torch.optim.SGD), ("adam", torch.optim.Adam),
                  ("adamw", torch.optim.AdamW), ("rmsprop", torch.optim.RMSprop)]
)
def test_optimizer_by_name(name, cls):
    optimizer = build_optimizer(params(), OptimizerConfig(name, lr=0.123))
    assert type(optimizer) is cls
    assert optimizer.param_groups[0]["lr"] == 0.123


def test_hyper_parameters_reach_the_optimizer():
    group = build_optimizer(params(), OptimizerConfig("sgd", lr=0.1, momentum=0.9, weight_decay=1e-4)).param_groups[0]
    assert (group["momentum"], group["weight_decay"]) == (0.9, 1e-4)
    group = build_optimizer(params(), OptimizerConfig("adam", lr=1e-3, betas=(0.5, 0.9), eps=1e-6)).param_groups[0]
    assert (group["betas"], group["eps"]) == ((0.5, 0.9), 1e-6)


def test_unset_weight_decay_keeps_torchs_default():
    assert build_optimizer(params(), OptimizerConfig("adamw", lr=1e-3)).param_groups[0]["weight_decay"] == 0.01
    assert build_optimizer(params(), OptimizerConfig("adam", lr=1e-3)).param_groups[0]["weight_decay"] == 0


def test_bad_optimizer_name_lists_the_choices():
    with pytest.raises(ValueError, match=r"unknown optimizer 'lbfgs'.*adam.*adamw.*rmsprop.*sgd"):
        OptimizerConfig("lbfgs")


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="adam", momentum=0.9), "adam has no momentum"),
    (dict(name="sgd", betas=(0.5, 0.9)), "sgd has no betas"),
    (dict(name="sgd", lr=0.0), "lr must be > 0"),
])
def test_inconsistent_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OptimizerConfig(**kwargs)
