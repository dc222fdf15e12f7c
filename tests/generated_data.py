"""A small learnable stand-in for CIFAR-10 (tests only): a colour per class plus noise."""
import torch

from replicate import data


def generated_splits(name: str = "cifar10", sizes=(1200, 600, 600)) -> "data.Splits":
    """Seeded 10-class 3x32x32 uint8 train/val/test splits in the shape ``data.load`` returns."""
    g = torch.Generator().manual_seed(0)
    colours = torch.rand(10, 3, 1, 1, generator=g) * 255

    def draw(n):
        y = torch.randint(0, 10, (n,), generator=g)
        x = colours[y] * 0.5 + 64 + 50 * torch.randn(n, 3, 32, 32, generator=g)
        return x.clamp(0, 255).to(torch.uint8), y

    info = data.DatasetInfo(name=name, display_name="generated", num_classes=10,
                            classes=tuple(map(str, range(10))), kind="image", mean=(0.5,) * 3, std=(0.25,) * 3)
    return data.Splits(*(draw(n) for n in sizes), info)


def shifted_model_probs(y, rng, shift: float = 0.0, n_classes: int = 4):
    """Softmax outputs of a model on labels ``y`` made by construction: confidence
    c ~ U(0.35, 0.8), correct with probability c (so calibrated), reporting min(c + shift,
    0.99) as its top probability (shift > 0: over-confident by about ``shift``); the other
    classes share the rest. The noise tests' two-model comparisons are built from it."""
    import numpy as np

    n = len(y)
    c = rng.uniform(0.35, 0.8, n)
    hit = rng.random(n) < c
    pred = np.where(hit, y, (y + rng.integers(1, n_classes, n)) % n_classes)
    top = np.minimum(c + shift, 0.99)
    p = np.repeat(((1 - top) / (n_classes - 1))[:, None], n_classes, axis=1)
    p[np.arange(n), pred] = top
    return p
