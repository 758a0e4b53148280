"""Model (C) of Lu et al. 2024: the "SimpleCNN" of CNN-CIFAR10.py (A.1.4 (C)).

conv1 3→w (3×3, s1, p1) → ReLU → BN → MaxPool2; conv2 w→2w → ReLU → BN → MaxPool2; conv3 2w→4w → ReLU →
MaxPool2 (no BN); flatten 4w·4·4 → fc1 → ReLU → fc2 → classes. All layers with bias. ``width=64``,
``fc_width=512`` are the original's sizes; smaller ones serve the quick preset. Three conv layers as in the
code (the appendix's "4 convolution layers" is a known contradiction, decision A16).
"""

from __future__ import annotations

import torch
from torch import nn


class SimpleCNN(nn.Module):
    """The CIFAR SimpleCNN; input (B, 3, 32, 32)."""

    def __init__(
        self,
        num_classes: int = 10,  # CIFAR-10 (CIFAR-100: 100, lu2024-apptable2)
        width: int = 64,  # conv1 channels; conv2/conv3 have 2×/4× (A.1.4 (C): 64/128/256)
        fc_width: int = 512,  # fc1 4096 → 512 (A.1.4 (C))
        image_size: int = 32,  # CIFAR images; three 2×2 pools → 4×4 feature maps
    ) -> None:
        super().__init__()
        if min(num_classes, width, fc_width) < 1 or image_size % 8:
            raise ValueError("num_classes, width, fc_width must be ≥ 1 and image_size a multiple of 8")
        self.conv1 = nn.Conv2d(3, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * width)
        self.conv3 = nn.Conv2d(2 * width, 4 * width, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(4 * width * (image_size // 8) ** 2, fc_width)
        self.fc2 = nn.Linear(fc_width, num_classes)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.bn1(self.relu(self.conv1(x))))
        x = self.pool(self.bn2(self.relu(self.conv2(x))))
        x = self.pool(self.relu(self.conv3(x)))
        return self.fc2(self.relu(self.fc1(x.flatten(1))))
