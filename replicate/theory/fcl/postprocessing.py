"""Smooth calibration error and post-processing gap, computed exactly (binary predictions).

Definitions quoted by Liang et al. (FCL, Defs. 2.2 and 2.3) from Blasiok et al.
{cite}`blasiok2023smooth` {cite}`blasiok2024postprocessing`, for a predictor ``f`` with
values in [0, 1] and labels ``y`` in {0, 1} (for multiclass: top-label confidence and
correctness):

- ``smCE(f) = sup_w E[w(f) (y - f)]`` over 1-Lipschitz ``w: [0, 1] -> [-1, 1]``;
- ``pGap(f) = E[l(f, y)] - inf_kappa E[l(kappa(f), y)]`` over a family of post-processings.

Only the values of ``w`` and ``kappa`` at the distinct predictions matter, and a function
on those points is 1-Lipschitz iff consecutive (sorted) values differ by at most the gap
between the points (extend piecewise linearly). So:

- smCE is a linear programme in ``n`` variables (scipy ``linprog``, HiGHS);
- pGap for the squared loss is a bounded least-squares problem: write ``kappa`` (or its
  update ``kappa - f``) as a first value plus bounded consecutive differences, which turns
  the Lipschitz constraints into box constraints, solved exactly by ``lsq_linear`` (BVLS);
- pGap for another loss (focal, FCL) is a smooth convex programme with the same linear
  constraints plus ``0 < kappa < 1``, solved by SLSQP.

Two post-processing families are offered. ``family="update"`` is Blasiok et al.'s: the
update ``kappa(v) - v`` is 1-Lipschitz (so ``kappa`` may stretch predictions apart, which
fixing under-confidence needs); with it they prove ``smCE^2 <= pGap <= 2 smCE`` for the
squared loss. ``family="lipschitz"`` is the FCL paper's wording, ``kappa`` itself
1-Lipschitz: it cannot stretch predictions apart, but it can still shift them. For the
squared loss its gap is zero exactly when the predictor is calibrated in the large and
under-confident above every threshold (:func:`lipschitz_gap_vanishes`): the KKT conditions
of the identity map. A predictor that is under-confident *and* shifted has a positive gap.
For the squared loss the range constraint ``kappa in [0, 1]`` never binds (clipping a
feasible map to [0, 1] keeps it feasible and moves every value towards its targets in
[0, 1]), so it is dropped there.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import sparse
from scipy.optimize import linprog, lsq_linear, minimize

__all__ = ["support", "smooth_calibration_error", "post_processing_gap", "lipschitz_gap_vanishes"]

_FAMILIES = ("update", "lipschitz")


def support(f, y, weights=None):
    """Collapse samples to distinct predictions: ``(values, mass, mean label)``, sorted.

    ``weights`` (optional, non-negative) are per-sample probabilities; by default each
    sample has mass ``1/n``. The mean label is the mass-weighted mean of ``y`` there.
    """
    f = np.asarray(f, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if f.shape != y.shape or f.size == 0:
        raise ValueError(f"f and y must be non-empty and of equal length, got {f.shape} and {y.shape}")
    if not np.all((f >= 0) & (f <= 1)):
        raise ValueError("f must hold predictions in [0, 1] (no NaN)")
    if not np.all((y >= 0) & (y <= 1)):
        raise ValueError("y must hold labels (or label means) in [0, 1]")
    w = np.full(f.shape, 1.0 / f.size) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != f.shape or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("weights must be non-negative, finite, not all zero, one per sample")
    w = w / w.sum()
    vals, inv = np.unique(f, return_inverse=True)
    mass = np.bincount(inv, weights=w, minlength=vals.size)
    ybar = np.bincount(inv, weights=w * y, minlength=vals.size) / np.where(mass > 0, mass, 1.0)
    keep = mass > 0
    return vals[keep], mass[keep], ybar[keep]


def _difference_matrix(n: int):
    """Sparse ``(n-1, n)`` matrix with rows ``e_{i+1} - e_i``."""
    return sparse.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n), format="csr")


def smooth_calibration_error(f, y, weights=None, *, return_witness: bool = False):
    """``smCE(f) = sup_w E[w(f)(y - f)]``, ``w`` 1-Lipschitz with values in [-1, 1] (exact LP).

    Parameters
    ----------
    f : array_like in [0, 1]
        Predictions (probability of class 1, or top-label confidence).
    y : array_like in {0, 1}
        Labels (or correctness indicators); label means in [0, 1] are accepted.
    weights : array_like, optional
        Per-sample probabilities (default uniform).
    return_witness : bool
        Also return ``(values, w)``, the optimal witness at the distinct predictions.
    """
    v, m, yb = support(f, y, weights)
    r = m * (yb - v)
    n = v.size
    if n == 1:
        val = abs(r[0])
        return (val, (v, np.sign(r))) if return_witness else val
    dmat = _difference_matrix(n)
    gaps = np.diff(v)
    res = linprog(-r, A_ub=sparse.vstack([dmat, -dmat]), b_ub=np.concatenate([gaps, gaps]),
                  bounds=(-1.0, 1.0), method="highs")
    if res.status != 0:
        raise RuntimeError(f"smCE linear programme failed: {res.message}")
    val = float(-res.fun)
    return (val, (v, res.x)) if return_witness else val


def _expected(loss, kappa, m, yb):
    v1, d1 = loss(kappa, np.ones_like(kappa))
    v0, d0 = loss(kappa, np.zeros_like(kappa))
    return float(np.sum(m * (yb * v1 + (1.0 - yb) * v0))), m * (yb * d1 + (1.0 - yb) * d0)


def post_processing_gap(f, y, weights=None, *, loss: str | Callable = "squared",
                        family: str = "update", eps: float = 1e-9, return_map: bool = False):
    """``pGap(f) = E[l(f, y)] - inf_kappa E[l(kappa(f), y)]`` (FCL Def. 2.3), exactly.

    Parameters
    ----------
    f, y, weights : as in :func:`smooth_calibration_error`.
    loss : "squared" or callable
        ``"squared"`` is ``(kappa - y)^2``; a callable ``loss(kappa, y) -> (value, derivative)``
        (e.g. :func:`replicate.theory.fcl.loss.binary_loss`) must be convex in ``kappa`` for the
        result to be the infimum.
    family : {"update", "lipschitz"}
        ``kappa(v) - v`` 1-Lipschitz (Blasiok et al.) or ``kappa`` 1-Lipschitz (FCL's wording).
    eps : float
        For a callable loss, ``kappa`` is kept in ``[eps, 1 - eps]``.
    return_map : bool
        Also return ``(values, kappa)`` at the distinct predictions.
    """
    if family not in _FAMILIES:
        raise ValueError(f"family must be one of {_FAMILIES}, got {family!r}")
    v, m, yb = support(f, y, weights)
    n = v.size
    gaps = np.diff(v)
    lower_tri = np.tril(np.ones((n, n)))          # kappa = base + L z, z = (first value, diffs)
    base = v if family == "update" else np.zeros(n)
    z_lo = np.concatenate([[-np.inf], -gaps])
    z_hi = np.concatenate([[np.inf], gaps])
    if isinstance(loss, str):
        if loss != "squared":
            raise ValueError(f"loss must be 'squared' or a callable, got {loss!r}")
        sw = np.sqrt(m)
        res = lsq_linear(sw[:, None] * lower_tri, sw * (yb - base), bounds=(z_lo, z_hi),
                         method="bvls", tol=1e-14)
        kappa = base + lower_tri @ res.x
        before = np.sum(m * ((v - yb) ** 2 + yb * (1 - yb)))
        after = np.sum(m * ((kappa - yb) ** 2 + yb * (1 - yb)))
    else:
        before, _ = _expected(loss, np.clip(v, eps, 1 - eps), m, yb)

        def objective(z):
            val, grad = _expected(loss, base + lower_tri @ z, m, yb)
            return val, lower_tri.T @ grad

        z0 = np.concatenate([[np.clip(v[0], eps, 1 - eps) - base[0]], np.zeros(n - 1)])
        if family == "update":
            z0[1:] = 0.0
        else:
            z0[1:] = gaps
        cons = [{"type": "ineq", "fun": lambda z: base + lower_tri @ z - eps, "jac": lambda z: lower_tri},
                {"type": "ineq", "fun": lambda z: 1 - eps - base - lower_tri @ z,
                 "jac": lambda z: -lower_tri}]
        bounds = list(zip(np.where(np.isfinite(z_lo), z_lo, None), np.where(np.isfinite(z_hi), z_hi, None)))
        res = minimize(objective, z0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": 1e-15, "maxiter": 2000})
        kappa = base + lower_tri @ res.x
        after, _ = _expected(loss, kappa, m, yb)
        after = min(after, before)                 # the identity map is always feasible
    gap = max(float(before - after), 0.0)
    return (gap, (v, kappa)) if return_map else gap


def lipschitz_gap_vanishes(f, y, weights=None, *, tol: float = 1e-12) -> bool:
    """Whether the squared-loss gap over 1-Lipschitz ``kappa`` (``family="lipschitz"``) is 0.

    At the distinct predictions ``v_1 < ... < v_n`` with masses ``m_i`` and mean labels
    ``ybar_i`` the identity is optimal iff the KKT multipliers of its active constraints
    ``kappa_{i+1} - kappa_i <= v_{i+1} - v_i`` are non-negative:
    ``mu_i = 2 sum_{l <= i} m_l (v_l - ybar_l) >= 0`` for ``i < n`` and the total is 0. In
    words: ``E[f] = E[y]`` and ``E[(y - f) 1{f > t}] >= 0`` for every ``t`` (above every
    threshold the outcomes exceed the predictions on aggregate: under-confidence that is
    calibrated in the large). ``tol`` is the slack allowed on both conditions.
    """
    v, m, yb = support(f, y, weights)
    r = np.cumsum(m * (v - yb))
    return bool(abs(r[-1]) <= tol and np.all(r[:-1] >= -tol))
