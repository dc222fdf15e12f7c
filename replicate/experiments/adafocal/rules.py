"""The rules that decide the experimental claims of Ghosh et al. (2022, ICLR 2022 submission).

Each rule reads an :class:`replicate.experiments.adafocal.evidence.Evidence` - the paper's
printed tables (every row) or our runs - and returns ``(numbers, outcome)``. Claims about
"k of n" experiments hold when the share of rows is at least the paper's; universal claims
("any", "every", "consistently") fail on one counterexample, named in the numbers; claims
without a quantifier over experiments ("outperforms all baselines") are read both ways
(every row / most rows) with :func:`replicate.claims.readings`. A rule whose numbers the
paper prints only as a figure, or that our runs cannot provide, is "not tested" with the
reason. AdaFocal is the method ``adafocal`` of either side. The list of claims, each with
its rule, is :func:`replicate.experiments.adafocal.claims.rules`; the figure rules are in
:mod:`.figure_rules`.
"""
from __future__ import annotations

import math

from ... import comparison as cmp
from ...claims import Outcome, check, conditional, readings, untested

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


def t_near_one(tolerance: float):
    """AdaFocal's T within ``tolerance`` of 1 in every row (the book's one "close to 1",
    :data:`replicate.comparison.wording.T_TOLERANCE`)."""
    def rule(ev):
        temps = {r: v[ADA] for r, v in cells(ev, "ece", True, col="T").items() if ADA in v}
        if not temps:
            return "–", None
        dev = {r: abs(t - 1) for r, t in temps.items()}
        worst = max(dev, key=dev.get)
        numbers = (f"AdaFocal T = 1 in {sum(d < 1e-9 for d in dev.values())} of {len(dev)} rows; largest |T − 1| "
                   f"= {dev[worst]:.2f} ({_short_row(worst)}, T = {temps[worst]:.2f})")
        return numbers, max(dev.values()) <= tolerance + 1e-9
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
