"""Every claim of Tao et al. (2023, Sec. 4 and App. A-B) checked; verdicts come from the checks.

:func:`report` runs all checks at the sizes of a profile and returns a
:class:`~replicate.theory.report.TheoryReport`: the claims log, the numbers the chapter
``notebooks/theory_dual_focal.md`` quotes and the tables it shows (``data``); :func:`claims`
(registered in :mod:`replicate.claims.registry`) returns the log alone. Each row's
``section`` is the chapter heading under which it is decided.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import lambertw

from ...claims import ClaimLog, check, conditional, corrected, readings
from ..report import TheoryReport, run_checks
from .loss import dual_focal_conditional_risk, dual_focal_risk_minimizer, phi_argmax, phi_key_points
from .proofs import appendix_checks, as_function
from .study import (binary_dfl_minimizer, binary_tie_threshold, eq9_check, lemma1_check,
                    over_confidence_study, posterior_study, region_grid)

__all__ = ["SIZES", "SECTIONS", "STEPS", "THEOREM1_POSTERIOR", "report", "claims"]

#: Grid sizes and sample counts per profile (only these change with the profile).
SIZES = {
    "smoke": dict(n_grid=2001, n_region=12, n_eta=25, n_posteriors=24, resolution=120, n_oc=300),
    "cpu": dict(n_grid=20001, n_region=30, n_eta=99, n_posteriors=100, resolution=180, n_oc=1500),
    "paper": dict(n_grid=50001, n_region=40, n_eta=199, n_posteriors=150, resolution=240, n_oc=6000),
}
SIZES["gpu"] = SIZES["cpu"]

#: The chapter headings under which the claims are decided.
SECTIONS = dict(fig1="Figure 1 regenerated", lemma="Lemma 1: the shape of φ",
                regions="The under-confident region across γ and C",
                binary="Two classes: Theorem 1 depends on ties",
                three="Three classes: Theorem 1 and Eq. 9",
                proof="The proof of Theorem 1 (Appendix A)",
                rules="The region rules on the minimisers")

#: A posterior whose tie-free DFL minimiser reverses the order of the two lower classes.
THEOREM1_POSTERIOR = np.array([0.15865, 0.1779, 0.66345])


def _ties(literal, tie_free):
    """One verdict from the two readings of ties in Eq. 3."""
    return readings(**{"Eq. 3 literally": literal, "tie-free infimum": tie_free})


_SYMPY = "sympy derivation vs the printed expression at 8 random (v, γ, C), 50 digits"


def _proofs(rep: TheoryReport, sz: dict) -> None:
    """Appendix A's proof steps, checked symbolically (no claims rows; the chapter shows them)."""
    rep.data["proofs"] = appendix_checks()


def _fig1(rep: TheoryReport, sz: dict) -> None:
    kp = {k: float(x) for k, x in phi_key_points(1.0, 0.3).items()}
    kp_fl = {k: float(x) for k, x in phi_key_points(1.0, 0.0).items()}
    closed = {"v_m": np.exp(-2), "v_prime": 1 / np.e, "v_uc": 0.3 / lambertw(0.3 * np.e).real}
    dev = max(abs(kp[k] - closed[k]) for k in closed)
    rep.put(vm=kp["v_m"], vprime=kp["v_prime"], vuc_dfl=kp["v_uc"], vuc_fl=kp_fl["v_uc"],
            fig1_reduction=kp["reduction_paper"], dev_fig1=dev)
    rep.claim("fig1", "Fig. 1 (γ = 1, q_j = 0.3): v_m, v', v_uc", "Sec. 4.2, Fig. 1",
              "bisection vs closed forms e^-2, 1/e, C/W(Ce)",
              f"v_m={kp['v_m']:.4f}, v'={kp['v_prime']:.4f}, v_uc={kp['v_uc']:.4f}; max deviation {dev:.1e}",
              check(dev < 1e-10))


def _lemma(rep: TheoryReport, sz: dict) -> None:
    lem = lemma1_check([0.25, 0.5, 1, 2, 3, 5, 8], [0.0, 0.05, 0.3, 0.6, 0.9], grid=sz["n_grid"])
    ok = bool(lem["rises then falls once"].all() and lem["phi(0) - (1+c)^gamma"].abs().max() < 1e-12
              and lem["phi(1) - c^gamma"].abs().max() < 1e-12)
    rep.put(n_lemma=len(lem))
    rep.data["lemma"] = lem
    rep.claim("lemma1", "φ(0) = (1+C)^γ, φ(1) = C^γ, one maximum v_m (rise then fall)", "Lemma 1, App. B",
              f"dense grid of v, {len(lem)} (γ, C) pairs",
              f"all pass: {ok}; max |grid argmax − v_m| = {lem['|grid argmax - v_m|'].max():.1e}", check(ok))
    proofs = rep.data["proofs"].set_index("key")
    for key in ("eq24_25", "eq26"):
        r = proofs.loc[key]
        rep.claim(key, r["statement"], r["where"], _SYMPY, f"largest difference {r['largest gap']:.1e}",
                  check(r["agrees"]))


def _regions(rep: TheoryReport, sz: dict) -> None:
    n = sz["n_region"]
    reg = region_grid(np.linspace(0.25, 6, n), np.linspace(0.0, 0.9, n))
    pos = reg[reg.c > 0]
    smaller = bool((pos["v_uc"] > pos["v_uc_focal"]).all())
    gap = (pos["reduction_paper"] - pos["reduction_vs_focal"]).abs()
    at_one = region_grid([1.0], np.linspace(0.05, 0.9, n))
    gap_one = float((at_one["reduction_paper"] - at_one["reduction_vs_focal"]).abs().max())
    rel = float((gap / pos["reduction_vs_focal"]).max())
    rep.put(gap_formula=float(gap.max()), gap_formula_rel=rel, gap_formula_one=gap_one)
    table = region_grid([0.5, 1, 2, 3, 5], [0.0, 0.1, 0.3, 0.5]).pivot(index="gamma", columns="c", values="v_uc")
    table.columns = [f"v_uc, C = {c:g}" for c in table.columns]
    rep.data["regions"] = table
    rep.claim("smaller", "the DFL η-UC region [v_uc, 1) is smaller than FL's [v', 1)", "Sec. 4.2",
              f"v_uc(γ, C) vs v_uc(γ, 0) on a {n}×{n} grid, C > 0",
              f"v_uc(γ, C) > v_uc(γ, 0) everywhere: {smaller}", check(smaller))
    rep.claim("reduction", "v' of DFL is close to FL's, so the region shrinks by φ⁻¹(1) − φ⁻¹((1+C)^γ)",
              "Sec. 4.2", "the paper's formula vs v_uc(γ, C) − v_uc(γ, 0) on the grid",
              f"equal at γ = 1 (max difference {gap_one:.0e}); elsewhere off by up to {gap.max():.3f} "
              f"({rel:.0%} of the reduction)",
              conditional(bool(gap.max() < 1e-9), gap_one < 1e-9, "at γ = 1 only, where v' = 1/e for every C"))


def _binary(rep: TheoryReport, sz: dict) -> None:
    thr = {g: binary_tie_threshold(g) for g in (1.0, 2.0, 3.0)}
    etas = np.linspace(0.5, 1.0, sz["n_eta"] + 2)[1:-1]
    tie_free = {g: np.array([binary_dfl_minimizer(e, g, ties="limit") for e in etas]) for g in (1.0, 2.0)}
    kept = all(bool((q > 0.5).all()) for q in tie_free.values())
    rep.put(**{f"tie_thr_{int(g)}": t for g, t in thr.items()},
            tie_free_min=float(min(q.min() for q in tie_free.values())))
    rep.claim("thm1_binary", "DFL is classification-calibrated, with a strictly order-preserving minimiser (K = 2)",
              "Thm. 1", f"scalar minimisation of Eq. 4 on each side of the tie, {etas.size} η₁ in (1/2, 1), "
              "γ ∈ {1, 2}", f"Eq. 3 literally: q* = (1/2, 1/2) for η₁ ≤ {thr[1.0]:.3f} (γ = 1), ≤ {thr[2.0]:.3f} "
              f"(γ = 2); tie-free infimum: q*₁ ≥ {rep.numbers['tie_free_min']:.3f} > 1/2 for every η₁ > 1/2",
              _ties(check(max(thr.values()) <= 0.5 + 1e-9), check(kept)))


def _three(rep: TheoryReport, sz: dict) -> None:
    summary, det = posterior_study(sz["n_posteriors"], 3, [1.0, 2.0], seed=0, resolution=sz["resolution"])
    rep.data["posteriors"], rep.data["details"] = summary, det
    row = summary.set_index(["gamma", "loss"])
    strict2, limit2 = row.loc[(2.0, "DFL, Eq. 3 (ties strict)")], row.loc[(2.0, "DFL, tie-free infimum")]
    rep.put(n_post=sz["n_posteriors"], bayes_strict=strict2["Bayes class recovered"],
            viol_limit=limit2["order violated"], viol_strict=strict2["order violated"],
            bayes_limit=limit2["Bayes class recovered"], tie_strict=strict2["top-two tie"])
    eta = THEOREM1_POSTERIOR
    q_cx = dual_focal_risk_minimizer(eta[None], 2.0, ties="limit")[0]
    q_ord = dual_focal_risk_minimizer(eta[None], 2.0, ties="limit", same_order=True)[0]
    r_cx, r_ord = (float(dual_focal_conditional_risk(q, eta, 2.0, ties="limit")) for q in (q_cx, q_ord))
    rep.put(r_cx=r_cx, r_ord=r_ord)
    rep.data["counterexample"] = pd.DataFrame({"η": eta, "q* (minimiser)": q_cx, "best q ordered like η": q_ord}).T
    rep.claim("thm1_three", "strict order preservation: q*_a < q*_b ⇒ η_a < η_b, hence argmax q* = argmax η (K = 3)",
              "Thm. 1, App. A", f"brute-force minimisers of {len(det['eta'])} Dirichlet(1, 1, 1) posteriors, γ = 2",
              f"Eq. 3 literally: top two tie in {strict2['top-two tie']:.0%}, Bayes class singled out in "
              f"{strict2['Bayes class recovered']:.0%}; tie-free: order violated in {limit2['order violated']:.0%} "
              f"(pinned case: risk {r_cx:.4f} vs {r_ord:.4f} for the best order-respecting q)",
              _ties(check(strict2["Bayes class recovered"] == 1),
                    check(limit2["order violated"] == 0 and r_cx >= r_ord - 1e-12)))
    chk = eq9_check(det["eta"], det[(2.0, "DFL, tie-free infimum")], 2.0)
    rep.put(eq9_err=float(chk["Eq. 9 error"].mean()), eq9_max=float(chk["Eq. 9 error"].max()),
            stat_err=float(chk["stationarity error"].max()), n_eq9=len(chk))
    rep.data["eq9"] = chk
    rep.claim("eq9", "η_i = (q*_i/φ(q*_i)) / Σ_k q*_k/φ(q*_k) at the minimiser", "Eq. 9",
              f"{len(chk)} untied brute-force minimisers (tie-free reading, γ = 2); the exact first-order "
              "conditions (a bidiagonal system in η) as a check of the minimisers",
              f"Eq. 9 misses η by {chk['Eq. 9 error'].mean():.3f} on average (at most "
              f"{chk['Eq. 9 error'].max():.3f}); exact stationarity recovers η to "
              f"{chk['stationarity error'].max():.1e}", check(chk["Eq. 9 error"].max() < 1e-6))


def _proof(rep: TheoryReport, sz: dict) -> None:
    proofs = rep.data["proofs"]
    gam, cc = np.meshgrid(np.linspace(0.01, 0.99, 99), np.linspace(0.0, 0.99, 100))
    rep.put(eq21_v1_max=float(np.max(as_function("eq21_v1")(1.0, gam, cc))))   # gamma < 1 there
    for _, r in proofs[~proofs.key.isin(["eq24_25", "eq26"])].iterrows():
        outcome = (corrected(r["agrees"], r["correction agrees"], r["correction"]) if r["correction"]
                   else check(r["agrees"]))
        note = (f"; the correction differs by {r['correction gap']:.1g} and is at most "
                f"{rep.numbers['eq21_v1_max']:.2f} < 0 for γ in (0, 1), as the proof needs" if r["correction"] else "")
        rep.claim(r["key"], r["statement"], r["where"], _SYMPY, f"largest difference {r['largest gap']:.2g}" + note,
                  outcome)


def _uc_rules(rep: TheoryReport, sz: dict) -> None:
    row = rep.data["posteriors"].set_index(["gamma", "loss"])
    uc = "under-confident in [v_uc, 1)"
    fl = {g: row.loc[(g, "FL")] for g in (1.0, 2.0)}
    strict = {g: row.loc[(g, "DFL, Eq. 3 (ties strict)")] for g in (1.0, 2.0)}
    free = {g: row.loc[(g, "DFL, tie-free infimum")] for g in (1.0, 2.0)}
    rep.put(rule_fl=fl[2.0][uc], rule_limit=free[2.0][uc], rule_strict_1=strict[1.0][uc],
            uc_fl=fl[2.0]["under-confident"], uc_limit=free[2.0]["under-confident"],
            oc_limit=free[2.0]["over-confident"], uc_strict=strict[2.0]["under-confident"])
    rep.claim("rule_fl", "max q* ≥ v_uc ⇒ η-UC (FL: v_uc(γ, 0) = v')", "Ineq. 11, Sec. 4.2",
              "FL minimisers (exact KKT), K = 3, γ ∈ {1, 2}",
              "share under-confident in the region: " + ", ".join(f"{fl[g][uc]:.0%} (γ = {g:g})" for g in fl),
              check(all(fl[g][uc] == 1 for g in fl)))
    rep.claim("rule_dfl", "max q* ≥ v_uc(γ, C) ⇒ η-UC (DFL)", "Ineq. 11, Sec. 4.2",
              "DFL brute-force minimisers, K = 3, γ ∈ {1, 2}", "share under-confident in the region: Eq. 3 "
              "literally " + ", ".join(f"{strict[g][uc]:.0%}" for g in strict) + "; tie-free "
              + ", ".join(f"{free[g][uc]:.0%}" for g in free),
              _ties(check(all(strict[g][uc] == 1 for g in strict)), check(all(free[g][uc] == 1 for g in free))))
    rep.claim("less_uc", "DFL is under-confident less often than FL", "Sec. 4.2, abstract",
              "share of under-confident minimisers, K = 3, γ = 2",
              f"FL {fl[2.0]['under-confident']:.0%}; DFL tie-free {free[2.0]['under-confident']:.0%} "
              f"(over-confident {free[2.0]['over-confident']:.0%}); DFL literally "
              f"{strict[2.0]['under-confident']:.0%}",
              _ties(check(strict[2.0]["under-confident"] < fl[2.0]["under-confident"]),
                    check(free[2.0]["under-confident"] < fl[2.0]["under-confident"])))


def _oc_rules(rep: TheoryReport, sz: dict) -> None:
    oc = over_confidence_study([0.5, 1.0, 2.0], sz["n_oc"], seed=0)
    rep.data["over_confidence"] = oc
    vm_max = float(np.max(phi_argmax(*np.meshgrid(np.geomspace(1e-4, 20, 60), np.linspace(0, 0.999, 60)))))
    k_min = int(np.floor(1.0 / vm_max) + 1)
    n_uc = int(oc["DFL: under-confident, not minimal"].sum() + oc["DFL: under-confident, unresolved"].sum())
    rep.put(oc_k_min=k_min, vm_max=vm_max, oc_fl=float(oc["FL: over-confident there"].min()),
            oc_dfl_points=int(oc["DFL stationary points in (0, v_m]"].sum()), oc_dfl_uc=n_uc,
            oc_dfl_open=int(oc["DFL: under-confident, unresolved"].sum()))
    ks = ", ".join(f"K = {k} (γ = {g:g})" for g, k in zip(oc["gamma"], oc["K"]))
    rep.claim("oc_fl", "max q* ≤ v_m ⇒ η-OC (FL, C = 0)", "Sec. 4.2, Fig. 1",
              f"exact KKT minimisers of {sz['n_oc']} Dirichlet(20) posteriors each, {ks}",
              f"{int(oc['FL minimisers in (0, v_m]'].sum())} minimisers in (0, v_m], over-confident: "
              f"{oc['FL: over-confident there'].min():.0%}; the region holds minimisers only for K ≥ {k_min}",
              check(bool((oc["FL: over-confident there"] == 1).all())))
    rep.claim("oc_dfl", "max q* ≤ v_m(γ, C) ⇒ η-OC (DFL, tie-free reading)", "Sec. 4.2, Fig. 1",
              f"every untied minimiser is stationary: {rep.numbers['oc_dfl_points']} predictions in (0, v_m], "
              f"{ks}, each with the one posterior that makes it stationary; under-confident ones searched for a "
              "lower-risk prediction (swaps, compass search)",
              f"{n_uc} under-confident stationary points, {rep.numbers['oc_dfl_open']} of them possibly minimal",
              check(rep.numbers["oc_dfl_open"] == 0))


#: The checks, in chapter order: (section, function adding its rows).
STEPS = (("fig1", _proofs), ("fig1", _fig1), ("lemma", _lemma), ("regions", _regions), ("binary", _binary), ("three", _three),
         ("proof", _proof), ("rules", _uc_rules), ("rules", _oc_rules))


def report(profile: str = "cpu") -> TheoryReport:
    """Every check of the chapter at the sizes of ``profile`` (smoke, cpu, gpu, paper)."""
    return run_checks("tao2023", "theory_dual_focal", profile, SIZES, SECTIONS, STEPS)


def claims(profile: str = "cpu") -> ClaimLog:
    """The claims of the chapter (the registry's builder for ``tao2023``)."""
    return report(profile).log
