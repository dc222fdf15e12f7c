"""Studies behind the dual focal loss chapter (Tao et al. 2023): tables the chapter shows.

Every function returns plain numbers or a pandas DataFrame built from the exact
computations of :mod:`replicate.theory.dual_focal` (phi and its key points), of
:func:`replicate.theory.fcl.fcl_risk_minimizer` with ``lam = 0`` (the focal-loss
minimiser, solved from its KKT conditions) and of the brute-force DFL minimiser.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .dual_focal import (
    dfl_stationary_posterior, dual_focal_phi, dual_focal_risk_minimizer, order_report,
    paper_eq9_posterior, phi_argmax, phi_key_points, under_confidence_threshold,
)

__all__ = ["SIZES", "region_grid", "lemma1_check", "binary_tie_threshold", "binary_minimizer_curve",
           "posterior_study", "eq9_check"]

#: Sizes per profile (the chapter scales only its grids and sample counts with the profile).
SIZES = {
    "smoke": dict(n_grid=2001, n_region=12, n_eta=25, n_posteriors=24, resolution=120),
    "cpu": dict(n_grid=20001, n_region=30, n_eta=99, n_posteriors=100, resolution=180),
    "gpu": dict(n_grid=20001, n_region=30, n_eta=99, n_posteriors=100, resolution=180),
    "paper": dict(n_grid=50001, n_region=40, n_eta=199, n_posteriors=150, resolution=240),
}

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
    g = float(gamma)
    if not np.isfinite(g) or g <= 0:
        raise ValueError(f"gamma must be finite and > 0, got {gamma!r}")
    tie = 2.0 ** -g * np.log(2.0)
    lo, hi = 0.5, 1.0 - 1e-12
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _binary_untied_min(mid, g) > tie:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def binary_minimizer_curve(etas, gamma: float, *, resolution: int | None = None) -> pd.DataFrame:
    """``q*_1`` against ``eta_1`` for FL and both DFL readings (binary, brute force for DFL)."""
    from .fcl import fcl_risk_minimizer

    e = np.asarray(etas, dtype=float)
    eta = np.stack([e, 1 - e], -1)
    out = {"eta": e, "FL": fcl_risk_minimizer(eta, gamma, 0.0)[:, 0]}
    for name, ties in zip(LOSSES[1:], ("strict", "limit")):
        out[name] = dual_focal_risk_minimizer(eta, gamma, ties=ties, resolution=resolution)[:, 0]
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
    from .fcl import fcl_risk_minimizer

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
