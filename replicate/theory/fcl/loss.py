"""Focal calibration loss theory: Liang et al. (FCL, 2024-25), Sec. 3-4 and App. A.

Definition 3.1: ``L_FCL(q, y) = L_FL(q, y) + lambda * L_cal(q, y)`` with
``L_FL = -sum_k y_k (1 - q_k)^gamma log q_k`` and ``L_cal = ||q - y||_2^2``. The paper calls
``L_cal`` the "mean squared norm" and equates it with the Brier score, so whether it is
divided by the number of classes ``K`` is ambiguous; every function here takes
``brier="sum"`` (the squared Euclidean norm, the default and the authors' code) or
``brier="mean"`` (divided by ``K``).

The conditional risk at a class posterior ``eta`` is

    R(q; eta) = sum_i eta_i (-(1 - q_i)^gamma log q_i) + lambda s (||q - eta||^2 + 1 - ||eta||^2),

``s = 1`` or ``1/K``. It is strictly convex, and its minimiser solves the KKT conditions
``g_i(q_i) = nu`` with

    g_i(p) = eta_i f(p) - 2 lambda s (p - eta_i),   f(p) = (1-p)^gamma / p - gamma (1-p)^(gamma-1) log p,

``f = -d/dp [-(1-p)^gamma log p]`` the focal "weight" (``f(p) = phi(p)/p`` with the
``phi`` of Charoenphakdee et al. and Tao et al.). Equation (59) of Lemma A.3 (App. A.6)
is missing from our copy of the paper; its proof names a power term, a log term and a
linear term, limits at 0 and 1 and a unique root that gives "a unique mapping between
predicted and true probabilities". ``g`` above is the function with exactly those
ingredients and that role; :func:`lemma_a3_function` exposes it and the chapter says it is
a reconstruction.
"""
from __future__ import annotations

import numpy as np

from ... import checks

from .postprocessing import post_processing_gap, smooth_calibration_error  # noqa: F401 (re-export)

__all__ = [
    "fcl_loss",
    "fcl_conditional_risk",
    "fcl_risk_minimizer",
    "focal_weight",
    "focal_curvature",
    "lemma_a3_function",
    "theorem_4_1_sides",
    "binary_loss",
    "post_processing_gap",
    "smooth_calibration_error",
]

_BRIER = ("sum", "mean")


def _scale(brier: str, k: int) -> float:
    if brier not in _BRIER:
        raise ValueError(f"brier must be one of {_BRIER} (squared norm summed over classes, or "
                         f"divided by K), got {brier!r}")
    return 1.0 if brier == "sum" else 1.0 / k


def _nonnegative(name: str, value) -> float:
    """``value`` as a finite float >= 0, else ValueError naming the parameter."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number >= 0, got {value!r}") from None
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}")
    return v


def _lam(lam) -> float:
    return _nonnegative("lam (the calibration weight lambda)", lam)


def _focal_terms(q: np.ndarray, g: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return -(1.0 - q) ** g * np.log(q)


def fcl_loss(q, y, gamma, lam, *, brier: str = "sum"):
    """Per-sample FCL (Definition 3.1) for predictions ``q`` and one-hot (or soft) labels ``y``."""
    q, y = checks.simplex(q, "q"), checks.simplex(y, "y")
    g, lv = checks.gamma(gamma), _lam(lam)
    s = _scale(brier, q.shape[-1])
    focal = np.where(y > 0, y * _focal_terms(q, g), 0.0).sum(-1)
    return focal + lv * s * ((q - y) ** 2).sum(-1)


def fcl_conditional_risk(q, eta, gamma, lam, *, brier: str = "sum"):
    """``E_{y ~ eta} L_FCL(q, y)`` in closed form (Definition 4.2, Eq. 14)."""
    q, eta = checks.simplex(q, "q"), checks.simplex(eta, "eta")
    g, lv = checks.gamma(gamma), _lam(lam)
    s = _scale(brier, q.shape[-1])
    focal = np.where(eta > 0, eta * _focal_terms(q, g), 0.0).sum(-1)
    brier_risk = ((q - eta) ** 2).sum(-1) + 1.0 - (eta ** 2).sum(-1)
    return focal + lv * s * brier_risk


def focal_weight(p, gamma):
    """``f(p) = (1-p)^gamma / p - gamma (1-p)^(gamma-1) log p`` on (0, 1].

    Minus the derivative of the focal term ``-(1-p)^gamma log p``; ``f(0+) = +inf``,
    ``f(1) = 0`` for ``gamma > 0`` (1 for ``gamma = 0``, cross-entropy).
    """
    p = np.asarray(p, dtype=np.float64)
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError("p must lie in (0, 1]")
    g = checks.gamma(gamma)
    one_m = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        second = np.where(one_m > 0, g * one_m ** (g - 1.0) * np.log(p), 0.0)
    return one_m ** g / p - second


def lemma_a3_function(p, eta, gamma, lam, *, brier: str = "sum", num_classes: int = 2):
    """Reconstructed Eq. (59): ``g(p) = eta f(p) - 2 lambda s (p - eta)`` (Lemma A.3).

    The per-class stationarity function of the FCL conditional risk: the KKT conditions
    read ``g(q_i; eta_i) = nu`` for one common multiplier ``nu``. ``s = 1`` (``brier="sum"``)
    or ``1 / num_classes`` (``brier="mean"``). Lemma A.3 claims: continuous on (0, 1),
    ``g -> +inf`` as ``p -> 0``, ``g -> -2 lambda s (1 - eta)`` as ``p -> 1``, strictly
    decreasing, and a unique root.
    """
    p = np.asarray(p, dtype=np.float64)
    e = np.asarray(eta, dtype=np.float64)
    if not np.all((e >= 0) & (e <= 1)):
        raise ValueError("eta must lie in [0, 1]")
    if int(num_classes) < 2:
        raise ValueError(f"num_classes must be >= 2, got {num_classes!r}")
    s = _scale(brier, int(num_classes))
    f = focal_weight(p, gamma)
    return np.where(e > 0, e * f, 0.0) - 2.0 * _lam(lam) * s * (p - e)


def focal_curvature(p, g: float):
    """``l''(p)`` of the focal term ``l(p) = -(1-p)^gamma log p`` (App. A.3, Step 1):
    ``gamma (1-gamma) (1-p)^(gamma-2) log p + 2 gamma (1-p)^(gamma-1) / p + (1-p)^gamma / p^2``."""
    one_m = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = one_m ** g / (p * p)
        if g > 0:
            out = out + g * (1.0 - g) * one_m ** (g - 2.0) * np.log(p) + 2.0 * g * one_m ** (g - 1.0) / p
    return out


def fcl_risk_minimizer(eta, gamma, lam, *, brier: str = "sum", iters: int = 52,
                       outer_iters: int = 64):
    """The prediction minimising the FCL conditional risk at posterior ``eta`` (last axis).

    Solves the KKT system exactly (to float64 resolution), vectorised over rows: for a
    multiplier ``nu`` every class's ``q_i(nu)`` is the largest ``p`` in [0, 1] with
    ``g_i(p) >= nu``, found by bisection (``g_i`` strictly decreases, see
    :func:`~replicate.theory.fcl.loss.lemma_a3_function`; classes with ``eta_i = 0`` get ``q_i = max(0, -nu / (2 lambda
    s))``), and ``nu`` solves ``sum_i q_i(nu) = 1`` by Newton's method
    (``dq_i/dnu = 1 / g_i'(q_i)``) kept inside a shrinking bisection bracket. ``lam = 0``
    gives the focal-loss minimiser of Charoenphakdee et al.; ``gamma = 0`` and ``lam = 0``
    give ``eta`` (cross-entropy).

    Parameters
    ----------
    eta : array_like (..., K)
        Class posteriors.
    gamma, lam : float >= 0
        Focal parameter and calibration weight lambda.
    brier : {"sum", "mean"}
        ``||q - y||^2`` summed over classes or divided by ``K``.
    iters, outer_iters : int
        Bisection steps of the inner search (per class, on [0, 1]: 52 reach float64
        resolution) and the most steps of the outer search on ``nu`` (Newton usually
        converges in fewer than ten).

    Example
    -------
    >>> from replicate.theory import fcl_risk_minimizer
    >>> fcl_risk_minimizer([0.7, 0.2, 0.1], gamma=2.0, lam=1.0).round(4)
    array([0.5924, 0.2584, 0.1492])
    """
    e = checks.simplex(eta, "eta")
    g, lv = checks.gamma(gamma), _lam(lam)
    shape = e.shape
    e = e.reshape(-1, shape[-1]) / e.reshape(-1, shape[-1]).sum(-1, keepdims=True)
    k = shape[-1]
    a = 2.0 * lv * _scale(brier, k)
    pos = e > 0

    def gfun(p):
        one_m = 1.0 - p
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            logp = np.log(p)
            f = one_m ** g / p - (np.where(one_m > 0, g * one_m ** (g - 1.0) * logp, 0.0) if g > 0 else 0.0)
        return np.where(pos, e * f, 0.0) - a * (p - e)

    def q_of(nu):
        """``sup{p in [0, 1]: g_i(p) >= nu}`` per class (0 if the set is empty)."""
        lo = np.zeros_like(e)
        hi = np.ones_like(e)
        top = gfun(hi) >= nu[:, None]
        for _ in range(int(iters)):
            mid = 0.5 * (lo + hi)
            ok = gfun(mid) >= nu[:, None]
            lo = np.where(ok, mid, lo)
            hi = np.where(ok, hi, mid)
        q = np.where(top, 1.0, 0.5 * (lo + hi))
        # eta_i = 0 classes: g = -a p is linear, q = max(0, -nu / a) (0 when a = 0)
        lin = np.clip(-nu[:, None] / a, 0.0, 1.0) if a > 0 else np.zeros_like(e)
        return np.where(pos, q, lin)

    def dq_dnu(q, nu):
        """``dq_i/dnu = 1 / g_i'(q_i)`` (0 where ``q_i`` sits at 0 or 1)."""
        inner = pos & (q > 0) & (q < 1)
        qs = np.where(inner, q, 0.5)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = -e * focal_curvature(qs, g) - a
            d = np.where(inner, 1.0 / slope, 0.0)
        lin = ~pos & (a > 0) & (-nu[:, None] / max(a, 1e-300) > 0) & (-nu[:, None] / max(a, 1e-300) < 1)
        return np.where(lin, -1.0 / max(a, 1e-300), np.where(np.isfinite(d), d, 0.0))

    nu_hi = gfun(np.full_like(e, 1.0 / k)).max(1)     # every q_i <= 1/K
    nu_lo = gfun(np.ones_like(e)).min(1)               # some q_i = 1
    nu = 0.5 * (nu_lo + nu_hi)
    for _ in range(int(outer_iters)):                  # Newton on nu, bisection as safeguard
        q = q_of(nu)
        h = q.sum(1) - 1.0                             # decreasing in nu
        nu_lo = np.where(h > 0, nu, nu_lo)
        nu_hi = np.where(h < 0, nu, nu_hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = nu - h / dq_dnu(q, nu).sum(1)
        ok = np.isfinite(step) & (step > nu_lo) & (step < nu_hi)
        done = (np.abs(h) <= 8 * k * 2.0 ** -52) | (nu_hi - nu_lo <= 4e-16 * np.abs(nu))
        if done.all():
            break
        nu = np.where(done, nu, np.where(ok, step, 0.5 * (nu_lo + nu_hi)))
    q = q_of(nu)
    q = q / q.sum(1, keepdims=True)
    return q.reshape(shape)


def theorem_4_1_sides(q, eta) -> dict:
    """Both sides of Theorem 4.1: ``|max q - max eta| <= ||q - eta||_inf <= ||q - eta||_2``."""
    q, eta = checks.simplex(q, "q", normalised=False), checks.simplex(eta, "eta", normalised=False)
    d = q - eta
    return {"gap": np.abs(q.max(-1) - eta.max(-1)), "linf": np.abs(d).max(-1),
            "l2": np.sqrt((d ** 2).sum(-1))}


_KINDS = ("squared", "focal", "fcl")


def binary_loss(kind: str, *, gamma: float = 0.0, lam: float = 0.0, brier: str = "sum"):
    """A binary loss ``l(kappa, y)`` of the probability ``kappa`` of class 1, with its derivative.

    ``kind``: ``"squared"`` is ``(kappa - y)^2``; ``"focal"`` and ``"fcl"`` are Definition 3.1
    on the two-class vector ``(kappa, 1 - kappa)`` (``fcl`` adds ``lam`` times the squared
    norm, summed or divided by 2). Returns a function ``(kappa, y) -> (value, d value / d kappa)``
    for use with :func:`post_processing_gap`.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    g = checks.gamma(gamma)
    lv = _lam(lam) if kind == "fcl" else 0.0
    s = _scale(brier, 2)

    def loss(kappa, y):
        kappa = np.asarray(kappa, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if kind == "squared":
            return (kappa - y) ** 2, 2.0 * (kappa - y)
        one_m = 1.0 - kappa
        with np.errstate(divide="ignore", invalid="ignore"):
            v1 = -one_m ** g * np.log(kappa)
            d1 = (g * one_m ** (g - 1.0) * np.log(kappa) if g > 0 else 0.0) - one_m ** g / kappa
            v0 = -kappa ** g * np.log(one_m)
            d0 = (-g * kappa ** (g - 1.0) * np.log(one_m) if g > 0 else 0.0) + kappa ** g / one_m
        value = y * v1 + (1.0 - y) * v0 + lv * s * 2.0 * (kappa - y) ** 2
        grad = y * d1 + (1.0 - y) * d0 + lv * s * 4.0 * (kappa - y)
        return value, grad

    return loss
