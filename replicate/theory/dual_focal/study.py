"""Studies behind the dual focal loss chapter (Tao et al. 2023): the tables it shows.

Every function returns plain numbers or a pandas DataFrame built from the exact
computations of :mod:`replicate.theory.dual_focal.loss` (phi and its key points, the exact
stationarity posterior), of :func:`replicate.theory.fcl.loss.fcl_risk_minimizer` with ``lam = 0``
(the focal-loss minimiser, solved from its KKT conditions), of the brute-force DFL minimiser
and, for two classes, of scalar minimisation on each side of the tie.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from ... import checks
from .._simplex import pattern_search
from ..fcl.loss import fcl_risk_minimizer
from .loss import (
                   dfl_stationary_posterior, dual_focal_conditional_risk, dual_focal_phi, dual_focal_risk_minimizer,
                   order_report, paper_eq9_posterior, phi_argmax, phi_key_points, under_confidence_threshold,
                   )

__all__ = ["LOSSES", "region_grid", "lemma1_check", "binary_tie_threshold", "binary_dfl_minimizer",
           "binary_minimizer_curve", "posterior_study", "eq9_check", "lower_risk_witness",
           "over_confidence_study"]

LOSSES = ("FL", "DFL, Eq. 3 (ties strict)", "DFL, tie-free infimum")


def region_grid(gammas, cs) -> pd.DataFrame:
    """``v_m, v', v_uc`` and the region reductions on the grid ``gammas x cs`` (long format)."""
    g, c = np.meshgrid(np.asarray(gammas, float), np.asarray(cs, float), indexing="ij")
    kp = phi_key_points(g.ravel(), c.ravel())
    return pd.DataFrame({k: np.asarray(v).ravel() for k, v in kp.items()})


def lemma1_check(gammas, cs, *, grid: int = 20001) -> pd.DataFrame:
    """Lemma 1 on a grid of v: endpoint values, one rise-then-fall, argmax against ``v_m``."""
    v = np.linspace(0.0, 1.0, grid)
    rows = []
    for g in np.asarray(gammas, float):
        for c in np.asarray(cs, float):
            phi = dual_focal_phi(v, g, c)
            dphi = np.diff(phi)
            sgn = np.sign(dphi[np.abs(dphi) > 1e-15])
            rows.append({"gamma": g, "c": c,
                         "phi(0) - (1+c)^gamma": float(phi[0] - (1 + c) ** g),
                         "phi(1) - c^gamma": float(phi[-1] - c ** g),
                         "rises then falls once": bool(sgn[0] > 0 and np.count_nonzero(np.diff(sgn)) == 1),
                         "|grid argmax - v_m|": float(abs(v[np.argmax(phi)] - phi_argmax(g, c)))})
    return pd.DataFrame(rows)


def _binary_untied_min(eta: float, g: float) -> float:
    """``min_{a in (1/2, 1)} -eta (2-2a)^g log a - (1-eta) a^g log(1-a)`` (grid + golden)."""
    def r(a):
        return -eta * (2 - 2 * a) ** g * np.log(a) - (1 - eta) * a ** g * np.log1p(-a)

    a = np.linspace(0.5, 1.0, 20001)[1:-1]
    i = int(np.argmin(r(a)))
    lo, hi = a[max(i - 1, 0)], a[min(i + 1, a.size - 1)]
    phi = (np.sqrt(5) - 1) / 2
    for _ in range(80):
        x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
        if r(x1) < r(x2):
            hi = x2
        else:
            lo = x1
    return float(r(0.5 * (lo + hi)))


def binary_tie_threshold(gamma: float) -> float:
    """Binary DFL (Eq. 3, ties strict): the ``eta*`` below which the minimiser is (1/2, 1/2).

    On a tie neither class has a probability strictly below its own, so both terms drop
    the dual probability and the risk is ``2^-gamma log 2`` whatever ``eta``. The best
    untied prediction (ordered like ``eta``, ``eta_1 > 1/2``) has risk decreasing in
    ``eta_1``; ``eta*`` is where the two are equal (bisection). For
    ``eta_1 in [1 - eta*, eta*]`` the minimiser does not single out the Bayes class.
    """
    g = checks.gamma(gamma, strict=True)
    tie = 2.0 ** -g * np.log(2.0)
    lo, hi = 0.5, 1.0 - 1e-12
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _binary_untied_min(mid, g) > tie:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _branch_min(r, lo: float, hi: float) -> tuple[float, float]:
    """``(argmin, min)`` of a scalar function on ``(lo, hi)``: a grid picks the basin, then
    scipy's bounded minimiser refines it between the neighbouring grid points."""
    a = np.linspace(lo, hi, 2001)[1:-1]
    i = int(np.argmin(r(a)))
    res = minimize_scalar(r, bounds=(a[max(i - 1, 0)], a[min(i + 1, a.size - 1)]), method="bounded",
                          options={"xatol": 1e-13})
    return (float(res.x), float(res.fun)) if res.fun <= r(a[i]) else (float(a[i]), float(r(a[i])))


def binary_dfl_minimizer(eta1: float, gamma: float, *, ties: str = "strict") -> float:
    """``q*_1`` minimising the binary DFL risk (Eq. 4) at ``eta = (eta1, 1 - eta1)``.

    Independent of the brute-force search: with ``a = q_1``, the risk is
    ``-eta1 (2 - 2a)^g log a - (1 - eta1) a^g log(1 - a)`` for ``a > 1/2`` (class 2 is the
    dual of class 1, nothing lies below class 2) and its mirror image for ``a < 1/2``; each
    branch is minimised by scalar minimisation and compared with the tie ``a = 1/2``, whose
    risk is ``2^-g log 2`` when ties are strict (Eq. 3 literally: neither class has a
    probability strictly below it) and ``(max(eta) 2^-g + min(eta)) log 2`` for the tie-free
    infimum (the smaller one-sided limit). Ties go to the tie.
    """
    g, e = checks.gamma(gamma, strict=True), float(eta1)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"eta1 must lie in [0, 1], got {eta1!r}")
    if ties not in ("strict", "limit"):
        raise ValueError(f"ties must be one of ('strict', 'limit'), got {ties!r}")

    def above(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -e * (2 - 2 * a) ** g * np.log(a) - (1 - e) * a ** g * np.log1p(-a)

    def below(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -e * (1 - a) ** g * np.log(a) - (1 - e) * (2 * a) ** g * np.log1p(-a)

    tie = (2.0 ** -g if ties == "strict" else max(e, 1 - e) * 2.0 ** -g + min(e, 1 - e)) * np.log(2.0)
    cands = [(0.5, tie), _branch_min(above, 0.5, 1.0), _branch_min(below, 0.0, 0.5)]
    return min(cands, key=lambda c: c[1])[0]


def binary_minimizer_curve(etas, gamma: float) -> pd.DataFrame:
    """``q*_1`` against ``eta_1`` for FL (exact KKT) and both DFL readings (scalar search)."""
    e = np.asarray(etas, dtype=float)
    out = {"eta": e, LOSSES[0]: fcl_risk_minimizer(np.stack([e, 1 - e], -1), gamma, 0.0)[:, 0]}
    for name, ties in zip(LOSSES[1:], ("strict", "limit")):
        out[name] = [binary_dfl_minimizer(x, gamma, ties=ties) for x in e]
    return pd.DataFrame(out)


def posterior_study(n: int, k: int, gammas, *, seed: int = 0, resolution: int | None = None):
    """Minimisers of FL and DFL for ``n`` posteriors ``eta ~ Dirichlet(1, ..., 1)`` (K = 2..4).

    Returns ``(summary, details)``. ``summary`` has one row per (gamma, loss) with the rates
    of eta-under-/over-confidence (Eq. 10: ``max q* < max eta`` / ``>``), the mean of
    ``max q* - max eta``, tie and order statistics (:func:`order_report`), and the check of
    the paper's region rule: among minimisers with ``max q* >= v_uc(gamma, C)`` (``C`` the
    second-largest ``q*`` for DFL, 0 for FL), the share that is really under-confident.
    ``details[(gamma, loss)]`` holds the minimisers; ``details["eta"]`` the posteriors.
    """
    eta = np.random.default_rng(seed).dirichlet(np.ones(int(k)), size=int(n))
    details, rows = {"eta": eta}, []
    for g in np.atleast_1d(np.asarray(gammas, dtype=float)):
        qs = {LOSSES[0]: fcl_risk_minimizer(eta, g, 0.0)}
        for name, ties in zip(LOSSES[1:], ("strict", "limit")):
            qs[name] = dual_focal_risk_minimizer(eta, g, ties=ties, resolution=resolution)
        for name, q in qs.items():
            details[(float(g), name)] = q
            gap = q.max(1) - eta.max(1)
            rep = order_report(q, eta)
            c = np.zeros(len(q)) if name == LOSSES[0] else np.sort(q, 1)[:, -2]
            in_region = q.max(1) >= under_confidence_threshold(g, np.minimum(c, 1 - 1e-12))
            rows.append({"gamma": float(g), "loss": name,
                         "under-confident": float(np.mean(gap < -1e-9)),
                         "over-confident": float(np.mean(gap > 1e-9)),
                         "mean max q* - max eta": float(gap.mean()),
                         "top-two tie": float(rep["top_tie"].mean()),
                         "order violated": float(rep["order_violation"].mean()),
                         "Bayes class recovered": float(rep["bayes_recovered"].mean()),
                         "in [v_uc, 1)": int(in_region.sum()),
                         "under-confident in [v_uc, 1)": (float(np.mean(gap[in_region] < -1e-9))
                                                          if in_region.any() else float("nan"))})
    return pd.DataFrame(rows), details


def eq9_check(eta, q, gamma) -> pd.DataFrame:
    """For minimisers ``q`` of posteriors ``eta`` with distinct entries: the posterior that
    the paper's Eq. 9 and the exact stationarity condition recover from ``q``, and errors."""
    eta, q = np.asarray(eta, float), np.asarray(q, float)
    s = np.sort(q, -1)
    ok = (np.diff(s, axis=-1) > 1e-9).all(-1) & (s[:, 0] > 0)
    e9 = paper_eq9_posterior(q[ok], gamma)
    ex = dfl_stationary_posterior(q[ok], gamma)
    return pd.DataFrame({"max eta": eta[ok].max(1), "max q*": q[ok].max(1),
                         "Eq. 9 max eta": e9.max(1), "stationarity max eta": ex.max(1),
                         "Eq. 9 error": np.abs(e9 - eta[ok]).max(1),
                         "stationarity error": np.abs(ex - eta[ok]).max(1)})


def lower_risk_witness(q, eta, g: float):
    """For each row, a prediction with lower tie-free DFL risk than ``q`` at ``eta``, if one
    is found (else NaN): the best transposition of two entries of ``q``, else compass searches
    started from ``q``, from ``q`` rearranged in the order of ``eta``, from ``eta`` and from
    the focal minimiser. A witness proves that ``q`` is not a minimiser."""
    def risk(x, p):
        return dual_focal_conditional_risk(x, p, g, ties="limit")

    q, eta = np.asarray(q, float), np.asarray(eta, float)
    witness = np.full(q.shape, np.nan)
    if len(q) == 0:
        return witness
    r0, k = risk(q, eta) - 1e-13, q.shape[1]
    for i, j in itertools.combinations(range(k), 2):
        swap = np.arange(k)
        swap[[i, j]] = j, i
        hit = np.isnan(witness[:, 0]) & (risk(q[:, swap], eta) < r0)
        witness[hit] = q[hit][:, swap]
    in_eta_order = np.take_along_axis(np.sort(q, 1), np.argsort(np.argsort(eta, 1), 1), 1)
    for start in (q, in_eta_order, eta, fcl_risk_minimizer(eta, g, 0.0)):
        for step in (1e-3, 1e-2):
            todo = np.isnan(witness[:, 0])
            if not todo.any():
                return witness
            x, fx = pattern_search(risk, start[todo], eta[todo], step=step, tol=1e-9, stop_below=r0[todo])
            rows = np.flatnonzero(todo)[fx < r0[todo]]
            witness[rows] = x[fx < r0[todo]]
    return witness


def over_confidence_study(gammas, n: int, *, seed: int = 0) -> pd.DataFrame:
    """Sec. 4.2's over-confident region ``(0, v_m]``: is every minimiser there eta-OC?

    ``max q* >= 1/K``, so the region holds minimisers only when ``K > 1 / v_m``; for each
    gamma we use ``K = ceil(1.25 / v_m(gamma, 0))`` classes.

    - FL: the exact minimisers of ``n`` posteriors ``eta ~ Dirichlet(20, ..., 20)``; the
      share with ``max q* <= v_m(gamma, 0)`` that is over-confident.
    - DFL (tie-free reading): every untied minimiser ``q*`` is a stationary point, and
      :func:`~replicate.theory.dual_focal.loss.dfl_stationary_posterior` gives the one posterior
      for which a given ``q`` is stationary. So we draw ``n`` predictions
      ``q ~ Dirichlet(20, ..., 20)``, keep those with ``max q <= v_m(gamma, C)``
      (``C`` the second-largest ``q``), and for each under-confident one search for a
      prediction of lower risk: if one is found, ``q`` is no minimiser. No under-confident
      stationary point left unbeaten means no under-confident minimiser among them.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for g in np.atleast_1d(np.asarray(gammas, dtype=float)):
        vm0 = float(phi_argmax(g, 0.0))
        k = int(np.ceil(1.25 / vm0))
        eta = rng.dirichlet(np.full(k, 20.0), int(n))
        q = fcl_risk_minimizer(eta, g, 0.0)
        fl_in = q.max(1) <= vm0
        fl_oc = q.max(1) > eta.max(1)
        q = rng.dirichlet(np.full(k, 20.0), int(n))
        q = q[q.max(1) <= phi_argmax(g, np.sort(q, 1)[:, -2])]
        eta = dfl_stationary_posterior(q, g)
        uc = q.max(1) < eta.max(1)
        beaten = ~np.isnan(lower_risk_witness(q[uc], eta[uc], g)[:, 0])
        rows.append({"gamma": float(g), "K": k, "v_m (C = 0)": vm0,
                     "FL minimisers in (0, v_m]": int(fl_in.sum()),
                     "FL: over-confident there": float(fl_oc[fl_in].mean()) if fl_in.any() else float("nan"),
                     "DFL stationary points in (0, v_m]": int(len(q)),
                     "DFL: over-confident there": float(1.0 - uc.mean()) if len(q) else float("nan"),
                     "DFL: under-confident, not minimal": int(beaten.sum()),
                     "DFL: under-confident, unresolved": int((~beaten).sum())})
    return pd.DataFrame(rows)
