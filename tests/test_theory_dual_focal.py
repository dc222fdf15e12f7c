"""Dual focal loss theory (Tao et al. 2023) against independent computations.

Oracles: mpmath (high-precision derivatives, root finding, Lambert W), closed forms at
gamma = 1, scipy's bounded scalar minimiser and SLSQP, and a finer plain lattice over the
simplex that shares no code with the module's search.
"""
from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import brentq, minimize, minimize_scalar

import replicate as rp

d = rp.theory.dual_focal.loss
ds = rp.theory.dual_focal.study
mp.mp.dps = 40


def mp_phi(v, g, c):
    """phi as minus v times the derivative of the per-class DFL term with C held fixed."""
    return -v * mp.diff(lambda t: -(1 - t + c) ** g * mp.log(t), v)


# ---------------------------------------------------------------- phi and Lemma 1
@pytest.mark.parametrize("v,g,c", [(0.1, 1.0, 0.3), (0.37, 2.0, 0.0), (0.8, 0.5, 0.2),
                                   (0.95, 3.0, 0.45), (0.02, 5.0, 0.1)])
def test_phi_is_minus_v_times_the_derivative_of_the_dfl_term(v, g, c):
    assert float(d.dual_focal_phi(v, g, c)) == pytest.approx(float(mp_phi(mp.mpf(v), g, c)), rel=1e-12)


def test_phi_endpoints_lemma_1():
    g = np.array([0.5, 1.0, 2.0, 4.0])[:, None]
    c = np.array([0.0, 0.2, 0.6])[None, :]
    np.testing.assert_allclose(d.dual_focal_phi(0.0, g, c), (1 + c) ** g, rtol=1e-14)
    np.testing.assert_allclose(d.dual_focal_phi(1.0, g, c), c ** g, rtol=1e-14, atol=0)


@pytest.mark.parametrize("v,g,c", [(0.2, 2.0, 0.3), (0.7, 0.5, 0.0), (0.9, 3.5, 0.1)])
def test_phi_derivative_eq25_matches_mpmath(v, g, c):
    phi = lambda t: (1 - t + c) ** g - g * (1 - t + c) ** (g - 1) * t * mp.log(t)  # noqa: E731
    assert float(d.dual_focal_phi_derivative(v, g, c)) == pytest.approx(float(mp.diff(phi, v)), rel=1e-10)


def test_phi_is_unimodal_on_a_grid():
    v = np.linspace(1e-6, 1 - 1e-6, 20001)
    for g, c in itertools.product([0.3, 0.5, 1, 2, 3, 5, 8], [0.0, 0.05, 0.3, 0.6, 0.9]):
        dphi = np.diff(d.dual_focal_phi(v, g, c))
        signs = np.sign(dphi[np.abs(dphi) > 1e-15])
        assert np.count_nonzero(np.diff(signs)) == 1 and signs[0] > 0, (g, c)
        assert abs(v[np.argmax(d.dual_focal_phi(v, g, c))] - d.phi_argmax(g, c)) < 1e-4


# ------------------------------------------------------------- Fig. 1 closed forms
@pytest.mark.parametrize("c", [0.0, 0.1, 0.3, 0.5])
def test_gamma_one_closed_forms(c):
    # gamma = 1: phi = 1 - v + C - v log v, phi' = -2 - log v, so v_m = e^-2, v' = 1/e,
    # and v_uc solves v (1 + log v) = C, i.e. v_uc = C / W(C e) (v_uc = 1/e at C = 0).
    kp = d.phi_key_points(1.0, c)
    assert float(kp["v_m"]) == pytest.approx(float(mp.exp(-2)), abs=1e-14)
    assert float(kp["phi_max"]) == pytest.approx(1 + c + float(mp.exp(-2)), abs=1e-13)
    assert float(kp["v_prime"]) == pytest.approx(float(1 / mp.e), abs=1e-13)
    vuc = 1 / mp.e if c == 0 else c / mp.lambertw(c * mp.e)
    assert float(kp["v_uc"]) == pytest.approx(float(mp.re(vuc)), abs=1e-13)


@pytest.mark.parametrize("g,c", [(0.5, 0.0), (2.0, 0.0), (2.0, 0.3), (3.0, 0.1), (5.0, 0.5)])
def test_key_points_match_mpmath_roots(g, c):
    phi = lambda t: (1 - t + c) ** g - g * (1 - t + c) ** (g - 1) * t * mp.log(t)  # noqa: E731
    vm = mp.findroot(lambda t: mp.diff(phi, t), (mp.mpf("1e-6"), mp.mpf("0.999")), solver="anderson")
    vuc = mp.findroot(lambda t: phi(t) - 1, (vm, mp.mpf(1) - mp.mpf("1e-30")), solver="anderson")
    vp = mp.findroot(lambda t: phi(t) - (1 + c) ** g, (vm, mp.mpf(1) - mp.mpf("1e-30")),
                     solver="anderson")
    kp = d.phi_key_points(g, c)
    assert float(kp["v_m"]) == pytest.approx(float(vm), abs=1e-11)
    assert float(kp["v_uc"]) == pytest.approx(float(vuc), abs=1e-11)
    assert float(kp["v_prime"]) == pytest.approx(float(vp), abs=1e-11)
    assert float(d.under_confidence_threshold(g, c)) == pytest.approx(float(vuc), abs=1e-11)


def test_dfl_region_is_smaller_than_focal_region_and_papers_formula_differs_off_gamma_one():
    tab = ds.region_grid([0.5, 1.0, 2.0, 3.0, 5.0], [0.1, 0.3, 0.5])
    assert (tab["v_uc"] > tab["v_uc_focal"]).all()
    one = tab[tab.gamma == 1.0]
    np.testing.assert_allclose(one["reduction_paper"], one["reduction_vs_focal"], atol=1e-12)
    # off gamma = 1, v'(C) of DFL is not the focal v_uc: mpmath at gamma = 2, C = 0.3
    phi = lambda t, c: (1 - t + c) ** 2 - 2 * (1 - t + c) * t * mp.log(t)  # noqa: E731
    vp = mp.findroot(lambda t: phi(t, 0.3) - mp.mpf("1.3") ** 2, (0.2, 0.99), solver="anderson")
    vuc0 = mp.findroot(lambda t: phi(t, 0) - 1, (0.2, 0.99), solver="anderson")
    row = tab[(tab.gamma == 2.0) & np.isclose(tab.c, 0.3)].iloc[0]
    assert row["v_prime"] == pytest.approx(float(vp), abs=1e-11)
    assert row["v_uc_focal"] == pytest.approx(float(vuc0), abs=1e-11)


# ----------------------------------------------------------------- conditional risks
def test_risks_by_hand():
    q, eta = np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.3, 0.1])
    g = 2.0
    by_hand = -(0.6 * (1 - 0.5 + 0.3) ** g * np.log(0.5) + 0.3 * (1 - 0.3 + 0.2) ** g * np.log(0.3)
                + 0.1 * (1 - 0.2) ** g * np.log(0.2))
    assert d.dual_focal_conditional_risk(q, eta, g) == pytest.approx(by_hand, rel=1e-14)
    fl = -np.sum(eta * (1 - q) ** g * np.log(q))
    assert d.focal_conditional_risk(q, eta, g) == pytest.approx(fl, rel=1e-14)
    # a tie under the two conventions: (0.4, 0.4, 0.2), eta = (0.3, 0.5, 0.2)
    q, eta = np.array([0.4, 0.4, 0.2]), np.array([0.3, 0.5, 0.2])
    low = (1 - 0.4 + 0.2) ** g * -np.log(0.4)
    strict = 0.8 * low + 0.2 * (0.8 ** g) * -np.log(0.2)
    limit = 0.3 * -np.log(0.4) + 0.5 * low + 0.2 * (0.8 ** g) * -np.log(0.2)
    assert d.dual_focal_conditional_risk(q, eta, g, ties="strict") == pytest.approx(strict, rel=1e-14)
    assert d.dual_focal_conditional_risk(q, eta, g, ties="limit") == pytest.approx(limit, rel=1e-14)


def _r_plus(a, e, g):
    return -e * (2 - 2 * a) ** g * np.log(a) - (1 - e) * a ** g * np.log1p(-a)


@pytest.mark.parametrize("g", [1.0, 2.0, 3.0])
def test_binary_tie_threshold_against_scipy(g):
    def untied(e):
        return minimize_scalar(lambda a: _r_plus(a, e, g), bounds=(0.5, 1 - 1e-12), method="bounded",
                               options={"xatol": 1e-13}).fun

    ref = brentq(lambda e: untied(e) - 2.0 ** -g * np.log(2), 0.5 + 1e-9, 1 - 1e-9, xtol=1e-13)
    assert ds.binary_tie_threshold(g) == pytest.approx(ref, abs=1e-7)


def test_binary_dfl_minimiser_strict_ties_then_untied_optimum():
    g = 2.0
    q = d.dual_focal_risk_minimizer(np.array([[0.8, 0.2], [0.95, 0.05]]), g, ties="strict")
    np.testing.assert_array_equal(q[0], [0.5, 0.5])
    ref = minimize_scalar(lambda a: _r_plus(a, 0.95, g), bounds=(0.5, 1 - 1e-12), method="bounded",
                          options={"xatol": 1e-12}).x
    assert q[1, 0] == pytest.approx(ref, abs=1e-7)


def _lattice_min(risk, eta, n=600):
    a = np.arange(n + 1) / n
    q1, q2 = np.meshgrid(a, a, indexing="ij")
    grid = np.stack([q1, q2, 1 - q1 - q2], -1).reshape(-1, 3)
    grid = grid[grid[:, 2] >= -1e-12].clip(0, 1)
    return risk(grid, eta).min()


@pytest.mark.parametrize("ties", ["strict", "limit"])
def test_three_class_minimiser_beats_an_independent_fine_lattice(ties):
    g = 2.0
    eta = np.random.default_rng(7).dirichlet(np.ones(3), size=6)
    q = d.dual_focal_risk_minimizer(eta, g, ties=ties)
    for e, qq in zip(eta, q):
        risk = lambda grid, e=e: d.dual_focal_conditional_risk(grid, np.broadcast_to(e, grid.shape), g, ties=ties)  # noqa: E731
        assert d.dual_focal_conditional_risk(qq, e, g, ties=ties) <= _lattice_min(risk, e) + 1e-12


def test_stationary_posterior_zeroes_the_projected_gradient():
    rng = np.random.default_rng(3)
    for k in (2, 3, 4):
        q = rng.dirichlet(np.ones(k))
        eta = d.dfl_stationary_posterior(q, 2.5)
        grad = [float(mp.diff(lambda t, i=i: -eta[i] * (1 - t + _c(q, i)) ** 2.5 * mp.log(t), q[i]))
                for i in range(k)]
        # q_i also enters, as the dual probability, the term of the class just above it
        for i in range(k):
            above = [j for j in range(k) if q[j] > q[i] and _c(q, j) == q[i]]
            for j in above:
                grad[i] += float(mp.diff(lambda t, j=j: -eta[j] * (1 - q[j] + t) ** 2.5 * mp.log(q[j]), q[i]))
        assert np.ptp(grad) < 1e-9 * np.abs(grad).max()


def _c(q, i):
    lower = q[q < q[i]]
    return lower.max() if lower.size else 0.0


def test_untied_dfl_minimisers_satisfy_exact_stationarity_not_eq9():
    g = 2.0
    e = np.array([[0.9, 0.1], [0.95, 0.05]])
    q = d.dual_focal_risk_minimizer(e, g, ties="strict")
    np.testing.assert_allclose(d.dfl_stationary_posterior(q, g), e, atol=1e-7)
    # Eq. 9 by hand for K = 2: phi = 1 for the dual class, phi_C for the top class
    c = q[:, 1]
    phi = (1 - q[:, 0] + c) ** g - g * (1 - q[:, 0] + c) ** (g - 1) * q[:, 0] * np.log(q[:, 0])
    h = np.stack([q[:, 0] / phi, q[:, 1]], -1)
    eq9 = h / h.sum(1, keepdims=True)
    np.testing.assert_allclose(d.paper_eq9_posterior(q, g), eq9, rtol=1e-12)
    assert np.abs(eq9 - e).max() > 1e-3


def test_theorem1_counterexample_under_tie_free_infimum():
    g = 2.0
    eta = np.array([0.15865, 0.1779, 0.66345])
    eta = eta / eta.sum()
    q = d.dual_focal_risk_minimizer(eta[None], g, ties="limit")[0]
    assert q[0] > q[1] and eta[0] < eta[1]                       # order reversed
    best = np.inf
    o = np.argsort(-eta)

    def r(x):                                                   # risk on the eta-ordered region
        return float(np.sum(-eta[o] * (1 - x + np.r_[x[1:], 0]) ** g * np.log(x)))

    cons = [{"type": "eq", "fun": lambda x: x.sum() - 1},
            {"type": "ineq", "fun": lambda x: x[:-1] - x[1:]}]
    for x0 in np.random.default_rng(0).dirichlet(np.ones(3), 30):
        res = minimize(r, np.sort(x0)[::-1], method="SLSQP", bounds=[(1e-9, 1)] * 3, constraints=cons,
                       options={"ftol": 1e-15, "maxiter": 1000})
        best = min(best, res.fun)
    assert d.dual_focal_conditional_risk(q, eta, g, ties="limit") < best - 1e-4
    restricted = d.dual_focal_risk_minimizer(eta[None], g, ties="limit", same_order=True)[0]
    assert d.dual_focal_conditional_risk(restricted, eta, g, ties="limit") == pytest.approx(best, abs=1e-9)


def test_posterior_study_rows_are_consistent_with_the_minimisers():
    summary, det = ds.posterior_study(12, 3, [2.0], seed=1, resolution=120)
    eta = det["eta"]
    for _, row in summary.iterrows():
        q = det[(2.0, row["loss"])]
        gap = q.max(1) - eta.max(1)
        assert row["under-confident"] == pytest.approx(np.mean(gap < -1e-9))
    fl = det[(2.0, "FL")]
    np.testing.assert_allclose(fl, rp.theory.focal_loss.focal_risk_minimizer(eta, 2.0), atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda: d.dual_focal_phi(0.5, 0.0, 0.1), lambda: d.dual_focal_phi(0.5, 1.0, 1.0),
    lambda: d.dual_focal_phi(1.5, 1.0, 0.1), lambda: d.under_confidence_threshold(-1.0),
    lambda: d.dual_focal_conditional_risk([0.5, 0.5], [0.5, 0.5], 1.0, ties="nearest"),
    lambda: d.phi_level_crossing(5.0, 1.0, 0.0), lambda: d.dfl_stationary_posterior([0.5, 0.5], 1.0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_largest_gap_between_papers_reduction_and_focal_reduction_matches_mpmath():
    gam, cs = np.linspace(0.25, 6, 12), np.linspace(0.0, 0.9, 12)
    tab = ds.region_grid(gam, cs)
    diff = (tab["reduction_paper"] - tab["reduction_vs_focal"]).abs()
    row = tab.loc[diff.idxmax()]
    g, c = row["gamma"], row["c"]
    phi = lambda t, cc: (1 - t + cc) ** g - g * (1 - t + cc) ** (g - 1) * t * mp.log(t)  # noqa: E731
    vm = float(row["v_m"])
    vp = mp.findroot(lambda t: phi(t, c) - (1 + c) ** g, (vm, 1 - 1e-15), solver="anderson")
    vm0 = float(d.phi_argmax(g, 0.0))
    vuc0 = mp.findroot(lambda t: phi(t, 0) - 1, (vm0, 1 - 1e-15), solver="anderson")
    assert diff.max() == pytest.approx(abs(float(vp) - float(vuc0)), abs=1e-10)


# ------------------------------------------------- two classes, both readings of the ties
@pytest.mark.parametrize("ties", ["strict", "limit"])
@pytest.mark.parametrize("g", [1.0, 2.0])
def test_binary_scalar_minimiser_agrees_with_the_brute_force_search(ties, g):
    etas = np.array([0.52, 0.6, 0.75, 0.9, 0.97, 0.3])
    brute = d.dual_focal_risk_minimizer(np.stack([etas, 1 - etas], -1), g, ties=ties)[:, 0]
    scalar = np.array([ds.binary_dfl_minimizer(e, g, ties=ties) for e in etas])
    risk = [d.dual_focal_conditional_risk(np.array([a, 1 - a]), np.array([e, 1 - e]), g, ties=ties)
            for a, e in zip(scalar, etas)]
    best = [d.dual_focal_conditional_risk(np.array([a, 1 - a]), np.array([e, 1 - e]), g, ties=ties)
            for a, e in zip(brute, etas)]
    np.testing.assert_allclose(risk, best, atol=1e-10)
    np.testing.assert_allclose(scalar, brute, atol=1e-6)


def test_binary_theorem1_tie_free_keeps_the_order_and_literal_ties_do_not():
    for g in (1.0, 2.0):
        thr = ds.binary_tie_threshold(g)
        assert thr > 0.7
        assert ds.binary_dfl_minimizer(0.5 + (thr - 0.5) / 2, g, ties="strict") == 0.5
        for e in (0.505, 0.6, thr - 0.01, 0.95):
            assert ds.binary_dfl_minimizer(e, g, ties="limit") > 0.5       # Bayes class on top
            assert ds.binary_dfl_minimizer(1 - e, g, ties="limit") < 0.5


# ------------------------------------------- the over-confident region (0, v_m], Sec. 4.2
def _risk_by_hand(q, eta, g):
    """Tie-free DFL risk of an untied q, written from Eq. 3 directly."""
    out = 0.0
    for i in range(len(q)):
        below = q[q < q[i]]
        out += -eta[i] * (1 - q[i] + (below.max() if below.size else 0.0)) ** g * np.log(q[i])
    return out


def test_lower_risk_witnesses_really_lower_the_risk():
    g, k = 1.0, 10
    q = np.random.default_rng(3).dirichlet(np.full(k, 20.0), 400)
    q = q[q.max(1) <= d.phi_argmax(g, np.sort(q, 1)[:, -2])]
    eta = d.dfl_stationary_posterior(q, g)
    uc = q.max(1) < eta.max(1)
    assert uc.sum() >= 1
    wit = ds.lower_risk_witness(q[uc], eta[uc], g)
    for qq, e, w in zip(q[uc], eta[uc], wit):
        assert not np.isnan(w).any()
        assert _risk_by_hand(w, e, g) < _risk_by_hand(qq, e, g)


def test_over_confidence_study_focal_rows_match_the_focal_minimiser():
    tab = ds.over_confidence_study([1.0], 200, seed=4)
    assert tab["K"].iloc[0] == int(np.ceil(1.25 / np.exp(-2)))         # v_m = e^-2 at gamma = 1
    eta = np.random.default_rng(4).dirichlet(np.full(tab["K"].iloc[0], 20.0), 200)
    q = rp.theory.focal_loss.focal_risk_minimizer(eta, 1.0)
    inside = q.max(1) <= np.exp(-2)
    assert tab["FL minimisers in (0, v_m]"].iloc[0] == inside.sum()
    assert tab["FL: over-confident there"].iloc[0] == pytest.approx(np.mean(q.max(1)[inside] > eta.max(1)[inside]))


# ------------------------------------------------- App. A and B, against mpmath derivatives
def _u(v, g, c):
    return (1 - v + c) ** 2 + 2 * g * v * (1 - v + c) + g * v ** 2 * mp.log(v)


@pytest.mark.parametrize("g,c", [(0.3, 0.2), (0.7, 0.6), (0.5, 0.0)])
def test_eq21_printed_derivatives_against_mpmath(g, c):
    du1 = mp.diff(lambda t: _u(t, g, c), 1)
    assert float(du1) == pytest.approx(-g - 2 * c * (1 - g), rel=1e-13)      # corrected value
    assert (abs(float(du1) + g) > 1e-3) == (c > 0)                            # printed -gamma only at C = 0
    du0 = mp.diff(lambda t: _u(t, g, c), mp.mpf("1e-30"))
    assert float(du0) == pytest.approx(2 * (g - 1) + 2 * c * (g - 1), rel=1e-12)
    v = mp.mpf("0.37")
    assert float(mp.diff(lambda t: _u(t, g, c), v, 2)) == pytest.approx(float(2 - g + 2 * g * mp.log(v)), rel=1e-15)
    assert float(mp.diff(lambda t: _u(t, g, c), v, 3)) == pytest.approx(float(2 * g / v), rel=1e-12)


def test_appendix_table_flags_exactly_the_misprint_and_the_eq14_inconsistency():
    tab = rp.theory.dual_focal.proofs.appendix_checks(n_points=4).set_index("key")
    assert set(tab.index[~tab["agrees"]]) == {"eq21_v1", "eq14_j"}
    assert tab.loc["eq21_v1", "correction agrees"]
    f = rp.theory.dual_focal.proofs.as_function("eq21_v1", "derived")
    g, c = 0.4, 0.3
    assert f(1.0, g, c) == pytest.approx(float(mp.diff(lambda t: _u(t, g, c), 1)), abs=1e-14)
