"""Every claim of Ghosh et al. 2022 (AdaFocal, {cite}`ghosh2022adafocal`) that needs no training, checked.

:func:`report` runs the checks at the grid sizes of a profile and returns a
:class:`~replicate.theory.report.TheoryReport` (claims, the numbers of the chapter's prose,
the data of its figures); :func:`claims` returns the claims only (the registry's builder).
Verdicts use :mod:`replicate.claims.vocabulary`; each row names the chapter heading that
decides it. The updates are those of :func:`replicate.losses.adafocal_gamma_update`, the
one implementation used in training.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ...claims import ClaimLog, beyond, check, conditional, untested
from ..focal_loss.gradient import gradient_factor_dgamma, gradient_shrink_threshold
from ..focal_loss.risk import entropy, focal_expected_loss, focal_kl_bound, focal_risk_minimizer
from ..report import TheoryReport, run_checks
from .dynamics import (UNBOUNDED_GAMMA_MAX, calfocal_gamma, calfocal_loss_curve, calfocal_slopes, fixed_point,
                       gap_scenarios, linearised_factor, simulate_closed_loop, simulate_gamma)

__all__ = ["SIZES", "SECTIONS", "RULES", "LAMS", "report", "claims", "toy_response"]

PAPER, CHAPTER = "ghosh2022", "theory_adafocal"

#: Grid sizes per profile (a theory chapter scales only its grids with the profile).
SIZES = {
    "smoke": dict(n_grid=201, n_gamma=81, n_random=2_000, random_epochs=50, random_bins=16),
    "cpu": dict(n_grid=2001, n_gamma=801, n_random=20_000, random_epochs=200, random_bins=64),
    "paper": dict(n_grid=4001, n_gamma=2001, n_random=100_000, random_epochs=400, random_bins=256),
}
SIZES["gpu"] = SIZES["cpu"]

SECTIONS = {
    "calfocal": "CalFocal: the loss shape (Figure 3a)",
    "focal": "What AdaFocal takes from focal loss (Sec. 3 and footnote 2)",
    "adafocal": "From CalFocal to AdaFocal",
    "loop": "Does γ settle where the gap is zero?",
}
#: The three gamma-update rules compared (keyword arguments of ``simulate_gamma``).
RULES = {"Eq. 3 (no cap)": dict(variant="paper", gamma_max=UNBOUNDED_GAMMA_MAX),
         "Eq. 4 (paper)": dict(variant="paper"), "authors' code": dict(variant="code")}
#: lambda values of the CalFocal curves.
LAMS = (1.0, 10.0, 100.0)
#: The closed-loop toy: training-bin fit and validation accuracy; the lambdas tried.
A_TRAIN, A_VAL, LOOP_LAMS, LOOP_EPOCHS = 0.99, 0.90, (1, 10, 30), 100


def toy_response(gamma: float, a_train: float = A_TRAIN, a_val: float = A_VAL) -> float:
    """The toy bin's gap ``E(gamma) = q*(a_train, gamma) - a_val`` (``q*``: binary focal risk minimiser)."""
    return float(focal_risk_minimizer([a_train, 1 - a_train], gamma)[0]) - a_val


def _calfocal(rep: TheoryReport, sz: dict) -> None:
    p = np.linspace(0.005, 0.995, sz["n_grid"])
    curves = {lam: calfocal_loss_curve(p, a_val=0.8, lam=lam) for lam in LAMS}
    sl = calfocal_slopes(p, 0.8, 100.0)
    i70, i79, i85 = (int(np.searchsorted(p, v)) for v in (0.7, 0.79, 0.85))
    n = dict(ratio_below_100=curves[100.0][i70] / -np.log(p[i70]), ratio_above_100=curves[100.0][i85] / -np.log(p[i85]),
             ratio_above_1=curves[1.0][i85] / -np.log(p[i85]), slope_curve_079=-sl["curve"][i79],
             slope_detached_079=-sl["detached"][i79], slope_ce_079=1 / p[i79], slope_detached_085=-sl["detached"][i85],
             p79=p[i79], p85=p[i85])
    rep.put(**n)
    rep.data["calfocal"] = {"p": p, "curves": curves, "slopes": sl}
    rep.claim("drop", "the CalFocal loss drops sharply near p = A_val and stays near 0 above it (for a strong λ)",
              "Sec. 5.1, Fig. 3a", "loss / cross-entropy at p = 0.7 and 0.85",
              f"λ = 100: {n['ratio_below_100']:.2f} below, {n['ratio_above_100']:.1e} above; "
              f"λ = 1: {n['ratio_above_1']:.2f} above",
              check(n["ratio_below_100"] > 0.9 and n["ratio_above_100"] < 1e-3))
    rep.claim("push", "CalFocal first pushes p towards A_val, then slows its growth", "Sec. 5.1",
              "detached-γ gradient vs cross-entropy, λ = 100",
              f"push at p = {n['p79']:.2f}: {n['slope_detached_079']:.2f} (CE {n['slope_ce_079']:.2f}); at "
              f"{n['p85']:.2f}: {n['slope_detached_085']:.1e}",
              check(n["slope_detached_079"] > 0.5 * n["slope_ce_079"] and n["slope_detached_085"] < 1e-3))


def _focal(rep: TheoryReport, sz: dict) -> None:
    rng = np.random.default_rng(0)
    worst = np.inf
    for k in (2, 10, 100):
        pred = rng.dirichlet(np.full(k, 0.3), size=sz["n_random"] // 3)
        pred = np.clip(pred, 1e-300, None) / np.clip(pred, 1e-300, None).sum(1, keepdims=True)
        target = np.eye(k)[rng.integers(0, k, len(pred))]
        for gam in (0.25, 0.5, 1.0, 2.0, 5.0):
            kl_minus = -np.log((target * pred).sum(1)) - gam * entropy(pred)  # KL(q||p) - γ H(p), q one-hot
            worst = min(worst, (focal_expected_loss(target, pred, gam) - kl_minus).min())
            worst = min(worst, (focal_expected_loss(target, pred, gam) - focal_kl_bound(target, pred, gam)).min())
    rep.put(ada_bound_min=worst)
    rep.claim("bound", "L_FL ≥ KL(q‖p) − γ H(p), q the one-hot target, p the prediction", "Sec. 3",
              f"{3 * (sz['n_random'] // 3)} random predictions, K ∈ {{2, 10, 100}}, γ ∈ {{0.25, 0.5, 1, 2, 5}}",
              f"smallest L_FL - bound: {worst:.1e}", check(worst > -1e-12))
    gam = np.linspace(0.0, 20.0, sz["n_gamma"])
    thr = gradient_shrink_threshold(gam)
    pos = gam > 0
    consistent = bool(np.all(gradient_factor_dgamma(thr[pos] * 0.999, gam[pos]) > 0)
                      and np.all(gradient_factor_dgamma(np.minimum(thr[pos] * 1.001, 1), gam[pos]) < 0))
    at = {v: brentq(lambda x, v=v: gradient_shrink_threshold(x) - v, 1e-3, 20.0, xtol=1e-12) for v in (0.15, 0.2, 0.25)}
    t1 = float(gradient_shrink_threshold(1.0))
    rep.put(thr_g1=t1, thr_g20=thr[-1], gamma_thr02=at[0.2], gamma_thr025=at[0.25], gamma_thr015=at[0.15])
    rep.data["shrink"] = {"gamma": gam, "threshold": thr}
    rep.claim("not_always", "for focal loss, increasing γ does not always lead to smaller gradients", "footnote 2",
              "sign of ∂g/∂γ just below and above gradient_shrink_threshold(γ), γ ∈ (0, 20]",
              f"∂g/∂γ > 0 below the threshold for every γ ({consistent}); e.g. below {t1:.2f} at γ = 1",
              check(consistent))
    rep.claim("footnote",
              "a larger γ gives smaller gradients mostly in the region p ≳ 0.2 (read: threshold ≤ 0.25)",
              "footnote 2", f"gradient_shrink_threshold on {sz['n_gamma']} values of γ ∈ [0, 20]",
              f"the threshold is 0.2 at γ = {at[0.2]:.2f}, within 0.2 ± 0.05 for γ ∈ [{at[0.25]:.2f}, "
              f"{at[0.15]:.2f}]; {t1:.2f} at γ = 1; {thr[-1]:.3f} at γ = 20",
              conditional(bool(np.all(thr[pos] <= 0.25)),
                          consistent and bool(np.all(thr[gam >= at[0.25]] <= 0.25 + 1e-12)),
                          f"γ ≥ {at[0.25]:.2f}; at γ = 1, AdaFocal's starting value, raising γ still enlarges the "
                          f"gradient up to p = {t1:.2f}, and the threshold tends to 1/2 as γ → 0"))
    rep.claim("practice", "most training samples lie above p = 0.2 during most of training", "footnote 2",
              "needs the training-bin boundaries of trained networks (their Fig. 11)", "—",
              untested("an empirical statement about training runs; this chapter trains no network"))


def _adafocal(rep: TheoryReport, sz: dict) -> None:
    epochs = 60
    scen = gap_scenarios(epochs, seed=0)
    traj = {(s, r): simulate_gamma(gaps, 1.0, **kw) for s, gaps in scen.items() for r, kw in RULES.items()}
    over = scen["over, then under"]
    eq3, eq4 = traj[("over, then under", "Eq. 3 (no cap)")], traj[("over, then under", "Eq. 4 (paper)")]
    closed_form = np.exp(np.concatenate([[0.0], np.cumsum(over)]))
    rng = np.random.default_rng(1)
    random_gaps = np.clip(rng.normal(0.0, 0.2, size=(sz["random_epochs"], sz["random_bins"])), -1, 1)
    rand = {r: simulate_gamma(random_gaps, 1.0, **kw) for r, kw in RULES.items()}
    under_p, under_c = traj[("under-confident", "Eq. 4 (paper)")], traj[("under-confident", "authors' code")]
    n = dict(eq3_err=np.max(np.abs(eq3 / closed_form - 1)), eq3_peak=eq3.max(), eq3_end=eq3[-1], eq4_end=eq4[-1],
             eq4_max_random=rand["Eq. 4 (paper)"].max(), eq4_min_random=rand["Eq. 4 (paper)"].min(),
             code_min_abs=np.abs(rand["authors' code"]).min(), code_range_lo=rand["authors' code"].min(),
             code_range_hi=rand["authors' code"].max(), under_paper_end=under_p[-1], under_code_end=under_c[-1],
             switch_epoch=int(np.argmax(under_c < 0)), calfocal_const=calfocal_gamma(0.1, 10.0),
             calfocal_zero=calfocal_gamma(0.0, 10.0), eq4_const_end=traj[("over-confident", "Eq. 4 (paper)")][-1],
             n_random_epochs=sz["random_epochs"], n_random_bins=sz["random_bins"])
    rep.put(**n)
    rep.data["adafocal"] = {"epochs": epochs, "scenarios": scen, "trajectories": traj}
    rep.claim("eq3", "Eq. 3 unrolls to γ_t = γ_0 exp(E_1 + … + E_t)", "Sec. 5.2", "update rule vs cumulative sum",
              f"max rel. difference {n['eq3_err']:.1e}", check(n["eq3_err"] < 1e-12))
    rep.claim("explode", "uncapped, γ grows so large that later negative gaps cannot bring it back", "Sec. 5.2",
              "'over, then under' (+0.3 × 30, then -0.1 × 30)", f"Eq. 3 peaks at {n['eq3_peak']:.0f}, ends at "
              f"{n['eq3_end']:.0f}; Eq. 4 ends at {n['eq4_end']:.2f}", check(n["eq3_end"] > 100 and n["eq4_end"] < 2))
    rep.claim("eq4", "Eq. 4 keeps 0 < γ ≤ γ_max", "Eq. 4",
              f"{sz['random_epochs']} epochs × {sz['random_bins']} bins of random gaps",
              f"γ in [{n['eq4_min_random']:.1e}, {n['eq4_max_random']:.0f}]",
              check(n["eq4_max_random"] <= 20 and n["eq4_min_random"] > 0))
    rep.claim("calfocal_limits", "CalFocal (Eq. 2) resets γ to 1 when the gap closes and cannot raise it under a "
              "persistent gap; AdaFocal can", "Sec. 5.1-5.2", "gap 0; constant gap +0.1 (λ = 10)",
              f"CalFocal γ = {n['calfocal_zero']:g} at gap 0 and stays {n['calfocal_const']:.2f} under +0.1; Eq. 4 "
              f"reaches {n['eq4_const_end']:g}", check(n["calfocal_zero"] == 1 and n["eq4_const_end"] == 20))
    rep.claim("code_switch",
              "the authors' code switches γ's sign instead of decaying to 0; |γ| never falls below 0.2",
              "the authors' final code (the page on the authors' code)", "persistent gap -0.1; random gaps",
              f"Eq. 4 decays to {n['under_paper_end']:.1e}; code switches at epoch {n['switch_epoch']} and ends at "
              f"{n['under_code_end']:.1f}; min |γ| = {n['code_min_abs']:.2f}",
              beyond(n["code_min_abs"] >= 0.2 and n["under_code_end"] == -2))


def _loop(rep: TheoryReport, sz: dict) -> None:
    g_star = fixed_point(toy_response, 1e-6, 20.0)
    loops = {lam: simulate_closed_loop(toy_response, 1.0, LOOP_EPOCHS, lam=lam, variant="paper") for lam in LOOP_LAMS}
    factors = {lam: linearised_factor(toy_response, g_star, lam) for lam in LOOP_LAMS}
    osc = {lam: bool(np.any(np.diff(np.sign(np.diff(r["gamma"][:40]))) != 0)) for lam, r in loops.items()}
    conv = {lam: bool(abs(r["gamma"][-1] / g_star - 1) < 1e-3) for lam, r in loops.items()}
    l1 = loops[1]["gamma"]
    rep.put(g_star=g_star, factor_1=factors[1], factor_10=factors[10], factor_30=factors[30],
            slope_1=factors[1] - 1, l1_epochs_1pct=int(np.argmax(np.abs(l1 / g_star - 1) < 0.01)),
            l1_monotone=bool(np.all(np.diff(l1) >= 0)), loop_epochs=LOOP_EPOCHS)
    rep.data["loop"] = {"g_star": g_star, "loops": loops, "factors": factors}
    desc = {lam: f"{'oscillates' if osc[lam] else 'monotone'}, {'converges' if conv[lam] else 'does not converge'}"
            for lam in LOOP_LAMS}
    rep.claim("settle", "γ settles where the gap is zero, oscillating around it", "Sec. 5.2",
              "closed-loop toy (the binary focal minimiser as the bin's confidence), Eq. 4 with λ = 1, 10, 30 "
              "in the exponent; linearisation in log γ", f"λ = 1: {desc[1]} (factor {factors[1]:.2f}); λ = 10: "
              f"{desc[10]} ({factors[10]:.2f}); λ = 30: {desc[30]} ({factors[30]:.2f})",
              conditional(conv[1] and osc[1], conv[10] and osc[10] and not conv[30],
                          "the gap must respond steeply to γ near the zero-gap γ°: "
                          "−2 < γ°E′(γ°) < −1 (Eq. 4); "
                          f"in the toy γ°E′(γ°) = {factors[1] - 1:.2f}, so γ settles without oscillating"))


def report(profile: str = "cpu") -> TheoryReport:
    """Every check of the chapter at the grid sizes of ``profile`` (smoke, cpu, gpu, paper)."""
    return run_checks(PAPER, CHAPTER, profile, SIZES, SECTIONS,
                      (("calfocal", _calfocal), ("focal", _focal), ("adafocal", _adafocal), ("loop", _loop)))


def claims(profile: str = "cpu") -> ClaimLog:
    """The claims of the chapter (the registry's builder)."""
    return report(profile).log
