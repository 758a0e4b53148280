"""Models (F), (C), (R) of Lu et al. 2024: structure, variants, constant init (A.1.4)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from isonorm.metrics import conv_centre_tap, pii
from isonorm.models.lu_fnn import LuFNN, constant_init
from isonorm.models.resnet18 import ResNet18
from isonorm.models.simple_cnn import SimpleCNN


def _bn_count(model: nn.Module) -> int:
    return sum(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())


@pytest.mark.parametrize("variant", ["original", "norm", "res", "norm_res"])
def test_fnn_variants_shapes_and_norm_modules(variant):
    torch.manual_seed(0)
    model = LuFNN(variant, "gelu", in_features=12, width=8, blocks=3, num_classes=4)
    assert model(torch.randn(5, 12)).shape == (5, 4)
    assert _bn_count(model) == (1 if "norm" in variant else 0)  # decision A5: one shared BN
    assert [n for n, _ in model.named_modules() if n.startswith("linearH.")] == ["linearH.0", "linearH.1", "linearH.2"]


def test_fnn_per_block_norm_flag():
    model = LuFNN("norm_res", "relu", in_features=6, width=4, blocks=3, shared_norm=False)
    assert _bn_count(model) == 3


def test_fnn_norm_res_block_is_bn_of_act_plus_input():
    """MLP.py: x = BN(act(linearH[i](x)) + x), the same BN module in every block, none after `linear`."""
    torch.manual_seed(1)
    model = LuFNN("norm_res", "tanh", in_features=6, width=4, blocks=2, num_classes=3).train()
    x = torch.randn(7, 6)
    reference = LuFNN("norm_res", "tanh", in_features=6, width=4, blocks=2, num_classes=3).train()
    reference.load_state_dict(model.state_dict())
    h = torch.tanh(reference.linear(x))
    for layer in reference.linearH:
        h = reference.norm(torch.tanh(layer(h)) + h)
    torch.testing.assert_close(model(x), reference.out(h))


def test_fnn_original_block_is_plain():
    torch.manual_seed(2)
    model = LuFNN("original", "sigmoid", in_features=6, width=4, blocks=2, num_classes=3)
    x = torch.randn(3, 6)
    h = torch.sigmoid(model.linear(x))
    for layer in model.linearH:
        h = torch.sigmoid(layer(h))
    torch.testing.assert_close(model(x), model.out(h))


def test_constant_init_makes_pii_one_and_default_init_is_near_random_value():
    model = LuFNN(width=200, blocks=2)
    constant_init(model, "linearH.1", 0.1)
    for orientation in ("rows", "columns"):
        assert float(pii(model.linearH[1].weight.double(), orientation)) == pytest.approx(1.0)
    assert torch.all(model.linearH[1].bias == 0.1)
    # A.1.1: a random i.i.d. k-dim matrix gives PII ≈ √(2/(π·k))
    assert float(pii(model.linearH[0].weight.double())) == pytest.approx(math.sqrt(2 / (math.pi * 200)), rel=0.1)


def test_bad_names_are_rejected_with_choices():
    with pytest.raises(ValueError, match="variant"):
        LuFNN("post_norm")
    with pytest.raises(ValueError, match="activation"):
        LuFNN(activation="swish")
    with pytest.raises(ValueError, match="choose one of"):
        constant_init(LuFNN(width=4, blocks=1), "linearH.7", 0.1)
    with pytest.raises(ValueError, match="variant"):
        ResNet18("pre_act")


def test_simple_cnn_layers_and_centre_taps():
    model = SimpleCNN(num_classes=100, width=4, fc_width=8)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 100)
    assert [conv_centre_tap(getattr(model, f"conv{i}").weight).shape for i in (1, 2, 3)] == [
        (4, 3), (8, 4), (16, 8)]
    assert _bn_count(model) == 2  # BN after conv1 and conv2 only (A.1.4 (C))
    constant_init(model, "conv1", 0.1)
    assert float(pii(conv_centre_tap(model.conv1.weight).double())) == pytest.approx(1.0)


@pytest.mark.parametrize("variant", ["original", "norm_res"])
def test_resnet18_names_shapes_and_variants(variant):
    model = ResNet18(variant, "gelu", num_classes=100, width=4)
    names = dict(model.named_parameters())
    for stage in (1, 2, 3, 4):
        assert f"layer{stage}.0.conv1.weight" in names
    assert names["layer1.0.conv1.weight"].shape == (4, 4, 3, 3)
    assert names["layer3.0.conv1.weight"].shape == (16, 8, 3, 3)
    assert model.fc.in_features == 32  # 8 × width (the CIFAR-100 file's Linear(64, 100) fixed)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 100)
    convs = sum(isinstance(m, nn.Conv2d) for m in model.modules())
    if variant == "original":
        assert _bn_count(model) == 0 and convs == 17  # no BN, no shortcut convs
    else:
        assert _bn_count(model) == 20 and convs == 20  # 17 + 3 projection shortcuts


def test_resnet18_original_has_no_shortcut_path():
    """Without residuals a block's output is act(conv2(act(conv1 x))) only."""
    torch.manual_seed(3)
    block = ResNet18("original", "relu", width=4).layer1[0]
    x = torch.randn(1, 4, 8, 8)
    expected = torch.relu(block.conv2(torch.relu(block.conv1(x))))
    torch.testing.assert_close(block(x), expected)
