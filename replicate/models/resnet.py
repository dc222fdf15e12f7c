"""CIFAR residual networks (He et al. 2016).

* :class:`BottleneckResNet` - the 4-stage CIFAR variant of the papers' code (Mukhoti
  et al. 2020 ``Net/resnet.py``, the kuangliu/pytorch-cifar layout): 3x3 stride-1 stem
  with 64 channels, no max-pool, bottleneck stages of widths 64/128/256/512 (x4
  expansion) with strides 1/2/2/2, 1x1-conv projection shortcuts where the shape
  changes, 4x4 global average pooling, a linear classifier. ResNet-50 = blocks
  [3, 4, 6, 3]; the papers' "ResNet-110" = blocks [3, 4, 26, 3] (the book's page "The authors' code"), not
  He et al.'s 3-stage CIFAR ResNet-110. PyTorch default initialisation, as the reference.
* :class:`BasicResNet` - the same 4-stage CIFAR layout with basic blocks (two 3x3
  convolutions, 1x1-conv projection shortcuts): ResNet-18 = blocks [2, 2, 2, 2], 11.17M
  parameters, the kuangliu/pytorch-cifar ResNet-18 that Mukhoti et al.'s ``Net/resnet.py``
  also defines. It is torchvision's ``resnet18`` with a 3x3 stride-1 stem and no max-pool
  (tests/test_models.py checks it output for output). The ``gpu`` profile's network:
  about a third of ResNet-50's arithmetic (0.56 vs 1.3 GFLOPs per image).
* :class:`CifarResNet` - He et al.'s own 3-stage CIFAR ResNet-(6n+2) (Sec. 4.2): 16/32/64
  channels, basic blocks, parameter-free "option A" shortcuts (stride-2 subsampling and
  zero channel padding). ResNet-8 (n = 1) and ResNet-20 (n = 3) are the small networks
  of the CPU profiles; ResNet-20 has 0.27M parameters (He et al. Table 6).

Every model exposes ``features(x)`` (penultimate activations) and ``fc`` (the final
``nn.Linear``), with ``forward(x) == fc(features(x))``.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    """1x1 -> 3x3 (stride) -> 1x1 (x4) convolutions with BN, post-activation, projection shortcut."""

    expansion = 4

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        out = planes * self.expansion
        self.conv1 = nn.Conv2d(in_planes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != out:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, out, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = F.relu(self.bn2(self.conv2(o)))
        o = self.bn3(self.conv3(o))
        return F.relu(o + self.shortcut(x))


class BottleneckResNet(nn.Module):
    """4-stage CIFAR ResNet with bottleneck blocks ``blocks`` per stage (see module docstring)."""

    def __init__(self, blocks: tuple[int, int, int, int], num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        in_planes, stages = 64, []
        for planes, n, stride in zip((64, 128, 256, 512), blocks, (1, 2, 2, 2)):
            layers = []
            for s in [stride] + [1] * (n - 1):
                layers.append(Bottleneck(in_planes, planes, s))
                in_planes = planes * Bottleneck.expansion
            stages.append(nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.layer4(self.layer3(self.layer2(self.layer1(o))))
        return F.adaptive_avg_pool2d(o, 1).flatten(1)  # = avg_pool2d(o, 4) on 32x32 inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers, post-activation; 1x1-conv projection shortcut where the shape changes."""

    expansion = 1

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.bn2(self.conv2(o))
        return F.relu(o + self.shortcut(x))


class BasicResNet(nn.Module):
    """4-stage CIFAR ResNet with basic blocks ``blocks`` per stage (widths 64/128/256/512)."""

    def __init__(self, blocks: tuple[int, int, int, int], num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        in_planes, stages = 64, []
        for planes, n, stride in zip((64, 128, 256, 512), blocks, (1, 2, 2, 2)):
            layers = []
            for s in [stride] + [1] * (n - 1):
                layers.append(BasicBlock(in_planes, planes, s))
                in_planes = planes
            stages.append(nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(512, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.layer4(self.layer3(self.layer2(self.layer1(o))))
        return F.adaptive_avg_pool2d(o, 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


class BasicBlockA(nn.Module):
    """Two 3x3 conv-BN layers; identity shortcut, or option A (subsample + zero-pad channels)."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.stride, self.extra = stride, planes - in_planes

    def shortcut(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride != 1:
            x = x[:, :, :: self.stride, :: self.stride]
        if self.extra:
            lo = self.extra // 2
            x = F.pad(x, (0, 0, 0, 0, lo, self.extra - lo))
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.bn2(self.conv2(o))
        return F.relu(o + self.shortcut(x))


class CifarResNet(nn.Module):
    """He et al.'s CIFAR ResNet-(6n+2): stem 16, three stages of ``n`` basic blocks (16/32/64)."""

    def __init__(self, n: int, num_classes: int = 10, width: int = 16):
        super().__init__()
        if not isinstance(width, int) or width < 2 or width % 2:
            raise ValueError(f"width must be an even int >= 2, got {width!r}")
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        in_planes, stages = width, []
        for planes, stride in ((width, 1), (2 * width, 2), (4 * width, 2)):
            layers = []
            for s in [stride] + [1] * (n - 1):
                layers.append(BasicBlockA(in_planes, planes, s))
                in_planes = planes
            stages.append(nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3 = stages
        self.fc = nn.Linear(4 * width, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        o = F.relu(self.bn1(self.conv1(x)))
        o = self.layer3(self.layer2(self.layer1(o)))
        return F.adaptive_avg_pool2d(o, 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def resnet50(num_classes: int = 10) -> BottleneckResNet:
    """CIFAR ResNet-50: bottleneck blocks [3, 4, 6, 3] (23,520,842 parameters for 10 classes)."""
    return BottleneckResNet((3, 4, 6, 3), num_classes)


def resnet18(num_classes: int = 10) -> BasicResNet:
    """CIFAR ResNet-18: basic blocks [2, 2, 2, 2] (11,173,962 parameters for 10 classes)."""
    return BasicResNet((2, 2, 2, 2), num_classes)


def resnet110(num_classes: int = 10) -> BottleneckResNet:
    """The papers' "ResNet-110": bottleneck blocks [3, 4, 26, 3] (Mukhoti et al.'s code)."""
    return BottleneckResNet((3, 4, 26, 3), num_classes)


def resnet8(num_classes: int = 10, width: int = 16) -> CifarResNet:
    """He et al. CIFAR ResNet-8 (n = 1), option-A shortcuts; ``width`` < 16 for faster CPU runs."""
    return CifarResNet(1, num_classes, width)


def resnet20(num_classes: int = 10, width: int = 16) -> CifarResNet:
    """He et al. CIFAR ResNet-20 (n = 3), option-A shortcuts, 0.27M parameters at width 16."""
    return CifarResNet(3, num_classes, width)
