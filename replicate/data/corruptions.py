"""CIFAR-10-C Gaussian noise, generated with the published corruption.

Hendrycks & Dietterich (2019), "Benchmarking neural network robustness to common
corruptions and perturbations" (ICLR), code ``make_cifar_c.py`` in
github.com/hendrycks/robustness::

    def gaussian_noise(x, severity=1):
        c = [0.04, 0.06, .08, .09, .10][severity - 1]
        x = np.array(x) / 255.
        return np.clip(x + np.random.normal(size=x.shape, scale=c), 0, 1) * 255

and the stored image is ``np.uint8(...)`` of that, i.e. truncated towards zero. Those
are the CIFAR-10-C scales. The ImageNet-C package (``imagenet_c/corruptions.py``) uses
larger scales ``[.08, .12, 0.18, 0.26, 0.38]``; they are available as
``scales="imagenet_c"`` but are not what CIFAR-10-C contains.

The published data were drawn from NumPy's unseeded global generator; here the noise
is drawn from ``np.random.RandomState(seed)`` so the generated set is reproducible.
Its law is the published one, but the pixels are not the published file's pixels, so
every result on it is labelled "generated".
"""
from __future__ import annotations

import numpy as np

GAUSSIAN_NOISE_SCALES = {
    "cifar10c": (0.04, 0.06, 0.08, 0.09, 0.10),
    "imagenet_c": (0.08, 0.12, 0.18, 0.26, 0.38),
}


def noise_scale(severity: int, scales: str = "cifar10c") -> float:
    """Standard deviation (on the [0, 1] pixel scale) of the Gaussian noise at ``severity``."""
    if scales not in GAUSSIAN_NOISE_SCALES:
        raise ValueError(f"scales must be one of {tuple(GAUSSIAN_NOISE_SCALES)}, got {scales!r}")
    if not isinstance(severity, (int, np.integer)) or not 1 <= severity <= 5:
        raise ValueError(f"severity must be an int in 1..5, got {severity!r}")
    return GAUSSIAN_NOISE_SCALES[scales][severity - 1]


def gaussian_noise(x: np.ndarray, severity: int, seed: int = 0, scales: str = "cifar10c",
                   chunk: int = 2000) -> np.ndarray:
    """Corrupt uint8 images ``x`` (any shape, first axis = images) with Gaussian noise.

    ``uint8(clip(x / 255 + N(0, c^2), 0, 1) * 255)`` elementwise, noise in float64 from
    ``RandomState(seed)``, processed ``chunk`` images at a time to bound memory.
    """
    c = noise_scale(severity, scales)
    x = np.asarray(x)
    if x.dtype != np.uint8:
        raise ValueError(f"x must be uint8 images, got dtype {x.dtype}")
    rng = np.random.RandomState(seed)
    out = np.empty_like(x)
    for s in range(0, len(x), chunk):
        xs = x[s:s + chunk] / 255.0
        noisy = np.clip(xs + rng.normal(size=xs.shape, scale=c), 0, 1) * 255
        out[s:s + chunk] = noisy.astype(np.uint8)
    return out
