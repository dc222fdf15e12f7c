"""Properness in Liang et al. (FCL): App. A.3 (FCL), A.7 (the squared-norm term) and A.8 Case 2
(focal loss and cross-entropy alone), each checked by its own computation.

- :func:`properness_table`: the exact FCL minimiser against the posterior (A.3, A.8);
- :func:`focal_convexity`: the closed-form second derivative of the focal term (A.3 Step 1);
- :func:`brier_properness`: the squared-norm risk computed by summing over the labels, its
  excess over ``q = eta`` against ``s ||q - eta||^2`` and its minimiser by compass search
  (A.7, multiclass) or scalar minimisation (A.7, the binary form (63));
- :func:`focal_uniqueness`: is the minimiser of the expected focal loss unique (A.8 Case
  2(a) says it is not)? Strict convexity of the focal term on (0, 1) and its strict
  decrease decide it; compass searches from random starting points corroborate it;
- :func:`cross_entropy_gap`: Gibbs' inequality for cross-entropy (A.8 Case 2(b) says it is
  not strictly proper), with scipy's relative entropy.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.stats import entropy

from .._simplex import pattern_search
from .loss import focal_curvature, fcl_risk_minimizer, focal_weight

__all__ = ["properness_table", "focal_convexity", "brier_properness", "focal_uniqueness", "cross_entropy_gap",
           "same_order"]


def same_order(q, eta, atol=1e-9):
    """Row-wise: ``eta_a < eta_b`` implies ``q_a < q_b`` (strict order preservation, Def. 4.3)."""
    lt = eta[:, :, None] < eta[:, None, :] - 1e-12
    return ~(lt & (q[:, :, None] >= q[:, None, :] - atol)).any((1, 2))


def properness_table(eta, gammas, lams, *, brier: str = "sum") -> pd.DataFrame:
    """For posteriors ``eta`` (rows), the largest ``|q*_i - eta_i|`` per (gamma, lambda)."""
    eta = np.atleast_2d(np.asarray(eta, dtype=float))
    rows = []
    for g, lv in itertools.product(gammas, lams):
        q = fcl_risk_minimizer(eta, g, lv, brier=brier)
        err = np.abs(q - eta).max(1)
        rows.append({"gamma": float(g), "lambda": float(lv), "max |q* - eta|": float(err.max()),
                     "mean |q* - eta|_max": float(err.mean()),
                     "order preserved": float(np.mean(same_order(q, eta)))})
    return pd.DataFrame(rows)


def focal_convexity(gammas, *, grid: int = 100001) -> pd.DataFrame:
    """App. A.3 Step 1: the smallest second derivative of ``-(1-q)^gamma log q`` on (0, 1).

    ``l'' = gamma(1-gamma)(1-q)^(gamma-2) log q + 2 gamma (1-q)^(gamma-1)/q + (1-q)^gamma/q^2``.
    """
    q = np.linspace(0.0, 1.0, grid)[1:-1]
    rows = []
    for g in gammas:
        d2 = focal_curvature(q, float(g))
        rows.append({"gamma": float(g), "min second derivative": float(d2.min()),
                     "argmin q": float(q[np.argmin(d2)])})
    return pd.DataFrame(rows)


def _brier_risk(q, eta, s: float):
    """``E_{y ~ eta} s ||q - e_y||^2``, summed over the labels (not the closed form)."""
    k = q.shape[-1]
    return sum(eta[..., y] * s * ((q - np.eye(k)[y]) ** 2).sum(-1) for y in range(k))


def brier_properness(ks=(2, 3, 5, 10), n: int = 200, *, seed: int = 0) -> pd.DataFrame:
    """App. A.7: the squared norm ``||q - y||^2`` (and its mean over the ``K`` classes) is
    strictly proper, checked directly. Per ``K`` and scaling: the largest
    ``|R(q) - R(eta) - s ||q - eta||^2|`` over ``n`` random pairs (the expected-score
    identity behind (66)-(72)), the smallest ``(R(q) - R(eta)) / ||q - eta||^2`` (> 0: strict)
    and the largest distance of a compass-search minimiser (from random starts) to ``eta``.
    The binary form (63), ``(q - y)^2`` with a scalar ``q``, is minimised by scipy."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, (name, s) in itertools.product(ks, [("sum", 1.0), ("mean", None)]):
        s = 1.0 / k if s is None else s
        eta, q = rng.dirichlet(np.ones(k), n), rng.dirichlet(np.ones(k), n)
        excess = _brier_risk(q, eta, s) - _brier_risk(eta, eta, s)
        dist2 = ((q - eta) ** 2).sum(-1)
        few = slice(0, 20)                          # compass search from 20 random starts
        found, _ = pattern_search(lambda x, p: _brier_risk(x, p[..., 0, :], s), q[few], eta[few, None, :],
                                  step=0.1, tol=1e-10)
        rows.append({"K": k, "scaling": name, "identity error": float(np.abs(excess - s * dist2).max()),
                     "min excess / ||q - eta||^2": float((excess / dist2).min()),
                     "max |argmin - eta|": float(np.abs(found - eta[few]).max())})
    etas = rng.uniform(0, 1, 25)
    found = [minimize_scalar(lambda x, e=e: e * (1 - x) ** 2 + (1 - e) * x ** 2, bounds=(0, 1),
                             method="bounded", options={"xatol": 1e-12}).x for e in etas]
    rows.append({"K": 2, "scaling": "binary form (63)", "identity error": float("nan"),
                 "min excess / ||q - eta||^2": float("nan"),
                 "max |argmin - eta|": float(np.abs(np.array(found) - etas).max())})
    return pd.DataFrame(rows)


def _focal_risk(q, eta, g: float):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -(1.0 - q) ** g * np.log(q)
        return np.where(eta > 0, eta * terms, 0.0).sum(-1)


def focal_uniqueness(gammas, etas, *, n_starts: int = 8, grid: int = 100001, seed: int = 0) -> pd.DataFrame:
    """App. A.8 Case 2(a): does the expected focal loss ``sum_i eta_i f(q_i)`` have one
    minimiser on the simplex? Per gamma: the smallest ``f''`` and the largest ``f'`` on a
    grid of (0, 1) (``f'' > 0`` makes the risk strictly convex on the face of the classes
    with ``eta_i > 0``; ``f' < 0`` makes any mass on the other classes a loss, so the
    minimiser is unique); and, for the posteriors ``etas`` (rows, zeros allowed), compass
    searches from ``n_starts`` random points: their largest distance to the KKT minimiser and
    the smallest risk excess over it (negative would mean the KKT point is not minimal)."""
    rng = np.random.default_rng(seed)
    etas = np.atleast_2d(np.asarray(etas, float))
    p = np.linspace(0.0, 1.0, grid)[1:-1]
    rows = []
    for g in np.asarray(gammas, float):
        q_star = fcl_risk_minimizer(etas, g, 0.0)
        starts = rng.dirichlet(np.ones(etas.shape[1]), (len(etas), n_starts)).reshape(-1, etas.shape[1])
        eta_rep = np.repeat(etas, n_starts, axis=0)
        found, risk = pattern_search(lambda x, e: _focal_risk(x, e[..., 0, :], g), starts, eta_rep[:, None, :],
                                     step=0.05, tol=1e-12, max_iter=2000)
        rows.append({"gamma": float(g), "min f''": float(focal_curvature(p, g).min()),
                     "max f'": float(-focal_weight(p, g).min()),
                     "max distance to the KKT minimiser": float(np.abs(found - np.repeat(q_star, n_starts, 0)).max()),
                     "min risk excess": float((risk - np.repeat(_focal_risk(q_star, etas, g), n_starts)).min())})
    return pd.DataFrame(rows)


def cross_entropy_gap(k: int = 3, n: int = 2000, *, seed: int = 0) -> float:
    """App. A.8 Case 2(b): the smallest ``(E_eta[-log q] - E_eta[-log eta]) / ||q - eta||_1^2``
    over ``n`` random pairs, with ``E_eta[-log q] - E_eta[-log eta] = KL(eta || q)`` from
    scipy; Pinsker's inequality bounds it below by 1/2, so cross-entropy is strictly proper."""
    rng = np.random.default_rng(seed)
    eta, q = rng.dirichlet(np.ones(k), n), rng.dirichlet(np.ones(k), n)
    kl = entropy(eta, q, axis=1)
    return float((kl / np.abs(q - eta).sum(1) ** 2).min())
