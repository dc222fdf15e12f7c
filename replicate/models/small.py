"""A tiny CNN for CPU profiles (smoke and cpu runs of the chapters).

Not a model from the papers: it exists so that a chapter can train a real network on
CIFAR-sized images in seconds on a laptop CPU, and it is labelled as such wherever its
numbers appear. Three 3x3 conv-BN-ReLU layers (stride 2 each; ``width``, ``2 * width``,
``4 * width`` channels), global average pooling and a linear classifier.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyCNN(nn.Module):
    """conv(s2)-BN-ReLU x 3 -> global average pool -> ``fc``."""

    def __init__(self, num_classes: int = 10, width: int = 16, in_channels: int = 3):
        super().__init__()
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive int, got {width!r}")
        chans = (in_channels, width, 2 * width, 4 * width)
        self.body = nn.Sequential(*[
            layer for i in range(3) for layer in (
                nn.Conv2d(chans[i], chans[i + 1], 3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(chans[i + 1]), nn.ReLU(inplace=True))])
        self.fc = nn.Linear(chans[-1], num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(self.body(x), 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))
