"""The gradient claims of Mukhoti et al. 2020: Prop. 1, the shape of ``g`` (App. B), Prop. 2, FLSD-53.

Each function adds its rows to the report built by :func:`replicate.theory.focal_loss.claims.report`
(which sets the chapter section first), with the numbers the chapter quotes and the data of
its figures.
"""
from __future__ import annotations

import numpy as np

from ...claims import beyond, check, conditional, readings
from ..curve_shape import curve_shape
from ..report import TheoryReport
from .autograd import gradient_factor_autograd, prop1_batch
from .gradient import (focal_gradient_factor, gradient_factor_dp, gradient_threshold, k_term, k_term_dp,
                       log_gradient_factor)
from .lambert import eq10_rhs, lambert_w_gamma, lambert_w_gamma_branches, lambert_w_gamma_rootfind

__all__ = ["prop1", "shape", "prop2", "flsd", "g_complex_step", "SHAPE_GAMMAS", "SLOPE_GAMMAS", "FLAT"]

#: gamma values of the shape checks (App. B is stated for every gamma > 0).
SHAPE_GAMMAS = np.arange(0.5, 10.01, 0.5)
#: gamma values of the check of the literal reading of "dg/dp monotonically decreases".
SLOPE_GAMMAS = (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 7, 10)
#: Steps of g this small count as flat (a few ulps of g <= ~1.6).
FLAT = 8 * np.finfo(float).eps


def g_complex_step(p, gamma, h: float = 1e-30):
    """``dg/dp`` of the printed formula ``(1-p)^gamma - gamma p (1-p)^(gamma-1) log p`` by the
    complex step ``Im g(p + i h) / h`` (exact to rounding; independent of Eq. 7)."""
    z = np.asarray(p, dtype=np.float64) + 1j * h
    return ((1 - z) ** gamma - gamma * z * (1 - z) ** (gamma - 1) * np.log(z)).imag / h


def prop1(rep: TheoryReport, sz: dict) -> None:
    n, k = sz["n_autograd"], sz["n_autograd_all"]
    net, x, y = prop1_batch(n)
    res = gradient_factor_autograd(net, x, y, gamma=3.0)
    g = focal_gradient_factor(res["p"], 3.0)
    ce_norm = np.linalg.norm(res["grad_ce"], axis=1)
    dev_fc = np.abs(res["grad_focal"] - g[:, None] * res["grad_ce"]).max() / ce_norm.max()
    step = n // k
    res_all = gradient_factor_autograd(net, x[::step][:k], y[::step][:k], gamma=3.0, params="all")
    g_all = focal_gradient_factor(res_all["p"], 3.0)
    dev_all = (np.abs(res_all["grad_focal"] - g_all[:, None] * res_all["grad_ce"]).max()
               / np.linalg.norm(res_all["grad_ce"], axis=1).max())
    ratio = np.linalg.norm(res["grad_focal"], axis=1) / ce_norm
    ok_iff = np.array_equal(ratio <= 1 + 1e-12, g <= 1 + 1e-12)
    grid = np.linspace(0, 1, sz["n_grid"])
    g_min = min(focal_gradient_factor(grid, gam).min() for gam in np.arange(0, 10.5, 0.5))
    n_all = res_all["grad_ce"].shape[1]
    rep.put(n_autograd=n, dev_fc=dev_fc, dev_all=dev_all, n_params_all=n_all, g_min=g_min,
            p_min=res["p"].min(), p_max=res["p"].max())
    rep.data["prop1"] = {"p": res["p"], "ratio": res["ratio"], "keep": ce_norm > 1e-9 * ce_norm.max()}
    rep.claim("identity", "∂L_f/∂w = g(p, γ) ∂L_c/∂w for the last-layer weights", "Prop. 1 / App. B Prop. 3",
              f"autograd, tiny CNN fc layer, {n} images, γ = 3", f"max rel. deviation {dev_fc:.1e}",
              check(dev_fc < 1e-12))
    rep.claim("all_params", "the identity holds for every parameter, not only the last layer", "Prop. 1",
              f"autograd over all {n_all} parameters, {k} images", f"max rel. deviation {dev_all:.1e}",
              beyond(dev_all < 1e-12))
    rep.claim("norm_iff", "‖∂L_f/∂w‖ ≤ ‖∂L_c/∂w‖ iff g ∈ [0, 1]", "Prop. 1",
              "autograd norm ratio vs g; g ≥ 0 on a grid of p and γ ∈ [0, 10]",
              f"ratio ≤ 1 exactly where g ≤ 1: {ok_iff}; min g = {g_min:.2g}", check(ok_iff and g_min >= 0))


def _shape_grid(n_grid: int) -> np.ndarray:
    """p from 1e-300 to 1 - 1e-12: logarithmic towards both ends, linear in between."""
    return np.unique(np.r_[np.logspace(-300, -4, 40), np.linspace(0, 1, n_grid)[1:-1],
                           1 - np.logspace(-4, -12, 30)])


def shape(rep: TheoryReport, sz: dict) -> None:
    pin = _shape_grid(sz["n_grid"])
    full = np.r_[0.0, pin, 1.0]
    inner = np.linspace(0.001, 0.999, sz["n_grid"])
    eq7_err = max(np.max(np.abs(gradient_factor_dp(inner, gam) - g_complex_step(inner, gam))
                         / np.maximum(1.0, np.abs(g_complex_step(inner, gam)))) for gam in (0.5, 1, 2, 3, 5, 7))
    rep.claim("eq7", "dg/dp = γ(1-p)^(γ-2) [-2(1-p) - (1-p) log p + (γ-1) p log p]", "App. B, Eq. 7",
              f"complex-step derivative of g, {len(inner)} values of p, γ ∈ {{0.5, 1, 2, 3, 5, 7}}",
              f"max rel. difference {eq7_err:.1e}", check(eq7_err < 1e-10))
    with np.errstate(divide="ignore"):
        at1 = {gam: float(gam * np.power(0.0, gam - 2.0)) for gam in SHAPE_GAMMAS}
    rep.claim("eq7_factor", "γ(1-p)^(γ-2) > 0 except at p = 1, where it is 0", "App. B, below Eq. 7",
              "value at p = 1 for γ = 0.5 … 10",
              f"at p = 1: {at1[1.0]} (γ = 1), {at1[2.0]:g} (γ = 2), {at1[3.0]:g} (γ = 3)",
              conditional(all(v == 0 for v in at1.values()), all(v == 0 for gm, v in at1.items() if gm > 2),
                          "γ > 2 (at p = 1 it is 2 for γ = 2 and infinite for γ < 2)"))
    k_mono, k_ends, shapes = True, 0.0, {}
    for gam in SHAPE_GAMMAS:
        kk = k_term(pin, gam)
        k_mono &= bool(np.all(k_term_dp(pin, gam) < 0)) and curve_shape(kk, FLAT)["turns"] == 0
        k_ends = max(k_ends, abs(kk[0] - 1), abs(kk[-1] + 1 + gam))
        shapes[gam] = curve_shape(focal_gradient_factor(full, gam), FLAT)
    lit = {}  # does dg/dp itself decrease, to a negative value at p -> 1?
    for gam in SLOPE_GAMMAS:
        dg, sh = gradient_factor_dp(pin, gam), curve_shape(gradient_factor_dp(pin, gam), FLAT)
        lit[gam] = sh["turns"] == 0 and not sh["rises"] and dg[-1] < 0
    lit_small = all(v for gm, v in lit.items() if gm <= 1)
    lit_big = [gm for gm, v in lit.items() if gm > 1 and v]
    rep.claim("k_mono", "k(p, γ) decreases monotonically from 1 (p → 0) to -(1+γ) (p → 1)", "App. B, Eq. 9",
              "sign of dk/dp and steps of k from p = 1e-300 to 1 - 1e-12, γ = 0.5 … 10",
              f"monotone: {k_mono}; largest miss of the end values {k_ends:.1e} (k → 1 only logarithmically)",
              check(k_mono and k_ends < 0.01))
    rep.claim("slope_reading", "“the gradient dg/dp monotonically decreases from a positive value at p = 0 "
              "to a negative value at p = 1”", "App. B, below Eq. 9",
              f"its sign (k) and dg/dp itself (Eq. 7) on the same grid, γ ∈ {{{', '.join(map(str, SLOPE_GAMMAS))}}}",
              f"the sign decreases for every γ; dg/dp itself for γ ≤ 1 only (for γ > 1 it rises back to 0 at "
              f"p = 1; γ > 1 passing: {lit_big or 'none'})",
              readings(sign_of_the_slope=k_mono and k_ends < 0.01,
                       slope_itself=conditional(all(lit.values()), lit_small and not lit_big,
                                                "γ ≤ 1")))
    uni = all(s["single_maximum"] for s in shapes.values())
    n_flat = int(np.argmax(np.diff(focal_gradient_factor(full, 3.0)) != 0))
    rep.claim("unimodal", "g rises from 1 (p → 0) to a single maximum, then falls to 0 (p = 1)", "App. B, Eq. 7-9",
              f"sign changes of the steps of g on {len(full)} points from p = 0 to 1 (steps within "
              f"{FLAT:.0e} count as flat), γ = 0.5 … 10", f"one maximum for every γ: {uni}", check(uni))
    grid = np.linspace(0, 1, sz["n_grid"])
    steep = [-np.diff(focal_gradient_factor(grid, gam)).min() / np.diff(grid)[0] for gam in range(1, 8)]
    g05 = focal_gradient_factor(0.5, np.arange(7, 20.01, 0.5))
    rep.put(n_flat=n_flat, steep_1=steep[0], steep_7=steep[-1], g05_7=g05[0], eq7_err=eq7_err)
    rep.claim("steeper", "the fall of g gets steeper as γ grows", "Sec. 4", "steepest slope of g, γ = 1 … 7",
              f"{steep[0]:.2f} (γ = 1) … {steep[-1]:.2f} (γ = 7)", check(np.all(np.diff(steep) > 0)))
    rep.claim("nearly0", "for γ ≥ 7, g is nearly 0 (< 0.05) around p = 0.5", "Sec. 4", "g(0.5, γ), γ = 7 … 20",
              f"at most {g05.max():.3f} (γ = 7)", check(g05.max() < 0.05))


def prop2(rep: TheoryReport, sz: dict) -> None:
    half = np.linspace(0.001, 0.5, sz["n_grid"] // 2 + 1)  # ends exactly at 1/2
    pe = np.unique(np.r_[half, 1 - half])
    a, b = 1 - pe, pe * np.log(pe)
    z = -(a ** (1 - a / b) / b) * np.log(a)  # Eq. 10's r.h.s. (times log a), written out
    i = int(np.argmin(z))
    z_dev = np.max(np.abs(z - eq10_rhs(pe)) / np.abs(z))
    rep.put(z_min=z[i], z_argmin=pe[i], z_max=z.max(), z_dev=z_dev)
    rep.claim("eq10", "the r.h.s. of Eq. 10 (the Lambert-W argument) is always negative, with minimum -1/e at p0 = 0.5",
              "App. B, below Eq. 10", f"direct formula on {len(pe)} values of p0 ∈ (0, 1)",
              f"z ∈ [{z[i]:.4f}, {z.max():.1e}], smallest at p0 = {pe[i]:.3f}; -1/e = {-np.exp(-1):.4f}",
              check(np.all(z < 0) and abs(z[i] + np.exp(-1)) < 1e-12 and pe[i] == 0.5
                    and z.min() >= -np.exp(-1) * (1 + 1e-12)))
    p0 = np.linspace(0.001, 0.499, sz["n_p0"])
    closed, root = lambert_w_gamma(p0), lambert_w_gamma_rootfind(p0)
    rel_err = np.max(np.abs(closed - root) / root)
    resid = np.max(np.abs(focal_gradient_factor(p0, closed) - 1))
    rep.claim("lambert", "γ* = a/b + W₋₁(-a^(1-a/b) log a / b)/log a solves g(p0, γ*) = 1 (item i)",
              "Prop. 2 / Eq. 11",
              f"Brent root finder, {len(p0)} values of p0 in (0, 0.5)",
              f"max rel. error {rel_err:.1e}; max |g(p0, γ*) - 1| = {resid:.1e}",
              check(rel_err < 1e-8 and resid < 1e-9))
    low_lo, princ_lo = lambert_w_gamma_branches(p0)
    low_hi, princ_hi = lambert_w_gamma_branches(1 - p0)
    trivial_above = bool(np.abs(low_hi).max() < 1e-9)  # Eq. 11 gives gamma* = 0 for p0 > 1/2

    def below_half(ok):  # checked for p0 < 1/2; stated for every p0, where gamma* = 0 makes g = 1 everywhere
        return conditional(ok and not trivial_above, ok, "p0 < 1/2: for p0 > 1/2 Eq. 11 gives the trivial root "
                                                         "γ* = 0 (cross-entropy, g ≡ 1)")

    below, above = [], []
    for q0 in np.linspace(0.02, 0.48, sz["n_items"]):
        gs = lambert_w_gamma(q0)  # accurate to ~1e-9: leave out p within 1e-6 (relative) of p0
        below.append(log_gradient_factor(q0 * np.r_[np.logspace(-300, -1, 61), np.linspace(0.1, 1 - 1e-6, 200)],
                                         gs).min())
        above.append(log_gradient_factor(q0 + (1 - q0) * np.r_[np.logspace(-6, -1, 31), np.linspace(0.1, 1, 200)],
                                         gs).max())
    how = (f"sign of log g(p, γ*) (exact even where g rounds to 1) for {sz['n_items']} values of p0 ∈ "
           "[0.02, 0.48]; p from 1e-300 to 1 outside p0(1 ± 1e-6); Eq. 11 for p0 ∈ (1/2, 1)")
    rep.claim("item2", "(ii) g(p, γ*) > 1 for p < p0", "Sec. 4, after Prop. 2", how,
              f"smallest log g below p0: {min(below):.1e}; γ* = 0 for p0 > 1/2", below_half(min(below) > 0))
    rep.claim("item3", "(iii) g(p, γ*) < 1 for p > p0", "Sec. 4, after Prop. 2", how,
              f"largest log g above p0: {max(above):.1e}; γ* = 0 for p0 > 1/2", below_half(max(above) < 0))
    worst = -np.inf
    for q0 in np.linspace(0.02, 0.48, sz["n_items"]):
        gs, pp = lambert_w_gamma(q0), np.linspace(q0, 1, sz["n_grid"])
        for m in (1.0, 1.01, 1.5, 2.0, 5.0):
            gv = focal_gradient_factor(pp, gs * m)
            worst = max(worst, gv[1:].max() - 1 if m == 1.0 else gv.max() - 1)
    rep.claim("prop2", "for p ≥ p0 and γ ≥ γ*, g(p, γ) ≤ 1 (equality only at p0, γ*)", "Prop. 2",
              f"grid of p ∈ [p0, 1], {sz['n_items']} values of p0 ∈ [0.02, 0.48], "
              "γ = γ*·{1, 1.01, 1.5, 2, 5}; Eq. 11 for p0 ∈ (1/2, 1)",
              f"largest g - 1 away from (p0, γ*): {worst:.1e}; for p0 > 1/2, |γ*| ≤ {np.abs(low_hi).max():.0e}",
              below_half(worst < 0))
    gam = np.logspace(-6, 2, 81)
    none_above = max(log_gradient_factor(q, gam).max() for q in np.linspace(0.5, 0.999, 50)) < 0
    rep.put(n_p0=len(p0), w_rel_err=rel_err, w_resid=resid, w0_max=np.abs(princ_lo).max(),
            wm1_hi_max=np.abs(low_hi).max(), w0_hi_min=princ_hi.min(), p2_worst=worst,
            ii_min=min(below), iii_max=max(above))
    rep.data["prop2"] = {"p0": p0, "closed": closed, "root": root}
    rep.claim("exists", "a γ > 0 with g(p0, γ) = 1 exists for any threshold p0 ∈ [0, 1]",
              "App. B, proof of Prop. 4",
              "Brent root for p0 < 1/2; log g(p0, γ) on γ ∈ [1e-6, 100] for 50 values of p0 ∈ [0.5, 0.999]",
              f"a root for every p0 < 1/2 (γ* from {root.max():.0f} down to {root.min():.3f}); none for p0 ≥ 1/2 "
              f"(g < 1 for every γ > 0 there): {none_above}",
              conditional(not none_above, bool(np.all(np.isfinite(root) & (root > 0))) and none_above,
                          "only for 0 < p0 < 1/2: γ* → ∞ as p0 → 0 and γ* → 0 as p0 → 1/2"))
    rep.claim("w0",
              "alongside γ* (branch W₋₁), the principal branch W₀ yields a negative γ, which is discarded",
              "App. B, Eq. 12", "lambert_w_gamma_branches for p0 < 1/2 (and for 1 - p0)",
              f"W₀ gives the trivial root γ = 0 (g(p0, 0) = 1; max |γ| {np.abs(princ_lo).max():.1e}); "
              f"it is negative (down to {princ_hi.min():.2f}) only for p0 > 1/2, where W₋₁ gives 0",
              check(np.all(princ_lo < -1e-6)))


def flsd(rep: TheoryReport, sz: dict) -> None:
    n = dict(g019_5=focal_gradient_factor(0.19, 5), pc5=gradient_threshold(5.0), pc3=gradient_threshold(3.0),
             pc2=gradient_threshold(2.0), pc1=gradient_threshold(1.0), gs019=lambert_w_gamma(0.19),
             gs02=lambert_w_gamma(0.2), gs025=lambert_w_gamma(0.25), gs049=lambert_w_gamma(0.49))
    n["frac_reg_532"] = (0.5 - n["pc3"]) / (0.5 - 0.2)
    rep.put(**n)
    rep.claim("g019", "g(0.19, 5) ≈ 1, so γ = 5 accelerates (g > 1) below p ≈ 0.2", "Sec. 5",
              "formula; gradient_threshold(5); lambert_w_gamma(0.2)",
              f"g(0.19, 5) = {n['g019_5']:.3f}; g(·, 5) crosses 1 at p = {n['pc5']:.3f}; γ*(0.2) = {n['gs02']:.2f}",
              check(abs(n["g019_5"] - 1) < 0.05 and abs(n["pc5"] - 0.2) < 0.01))
    p = np.linspace(0, 1, sz["n_grid"])[1:-1]
    ok = []
    for sched in ((0.2, (5.0, 3.0)), ((0.2, 0.5), (5.0, 3.0, 2.0))):
        gam = np.asarray(sched[1])[np.searchsorted(np.atleast_1d(sched[0]), p, side="right")]
        g = focal_gradient_factor(p, gam)
        ok.append(bool(np.all(g[p < 0.5] > 1) and np.all(g[p >= 0.5] < 1)))
    rep.claim("schedule", "the sample-wise γ (5, 3 and 5, 3, 2) accelerates (g > 1) while p < 0.5 and regularises "
              "(g < 1) once p ≥ 0.5", "Sec. 5", f"g(p, γ(p)) of both schedules on {len(p)} values of p",
              f"γ = 3 has g < 1 from p = {n['pc3']:.3f}, i.e. on {n['frac_reg_532']:.0%} of (0.2, 0.5]; "
              f"every γ > 0 crosses 1 below p = 1/2 (γ = 1: 1/e)", check(all(ok)))
