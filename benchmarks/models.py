"""Seconds per training step (batch 128, CIFAR-sized input, CPU) of the small networks the CPU
profiles use, beside the papers' ResNet-50, from one run: why the `cpu` profile trains a tiny CNN.

    .venv/bin/python benchmarks/models.py
"""
from __future__ import annotations

import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from replicate.models import get_model  # noqa: E402


def step_seconds(model, repeats: int) -> float:
    """Best of ``repeats`` forward+backward passes of one batch of 128 images."""
    x, y = torch.randn(128, 3, 32, 32), torch.randint(0, 10, (128,))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    torch.manual_seed(0)
    rows = [("tiny_cnn (width 32, the cpu profile)", get_model("tiny_cnn", 10, width=32), 6),
            ("resnet8 (width 8)", get_model("resnet8", 10, width=8), 3),
            ("resnet20", get_model("resnet20", 10), 2),
            ("resnet50 (the papers')", get_model("resnet50", 10), 1)]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    base = None
    for name, model, repeats in rows:
        s = step_seconds(model, repeats)
        base = base or s
        print(f"{name:40s} {s:8.3f} s/step   {s / base:7.1f}x tiny_cnn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
