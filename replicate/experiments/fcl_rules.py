"""The experimental claims of Liang et al. (FCL) as rules on an :class:`.fcl_evidence.Evidence`.

Each rule reads either side - the paper's printed tables (every row) or our runs - and
returns ``(numbers, outcome)``. Claims worded "consistently" are read two ways with
:func:`replicate.claims.readings` (in every row / in most rows); "in most cases" and
"across most datasets" mean more than half of the rows; a claim about named networks or
data sets is tested on their rows only. A claim the paper supports only with a figure is
"not tested" on the paper's side (no printed numbers), and a claim about data or networks
we do not have is "not tested" on ours, each with the reason. The rules about the
paper's figures (Figs. 3, 6, 7, 8) are in :mod:`.fcl_figure_rules`.
"""
from __future__ import annotations

import math

import numpy as np

from .. import comparison as cmp
from ..claims import beyond, readings, untested
from . import fcl
from .fcl_figure_rules import (fastest_convergence, initial_ce_steadier, lowest_error_over_training,
                               middle_lowest_stable, one_best_lambda, post_nll_lower, sweep_falls, too_much_lambda,
                               toy_balance, toy_smoother)

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


# ----------------------------------------------------------------------------- the claims
def rules(among: int = 3, fraction: float = 0.9, ts_drop: float = 0.2, t_tolerance: float = 0.1,
          toy_error: float = 1.0) -> tuple[cmp.Claim, ...]:
    """The experimental claims of Liang et al., in the paper's order. Thresholds the paper
    leaves open: "among the lowest" = among the ``among`` lowest of the seven methods;
    "converges faster" = reaches ``fraction`` of its largest drop of normalised test loss
    sooner; a "significant reduction" by TS = at least ``ts_drop`` of the pre-T value; "T
    close to 1" = within ``t_tolerance``; "balancing accuracy" = at most ``toy_error``
    points more test error."""
    C = cmp.Claim
    return (
        C("FCL consistently has the lowest pre-T calibration error (ECE, smCE, AdaECE, classwise ECE)",
          "Sec. 5.1.1; Tables 1, 3, 6, 7", lowest_pre,
          "per row: FCL's pre-T value <= every other method's; read in every row and in most rows, per metric"),
        C("FCL's post-T calibration error is also among the lowest", "Sec. 5.1.1; Tables 1, 3, 6, 7",
          among_lowest_post(among), f"per row: FCL among the {among} lowest of the seven methods post T; most rows"),
        C("FCL excels with DenseNet-121 and ResNet-50/110", "Sec. 5.1.1; Table 1", excels_on_networks,
          "CIFAR rows of those networks: FCL's pre-T ECE the lowest; every row"),
        C("FCL improves calibration markedly on CIFAR-10, CIFAR-100 and Tiny-ImageNet", "Sec. 5.1.1; Table 1",
          beats_ce_on_images, "rows of those data sets: FCL's pre-T ECE below cross-entropy's; every row"),
        C("FCL outperforms Brier, MMCE, label smoothing and focal loss before and after TS",
          "Sec. 5.1.1; Table 1", beats_rivals_pre_post,
          "per row: FCL's ECE <= that of Brier, MMCE, LS-0.05, FLSD-53, pre and post T; every row / most rows"),
        C("Of CE, FLSD-53, Dual Focal and FCL, FCL is the best calibrated, with the lowest ECE",
          "Sec. 5.1.2; Fig. 9 (ResNet-110, CIFAR-10)", fig9_lowest_ece,
          "pre-T ECE on CIFAR-10 (paper: Table 1's ResNet-110 row, the figure's network)"),
        C("FCL has a relatively low MCE", "Sec. 5.1.2; Fig. 9", fig9_low_mce,
          "pre-T MCE of FCL below the mean of CE, FLSD-53 and DFL"),
        C("Cross-entropy shows a large gap between confidence and accuracy, especially in the high-confidence bins",
          "Sec. 5.1.2; Fig. 9", ce_overconfident_high,
          "CE's test reliability bins (>= 1 % of samples): over-confident in every bin at confidence >= 0.5, "
          "with a larger mean gap there than below 0.5"),
        C("FCL keeps the lowest test error during training", "Sec. 5.1.2; Fig. 8 (ResNet-50, epochs 100-300)",
          lowest_error_over_training, "mean test error over the epochs matching the paper's 100-300 of 350"),
        C("FCL achieves the lowest classification error in most cases across all data sets and models",
          "Sec. 5.2.1; Table 2", lowest_error_most, "rows where FCL's test error is the lowest; more than half"),
        C("FCL's error advantage shows especially on CIFAR-100 and the news data sets", "Sec. 5.2.1; Table 2",
          lowest_error_c100_news, "CIFAR-100, 20 Newsgroups and AG News rows: FCL's error the lowest; every row"),
        C("Across most OOD data sets FCL achieves the highest AUROC", "Sec. 5.4; Table 4", highest_auroc,
          "per OOD row: FCL's entropy AUROC the highest, pre and post T; more than half of the rows"),
        C("FCL converges faster: it reaches a low normalised test loss sooner than CE, FL and DFL",
          "Sec. 5.5.1; Fig. 3", fastest_convergence(fraction),
          f"first epoch at which the normalised test NLL has made {fraction:.0%} of its largest drop"),
        C("In epochs 50-150, FCL and DFL have the lowest and most stable test loss", "Sec. 5.5.1; Fig. 3",
          middle_lowest_stable, "the two lowest means and the two smallest s.d. of the normalised test NLL over "
                                "the matching epochs are FCL's and DFL's"),
        C("In epochs 0-50, cross-entropy's test loss falls steadily while focal loss varies more",
          "Sec. 5.5.1; Fig. 3", initial_ce_steadier,
          "s.d. of the epoch-to-epoch changes of the normalised test NLL over the matching epochs, FL-3 vs CE"),
        C("NLL decreases as lambda grows from 0 to 0.5", "Sec. 5.5.2; Fig. 6", sweep_falls("nll"),
          "pre-T test NLL of FCL at lambda 0.5 vs 0 (same gamma)"),
        C("After temperature scaling NLL is generally lower", "Sec. 5.5.2; Fig. 6", post_nll_lower,
          "post-T below pre-T NLL for more than half of the lambdas"),
        C("ECE decreases significantly at lambda 0.5", "Sec. 5.5.2; Fig. 6", sweep_falls("ece"),
          "pre-T ECE of FCL at lambda 0.5 vs 0 (one seed: no significance test)"),
        C("Calibration error increases for larger lambda: too much regularisation degrades calibration",
          "Sec. 5.5.2; Fig. 6", too_much_lambda("ece"), "pre-T ECE at the largest lambda above its minimum"),
        C("One lambda gives the best calibration on every ECE metric before and after TS",
          "Sec. 5.5.2; Fig. 6 (the value was lost in extraction)", one_best_lambda,
          "the lambda minimising ECE, AdaECE and classwise ECE, pre and post T, is the same"),
        C("Overly large lambda can reduce classification accuracy", "Sec. 5.5.2; Fig. 6", too_much_lambda("error"),
          "test error at the largest lambda above its minimum over the sweep"),
        C("Temperature scaling markedly reduces focal loss's calibration error (a substantial post-processing gap)",
          "Sec. 5.5.3; Tables 1, 3, 6, 7", focal_drops(ts_drop),
          f"per row: FLSD-53's post-T value at least {ts_drop:.0%} below its pre-T value; every row / most rows"),
        C("FCL's calibration error changes little with TS and its temperature is close to 1, confirming the "
          "reduced post-processing gap", "Sec. 5.5.3; Tables 1, 3, 6, 7", fcl_t_near_one(t_tolerance),
          f"per row: FCL's T within {t_tolerance:g} of 1 and TS changes its ECE no more than FLSD-53's; "
          "every row / most rows"),
        C("FCL's Lipschitz smCE (Def. 2.2; smCE^2 <= pGap <= 2 smCE, Blasiok et al.) is below focal loss's",
          "beyond the paper: Def. 2.2, Thm. 4.5", smce_below_focal, "pre-T smCE (exact LP) of FCL vs FLSD-53"),
        C("The L2 calibration term gives lower ECE than L1, consistently", "App. A.15; Table 8", l2_beats_l1,
          "per row: pre-T ECE of FCL with the L2 term below the L1 term's; every row"),
        C("On a noisy 2-D set, focal loss draws a sharp boundary around hard samples, FCL a smoother one",
          "App. A.11; Fig. 7", toy_smoother, "two moons, noise 0.2, mean over seeds; read as the boundary's "
                                             "shape (FCL's 0.5 boundary shorter) and as the probability "
                                             "transition (FCL's band 0.25 < p < 0.75 wider)"),
        C("There FCL balances accuracy and calibration", "App. A.11; Fig. 7", toy_balance(toy_error),
          f"two moons: FCL's mean test ECE below FL's, its error at most {toy_error:g} point above"),
        C("On CheXNet, FCL improves the average AUROC and the reliability scores (ECE, MCE)", "App. A.16; Table 9",
          chexnet, "not tested: see the note"),
        C("FCL gives the most precise anomaly localisation in Grad-CAM heatmaps", "Sec. 5.3; Fig. 1", gradcam,
          "not tested: see the note"),
    )
