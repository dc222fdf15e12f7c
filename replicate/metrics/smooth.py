"""SmoothECE (Blasiok & Nakkiran 2023), a port of ``relplot.smECE``: the top-label
residuals ``conf - 1[correct]`` smoothed by a Gaussian kernel reflected at 0 and 1
(``_splat``, ``_reflected_smooth``), at the bandwidth fixed point (``_smece_sigma``).
"""
from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve

from ._inputs import _top, documented

__all__ = ["smooth_ece"]


def _splat(f, v, m):
    """Linear interpolation of weights v at f onto m grid points (relplot smooth_round_to_grid)."""
    pos = f * (m - 1)
    i = np.clip(pos.astype(np.intp), 0, m - 2)
    frac = pos - i
    return np.bincount(i, (1 - frac) * v, minlength=m) + np.bincount(i + 1, frac * v, minlength=m)


def _reflected_smooth(f, v, t, sigma):
    """relplot ReflectedGaussianKernel.apply: splat, reflect at 0 and 1, convolve, interpolate."""
    m = max(2000, round(20 / sigma)) // 2 + 1
    g = np.linspace(0, 1, m)
    ker = np.exp(-(g - 0.5) ** 2 / (2 * sigma ** 2)) / (np.sqrt(2 * np.pi) * sigma)
    vals = _splat(f, v, m)
    ext = np.concatenate([vals[::-1][:-1], vals, vals[::-1][1:]])
    sm = fftconvolve(ext, ker, mode="valid")[m // 2: m // 2 + m]
    j = np.clip((t * (m - 1)).astype(np.intp), 0, m - 2)
    w = (t - j / (m - 1)) * (m - 1)
    return sm[j] * (1 - w) + sm[j + 1] * w


def _smece_sigma(f, r, sigma):
    t = np.linspace(0, 1, max(round(10 / sigma), 200))
    ys = _reflected_smooth(f, r, t, sigma)
    dens = _reflected_smooth(f, np.ones_like(f), t, sigma) + 1e-4
    return float(np.sum(np.abs(ys / dens) * dens) / np.sum(dens))


@documented(sigma=("float or None", "The kernel's bandwidth, in (0, 1]; None finds it as relplot does "
                                    "(the fixed point above)."))
def smooth_ece(probs, labels, *, sigma: float | None = None, is_probs: bool = True,
               validate: bool = True) -> float:
    """Top-label SmoothECE of Blasiok & Nakkiran (2023), a port of ``relplot.smECE``.

    Residuals ``conf - 1[correct]`` are smoothed with a Gaussian kernel reflected at 0 and
    1; the bandwidth is the fixed point ``sigma = smECE_sigma`` found by relplot's
    bisection (10 halvings from 1, floor 1e-3). ``sigma`` fixes the bandwidth instead.
    Differs from relplot only by FFT instead of direct convolution (~1e-15).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import smooth_ece
    >>> p = np.random.default_rng(0).dirichlet([1, 1, 1], size=500); y = p.argmax(1)
    >>> round(smooth_ece(p, y), 4)
    0.39
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    r = conf - hit
    if sigma is not None:
        if not (isinstance(sigma, (int, float)) and 0 < sigma <= 1):
            raise ValueError(f"sigma must be a number in (0, 1]; got {sigma!r}")
        return _smece_sigma(conf, r, float(sigma))

    def too_small(s):
        return s < 1e-3 or s < _smece_sigma(conf, r, s)

    lo, hi = 1.0, 0.0
    if not too_small(1.0):
        for _ in range(10):
            mid = (lo + hi) / 2
            if too_small(mid):
                hi = mid
            else:
                lo = mid
    return _smece_sigma(conf, r, lo)
