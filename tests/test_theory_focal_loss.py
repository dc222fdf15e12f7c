"""Tests of replicate.theory.focal_loss and .linear_experiment (Mukhoti et al. 2020).

Every number quoted in notebooks/theory_focal_loss.md is pinned here against an
independent computation: mpmath at high precision (closed forms, root finding on the
defining equations), per-sample autograd loops with the losses module, scipy/sklearn
optimisers on the raw objectives.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import torch
from scipy.optimize import brentq, minimize, minimize_scalar

import replicate as rp
from replicate.theory import focal_loss as fl
from replicate.theory.focal_loss import linear_experiment as lin

mp.mp.dps = 40


def g_mp(p, gamma):
    """g(p, gamma) exactly as printed in Prop. 1 (README formula), in mpmath."""
    p, gamma = mp.mpf(p), mp.mpf(gamma)
    return (1 - p) ** gamma - gamma * p * (1 - p) ** (gamma - 1) * mp.log(p)


def crossing_mp(gamma):
    """p0 in (0, 1/2) with g(p0, gamma) = 1, by mpmath bisection-safe root finding."""
    return mp.findroot(lambda p: g_mp(p, gamma) - 1, (mp.mpf("1e-6"), mp.mpf("0.4999999")),
                       solver="anderson")


def gamma_star_mp(p0):
    """Positive root in gamma of g(p0, gamma) = 1 (mpmath, from a bracket)."""
    f = lambda gam: (gam - 1) * mp.log(1 - mp.mpf(p0)) + mp.log(1 - mp.mpf(p0) - gam * mp.mpf(p0) * mp.log(p0))
    hi = mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    lo = hi / 2
    while f(lo) < 0:  # f > 0 between the trivial root 0 and gamma*
        lo /= 2
    return mp.findroot(f, (lo, hi), solver="illinois")


# ----------------------------------------------------------------------------- g(p, gamma)
def test_gradient_factor_matches_mpmath_and_limits():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 200)
    gam = rng.uniform(0, 10, 200)
    ours = fl.focal_gradient_factor(p, gam)
    ref = np.array([float(g_mp(a, b)) for a, b in zip(p, gam)])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-15)
    assert fl.focal_gradient_factor(0.0, 3.0) == 1.0 and fl.focal_gradient_factor(1.0, 3.0) == 0.0
    assert np.all(fl.focal_gradient_factor(np.linspace(0, 1, 11), 0.0) == 1.0)
    assert fl.focal_gradient_factor(1.0, 0.5) == 0.0  # (1-p)^(gamma-1) blows up, g does not
    assert np.all(ours >= 0)  # chapter: min g = 0 (g >= 0 everywhere)


def test_gradient_factor_rejects_bad_input():
    with pytest.raises(ValueError, match="p must"):
        fl.focal_gradient_factor(1.2, 1.0)
    with pytest.raises(ValueError, match="gamma must"):
        fl.focal_gradient_factor(0.5, -1.0)


def test_quoted_values_of_g():
    # chapter: g(0.5, 7) = 0.046 ("nearly 0"); g(0.19, 5) = 1.028
    assert float(fl.focal_gradient_factor(0.5, 7)) == pytest.approx(float(g_mp("0.5", 7)), rel=1e-13)
    assert float(g_mp("0.5", 7)) == pytest.approx(0.0457, abs=1e-4)
    assert float(fl.focal_gradient_factor(0.19, 5)) == pytest.approx(float(g_mp("0.19", 5)), rel=1e-13)
    assert float(g_mp("0.19", 5)) == pytest.approx(1.028, abs=5e-4)


def test_steepest_slope_of_g():
    # chapter: steepest descent of g is 2.00 for gamma = 1 (g' = -2 - log p, at p = 1) and
    # 5.58 for gamma = 7, from the paper's Eq. 7 derivative, maximised independently
    def dg(p, gam):  # Eq. 7
        return gam * (1 - p) ** (gam - 2) * (-2 * (1 - p) - (1 - p) * math.log(p) + (gam - 1) * p * math.log(p))

    r = minimize_scalar(lambda p: dg(p, 7), bounds=(0.01, 0.99), method="bounded", options={"xatol": 1e-10})
    grid = np.linspace(0, 1, 2001)  # the chapter's finite-difference estimate on its grid
    fd7 = -np.diff(fl.focal_gradient_factor(grid, 7)).min() / (grid[1] - grid[0])
    fd1 = -np.diff(fl.focal_gradient_factor(grid, 1)).min() / (grid[1] - grid[0])
    assert fd7 == pytest.approx(-r.fun, abs=2e-3) and -r.fun == pytest.approx(5.58, abs=5e-3)
    assert fd1 == pytest.approx(2.0, abs=5e-3)
    # the Eq. 7 derivative agrees with mpmath differentiation of g
    for p in (0.1, 0.4, 0.8):
        assert dg(p, 3.5) == pytest.approx(float(mp.diff(lambda x: g_mp(x, 3.5), p)), rel=1e-10)


def test_k_is_decreasing():
    # App. B Eq. 9: k'(p) = -2 (log p + (1-p)/p) / log(p)^2 - gamma < 0 on (0, 1)
    p = np.linspace(1e-6, 1 - 1e-6, 10001)
    for gam in (0.0, 0.5, 3.0, 10.0):
        assert np.all(-2 * (np.log(p) + (1 - p) / p) / np.log(p) ** 2 - gam < 0)


# ----------------------------------------------------------------------------- Prop. 2
def test_lambert_w_gamma_against_mpmath_root():
    p0 = np.linspace(0.005, 0.495, 40)
    ours = fl.lambert_w_gamma(p0)
    ref = np.array([float(gamma_star_mp(v)) for v in p0])
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    assert np.all(np.abs(fl.focal_gradient_factor(p0, ours) - 1) < 1e-10)
    # the Brent reference used by the chapter agrees too
    np.testing.assert_allclose(fl.lambert_w_gamma_rootfind(p0), ref, rtol=1e-10)


def test_lambert_w_gamma_next_to_one_half_and_tiny_p0():
    # scipy's W_-1 alone is off near the branch point (it halves gamma* at p0 = 0.49999)
    for p0 in (0.4999, 0.49999, 0.499999, 0.4999999):
        assert abs(float(fl.lambert_w_gamma(p0)) - float(gamma_star_mp(p0))) < 2e-9
    for p0 in (1e-4, 1e-8, 1e-12):
        assert float(fl.lambert_w_gamma(p0)) == pytest.approx(float(gamma_star_mp(p0)), rel=1e-12)


def test_lambert_w_gamma_quoted_values_and_nan():
    # chapter: gamma*(0.19) = 5.34, gamma*(0.2) = 4.85, gamma*(0.25) = 3.07, gamma*(0.49) = 0.052
    for p0, quoted in ((0.19, 5.34), (0.2, 4.85), (0.25, 3.07), (0.49, 0.052)):
        ref = float(gamma_star_mp(p0))
        assert float(fl.lambert_w_gamma(p0)) == pytest.approx(ref, rel=1e-9)
        assert ref == pytest.approx(quoted, abs=5e-3 if quoted > 1 else 5e-4)
    out = fl.lambert_w_gamma([0.5, 0.7, 0.3])
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] > 0
    with pytest.raises(ValueError, match="p0"):
        fl.lambert_w_gamma(0.0)


def test_lambert_branches_with_mpmath():
    # chapter: W0 gives the trivial root 0 for p0 < 1/2; for p0 > 1/2 W_-1 gives 0 and
    # W0 a negative gamma, down to -1.00 at p0 = 0.999 (the grid 1 - linspace(0.001, 0.499))
    def branch(p0, k):
        p0 = mp.mpf(p0)
        a, b = 1 - p0, p0 * mp.log(p0)
        z = -(a ** (1 - a / b) / b) * mp.log(a)
        return a / b + mp.re(mp.lambertw(z, k)) / mp.log(a)

    for p0 in (0.05, 0.2, 0.45):
        low, princ = fl.lambert_w_gamma_branches(p0)
        assert abs(float(branch(p0, 0))) < 1e-30 and abs(princ) < 1e-12
        assert low == pytest.approx(float(branch(p0, -1)), rel=1e-10)
    for p0 in (0.6, 0.9, 0.999):
        low, princ = fl.lambert_w_gamma_branches(p0)
        assert abs(float(branch(p0, -1))) < 1e-30 and abs(low) < 1e-12
        assert princ == pytest.approx(float(branch(p0, 0)), rel=1e-9) and princ < 0
    assert float(branch("0.999", 0)) == pytest.approx(-1.00, abs=5e-3)


def test_gradient_threshold_quoted_values():
    # chapter: crossings 0.197 (gamma 5), 0.253 (3), 0.298 (2), 1/e (1)
    for gam, quoted in ((5, 0.197), (3, 0.253), (2, 0.298)):
        ref = float(crossing_mp(gam))
        assert float(fl.gradient_threshold(gam)) == pytest.approx(ref, rel=1e-10)
        assert ref == pytest.approx(quoted, abs=5e-4)
    assert float(fl.gradient_threshold(1.0)) == pytest.approx(math.exp(-1), rel=1e-12)
    # inverse of lambert_w_gamma
    assert float(fl.lambert_w_gamma(fl.gradient_threshold(4.2))) == pytest.approx(4.2, rel=1e-8)
    # chapter: gamma = 3 regularises on 82% of (0.2, 0.5]
    assert (0.5 - float(crossing_mp(3))) / 0.3 == pytest.approx(0.825, abs=5e-3)


def test_prop2_no_g_above_one_beyond_threshold():
    rng = np.random.default_rng(1)
    for p0 in rng.uniform(0.02, 0.48, 10):
        gs = float(gamma_star_mp(p0))
        for m in (1.001, 1.5, 3.0):
            for p in rng.uniform(p0, 1, 20):
                assert g_mp(p, gs * m) < 1


# ----------------------------------------------------------------------------- Prop. 1
def _tiny_setup(n, seed=0):
    torch.manual_seed(seed)
    net = rp.models.get_model("tiny_cnn", num_classes=10).eval()
    x = torch.logspace(0, 3, n)[:, None, None, None] * torch.randn(n, 3, 32, 32)
    with torch.no_grad():
        y = net(x).argmax(1)
    y[1::2] = torch.randint(0, 10, (n // 2,))
    return net, x, y


def test_prop1_autograd_against_per_sample_loop():
    net, x, y = _tiny_setup(8)
    res = fl.gradient_factor_autograd(net, x, y, 3.0)
    ref = net.double()
    focal = rp.losses.get_loss("focal", gamma=3.0)
    ce = rp.losses.get_loss("cross_entropy")
    for i in range(len(x)):
        gf = torch.autograd.grad(focal(ref(x[i:i + 1].double()), y[i:i + 1]), [ref.fc.weight, ref.fc.bias])
        gc = torch.autograd.grad(ce(ref(x[i:i + 1].double()), y[i:i + 1]), [ref.fc.weight, ref.fc.bias])
        gf = torch.cat([gf[1].reshape(-1), gf[0].reshape(-1)]).numpy()
        gc = torch.cat([gc[1].reshape(-1), gc[0].reshape(-1)]).numpy()
        scale = np.abs(gc).max() + 1e-300
        assert np.abs(res["grad_focal"][i] - gf).max() <= 1e-9 * scale
        with torch.no_grad():
            p = float(torch.softmax(ref(x[i:i + 1].double()), 1)[0, y[i]])
        # Prop. 1: gradient ratio = g(p, gamma) (mpmath), for every coordinate
        np.testing.assert_allclose(gf, float(g_mp(p, 3.0)) * gc, rtol=1e-9, atol=1e-12 * scale)
        assert res["p"][i] == pytest.approx(p, rel=1e-12)


def test_prop1_all_parameters_and_validation():
    net, x, y = _tiny_setup(4)
    res = fl.gradient_factor_autograd(net, x, y, 2.0, params="all")
    g = np.array([float(g_mp(p, 2.0)) for p in res["p"]])
    scale = np.abs(res["grad_ce"]).max()
    assert res["grad_ce"].shape[1] == sum(p.numel() for p in net.parameters())
    assert np.abs(res["grad_focal"] - g[:, None] * res["grad_ce"]).max() < 1e-12 * scale
    with pytest.raises(ValueError, match="params"):
        fl.gradient_factor_autograd(net, x, y, 2.0, params="last")


# ----------------------------------------------------------------------------- App. H
def test_kl_bound_functions_and_bound():
    rng = np.random.default_rng(5)
    for K in (2, 5):
        p = rng.dirichlet(np.ones(K), 300)
        q = rng.dirichlet(np.ones(K), 300)
        for gam in (0.25, 0.5, 1.0, 3.0):
            fl_direct = -(p * (1 - q) ** gam * np.log(q)).sum(1)
            kl = (p * np.log(p / q)).sum(1)
            hp, hq = -(p * np.log(p)).sum(1), -(q * np.log(q)).sum(1)
            np.testing.assert_allclose(fl.focal_expected_loss(p, q, gam), fl_direct, rtol=1e-12)
            np.testing.assert_allclose(fl.focal_kl_bound(p, q, gam), kl + hp - gam * hq, rtol=1e-10, atol=1e-12)
            assert np.all(fl_direct >= kl + hp - gam * hq - 1e-12)  # chapter: holds, also gamma < 1
            if gam < 1:  # chapter: the proof's first step fails on 100% of pairs for gamma = 0.5
                assert np.all(fl_direct < -(p * (1 - gam * q) * np.log(q)).sum(1))


def test_entropy_lemma_in_mpmath():
    # log q log(1-q) <= H2(q) (chapter: min of the difference on the grid 1.0e-06 >= 0)
    for q in list(np.linspace(0.001, 0.999, 60)) + [1e-6, 1 - 1e-6]:
        q = mp.mpf(q)
        assert -q * mp.log(q) - (1 - q) * mp.log(1 - q) - mp.log(q) * mp.log(1 - q) >= 0


# ----------------------------------------------------------------------------- risk minimiser
def _dell(x, gam):
    """d/dx of -(1-x)^gam log x, written out by hand."""
    return gam * (1 - x) ** (gam - 1) * mp.log(x) - (1 - x) ** gam / x


def _root_in(f, x0, lo=mp.mpf("1e-30"), hi=1 - mp.mpf("1e-30")):
    """Root of an increasing f near x0 by mpmath's bracketing Anderson solver."""
    d = mp.mpf("1e-6")
    a, b = max(lo, x0 - d), min(hi, x0 + d)
    while f(a) > 0:
        a = max(lo, a - 10 * d)
    while f(b) < 0:
        b = min(hi, b + 10 * d)
    return mp.findroot(f, (a, b), solver="anderson")


def _binary_minimizer_mp(eta, gam):
    risk = lambda x: -eta * (1 - x) ** gam * mp.log(x) - (1 - eta) * x ** gam * mp.log(1 - x)
    x0 = minimize_scalar(lambda x: float(risk(mp.mpf(x))), bounds=(1e-9, 1 - 1e-9), method="bounded").x
    return float(_root_in(lambda x: eta * _dell(x, gam) - (1 - eta) * _dell(1 - x, gam), mp.mpf(x0)))


def test_focal_risk_minimizer_binary_against_mpmath():
    for gam in (0.5, 1.0, 3.0, 5.0):
        for eta in (0.05, 0.3, 0.55, 0.9, 0.999):
            q = fl.focal_risk_minimizer([eta, 1 - eta], gam)
            assert q[0] == pytest.approx(_binary_minimizer_mp(mp.mpf(eta), gam), abs=1e-12)
            assert abs(q[0] - 0.5) < abs(eta - 0.5)  # chapter: strictly between 0.5 and p
    assert np.array_equal(fl.focal_risk_minimizer([[1.0, 0.0]], 2.0), [[1.0, 0.0]])
    np.testing.assert_allclose(fl.focal_risk_minimizer([0.3, 0.7], 0.0), [0.3, 0.7])


def test_focal_risk_minimizer_multiclass_against_scipy():
    rng = np.random.default_rng(3)
    eta = rng.dirichlet(np.ones(4), 6)
    q = fl.focal_risk_minimizer(eta, 2.0)
    for e, qq in zip(eta, q):
        risk = lambda z: float(-(e * (1 - np.exp(z - np.logaddexp.reduce(z))) ** 2
                                 * (z - np.logaddexp.reduce(z))).sum())
        r = minimize(risk, np.log(e), method="Nelder-Mead",
                     options=dict(xatol=1e-12, fatol=1e-16, maxiter=40000, maxfev=80000))
        ref = np.exp(r.x - np.logaddexp.reduce(r.x))
        np.testing.assert_allclose(qq, ref, atol=2e-7)
    assert np.abs(q.sum(1) - 1).max() < 1e-15
    with pytest.raises(ValueError, match="sum to 1"):
        fl.focal_risk_minimizer([0.3, 0.3], 1.0)


def _k100_top(a, gam):
    """Focal minimiser's top probability for eta = (a, (1-a)/99 x 99): by symmetry and strict
    convexity a 1-D problem in q1, solved by mpmath on its derivative."""
    a = mp.mpf(a)
    ell = lambda x: -(1 - x) ** gam * mp.log(x)
    risk = lambda x: a * ell(x) + (1 - a) * ell((1 - x) / 99)
    x0 = minimize_scalar(lambda x: float(risk(mp.mpf(x))), bounds=(1e-6, 1 - 1e-6), method="bounded").x
    return _root_in(lambda x: a * _dell(x, gam) - (1 - a) / 99 * _dell((1 - x) / 99, gam), mp.mpf(x0))


def test_multiclass_counterexample_quoted_numbers():
    a = np.linspace(0.011, 0.99, 980)  # the chapter's grid
    eta = np.column_stack([a, np.repeat(((1 - a) / 99)[:, None], 99, 1)])
    q = fl.focal_risk_minimizer(eta, 1.0)
    i = int(np.argmax(q[:, 0] - a))
    q1 = _k100_top(a[i], 1)
    assert q[i, 0] == pytest.approx(float(q1), abs=1e-12)
    # chapter: a = 0.188 -> q1 = 0.201, H(q) - H(eta) = -0.042
    assert a[i] == pytest.approx(0.188, abs=1e-3) and float(q1) == pytest.approx(0.201, abs=5e-4)
    qv = np.r_[float(q1), np.full(99, (1 - float(q1)) / 99)]
    dh = -(qv * np.log(qv)).sum() + (eta[i] * np.log(eta[i])).sum()
    assert dh == pytest.approx(-0.042, abs=5e-4)
    # chapter: over-confident for every a up to 0.340; the exact crossing of q1(a) = a
    cross = brentq(lambda v: float(_k100_top(v, 1)) - v, 0.2, 0.6, xtol=1e-10)
    amax = a[q[:, 0] - a > 0].max()
    assert amax <= cross < amax + 1.01e-3
    assert amax == pytest.approx(0.340, abs=1e-3)


# ----------------------------------------------------------------------------- App. G
def _independent_fits(std):
    X, y, _ = lin.make_clusters(100, std, 0.1, seed=0)
    from sklearn.linear_model import LogisticRegression

    ce = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-14, max_iter=10000).fit(X, y).coef_[0]
    s = 2.0 * y - 1

    def focal_mean(w):
        z = s * (X @ w)
        log_p = -np.logaddexp(0, -z)
        return float(np.mean(-(1 - np.exp(log_p)) * log_p))

    fo = minimize(focal_mean, ce, method="Nelder-Mead",
                  options=dict(xatol=1e-13, fatol=1e-16, maxiter=20000)).x
    return X, y, ce, fo


def _mis_conf(w, std):
    Xt, yt, _ = lin.make_clusters(100, std, 0.1, seed=1)
    z = Xt @ w
    conf = 1 / (1 + np.exp(-np.abs(z)))
    return conf[(z > 0).astype(int) != yt]


def test_make_clusters():
    X, y, flipped = lin.make_clusters(50, 0.3, 0.1, seed=2)
    assert X.shape == (200, 2) and flipped.sum() == 20
    clean = np.repeat([0, 0, 1, 1], 50)
    assert np.array_equal(y[~flipped], clean[~flipped]) and np.all(y[flipped] != clean[flipped])
    assert np.allclose(X[:50].mean(0), [-1, -1], atol=0.15) and np.allclose(X[150:].mean(0), [1, 1], atol=0.15)
    with pytest.raises(ValueError, match="flip"):
        lin.make_clusters(10, 0.5, 1.0)


def test_linear_gradient_against_autograd():
    X, y, _ = lin.make_clusters(20, 0.5, 0.1, seed=0)
    w = np.array([0.7, -0.4])
    for loss, gam in (("ce", 0.0), ("focal", 1.0), ("focal", 2.5)):
        val, grad = lin.linear_loss_and_grad(w, X, y, loss, gam)
        wt = torch.tensor(w, requires_grad=True)
        z = torch.tensor(2.0 * y - 1) * (torch.tensor(X) @ wt)
        lp = torch.nn.functional.logsigmoid(z)
        out = (-lp if loss == "ce" else -(1 - lp.exp()) ** gam * lp).mean()
        out.backward()
        assert val == pytest.approx(out.item(), rel=1e-12)
        np.testing.assert_allclose(grad, wt.grad.numpy(), rtol=1e-10)


def test_appendix_g_quoted_numbers():
    X, y, ce, fo = _independent_fits(0.5)
    runs = {name: lin.train_linear(X, y, loss=name, gamma=1.0, lr=0.1, iters=50_000, record_every=10)
            for name in ("ce", "focal")}
    np.testing.assert_allclose(runs["ce"]["w"], ce, rtol=1e-7)
    np.testing.assert_allclose(runs["focal"]["w"], fo, rtol=1e-7)
    # chapter: |w| 1.95 vs 1.08 (ratio 1.81), |Xw| 44.1 vs 24.4, angle 0.13 degrees
    assert np.linalg.norm(ce) == pytest.approx(1.951, abs=1e-3)
    assert np.linalg.norm(fo) == pytest.approx(1.080, abs=1e-3)
    assert np.linalg.norm(X @ ce) == pytest.approx(44.13, abs=0.01)
    assert np.linalg.norm(X @ fo) == pytest.approx(24.44, abs=0.01)
    ang = abs(math.degrees(math.atan2(ce[1], ce[0]) - math.atan2(fo[1], fo[0])))
    assert ang == pytest.approx(0.13, abs=0.01)
    assert max(r["grad_norm"] for r in runs.values()) < 1e-12
    assert runs["ce"]["steps"][-1] == 50_000 and np.allclose(runs["ce"]["weights"][-1], runs["ce"]["w"])
    # chapter: 49 misclassified test points; share above 0.9: 33% vs 0%; medians 0.860, 0.732
    mc, mf = _mis_conf(ce, 0.5), _mis_conf(fo, 0.5)
    assert len(mc) == 49 and len(mf) == 49
    assert np.mean(mc > 0.9) == pytest.approx(16 / 49) and np.mean(mf > 0.9) == 0
    assert np.median(mc) == pytest.approx(0.860, abs=5e-4) and np.median(mf) == pytest.approx(0.732, abs=5e-4)


@pytest.mark.parametrize("std, wn_ce, share_ce, wn_fl", [(0.2, 2.194, 0.550, 1.226), (1.0, 1.119, 0.080, 0.628)])
def test_appendix_g_sensitivity_table(std, wn_ce, share_ce, wn_fl):
    # chapter (cpu): the table of cluster spreads; the largest CE share above 0.9 is 55% (sd 0.2)
    _, _, ce, fo = _independent_fits(std)
    assert np.linalg.norm(ce) == pytest.approx(wn_ce, abs=1e-3)
    assert np.linalg.norm(fo) == pytest.approx(wn_fl, abs=1e-3)
    assert np.mean(_mis_conf(ce, std) > 0.9) == pytest.approx(share_ce, abs=1e-3)
    assert np.mean(_mis_conf(fo, std) > 0.9) == 0
    row = lin.spread_table((std,)).iloc[0]
    assert row["‖w‖ ce"] == pytest.approx(np.linalg.norm(ce), rel=1e-7)
    assert row["‖w‖ focal"] == pytest.approx(np.linalg.norm(fo), rel=1e-7)
    assert row["share > 0.9 ce"] == np.mean(_mis_conf(ce, std) > 0.9)
    assert row["median focal"] == pytest.approx(np.median(_mis_conf(fo, std)), rel=1e-6)
    assert row["mistakes ce"] == len(_mis_conf(ce, std))


def test_appendix_g_result_and_known_rows():
    res = lin.appendix_g(std=0.5, iters=2_000, record_every=1_000)
    assert set(res) == {"X", "y", "Xt", "yt", "flipped_test", "runs", "mistakes"}
    Xt, yt, flipped = lin.make_clusters(100, 0.5, 0.1, seed=1)
    assert np.array_equal(res["Xt"], Xt) and np.array_equal(res["flipped_test"], flipped)
    assert list(res["runs"]["ce"]["steps"]) == [0, 1_000, 2_000]
    np.testing.assert_array_equal(res["mistakes"]["ce"], lin.misclassified_confidence(res["runs"]["ce"]["w"], Xt, yt))
    table = lin.spread_table((0.5,), known={0.5: res})  # not rerun: the short run's numbers
    assert table.iloc[0]["‖w‖ ce"] == np.linalg.norm(res["runs"]["ce"]["w"])


# ----------------------------------------------------------------------------- Eq. 7, 9, 10, log g
def test_eq7_and_k_against_mpmath():
    for p in (1e-8, 0.05, 0.3, 0.7, 0.99, 1 - 1e-7):
        for gam in (0.5, 1.0, 2.5, 7.0):
            assert fl.gradient_factor_dp(p, gam) == pytest.approx(float(mp.diff(lambda x: g_mp(x, gam), p)), rel=1e-9)
            k_ref = 2 * (1 - mp.mpf(p)) / mp.log(p) + 1 - gam * mp.mpf(p)
            assert fl.k_term(p, gam) == pytest.approx(float(k_ref), rel=1e-12)
            dk = mp.diff(lambda x: 2 * (1 - x) / mp.log(x) + 1 - gam * x, mp.mpf(p))
            assert fl.k_term_dp(p, gam) == pytest.approx(float(dk), rel=1e-7)
            assert fl.k_term_dp(p, gam) < 0
    assert fl.k_term(0.0, 3.0) == 1.0 and fl.k_term(1.0, 3.0) == -4.0  # the limits of App. B
    with pytest.raises(ValueError, match="open interval"):
        fl.gradient_factor_dp(0.0, 1.0)


def test_complex_step_reference_of_the_claims():
    from replicate.theory.focal_loss.claims_gradient import g_complex_step

    for p in (0.01, 0.4, 0.95):
        assert g_complex_step(p, 3.5) == pytest.approx(float(mp.diff(lambda x: g_mp(x, 3.5), p)), rel=1e-12)


def test_log_gradient_factor_keeps_the_sign_where_g_rounds_to_one():
    for p in ("1e-300", "1e-30", "0.1", "0.3", "0.9"):
        for gam in (0.5, 3.0):
            ref = mp.log(g_mp(mp.mpf(p), gam))
            assert fl.log_gradient_factor(float(p), gam) == pytest.approx(float(ref), rel=1e-10)
    assert fl.focal_gradient_factor(1e-300, 3.0) == 1.0 and fl.log_gradient_factor(1e-300, 3.0) > 0
    assert fl.log_gradient_factor(1.0, 2.0) == -np.inf


def test_eq10_rhs_against_mpmath_and_its_minimum():
    # chapter: z in [-1/e, ...), smallest at p0 = 0.5 (Eq. 10, "minimum -1/e at p0 = 0.5")
    for p0 in (0.001, 0.2, 0.5, 0.8, 0.999):
        a, b = 1 - mp.mpf(p0), mp.mpf(p0) * mp.log(p0)
        z = -(a ** (1 - a / b) / b) * mp.log(a)
        assert fl.eq10_rhs(p0) == pytest.approx(float(z), rel=1e-12)
        assert fl.eq10_rhs(p0, log=True) == pytest.approx(float(mp.log(-z)), abs=1e-12)
    assert fl.eq10_rhs(0.5) == pytest.approx(-math.exp(-1), rel=1e-14)
    grid = np.linspace(0.001, 0.999, 999)
    assert np.all(fl.eq10_rhs(grid) >= -math.exp(-1) * (1 + 1e-14))
    with pytest.raises(ValueError, match="p0"):
        fl.eq10_rhs(1.0)


# ----------------------------------------------------------------------------- footnote 2 of AdaFocal
def dg_dgamma_mp(p, gam):
    return mp.diff(lambda t: g_mp(p, t), mp.mpf(gam))


def shrink_threshold_mp(gam):
    """The p in (0, 1/2] where dg/dgamma changes sign, by mpmath root finding on mp.diff."""
    return mp.findroot(lambda p: dg_dgamma_mp(p, gam), (mp.mpf("1e-4"), mp.mpf("0.5")), solver="anderson")


def test_gradient_factor_dgamma_against_mpmath():
    for p in (0.01, 0.2, 0.5, 0.9):
        for gam in (0.0, 0.5, 2.0, 8.0):
            assert fl.gradient_factor_dgamma(p, gam) == pytest.approx(float(dg_dgamma_mp(p, gam)), rel=1e-9, abs=1e-15)


def test_gradient_shrink_threshold_against_mpmath():
    # chapter (AdaFocal): 0.283 at gamma = 1, 0.2 at gamma = 1.996, 0.035 at gamma = 20
    gam = np.array([0.3, 1.0, 2.0, 5.0, 20.0])
    ours = rp.theory.gradient_shrink_threshold(gam)
    assert ours.shape == gam.shape
    for g, t in zip(gam, ours):
        assert t == pytest.approx(float(shrink_threshold_mp(g)), rel=1e-9)
    assert ours[1] == pytest.approx(0.283, abs=5e-4) and ours[-1] == pytest.approx(0.035, abs=5e-4)
    g02 = float(mp.findroot(lambda t: dg_dgamma_mp(mp.mpf("0.2"), t), mp.mpf(2)))
    assert g02 == pytest.approx(1.996, abs=5e-4)
    assert float(rp.theory.gradient_shrink_threshold(g02)) == pytest.approx(0.2, rel=1e-9)
    # gamma = 0: the sign change of dg/dgamma = h + log(1-p) is at p = 1/2 exactly
    assert rp.theory.gradient_shrink_threshold(0.0) == 0.5
    assert np.all(np.diff(rp.theory.gradient_shrink_threshold(np.linspace(0, 30, 61))) < 0)
    with pytest.raises(ValueError, match="gamma"):
        rp.theory.gradient_shrink_threshold(-1.0)


def test_shrink_gamma_is_the_closed_form_inverse():
    p = np.linspace(0.01, 0.49, 25)
    back = rp.theory.gradient_shrink_threshold(fl.shrink_gamma(p))
    np.testing.assert_allclose(back, p, rtol=1e-10)
    for q in (0.05, 0.3):  # dg/dgamma vanishes at (q, shrink_gamma(q)) (mpmath)
        assert abs(float(dg_dgamma_mp(q, fl.shrink_gamma(q)))) < 1e-12
    assert fl.shrink_gamma(0.5) == pytest.approx(0.0, abs=1e-15) and fl.shrink_gamma(0.7) < 0


def test_bernoulli_step_and_entropy():
    rng = np.random.default_rng(2)
    p, q = rng.dirichlet(np.ones(4), 50), rng.dirichlet(np.ones(4), 50)
    np.testing.assert_allclose(fl.bernoulli_step(p, q, 2.0), -((1 - 2.0 * q) * p * np.log(q)).sum(1), rtol=1e-12)
    np.testing.assert_allclose(fl.entropy(q), [float(-sum(mp.mpf(x) * mp.log(x) for x in row)) for row in q],
                               rtol=1e-12)
    assert fl.entropy([1.0, 0.0]) == 0.0
