"""Searching the simplex for counterexamples to Prop. 5 of Komisarenko & Kull (2024) (issue
#24, item 4: the FTS theory chapter's exercise).

Prop. 5 says that the focal calibration map never lowers the top probability:
``map(q)_j >= q_j`` for ``j = argmax q``. It fails, but only where the top probability is
below ``q*(gamma)`` (:func:`replicate.theory.fts.calibration_map.confidence_raising_threshold`; ``1/e`` at
``gamma = 1``) *and* enough other classes sit close below it: with ``map(q)_j / q_j =
r(q_j) / sum_i q_i r(q_i)``, the top class loses mass only when the classes near it have an
``r`` as small as its own and the small classes, with ``r`` near ``r(0) = 1``, outweigh them.
For few classes that happens in a thin region around points whose top classes nearly tie.

Uniform random points (Dirichlet(1), :func:`uniform_points`) rarely land there: for four
classes the failing region is a sliver next to the ties of the top three. :func:`near_ties`
samples that region on purpose - a top value ``t`` below ``q*``, ``m`` classes within ``eps``
below it (``eps`` log-uniform, down to 1e-9), the rest of the mass spread over the others -
and :func:`smallest_gain` reports, per number of classes, the smallest ``map(q)_j - q_j``
each search finds.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...synthetic import as_generator
from .calibration_map import confidence_raising_threshold, focal_calibration_map

__all__ = ["uniform_points", "near_ties", "gains", "smallest_gain", "confidence_raising_threshold"]


def uniform_points(k: int, n: int, rng=None) -> np.ndarray:
    """``n`` points of the ``k``-class simplex, uniformly distributed (Dirichlet(1))."""
    return as_generator(rng).dirichlet(np.ones(int(k)), int(n))


def near_ties(k: int, n: int, gamma: float = 1.0, rng=None, eps_range=(1e-9, 1e-2)) -> np.ndarray:
    """Up to ``n`` points of the ``k``-class simplex whose top value ``t`` lies in
    ``(1/k, q*(gamma))`` and whose next ``m - 1`` classes (``m`` uniform in 2..k-1) lie within
    a log-uniform ``eps`` below ``t``; the remaining mass is spread over the other classes
    (Dirichlet(1)), each below the tied ones. Points that cannot be completed are dropped."""
    k, n, g = int(k), int(n), as_generator(rng)
    if k < 3:
        raise ValueError(f"k must be at least 3 (two classes never fail Prop. 5); got {k}")
    qstar = confidence_raising_threshold(gamma)
    t = g.uniform(1.0 / k, qstar, n)
    m = g.integers(2, k, n)                                  # classes at (or just below) the top
    lo, hi = np.log10(eps_range[0]), np.log10(eps_range[1])
    eps = 10.0 ** g.uniform(lo, hi, (n, k))
    slot = np.arange(k)[None, :]
    top = np.where(slot == 0, t[:, None], t[:, None] - eps)   # slot 0 is exactly t
    tied = slot < m[:, None]
    rest = 1.0 - np.where(tied, top, 0.0).sum(axis=1)
    share = g.dirichlet(np.ones(k), n) * np.where(tied, 0.0, 1.0)
    share = share / np.maximum(share.sum(axis=1, keepdims=True), 1e-300)
    q = np.where(tied, top, rest[:, None] * share)
    ok = (rest > 0) & (np.where(tied, -np.inf, q).max(axis=1) < np.where(tied, top, np.inf).min(axis=1)) \
        & np.all(q > 0, axis=1)
    return q[ok]


def gains(q, gamma: float = 1.0) -> np.ndarray:
    """``map(q)_j - q_j`` of the top class ``j`` of each row of ``q`` (negative: Prop. 5 fails)."""
    q = np.asarray(q, dtype=np.float64)
    j = q.argmax(axis=1)[:, None]
    return np.take_along_axis(focal_calibration_map(q, gamma) - q, j, axis=1)[:, 0]


def smallest_gain(ks, n: int = 20_000, gamma: float = 1.0, rng=0) -> pd.DataFrame:
    """Per number of classes ``k``: the smallest ``map(q)_j - q_j`` over ``n`` uniform points
    and over ``n`` near-tie points, and the near-tie point that attains it."""
    g = as_generator(rng)
    rows = []
    for k in ks:
        u, t = uniform_points(k, n, g), near_ties(k, n, gamma, g)
        gu, gt = gains(u, gamma), gains(t, gamma)
        i = int(np.argmin(gt))
        rows.append({"classes": int(k), "uniform points": float(gu.min()), "near-tie points": float(gt.min()),
                     "near-tie points used": len(t), "worst near-tie point": np.round(t[i], 6).tolist()})
    return pd.DataFrame(rows)
