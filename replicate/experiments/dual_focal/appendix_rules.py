"""The rules that decide the claims of the appendices of Tao, Dong & Xu (2023), Dual Focal
Loss: App. E (Tables 5-9: AdaECE, classwise ECE, MCE, NLL, OOD AUROC) and Apps. F-I (Tables
10-13: KDE-XE, RBS, repeated runs, the gamma sweep).

As in :mod:`.rules`, each rule reads an
:class:`~replicate.experiments.dual_focal.evidence.Evidence` (the paper's printed tables or
our runs) and returns ``(numbers, outcome)``; vague words get the thresholds of
:mod:`.terms`. The claims are listed in :mod:`.claims`.
"""
from __future__ import annotations

import math

from ...claims import untested
from ...comparison.layouts import pivot
from .terms import OTHER_DATA, SEVEN, TOP_K, gone, most, wins

KDE_XE = ("KDE-XE (Popordanoska et al. 2022), its training setting and its networks (ResNet-110sd, DenseNet-40) "
          "are not implemented here")


# ----------------------------------------------------------------------------- Appendix E
def adaece_competitive(ev, gap: float = 0.1):
    if (g := gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table5", "adaece", among=SEVEN).dropna(subset=["dual_focal"]) \
        if "dual_focal" in pivot(ev.tables, "table5", "adaece") else None
    if tab is None or not len(tab):
        return "–", None
    d = tab["dual_focal"] - tab.min(axis=1)
    won = int((d <= 1e-9).sum())
    return (f"DFL lowest pre-T AdaECE in {won} of {len(d)} rows; largest gap to the lowest {d.max():.2f}",
            bool((d <= gap + 1e-9).all()) and won >= len(d) - 1)


def lowest_in_most(table, metric, label):
    def rule(ev):
        if (g := gone(ev, "image")):
            return g
        pre = wins(pivot(ev.tables, table, metric), "dual_focal")
        post = wins(pivot(ev.tables, table, metric, True), "dual_focal")
        if not pre[1]:
            return "–", None
        text = f"DFL lowest pre-T {label} in {pre[0]} of {pre[1]} rows" + (
            f", post T in {post[0]} of {post[1]}" if post[1] else "")
        return text, most(pre[0], pre[1]) and (not post[1] or pre[0] / pre[1] >= post[0] / post[1])
    return rule


def nll_complex(ev):
    f = ev.tables[ev.tables.dataset_key.isin(["cifar100", "tiny_imagenet"])]
    won, n, lost = wins(pivot(f, "table8", "nll"), "dual_focal")
    if not n:
        return ("–", untested("no CIFAR-100 or Tiny-ImageNet runs: " + OTHER_DATA)) if ev.kind == "ours" \
            else ("–", None)
    return (f"DFL lowest pre-T NLL in {won} of {n} CIFAR-100/Tiny-ImageNet rows"
            + (f" (not in: {'; '.join(lost)})" if lost else ""), won == n)


def auroc_competitive(ev):
    if (g := gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table9", "auroc", setting=None, among=SEVEN)
    if tab.empty or "dual_focal" not in tab:
        return ("–", untested("no run of the chapter recorded OOD logits")) if ev.kind == "ours" else ("–", None)
    tab = tab.dropna(subset=["dual_focal"])
    ranks = [int((r.dropna() > r["dual_focal"] + 1e-9).sum()) + 1 for _, r in tab.iterrows()]
    k = sum(rk <= TOP_K for rk in ranks)
    where = "; ".join(f"{row.split(', ')[-1]} {s.replace('ood=', '')}: rank {rk} of {int(r.notna().sum())}"
                      for ((row, s), r), rk in zip(tab.iterrows(), ranks))
    return f"DFL's pre-T AUROC {where}", most(k, len(ranks)) if ranks else None


# ----------------------------------------------------------------------------- Appendices F-I
def kde_xe(metric, dfl_lower: bool):
    def rule(ev):
        if ev.kind == "ours":
            return "–", untested(KDE_XE)
        t = pivot(ev.tables, "table10" if metric == "ece" else "table10_kde", metric)
        t = t.reindex(columns=["dual_focal", "kde_xe"]).dropna()
        k = int((t["dual_focal"] < t["kde_xe"]).sum())
        return f"DFL below KDE-XE in {k} of {len(t)} rows", (k == len(t)) if dfl_lower else (k == 0)
    return rule


def rbs_lowest(ev):
    if (g := gone(ev, "image")):
        return g
    won, n, lost = wins(pivot(ev.tables, "table11", "rbs"), "dual_focal")
    return (f"DFL lowest RBS in {won} of {n} rows", won == n) if n else ("–", None)


def robust_over_seeds(ev):
    if (g := gone(ev, "image")):
        return g
    f = ev.tables[ev.tables.table == "table12"]
    if ev.kind == "ours" and (f.empty or f["n"].max() < 2):
        return "–", untested("one seed: Table 12 is about repeated runs (run the chapter with several seeds)")
    cells = []
    for metric, scaled in (("ece", False), ("ece", True), ("adaece", False), ("classwise_ece", False)):
        t = pivot(f, "table12", metric, scaled)
        if "dual_focal" in t and len(t):
            r = t.iloc[0].dropna()
            cells.append(math.isclose(r["dual_focal"], r.min(), abs_tol=1e-9))
    if not cells:
        return "–", None
    return f"DFL lowest mean in {sum(cells)} of {len(cells)} metrics (ECE, ECE(T), AdaECE, classwise ECE)", all(cells)


def gamma5_best(ev):
    if (g := gone(ev, "gamma")):
        return g
    f = ev.tables[ev.tables.table == "table13"]
    best = {}
    for metric, scaled, name in (("ece", False, "ECE"), ("ece", True, "ECE(T)"), ("adaece", False, "AdaECE"),
                                 ("classwise_ece", False, "classwise ECE")):
        s = f[(f.metric == metric) & (f.temperature_scaled == scaled)].set_index("setting")["mean"].dropna()
        if len(s) > 1:
            best[name] = s.idxmin()
    if not best or "gamma=5" not in set(f.setting):
        return "–", None
    return "lowest: " + ", ".join(f"{k} at {v}" for k, v in best.items()), all(v == "gamma=5" for v in best.values())
