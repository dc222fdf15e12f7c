"""Prop. 2 of Mukhoti et al. 2020 ({cite}`mukhoti2020focal`, App. B Prop. 4): the Lambert-W gamma*.

With ``a = 1 - p0`` and ``b = p0 log p0``, ``g(p0, gamma) = 1`` becomes (Eq. 10)
``(gamma - a/b) e^((gamma - a/b) log a) = -a^(1 - a/b) / b``; multiplying by ``log a``,
``w e^w = z`` with ``w = (gamma - a/b) log a`` and ``z = -(a^(1 - a/b) / b) log a``, so

    gamma = a/b + W_k(z) / log a,   k in {0, -1}      (Eq. 11 and Eq. 12).

- :func:`eq10_rhs`: the Lambert-W argument ``z`` (or ``log(-z)``); the paper says it is
  always negative with minimum ``-1/e`` at ``p0 = 1/2``;
- :func:`lambert_w_gamma_branches`: both real branches, raw;
- :func:`lambert_w_gamma`: ``gamma*`` (the lower branch where it is positive, else nan);
- :func:`lambert_w_gamma_rootfind`: an independent reference (Brent on ``log g = 0``).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import lambertw

from ... import checks

__all__ = ["eq10_rhs", "lambert_w_gamma_branches", "lambert_w_gamma", "lambert_w_gamma_rootfind"]


def _open_p0(p0) -> np.ndarray:
    p = checks.probabilities(p0, "p0")
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p0 must lie in the open interval (0, 1)")
    return p


def _log_minus_z(p: np.ndarray) -> np.ndarray:
    a, loga = 1.0 - p, np.log1p(-p)
    b = p * np.log(p)
    return (1.0 - a / b) * loga + np.log(-loga) - np.log(-b)


def eq10_rhs(p0, *, log: bool = False):
    """The right-hand side of Eq. 10 times ``log a``: ``z = -(a^(1 - a/b) / b) log a``.

    ``z`` is the argument of Lambert W in Eq. 11/12 (``a = 1 - p0``, ``b = p0 log p0``).
    Evaluated in the log domain; ``log=True`` returns ``log(-z)`` (``z < 0`` always), whose
    largest value ``-1`` (``z = -1/e``, the branch point) is reached at ``p0 = 1/2``: ``z`` is
    ``w e^w`` at ``w = -(a/b) log a``, the trivial root ``gamma = 0``, and ``w e^w >= -1/e``
    with equality only at ``w = -1``, i.e. ``(1-p0) log(1-p0) = p0 log p0``.

    Parameters
    ----------
    p0 : array_like, values in (0, 1)
    """
    lmz = _log_minus_z(_open_p0(p0))
    out = lmz if log else -np.exp(lmz)
    return out[()] if out.ndim == 0 else out


def _polish_lambert(d: np.ndarray, w_scipy: np.ndarray, lower: bool) -> np.ndarray:
    """Real ``W_k(z)`` for ``z = -exp(-1 - d)``, ``d >= 0``, accurate up to the branch point.

    Writes ``w = -1 - s`` (lower branch, ``s >= 0``) or ``w = -1 + s`` (principal branch,
    ``0 <= s < 1``); taking logs of ``w e^w = z`` gives ``s - log(1 + s) = d`` or
    ``-s - log(1 - s) = d``, both convex and increasing in ``s``, solved by Newton steps
    from scipy's value (``d > 0.5``) or the branch-point series ``s ~ sqrt(2d) +/- 2d/3``.
    """
    series = np.sqrt(2 * d) + (2 * d / 3 if lower else -2 * d / 3)
    start = -1.0 - w_scipy if lower else 1.0 + w_scipy
    s = np.where((d > 0.5) & np.isfinite(start), start, series)
    s = s if lower else np.clip(s, 0.0, 1.0 - 1e-16)
    for _ in range(60):
        with np.errstate(divide="ignore", invalid="ignore"):
            if lower:
                step = (s - np.log1p(s) - d) * (1.0 + s) / s
            else:
                step = (-s - np.log1p(-s) - d) * (1.0 - s) / s
        step = np.where(s > 0, step, 0.0)
        new = s - step
        new = np.maximum(new, 0.5 * s) if lower else np.clip(new, 0.5 * s, 0.5 * (1.0 + s))
        done = np.all(np.abs(new - s) <= 4 * np.finfo(float).eps * np.maximum(s, 1e-300))
        s = new
        if done:
            break
    s = np.where(d == 0, 0.0, s)
    return -1.0 - s if lower else -1.0 + s


def lambert_w_gamma_branches(p0):
    """Both real solutions of Mukhoti et al. Eq. (10)-(12), as the raw closed form.

    With ``a = 1 - p0``, ``b = p0 log p0`` and ``z = -(a^(1 - a/b) / b) log a``, returns
    ``(gamma_lower, gamma_principal) = a/b + W_k(z) / log a`` for ``k = -1`` and ``k = 0``.
    One of the two is always the trivial root ``gamma = 0`` (``g(p0, 0) = 1``): the
    principal branch for ``p0 < 1/2`` and the lower branch for ``p0 > 1/2``.

    Numerics: ``log(-z) = -1 - d`` is evaluated in the log domain. ``scipy.special.lambertw``
    loses accuracy near the branch point ``z = -1/e`` (at ``p0 = 0.49999`` its ``W_{-1}`` is
    off by ~2e-5, which halves ``gamma*``), so both branches are polished by Newton steps
    on the logarithmic form of ``w e^w = z`` (:func:`_polish_lambert`); ``gamma*`` then has
    an absolute error below about 1e-9 even next to ``p0 = 1/2``.

    Parameters
    ----------
    p0 : array_like, values in (0, 1)
    """
    p = _open_p0(p0)
    a, loga = 1.0 - p, np.log1p(-p)
    ab = a / (p * np.log(p))
    log_minus_z = _log_minus_z(p)
    d = np.maximum(-(log_minus_z + 1.0), 0.0)
    z = -np.exp(-1.0 - d)
    w_low = _polish_lambert(d, lambertw(z, -1).real, lower=True)
    w_princ = _polish_lambert(d, lambertw(z, 0).real, lower=False)
    low = ab + w_low / loga
    princ = ab + w_princ / loga
    if low.ndim == 0:
        return low[()], princ[()]
    return low, princ


def lambert_w_gamma(p0):
    """``gamma*`` of Mukhoti et al. Prop. 2: the positive ``gamma`` with ``g(p0, gamma) = 1``.

    ``gamma* = a/b + W_{-1}(-(a^(1 - a/b) / b) log a) / log a`` with ``a = 1 - p0``,
    ``b = p0 log p0`` and ``W_{-1}`` the lower Lambert-W branch
    (``scipy.special.lambertw(., k=-1)``, Corless et al. 1996). For ``gamma >= gamma*``,
    ``g(p, gamma) <= 1`` for every ``p >= p0``.

    Where no positive solution exists the result is ``nan``: for ``p0 >= 1/2`` every
    ``gamma > 0`` already has ``g(p0, gamma) < 1`` and the formula's lower branch returns
    only the trivial root 0 (``gamma* -> 0`` as ``p0 -> 1/2`` from below). Near
    ``p0 = 1/2`` the Lambert-W argument approaches its branch point ``-1/e``, where the
    closed form is ill-conditioned; after the polishing described in
    :func:`lambert_w_gamma_branches` the absolute error stays below about 1e-9.

    Parameters
    ----------
    p0 : array_like, values in (0, 1)
        Threshold probability. ``p0 -> 0`` gives ``gamma* -> inf``.

    Example
    -------
    >>> from replicate.theory import lambert_w_gamma
    >>> round(float(lambert_w_gamma(0.2)), 4), round(float(lambert_w_gamma(0.25)), 4)  # FLSD-53's 5 and 3
    (4.8506, 3.0702)
    """
    low, _ = lambert_w_gamma_branches(p0)
    p = np.asarray(p0, dtype=np.float64)
    out = np.where(p < 0.5, low, np.nan)
    return out[()] if out.ndim == 0 else out


def lambert_w_gamma_rootfind(p0) -> np.ndarray:
    """Reference for :func:`lambert_w_gamma`: the positive root of ``g(p0, gamma) = 1`` by Brent.

    Solves ``(gamma - 1) log(1 - p0) + log(1 - p0 - gamma p0 log p0) = 0`` (the log of
    ``g = 1``, concave in ``gamma`` with the trivial root 0) on ``[1e-12, upper]`` where
    ``upper`` is doubled until the sign changes. One scalar solve per element; ``nan``
    for ``p0 >= 1/2``.
    """
    p = np.atleast_1d(checks.probabilities(p0, "p0"))
    out = np.full(p.shape, np.nan)
    for i, v in enumerate(p):
        if not 0 < v < 0.5:
            continue
        a, b = 1.0 - v, v * np.log(v)

        def f(gam, a=a, b=b):
            return (gam - 1.0) * np.log(a) + np.log(a - gam * b)

        lo = 1e-12 if f(1e-12) > 0 else 1e-15
        hi = 1.0
        while f(hi) > 0:
            hi *= 2.0
        out[i] = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return out.reshape(np.shape(p0))
