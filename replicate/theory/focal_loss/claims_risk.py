"""The risk claims of Mukhoti et al. 2020 (App. H: the KL bound, Eq. 13 / Fig. 7; App. G: the linear model).

Each function adds its rows to the report built by :func:`replicate.theory.focal_loss.claims.report`
(which sets the chapter section first), with the numbers the chapter quotes and the data of
its figures.
"""
from __future__ import annotations

import numpy as np

from ...claims import beyond, check, readings
from ..report import TheoryReport
from . import linear_experiment as lin
from .risk import bernoulli_step, entropy, focal_expected_loss, focal_kl_bound, focal_risk_minimizer

__all__ = ["kl_bound", "minimiser", "many_classes", "linear_model", "FIG7_GAMMAS", "K100_GAMMAS"]

FIG7_GAMMAS = (0, 1, 2, 3, 5)
K100_GAMMAS = (1, 2, 3)


def kl_bound(rep: TheoryReport, sz: dict) -> None:
    """App. H: ``FL >= KL + H(p) - gamma H(q)`` on random Dirichlet pairs, and its proof's first step."""
    rng = np.random.default_rng(0)
    nr = sz["n_random"] // 4
    gap, step1_fail = {}, {}
    for gam in (0.25, 0.5, 1.0, 2.0, 3.0, 5.0):
        worst, fails = np.inf, 0
        for k in (2, 3, 10, 100):
            p = rng.dirichlet(np.full(k, 0.3), size=nr)
            q = np.clip(rng.dirichlet(np.full(k, 0.3), size=nr), 1e-300, None)
            q /= q.sum(1, keepdims=True)
            fl = focal_expected_loss(p, q, gam)
            worst = min(worst, (fl - focal_kl_bound(p, q, gam)).min())
            fails += int(np.sum(fl < bernoulli_step(p, q, gam) - 1e-12))
        gap[gam], step1_fail[gam] = worst, fails / (4 * nr)
    qq = np.linspace(1e-6, 1 - 1e-6, 200_001)
    lemma = np.min(-qq * np.log(qq) - (1 - qq) * np.log1p(-qq) - np.log(qq) * np.log1p(-qq))
    ge1 = min(v for g, v in gap.items() if g >= 1)
    lt1 = min(v for g, v in gap.items() if g < 1)
    rep.put(n_random=4 * nr, bound_min_ge1=ge1, bound_min_lt1=lt1, step1_fail_05=step1_fail[0.5], lemma_min=lemma)
    rep.claim("kl", "FL_γ(p, q) ≥ KL(p‖q) + H(p) - γ H(q) ≥ KL(p‖q) - γ H(q) for γ ≥ 1", "App. H",
              f"{4 * nr} random Dirichlet pairs per γ ∈ {{1, 2, 3, 5}}, K ∈ {{2, 3, 10, 100}}",
              f"smallest FL - bound: {ge1:.1e}", check(ge1 > -1e-12))
    rep.claim("kl_lt1", "the bound also holds for 0 ≤ γ < 1, where the proof's first step fails", "App. H",
              "same check for γ ∈ {0.25, 0.5}; lemma log q log(1-q) ≤ H₂(q) on a grid",
              f"smallest FL - bound {lt1:.1e}; first step violated on {step1_fail[0.5]:.0%} of pairs (γ = 0.5); "
              f"lemma min {lemma:.1e}", beyond(lt1 > -1e-12 and lemma >= 0))


def minimiser(rep: TheoryReport, sz: dict) -> None:
    """Eq. 13 / Fig. 7: the binary focal minimiser lies strictly between 1/2 and p."""
    from ..dual_focal.loss import focal_risk_minimizer_bruteforce

    pb = np.linspace(0.0, 1.0, 201)  # includes the one-hot ends
    eta2 = np.stack([pb, 1 - pb], 1)
    qstar = {g: focal_risk_minimizer(eta2, g)[:, 0] for g in FIG7_GAMMAS}
    sub = eta2[10:-1:20]  # p = 0.05, 0.15, ..., 0.95
    brute = max(np.abs(focal_risk_minimizer_bruteforce(sub, g) - focal_risk_minimizer(sub, g)).max() for g in (1, 3))
    inner = (pb > 0) & (pb < 1) & (pb != 0.5)
    closer = all(np.all(np.abs(qstar[g][inner] - 0.5) < np.abs(pb[inner] - 0.5)) for g in FIG7_GAMMAS[1:])
    ends = all(np.array_equal(qstar[g][~inner], pb[~inner]) for g in FIG7_GAMMAS)
    rep.put(brute_diff=brute)
    rep.data["fig7"] = {"p": pb, "q": qstar}
    rep.claim("fig7", "binary (Eq. 13): the focal minimiser q lies strictly between 1/2 and p, so it is more entropic "
              "than cross-entropy's q = p", "App. H, Fig. 7",
              f"focal_risk_minimizer on 199 values of p, γ ∈ {{1, 2, 3, 5}}; brute-force minimiser at {len(sub)} "
              "points", f"holds at every p ∉ {{0, 1/2, 1}} (equal there): {closer and ends}; max difference to "
              f"brute force {brute:.1e}", check(closer and ends and brute < 1e-6))


def many_classes(rep: TheoryReport, sz: dict) -> None:
    """K = 100, eta = (a, (1-a)/99, ...): the focal minimiser can be over-confident."""
    a = np.linspace(0.011, 0.99, sz["n_k100"])
    eta = np.column_stack([a, np.repeat(((1 - a) / 99)[:, None], 99, 1)])
    over, worst = {}, {}
    for g in K100_GAMMAS:
        q = focal_risk_minimizer(eta, g)
        over[g] = q[:, 0] - a
        i = int(np.argmax(over[g]))
        worst[g] = dict(a=a[i], q=q[i, 0], over=over[g][i], dH=entropy(q[i]) - entropy(eta[i]),
                        a_max=a[over[g] > 0].max() if np.any(over[g] > 0) else np.nan)
    w = worst[1]
    rep.put(mc_a=w["a"], mc_q=w["q"], mc_dH=w["dH"], mc_amax=w["a_max"])
    rep.data["many"] = {"a": a, "over": over}
    rep.claim("many", "with K = 100 classes the focal minimiser can be more confident (lower entropy) than the true "
              "posterior η", "App. H (binary statement), extended", f"η = (a, (1-a)/99, …), {len(a)} values of a, "
              "γ ∈ {1, 2, 3}", f"γ = 1: a = {w['a']:.3f} → q₁ = {w['q']:.3f}, H(q) - H(η) = {w['dH']:.3f}; "
              f"over-confident up to a = {w['a_max']:.3f}", beyond(all(v["over"] > 0 for v in worst.values())))


def linear_model(rep: TheoryReport, sz: dict) -> None:
    """App. G: logistic regression with CE and focal loss (gamma = 1) on Gaussian clusters."""
    res = lin.appendix_g(std=0.5)
    runs, mis = res["runs"], res["mistakes"]
    wc, wf = runs["ce"]["w"], runs["focal"]["w"]
    n = dict(wn_ce=runs["ce"]["weight_norm"][-1], wn_fl=runs["focal"]["weight_norm"][-1],
             ln_ce=runs["ce"]["logit_norm"][-1], ln_fl=runs["focal"]["logit_norm"][-1],
             gn_max=max(r["grad_norm"] for r in runs.values()),
             angle=np.degrees(abs(np.arctan2(wc[1], wc[0]) - np.arctan2(wf[1], wf[0]))),
             n_mis_ce=len(mis["ce"]), n_mis_fl=len(mis["focal"]), med_ce=np.median(mis["ce"]),
             med_fl=np.median(mis["focal"]), f90_ce=np.mean(mis["ce"] > 0.9), f90_fl=np.mean(mis["focal"] > 0.9))
    n["wn_ratio"], n["ln_ratio"] = n["wn_ce"] / n["wn_fl"], n["ln_ce"] / n["ln_fl"]
    table = lin.spread_table(sz["spreads"], known={0.5: res})
    share, sd_best = table["share > 0.9 ce"].max(), table["cluster sd"][table["share > 0.9 ce"].idxmax()]
    much_lower = bool(np.all(table["median focal"] <= table["median ce"] - 0.05)
                      and np.all(table["share > 0.9 focal"] <= table["share > 0.9 ce"] / 2))
    rep.put(**n, share_max=share, share_sd=sd_best, n_spreads=len(table))
    rep.data["linear"] = {**res, "table": table}
    rep.claim("blowup", "the norms of the weights and logits “blow up” for CE compared with FL", "App. G, Fig. 5",
              "gradient descent to convergence on our synthetic data (cluster sd 0.5)",
              f"‖w‖ {n['wn_ce']:.2f} (CE) vs {n['wn_fl']:.2f} (FL), logits {n['ln_ce']:.1f} vs {n['ln_fl']:.1f}; "
              f"both converge (gradient norm ≤ {n['gn_max']:.0e}): flipped labels make the data non-separable",
              readings(much_larger_than_FL=min(n["wn_ratio"], n["ln_ratio"]) > 1.5,
                       growing_without_bound=n["gn_max"] > 1e-8))
    rep.claim("regions", "CE and FL give the same decision regions", "App. G, Fig. 6b-c",
              "angle between the weight vectors",
              f"{n['angle']:.2g}°", check(n["angle"] < 1))
    rep.claim("ce90", "CE misclassifies almost always (≥ 90% of mistakes) with > 90% confidence", "App. G, Fig. 6a",
              f"misclassified test points at cluster sd ∈ {{{', '.join(f'{s:g}' for s in table['cluster sd'])}}} "
              "(the paper gives no spread)", f"largest share above 0.9: {share:.0%} (sd {sd_best:g}); near a cluster "
              "centre CE (proper) predicts ≈ 0.9, the rate of unflipped labels", check(share >= 0.9))
    rep.claim("fl_lower", "FL misclassifies with much lower confidence than CE", "App. G, Fig. 6a",
              "median confidence on mistakes at least 0.05 lower and at most half the share above 0.9, every sd",
              f"sd 0.5: median {n['med_ce']:.3f} (CE) vs {n['med_fl']:.3f} (FL), share above 0.9 {n['f90_ce']:.0%} "
              f"vs {n['f90_fl']:.0%}", check(much_lower))
