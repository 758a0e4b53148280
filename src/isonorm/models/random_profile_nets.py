"""Random (untrained) MLP and ConvNet whose per-layer orthogonality gap is profiled in
daneshmand2021 Appendix Figure 6a/6b (daneshmand2021-appfig6a, daneshmand2021-appfig6b, decision B9: as coded).

Each layer is ``activation → linear map → normaliser``: the ReLU comes *before* the linear map, so layer 1
applies ReLU to the raw input. The readout that the authors build but never use is left out.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

Norm = Literal["batchnorm", "none"]


def _normaliser(norm: Norm, features: int, conv: bool) -> nn.Module:
    """BatchNorm with batch statistics, or the identity for the vanilla net.

    ``track_running_stats=False`` makes BN use the statistics of the batch it is given in every mode: the
    networks of daneshmand2021-appfig6a/daneshmand2021-appfig6b are never trained and run in training mode (batch mean and variance,
    affine γ=1, β=0, eps 1e-5), so running averages would only be unused hidden state.
    """
    if norm == "batchnorm":
        bn = nn.BatchNorm2d if conv else nn.BatchNorm1d
        return bn(features, track_running_stats=False)
    if norm == "none":
        return nn.Identity()
    raise ValueError(f"norm must be 'batchnorm' or 'none', got {norm!r}")


def _check_sizes(**sizes: int) -> None:
    for name, value in sizes.items():
        if value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value}")


def profile_mlp(
    in_features: int = 3072,
    width: int = 100,
    layers: int = 30,
    norm: Norm = "batchnorm",
    generator: torch.Generator | None = None,
) -> nn.Sequential:
    """``layers`` blocks of ReLU → Linear(no bias) → BatchNorm1d/Identity, widths in_features → width → … → width.

    Defaults: CIFAR-10 flattened (3·32·32), width 100, 30 layers; Xavier-normal weights with gain √2
    (``calculate_gain('relu')``) — daneshmand2021-appfig6a. Each block is one layer for
    :func:`layer_inputs`.
    """
    _check_sizes(in_features=in_features, width=width, layers=layers)
    blocks = []
    for index in range(layers):
        linear = nn.Linear(in_features if index == 0 else width, width, bias=False)
        nn.init.xavier_normal_(linear.weight, gain=math.sqrt(2.0), generator=generator)
        blocks.append(nn.Sequential(nn.ReLU(), linear, _normaliser(norm, width, conv=False)))
    return nn.Sequential(*blocks)


def profile_convnet(
    in_channels: int = 3,
    channels: int = 100,
    layers: int = 30,
    norm: Norm = "batchnorm",
    padding_mode: str = "reflect",
    generator: torch.Generator | None = None,
) -> nn.Sequential:
    """``layers`` blocks of ReLU → Conv2d(3×3, stride 1, pad 1, no bias) → BatchNorm2d/Identity.

    Defaults follow daneshmand2021-appfig6b: 3 → 100 → … → 100 channels, 30 layers, Xavier-normal with
    gain 1 (``calculate_gain('conv2d')``), and *reflect* padding — the network's own default, because the
    authors' ``padding_mode='zero'`` argument never reaches it. Spatial size is preserved.
    """
    _check_sizes(in_channels=in_channels, channels=channels, layers=layers)
    blocks = []
    for index in range(layers):
        conv = nn.Conv2d(
            in_channels if index == 0 else channels,
            channels,
            kernel_size=3,
            stride=1,
            padding=1,
            bias=False,
            padding_mode=padding_mode,
        )
        nn.init.xavier_normal_(conv.weight, gain=1.0, generator=generator)
        blocks.append(nn.Sequential(nn.ReLU(), conv, _normaliser(norm, channels, conv=True)))
    return nn.Sequential(*blocks)


def layer_inputs(net: nn.Sequential, x: torch.Tensor) -> list[torch.Tensor]:
    """The input of every layer ℓ = 1..L of a profile net; entry 0 is ``x`` itself (ℓ = 1 is the raw data).

    daneshmand2021-appfig6a/daneshmand2021-appfig6b measure V(H_ℓ) on the input of each layer, so the output of the last layer is not
    returned.
    Runs without autograd: the profile is a measurement of the random network, nothing is trained.
    """
    if not isinstance(net, nn.Sequential) or len(net) == 0:
        raise TypeError("net must be a non-empty nn.Sequential of layers, as built by profile_mlp/profile_convnet")
    first = next((m for m in net.modules() if isinstance(m, (nn.Linear, nn.Conv2d))), None)
    if first is None:
        raise TypeError("net has no nn.Linear or nn.Conv2d layer; build it with profile_mlp/profile_convnet")
    expected_ndim = 2 if isinstance(first, nn.Linear) else 4
    if x.ndim != expected_ndim:
        layout = "(n, features); flatten the images first" if expected_ndim == 2 else "(n, channels, height, width)"
        raise ValueError(f"input has shape {tuple(x.shape)} but this net expects {layout}")
    inputs = [x]
    with torch.no_grad():
        for layer in net[:-1]:
            inputs.append(layer(inputs[-1]))
    return inputs
