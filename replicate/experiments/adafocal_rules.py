"""The experimental claims of Ghosh et al. (2022, ICLR 2022 submission) as rules.

Each rule reads an :class:`replicate.experiments.adafocal_evidence.Evidence` - the paper's
printed tables (every row) or our runs - and returns ``(numbers, outcome)``. Claims about
"k of n" experiments hold when the share of rows is at least the paper's; universal claims
("any", "every", "consistently") fail on one counterexample, named in the numbers; claims
without a quantifier over experiments ("outperforms all baselines") are read both ways
(every row / most rows) with :func:`replicate.claims.readings`. A rule whose numbers the
paper prints only as a figure, or that our runs cannot provide, is "not tested" with the
reason. AdaFocal is the method ``adafocal`` of either side.
"""
from __future__ import annotations

import math

from .. import comparison as cmp
from ..claims import Outcome, check, conditional, readings, untested
from .adafocal_figure_rules import (ada_lowest_every_bin, ce_overconfident_every_bin, correspondence,
                                    error_bars_separate, fl4_lowest_adaece, flsd_not_best, gamma_ends,
                                    more_variable, no_single_gamma, runs_below_flsd, unbounded_blows_up)

ADA = "adafocal"
TABLE1 = ("cross_entropy", "brier", "mmce", "ls005", "flsd53")
DEBIASED = ("debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")
TABLE10 = ("cross_entropy", "brier", "mmce", "ls005", "fl3", "flsd53", "adafocal")
TABLE9 = ("ece", "adaece", "debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")


def cells(ev, metric: str, scaled: bool = False, setting: str = "", col: str = "mean") -> dict:
    """``{row: {method: value}}`` of one metric (NaN cells left out), rows in table order."""
    t = ev.tables
    t = t[(t.metric == metric) & (t.temperature_scaled.astype(bool) == scaled) & (t.setting == setting)]
    t = t[t[col].notna()]
    return {row: dict(zip(g.method, g[col].astype(float))) for row, g in t.groupby("row", sort=False)}


def _short_row(row: str) -> str:
    return row.split(" (")[0]


def _lowest(vals: dict, among) -> bool | None:
    """Whether AdaFocal is strictly below every other method of ``among`` present (None:
    AdaFocal or every competitor missing)."""
    rivals = [vals[m] for m in among if m in vals and m != ADA]
    if ADA not in vals or not rivals:
        return None
    return vals[ADA] < min(rivals)


def _per_row(ev, test, metric: str, scaled: bool = False, setting: str = "") -> dict:
    out = {}
    for row, vals in cells(ev, metric, scaled, setting).items():
        ok = test(vals)
        if ok is not None:
            out[row] = bool(ok)
    return out


def _count_text(ok: dict, what: str) -> str:
    bad = [_short_row(r) for r, v in ok.items() if not v]
    return f"{what} in {sum(ok.values())} of {len(ok)} rows" + (f" (not: {'; '.join(bad)})" if bad else "")


def share_rule(test, metric, share: float, what: str, scaled=False, setting=""):
    """Holds when ``test(values of a row)`` is true in at least ``share`` of the rows."""
    def rule(ev):
        ok = _per_row(ev, test, metric, scaled, setting)
        if not ok:
            return "–", None
        return _count_text(ok, what), sum(ok.values()) >= share * len(ok) - 1e-9
    return rule


def every_rule(test, metric, what: str, scaled=False, setting=""):
    """Universal over rows: fails on one counterexample."""
    def rule(ev):
        ok = _per_row(ev, test, metric, scaled, setting)
        if not ok:
            return "–", None
        return _count_text(ok, what), all(ok.values())
    return rule


def both_readings(parts: dict, what: str):
    """``parts`` = ``{name: {row: ok}}`` (e.g. one per metric): read "in every row" and "in
    most rows" of every part."""
    flat = {f"{name}: {_short_row(r)}": v for name, ok in parts.items() for r, v in ok.items()}
    if not flat:
        return "–", None
    text = "; ".join(f"{name} {sum(ok.values())}/{len(ok)}" for name, ok in parts.items() if ok)
    bad = [k for k, v in flat.items() if not v]
    numbers = f"{what}: {text}" + (f" (not: {'; '.join(bad)})" if bad else "")
    most = all(sum(ok.values()) > len(ok) / 2 for ok in parts.values() if ok)
    return numbers, readings(every_row=all(flat.values()), most_rows=most)


def lowest_readings(metrics, among, what: str, scaled=False):
    def rule(ev):
        parts = {cmp.METRIC_NAMES[m].split(" (")[0]: _per_row(ev, lambda v: _lowest(v, among), m, scaled)
                 for m in metrics}
        return both_readings(parts, what)
    return rule


def _lowest_overall(vals_pre: dict, vals_post: dict) -> bool | None:
    allv = {(m, "pre"): v for m, v in vals_pre.items()} | {(m, "post"): v for m, v in vals_post.items()}
    if not any(m == ADA for m, _ in allv) or len({m for m, _ in allv}) < 2:
        return None
    ada = min(v for (m, _), v in allv.items() if m == ADA)
    return ada < min(v for (m, _), v in allv.items() if m != ADA)


def lowest_with_ts(share: float):
    def rule(ev):
        pre, post = cells(ev, "ece"), cells(ev, "ece", True)
        keep = (*TABLE1, ADA)
        ok = {r: o for r in pre if (o := _lowest_overall({m: v for m, v in pre[r].items() if m in keep},
                                                         {m: v for m, v in post.get(r, {}).items() if m in keep}))
              is not None}
        if not ok:
            return "–", None
        return _count_text(ok, "AdaFocal lowest ECE of all pre- and post-T cells"), \
            sum(ok.values()) >= share * len(ok) - 1e-9
    return rule


def t_near_one(tolerance: float, loose: float):
    def rule(ev):
        temps = {r: v[ADA] for r, v in cells(ev, "ece", True, col="T").items() if ADA in v}
        if not temps:
            return "–", None
        dev = {r: abs(t - 1) for r, t in temps.items()}
        worst = max(dev, key=dev.get)
        numbers = (f"AdaFocal T = 1 in {sum(d < 1e-9 for d in dev.values())} of {len(dev)} rows; largest |T − 1| "
                   f"= {dev[worst]:.2f} ({_short_row(worst)}, T = {temps[worst]:.2f})")
        return numbers, conditional(max(dev.values()) <= tolerance + 1e-9, max(dev.values()) <= loose + 1e-9,
                                    f"if 'close to 1' allows |T − 1| up to {loose:g}")
    return rule


def error_kept(tolerance: float):
    def rule(ev):
        ok = _per_row(ev, lambda v: (v[ADA] - v["cross_entropy"] <= tolerance + 1e-9)
                      if {ADA, "cross_entropy"} <= set(v) else None, "error")
        if not ok:
            return "–", None
        k = sum(ok.values())
        return (_count_text(ok, f"AdaFocal error at most {tolerance:g} points above cross-entropy's"),
                conditional(k == len(ok), k > len(ok) / 2, f"only in {k} of {len(ok)} rows"))
    return rule


def flsd_vs_ce(ev):
    """Sec. 6: FLSD-53 better calibrated than CE on CIFAR-10/100 and Tiny-ImageNet, worse on ImageNet."""
    keys = ev.tables.drop_duplicates("row").set_index("row")["dataset_key"].to_dict()
    ok, untried = {}, []
    for row, v in cells(ev, "ece").items():
        if not {"flsd53", "cross_entropy"} <= set(v):
            continue
        d = keys.get(row)
        if d in ("cifar10", "cifar100", "tiny_imagenet"):
            ok[row] = v["flsd53"] < v["cross_entropy"]
        elif d == "imagenet":
            ok[row] = v["flsd53"] > v["cross_entropy"]
    if not ok:
        return "–", None
    names = {"cifar100": "CIFAR-100", "tiny_imagenet": "Tiny-ImageNet", "imagenet": "ImageNet"}
    untried = [name for d, name in names.items() if not any(keys.get(r) == d for r in ok)]
    numbers = _count_text(ok, "FLSD-53 below CE on CIFAR/Tiny-ImageNet, above it on ImageNet")
    o = check(all(ok.values()))
    if untried:
        o = Outcome(o.verdict, f"tested on {', '.join(sorted({_short_row(r).split(',')[0] for r in ok}))} only; "
                               f"no {', '.join(untried)} row (not available offline)")
    return numbers, o


def bins_best_middle(ev):
    """App. I: the best of 10-20 bins beats every setting below 10 and above 20, per metric."""
    out, bad = [], []
    for m in TABLE9:
        vals = {}
        for s in _bin_settings(ev):
            v = next(iter(cells(ev, m, setting=s).values()), {}).get(ADA)
            if v is not None:
                vals[int(s.split("=")[1])] = v
        mid = {n: v for n, v in vals.items() if 10 <= n <= 20}
        ends = {n: v for n, v in vals.items() if n < 10 or n > 20}
        if not mid or not any(n < 10 for n in ends) or not any(n > 20 for n in ends):
            continue
        best = min(mid, key=mid.get)
        worse = [n for n, v in ends.items() if v <= mid[best]]
        out.append(f"{m}: best of 10-20 is {best} bins ({mid[best]:.2f})"
                   + (f", but {worse} bins do as well or better" if worse else ""))
        if worse:
            bad.append(m)
    if not out:
        return "–", untested(ev.why("bins_ablation"))
    return "; ".join(out), check(not bad)


def _bin_settings(ev) -> list[str]:
    return [s for s in dict.fromkeys(ev.tables.setting) if s.startswith("bins=")]


def _pre(ev, metric="ece", setting=""):
    return next(iter(cells(ev, metric, setting=setting).values()), {})


def calfocal_between(ev):
    """Sec. 5.1, Fig. 3c: CalFocal (Eq. 1, lambda 10 and 100) below CE, above FLSD-53."""
    v = _pre(ev)
    keys = ("calfocal1_l10", "calfocal1_l100")
    if not {"cross_entropy", "flsd53", *keys} <= set(v):
        return "–", (untested(ev.why("calfocal")) if not any(k in v for k in keys) else None)
    return (f"ECE %: CE {v['cross_entropy']:.2f}, CalFocal λ10 {v[keys[0]]:.2f}, λ100 {v[keys[1]]:.2f}, "
            f"FLSD-53 {v['flsd53']:.2f}"), all(v["flsd53"] < v[k] < v["cross_entropy"] for k in keys)


def calfocal_accuracy(ev):
    """Sec. 5.1, Fig. 3b: lambda 100 costs accuracy."""
    v = _pre(ev, "error")
    keys = ("calfocal1_l10", "calfocal1_l100")
    if not {"cross_entropy", *keys} <= set(v):
        return "–", (untested(ev.why("calfocal")) if not any(k in v for k in keys) else None)
    return (f"error %: CE {v['cross_entropy']:.2f}, λ10 {v[keys[0]]:.2f}, λ100 {v[keys[1]]:.2f}",
            v[keys[1]] > max(v[keys[0]], v["cross_entropy"]))


def calfocal_eq2_similar(tolerance: float):
    def rule(ev):
        v = _pre(ev)
        pairs = [(f"calfocal1_l{lam}", f"calfocal2_l{lam}") for lam in (10, 100)]
        if not all(a in v and b in v for a, b in pairs):
            return "–", (untested(ev.why("calfocal")) if not any(a in v for a, _ in pairs) else None)
        d = [v[b] - v[a] for a, b in pairs]
        return (f"ECE Eq. 2 − Eq. 1: λ10 {d[0]:+.2f}, λ100 {d[1]:+.2f} points",
                all(x <= tolerance + 1e-9 for x in d))
    return rule


def flsd_slightly_better(tolerance: float):
    def rule(ev):
        v = _pre(ev)
        fixed = {k: v[k] for k in ("fl3", "fl4", "fl5") if k in v}
        if "flsd53" not in v or not fixed:
            return "–", (untested(ev.why("fixed_gamma")) if not fixed else None)
        best = min(fixed, key=fixed.get)
        d = fixed[best] - v["flsd53"]
        return (f"ECE %: FLSD-53 {v['flsd53']:.2f}, best fixed γ {cmp.short(best)} {fixed[best]:.2f}",
                0 < d <= tolerance + 1e-9)
    return rule


def _ood_rows(ev):
    out = {}
    for setting in ("ood=SVHN", "ood=CIFAR-10-C"):
        pre, post = cells(ev, "auroc", False, setting), cells(ev, "auroc", True, setting)
        for row, v in pre.items():
            out[f"{_short_row(row)} / {setting[4:]}"] = (v, post.get(row, {}))
    return out


def _ood_missing(ev, needed) -> str | None:
    for name in ("cifar10c_gaussian5",):
        reason = ev.missing.get(name)
        if reason and any(cmp.short(k) in reason for k in needed):
            return reason
    return None


def ood_beats(among, what: str):
    def rule(ev):
        reason = _ood_missing(ev, (*among, "adafocal_paper", "adafocal_code"))
        rows = _ood_rows(ev)
        ok = {}
        for r, (pre, post) in rows.items():
            rivals = [x for m in among if m != ADA for x in (pre.get(m), post.get(m)) if x is not None]
            if ADA in pre and rivals:
                ok[r] = pre[ADA] > max(rivals)
        if not ok:
            return "–", untested(reason or "no AUROC of AdaFocal and the other methods")
        numbers = _count_text(ok, what)
        extra = [] if "svhn" not in ev.missing else [ev.missing["svhn"]]
        o = check(all(ok.values()))
        if reason or extra:
            o = Outcome(o.verdict, "; ".join(x for x in (reason, *extra) if x))
        return numbers, o
    return rule


def ts_ineffective(tolerance: float):
    def rule(ev):
        rows = _ood_rows(ev)
        gains = {r: max((post[m] - pre[m] for m in pre if m in post and m in TABLE10), default=math.nan)
                 for r, (pre, post) in rows.items()}
        gains = {r: g for r, g in gains.items() if not math.isnan(g)}
        if not gains:
            return "–", None
        return ("largest post-T − pre-T AUROC per row: " + "; ".join(f"{r} {g:+.2f}" for r, g in gains.items()),
                all(g <= tolerance + 1e-9 for g in gains.values()))
    return rule


def not_here(part: str):
    """A claim neither side can test here (e.g. ImageNet); the reason is the evidence's."""
    def rule(ev):
        return "–", untested(ev.why(part))
    return rule


def rules(t_tolerance: float = 0.1, t_loose: float = 0.2, error_tolerance: float = 1.0,
          similar_tolerance: float = 0.5, slight_tolerance: float = 0.5, ts_tolerance: float = 1.0):
    """The claims of Ghosh et al. (2022) as rules; tolerances in percentage points (T: absolute).

    ``t_tolerance``: "close to 1" for the optimal T (Mukhoti et al.'s 0.9-1.1), ``t_loose``
    the looser reading; ``error_tolerance``: "without a significant loss in accuracy" (error
    at most this far above cross-entropy's); ``similar_tolerance``: "very similar" ECE
    (CalFocal Eq. 2 vs Eq. 1); ``slight_tolerance``: "only slightly better" (FLSD-53 vs fixed
    gamma); ``ts_tolerance``: "temperature scaling is ineffective" (largest AUROC gain).
    """
    for name, v in (("t_tolerance", t_tolerance), ("t_loose", t_loose), ("error_tolerance", error_tolerance),
                    ("similar_tolerance", similar_tolerance), ("slight_tolerance", slight_tolerance),
                    ("ts_tolerance", ts_tolerance)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    low_t1 = lambda v: _lowest(v, TABLE1)  # noqa: E731
    C = cmp.Claim
    return (
        C("Before temperature scaling AdaFocal has the lowest ECE, by a substantial margin, in 9 of 11 cases",
          "Sec. 6, Table 1", share_rule(low_t1, "ece", 9 / 11, "AdaFocal lowest pre-T ECE"),
          "rows where AdaFocal's pre-T ECE is below CE, Brier, MMCE, LS-0.05 and FLSD-53: share >= 9/11"),
        C("With temperature scaling included, AdaFocal has the lowest ECE in 7 of 11 experiments",
          "Sec. 6, Table 1", lowest_with_ts(7 / 11), "rows where AdaFocal holds the lowest of all pre- and post-T "
                                                      "ECE cells: share >= 7/11"),
        C("AdaFocal's optimal temperature is 1 in many cases and close to 1 in the rest (innately calibrated)",
          "Sec. 6, Sec. 7, Table 1", t_near_one(t_tolerance, t_loose),
          f"|T - 1| <= {t_tolerance:g} for AdaFocal in every row (T by validation ECE)"),
        C("For any dataset-model pair AdaFocal leads to the gammas that give the best calibration",
          "App. A", every_rule(low_t1, "ece", "AdaFocal lowest pre-T ECE"),
          "AdaFocal's pre-T ECE below every baseline of Table 1 in every row"),
        C("AdaFocal substantially outperforms the regular focal loss (FLSD-53) consistently",
          "Abstract, Sec. 1, Table 1", every_rule(lambda v: _lowest(v, ("flsd53",)), "ece",
                                                  "AdaFocal pre-T ECE below FLSD-53"),
          "AdaFocal's pre-T ECE below FLSD-53's in every row"),
        C("AdaFocal improves calibration without a significant loss in accuracy", "Abstract, Sec. 6, Table 2",
          error_kept(error_tolerance), f"AdaFocal's test error at most {error_tolerance:g} points above "
                                       f"cross-entropy's in every row"),
        C("FLSD-53 is much better calibrated than CE on CIFAR-10, CIFAR-100 and Tiny-ImageNet; on ImageNet "
          "the reverse", "Sec. 6, Fig. 4, Table 1", flsd_vs_ce, "pre-T ECE of FLSD-53 vs CE per row"),
        C("AdaFocal outperforms all the baselines by a substantial margin in AdaECE, especially pre-T",
          "App. F, Table 3", lowest_readings(("adaece",), TABLE1, "AdaFocal lowest pre-T AdaECE"),
          "AdaFocal's pre-T AdaECE below every baseline: in every row / in most rows"),
        C("AdaFocal outperforms all the baselines by a substantial margin in classwise ECE, especially pre-T",
          "App. F, Table 4", lowest_readings(("classwise_ece",), TABLE1, "AdaFocal lowest pre-T classwise ECE"),
          "AdaFocal's pre-T classwise ECE strictly below every baseline (a tie is not below): every / most rows"),
        C("The debiased estimates (ECE_debias 15 and 30 bins, EW and EM ECE_sweep) confirm AdaFocal's lower "
          "calibration error", "Sec. 2, Sec. 6, App. G, Tables 5-8",
          lowest_readings(DEBIASED, ("cross_entropy", "flsd53"), "AdaFocal below CE and FLSD-53 pre-T"),
          "AdaFocal's pre-T value below CE's and FLSD-53's, each of the four metrics: every / most rows"),
        C("The best results come from 10 to 20 validation bins; fewer than 10 or more than 20 degrade them",
          "Sec. 6, App. I, Table 9", bins_best_middle,
          "per Table 9 metric (pre-T): the best of 10-20 bins below every setting < 10 and > 20"),
        C("AdaFocal with γmax = 20 is consistently better than FLSD-53 (9 of 9 runs)", "App. L.1, Fig. 17",
          runs_below_flsd("", 1.0, "γmax 20"), "every AdaFocal run's pre-T ECE below FLSD-53's mean over seeds"),
        C("AdaFocal with γmax = 50 is mostly better than FLSD-53", "App. L.2, Fig. 19",
          runs_below_flsd("gamma_max=50", 0.5 + 1e-9, "γmax 50"),
          "more than half of the γmax-50 runs below FLSD-53's mean pre-T ECE"),
        C("AdaFocal with γmax = 50 varies more across runs than with γmax = 20", "App. L.2, Fig. 19", more_variable,
          "standard deviation over seeds of the pre-T ECE"),
        C("Unconstrained AdaFocal is better than FLSD-53 in 7 of 9 runs", "App. L.3, Fig. 21",
          runs_below_flsd("gamma_max=unbounded", 7 / 9, "unbounded"),
          "share of unbounded runs below FLSD-53's mean pre-T ECE >= 7/9"),
        C("Unconstrained gammas blow up to very high values in the lower bins and settle in the higher bins",
          "App. L.3, Fig. 22", unbounded_blows_up, "final γ above 20 in one of the three lowest bins, at most 20 "
                                                  "in the three highest"),
        C("AdaFocal is significantly better at OOD detection than the competing methods",
          "Abstract, Sec. 1, Sec. 7, Table 10", ood_beats(("cross_entropy", "brier", "mmce", "ls005", "fl3",
                                                           "flsd53"), "AdaFocal highest AUROC"),
          "AdaFocal's pre-T entropy AUROC above every other cell (pre and post T) of its row"),
        C("Models trained with AdaFocal outperform FL-3 and FLSD-53 at OOD detection", "Sec. 6, Table 10, Fig. 6",
          ood_beats(("fl3", "flsd53"), "AdaFocal above FL-3 and FLSD-53"),
          "AdaFocal's pre-T AUROC above FL-3's and FLSD-53's, pre and post T, every row"),
        C("Temperature scaling is ineffective for OOD detection under distributional shift", "Sec. 6, Fig. 6",
          ts_ineffective(ts_tolerance), f"no method gains more than {ts_tolerance:g} AUROC points from TS"),
        C("Although FL-4 achieves the lowest validation AdaECE, no single γ is the best in every bin",
          "Sec. 3, Fig. 1, App. B", fl4_lowest_adaece, "final validation AdaECE (15 equal-mass bins) of CE, "
                                                       "FL-3/4/5: is FL-4 the lowest?"),
        C("No single fixed γ achieves the best calibration in every validation bin", "Sec. 3, Fig. 1, App. B",
          no_single_gamma, "per validation bin, the γ in {0, 3, 4, 5} with the smallest |E_val|: not always "
                           "the same"),
        C("FLSD-53 is not the best strategy across all the bins either", "Sec. 3, Fig. 1(b)", flsd_not_best,
          "FLSD-53 is not the smallest |E_val| among CE, FL-3/4/5, FLSD-53 in every bin"),
        C("C_train and C_val correspond: as γ increases (0, 3, 5) both get lower", "Sec. 4, Fig. 2(b)",
          correspondence, "in most validation bins CE > FL-3 > FL-5 for both C_train (common binning) and C_val "
                          "(final epoch)"),
        C("CalFocal (λ = 10, 100) reduces the calibration error compared to CE but stays far from FLSD-53",
          "Sec. 5.1, Fig. 3(c)", calfocal_between, "pre-T ECE: FLSD-53 < CalFocal Eq. 1 (λ 10 and 100) < CE"),
        C("Too high λ (= 100) affects the accuracy of CalFocal", "Sec. 5.1, Fig. 3(b)", calfocal_accuracy,
          "test error of CalFocal Eq. 1 λ 100 above λ 10's and CE's"),
        C("CalFocal Eq. 2 performs very similarly to (or slightly better than) Eq. 1", "Sec. 5.1, App. D, Fig. 13",
          calfocal_eq2_similar(similar_tolerance), f"ECE(Eq. 2) - ECE(Eq. 1) <= {similar_tolerance:g} points, "
                                                   f"λ 10 and 100"),
        C("CE is over-confident compared to FLSD-53 in every bin (CIFAR-10)", "Sec. 6, Fig. 5(a)",
          ce_overconfident_every_bin, "final validation E_val = C_val - A_val per bin: CE above FLSD-53 in all"),
        C("AdaFocal finds the γs that produce the lowest calibration error in each bin", "Fig. 5 caption",
          ada_lowest_every_bin, "final |E_val| per validation bin: AdaFocal at most CE's and FLSD-53's in all"),
        C("On CIFAR-10 AdaFocal's γ ends close to 1 in the higher bins and close to 20 in the lowest bin",
          "Sec. 6, Fig. 5(a)", gamma_ends, "final γ of the lowest bin nearer 20 than 1, of the highest nearer 1"),
        C("On ImageNet FLSD-53 is under-confident in every bin and AdaFocal's γ goes to 0 (cross-entropy)",
          "Sec. 6, Fig. 5(b), App. A, Fig. 8", not_here("imagenet"), "ImageNet validation bins and γ"),
        C("AdaFocal's mean ECE over runs is significantly below the baselines' (error bars)", "Sec. 6, App. H, "
          "Fig. 14", error_bars_separate, "AdaFocal's mean + 1 sd below CE's and FLSD-53's mean - 1 sd (pre-T)"),
        C("FLSD-53 is only slightly better than focal loss with a fixed γ", "Abstract",
          flsd_slightly_better(slight_tolerance),
          f"0 < best fixed-γ ECE - FLSD-53 ECE <= {slight_tolerance:g} points (FL-3/4/5, pre-T)"),
        C("The moving-average γ update (MA-α) is not as effective as AdaFocal's", "App. K, Fig. 15-16",
          not_here("moving_average"), "ECE of MA-α runs vs AdaFocal"),
    )
