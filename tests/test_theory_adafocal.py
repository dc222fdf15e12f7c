"""Tests of replicate.theory.adafocal.dynamics (Ghosh et al. 2022).

Pins every number of notebooks/theory_adafocal.md against independent computations: the
paper's equations written out here (CalFocal Eq. 1, AdaFocal Eq. 3 / Eq. 4, the code rule
as PROTOCOL.md describes it), closed forms of the simulated sequences, and mpmath.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from replicate.theory.adafocal import dynamics as ad

mp.mp.dps = 40
P = np.linspace(0.005, 0.995, 2001)  # the chapter's grid (cpu profile)
I70, I79, I85 = (int(np.searchsorted(P, v)) for v in (0.7, 0.79, 0.85))


def calfocal_mp(p, a, lam):
    """Eq. 1: -(1-p)^gamma log p with gamma = exp(lam (p - a))."""
    p = mp.mpf(p)
    return -(1 - p) ** mp.exp(lam * (p - a)) * mp.log(p)


def eq4(gamma, gap, gmax=20.0):
    """Paper Eq. 4 (Eq. 3 when gmax is inf)."""
    return min(gmax, gamma * math.exp(gap))


def code_rule(gamma, gap, lam=1.0, gmin=-2.0, gmax=20.0, switch=0.2):
    """The authors' code as PROTOCOL.md states it."""
    new = gamma * math.exp(lam * gap) if gamma > 0 else gamma * math.exp(-lam * gap)
    if abs(new) < switch:
        new = -switch if new > 0 else switch
    return min(max(new, gmin), gmax)


# ----------------------------------------------------------------------------- CalFocal
@pytest.mark.parametrize("lam", [1.0, 10.0, 100.0])
def test_calfocal_curve_matches_eq1(lam):
    ours = ad.calfocal_loss_curve(P[::50], 0.8, lam)
    ref = np.array([float(calfocal_mp(p, mp.mpf("0.8"), lam)) for p in P[::50]])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-300)


def test_calfocal_quoted_ratios():
    # chapter: lam = 100: 1.00 of CE at p = 0.7, 5.7e-129 at 0.85; lam = 1: 0.14 at 0.85
    r70 = calfocal_mp(P[I70], mp.mpf("0.8"), 100) / -mp.log(P[I70])
    r85 = calfocal_mp(P[I85], mp.mpf("0.8"), 100) / -mp.log(P[I85])
    r85_1 = calfocal_mp(P[I85], mp.mpf("0.8"), 1) / -mp.log(P[I85])
    c = {lam: ad.calfocal_loss_curve(P[[I70, I85]], 0.8, lam) for lam in (1.0, 100.0)}
    assert c[100.0][0] / -math.log(P[I70]) == pytest.approx(float(r70), rel=1e-10)
    assert c[100.0][1] / -math.log(P[I85]) == pytest.approx(float(r85), rel=1e-8)
    assert c[1.0][1] / -math.log(P[I85]) == pytest.approx(float(r85_1), rel=1e-10)
    assert float(r70) == pytest.approx(1.00, abs=5e-3) and float(r85_1) == pytest.approx(0.14, abs=5e-3)
    assert f"{float(r85):.1e}" == "5.7e-129"


def test_calfocal_slopes():
    a = mp.mpf("0.8")
    s = ad.calfocal_slopes(P[[I79, I85]], 0.8, 100.0)
    for j, i in enumerate((I79, I85)):
        p = mp.mpf(P[i])
        curve = mp.diff(lambda x: calfocal_mp(x, a, 100), p)
        gam = mp.exp(100 * (p - a))
        detached = gam * (1 - p) ** (gam - 1) * mp.log(p) - (1 - p) ** gam / p  # d/dp at fixed gamma
        assert s["curve"][j] == pytest.approx(float(curve), rel=1e-8)
        assert s["detached"][j] == pytest.approx(float(detached), rel=1e-10)
    # chapter: push 0.94 at p = 0.79 (CE 1.27; curve slope 8.59), 9.7e-127 at 0.85
    assert -s["detached"][0] == pytest.approx(0.943, abs=1e-3) and 1 / P[I79] == pytest.approx(1.266, abs=1e-3)
    assert -s["curve"][0] == pytest.approx(8.586, abs=1e-3)
    assert f"{-s['detached'][1]:.1e}" == "9.7e-127"
    with pytest.raises(ValueError, match="lam"):
        ad.calfocal_slopes(0.5, 0.8, -1.0)


def test_calfocal_gamma():
    assert ad.calfocal_gamma(0.1, 10.0) == pytest.approx(math.e)  # chapter: stays 2.72
    assert ad.calfocal_gamma(0.0, 7.0) == 1.0
    with pytest.raises(ValueError, match="gap"):
        ad.calfocal_gamma(1.5, 1.0)


# ----------------------------------------------------------------------------- AdaFocal
def test_scenarios_closed_forms():
    sc = ad.gap_scenarios(60, seed=0)
    assert set(sc) == {"over-confident", "over, then under", "under-confident", "noisy around 0"}
    eq3 = ad.simulate_gamma(sc["over, then under"], 1.0, variant="paper", gamma_max=ad.UNBOUNDED_GAMMA_MAX)
    eq4s = ad.simulate_gamma(sc["over, then under"], 1.0, variant="paper")
    # chapter: Eq. 3 peaks at e^9 = 8103 and ends at e^6 = 403; Eq. 4 ends at 20 e^-3 = 1.00
    assert eq3.max() == pytest.approx(math.exp(9.0), rel=1e-12)
    assert eq3[-1] == pytest.approx(math.exp(6.0), rel=1e-12)
    assert eq4s[-1] == pytest.approx(20 * math.exp(-3.0), rel=1e-12)
    np.testing.assert_allclose(eq3, np.exp(np.r_[0, np.cumsum(sc["over, then under"])]), rtol=1e-13)
    # chapter: persistent -0.1: Eq. 4 decays to e^-6 = 2.5e-3; the code switches at epoch 17
    # (first t with e^(-0.1 t) < 0.2 is t = ceil(10 ln 5) = 17) and ends at -2
    under_p = ad.simulate_gamma(sc["under-confident"], 1.0, variant="paper")
    under_c = ad.simulate_gamma(sc["under-confident"], 1.0, variant="code")
    assert under_p[-1] == pytest.approx(math.exp(-6.0), rel=1e-12)
    assert int(np.argmax(under_c < 0)) == math.ceil(10 * math.log(5)) == 17
    assert under_c[17] == -0.2 and under_c[-1] == -2.0
    over = ad.simulate_gamma(sc["over-confident"], 1.0, variant="paper")
    assert over[-1] == 20.0 and over[29] == pytest.approx(math.exp(2.9))


def test_simulate_gamma_matches_written_out_rules():
    rng = np.random.default_rng(1)
    gaps = np.clip(rng.normal(0.0, 0.2, size=(200, 64)), -1, 1)  # the chapter's random gaps
    paper = ad.simulate_gamma(gaps, 1.0, variant="paper")
    code = ad.simulate_gamma(gaps, 1.0, variant="code")
    ref_p, ref_c = np.ones(64), np.ones(64)
    for t in range(200):
        ref_p = np.array([eq4(g, e) for g, e in zip(ref_p, gaps[t])])
        ref_c = np.array([code_rule(g, e) for g, e in zip(ref_c, gaps[t])])
        np.testing.assert_allclose(paper[t + 1], ref_p, rtol=1e-12)
        np.testing.assert_allclose(code[t + 1], ref_c, rtol=1e-12)
    # chapter claims: Eq. 4 stays in (0, 20]; the code never has |gamma| < 0.2
    assert paper.max() <= 20 and paper.min() > 0
    assert np.abs(code).min() >= 0.2 and code.min() >= -2 and code.max() <= 20


def test_simulate_gamma_empty_bins_and_validation():
    out = ad.simulate_gamma(np.array([[0.1, np.nan], [np.nan, -0.1]]), [1.0, 2.0], variant="paper")
    np.testing.assert_allclose(out, [[1, 2], [math.exp(0.1), 2], [math.exp(0.1), 2 * math.exp(-0.1)]])
    with pytest.raises(ValueError, match="gaps"):
        ad.simulate_gamma([0.5, 2.0])
    with pytest.raises(ValueError, match="epochs"):
        ad.gap_scenarios(1)


# ----------------------------------------------------------------------------- closed loop
A_TRAIN, A_VAL = mp.mpf("0.99"), mp.mpf("0.90")


def _stationarity(q, gam, eta=A_TRAIN):
    """Binary focal risk derivative in q (written out by hand)."""
    dl = lambda x: gam * (1 - x) ** (gam - 1) * mp.log(x) - (1 - x) ** gam / x
    return eta * dl(q) - (1 - eta) * dl(1 - q)


def _q_star(gam):
    return mp.findroot(lambda q: _stationarity(q, gam), (mp.mpf("0.5000001"), A_TRAIN), solver="anderson")


def _response(gam):
    from replicate.theory.focal_loss import focal_risk_minimizer

    return float(focal_risk_minimizer([0.99, 0.01], gam)[0]) - 0.90


def test_closed_loop_fixed_point_and_factors():
    # the gamma at which the binary minimiser equals A_val solves the stationarity at q = 0.9
    g_ref = mp.findroot(lambda gm: _stationarity(A_VAL, gm), (mp.mpf("0.5"), mp.mpf(5)), solver="anderson")
    g_star = ad.fixed_point(_response, 1e-6, 20.0)
    assert g_star == pytest.approx(float(g_ref), rel=1e-10)
    assert g_star == pytest.approx(1.329, abs=5e-4)  # chapter
    # implicit differentiation: dq/dgamma = -F_gamma / F_q at (q = 0.9, gamma*)
    fq = mp.diff(lambda q: _stationarity(q, g_ref), A_VAL)
    fg = mp.diff(lambda gm: _stationarity(A_VAL, gm), g_ref)
    dqdg = -fg / fq
    for lam, quoted in ((1, 0.890), (10, -0.097), (30, -2.29)):
        ref = 1 + lam * g_ref * dqdg
        assert ad.linearised_factor(_response, g_star, lam) == pytest.approx(float(ref), abs=1e-5)
        assert float(ref) == pytest.approx(quoted, abs=5e-3)
    with pytest.raises(ValueError, match="sign"):
        ad.fixed_point(_response, 5.0, 10.0)


def test_closed_loop_trajectories():
    g_ref = 1.3292864097687667  # checked against mpmath in the test above
    # independent loop: Eq. 4 with lam written out, response from mpmath's q*(gamma)
    ref = [1.0]
    for _ in range(100):
        ref.append(min(20.0, ref[-1] * math.exp(float(_q_star(ref[-1]) - A_VAL))))
    ours = ad.simulate_closed_loop(_response, 1.0, 100, lam=1, variant="paper")["gamma"]
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    # chapter: lam = 1 monotone, within 1% after 31 epochs, converged
    assert np.all(np.diff(ref) >= 0) and int(np.argmax(np.abs(np.array(ref) / g_ref - 1) < 0.01)) == 31
    assert abs(ref[-1] / g_ref - 1) < 1e-3
    # lam = 10 oscillates and converges; lam = 30 does not converge (factor < -1)
    l10 = ad.simulate_closed_loop(_response, 1.0, 100, lam=10, variant="paper")["gamma"]
    l30 = ad.simulate_closed_loop(_response, 1.0, 100, lam=30, variant="paper")["gamma"]
    assert np.any(np.diff(np.sign(np.diff(l10[:40]))) != 0) and abs(l10[-1] / g_ref - 1) < 1e-6
    assert abs(l30[-1] / g_ref - 1) > 1e-3 and np.abs(l30[60:] / g_ref - 1).max() > 0.1


def test_toy_response_of_the_claims_module():
    from replicate.theory.adafocal.claims import toy_response

    for gam in (0.5, 1.3292864097687667, 4.0):
        assert toy_response(gam) == pytest.approx(float(_q_star(gam) - A_VAL), abs=1e-12)
    # a better fitted bin needs a larger gamma for a zero gap (chapter exercise)
    g_999 = ad.fixed_point(lambda g: toy_response(g, a_train=0.999), 1e-6, 50.0)
    ref = mp.findroot(lambda gm: _stationarity(A_VAL, gm, eta=mp.mpf("0.999")), (mp.mpf(1), mp.mpf(5)),
                      solver="anderson")
    assert g_999 == pytest.approx(float(ref), rel=1e-9) and g_999 > 1.33


def test_quoted_bound_of_section_3():
    # chapter: L_FL >= KL(q||p) - gamma H(p) for one-hot q, every gamma tried (also < 1)
    rng = np.random.default_rng(4)
    for k in (2, 10):
        pred = rng.dirichlet(np.ones(k), 200)
        y = rng.integers(0, k, 200)
        py = pred[np.arange(200), y]
        for gam in (0.25, 1.0, 5.0):
            fl_loss = -(1 - py) ** gam * np.log(py)
            bound = -np.log(py) + gam * (pred * np.log(pred)).sum(1)
            assert np.all(fl_loss >= bound - 1e-12)
