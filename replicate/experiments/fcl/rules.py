"""The rules that decide the experimental claims of Liang et al. (FCL) on an
:class:`.evidence.Evidence`.

Each rule reads either side - the paper's printed tables (every row) or our runs - and
returns ``(numbers, outcome)``. Claims worded "consistently" are read two ways with
:func:`replicate.claims.readings` (in every row / in most rows); "in most cases" and
"across most datasets" mean more than half of the rows; a claim about named networks or
data sets is tested on their rows only. A claim the paper supports only with a figure is
"not tested" on the paper's side (no printed numbers), and a claim about data or networks
we do not have is "not tested" on ours, each with the reason. The rules about the
paper's figures (Figs. 3, 6, 7, 8) are in :mod:`.figure_rules`; the list of claims, each
with its rule, is :func:`replicate.experiments.fcl.claims.rules`.
"""
from __future__ import annotations

import math

import numpy as np

from ... import comparison as cmp
from ...claims import beyond, readings, untested
from . import plan as fcl

FCL = "fcl"
CAL_METRICS = ("ece", "smece", "adaece", "classwise_ece")
NAMES = {"ece": "ECE", "smece": "smCE", "adaece": "AdaECE", "classwise_ece": "classwise ECE", "error": "error",
         "auroc": "AUROC", "mce": "MCE", "smce": "smCE (Def. 2.2)"}
RIVALS = ("brier", "mmce", "ls005", "flsd53")


# ----------------------------------------------------------------------------- table helpers
def cells(ev, metric: str, scaled: bool = False, setting: str = "", keep=None) -> dict:
    """``{row: {method: value}}`` of one metric (NaN cells left out), rows in print order;
    ``keep(dataset_key, model_key, row)`` selects rows."""
    t = ev.tables
    t = t[(t.metric == metric) & (t.temperature_scaled.astype(bool) == scaled) & (t.setting == setting)]
    t = t[t["mean"].notna()]
    out = {}
    for row, g in t.groupby("row", sort=False):
        if keep is None or keep(g.dataset_key.iloc[0], g.model_key.iloc[0], row):
            out[row] = dict(zip(g.method, g["mean"].astype(float)))
    return out


def _best(vals: dict, among=fcl.METHOD_KEYS, high: bool = False) -> bool | None:
    """FCL at least as good as every other method of ``among`` present (None: FCL or all
    rivals missing); ``high``: larger is better."""
    rivals = [v for m, v in vals.items() if m in among and m != FCL]
    if FCL not in vals or not rivals:
        return None
    return vals[FCL] >= max(rivals) if high else vals[FCL] <= min(rivals)


def _rank(vals: dict) -> int | None:
    """FCL's rank (1 = lowest) among the methods of Table 1 present."""
    if FCL not in vals or len(vals) < 2:
        return None
    return 1 + sum(v < vals[FCL] for m, v in vals.items() if m != FCL and m in fcl.METHOD_KEYS)


def per_row(ev, test, metric, scaled=False, setting="", keep=None) -> dict:
    """``{row: bool}`` of ``test(values of the row)`` where it is decided (not None)."""
    out = {}
    for row, vals in cells(ev, metric, scaled, setting, keep).items():
        ok = test(vals)
        if ok is not None:
            out[row] = bool(ok)
    return out


def _count(ok: dict) -> str:
    bad = [r for r, v in ok.items() if not v]
    return f"{sum(ok.values())}/{len(ok)}" + (f" (not: {'; '.join(bad)})" if bad else "")


def every_and_most(parts: dict, what: str):
    """``parts`` = ``{name: {row: ok}}``: read "in every row" and "in most rows" of every part."""
    parts = {k: v for k, v in parts.items() if v}
    if not parts:
        return "–", None
    numbers = f"{what}: " + "; ".join(f"{k} {_count(v)}" for k, v in parts.items())
    every = all(all(v.values()) for v in parts.values())
    most = all(sum(v.values()) > len(v) / 2 for v in parts.values())
    if all(len(v) == 1 for v in parts.values()):
        return numbers, every                 # one row: both readings are the same test
    return numbers, readings(every_row=every, most_rows=most)


def most(parts: dict, what: str):
    """More than half of the rows in every part."""
    parts = {k: v for k, v in parts.items() if v}
    if not parts:
        return "–", None
    numbers = f"{what}: " + "; ".join(f"{k} {_count(v)}" for k, v in parts.items())
    return numbers, all(sum(v.values()) > len(v) / 2 for v in parts.values())


def every(parts: dict, what: str, reason: str = ""):
    """Every row of every part; with no row, "not tested" with ``reason``."""
    parts = {k: v for k, v in parts.items() if v}
    if not parts:
        return "–", (untested(reason) if reason else None)
    numbers = f"{what}: " + "; ".join(f"{k} {_count(v)}" for k, v in parts.items())
    return numbers, all(all(v.values()) for v in parts.values())


# ----------------------------------------------------------------------------- Sec. 5.1-5.4
def lowest_pre(ev):
    parts = {NAMES[m]: per_row(ev, _best, m) for m in CAL_METRICS}
    return every_and_most(parts, "rows where FCL's pre-T value is the lowest")


def among_lowest_post(k: int):
    def rule(ev):
        parts = {NAMES[m]: per_row(ev, lambda v: None if _rank(v) is None else _rank(v) <= k, m, True)
                 for m in CAL_METRICS}
        return most(parts, f"rows where FCL's post-T value is among the {k} lowest")
    return rule


def excels_on_networks(ev):
    nets = {"densenet121", "resnet50", "resnet110"}
    ok = per_row(ev, _best, "ece", keep=lambda d, m, r: m in nets and d in ("cifar10", "cifar100"))
    return every({"ECE": ok}, "DenseNet-121 / ResNet-50 / ResNet-110 rows where FCL's pre-T ECE is the lowest",
                 "our runs use none of these networks (they run at the gpu and paper profiles)")


def beats_ce_on_images(ev):
    keep = (lambda d, m, r: d in ("cifar10", "cifar100", "tiny_imagenet"))
    ok = per_row(ev, lambda v: None if not {FCL, "cross_entropy"} <= set(v) else v[FCL] < v["cross_entropy"],
                 "ece", keep=keep)
    return every({"ECE": ok}, "CIFAR-10/100 and Tiny-ImageNet rows where FCL's pre-T ECE is below cross-entropy's")


def beats_rivals_pre_post(ev):
    def test(v):
        rivals = [v[m] for m in RIVALS if m in v]
        return None if FCL not in v or not rivals else v[FCL] <= min(rivals)
    parts = {f"ECE {'post' if s else 'pre'} T": per_row(ev, test, "ece", s) for s in (False, True)}
    return every_and_most(parts, "rows where FCL's ECE is at most that of Brier, MMCE, LS-0.05 and FLSD-53")


def _fig9_rows(d, m, row):
    return d == "cifar10" and (m == "resnet110" or row.endswith("(ours)"))


FIG9 = fcl.FIG9_METHODS


def fig9_lowest_ece(ev):
    ok = per_row(ev, lambda v: _best(v, FIG9), "ece", keep=_fig9_rows)
    return every({"ECE": ok}, "CIFAR-10 rows (ResNet-110 for the paper, Table 1) where FCL has the lowest pre-T "
                              "ECE of CE, FLSD-53, DFL, FCL")


def fig9_low_mce(ev):
    got = cells(ev, "mce", keep=_fig9_rows)
    if not got:
        return "–", untested("the paper prints MCE only in Fig. 9's panels" if ev.epochs is None else
                             ev.why("image"))
    row, vals = next(iter(got.items()))
    others = [vals[m] for m in FIG9 if m in vals and m != FCL]
    if FCL not in vals or not others:
        return "–", None
    return (f"MCE % pre T: FCL {vals[FCL]:.2f}, mean of CE, FLSD-53, DFL {np.mean(others):.2f}",
            vals[FCL] < np.mean(others))


def ce_overconfident_high(ev, min_share: float = 0.01):
    if ev.reliability is None:
        return "–", untested(ev.why("reliability"))
    r = ev.reliability[ev.reliability["count"] >= min_share * ev.reliability["count"].sum()]
    gap = r["confidence"] - r["accuracy"]
    high, low = r["confidence"] >= 0.5, r["confidence"] < 0.5
    if not high.any():
        return "–", untested("cross-entropy puts no populated bin at confidence >= 0.5")
    w = r["count"]
    g_hi = float(np.average(gap[high], weights=w[high]))
    g_lo = float(np.average(gap[low], weights=w[low])) if low.any() else -math.inf
    text = (f"CE over-confident in {int((gap[high] > 0).sum())}/{int(high.sum())} populated bins at confidence "
            f">= 0.5; mean gap there {100 * g_hi:.1f} points" + (f", below 0.5 {100 * g_lo:.1f}" if low.any() else ""))
    return text, bool((gap[high] > 0).all() and g_hi > g_lo)


def lowest_error_most(ev):
    return most({"error": per_row(ev, _best, "error")}, "rows where FCL's test error is the lowest")


def lowest_error_c100_news(ev):
    keep = (lambda d, m, r: d in ("cifar100", "20newsgroups", "ag_news"))
    return every({"error": per_row(ev, _best, "error", keep=keep)},
                 "CIFAR-100 and news rows where FCL's test error is the lowest",
                 "our runs hold neither CIFAR-100 nor a news data set")


def highest_auroc(ev):
    if "ood" in ev.missing:                   # a partial set of methods would decide nothing
        return "–", untested(ev.why("ood"))
    parts = {f"AUROC {'post' if s else 'pre'} T": per_row(ev, lambda v: _best(v, high=True), "auroc", s)
             for s in (False, True)}
    return most(parts, "OOD rows where FCL's AUROC is the highest")


# ----------------------------------------------------------------------------- Sec. 5.5.3 (post-processing gap)
def _change(vals_pre, vals_post, m):
    return abs(vals_pre[m] - vals_post[m])


def focal_drops(share: float):
    def rule(ev):
        parts = {}
        for metric in CAL_METRICS:
            pre, post = cells(ev, metric), cells(ev, metric, True)
            parts[NAMES[metric]] = {r: (pre[r]["flsd53"] - post[r]["flsd53"]) >= share * pre[r]["flsd53"]
                                    for r in pre if "flsd53" in pre[r] and "flsd53" in post.get(r, {})}
        return every_and_most(parts, f"rows where TS lowers FLSD-53's value by at least {share:.0%}")
    return rule


def fcl_t_near_one(tol: float):
    def rule(ev):
        pre, post = cells(ev, "ece"), cells(ev, "ece", True)
        t = ev.tables
        tt = t[(t.metric == "ece") & t.temperature_scaled & (t.method == FCL) & (t.setting == "")]
        T = dict(zip(tt.row, tt["T"].astype(float)))
        ok = {}
        for r in pre:
            if not ({FCL, "flsd53"} <= set(pre[r]) and {FCL, "flsd53"} <= set(post.get(r, {})) and r in T):
                continue
            ok[r] = abs(T[r] - 1) <= tol + 1e-9 and _change(pre[r], post[r], FCL) <= _change(pre[r], post[r], "flsd53")
        return every_and_most({"ECE": ok}, f"rows where FCL's T is within {tol:g} of 1 and TS changes its ECE no more "
                                           f"than FLSD-53's")
    return rule


def smce_below_focal(ev):
    got = cells(ev, "smce")
    ok = {r: v[FCL] < v["flsd53"] for r, v in got.items() if {FCL, "flsd53"} <= set(v)}
    if not ok:
        reason = ("the paper prints no Lipschitz smCE (Def. 2.2): its smCE table is most likely the kernel smECE"
                  if ev.epochs is None else ev.why("image"))
        return "–", untested(reason)
    vals = "; ".join(f"{r}: FCL {got[r][FCL]:.2f}, FLSD-53 {got[r]['flsd53']:.2f}" for r in ok)
    return f"smCE % pre T: {vals}", beyond(all(ok.values()))


# ----------------------------------------------------------------------------- App. A.11, A.15, A.16, Sec. 5.3
def l2_beats_l1(ev):
    pre = {s: cells(ev, "ece", setting=s) for s in ("norm=l1", "norm=l2")}
    ok = {r: v[FCL] < pre["norm=l1"][r][FCL] for r, v in pre["norm=l2"].items()
          if FCL in v and FCL in pre["norm=l1"].get(r, {})}
    if not ok and ev.epochs is not None:
        return "–", untested(ev.why("norm"))
    return every({"ECE": ok}, "rows where the L2 term gives a lower ECE than L1")


def chexnet(ev):
    if ev.epochs is None:
        return "–", untested("Table 9 (App. A.16) is not stored as data: two of its columns are other papers' "
                             "models and its 'Average' row adds symbols the text never defines (paper_tables)")
    return "–", untested("ChestX-ray14 (CheXNet) is not available offline")


def gradcam(ev):
    return "–", untested("a qualitative comparison of Grad-CAM heatmaps on ChestX-ray14, which is not available "
                         "offline; the paper gives no measure to test")
