"""Model (R) of Lu et al. 2024: CIFAR ResNet-18 of ResNet-CIFAR10.py / CNN_CIFAR100.py (A.1.4 (R)).

Stem conv 3→w (3×3, s1, p1, no bias) → BN → act (no max-pool); four stages of two BasicBlocks, channels
w/2w/4w/8w, strides 1/2/2/2; block: conv → BN → act → conv → BN → (+ shortcut) → act, shortcut = identity
or 1×1 conv + BN when the shape changes; global average pool (AdaptiveAvgPool(1)) → ``fc`` 8w → classes (the CIFAR-100 file's
``Linear(64, 100)`` crash is fixed: the FC takes 8w = 512 features, decision A7).

Variants (decision A7): ``norm_res`` is the network above; ``original`` replaces every BN by the identity and
drops every shortcut addition (a plain convolutional network; no shortcut modules exist then). Module names
follow the original (``layer1.0.conv1`` ...), so the PII layers keep their names for every width.
"""

from __future__ import annotations

import torch
from torch import nn

from .mlp import ACTIVATIONS, check_model

VARIANTS = ("original", "norm_res")


def _norm(channels: int, use_norm: bool) -> nn.Module:
    return nn.BatchNorm2d(channels) if use_norm else nn.Identity()


class BasicBlock(nn.Module):
    """Two 3×3 convs; with ``residual`` the input (or its 1×1 projection) is added before the last act."""

    def __init__(self, in_planes: int, planes: int, stride: int, activation: str, use_norm: bool, residual: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = _norm(planes, use_norm)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = _norm(planes, use_norm)
        self.act = ACTIVATIONS[activation]()
        self.residual = residual
        if residual and (stride != 1 or in_planes != planes):
            self.shortcut: nn.Module = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), _norm(planes, use_norm))
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.bn2(self.conv2(self.act(self.bn1(self.conv1(x)))))
        if self.residual:
            out = out + self.shortcut(x)
        return self.act(out)


class ResNet18(nn.Module):
    """CIFAR ResNet-18; input (B, 3, 32, 32)."""

    def __init__(
        self,
        variant: str = "norm_res",  # the shipped network (decision A7)
        activation: str = "gelu",  # decision A7: GELU (the table label; the CIFAR-10 file used ReLU)
        num_classes: int = 10,  # CIFAR-10; 100 for App. Table 3
        width: int = 64,  # stem/stage-1 channels (A.1.4 (R): 64/128/256/512)
    ) -> None:
        super().__init__()
        check_model(variant, VARIANTS, activation, "ResNet-18", num_classes=num_classes, width=width)
        use_norm = residual = variant == "norm_res"
        self.variant = variant
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = _norm(width, use_norm)
        self.act = ACTIVATIONS[activation]()
        in_planes = width
        for stage, (factor, stride) in enumerate(zip((1, 2, 4, 8), (1, 2, 2, 2)), start=1):
            planes = width * factor
            blocks = [BasicBlock(in_planes, planes, stride, activation, use_norm, residual),
                      BasicBlock(planes, planes, 1, activation, use_norm, residual)]
            setattr(self, f"layer{stage}", nn.Sequential(*blocks))
            in_planes = planes
        self.fc = nn.Linear(8 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.act(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        # global average pool as a mean: AdaptiveAvgPool2d(1) has no vmap batching rule (slow fallback)
        return self.fc(x.mean(dim=(-2, -1)))
