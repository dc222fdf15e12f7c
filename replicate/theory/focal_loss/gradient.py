"""The gradient factor of focal loss (Mukhoti et al. 2020, {cite}`mukhoti2020focal`, Sec. 4, App. B).

For one sample the focal loss ``L_f = -(1 - p)^gamma log p`` and cross-entropy
``L_c = -log p`` depend on the parameters only through ``p``, the probability of the true
class, and ``dL_f/dw = g(p, gamma) dL_c/dw`` with (Prop. 1 / Prop. 3, Eq. 6)

    g(p, gamma) = (1-p)^gamma - gamma p (1-p)^(gamma-1) log p.

This module evaluates ``g`` and what the paper and AdaFocal say about it:

- :func:`focal_gradient_factor`, :func:`log_gradient_factor` (exact sign of ``g - 1`` even
  where ``g`` rounds to 1);
- :func:`gradient_factor_dp` (Eq. 7, ``dg/dp`` as printed) and :func:`k_term` (Eq. 9, the
  sign of Eq. 7 divided by ``-log p``), with :func:`k_term_dp`;
- :func:`gradient_threshold`: the ``p0`` where ``g(., gamma)`` crosses 1 (inverse of Prop. 2);
- :func:`gradient_factor_dgamma`, :func:`shrink_gamma` and :func:`gradient_shrink_threshold`:
  where raising ``gamma`` lowers ``g`` (AdaFocal, Ghosh et al. 2022, footnote 2).

Numerics. ``g(p, gamma) = (1-p)^gamma (1 + gamma h(p))`` with ``h(p) = -p log p / (1-p)``
(``h(0) = 0``, ``h(1) = 1``), exact at both ends.
"""
from __future__ import annotations

import numpy as np

from ... import checks

__all__ = ["focal_gradient_factor", "log_gradient_factor", "gradient_factor_dp", "k_term", "k_term_dp",
           "gradient_threshold", "gradient_factor_dgamma", "shrink_gamma", "gradient_shrink_threshold"]


def _scalar(out: np.ndarray):
    return out[()] if out.ndim == 0 else out


def _h(p: np.ndarray) -> np.ndarray:
    """``h(p) = -p log p / (1 - p)`` with its limits ``h(0) = 0`` and ``h(1) = 1``."""
    inner = (p > 0) & (p < 1)
    safe = np.where(inner, p, 0.5)
    return np.where(inner, -safe * np.log(safe) / (1.0 - safe), np.where(p >= 1, 1.0, 0.0))


def focal_gradient_factor(p, gamma):
    """``g(p, gamma)`` of Mukhoti et al. Prop. 1: the factor relating focal and CE gradients.

    ``g(p, gamma) = (1-p)^gamma - gamma p (1-p)^(gamma-1) log p``, evaluated as
    ``(1-p)^gamma (1 + gamma h(p))``. ``g(0, gamma) = 1``, ``g(1, gamma) = 0`` for
    ``gamma > 0`` and ``g = 1`` everywhere for ``gamma = 0`` (cross-entropy).

    Parameters
    ----------
    p : array_like, values in [0, 1]
        Predicted probability of the true class.
    gamma : float or array_like, >= 0
        Focal parameter; broadcast against ``p``.

    Example
    -------
    >>> from replicate.theory import focal_gradient_factor
    >>> round(float(focal_gradient_factor(0.5, gamma=3.0)), 4)
    0.3849
    """
    p = checks.probabilities(p)
    g = checks.gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.power(1.0 - p, g) * (1.0 + g * _h(p))
    return _scalar(out)


def _log_g(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return g * np.log1p(-p) + np.log1p(g * _h(p))


def log_gradient_factor(p, gamma):
    """``log g(p, gamma)`` to full relative accuracy: ``gamma log(1-p) + log(1 + gamma h(p))``.

    Its sign is that of ``g - 1`` even where ``g`` itself rounds to 1 (``p < 1e-16``);
    ``-inf`` at ``p = 1`` for ``gamma > 0``.
    """
    return _scalar(_log_g(checks.probabilities(p), checks.gammas(gamma)))


def gradient_factor_dp(p, gamma):
    """Eq. 7 of Mukhoti et al. (App. B) as printed: ``dg/dp`` on the open interval (0, 1),

    ``gamma (1-p)^(gamma-2) [-2(1-p) - (1-p) log p + (gamma-1) p log p]``.
    """
    p = checks.probabilities(p)
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p must lie in the open interval (0, 1)")
    g = checks.gammas(gamma)
    lp = np.log(p)
    return _scalar(g * np.power(1.0 - p, g - 2.0) * (-2.0 * (1.0 - p) - (1.0 - p) * lp + (g - 1.0) * p * lp))


def k_term(p, gamma):
    """Eq. 9 of Mukhoti et al.: ``k(p, gamma) = 2(1-p)/log p + 1 - gamma p``.

    The bracket of Eq. 7 divided by ``-log p`` (same sign as ``dg/dp``). Limits:
    ``k(0) = 1`` and ``k(1) = -(1 + gamma)`` (``2(1-p)/log p -> -2``); both are returned at the
    end points.
    """
    p = checks.probabilities(p)
    g = checks.gammas(gamma)
    x = 1.0 - p
    inner = (p > 0) & (p < 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(inner, 2.0 * x / np.log(np.where(inner, p, 0.5)), np.where(p >= 1, -2.0, 0.0))
    return _scalar(ratio + 1.0 - g * p)


def k_term_dp(p, gamma):
    """``dk/dp = -2 (log p + (1-p)/p) / log(p)^2 - gamma`` on (0, 1): the derivative of Eq. 9.

    ``log p + 1/p - 1 >= 0`` (from ``log x <= x - 1`` at ``x = 1/p``), so ``dk/dp < 0``.
    """
    p = checks.probabilities(p)
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p must lie in the open interval (0, 1)")
    g = checks.gammas(gamma)
    lp = np.log(p)
    return _scalar(-2.0 * (lp + (1.0 - p) / p) / lp ** 2 - g)


def gradient_threshold(gamma, iters: int = 200):
    """The ``p0`` in (0, 1/2) with ``g(p0, gamma) = 1``: the inverse of ``lambert_w_gamma``.

    For ``gamma > 0``, ``g(., gamma)`` rises from 1 at ``p = 0`` to a maximum and then falls
    to 0 (Mukhoti et al. App. B), so it crosses 1 exactly once; above that point focal
    loss has smaller gradients than cross-entropy. Solved by bisection on ``log p``
    (vectorised). ``gamma = 1`` gives ``1/e`` exactly; ``p0 -> 1/2`` as ``gamma -> 0``.

    Parameters
    ----------
    gamma : float or array_like, > 0
        The focal parameter(s); vectorised.
    iters : int
        Bisection steps (default 200, which reach float64 resolution).

    Example
    -------
    >>> from replicate.theory import gradient_threshold
    >>> round(float(gradient_threshold(1.0)), 6)  # 1/e
    0.367879
    """
    g = checks.gammas(gamma, strict=True)
    lo = np.full(g.shape, np.log(1e-300))
    hi = np.full(g.shape, np.log(0.5))
    for _ in range(int(iters)):
        mid = 0.5 * (lo + hi)
        above = _log_g(np.exp(mid), g) > 0  # still left of the crossing
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return _scalar(np.exp(0.5 * (lo + hi)))


def gradient_factor_dgamma(p, gamma):
    """``dg/dgamma = (1-p)^gamma [h(p) + (1 + gamma h(p)) log(1-p)]`` (``h`` as above).

    Positive: raising ``gamma`` enlarges the focal gradient at this ``p``; negative: it
    shrinks it (AdaFocal's working assumption, Ghosh et al. 2022, Sec. 5 and footnote 2).
    """
    p = checks.probabilities(p)
    g = checks.gammas(gamma)
    h = _h(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.power(1.0 - p, g) * (h + (1.0 + g * h) * np.log1p(-p))
    return _scalar(np.where(p >= 1, 0.0, out))


def shrink_gamma(p):
    """The ``gamma`` at which ``dg/dgamma`` vanishes at ``p``: ``1/(-log(1-p)) - 1/h(p)``.

    Dividing ``dg/dgamma`` by ``(1-p)^gamma h(p) (-log(1-p)) > 0`` leaves
    ``1/(-log(1-p)) - 1/h(p) - gamma``, so raising ``gamma`` lowers ``g(p, .)`` exactly when
    ``gamma > shrink_gamma(p)``. Decreasing from ``+inf`` (``p -> 0``) through 0 (``p = 1/2``);
    negative above 1/2. Defined for ``p`` in (0, 1).
    """
    p = checks.probabilities(p)
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p must lie in the open interval (0, 1)")
    return _scalar(1.0 / -np.log1p(-p) - 1.0 / _h(p))


def gradient_shrink_threshold(gamma, iters: int = 200):
    """The ``p`` above which raising ``gamma`` lowers ``g(p, gamma)`` (AdaFocal footnote 2).

    The root in (0, 1) of ``dg/dgamma = 0`` (:func:`gradient_factor_dgamma`): below it a
    larger ``gamma`` *enlarges* the gradient, above it a larger ``gamma`` shrinks it.
    Ghosh et al. (2022, footnote 2) say the second "mostly holds true in the region
    ``p`` approximately > 0.2". Equivalently the inverse of :func:`shrink_gamma` on (0, 1/2]:
    ``gamma = 0`` gives 1/2 and the threshold falls towards 0 as ``gamma`` grows. Solved by
    bisection on ``log p`` (vectorised over ``gamma``; 200 steps reach float64 resolution).

    Parameters
    ----------
    gamma : float or array_like, >= 0
        The focal parameter(s); vectorised (``gamma = 0`` gives 1/2).
    iters : int
        Bisection steps (default 200, which reach float64 resolution).

    Example
    -------
    >>> from replicate.theory import gradient_shrink_threshold
    >>> round(float(gradient_shrink_threshold(3.0)), 4)
    0.1555
    """
    g = checks.gammas(gamma)
    lo = np.full(g.shape, np.log(1e-300))
    hi = np.full(g.shape, np.log(0.5))
    for _ in range(int(iters)):
        mid = 0.5 * (lo + hi)
        grows = shrink_gamma(np.exp(mid)) > g  # raising gamma still enlarges g: move right
        lo = np.where(grows, mid, lo)
        hi = np.where(grows, hi, mid)
    return _scalar(np.where(g == 0, 0.5, np.exp(0.5 * (lo + hi))))
