"""Spread bands that stay where the quantity can be.

A "mean ± one standard deviation" band of a metric that cannot be negative (an error rate,
an ECE, a temperature) dips below zero whenever the spread over seeds is larger than the mean
- most often for an ECE near zero on few seeds. :func:`sd_band` cuts the band at the
quantity's range, and :func:`sd_errors` gives the same cut as the asymmetric error bars of
``Axes.errorbar``; the figures that use them say so in their captions.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["sd_band", "sd_errors", "cut_text"]


def sd_band(mean, sd, lo: float = 0.0, hi: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` of ``mean ± sd`` cut to ``[lo, hi]`` (default: at 0 below, no upper
    limit; percent metrics pass ``hi=100``). A missing ``sd`` (one seed) gives no band: both
    ends equal the mean. Raises ``ValueError`` if ``lo > hi``.

    >>> sd_band([1.0, 50.0], [2.0, 3.0], 0, 100)
    (array([ 0., 47.]), array([ 3., 53.]))
    """
    if not lo <= hi:
        raise ValueError(f"lo must be at most hi; got lo={lo!r}, hi={hi!r}")
    m = np.asarray(mean, dtype=np.float64)
    s = np.nan_to_num(np.asarray(sd, dtype=np.float64), nan=0.0)
    return np.clip(m - s, lo, hi), np.clip(m + s, lo, hi)


def sd_errors(mean, sd, lo: float = 0.0, hi: float = math.inf) -> np.ndarray:
    """The ``yerr`` of ``Axes.errorbar`` (shape ``(2, n)``: below, above) for ``mean ± sd``
    cut to ``[lo, hi]`` (:func:`sd_band`).

    >>> sd_errors([0.5, 2.0], [1.0, 0.5])
    array([[0.5, 0.5],
           [1. , 0.5]])
    """
    m = np.asarray(mean, dtype=np.float64)
    lower, upper = sd_band(m, sd, lo, hi)
    return np.vstack([m - lower, upper - m])


def cut_text(lo: float = 0.0, hi: float = math.inf) -> str:
    """How a caption says where :func:`sd_band` cut: "cut at 0", "cut at 0 and 100".

    >>> cut_text(0, 100), cut_text()
    ('cut at 0 and 100', 'cut at 0')
    """
    ends = [f"{x:g}" for x in (lo, hi) if math.isfinite(x)]
    return "cut at " + " and ".join(ends) if ends else "not cut"
