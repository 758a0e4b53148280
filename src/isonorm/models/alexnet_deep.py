"""AlexNet-style CIFAR-10 ConvNet with extra 256-channel conv layers — daneshmand2021-appfig7a/b
(decision B10: as coded). ``extra_layers`` is 15 (panel a) or 75 (panel b) in the paper.
"""

from __future__ import annotations

import math

import torch
from torch import nn

INPUT_SIZE = 32
"""Spatial size the classifier is built for: 32 → 16 (stride 2) → 8 → 4 → 2 (three max-pools), 256·2·2 = 1024."""


def _conv(in_channels: int, out_channels: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1)


class AlexNetDeep(nn.Module):
    """``features`` (convolutions, including the extra ones) then ``classifier``; logits out."""

    def __init__(self, extra_layers: int, num_classes: int = 10) -> None:
        super().__init__()
        if extra_layers < 0:
            raise ValueError(f"extra_layers must be >= 0, got {extra_layers}")
        if num_classes < 1:
            raise ValueError(f"num_classes must be positive, got {num_classes}")
        extra: list[nn.Module] = []
        for _ in range(extra_layers):
            extra += [_conv(256, 256), nn.ReLU()]
        # Order as in daneshmand2021-appfig7a/b, including the conv 192→256 without an activation and the ReLU after the
        # last max-pool.
        self.features = nn.Sequential(
            _conv(3, 64, stride=2),
            nn.MaxPool2d(2),
            nn.ReLU(),
            _conv(64, 192),
            nn.MaxPool2d(2),
            nn.ReLU(),
            _conv(192, 192),
            nn.ReLU(),
            _conv(192, 256),
            _conv(256, 256),
            nn.ReLU(),
            *extra,
            nn.MaxPool2d(2),
            nn.ReLU(),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(0.5),
            nn.Linear(256 * 2 * 2, 4096),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[-2:] != (INPUT_SIZE, INPUT_SIZE):
            raise ValueError(
                f"AlexNetDeep takes (n, 3, {INPUT_SIZE}, {INPUT_SIZE}) CIFAR-sized images, got {tuple(x.shape)}"
            )
        return self.classifier(torch.flatten(self.features(x), 1))


def alexnet_deep(
    extra_layers: int, num_classes: int = 10, generator: torch.Generator | None = None
) -> AlexNetDeep:
    """The daneshmand2021-appfig7a/b network with its Xavier init: Xavier-uniform, gain √2, on every Conv2d and Linear weight,
    all biases zero (daneshmand2021-appfig7a/b, "Init")."""
    net = AlexNetDeep(extra_layers, num_classes)
    for module in net.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(module.weight, gain=math.sqrt(2.0), generator=generator)
            nn.init.zeros_(module.bias)
    return net
