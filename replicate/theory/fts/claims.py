"""Every theoretical claim of Komisarenko & Kull (2024), checked; verdicts come from the checks.

:func:`report` runs all checks at a profile-sized resolution and returns a
:class:`~replicate.theory.report.TheoryReport`: the claims log (verdicts in the book's
vocabulary), the numbers the chapter glues (:func:`glue_numbers`) and, in ``data``, the
arrays behind Figures 2-7 (the dictionary :mod:`.figures` draws from, with the raw
``numbers``); :func:`claims` (registered in :mod:`replicate.claims.registry`) returns the
log alone. Each row's
``section`` is the heading of ``notebooks/theory_fts.md`` under which it is decided.
Numerical fits are compared with the paper's printed numbers through
:func:`replicate.theory.fts.fits.printed_numbers` (half a unit of the printed digit plus our
own numerical error, stated in the row).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from ... import checks
from ...claims import ClaimLog, beyond, check, corrected, untested
from .._simplex import simplex_grid
from ..focal_loss import focal_risk_minimizer
from ..report import TheoryReport, kept, plain
from .bounds import (binary_logit_correction, paper_grid_temperature_bounds, prop3_check, prop3_logit_check,
                     tightest_temperature_bounds)
from .calibration_map import (binary_focal_calibration_map, conditional_risk, confidence_raising_threshold,
                              focal_calibration_map, focal_loss_true_class, properized_focal_loss, temperature_bounds)
from .fits import XATOL, closest_with_error, fit_with_error, printed_numbers

__all__ = ["SIZES", "SECTIONS", "report", "claims", "glue_numbers", "focal_minimizer_scipy"]

#: Grid sizes per profile (a theory chapter scales only its grids with the profile).
SIZES = {
    "smoke": dict(gamma_step=1.0, bin_gamma_step=0.25, step3=0.25, step4=0.5, simplex_res=20, s_step=0.01,
                  n_random=200, p3_gamma_step=0.1, p3_s_step=0.05, mp_step=0.5),
    "cpu": dict(gamma_step=0.25, bin_gamma_step=0.1, step3=0.1, step4=0.25, simplex_res=60, s_step=0.001,
                n_random=2000, p3_gamma_step=0.01, p3_s_step=0.01, mp_step=0.1),
    "paper": dict(gamma_step=0.25, bin_gamma_step=0.05, step3=0.05, step4=0.125, simplex_res=120, s_step=0.001,
                  n_random=20000, p3_gamma_step=0.005, p3_s_step=0.005, mp_step=0.05),
}
SIZES["gpu"] = SIZES["cpu"]

#: The chapter headings under which the claims are decided.
SECTIONS = dict(map="The focal calibration map", binary="Focal calibration versus temperature scaling (binary)",
                prop3="Prop. 3: two temperatures bound the map", multi="The multiclass map",
                prop5="Prop. 5: is confidence always raised?", fits="Closest temperatures with 3 and 4 classes")


def focal_minimizer_scipy(eta, gamma):
    """Focal conditional-risk minimiser by Nelder-Mead on softmax coordinates (one ``eta``)."""
    eta = np.asarray(eta, float)
    g = checks.gamma(gamma)

    def risk(z):
        q = np.exp(z - np.logaddexp.reduce(z))
        return float(np.sum(eta * focal_loss_true_class(q, g)))

    r = minimize(risk, np.log(eta), method="Nelder-Mead",
                 options=dict(xatol=1e-11, fatol=1e-15, maxiter=20000, maxfev=40000))
    return np.exp(r.x - np.logaddexp.reduce(r.x))


def _map_mpmath(q, gamma, dps: int = 40):
    """Eq. (1) evaluated literally in mpmath (independent of the float64 implementation)."""
    import mpmath as mp

    with mp.workdps(dps):
        g = mp.mpf(gamma)
        w = [1 / ((1 - mp.mpf(x)) ** g * (g * mp.log(mp.mpf(x)) / (1 - mp.mpf(x)) - 1 / mp.mpf(x)))
             for x in np.asarray(q, float)]
        tot = sum(w)
        return np.array([float(x / tot) for x in w])


def _binary_minimizer(eta, g):
    r = minimize_scalar(lambda q: eta * focal_loss_true_class(q, g) + (1 - eta) * focal_loss_true_class(1 - q, g),
                        bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12})
    return float(r.x)


def _prop1(rep) -> None:
    num, log = rep["numbers"], rep["claims"].at(SECTIONS["map"])
    q = 1 / (1 + np.exp(-np.linspace(-30, 30, 601)))
    gam = np.arange(0.0, 10.0 + 1e-9, 0.1)
    t = ((1 - q) / q)[None, :]
    bracket = gam[:, None] * (gam[:, None] - 1) * np.log1p(t) + 2 * gam[:, None] * t + t * t
    num["p1_nonpositive"], num["p1_points"] = int((bracket <= 0).sum()), int(bracket.size)
    fd_q = np.linspace(0.05, 0.95, 19)
    fd = [(focal_loss_true_class(fd_q + 1e-4, g) - 2 * focal_loss_true_class(fd_q, g)
           + focal_loss_true_class(fd_q - 1e-4, g)) / 1e-8 for g in (0.5, 2.0, 5.0)]
    num["p1_fd_min"] = float(np.min(fd))
    log.add("Focal loss is convex in the prediction for all γ ≥ 0", "Prop. 1",
            f"sign of closed-form f''(q) on {num['p1_points']} (q, γ) points, γ in [0, 10], q = sigmoid(-30..30); "
            "finite differences", f"{num['p1_nonpositive']} points with f'' ≤ 0; min finite-difference f'' = "
            f"{num['p1_fd_min']:.2e}", check(num["p1_nonpositive"] == 0 and num["p1_fd_min"] > 0))


def _example(rep) -> None:
    num, log = rep["numbers"], rep["claims"].at(SECTIONS["map"])
    num["ex_scipy"] = _binary_minimizer(0.8, 2.0)
    num["ex_minimizer"] = float(focal_risk_minimizer(np.array([0.2, 0.8]), 2.0)[1])
    err = abs(num["ex_scipy"] - num["ex_minimizer"]) + 1e-12
    num["v_ex"] = log.add(
        "80 positives / 20 negatives: focal (γ = 2) predicts about 0.62", "Sec. 3.1",
        f"scipy bounded minimisation of 0.8 f(q) + 0.2 f(1-q) (xatol 1e-12) and the KKT minimiser; printed to 2 "
        f"decimals: tolerance 0.005 + {err:.0e}", f"{num['ex_scipy']:.4f} (minimiser {num['ex_minimizer']:.4f})",
        printed_numbers((num["ex_scipy"], err, 0.62, 2))).verdict
    gs = np.array([0.0, 0.5, 1, 2, 5, 10, 30, 100])
    ex = np.array([_binary_minimizer(0.8, g) for g in gs])
    num["ex_gamma100"] = float(ex[-1])
    log.add("Varying γ > 0 gives any prediction between 0.8 and 0.5", "Sec. 3.1",
            f"minimiser at γ = {', '.join(f'{g:g}' for g in gs)}",
            f"{ex[0]:.3f} → {ex[-1]:.3f}, strictly decreasing: {bool(np.all(np.diff(ex) < 0))}",
            check(bool(np.all(np.diff(ex) < 0)) and abs(ex[0] - 0.8) < 1e-6 and 0.5 < ex[-1] < 0.52))


def _prop2_4(rep) -> None:
    num, log, sz = rep["numbers"], rep["claims"].at(SECTIONS["map"]), rep["sizes"]
    etas = np.linspace(0.05, 0.95, 19)
    num["p2_back"] = float(max(np.abs(binary_focal_calibration_map(np.array([_binary_minimizer(e, g) for e in etas]), g)
                                      - etas).max() for g in (0.5, 1.0, 2.0, 3.0, 5.0)))
    log.add("The binary focal calibration map sends the focal risk minimiser to the true probability", "Prop. 2",
            "scipy minimiser for 19 η × 5 γ, then the map", f"max |p̂(q*) − η| = {num['p2_back']:.1e}",
            check(num["p2_back"] < 1e-6))
    qq = np.linspace(0.001, 0.999, 999)
    with np.errstate(all="ignore"):
        printed = {g: 1 / (1 + ((1 - qq) / qq) ** g * ((1 - qq) - g * qq * np.log(qq))
                           / (qq - g * (1 - qq) * np.log(1 - qq))) for g in (0.5, 2.0, 5.0)}
    num["p2_formula"] = float(max(np.abs(printed[g] - binary_focal_calibration_map(qq, g)).max() for g in printed))
    mono = all(np.all(np.diff(printed[g]) > 0) for g in printed)
    log.add("Printed binary map equals Eq. (1) with n = 2 and is a bijection", "Prop. 2, Eq. (1)",
            "both formulas on 999 q, γ ∈ {0.5, 2, 5}; monotonicity",
            f"max difference {num['p2_formula']:.1e}; increasing: {mono}", check(num["p2_formula"] < 1e-12 and mono))
    arg_err = 0.0
    for g in (0.5, 3.0):
        lstar = properized_focal_loss(np.stack([1 - qq, qq], -1), g)
        for e in (0.1, 0.3, 0.5, 0.8, 0.9):
            arg_err = max(arg_err, abs(qq[np.argmin(conditional_risk(np.array([1 - e, e]), lstar))] - e))
    num["p2_proper"] = arg_err
    log.add("The properized binary focal loss L* is proper", "Prop. 2",
            "argmin over a 0.001-grid of q of η L*(q,1) + (1−η) L*(q,0), 5 η × γ ∈ {0.5, 3}",
            f"max |argmin − η| = {arg_err:.1e}", check(arg_err < 1e-9))
    err_s, err_m, rng = 0.0, 0.0, np.random.default_rng(0)
    for n in (3, 4):
        for e in rng.dirichlet(np.ones(n), 4):
            for g in (1.0, 3.0):
                err_s = max(err_s, np.abs(focal_calibration_map(focal_minimizer_scipy(e, g), g) - e).max())
                err_m = max(err_m, np.abs(focal_calibration_map(focal_risk_minimizer(e, g), g) - e).max())
    num["p4_scipy"], num["p4_minimizer"] = float(err_s), float(err_m)
    log.add("Multiclass map (Eq. 1) sends the focal risk minimiser to the true distribution", "Prop. 4",
            "8 random η (3 and 4 classes) × γ ∈ {1, 3}; Nelder-Mead minimiser and focal_risk_minimizer",
            f"max error {err_s:.1e} (scipy), {err_m:.1e} (minimiser)", check(err_s < 1e-6 and err_m < 1e-10))
    p, grid = np.array([0.55, 0.3, 0.15]), simplex_grid(sz["simplex_res"])
    at = [int(np.argmin(conditional_risk(p, properized_focal_loss(grid, g)))) for g in (1.0, 3.0)]
    num["p4_proper_dist"] = float(max(np.abs(grid[i] - p).max() for i in at))
    rep["claims"].at(SECTIONS["multi"]).add(
        "The properized multiclass focal loss is proper (risk minimised at p = (0.55, 0.3, 0.15))", "Prop. 4, Fig. 4",
        f"argmin of the risk over {len(grid)} simplex points, γ ∈ {{1, 3}}",
        f"argmin at distance {num['p4_proper_dist']:.1e} from p", check(num["p4_proper_dist"] < 1e-12))


def _prop3(rep) -> None:
    num, log, sz = rep["numbers"], rep["claims"].at(SECTIONS["prop3"]), rep["sizes"]
    gam = np.arange(sz["p3_gamma_step"], 10 + 1e-9, sz["p3_gamma_step"])
    dense = prop3_logit_check(gam, np.arange(-20, 20 + 1e-9, sz["p3_s_step"]))
    s_mp = np.arange(-20, 20 + 1e-9, sz["mp_step"])
    mp_checks = {g: prop3_check(g, s_mp) for g in (0.1, 1.0, 4.0, 10.0)}
    mp_bad = {r: sum(c[r][0] for c in mp_checks.values()) for r in mp_checks[4.0]}
    num.update({f"p3_{r}": dense[r] for r in ("as_printed", "temperatures_printed_order", "temperatures_reversed")})
    num.update(p3_points=dense["points"], p3_gammas=len(gam), p3_margin_low=dense["margin_low"],
               p3_margin_high=dense["margin_high"], p3_mp_points=4 * int(np.count_nonzero(s_mp)),
               p3_mp_reversed=mp_bad["temperatures_reversed"], p3_mp_as_printed=mp_bad["as_printed"])
    g4, s_ce = 4.0, 2.0
    k1, k2 = g4 + 1, g4 + 1 - math.log(g4 + 1) / 2
    fc = 1 / (1 + math.exp(-(k1 * s_ce - float(binary_logit_correction(s_ce, g4)))))
    num["p3_cx"] = (1 / (1 + math.exp(-s_ce / k1)), fc, 1 / (1 + math.exp(-s_ce / k2)))
    num["v_p3"] = log.add(
        "FC lies between the temperature maps T = 1/(γ+1) and 1/(γ+1−log(γ+1)/2) for all logits, as the printed "
        "inequality orders them", "Prop. 3",
        f"logit space (float64) on {dense['points']} points: {len(gam)} γ in (0, 10], logits in [−20, 20] step "
        f"{sz['p3_s_step']}; mpmath on {num['p3_mp_points']} points (γ ∈ {{0.1, 1, 4, 10}}); three readings",
        f"as printed (exponent −s/(γ+1)): {dense['as_printed']} violations, e.g. γ = 4, s = 2: "
        f"{num['p3_cx'][0]:.3f} < FC = {fc:.4f} < {num['p3_cx'][2]:.3f} is false; with s/T: "
        f"{dense['temperatures_printed_order']}; with s/T and both inequalities reversed: "
        f"{dense['temperatures_reversed']} (mpmath {mp_bad['temperatures_reversed']}), smallest margins of C(s)/s "
        f"{dense['margin_low']:.1e} and {dense['margin_high']:.1e}, far above float64 rounding",
        corrected(dense["as_printed"] == 0 and mp_bad["as_printed"] == 0,
                  dense["temperatures_reversed"] == 0 and mp_bad["temperatures_reversed"] == 0,
                  "σ((γ+1−log(γ+1)/2) s) < FC(s) < σ((γ+1) s) for s > 0, reversed for s < 0, equal at s = 0")).verdict
    num["T4_theory"] = temperature_bounds(g4)
    log.add("γ = 4: theoretical bounds T = 0.2 and 0.238", "Sec. 3.2", "temperature_bounds(4), a closed form; "
            "tolerance 0.05 and 0.0005 (printed digits)", f"{num['T4_theory'][0]:.4f}, {num['T4_theory'][1]:.4f}",
            printed_numbers((num["T4_theory"][0], 0.0, 0.2, 1), (num["T4_theory"][1], 0.0, 0.238, 3)))
    num["T4_tight"] = tightest_temperature_bounds(g4)
    coarse = tightest_temperature_bounds(g4, n=10001)
    err = max(abs(a - b) for a, b in zip(num["T4_tight"], coarse)) + 1e-12
    num["T4_grid"] = paper_grid_temperature_bounds(g4, s_step=sz["s_step"])
    num["T4_grid32"] = paper_grid_temperature_bounds(g4, s_step=sz["s_step"], dtype=np.float32)
    s_ax = np.linspace(1, 20, 19001)
    t_of = 1 / (g4 + 1 - binary_logit_correction(s_ax, g4) / s_ax)
    in_206 = s_ax[(t_of >= 0.2055) & (t_of < 0.2065)]
    num["T4_range206"] = (float(in_206.min()), float(in_206.max()))
    num["v_T4_tight"] = log.add(
        "γ = 4: numerically tightest bounds on logits (−20, 20) are T = 0.206 and 0.218", "Sec. 3.2, Fig. 3",
        f"exact logit-space minimum/supremum of C(s)/s (error {err:.0e}: 20001 vs 10001 logits); the paper's grid "
        "search emulated in float64 and float32; " + _tol(err, 3),
        f"exact {num['T4_tight'][0]:.4f}, {num['T4_tight'][1]:.4f}; grid float64 {num['T4_grid'][0]:.3f}, "
        f"{num['T4_grid'][1]:.3f}; float32 {num['T4_grid32'][0]:.3f}, {num['T4_grid32'][1]:.3f}; 0.206 needs logits "
        f"limited to ±{num['T4_range206'][0]:.1f}..{num['T4_range206'][1]:.1f}",
        printed_numbers((num["T4_tight"][0], err, 0.206, 3), (num["T4_tight"][1], err, 0.218, 3))).verdict


def _tol(err, decimals):
    return f"tolerance {0.5 * 10 ** -decimals:g} (printed digits) + {err:.1e} (ours)"


def _binary_fits(rep) -> None:
    num, log, sz = rep["numbers"], rep["claims"].at(SECTIONS["binary"]), rep["sizes"]
    gb = np.round(np.arange(0.05, 10 + 1e-9, sz["bin_gamma_step"]), 3)
    fit = fit_with_error(gb, 2, 0.01, 20.0, stride=max(1, len(gb) // 25))
    rep["binary_fit"] = fit
    num["bin_fit"] = (fit["slope"], fit["intercept"], fit["max_residual"])
    num.update(bin_err_slope=fit["err_slope"], bin_err_intercept=fit["err_intercept"])
    num["v_bin_fit"] = log.add(
        "Binary: closest temperature follows 1/T ≈ 0.95γ + 0.85", "Sec. 3.2, Fig. 2",
        f"minimax T per γ on logits [−20, 20] (step 0.01), γ = 0.05..10 (step {sz['bin_gamma_step']}); least squares; "
        + _tol(max(fit["err_slope"], fit["err_intercept"]), 2),
        f"1/T ≈ {fit['slope']:.3f}γ + {fit['intercept']:.3f} (± {fit['err_slope']:.0e}, {fit['err_intercept']:.0e}; "
        f"max residual {fit['max_residual']:.3f} in 1/T)",
        printed_numbers((fit["slope"], fit["err_slope"], 0.95, 2), (fit["intercept"], fit["err_intercept"], 0.85, 2))
    ).verdict
    dev = fit["dev"]
    num.update(bin_maxdev=float(dev.max()), bin_maxdev_gamma=float(gb[np.argmax(dev)]))
    over = gb[dev - fit["err_dev"][0] > 1e-3]
    num["bin_over_range"] = (float(over.min()), float(over.max())) if over.size else None
    i = int(np.argmax(dev))
    below, above = dev[i] + fit["err_dev"][1] < 1e-3, dev[i] - fit["err_dev"][0] > 1e-3
    num["v_bin_dev"] = log.add(
        "Binary: maximum approximation error below 1e-3 (probability scale)", "Sec. 3.2",
        f"minimax deviation max_s |FC(s) − sigmoid(s/T)| at the closest T, for every γ; a finer grid only raises it, "
        f"our error below {fit['err_dev'][0]:.0e}, above {fit['err_dev'][1]:.0e}",
        f"{dev.max():.2e} at γ = {num['bin_maxdev_gamma']:g}" + (
            f"; above 1e-3 for γ = {over.min():g}..{over.max():g}" if over.size else ""),
        check(bool(below)) if below or above else untested("the deviation is within our error of 1e-3")).verdict
    bclose = {g: closest_with_error(g, 2, 0.01, 20.0) for g in (0.5, 2.0, 3.0)}
    rep["binary_closest"] = {g: v[0] for g, v in bclose.items()}
    err = max(v[1] for v in bclose.values())
    num["v_fig2"] = log.add(
        "Fig. 2 right: closest T = 0.76 (γ = 0.5) and 0.36 (γ = 3)", "Fig. 2 caption",
        "closest_temperature on the binary logit grid; " + _tol(err, 2),
        f"γ = 0.5: {bclose[0.5][0]:.3f}; γ = 3: {bclose[3.0][0]:.3f} (γ = 2: {bclose[2.0][0]:.3f})",
        printed_numbers((bclose[0.5][0], err, 0.76, 2), (bclose[3.0][0], err, 0.36, 2))).verdict


def _multi_fits(rep) -> None:
    num, log, sz = rep["numbers"], rep["claims"].at(SECTIONS["fits"]), rep["sizes"]
    gam = np.arange(sz["gamma_step"], 10 + 1e-9, sz["gamma_step"])
    f3, f4 = fit_with_error(gam, 3, sz["step3"]), fit_with_error(gam, 4, sz["step4"])
    rep["ternary_fit"], rep["quaternary_fit"] = f3, f4
    num["tri_fit"], num["quad_fit"] = ((f["slope"], f["intercept"], f["max_residual"]) for f in (f3, f4))
    t9, _, d9, e9 = closest_with_error(9.0, 3, sz["step3"])
    num.update(tri_dev9=d9, quad_maxdev=float(f4["dev"].max()), tri_min_invT=float((1 / f3["T"]).min()),
               tri_err_intercept=f3["err_intercept"], quad_err_intercept=f4["err_intercept"])
    num["v_tri"] = log.add(
        "3 classes: 1/T ≈ 0.64γ + 0.91, 1/T > 1 for γ > 0, error 0 → 8% at γ = 9", "Sec. 3.3, Fig. 6",
        f"minimax T per γ over logit vectors in [−5, 5]² (step {sz['step3']}), γ = {gam[0]:g}..10; least squares; "
        + _tol(max(f3["err_slope"], f3["err_intercept"]), 2) + "; 8%: 0.5% + ours",
        f"1/T ≈ {f3['slope']:.3f}γ + {f3['intercept']:.3f} (± {f3['err_slope']:.3f}, {f3['err_intercept']:.3f}); "
        f"min 1/T = {num['tri_min_invT']:.3f}; error at γ = 9: {100 * d9:.1f}% (+ {100 * e9[1]:.1f})",
        printed_numbers((f3["slope"], f3["err_slope"], 0.64, 2), (f3["intercept"], f3["err_intercept"], 0.91, 2),
                        (100 * d9, (100 * e9[0], 100 * e9[1]), 8, 0))
        if num["tri_min_invT"] > 1 else check(False)).verdict
    num["v_quad"] = log.add(
        "4 classes: 1/T ≈ 0.47γ + 0.85, maximum error up to 8%", "Sec. 3.3",
        f"as above over logit vectors in [−5, 5]³ (step {sz['step4']}); "
        + _tol(max(f4["err_slope"], f4["err_intercept"]), 2),
        f"1/T ≈ {f4['slope']:.3f}γ + {f4['intercept']:.3f} (± {f4['err_slope']:.3f}, {f4['err_intercept']:.3f}); "
        f"max error {100 * f4['dev'].max():.1f}% (a finer grid only raises it)",
        printed_numbers((f4["slope"], f4["err_slope"], 0.47, 2), (f4["intercept"], f4["err_intercept"], 0.85, 2),
                        (100 * f4["dev"].max(), tuple(100 * e for e in f4["err_dev"]), 8, 0))).verdict
    tc = {g: closest_with_error(g, 3, sz["step3"]) for g in (0.5, 1.0, 2.0, 3.0)}
    rep["ternary_closest"] = {g: v[0] for g, v in tc.items()}
    err = max(v[1] for v in tc.values())
    num["v_fig5"] = log.add(
        "Fig. 5: closest T = 0.81 (γ = 1) and 0.46 (γ = 3)", "Fig. 5 caption", "closest_temperature, 3 classes; "
        + _tol(err, 2), f"γ = 1: {tc[1.0][0]:.3f}; γ = 3: {tc[3.0][0]:.3f} (γ = 0.5: {tc[0.5][0]:.3f}; "
        f"γ = 2: {tc[2.0][0]:.3f})", printed_numbers((tc[1.0][0], err, 0.81, 2), (tc[3.0][0], err, 0.46, 2))).verdict
    num["v_fig7"] = log.add(
        "Fig. 7: closest pairs (γ, T) = (0.5, 0.8) and (2, 0.46)", "Fig. 7 caption",
        "closest_temperature, 3 classes; tolerance 0.05 (T = 0.8) or 0.005 (T = 0.46) + " + f"{err:.1e} (ours)",
        f"γ = 0.5: {tc[0.5][0]:.3f}; γ = 2: {tc[2.0][0]:.3f}",
        printed_numbers((tc[0.5][0], err, 0.8, 1), (tc[2.0][0], err, 0.46, 2))).verdict


def _prop5(rep, rng) -> None:
    num, log, sz = rep["numbers"], rep["claims"].at(SECTIONS["prop5"]), rep["sizes"]
    worst, worst_above = np.inf, np.inf
    for n in (3, 5, 10):
        qr = rng.dirichlet(np.ones(n), sz["n_random"])
        j = np.argmax(qr, -1)[:, None]
        for g in (0.25, 1.0, 3.0, 10.0):
            d = (np.take_along_axis(focal_calibration_map(qr, g), j, -1) - np.take_along_axis(qr, j, -1))[:, 0]
            worst = min(worst, float(d.min()))
            above = np.take_along_axis(qr, j, -1)[:, 0] >= confidence_raising_threshold(g)
            worst_above = min(worst_above, float(d[above].min(initial=np.inf)))
    num["p5_worst"], num["p5_points"] = worst, 3 * sz["n_random"]
    num["p5_cx"] = float(_map_mpmath(np.array([0.2] + [0.1] * 8), 0.25)[0] - 0.2)
    num["p5_cx4"] = float(_map_mpmath([0.33, 0.329, 0.328, 0.013], 0.25)[0] - 0.33)
    num["v_p5"] = log.add(
        "Focal calibration (γ > 0) raises the top probability: p̂(q)_j ≥ max_i q_i", "Prop. 5, Fig. 5",
        f"{num['p5_points']} Dirichlet(1) points in 3, 5, 10 classes × γ ∈ {{0.25, 1, 3, 10}}; Eq. (1) in mpmath at "
        "q = (0.2, 0.1 × 8) and (0.33, 0.329, 0.328, 0.013), γ = 0.25", f"min of p̂_j − q_j = {worst:.2e}; "
        f"counterexamples p̂_1 − q_1 = {num['p5_cx']:.2e} and {num['p5_cx4']:.2e}",
        check(worst >= 0 and num["p5_cx"] >= 0 and num["p5_cx4"] >= 0)).verdict
    num["p5_worst_above"] = worst_above
    num["q_star"] = {g: confidence_raising_threshold(g) for g in (0.25, 1.0, 3.0)}
    log.add("(this book) Prop. 5 holds when max_i q_i ≥ q*(γ), the root of r(q) = 1", "Prop. 5, corrected",
            "same random points, restricted to max q ≥ q*(γ)", f"min of p̂_j − q_j = {worst_above:.2e}; q* = "
            + ", ".join(f"{v:.3f} (γ = {g:g})" for g, v in num["q_star"].items()), beyond(worst_above >= 0))
    tri, q2 = simplex_grid(sz["simplex_res"] * 5), np.linspace(0.5, 1, 2001)[1:-1]
    small = np.inf
    for g in (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0):
        top = np.argmax(tri, -1)[:, None]
        d3 = np.take_along_axis(focal_calibration_map(tri, g) - tri, top, -1)
        small = min(small, float(d3.min()), float((binary_focal_calibration_map(q2, g) - q2).min()))
    num["p5_small_k"] = small
    log.add("(this book) with 2 or 3 classes Prop. 5 holds for every γ", "Prop. 5, Fig. 5",
            f"{len(tri)} points of the 3-class simplex (grid 1/{sz['simplex_res'] * 5}) and 1999 binary q, "
            "γ ∈ {0.05, ..., 10}", f"min of p̂_j − q_j = {small:.1e} (0 at the uniform point)", beyond(small >= -1e-14))


def _bounds_curve(rep) -> None:
    gb = np.arange(rep["sizes"]["gamma_step"], 10 + 1e-9, rep["sizes"]["gamma_step"])
    th = np.array([temperature_bounds(g) for g in gb])
    ti = np.array([tightest_temperature_bounds(g) for g in gb])
    rep["bounds_curve"] = dict(gammas=gb, theory_steep=th[:, 0], theory_flat=th[:, 1], tight_steep=ti[:, 0],
                               tight_flat=ti[:, 1])


def report(profile: str = "cpu") -> TheoryReport:
    """Every check at the grid sizes of ``profile`` (smoke, cpu, gpu, paper). ``data`` holds
    ``sizes``, the raw ``numbers`` (tuples and dicts included) and the figure arrays
    (``binary_fit``, ``ternary_fit``, ``quaternary_fit``, ``binary_closest``,
    ``ternary_closest``, ``bounds_curve``); ``numbers`` are the glued scalars."""
    if profile not in SIZES:
        raise ValueError(f"profile must be one of {', '.join(SIZES)}; got {profile!r}")
    return kept("theory_fts", profile, lambda: _report(profile))


def _report(profile: str) -> TheoryReport:
    log = ClaimLog("komisarenko2024", "theory_fts", kind="theory")
    data = dict(profile=profile, sizes=SIZES[profile], numbers={}, claims=log, xatol=XATOL)
    rng = np.random.default_rng(0)
    for step in (_prop1, _example, _prop2_4, _binary_fits, _prop3, _multi_fits):
        step(data)
    _prop5(data, rng)
    _bounds_curve(data)
    data["numbers"] = plain(data["numbers"])
    del data["claims"]
    rep = TheoryReport(profile, log, data=data, sections=dict(SECTIONS))
    rep.put(**glue_numbers(data))
    return rep


def claims(profile: str = "cpu") -> ClaimLog:
    """The claims log of the chapter (the registry's builder for ``komisarenko2024``)."""
    return report(profile).log


def glue_numbers(report: dict) -> dict:
    """The scalars the chapter glues, by name, from :func:`report`'s ``data`` (tuples and
    dicts of the raw ``numbers`` spelled out; deviations in percent where the prose quotes
    percent)."""
    n = dict(report["numbers"])
    out = {k: v for k, v in n.items() if not isinstance(v, (tuple, list, dict)) and v is not None}
    out.update(bin_slope=n["bin_fit"][0], bin_intercept=n["bin_fit"][1], tri_slope=n["tri_fit"][0],
               tri_intercept=n["tri_fit"][1], quad_slope=n["quad_fit"][0], quad_intercept=n["quad_fit"][1],
               tri_dev9=100 * n["tri_dev9"], quad_maxdev=100 * n["quad_maxdev"], T4_s_step=report["sizes"]["s_step"],
               T4_range_lo=n["T4_range206"][0], T4_range_hi=n["T4_range206"][1],
               p3_cx_a=n["p3_cx"][0], p3_cx_fc=n["p3_cx"][1], p3_cx_b=n["p3_cx"][2])
    if n["bin_over_range"]:
        out.update(bin_over_lo=n["bin_over_range"][0], bin_over_hi=n["bin_over_range"][1])
    for i, side in enumerate(["steep", "flat"]):
        for key in ("T4_theory", "T4_tight", "T4_grid"):
            out[f"{key}_{side}"] = n[key][i]
    for name, temps in (("bin_T", report["binary_closest"]), ("tri_T", report["ternary_closest"])):
        out.update({f"{name}_{g:g}".replace(".", ""): t for g, t in temps.items()})
    out.update({f"qstar_{g:g}".replace(".", ""): v for g, v in n["q_star"].items()})
    return out
