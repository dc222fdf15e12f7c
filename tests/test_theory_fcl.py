"""Focal calibration loss theory (Liang et al.) and the exact smCE / pGap solvers.

Oracles: direct sums over one-hot labels, scipy SLSQP on the conditional risk, the focal
minimiser of replicate.theory.focal_loss (written separately), mpmath derivatives, closed forms
and dense brute-force grids for the linear / quadratic programmes, and the inequality
smCE^2 <= pGap <= 2 smCE proved by Blasiok et al. for the squared loss.
"""
from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import minimize

import replicate as rp

F = rp.theory.fcl.loss
FS = rp.theory.fcl.study
FP = rp.theory.fcl.properness


def slsqp_minimizer(eta, g, lam, scale):
    """Independent: minimise the conditional risk written from Definition 3.1 by SLSQP."""
    k = len(eta)

    def risk(q):
        return sum(eta[y] * (-(1 - q[y]) ** g * np.log(q[y])
                             + lam * scale * np.sum((q - np.eye(k)[y]) ** 2)) for y in range(k))

    best = None
    for x0 in [np.full(k, 1 / k), eta * 0.9 + 0.1 / k]:
        res = minimize(risk, x0, method="SLSQP", bounds=[(1e-12, 1)] * k,
                       constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        best = res if best is None or res.fun < best.fun else best
    return best.x


def test_conditional_risk_is_the_expectation_over_one_hot_labels():
    rng = np.random.default_rng(0)
    q, eta = rng.dirichlet(np.ones(4), 5), rng.dirichlet(np.ones(4), 5)
    for brier in ("sum", "mean"):
        direct = sum(eta[:, y] * F.fcl_loss(q, np.broadcast_to(np.eye(4)[y], q.shape), 2.0, 0.7, brier=brier)
                     for y in range(4))
        np.testing.assert_allclose(F.fcl_conditional_risk(q, eta, 2.0, 0.7, brier=brier), direct, rtol=1e-13)


@pytest.mark.parametrize("g,lam,brier", [(2.0, 1.0, "sum"), (3.0, 0.5, "sum"), (1.0, 2.0, "mean"),
                                         (0.5, 1.0, "sum"), (5.0, 4.0, "mean")])
def test_minimizer_matches_slsqp(g, lam, brier):
    for eta in [np.array([0.9, 0.1]), np.array([0.6, 0.3, 0.1]), np.array([0.45, 0.35, 0.15, 0.05])]:
        scale = 1.0 if brier == "sum" else 1.0 / len(eta)
        q = F.fcl_risk_minimizer(eta, g, lam, brier=brier)
        np.testing.assert_allclose(q, slsqp_minimizer(eta, g, lam, scale), atol=2e-6)


def test_lambda_zero_is_the_focal_minimizer_and_gamma_zero_is_proper():
    eta = np.random.default_rng(1).dirichlet(np.ones(3), 20)
    np.testing.assert_allclose(F.fcl_risk_minimizer(eta, 2.0, 0.0),
                               rp.theory.focal_loss.focal_risk_minimizer(eta, 2.0), atol=1e-9)
    for lam in (0.0, 1.0, 5.0):   # cross-entropy + Brier: both proper, minimiser is eta
        np.testing.assert_allclose(F.fcl_risk_minimizer(eta, 0.0, lam), eta, atol=1e-12)


def test_binary_minimizer_is_a_stationary_point_but_not_eta():
    g, lam, e = 2.0, 1.0, 0.9
    a = F.fcl_risk_minimizer(np.array([e, 1 - e]), g, lam)[0]

    def r(t):
        return (-e * (1 - t) ** g * mp.log(t) - (1 - e) * t ** g * mp.log(1 - t)
                + lam * 2 * (t - e) ** 2)

    assert abs(float(mp.diff(r, a))) < 1e-9
    assert a == pytest.approx(0.794081, abs=1e-6)          # the chapter's counterexample
    assert float(mp.diff(r, e)) > 0.1                       # eta itself is not stationary


def test_strict_order_preservation_a5():
    eta = np.random.default_rng(2).dirichlet(np.ones(4), 200)
    for g, lam in itertools.product([0.5, 2.0, 5.0], [0.0, 0.5, 3.0]):
        q = F.fcl_risk_minimizer(eta, g, lam)
        assert (np.argsort(q, 1) == np.argsort(eta, 1)).all()


def test_theorem_4_1_sides_by_hand():
    q, eta = np.array([0.5, 0.3, 0.2]), np.array([0.7, 0.2, 0.1])
    s = F.theorem_4_1_sides(q, eta)
    assert s["gap"] == pytest.approx(0.2) and s["linf"] == pytest.approx(0.2)
    assert s["l2"] == pytest.approx(np.sqrt(0.04 + 0.01 + 0.01))


def test_lemma_a3_function_is_minus_the_partial_derivative_of_the_risk():
    eta, g, lam = np.array([0.2, 0.5, 0.3]), 2.5, 0.8
    q = np.array([0.25, 0.45, 0.3])
    for brier, scale in (("sum", 1.0), ("mean", 1 / 3)):
        for i in range(3):
            def part(t, i=i):
                qq = [mp.mpf(x) for x in q]
                qq[i] = t
                return (-eta[i] * (1 - t) ** g * mp.log(t)
                        + lam * scale * sum((qq[j] - eta[j]) ** 2 for j in range(3)))
            ref = -float(mp.diff(part, q[i]))
            got = F.lemma_a3_function(q[i], eta[i], g, lam, brier=brier, num_classes=3)
            assert float(got) == pytest.approx(ref, rel=1e-10)


def test_lemma_a3_table_limits_and_monotonicity():
    tab = FS.lemma_a3_table([0.5, 1.0, 3.0], [0.5, 2.0], [0.1, 0.9], grid=20001)
    assert tab["strictly decreasing"].all() and (tab["sign changes"] == 1).all()
    assert (tab["g(1e-12)"] > 1e9).all()
    np.testing.assert_allclose(tab["g(1 - 1e-12)"], tab["claimed limit at 1"], atol=1e-5)  # ~ (1-p)^gamma


def test_focal_convexity_matches_mpmath_second_derivative():
    tab = FP.focal_convexity([0.5, 2.0, 3.0], grid=101)          # q = 0.01, 0.02, ..., 0.99
    q = np.linspace(0.01, 0.99, 99)
    for g, row in zip([0.5, 2.0, 3.0], tab.itertuples(index=False)):
        fd = np.array([float(mp.diff(lambda t: -(1 - t) ** g * mp.log(t), mp.mpf(x), 2)) for x in q])
        assert fd.min() > 0
        assert row[1] == pytest.approx(fd.min(), rel=1e-9)
        assert row[2] == pytest.approx(q[np.argmin(fd)], abs=1e-12)


# ------------------------------------------------------------------ smCE and pGap
def brute_smce(v, m, yb, steps=201):
    """Dense grid over w in [-1, 1]^n with the Lipschitz constraints (n <= 3), vectorised."""
    w = np.stack(np.meshgrid(*[np.linspace(-1, 1, steps)] * len(v), indexing="ij"), -1).reshape(-1, len(v))
    ok = np.all(np.abs(np.diff(w, axis=1)) <= np.diff(v) + 1e-12, axis=1)
    return float((w[ok] * (m * (yb - v))).sum(1).max())


def test_smce_closed_forms_and_brute_force():
    f = np.array([0.2, 0.5, 0.8])
    assert F.smooth_calibration_error(f, f) == pytest.approx(0.0, abs=1e-12)   # calibrated
    y = f + np.array([0.1, 0.05, 0.1])                                         # one-signed bias
    assert F.smooth_calibration_error(f, y) == pytest.approx(np.mean(y - f), abs=1e-12)
    assert F.smooth_calibration_error([0.3, 0.3], [1, 0]) == pytest.approx(0.2)  # one point
    v, m, yb = np.array([0.3, 0.4, 0.8]), np.array([0.3, 0.3, 0.4]), np.array([0.6, 0.1, 0.9])
    assert F.smooth_calibration_error(v, yb, m) == pytest.approx(brute_smce(v, m, yb, 101), abs=5e-3)
    v, m, yb = np.array([0.3, 0.45]), np.array([0.6, 0.4]), np.array([0.6, 0.1])
    assert F.smooth_calibration_error(v, yb, m) == pytest.approx(brute_smce(v, m, yb, 1001), abs=1e-3)


def brute_pgap(v, m, yb, family, steps=2001):
    """Dense grid over kappa in [0, 1]^n with the family's constraints (n = 2), vectorised."""
    k = np.stack(np.meshgrid(*[np.linspace(0, 1, steps)] * len(v), indexing="ij"), -1).reshape(-1, len(v))
    step = np.diff(k - v if family == "update" else k, axis=1)
    ok = np.all(np.abs(step) <= np.diff(v) + 1e-12, axis=1)
    return float(np.sum(m * (v - yb) ** 2) - (m * (k[ok] - yb) ** 2).sum(1).min())


@pytest.mark.parametrize("family", ["update", "lipschitz"])
def test_pgap_squared_loss_against_brute_force(family):
    v, m, yb = np.array([0.35, 0.5]), np.array([0.5, 0.5]), np.array([0.1, 0.9])
    assert F.post_processing_gap(v, yb, m, family=family) == pytest.approx(brute_pgap(v, m, yb, family), abs=1e-4)
    assert F.post_processing_gap([0.3, 0.3, 0.3], [1, 0, 0]) == pytest.approx((0.3 - 1 / 3) ** 2)


def test_pgap_centred_under_confidence_is_invisible_to_1_lipschitz_kappa_but_a_shift_is_not():
    v, m, yb = np.array([0.4, 0.6]), np.array([0.5, 0.5]), np.array([0.2, 0.8])
    assert F.post_processing_gap(v, yb, m, family="lipschitz") == pytest.approx(0.0, abs=1e-14)
    assert rp.theory.fcl.postprocessing.lipschitz_gap_vanishes(v, yb, m)
    # the same under-confident predictor, outcomes shifted by 0.1: kappa(v) = v - 0.1 is
    # 1-Lipschitz and removes the shift, so the gap is 0.1^2 (brute force over kappa)
    assert F.post_processing_gap(v, yb - 0.1, m, family="lipschitz") == pytest.approx(0.01, abs=1e-12)
    assert brute_pgap(v, m, yb - 0.1, "lipschitz") == pytest.approx(0.01, abs=1e-4)
    assert not rp.theory.fcl.postprocessing.lipschitz_gap_vanishes(v, yb - 0.1, m)
    # update family: kappa = v + u with |u2 - u1| <= 0.2 -> kappa = (0.3, 0.7): the squared
    # error drops from 0.04 to 0.01
    assert F.post_processing_gap(v, yb, m, family="update") == pytest.approx(0.03, abs=1e-12)
    assert F.smooth_calibration_error(v, yb, m) == pytest.approx(0.02, abs=1e-12)


def test_blasiok_inequality_and_two_solvers_agree():
    rng = np.random.default_rng(5)
    sq = F.binary_loss("squared")
    for _ in range(12):
        n = int(rng.integers(2, 25))
        f, y, w = rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.dirichlet(np.ones(n))
        s = F.smooth_calibration_error(f, y, w)
        p = F.post_processing_gap(f, y, w, family="update")
        assert s ** 2 <= p + 1e-12 and p <= 2 * s + 1e-12
        f2 = np.clip(f, 0.01, 0.99)
        for fam in ("update", "lipschitz"):
            assert F.post_processing_gap(f2, y, w, loss=sq, family=fam, eps=0.0) == pytest.approx(
                F.post_processing_gap(f2, y, w, family=fam), abs=1e-7)


def test_literal_theorem_4_5_counterexample_certified_by_an_explicit_map():
    g, lam = 2.0, 1.0
    eta, mass = FS.population_task(30)
    f = F.fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), g, 0.0)[:, 0]
    fl_loss, fcl_loss = F.binary_loss("focal", gamma=g), F.binary_loss("fcl", gamma=g, lam=lam)
    assert F.post_processing_gap(f, eta, mass, loss=fl_loss) == pytest.approx(0.0, abs=1e-12)
    gap, (v, kappa) = F.post_processing_gap(f, eta, mass, loss=fcl_loss, return_map=True)
    assert np.all(np.abs(np.diff(kappa - v)) <= np.diff(v) + 1e-9)          # feasible map
    risk = lambda k: np.sum(mass * (eta * (-(1 - k) ** g * np.log(k) + 2 * lam * (1 - k) ** 2)  # noqa: E731
                                    + (1 - eta) * (-k ** g * np.log(1 - k) + 2 * lam * k ** 2)))
    assert risk(f) - risk(kappa) == pytest.approx(gap, rel=1e-9) and gap > 1e-3


def test_pgap_study_gap_shrinks_with_lambda():
    tab = FS.pgap_study(40, [2.0], [0.0, 0.5, 1.0, 2.0], populations={"symmetric": (2.0, 2.0)})
    assert np.all(np.diff(tab["pGap (update)"]) < 0)
    eta, mass = FS.population_task(40)
    f = F.fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), 2.0, 1.0)[:, 0]
    assert tab["E|f - eta|"].iloc[2] == pytest.approx(np.sum(mass * np.abs(f - eta)))


@pytest.mark.parametrize("call", [
    lambda: F.fcl_risk_minimizer([0.5, 0.5], -1.0, 1.0), lambda: F.fcl_risk_minimizer([0.5, 0.5], 1.0, -1.0),
    lambda: F.fcl_risk_minimizer([0.5, 0.5], 1.0, 1.0, brier="max"),
    lambda: F.fcl_risk_minimizer([0.7, 0.5], 1.0, 1.0),
    lambda: F.post_processing_gap([0.2, 0.3], [0, 1], family="monotone"),
    lambda: F.post_processing_gap([0.2, 1.3], [0, 1]), lambda: F.smooth_calibration_error([0.2], [0, 1]),
    lambda: F.binary_loss("hinge"),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_chapter_counterexamples_against_slsqp():
    # the numbers the chapter quotes: (0.9, 0.1) with the Brier term divided by K, and a 3-class case
    np.testing.assert_allclose(F.fcl_risk_minimizer([0.9, 0.1], 2.0, 1.0, brier="mean"),
                               slsqp_minimizer(np.array([0.9, 0.1]), 2.0, 1.0, 0.5), atol=2e-6)
    np.testing.assert_allclose(F.fcl_risk_minimizer([0.6, 0.3, 0.1], 2.0, 1.0),
                               slsqp_minimizer(np.array([0.6, 0.3, 0.1]), 2.0, 1.0, 1.0), atol=2e-6)


def test_pgap_study_row_against_the_generic_solver():
    tab = FS.pgap_study(30, [2.0], [0.0], populations={"symmetric": (2.0, 2.0)})
    eta, mass = FS.population_task(30)
    f = F.fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), 2.0, 0.0)[:, 0]
    generic = F.post_processing_gap(f, eta, mass, loss=F.binary_loss("squared"), family="update", eps=0.0)
    assert tab["pGap (update)"].iloc[0] == pytest.approx(generic, abs=1e-8)
    s = tab["smCE"].iloc[0]
    assert s ** 2 <= tab["pGap (update)"].iloc[0] <= 2 * s


# ------------------------------------------------ App. A.7 and A.8 Case 2, checked directly
def test_brier_table_against_the_closed_form_risk():
    tab = FP.brier_properness(ks=(2, 4), n=40, seed=3)
    assert (tab["identity error"].dropna() < 1e-14).all()
    for k, scaling, ratio in tab[["K", "scaling", "min excess / ||q - eta||^2"]].dropna().itertuples(index=False):
        assert ratio == pytest.approx(1.0 if scaling == "sum" else 1.0 / k, rel=1e-9)   # excess = s ||q - eta||^2
    assert (tab["max |argmin - eta|"] < 1e-6).all()
    # closed form E ||q - y||^2 = ||q - eta||^2 + 1 - ||eta||^2 (Brier), at the module's summed risk
    rng = np.random.default_rng(0)
    q, eta = rng.dirichlet(np.ones(5), 7), rng.dirichlet(np.ones(5), 7)
    np.testing.assert_allclose(FP._brier_risk(q, eta, 1.0),
                               ((q - eta) ** 2).sum(1) + 1 - (eta ** 2).sum(1), rtol=1e-13)


def test_focal_minimiser_is_unique_and_found_from_every_start():
    etas = np.array([[0.5, 0.3, 0.2], [0.8, 0.2, 0.0]])
    tab = FP.focal_uniqueness([0.5, 2.0], etas, n_starts=4, grid=2001, seed=2)
    assert (tab["min f''"] > 0).all() and (tab["max f'"] < 0).all()
    assert (tab["max distance to the KKT minimiser"] < 1e-6).all() and (tab["min risk excess"] > -1e-12).all()
    np.testing.assert_allclose(F.fcl_risk_minimizer(etas[:1], 2.0, 0.0),
                               rp.theory.focal_loss.focal_risk_minimizer(etas[:1], 2.0), atol=1e-9)


def test_cross_entropy_gap_is_the_relative_entropy_and_obeys_pinsker():
    r = FP.cross_entropy_gap(3, 500, seed=1)
    rng = np.random.default_rng(1)
    eta, q = rng.dirichlet(np.ones(3), 500), rng.dirichlet(np.ones(3), 500)
    kl = (eta * np.log(eta / q)).sum(1)
    assert r == pytest.approx((kl / np.abs(q - eta).sum(1) ** 2).min(), rel=1e-10)
    assert r >= 0.5


# ------------------------------------------------------------ Definition 2.3, precisely
def test_lipschitz_gap_vanishes_exactly_under_the_kkt_condition():
    tab = FS.lipschitz_gap_table(20, seed=4)
    assert ((tab["pGap (1-Lipschitz kappa)"] < 1e-10) == tab["zero gap predicted"]).all()
    assert tab.groupby("predictor")["zero gap predicted"].mean().to_dict() == {
        "random label means": 0.0, "under-confident, calibrated in the large": 1.0,
        "under-confident, shifted by 0.05": 0.0}


def test_skewed_population_focal_optimum_has_a_positive_literal_gap():
    eta, mass = FS.population_task(40, 5.0, 2.0)
    f = F.fcl_risk_minimizer(np.stack([eta, 1 - eta], -1), 2.0, 0.0)[:, 0]
    shift = float(np.sum(mass * (f - eta)))
    assert shift < -0.05                                    # under-confident and shifted down
    # kappa(v) = v - shift is 1-Lipschitz and saves exactly shift^2 of squared error
    gap = F.post_processing_gap(f, eta, mass, family="lipschitz")
    assert gap >= shift ** 2 - 1e-12
    assert np.all(np.abs(f - 0.5) <= np.abs(eta - 0.5) + 1e-12)   # pointwise under-confident
