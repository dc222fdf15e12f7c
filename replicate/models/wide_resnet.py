"""Wide-ResNet-26-10 as the papers' code builds it (Zagoruyko & Komodakis 2016).

Mukhoti et al.'s ``Net/wide_resnet.py`` (the book's page "The authors' code"): a 16-channel 3x3 stem
with BN and ReLU, three stages of ``(depth - 2) / 6`` *post-activation* basic blocks
(conv-BN-ReLU-conv-BN, add, ReLU; no dropout) at ``16k / 32k / 64k`` channels with
strides 1 / 2 / 2, a 1x1-conv + BN projection shortcut in the first block of each
stage, 8x8 global average pooling and a linear classifier. Convolutions are
initialised He-normal with fan-out (std ``sqrt(2 / (k * k * out_channels))``), BN
weights 1 and biases 0. This differs from Zagoruyko & Komodakis' pre-activation WRN
with dropout; depth 26 and width 10 give 4 blocks per stage at 160 / 320 / 640.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class WideBasicBlock(nn.Module):
    """Post-activation basic block with an optional 1x1 projection shortcut."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.bn2(self.conv2(o))
        return F.relu(o + (x if self.downsample is None else self.downsample(x)))


class WideResNet(nn.Module):
    """CIFAR Wide-ResNet-``depth``-``width`` in the reference code's post-activation form."""

    def __init__(self, depth: int = 26, width: int = 10, num_classes: int = 10):
        super().__init__()
        if (depth - 2) % 6 != 0 or depth < 8:
            raise ValueError(f"depth must be 6n + 2 with n >= 1, got {depth!r}")
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        in_planes, stages = 16, []
        for planes, stride in ((16 * width, 1), (32 * width, 2), (64 * width, 2)):
            layers = [WideBasicBlock(in_planes, planes, stride)]
            layers += [WideBasicBlock(planes, planes) for _ in range(n - 1)]
            in_planes = planes
            stages.append(nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3 = stages
        self.fc = nn.Linear(64 * width, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.layer3(self.layer2(self.layer1(o)))
        return F.adaptive_avg_pool2d(o, 1).flatten(1)  # = AvgPool2d(8) on 32x32 inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def wide_resnet26_10(num_classes: int = 10) -> WideResNet:
    """Wide-ResNet-26-10 (4 post-activation blocks per stage at 160 / 320 / 640 channels)."""
    return WideResNet(26, 10, num_classes)
