"""Every claim of Liang et al. (FCL, Sec. 2-4 and App. A) checked; verdicts come from the checks.

:func:`report` runs all checks at the sizes of a profile and returns a
:class:`~replicate.theory.report.TheoryReport`: the claims log, the numbers the chapter
``notebooks/theory_fcl.md`` quotes and the tables it shows (``data``); :func:`claims`
(registered in :mod:`replicate.claims.registry`) returns the log alone. Each row's
``section`` is the chapter heading under which it is decided.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...claims import ClaimLog, beyond, check, readings
from ..report import TheoryReport, run_checks
from .loss import fcl_risk_minimizer
from .properness import brier_properness, cross_entropy_gap, focal_convexity, focal_uniqueness, properness_table
from .study import lemma_a3_table, lipschitz_gap_table, literal_pgap_study, pgap_study, theorem_4_1_study

__all__ = ["SIZES", "SECTIONS", "STEPS", "report", "claims"]

#: Grid sizes and sample counts per profile (only these change with the profile).
SIZES = {
    "smoke": dict(n_eta=41, n_posteriors=50, n_support=30, n_literal=12, n_samples=1000, grid=20001, n_random=10),
    "cpu": dict(n_eta=199, n_posteriors=300, n_support=80, n_literal=20, n_samples=5000, grid=50001, n_random=30),
    "paper": dict(n_eta=299, n_posteriors=400, n_support=100, n_literal=40, n_samples=10000, grid=200001,
                  n_random=100),
}
SIZES["gpu"] = SIZES["cpu"]

#: The chapter headings under which the claims are decided.
SECTIONS = dict(proper="Is FCL strictly proper? (App. A.3, A.8)",
                parts="The squared-norm term and focal loss alone (App. A.7, A.8 Case 2)",
                order="Classification calibration (App. A.5) and Theorem 4.1",
                lemma="Lemma A.3, reconstructed",
                gap="The post-processing gap (Definition 2.3, Theorem 4.5)")

GAMMAS, LAMS = [0.0, 1.0, 2.0, 3.0], [0.0, 0.5, 1.0, 4.0]


def _proper(rep: TheoryReport, sz: dict) -> None:
    q_bin = fcl_risk_minimizer(np.array([0.9, 0.1]), 2.0, 1.0)
    q3 = fcl_risk_minimizer(np.array([0.6, 0.3, 0.1]), 2.0, 1.0)
    special = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]])
    rep.put(q_bin=q_bin[0], q_bin_mean=fcl_risk_minimizer(np.array([0.9, 0.1]), 2.0, 1.0, brier="mean")[0],
                      q3_0=q3[0], q3_1=q3[1], q3_2=q3[2],
                      dev_special=float(np.abs(fcl_risk_minimizer(special, 2.0, 1.0) - special).max()))
    eta3 = np.random.default_rng(0).dirichlet(np.ones(3), sz["n_posteriors"])
    prop = properness_table(eta3, GAMMAS, LAMS)
    prop_mean = properness_table(eta3, [2.0], [1.0], brier="mean").assign(gamma="2 (Brier / K)")
    rep.data["properness"] = pd.concat([prop, prop_mean])
    worst = prop.loc[(prop.gamma > 0) & (prop["lambda"] > 0), "max |q* - eta|"]
    rep.put(min_dev=float(worst.min()), n_eta3=len(eta3),
                      ce_brier_dev=float(prop.loc[prop.gamma == 0, "max |q* - eta|"].max()))
    log = rep.log.at(SECTIONS["proper"])
    rep.claim(
        "proper", "FCL is strictly proper for λ > 0 (minimiser q* = η)", "App. A.3, A.8, Sec. 4.3",
        f"exact KKT minimiser, {len(eta3)} Dirichlet posteriors, γ ∈ {{1, 2, 3}}, λ ∈ {{0.5, 1, 4}}",
        f"max |q* − η| ≥ {worst.min():.3f} in every (γ, λ); e.g. η = (0.9, 0.1) → {q_bin[0]:.4f}",
        check(worst.max() < 1e-6))
    conv = focal_convexity([0.25, 0.5, 1.0, 2.0, 3.0, 5.0], grid=sz["grid"])
    rep.data["convexity"] = conv
    rep.put(conv_min=float(conv["min second derivative"].min()))
    log.add("the focal term −(1−q)^γ log q is convex, so R is strictly convex", "App. A.3, Step 1",
            "closed-form second derivative on a dense grid, γ ∈ [0.25, 5]",
            f"min second derivative {conv['min second derivative'].min():.1e} > 0",
            check(bool((conv["min second derivative"] > 0).all())))


def _parts(rep: TheoryReport, sz: dict) -> None:
    brier = brier_properness(seed=0)
    rep.data["brier"] = brier
    log = rep.log.at(SECTIONS["parts"])
    for name, rows in [("binary", brier[brier.K == 2]), ("multiclass", brier[brier.K > 2])]:
        ok = bool(rows["identity error"].fillna(0).max() < 1e-12
                  and rows["min excess / ||q - eta||^2"].fillna(1).min() > 0
                  and rows["max |argmin - eta|"].max() < 1e-6)
        rep.put(**{f"brier_argmin_{name}": float(rows["max |argmin - eta|"].max())})
        log.add(f"the squared norm ||q − y||² (or its mean over K) is strictly proper, {name}", "App. A.7",
                "expected score summed over the labels: excess over q = η against s‖q − η‖², and its minimiser "
                "(compass search from random starts"
                + ("; scipy for the scalar form (63))" if name == "binary" else ")"),
                f"K ∈ {{{', '.join(str(k) for k in sorted(set(rows.K)))}}}: identity exact to "
                f"{rows['identity error'].max():.0e}, excess ≥ s‖q − η‖² > 0, argmin within "
                f"{rows['max |argmin - eta|'].max():.0e} of η", check(ok))
    etas = np.array([[0.6, 0.3, 0.1], [0.7, 0.3, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.2, 0.5, 0.3], [1.0, 0.0, 0.0]])
    uniq = focal_uniqueness([0.0, 0.5, 1.0, 2.0, 3.0, 5.0], etas, grid=sz["grid"])
    rep.data["uniqueness"] = uniq
    unique = bool((uniq["min f''"] > 0).all() and (uniq["max f'"] < 0).all()
                  and uniq["max distance to the KKT minimiser"].max() < 1e-6 and uniq["min risk excess"].min() > -1e-12)
    rep.put(uniq_dist=float(uniq["max distance to the KKT minimiser"].max()))
    rep.claim(
        "a8a", "the expected focal loss has multiple minimisers, so focal loss is not strictly proper",
        "App. A.8, Case 2(a)",
        f"f'' > 0 and f' < 0 on a grid of (0, 1) for γ ∈ {{0, 0.5, 1, 2, 3, 5}} (strict convexity: one minimiser); "
        f"compass searches from 8 random starts for {len(etas)} posteriors (with zeros and a vertex)",
        f"one minimiser for every γ and η: all starts end within {uniq['max distance to the KKT minimiser'].max():.0e} "
        "of the KKT minimiser; it differs from η for γ > 0, so the conclusion stands but not its reason",
        check(not unique))
    ratio = cross_entropy_gap(3, 2000, seed=0)
    rep.put(ce_ratio=ratio)
    rep.claim(
        "a8b", "focal loss is not strictly convex; at γ = 0 it is cross-entropy, proper but not strictly proper",
        "App. A.8, Case 2(b)", "closed-form f'' on (0, 1); KL(η‖q) = E_η[−log q] − E_η[−log η] (scipy) over "
        "2000 random pairs, K = 3; the FCL minimiser at γ = λ = 0",
        f"min f'' > 0 for every γ; KL(η‖q)/‖q − η‖₁² ≥ {ratio:.3f} > 0 (Pinsker: ≥ 1/2), minimiser = η to "
        f"{rep.numbers['ce_brier_dev']:.0e}: cross-entropy is strictly proper",
        check(bool((uniq["min f''"] <= 0).any()) or ratio <= 0))


def _order(rep: TheoryReport, sz: dict) -> None:
    prop = rep.data["properness"]
    order_ok = bool((prop["order preserved"] == 1).all())
    t41 = theorem_4_1_study(sz["n_posteriors"], 3, 2.0, [0.0, 0.5, 1.0, 2.0, 4.0])
    dec = bool(np.all(np.diff(t41["mean ||q* - eta||_2"]) < 0))
    rep.data["theorem_4_1"] = t41
    rep.put(t41_uc=float(t41["under-confident"].min()))
    log = rep.log.at(SECTIONS["order"])
    log.add("FCL is strictly order-preserving (classification-calibrated)", "Thm. A.2, App. A.5",
            f"exact minimisers, {rep.numbers['n_eta3']} posteriors, {len(prop)} (γ, λ) pairs",
            f"order kept everywhere: {order_ok}", check(order_ok))
    log.add("|max q − max η| ≤ ‖q − η‖_∞ ≤ ‖q − η‖_2", "Thm. 4.1, App. A.2",
            "at FCL minimisers of Dirichlet posteriors, γ = 2", f"holds in {t41['bound holds'].min():.0%}",
            check(t41["bound holds"].min() == 1))
    log.add("adding λ L_cal shrinks the bound, mitigating over- and under-confidence", "Thm. 4.1, App. A.2 Step 5",
            "mean ‖q* − η‖_2 against λ", f"decreasing in λ: {dec}; still under-confident in "
            f"{t41['under-confident'].min():.0%} of posteriors at λ = 4", check(dec))


def _lemma(rep: TheoryReport, sz: dict) -> None:
    lem = lemma_a3_table([0.25, 0.5, 1.0, 2.0, 3.0, 5.0], [0.5, 1.0, 4.0], [0.05, 0.5, 0.95], grid=sz["grid"])
    ok = bool(lem["finite"].all() and lem["strictly decreasing"].all() and (lem["sign changes"] == 1).all()
              and (lem["g(1e-12)"] > 1e6).all())
    rep.put(n_lem=len(lem))
    rep.data["lemma"] = lem
    rep.log.at(SECTIONS["lemma"]).add(
        "g continuous, g(0+) = +∞, g(1−) = −2λs(1−η), strictly decreasing, one root (reconstructed g)",
        "Lemma A.3, Cor. A.4", f"dense grid of p, {len(lem)} (γ, λ, η) triples", f"all five properties: {ok}",
        check(ok))


def _gap(rep: TheoryReport, sz: dict) -> None:
    gaps = pgap_study(sz["n_support"], [1.0, 2.0, 3.0], [0.0, 0.25, 0.5, 1.0, 2.0])
    gaps["smCE² ≤ pGap ≤ 2 smCE"] = ((gaps["smCE"] ** 2 <= gaps["pGap (update)"] + 1e-12)
                                     & (gaps["pGap (update)"] <= 2 * gaps["smCE"] + 1e-12))
    rep.data["gaps"] = gaps
    sym, skew = (gaps[gaps.population.str.startswith(p)] for p in ("symmetric", "skewed"))
    lip = "pGap (1-Lipschitz kappa)"
    up = [(g, s["lambda"].iloc[i + 1]) for g, s in sym.groupby("gamma")
          for i in np.flatnonzero(np.diff(s["smCE"].to_numpy()) > 0)]
    rep.put(n_support=sz["n_support"], lip_zero=float(sym[lip].abs().max()),
                      lip_skew=float(skew[lip].min()), smce_min=float(sym["smCE"].min()), n_smce_up=len(up),
                      smce_up="; ".join(f"γ = {g:g}, λ = {lv:g}" for g, lv in up) or "nowhere")
    log = rep.log.at(SECTIONS["gap"])
    log.add("smCE² ≤ pGap ≤ 2 smCE (Blasiok et al., update family), as a check of both solvers", "Def. 2.2-2.3",
            "exact LP and BVLS on every predictor of the table", f"holds on all {len(gaps)} rows: "
            f"{gaps['smCE² ≤ pGap ≤ 2 smCE'].all()}", beyond(bool(gaps["smCE² ≤ pGap ≤ 2 smCE"].all())))
    worded_ok = not bool(((gaps[lip] < 1e-10) & (gaps["smCE"] > 1e-6)).any())
    rep.claim(
        "def23",
        "a small post-processing gap means the outputs are near-calibrated; a large one, room for recalibration",
        "Def. 2.3, footnote 3", "population optima of FL and FCL (γ ∈ {1, 2, 3}) on a symmetric and a skewed "
        "population; κ 1-Lipschitz as worded, and the update family of Blasiok et al. that the paper cites",
        f"as worded: gap {sym[lip].abs().max():.0e} on the symmetric population although smCE ≥ "
        f"{sym['smCE'].min():.4f}; "
        "update family: smCE² ≤ pGap on every row",
        readings(**{"κ 1-Lipschitz (as worded)": check(worded_ok),
                    "κ − id 1-Lipschitz (as cited)": check(bool(gaps["smCE² ≤ pGap ≤ 2 smCE"].all()))}))
    rand = lipschitz_gap_table(sz["n_random"], seed=0)
    rep.data["lipschitz_gap"] = rand
    both = pd.concat([rand, gaps[["zero gap predicted", lip]]])
    agree = bool(((both[lip] < 1e-10) == both["zero gap predicted"]).all())
    shifted = rand[rand.predictor.str.contains("shifted")][lip]
    skew_fl = skew[skew["lambda"] == 0][lip]
    rep.put(n_char=len(both), shifted_gap=float(shifted.min()), lip_skew_fl=float(skew_fl.min()))
    log.add("(this book) the squared-loss gap over 1-Lipschitz κ is zero exactly when E f = E y and "
            "E[(y − f) 1{f > t}] ≥ 0 for every t (centred under-confidence)", "Def. 2.3",
            f"KKT conditions of the identity map against BVLS on {len(both)} predictors (random, stretched about "
            "their mean, stretched and shifted by 0.05, the population optima)",
            f"agree on every predictor: {agree}; shifted under-confident predictors have gap ≥ {shifted.min():.4f}, "
            f"the skewed-population FL optima ≥ {skew_fl.min():.4f}", beyond(agree))
    ops = {fam: all(bool((s.sort_values("lambda")[col].to_numpy()[1:] <= s.sort_values("lambda")[col].iloc[0]
                          + 1e-12).all()) for _, s in gaps.groupby(["population", "gamma"]))
           for fam, col in (("update", "pGap (update)"), ("lipschitz", lip))}
    rep.claim(
        "t45_op", "(operational) training with FCL instead of FL gives a smaller (or equal) post-processing gap",
        "Thm. 4.5, Sec. 5.5.3", "squared-loss pGap of the population optima, γ ∈ {1, 2, 3}, λ ∈ {0.25, ..., 2}, "
        "both populations", f"pGap(FCL) ≤ pGap(FL) for every λ: update family {ops['update']}, "
        f"1-Lipschitz κ {ops['lipschitz']}; smCE rises at {len(up)} step(s)",
        readings(**{"κ − id 1-Lipschitz": check(ops["update"]), "κ 1-Lipschitz": check(ops["lipschitz"])}))
    lit = literal_pgap_study(sz["n_literal"], 2.0, [0.5, 1.0, 2.0])
    rep.data["literal"] = lit
    at1 = lit[lit["lambda"] == 1.0].set_index("family")
    rep.put(lit_fl=float(at1["pGap under FL"].abs().max()), lit_fcl_update=float(at1.loc["update", "pGap under FCL"]),
                      lit_fcl_lip=float(at1.loc["lipschitz", "pGap under FCL"]))
    fine = {fam: bool((s["pGap under FCL"] <= s["pGap under FL"] + 1e-9).all()) for fam, s in lit.groupby("family")}
    rep.claim(
        "t45_lit", "pGap_FCL(f) ≤ pGap_FL(f) for any predictor f", "Thm. 4.5, App. A.14",
        f"f = focal-loss optimum on the skewed population, {sz['n_literal']} support points, γ = 2, "
        "exact convex solver, both families", f"pGap_FL = {at1['pGap under FL'].abs().max():.0e}; pGap_FCL (λ = 1) = "
        f"{at1.loc['update', 'pGap under FCL']:.4f} (update), "
        f"{at1.loc['lipschitz', 'pGap under FCL']:.4f} (1-Lipschitz κ)",
        readings(**{"κ − id 1-Lipschitz": check(fine["update"]), "κ 1-Lipschitz": check(fine["lipschitz"])}))


#: The checks, in chapter order: (section, function adding its rows).
STEPS = (("proper", _proper), ("parts", _parts), ("order", _order), ("lemma", _lemma), ("gap", _gap))


def report(profile: str = "cpu") -> TheoryReport:
    """Every check of the chapter at the sizes of ``profile`` (smoke, cpu, gpu, paper)."""
    return run_checks("liang2024", "theory_fcl", profile, SIZES, SECTIONS, STEPS)


def claims(profile: str = "cpu") -> ClaimLog:
    """The claims of the chapter (the registry's builder for ``liang2024``)."""
    return report(profile).log
