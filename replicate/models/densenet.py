"""DenseNet-121 for CIFAR (Huang et al. 2017), as the papers' code builds it.

Mukhoti et al.'s ``Net/densenet.py`` (kuangliu/pytorch-cifar layout, the book's page "The authors' code"):
growth rate 32, dense blocks [6, 12, 24, 16] of bottleneck layers
(BN-ReLU-1x1 conv to 4 * growth, BN-ReLU-3x3 conv to growth, output concatenated
*before* the input), transitions BN-ReLU-1x1 conv (compression 0.5, floored) and 2x2
average pooling, a 3x3 stem to ``2 * growth = 64`` channels, a final BN-ReLU, 4x4
global average pooling and a linear classifier. PyTorch default initialisation.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    """Bottleneck layer: BN-ReLU-conv1x1(4g)-BN-ReLU-conv3x3(g); output = cat(new, input)."""

    def __init__(self, in_planes: int, growth: int):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, 4 * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = self.conv1(F.relu(self.bn1(x)))
        o = self.conv2(F.relu(self.bn2(o)))
        return torch.cat([o, x], 1)


class Transition(nn.Module):
    """BN-ReLU-conv1x1 then 2x2 average pooling."""

    def __init__(self, in_planes: int, out_planes: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_planes)
        self.conv = nn.Conv2d(in_planes, out_planes, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(self.conv(F.relu(self.bn(x))), 2)


class DenseNet(nn.Module):
    """CIFAR DenseNet-BC with ``blocks`` layers per dense block."""

    def __init__(self, blocks=(6, 12, 24, 16), growth: int = 32, reduction: float = 0.5,
                 num_classes: int = 10):
        super().__init__()
        planes = 2 * growth
        self.conv1 = nn.Conv2d(3, planes, 3, padding=1, bias=False)
        stages = []
        for i, n in enumerate(blocks):
            layers = []
            for _ in range(n):
                layers.append(DenseLayer(planes, growth))
                planes += growth
            if i < len(blocks) - 1:
                out = int(math.floor(planes * reduction))
                layers.append(Transition(planes, out))
                planes = out
            stages.append(nn.Sequential(*layers))
        self.stages = nn.Sequential(*stages)
        self.bn = nn.BatchNorm2d(planes)
        self.fc = nn.Linear(planes, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn(self.stages(self.conv1(x))))
        return F.adaptive_avg_pool2d(o, 1).flatten(1)  # = avg_pool2d(o, 4) on 32x32 inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def densenet121(num_classes: int = 10) -> DenseNet:
    """DenseNet-121: growth 32, blocks [6, 12, 24, 16], reduction 0.5 (6,956,298 params, 10 classes)."""
    return DenseNet((6, 12, 24, 16), 32, 0.5, num_classes)
