"""Studies behind the focal calibration loss chapter (Liang et al.): Theorem 4.1, Lemma A.3,
the post-processing gap (Def. 2.3, Theorem 4.5) and smCE beside relplot.

Built on the exact FCL risk minimiser (:func:`replicate.theory.fcl.loss.fcl_risk_minimizer`),
the reconstructed Lemma A.3 function and the exact smCE / post-processing gap solvers of
:mod:`replicate.theory.fcl.postprocessing`. Properness (App. A.3, A.7, A.8) is in
:mod:`replicate.theory.fcl.properness`.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .loss import binary_loss, fcl_risk_minimizer, lemma_a3_function, theorem_4_1_sides
from .postprocessing import lipschitz_gap_vanishes, post_processing_gap, smooth_calibration_error

__all__ = ["POPULATIONS", "smce_vs_relplot", "theorem_4_1_study", "lemma_a3_table", "population_task",
           "pgap_study", "literal_pgap_study", "lipschitz_gap_table"]

#: The binary populations of the post-processing study: Beta(a, b) masses of eta.
POPULATIONS = {"symmetric, Beta(2, 2)": (2.0, 2.0), "skewed, Beta(5, 2)": (5.0, 2.0)}


def theorem_4_1_study(n: int, k: int, gamma: float, lams, *, seed: int = 0, brier: str = "sum"):
    """Theorem 4.1 at the FCL minimiser of ``n`` Dirichlet(1) posteriors, per lambda.

    Columns: share of rows where ``|max q - max eta| <= ||q - eta||_inf <= ||q - eta||_2``
    holds, the mean of each side, and the share that is under-confident.
    """
    eta = np.random.default_rng(seed).dirichlet(np.ones(int(k)), size=int(n))
    rows = []
    for lv in lams:
        q = fcl_risk_minimizer(eta, gamma, lv, brier=brier)
        s = theorem_4_1_sides(q, eta)
        rows.append({"lambda": float(lv),
                     "bound holds": float(np.mean((s["gap"] <= s["linf"] + 1e-15)
                                                  & (s["linf"] <= s["l2"] + 1e-15))),
                     "mean |max q* - max eta|": float(s["gap"].mean()),
                     "mean ||q* - eta||_2": float(s["l2"].mean()),
                     "under-confident": float(np.mean(q.max(1) < eta.max(1) - 1e-12))})
    return pd.DataFrame(rows)


def lemma_a3_table(gammas, lams, etas, *, brier: str = "sum", num_classes: int = 2,
                   grid: int = 200001) -> pd.DataFrame:
    """The five properties of Lemma A.3 for the reconstructed ``g``, on a dense grid of p.

    The grid is uniform in the log-odds ``t = log(p / (1-p))`` over [-40, 40], so that both
    ends of (0, 1) are resolved (for ``gamma < 1`` the root can lie within ``1e-6`` of 1).
    Columns: finite on the grid (1), ``g(1e-12)`` (2, the claimed limit is ``+inf``),
    ``g(1 - 1e-12)`` and the limit ``-2 lambda s (1 - eta)`` (3), whether every grid step
    decreases (4), and the root, located by bisection between the ends, with the number of
    sign changes on the grid (5, one root).
    """
    t = np.linspace(-40.0, 40.0, grid)
    p = 1.0 / (1.0 + np.exp(-t))
    p = np.unique(p[(p > 0) & (p < 1)])
    rows = []
    s = 1.0 if brier == "sum" else 1.0 / num_classes
    for g, lv, e in itertools.product(gammas, lams, etas):
        def gf(x):
            return lemma_a3_function(x, e, g, lv, brier=brier, num_classes=num_classes)

        vals = gf(p)
        ends = gf(np.array([1e-12, 1 - 1e-12]))
        lo, hi = 1e-12, 1 - 1e-12
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gf(mid) > 0 else (lo, mid)
        sign = np.sign(vals)
        rows.append({"gamma": float(g), "lambda": float(lv), "eta": float(e),
                     "finite": bool(np.isfinite(vals).all()), "g(1e-12)": float(ends[0]),
                     "g(1 - 1e-12)": float(ends[1]), "claimed limit at 1": -2 * lv * s * (1 - e),
                     "strictly decreasing": bool((np.diff(vals) < 0).all()),
                     "root": 0.5 * (lo + hi),
                     "sign changes": int(np.count_nonzero(np.diff(sign[sign != 0])))})
    return pd.DataFrame(rows)


def population_task(n: int, a: float = 2.0, b: float = 2.0):
    """A binary population: ``eta`` on the midpoints of ``n`` equal cells, mass ~ Beta(a, b).

    Returns ``(eta, mass)``; a predictor is any map of ``eta`` to [0, 1], its labels have
    mean ``eta`` at each support point, so calibration quantities are exact expectations.
    """
    eta = (np.arange(int(n)) + 0.5) / int(n)
    mass = eta ** (a - 1) * (1 - eta) ** (b - 1)
    return eta, mass / mass.sum()


def pgap_study(n: int, gammas, lams, *, brier: str = "sum", populations=None) -> pd.DataFrame:
    """Squared-loss post-processing gap (both families) and smCE of idealised predictors.

    For every population of ``populations`` (name -> Beta ``(a, b)``, default
    :data:`POPULATIONS`) and every (gamma, lambda) the predictor is the pointwise FCL minimiser
    ``q*(eta(x))`` on :func:`population_task` (``lambda = 0``: focal loss). Columns also give
    ``E[f - y]`` (calibration in the large) and whether the 1-Lipschitz gap must vanish by
    :func:`~replicate.theory.fcl.postprocessing.lipschitz_gap_vanishes`.
    """
    rows = []
    for name, (a, b) in (POPULATIONS if populations is None else populations).items():
        eta, mass = population_task(n, a, b)
        for g, lv in itertools.product(gammas, lams):
            f = fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), g, lv, brier=brier)[:, 0]
            rows.append({"population": name, "gamma": float(g), "lambda": float(lv),
                         "pGap (update)": post_processing_gap(f, eta, mass, family="update"),
                         "pGap (1-Lipschitz kappa)": post_processing_gap(f, eta, mass, family="lipschitz"),
                         "smCE": smooth_calibration_error(f, eta, mass),
                         "E[f - y]": float(np.sum(mass * (f - eta))),
                         "E|f - eta|": float(np.sum(mass * np.abs(f - eta))),
                         "zero gap predicted": lipschitz_gap_vanishes(f, eta, mass, tol=1e-12)})
    return pd.DataFrame(rows)


def literal_pgap_study(n: int, gamma: float, lams, *, brier: str = "sum", a: float = 5.0,
                       b: float = 2.0) -> pd.DataFrame:
    """Theorem 4.5 read literally: one predictor, its gap under FCL's loss and under FL's,
    for both post-processing families.

    The predictor is the focal-loss minimiser ``q*_FL(eta)`` on :func:`population_task`
    (default the skewed Beta(5, 2) population), so no post-processing lowers its expected
    focal loss (``pGap_FL = 0``). The FCL gap is computed with the exact convex solver.
    """
    eta, mass = population_task(n, a, b)
    f = fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), gamma, 0.0, brier=brier)[:, 0]
    rows = []
    for family in ("update", "lipschitz"):
        fl = post_processing_gap(f, eta, mass, loss=binary_loss("focal", gamma=gamma), family=family)
        rows += [{"family": family, "lambda": float(lv), "pGap under FL": fl,
                  "pGap under FCL": post_processing_gap(
                      f, eta, mass, loss=binary_loss("fcl", gamma=gamma, lam=lv, brier=brier), family=family)}
                 for lv in lams]
    return pd.DataFrame(rows)


def lipschitz_gap_table(n_random: int, *, n_support: int = 12, seed: int = 0) -> pd.DataFrame:
    """The squared-loss gap over 1-Lipschitz ``kappa`` (BVLS) against the condition of
    :func:`~replicate.theory.fcl.postprocessing.lipschitz_gap_vanishes`, on random predictors
    with ``n_support`` distinct values in [0.25, 0.75]: label means drawn at random, or
    under-confident and calibrated in the large (``ybar = v + d (v - E f)``, ``d`` in
    (0, 1/2): stretched about the mean), and the latter shifted by 0.05. One row each."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(n_random)):
        v, m = np.sort(rng.uniform(0.25, 0.75, n_support)), rng.dirichlet(np.ones(n_support))
        stretched = v + rng.uniform(0.0, 0.5) * (v - np.sum(m * v))
        for kind, yb in [("random label means", rng.uniform(0, 1, n_support)),
                         ("under-confident, calibrated in the large", stretched),
                         ("under-confident, shifted by 0.05", stretched + 0.05)]:
            rows.append({"predictor": kind,
                         "pGap (1-Lipschitz kappa)": post_processing_gap(v, yb, m, family="lipschitz"),
                         "zero gap predicted": lipschitz_gap_vanishes(v, yb, m, tol=1e-12)})
    return pd.DataFrame(rows)


def smce_vs_relplot(n_samples: int, n_support: int, gamma: float, lams, *, seed: int = 0,
                    brier: str = "sum") -> pd.DataFrame:
    """smCE (exact LP) beside relplot's kernel SmoothECE on the same finite samples.

    Samples ``x`` from :func:`population_task`, labels ``y ~ Bernoulli(eta(x))``, and the
    FCL-minimiser predictor for each lambda. The two measures are different quantities
    (relplot's smooths the residuals with a kernel whose width it picks itself); Blasiok &
    Nakkiran relate both to the distance to calibration within constant factors, so we
    compare them side by side and by ranking, not as equal numbers.
    """
    import relplot

    eta, mass = population_task(n_support)
    rng = np.random.default_rng(seed)
    idx = rng.choice(eta.size, size=int(n_samples), p=mass)
    y = (rng.uniform(size=idx.size) < eta[idx]).astype(float)
    rows = []
    for lv in lams:
        f_pop = fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), gamma, lv, brier=brier)[:, 0]
        f = f_pop[idx]
        rows.append({"lambda": float(lv), "smCE (LP, sample)": smooth_calibration_error(f, y),
                     "relplot smECE (sample)": float(relplot.smECE(f, y)),
                     "smCE (population)": smooth_calibration_error(f_pop, eta, mass)})
    return pd.DataFrame(rows)
