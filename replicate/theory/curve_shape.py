"""Shape of a sampled curve (rises, single maximum, falls), robust to flat floating-point runs.

A curve evaluated in float64 is often exactly flat where its true change is below the
rounding level: ``g(p, gamma) = 1 + O(p log p)`` rounds to 1 for every ``p < 1e-17``, so
the first differences of ``g`` on a grid starting at ``p = 1e-300`` begin with exact zeros.
A shape test that reads the sign of the *first* difference then sees "not rising"
(the bug the review found in the chapter's unimodality check). :func:`curve_shape`
drops the differences within ``flat`` of zero and reads the shape from the sign changes
of the remaining ones.
"""
from __future__ import annotations

import numpy as np

__all__ = ["curve_shape", "is_unimodal"]


def curve_shape(y, flat: float = 0.0) -> dict:
    """Shape of the sequence ``y``, ignoring steps with ``|y[i+1] - y[i]| <= flat``.

    Parameters
    ----------
    y : array_like, 1-D, finite, at least 2 values
    flat : float, >= 0
        Steps this small count as flat (0: only exact ties). Use a few ulps of ``max|y|``
        to ignore rounding noise.

    Returns
    -------
    dict with ``rises`` (the first non-flat step goes up), ``falls`` (the last non-flat step
    goes down), ``turns`` (sign changes between consecutive non-flat steps), ``maxima`` (turns
    from up to down), ``minima`` (turns from down to up), ``single_maximum`` (rises, then
    falls, turning once) and ``steps`` (number of non-flat steps).
    """
    v = np.asarray(y, dtype=np.float64)
    if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)):
        raise ValueError("y must be a finite 1-D sequence of at least 2 values")
    if not (np.isfinite(flat) and flat >= 0):
        raise ValueError(f"flat must be a finite number >= 0, got {flat!r}")
    d = np.diff(v)
    s = np.sign(d[np.abs(d) > flat])
    changes = s[1:] != s[:-1]
    maxima = int(np.sum(changes & (s[:-1] > 0)))
    minima = int(np.sum(changes & (s[:-1] < 0)))
    rises = bool(s.size and s[0] > 0)
    falls = bool(s.size and s[-1] < 0)
    return {"rises": rises, "falls": falls, "turns": maxima + minima, "maxima": maxima, "minima": minima,
            "single_maximum": rises and falls and maxima == 1 and minima == 0, "steps": int(s.size)}


def is_unimodal(y, flat: float = 0.0) -> bool:
    """True when ``y`` rises to a single maximum and then falls (flat steps ignored)."""
    return curve_shape(y, flat)["single_maximum"]
