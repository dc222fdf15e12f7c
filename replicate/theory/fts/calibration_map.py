"""Focal calibration map and temperature bounds (Komisarenko & Kull 2024, FTS).

Komisarenko & Kull {cite}`komisarenko2024fts` decompose the focal loss into a fixed
confidence-raising map (the *focal calibration map*) followed by a proper loss.

- Prop. 2 (binary) and Prop. 4 / Eq. (1) (multiclass): with
  ``f'(q) = (1-q)^gamma * (gamma * log q / (1-q) - 1/q)`` (the derivative of the focal
  loss ``-(1-q)^gamma log q``), the map is ``p_i(q) = (1/f'(q_i)) / sum_k (1/f'(q_k))``.
- Prop. 3: for the binary map applied to a logit ``s``, ``FC(s) = p(sigmoid(s))`` lies
  between the temperature-scaling maps ``sigmoid(s / T)`` with ``T = 1/(gamma+1)`` and
  ``T = 1/(gamma + 1 - log(gamma+1)/2)``.

Numerics. Since ``-f'(q) > 0`` for ``q`` in (0, 1) and ``gamma > -1``, we work with the
positive weight ``w(q) = 1 / (-f'(q)) = q (1-q)^(-gamma) / (1 + gamma h(q))`` where
``h(q) = -q log q / (1-q)`` increases from 0 (q -> 0) to 1 (q -> 1). The map is then a
softmax of ``log w``, evaluated with the complement ``1 - q_i`` taken as the sum of the
*other* coordinates (exact even when ``q_i`` has rounded to 1), so it stays accurate for
``q -> 0`` and ``q -> 1``. ``gamma`` may be negative (the paper's post-hoc grid uses
-0.5 and -0.25); the weights stay positive exactly when ``gamma > -1``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import checks

__all__ = [
    "focal_calibration_map",
    "binary_focal_calibration_map",
    "temperature_bounds",
    "focal_loss_true_class",
    "focal_loss_second_derivative",
    "focal_calibration_inverse",
    "properized_focal_loss",
    "conditional_risk",
    "confidence_raising_threshold",
]


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _complement(q, xp):
    """``1 - q_i`` along the last axis, as the sum of the other coordinates.

    For every coordinate except the row maximum, ``sum - q_i >= sum/2`` so the
    subtraction is harmless; for the maximum we sum the other entries directly.
    """
    total = q.sum(-1, keepdims=True) if xp is np else q.sum(-1, keepdim=True)
    if xp is np:
        imax = np.argmax(q, axis=-1)[..., None]
        onehot = np.zeros(q.shape, dtype=bool)
        np.put_along_axis(onehot, imax, True, axis=-1)
        others = np.where(onehot, 0.0, q).sum(-1, keepdims=True)
        return np.where(onehot, others, total - q)
    import torch

    imax = torch.argmax(q, dim=-1, keepdim=True)
    onehot = torch.zeros_like(q, dtype=torch.bool).scatter_(-1, imax, True)
    others = torch.where(onehot, torch.zeros_like(q), q).sum(-1, keepdim=True)
    return torch.where(onehot, others.expand_as(q), total - q)


def _log_weights(q, c, gamma: float, xp):
    """``log w(q) = log q - gamma log(1-q) - log(1 + gamma h(q))`` with ``c = 1 - q``."""
    if xp is np:
        log, log1p, where = np.log, np.log1p, np.where
    else:
        import torch

        log, log1p, where = torch.log, torch.log1p, torch.where
    with np.errstate(divide="ignore", invalid="ignore"):
        big = q > 0.5
        # log q: log1p(-c) is exact near q = 1, log(q) is exact near q = 0.
        one = 1.0 + 0 * q
        logq = where(big, log1p(-where(big, c, 0 * c)), log(where(big, one, q)))
        # h(q) = -q log q / (1 - q); its limit at c = 0 is 1.
        safe_c = where(c > 0, c, one)
        h = where(c > 0, -q * where(q > 0, logq, 0 * q) / safe_c, one)
        logc = log(safe_c)
        return logq - gamma * logc - log1p(gamma * h)


def focal_calibration_map(probs, gamma):
    """Focal calibration map of Komisarenko & Kull (2024), Prop. 2 (binary) / Prop. 4.

    ``p_j(q) = (1/f'(q_j)) / sum_k (1/f'(q_k))`` with
    ``f'(q) = (1-q)^gamma (gamma log q / (1-q) - 1/q)`` (Eq. 1). It maps a focal-loss
    risk minimiser back to the true class probabilities and raises confidence for
    ``gamma > 0`` (Prop. 5); ``gamma = 0`` is the identity. Rows that are exactly one-hot
    are returned unchanged (the continuous limit).

    Parameters
    ----------
    probs : array_like or torch.Tensor, shape (..., n_classes), n_classes >= 2
        Probability vectors on the last axis (entries in [0, 1], rows summing to 1
        within 1e-3). NumPy input returns float64 NumPy; a torch tensor returns a
        tensor of the same dtype and device (differentiable).
    gamma : float
        Focal parameter, finite and > -1 (negative values give the inverse,
        confidence-lowering shape used in the paper's post-hoc grid).

    Example
    -------
    >>> import numpy as np; from replicate.theory import focal_calibration_map
    >>> focal_calibration_map(np.array([0.7, 0.2, 0.1]), gamma=2.0).round(4)
    array([0.9197, 0.0546, 0.0257])
    """
    g = checks.gamma(gamma, lo=-1.0, strict=True)
    torch_in = _is_torch(probs)
    if torch_in:
        import torch

        q = probs if probs.is_floating_point() else probs.to(torch.get_default_dtype())
        xp = torch
    else:
        q = np.asarray(probs, dtype=np.float64)
        xp = np
    if q.ndim < 1 or q.shape[-1] < 2:
        raise ValueError(f"probs must have the classes on the last axis with at least 2 "
                         f"classes, got shape {tuple(q.shape)}")
    qd = q.detach() if torch_in else q
    bad = ~((qd >= 0) & (qd <= 1))
    if bool(bad.any()):
        raise ValueError("probs must have entries in [0, 1] (finite, no NaN)")
    sums = qd.sum(-1)
    if bool((abs(sums - 1) > 1e-3).any()):
        raise ValueError("probs must sum to 1 along the last axis (within 1e-3)")
    if g == 0.0:
        return q.clone() if torch_in else q.copy()
    c = _complement(q, xp)
    logw = _log_weights(q, c, g, xp)
    onehot_row = (c == 0).any(-1, keepdims=True) if xp is np else (c == 0).any(-1, keepdim=True)
    if xp is np:
        logw = np.where(onehot_row, 0.0, logw)
        logw = logw - logw.max(-1, keepdims=True)
        e = np.exp(logw)
        out = e / e.sum(-1, keepdims=True)
        return np.where(onehot_row, q, out)
    logw = torch.where(onehot_row, torch.zeros_like(logw), logw)
    out = torch.softmax(logw, dim=-1)
    return torch.where(onehot_row, q, out)


def binary_focal_calibration_map(q, gamma):
    """Prop. 2: the binary map ``p(q)`` for the positive-class probability ``q``.

    ``p(q) = 1 / (1 + ((1-q)/q)^gamma * ((1-q) - gamma q log q) / (q - gamma (1-q) log(1-q)))``,
    evaluated as the two-class case of :func:`focal_calibration_map`. Accepts any shape.
    """
    torch_in = _is_torch(q)
    if torch_in:
        import torch

        stacked = torch.stack([1 - q, q], dim=-1)
    else:
        qa = np.asarray(q, dtype=np.float64)
        stacked = np.stack([1 - qa, qa], axis=-1)
    return focal_calibration_map(stacked, gamma)[..., 1]


def temperature_bounds(gamma) -> tuple[float, float]:
    """Prop. 3: the two temperatures bounding the binary focal calibration map.

    Returns ``(T_steep, T_flat) = (1/(gamma+1), 1/(gamma + 1 - log(gamma+1)/2))``, as
    stated in the paper; ``T_steep <= T_flat``. For logits ``s > 0`` the check in
    ``notebooks/theory_fts.md`` finds ``sigmoid(s/T_flat) < FC(s) < sigmoid(s/T_steep)``
    (mirrored for ``s < 0``).

    Parameters
    ----------
    gamma : float
        The focal parameter, finite and ``>= 0``.

    Returns
    -------
    tuple of float
        ``(T_steep, T_flat)``.

    Example
    -------
    >>> from replicate.theory import temperature_bounds
    >>> tuple(round(t, 4) for t in temperature_bounds(2.0))
    (0.3333, 0.408)
    """
    g = checks.gamma(gamma)
    return 1.0 / (g + 1.0), 1.0 / (g + 1.0 - math.log1p(g) / 2.0)


# ---------------------------------------------------------------------------------------
# The focal loss, its convexity (Prop. 1) and the properized loss (Props. 2 and 4)
# ---------------------------------------------------------------------------------------

def focal_loss_true_class(q, gamma):
    """Focal loss on the true class, ``f(q) = -(1-q)^gamma log q`` (Sec. 2, Lin et al.).

    NumPy only, float64, any shape; ``f(0) = inf`` and ``f(1) = 0``.
    """
    g = checks.gamma(gamma)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q < 1, -((1.0 - q) ** g) * np.log(q), 0.0)


def focal_loss_second_derivative(q, gamma):
    """``f''(q)`` for ``f(q) = -(1-q)^gamma log q``, in closed form (Prop. 1).

    ``f''(q) = (1-q)^(gamma-2) [gamma (gamma-1) log(1/q) + 2 gamma (1-q)/q + ((1-q)/q)^2]``.
    With ``t = (1-q)/q`` and ``log(1/q) = log(1+t) <= t`` the bracket is at least
    ``gamma (1+gamma) t + t^2 > 0`` for ``gamma >= 0`` (also when ``gamma < 1``, where the
    first term is negative): the focal loss is convex in the prediction. Defined for
    ``q`` in (0, 1).
    """
    g = checks.gamma(gamma)
    q = np.asarray(q, dtype=np.float64)
    t = (1.0 - q) / q
    bracket = g * (g - 1.0) * np.log1p(t) + 2.0 * g * t + t * t
    return (1.0 - q) ** (g - 2.0) * bracket


def _logw_and_slope(x, g: float):
    """``log w(sigmoid(x))`` and its derivative in ``x`` (float64 NumPy, overflow-free)."""
    logq = -np.logaddexp(0.0, -x)
    logc = -np.logaddexp(0.0, x)
    q, c = np.exp(logq), np.exp(logc)
    pos = c > 0
    safe_c = np.where(pos, c, 1.0)
    h = np.where(pos, -q * logq / safe_c, 1.0)
    # -log q - c = c^2/2 + c^3/3 + ..., summed directly when c is small (no cancellation).
    small = c < 1e-3
    tail = np.where(small, c * c * (0.5 + c * (1 / 3 + c * (0.25 + c / 5))), -logq - c)
    dh = np.where(pos, q * tail / safe_c, 0.0)
    logw = logq - g * logc - np.log1p(g * h)
    slope = c + g * q - g * dh / (1.0 + g * h)
    return logw, slope


def _solve_increasing(fun, target, lo, hi, iters: int, tol: float = 1e-13):
    """Vectorised safeguarded Newton for an increasing ``fun`` (returns value, slope)."""
    x = 0.5 * (lo + hi)
    for _ in range(iters):
        val, slope = fun(x)
        r = val - target
        lo, hi = np.where(r < 0, x, lo), np.where(r > 0, x, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - r / slope
        ok = np.isfinite(step) & (step > lo) & (step < hi)
        x_new = np.where(ok, step, 0.5 * (lo + hi))
        if np.all(np.abs(x_new - x) <= tol * (1.0 + np.abs(x))):
            return x_new
        x = x_new
    return x


def focal_calibration_inverse(probs, gamma, *, iters: int = 200):
    """Inverse of the focal calibration map; equals the focal-risk minimiser of ``probs``.

    For ``gamma >= 0`` the weight ``w(q) = 1/(-f'(q))`` increases (``f`` is convex, Prop. 1),
    so ``p = map(q)`` is solved by ``log w(q_i) = log p_i + l`` with the scalar ``l`` fixed
    by ``sum_i q_i = 1``. Both solves are vectorised safeguarded Newton iterations (the inner
    one on ``logit(q_i)``; the outer one on ``l``, bracketed by
    ``log w(1/n) - log max p <= l <= log w(1/n) - log min p``). By the KKT conditions of
    ``min_q sum_i p_i f(q_i)`` on the simplex the solution is the focal-loss risk minimiser
    (Prop. 4; Charoenphakdee et al. 2021). NumPy, shape (..., n), entries in (0, 1).
    """
    g = checks.gamma(gamma)
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim < 1 or p.shape[-1] < 2:
        raise ValueError(f"probs must have at least 2 classes on the last axis, got {p.shape}")
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("probs must have entries strictly inside (0, 1)")
    p = p / p.sum(-1, keepdims=True)
    if g == 0.0:
        return p
    logp = np.log(p)
    n = p.shape[-1]
    logw_n = _logw_and_slope(np.array(-np.log(n - 1.0)), g)[0]

    def logits_given(ell):
        target = logp + ell[..., None]
        return _solve_increasing(lambda x: _logw_and_slope(x, g), target,
                                 np.full(p.shape, -800.0), np.full(p.shape, 800.0), iters)

    def total(ell):
        x = logits_given(ell)
        q = 1.0 / (1.0 + np.exp(-x))
        _, slope = _logw_and_slope(x, g)
        return q.sum(-1), (q * (1.0 - q) / slope).sum(-1)

    ell = _solve_increasing(total, 1.0, logw_n - logp.max(-1), logw_n - logp.min(-1), iters)
    q = 1.0 / (1.0 + np.exp(-logits_given(ell)))
    return q / q.sum(-1, keepdims=True)


def properized_focal_loss(q, gamma):
    """Proper part of the focal loss, ``L*(q, y) = f(map^{-1}(q)_y)`` for every class ``y``.

    Prop. 2 (binary) and Prop. 4 (multiclass): returns an array of the same shape as
    ``q`` (..., n) whose entry ``y`` is the loss when the label is ``y``. It has no closed
    form; the inverse map is evaluated by :func:`focal_calibration_inverse`.
    """
    return focal_loss_true_class(focal_calibration_inverse(q, gamma), gamma)


def conditional_risk(eta, losses):
    """Expected loss ``R(eta, q) = sum_y eta_y L(q, y)`` from per-class losses (Sec. 3.3)."""
    return np.sum(np.asarray(eta, dtype=np.float64) * np.asarray(losses), axis=-1)


def confidence_raising_threshold(gamma) -> float:
    """Top probability above which focal calibration provably raises confidence (Prop. 5 fix).

    ``map(q)_j / q_j = r(q_j) / sum_i q_i r(q_i)`` with ``r(q) = w(q)/q =
    (1-q)^(-gamma) / (1 + gamma h(q))``, ``r(0) = 1``. ``r`` first decreases, then
    increases (checked numerically in the chapter), so if the top probability ``q_j``
    satisfies ``r(q_j) >= 1`` then ``r(q_j) >= r(q_i)`` for every ``q_i <= q_j`` and
    ``map(q)_j >= q_j``. Returns the root ``q*`` of ``r(q) = 1`` in (0, 1) (``1/2`` as
    ``gamma -> 0``, exactly ``1/e`` at ``gamma = 1``); requires ``gamma > 0``.
    """
    from scipy.optimize import brentq

    g = checks.gamma(gamma)
    if g == 0.0:
        raise ValueError("gamma must be > 0 for confidence_raising_threshold (gamma = 0 is the identity)")

    def log_r(q):
        return -g * np.log1p(-q) - np.log1p(g * (-q * np.log(q) / (1.0 - q)))

    # log r < 0 just above the minimum of r (at most 1/e) and > 0 near q = 1.
    qs = np.linspace(1e-6, 0.5, 2001)
    return float(brentq(log_r, qs[int(np.argmin(log_r(qs)))], 1.0 - 1e-12, xtol=1e-15))
