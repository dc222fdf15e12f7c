"""Komisarenko & Kull (2024): focal calibration map, Prop. 1-5, the temperature fits.

Every number the chapter ``notebooks/theory_fts.md`` quotes is recomputed here by a
different route: Eq. (1) and the printed Prop. 2 formula evaluated literally in mpmath,
roots of stationarity equations (mpmath ``findroot``), scipy minimisation of the focal
risk, and brute-force temperature grids instead of the package's bounded optimiser.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import brentq, minimize

import replicate.theory as th
from replicate.theory.fts import bounds as fts_bounds
from replicate.theory.fts import calibration_map as fts
from replicate.theory.fts.claims import report as fts_report

mp.mp.dps = 50


# ----------------------------------------------------------------------------- oracles
def eq1_mp(q, gamma):
    """Eq. (1) of the paper, literally, in mpmath."""
    g = mp.mpf(gamma)
    w = [1 / ((1 - x) ** g * (g * mp.log(x) / (1 - x) - 1 / x)) for x in map(mp.mpf, q)]
    s = sum(w)
    return [x / s for x in w]


def prop2_printed(q, g):
    """The binary map as printed in Prop. 2 (float64, vectorised)."""
    q = np.asarray(q, float)
    return 1 / (1 + ((1 - q) / q) ** g * ((1 - q) - g * q * np.log(q))
                / (q - g * (1 - q) * np.log(1 - q)))


def fl(q, g):
    return -((1 - q) ** g) * np.log(q)


def dfl_mp(q, g):
    q, g = mp.mpf(q), mp.mpf(g)
    return (1 - q) ** g * (g * mp.log(q) / (1 - q) - 1 / q)


def binary_minimiser_mp(eta, g):
    """Root of eta f'(q) = (1 - eta) f'(1 - q): the binary focal risk minimiser."""
    return mp.findroot(lambda q: eta * dfl_mp(q, g) - (1 - eta) * dfl_mp(1 - q, g),
                       0.5 + (eta - 0.5) / (1 + g))


def scipy_focal_minimiser(eta, g):
    eta = np.asarray(eta, float)
    r = minimize(lambda z: float(np.sum(eta * fl(np.exp(z - np.logaddexp.reduce(z)), g))),
                 np.log(eta), method="Nelder-Mead",
                 options=dict(xatol=1e-12, fatol=1e-16, maxiter=20000, maxfev=40000))
    return np.exp(r.x - np.logaddexp.reduce(r.x))


def brute_closest_k(fc, z, k_lo, k_hi):
    """1/T minimising max |fc - softmax(k z)| by two nested grids (no optimiser)."""
    z = z - z.max(-1, keepdims=True)

    def devs(ks):
        e = np.exp(ks[:, None, None] * z[None])
        return np.abs(fc[None] - e / e.sum(-1, keepdims=True)).reshape(len(ks), -1).max(-1)

    ks = np.linspace(k_lo, k_hi, 201)
    d = devs(ks)
    k0 = ks[np.argmin(d)]
    step = ks[1] - ks[0]
    ks = np.linspace(k0 - step, k0 + step, 201)
    d = devs(ks)
    return ks[np.argmin(d)], d.min()


@pytest.fixture(scope="module")
def report():
    rep = fts_report("smoke")
    return dict(rep.data, claims=rep.log, glued=rep.numbers)


# ----------------------------------------------------------------------------- the map
@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("gamma", [-0.5, 0.25, 2.0, 5.0])
def test_map_matches_eq1_in_mpmath(n, gamma):
    q = np.random.default_rng(n).dirichlet(np.ones(n), 6)
    ours = th.focal_calibration_map(q, gamma)
    ref = np.array([[float(v) for v in eq1_mp(row, gamma)] for row in q])
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-15)


def test_map_stable_near_zero_and_one():
    # exact complements: q = (eps, 1 - eps) with eps representable; mpmath gets eps exactly
    for eps in (1e-9, 1e-13, 1e-200):
        ours = th.focal_calibration_map(np.array([eps, 1 - eps]), 2.0)
        with mp.workdps(450):
            ref = eq1_mp([mp.mpf(eps), 1 - mp.mpf(eps)], 2.0)
        assert ours[0] == pytest.approx(float(ref[0]), rel=1e-9, abs=1e-300)
        assert np.all(np.isfinite(ours))
    # a probability that rounded to exactly 1 keeps its neighbours' information
    out = th.focal_calibration_map(np.array([[1e-20, 1.0, 1e-20]]), 1.0)
    assert np.all(np.isfinite(out)) and out[0, 1] == 1.0
    assert np.array_equal(th.focal_calibration_map(np.array([0.0, 1.0]), -0.5), [0.0, 1.0])


def test_map_gamma_zero_is_identity_and_torch_parity():
    import torch
    q = np.random.default_rng(0).dirichlet(np.ones(4), 5)
    assert np.array_equal(th.focal_calibration_map(q, 0.0), q)
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        out = th.focal_calibration_map(torch.tensor(q, dtype=dtype), 3.0)
        assert out.dtype == dtype
        np.testing.assert_allclose(out.numpy(), th.focal_calibration_map(q, 3.0), rtol=tol, atol=tol)
    x = torch.tensor(q, requires_grad=True)
    th.focal_calibration_map(x, 2.0)[:, 0].sum().backward()
    assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize("bad", [-1.0, -2, float("nan"), float("inf"), "two", None])
def test_map_rejects_bad_gamma(bad):
    with pytest.raises(ValueError, match="gamma"):
        th.focal_calibration_map(np.array([0.5, 0.5]), bad)


@pytest.mark.parametrize("probs", [[0.5], [0.7, 0.7], [-0.1, 1.1], [np.nan, 1.0]])
def test_map_rejects_bad_probs(probs):
    with pytest.raises(ValueError, match="probs"):
        th.focal_calibration_map(np.array(probs), 1.0)


def test_temperature_bounds_closed_form():
    g = 4
    t1, t2 = th.temperature_bounds(g)
    assert t1 == pytest.approx(float(1 / mp.mpf(5)), abs=1e-15)
    assert t2 == pytest.approx(float(1 / (5 - mp.log(5) / 2)), abs=1e-15)
    assert (round(t1, 3), round(t2, 3)) == (0.2, 0.238)  # the paper's numbers
    with pytest.raises(ValueError, match="gamma"):
        th.temperature_bounds(-0.5)


# ----------------------------------------------------------------------------- Prop. 1, 2, 4
def test_prop1_second_derivative_against_mpmath():
    for g in (0.0, 0.3, 1.0, 2.5, 7.0):
        for q in (0.01, 0.2, 0.5, 0.9, 0.999):
            ref = mp.diff(lambda x: -(1 - x) ** g * mp.log(x), mp.mpf(q), 2)
            assert fts.focal_loss_second_derivative(q, g) == pytest.approx(float(ref), rel=1e-9)
            assert ref > 0


def test_80_20_example(report):
    ref = binary_minimiser_mp(mp.mpf("0.8"), 2)
    assert report["numbers"]["ex_scipy"] == pytest.approx(float(ref), abs=1e-7)
    assert report["numbers"]["ex_minimizer"] == pytest.approx(float(ref), abs=1e-12)
    assert 0.62 <= float(ref) < 0.63 and abs(float(ref) - 0.62) > 0.005   # truncation, not rounding
    ref100 = binary_minimiser_mp(mp.mpf("0.8"), 100)
    assert report["numbers"]["ex_gamma100"] == pytest.approx(float(ref100), abs=1e-6)


def test_prop2_map_inverts_minimiser_and_printed_formula():
    for g in (0.5, 3.0):
        for eta in (0.1, 0.35, 0.8):
            qstar = float(binary_minimiser_mp(mp.mpf(eta), g))
            assert fts.binary_focal_calibration_map(qstar, g) == pytest.approx(eta, abs=1e-13)
    q = np.linspace(0.01, 0.99, 99)
    for g in (0.5, 2.0, 5.0):
        np.testing.assert_allclose(prop2_printed(q, g), fts.binary_focal_calibration_map(q, g), atol=1e-14)


def test_prop2_properized_binary_loss_is_proper():
    g = 2.0

    def inv(q):  # inverse of the printed Prop. 2 map by brentq (independent of the package)
        return brentq(lambda x: prop2_printed(x, g) - q, 1e-12, 1 - 1e-12, xtol=1e-15)

    qs = np.linspace(0.02, 0.98, 97)
    r = np.array([inv(x) for x in qs])
    for eta in (0.2, 0.5, 0.7):
        risk = eta * fl(r, g) + (1 - eta) * fl(1 - r, g)
        assert qs[np.argmin(risk)] == pytest.approx(eta, abs=1e-9)
    ours = fts.properized_focal_loss(np.stack([1 - qs, qs], -1), g)[:, 1]
    np.testing.assert_allclose(ours, fl(r, g), rtol=1e-9)


def test_prop4_inverse_is_focal_minimiser():
    rng = np.random.default_rng(3)
    for n in (3, 4):
        eta = rng.dirichlet(np.ones(n), 3)
        for g in (1.0, 3.0):
            inv = fts.focal_calibration_inverse(eta, g)
            for e, q in zip(eta, inv):
                np.testing.assert_allclose(q, scipy_focal_minimiser(e, g), atol=1e-6)
            np.testing.assert_allclose(inv, th.focal_risk_minimizer(eta, g), atol=1e-12)
            np.testing.assert_allclose(th.focal_calibration_map(inv, g), eta, atol=1e-13)


def test_prop4_properized_risk_minimised_at_p(report):
    p = np.array([0.55, 0.3, 0.15])
    g = 3.0
    lstar = lambda q: fl(scipy_focal_minimiser(q, g), g)  # noqa: E731  L*(q, .) via scipy
    r_p = float(np.sum(p * lstar(p)))
    for d in ([0.02, -0.01, -0.01], [-0.03, 0.03, 0.0], [0.0, -0.02, 0.02]):
        assert np.sum(p * lstar(p + np.array(d))) > r_p
    assert report["numbers"]["p4_proper_dist"] == 0.0


# ----------------------------------------------------------------------------- Prop. 3
def _fc_logit_mp(s, g):
    q = 1 / (1 + mp.exp(-mp.mpf(s)))
    p1 = eq1_mp([1 - q, q], g)[1]
    return mp.log(p1 / (1 - p1))


def test_prop3_orientation_in_mpmath(report):
    with mp.workdps(80):
        for g in (0.5, 4.0):
            k1, k2 = g + 1, g + 1 - mp.log(g + 1) / 2
            for s in (-15, -2, -0.1, 0.1, 2, 15):
                L = _fc_logit_mp(s, g)
                lo, hi = sorted([k1 * s, k2 * s])
                assert lo < L < hi  # FC between the two temperature maps
                # printed order: s < 0: A > FC > B, s > 0: A < FC < B, with A, B the maps of
                # T = 1/(g+1) and T = 1/(g+1-log(g+1)/2) (logits k1 s and k2 s) ...
                printed = (k1 * s > L > k2 * s) if s < 0 else (k1 * s < L < k2 * s)
                # ... or with the exponent -s/(g+1) taken literally (logits s/k1 and s/k2)
                literal = (s / k1 > L > s / k2) if s < 0 else (s / k1 < L < s / k2)
                assert not printed and not literal
    n = report["numbers"]
    assert n["p3_temperatures_reversed"] == 0 and n["p3_mp_reversed"] == 0
    assert n["p3_as_printed"] == n["p3_points"] == n["p3_temperatures_printed_order"]
    assert n["p3_mp_as_printed"] == n["p3_mp_points"]
    a, fc, b = n["p3_cx"]
    assert (a, b) == pytest.approx((1 / (1 + math.exp(-0.4)), 1 / (1 + math.exp(-2 / (5 - math.log(5) / 2)))))
    with mp.workdps(30):
        assert fc == pytest.approx(float(1 / (1 + mp.exp(-_fc_logit_mp(2, 4)))), rel=1e-12)


def test_gamma4_tightest_bounds(report):
    g = 4
    with mp.workdps(60):
        steep = 1 / (g + 1 - (g + 1 - _fc_logit_mp(20, g) / 20))          # C(s)/s smallest at s = 20
        flat = 1 / (g + 1 - ((g + 1) * mp.mpf("1e-8") - _fc_logit_mp(mp.mpf("1e-8"), g)) / mp.mpf("1e-8"))
    t = fts_bounds.tightest_temperature_bounds(g)
    assert t[0] == pytest.approx(float(steep), abs=1e-9)
    assert t[1] == pytest.approx(float(flat), abs=1e-7)
    assert report["numbers"]["T4_tight"] == pytest.approx(t)
    assert (round(t[0], 3), round(t[1], 3)) == (0.203, 0.218)  # paper: 0.206, 0.218


def test_gamma4_paper_grid_search_replayed(report):
    """The paper's search, done independently: loop over T, float64, printed Prop. 2 formula."""
    g = 4.0
    s = np.arange(-19999, 20000) * 1e-3
    with np.errstate(all="ignore"):
        fc = prop2_printed(1 / (1 + np.exp(-s)), g)
    ok = np.isfinite(fc)  # the printed formula gives nan where sigmoid(s) rounds to 0 or 1
    pos = s >= 0

    def bounds(T):
        ts = 1 / (1 + np.exp(-s / T))
        steep = np.all((ts >= fc)[pos & ok]) and np.all((ts <= fc)[~pos & ok])
        flat = np.all((ts <= fc)[pos & ok]) and np.all((ts >= fc)[~pos & ok])
        return steep, flat

    with np.errstate(over="ignore"):
        res = {round(T, 3): bounds(T) for T in np.arange(0.195, 0.230, 0.001)}
    steep = max(T for T, (st, _) in res.items() if st)
    flat = min(T for T, (_, fl_) in res.items() if fl_)
    assert (steep, flat) == (0.203, 0.218)
    assert report["numbers"]["T4_grid"] == pytest.approx((0.203, 0.218))
    lo, hi = report["numbers"]["T4_range206"]
    for s_max, expect in ((lo + 0.2, True), (hi - 0.2, True), (lo - 0.5, False), (hi + 0.5, False)):
        assert bool(round(fts_bounds.tightest_temperature_bounds(g, s_max=s_max)[0], 3) == 0.206) is expect


# ----------------------------------------------------------------------------- fits
def test_binary_closest_temperatures_and_error(report):
    z = fts_bounds.logit_grid(2, 0.01, 20.0)
    q1 = 1 / (1 + np.exp(-(z[:, 0] - z[:, 1])))
    for g in (0.5, 2.0, 3.0):
        p = prop2_printed(np.clip(q1, 1e-300, 1 - 1e-16), g)
        k, d = brute_closest_k(np.stack([p, 1 - p], -1), z, 0.5, g + 1.5)
        assert report["binary_closest"][g] == pytest.approx(1 / k, abs=2e-4)
    n = report["numbers"]
    g = n["bin_maxdev_gamma"]
    p = prop2_printed(np.clip(q1, 1e-300, 1 - 1e-16), g)
    k, d = brute_closest_k(np.stack([p, 1 - p], -1), z, 0.5, g + 1.5)
    assert n["bin_maxdev"] <= d + 1e-9                       # a minimax: no worse than brute force
    assert n["bin_maxdev"] == pytest.approx(d, rel=3e-3)
    assert d > 1e-3  # the paper's "below 1e-3" fails here
    fit = report["binary_fit"]
    over = fit["gammas"][fit["dev"] > 1e-3]
    assert n["bin_over_range"] == pytest.approx((over.min(), over.max()))
    assert 0.2 < over.min() and over.max() < 0.8


def test_binary_linear_fit(report):
    """Slope/intercept from brute-force T on the chapter's gamma grid (independent optimiser)."""
    z = fts_bounds.logit_grid(2, 0.05, 20.0)
    q1 = 1 / (1 + np.exp(-(z[:, 0] - z[:, 1])))
    gs = report["binary_fit"]["gammas"]
    ks = []
    for g in gs:
        p = prop2_printed(np.clip(q1, 1e-300, 1 - 1e-16), g)
        ks.append(brute_closest_k(np.stack([p, 1 - p], -1), z, 0.5, g + 1.5)[0])
    slope, intercept = np.polyfit(gs, ks, 1)
    s, i, _ = report["numbers"]["bin_fit"]
    assert (s, i) == pytest.approx((slope, intercept), abs=3e-3)


@pytest.mark.parametrize("n_classes,step", [(3, 0.25), (4, 0.5)])
def test_multiclass_fits_smoke_grid(report, n_classes, step):
    z = fts_bounds.logit_grid(n_classes, step)
    q = np.exp(z - np.logaddexp.reduce(z, -1, keepdims=True))
    gam = report["ternary_fit"]["gammas"]
    ks, ds = [], []
    for g in gam:
        fc = np.array([[float(v) for v in eq1_mp(row, g)] for row in q[:: max(1, len(q) // 60)]])
        assert np.allclose(fc, th.focal_calibration_map(q[:: max(1, len(q) // 60)], g), atol=1e-13)
        k, d = brute_closest_k(th.focal_calibration_map(q, g), z, 0.5, g + 1.5)
        ks.append(k)
        ds.append(d)
    key = "tri_fit" if n_classes == 3 else "quad_fit"
    slope, intercept = np.polyfit(gam, ks, 1)
    s, i, _ = report["numbers"][key]
    assert (s, i) == pytest.approx((slope, intercept), abs=2e-3)
    fit = report["ternary_fit" if n_classes == 3 else "quaternary_fit"]
    np.testing.assert_allclose(fit["dev"], ds, rtol=2e-3)


def test_caption_temperatures_three_classes(report):
    """On the chapter's cpu grid (step 0.1): package optimiser vs brute-force temperatures."""
    z = fts_bounds.logit_grid(3, 0.1)
    q = np.exp(z - np.logaddexp.reduce(z, -1, keepdims=True))
    for g in (0.5, 1.0, 2.0, 3.0, 9.0):
        k, d = brute_closest_k(th.focal_calibration_map(q, g), z, 0.5, g + 1.5)
        t, dev = fts_bounds.closest_temperature(g, z)
        assert t == pytest.approx(1 / k, abs=2e-4) and dev == pytest.approx(d, rel=1e-3)
    # the paper's captions: Fig. 7 pairs agree, Fig. 5 pairs belong to gamma = 0.5 and 2
    t = report["ternary_closest"]
    assert abs(t[0.5] - 0.8) < 0.02 and abs(t[2.0] - 0.46) < 0.02
    assert abs(t[1.0] - 0.81) > 0.1 and abs(t[3.0] - 0.46) > 0.08


# ----------------------------------------------------------------------------- Prop. 5
def test_prop5_counterexamples_and_threshold(report):
    q9 = [mp.mpf("0.2")] + [mp.mpf("0.1")] * 8
    d9 = eq1_mp(q9, mp.mpf("0.25"))[0] - mp.mpf("0.2")
    q4 = [mp.mpf(x) for x in ("0.33", "0.329", "0.328", "0.013")]     # untied top: p_1 falls
    d4 = eq1_mp(q4, mp.mpf("0.25"))[0] - mp.mpf("0.33")
    assert d9 < 0 and d4 < 0
    n = report["numbers"]
    assert n["p5_cx"] == pytest.approx(float(d9), rel=1e-9)
    assert n["p5_cx4"] == pytest.approx(float(d4), rel=1e-6)
    assert n["p5_worst"] < 0
    for g, v in n["q_star"].items():
        root = mp.findroot(lambda x: (1 - x) ** (-g) / (1 - g * x * mp.log(x) / (1 - x)) - 1, v)
        assert v == pytest.approx(float(root), abs=1e-12)
    assert n["q_star"][1.0] == pytest.approx(1 / math.e, abs=1e-14)
    # above q*: confidence is raised (mpmath spot checks on adversarial points)
    for g in (0.25, 1.0):
        qs = fts.confidence_raising_threshold(g) + 1e-3
        rest = (1 - qs) / 20
        pt = [mp.mpf(qs)] + [mp.mpf(rest)] * 20
        assert eq1_mp(pt, g)[0] >= pt[0]


def test_claims_table_verdicts(report):
    from replicate.claims import VERDICTS

    f = report["claims"].frame()
    by_where = f.groupby("where")["verdict"].apply(list).to_dict()
    assert by_where["Prop. 1"] == ["holds"]
    assert set(by_where["Prop. 2"]) == {"holds"}
    assert by_where["Prop. 3"] == ["misprinted"]
    note = f.loc[f["where"] == "Prop. 3", "note"].iloc[0]
    assert "σ((γ+1−log(γ+1)/2) s) < FC(s) < σ((γ+1) s)" in note        # the correction is stated
    assert by_where["Prop. 5, Fig. 5"] == ["fails", "beyond the paper"]
    assert by_where["Prop. 5, corrected"] == ["beyond the paper"]
    assert by_where["Fig. 5 caption"] == ["fails"] and by_where["Fig. 2 caption"] == ["fails"]
    assert by_where["Sec. 3.1"][0] == "depends on reading"            # 0.6266: truncated, not rounded
    assert set(f["verdict"]) <= set(VERDICTS)
    assert "differs" not in set(f["verdict"])


# ---------------------------------------------- Prop. 3 on a dense grid, fit tolerances
def test_prop3_logit_check_against_mpmath_on_a_dense_gamma_grid():
    gam = np.arange(0.05, 10.001, 0.05)
    s = np.arange(-20, 20.001, 0.25)
    r = fts_bounds.prop3_logit_check(gam, s)
    assert r["temperatures_reversed"] == 0 and r["as_printed"] == r["points"] == len(gam) * (len(s) - 1)
    assert r["margin_low"] > 0 and r["margin_high"] > 0
    with mp.workdps(60):                      # the smallest margins, recomputed where they occur
        g = mp.mpf("0.05")
        low = ((g + 1) * 20 - _fc_logit_mp(20, g)) / 20
        assert r["margin_low"] == pytest.approx(float(low), rel=1e-9)


def test_printed_numbers_reads_rounding_and_truncation():
    from replicate.theory.fts.fits import printed_numbers

    assert printed_numbers((0.6266, 1e-12, 0.62, 2)).verdict == "depends on reading"
    assert printed_numbers((0.6231, 1e-12, 0.62, 2)).verdict == "holds"
    assert printed_numbers((0.640, 0.0, 0.62, 2)).verdict == "fails"
    # our own error wider than the printed precision: cannot decide unless clearly outside
    assert printed_numbers((0.62, 0.03, 0.64, 2)).verdict == "not tested"
    assert printed_numbers((0.50, 0.03, 0.64, 2)).verdict == "fails"
    # one-sided error (a grid maximum can only rise): 12% against "up to 8%" fails
    assert printed_numbers((12.0, (1e-4, 5.0), 8, 0)).verdict == "fails"


def test_fit_error_estimate_covers_a_finer_grid():
    from replicate.theory.fts.fits import fit_with_error

    gam = np.arange(1.0, 10.001, 1.0)
    coarse = fit_with_error(gam, 3, 0.25)
    fine = fit_with_error(gam, 3, 0.125)
    assert abs(coarse["slope"] - fine["slope"]) <= coarse["err_slope"]
    assert abs(coarse["intercept"] - fine["intercept"]) <= coarse["err_intercept"]
    lo, _ = coarse["err_dev"]
    assert np.all(fine["dev"] >= coarse["dev"] - lo)                  # the maximum can only rise
