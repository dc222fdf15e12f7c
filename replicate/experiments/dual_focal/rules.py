"""The rules that decide the experimental claims of Tao, Dong & Xu (2023), Dual Focal Loss,
on its main-text tables (Tables 1-4; the claims themselves are listed in
:mod:`.claims`).

A rule reads an :class:`~replicate.experiments.dual_focal.evidence.Evidence` - the paper's
printed Tables 1-13, or our runs in the same layout - and returns the numbers behind the
verdict and the outcome, so the same rule decides a claim on the paper's own tables (does the
table support the sentence?) and on our runs. Words the paper leaves vague ("most", "almost
all", "lowest") get the thresholds of :mod:`.terms`.

Where a sentence reads two ways with different verdicts, :func:`replicate.claims.readings`
gives each. A claim about data sets or networks our runs do not cover is "not tested", with
the reason. The claims of the appendices (Tables 5-13) are in
:mod:`.appendix_rules`, the figure claims (Figs. 2, 4) in
:mod:`.figure_rules`.
"""
from __future__ import annotations

import math

import pandas as pd

from ... import comparison as cmp
from ...claims import readings, untested
from ...comparison.layouts import pivot
from . import plan as dfl
from .terms import ALMOST_ALL, OTHER_DATA, SEVEN, T_TOL, gone, most, wins

BASELINES = tuple(k for k in SEVEN if k != "dual_focal")
OTHER_NETS = ("the claim compares the paper's four networks: our runs train one network per execution of the "
              "chapter (parameter model; the cpu profile trains tiny_cnn, the gpu and paper profiles ResNet-50)")


def _ours_only_rows(ev, reason: str):
    return ("–", untested(reason)) if ev.kind == "ours" else None


# ----------------------------------------------------------------------------- Abstract, Sec. 1 and 3.2
def fl_underconfident(ev):
    if (g := gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T")
    if "flsd53" not in t:
        return "–", None
    T = t["flsd53"].dropna()
    under = int((T < 1 - T_TOL).sum())
    return (f"optimal T of FLSD-53 below 1 (under-confident) in {under} of {len(T)} rows "
            f"(T: {', '.join(f'{x:.2f}' for x in T)})",
            readings(can_happen=under > 0, in_most_rows=most(under, len(T))))


def ifl_overconfident(ev):
    if (g := gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T").reindex(columns=["inverse_focal", "cross_entropy"])
    t = t.dropna()
    k = int((t["inverse_focal"] > t["cross_entropy"] + 1e-9).sum())
    return f"optimal T of inverse focal above cross-entropy's in {k} of {len(t)} rows", most(k, len(t)) if len(t) \
        else None


# ----------------------------------------------------------------------------- Sec. 5.1, Table 1
def sota_ece(ev):
    if (g := gone(ev, "image")):
        return g
    pre = wins(pivot(ev.tables, "table1", "ece"), "dual_focal")
    post = wins(pivot(ev.tables, "table1", "ece", True), "dual_focal")
    if not pre[1]:
        return "–", None
    return (f"DFL lowest ECE in {pre[0]} of {pre[1]} rows pre T, {post[0]} of {post[1]} post T",
            most(pre[0], pre[1]) and pre[0] / pre[1] >= (post[0] / post[1] if post[1] else 0))


def beats_post_ts(ev):
    if (g := gone(ev, "image")):
        return g
    pre = pivot(ev.tables, "table1", "ece")
    post = pivot(ev.tables, "table1", "ece", True, among=BASELINES)
    rows = [r for r in pre.index if r in post.index and "dual_focal" in pre and not pd.isna(pre.at[r, "dual_focal"])]
    if not rows:
        return "–", None
    below_best = sum(pre.at[r, "dual_focal"] < post.loc[r].min() for r in rows)
    below_most = sum(most(int((pre.at[r, "dual_focal"] < post.loc[r].dropna()).sum()), post.loc[r].notna().sum())
                     for r in rows)
    return (f"DFL's pre-T ECE below the best baseline's post-T ECE in {below_best} of {len(rows)} rows, below most "
            f"baselines' post-T ECE in {below_most}",
            readings(below_the_best_baseline=most(below_best, len(rows)),
                     below_most_baselines=most(below_most, len(rows))))


def dfl_t_is_one(ev):
    if (g := gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T")
    if "dual_focal" not in t:
        return "–", None
    T = t["dual_focal"].dropna()
    sd = pivot(ev.tables, "table1", "ece", True, col="T_sd")["dual_focal"].reindex(T.index).fillna(0)
    ones = int((((T - 1).abs() <= T_TOL) & (sd <= 1e-9)).sum())
    return f"DFL's optimal T is 1 in {ones} of {len(T)} rows (every seed)", (ones == len(T)) if len(T) else None


def _by_network(ev, dataset: str, column: str | None):
    """Mean pre-T ECE over the seven methods (``column`` None) or one method's, per network."""
    f = ev.tables[(ev.tables.table == "table1") & (ev.tables.metric == "ece") & ~ev.tables.temperature_scaled
                  & (ev.tables.dataset_key == dataset) & ev.tables.method.isin(SEVEN)]
    if column is not None:
        f = f[f.method == column]
    return f.groupby("model_key", sort=False)["mean"].mean()


def _networks(ev, pick, column=None):
    per = {d: _by_network(ev, d, column) for d in ("cifar10", "cifar100")}
    if any(len(s) < 2 for s in per.values()):
        return None, ""
    ok = all(pick(s) for s in per.values())
    text = "; ".join(f"{d}: " + ", ".join(f"{m} {v:.2f}" for m, v in s.items()) for d, s in per.items())
    return ok, text


def resnet50_best(ev):
    if (g := _ours_only_rows(ev, OTHER_NETS)):
        return g
    a, ta = _networks(ev, lambda s: s.idxmin() == "resnet50")
    b, _ = _networks(ev, lambda s: s.idxmin() == "resnet50", "dual_focal")
    if a is None:
        return "–", None
    return f"mean pre-T ECE over the seven methods, {ta}", readings(mean_over_methods=a, dfl_column=b)


def resnet110_worst(ev):
    if (g := _ours_only_rows(ev, OTHER_NETS)):
        return g
    a, ta = _networks(ev, lambda s: s.idxmax() == "resnet110")
    b, tb = _networks(ev, lambda s: s.idxmax() == "resnet110", "flsd53")
    if a is None:
        return "–", None
    return f"mean pre-T ECE, {ta}; FLSD-53 column, {tb}", a and b


def wrn_best(ev):
    if (g := _ours_only_rows(ev, OTHER_NETS)):
        return g
    a, ta = _networks(ev, lambda s: s.idxmin() == "wide_resnet26_10")
    return (f"mean pre-T ECE over the seven methods, {ta}", a) if a is not None else ("–", None)


def _pairs(ev, a: str, b: str, model: str | None = None):
    f = ev.tables[(ev.tables.table == "table1") & (ev.tables.metric == "ece") & ~ev.tables.temperature_scaled]
    x = f[f.dataset_key == a].set_index(["model_key", "method"])["mean"]
    y = f[f.dataset_key == b].set_index(["model_key", "method"])["mean"]
    both = x.to_frame("a").join(y.to_frame("b"), how="inner").dropna()
    if model is not None:
        both = both[both.index.get_level_values(0) == model]
    return int((both["a"] < both["b"]).sum()), len(both)


def cifar10_better(ev):
    if (g := _ours_only_rows(ev, OTHER_DATA)):
        return g
    k1, n1 = _pairs(ev, "cifar10", "cifar100")
    k2, n2 = _pairs(ev, "cifar10", "tiny_imagenet", "resnet50")
    return (f"pre-T ECE lower on CIFAR-10 than CIFAR-100 in {k1} of {n1} (network, method) pairs, than "
            f"Tiny-ImageNet in {k2} of {n2} (ResNet-50)", most(k1 + k2, n1 + n2))


def tiny_better(ev):
    if (g := _ours_only_rows(ev, OTHER_DATA)):
        return g
    k, n = _pairs(ev, "tiny_imagenet", "cifar100", "resnet50")
    return f"ResNet-50 pre-T ECE lower on Tiny-ImageNet than CIFAR-100 for {k} of {n} methods", most(k, n)


def ifl_worst(ev):
    if (g := gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table1", "ece", among=SEVEN)
    worst = wins(tab, "inverse_focal", highest=True)
    t = tab.reindex(columns=["inverse_focal", "cross_entropy"]).dropna()
    above = int((t["inverse_focal"] > t["cross_entropy"]).sum())
    if not worst[1]:
        return "–", None
    return (f"inverse focal has the highest pre-T ECE in {worst[0]} of {worst[1]} rows, a higher one than "
            f"cross-entropy in {above} of {len(t)}",
            readings(worst_in_most_rows=most(worst[0], worst[1]), above_cross_entropy=most(above, len(t))))


def ifl_best_post_once(ev):
    if ev.kind == "ours":
        return "–", untested("a count over the paper's ten rows; our runs make one row per data set")
    won, n, lost = wins(pivot(ev.tables, "table1", "ece", True), "inverse_focal")
    rows = [r for r in pivot(ev.tables, "table1", "ece", True).index if r not in lost]
    return (f"inverse focal lowest post-T ECE in {won} of {n} rows: {'; '.join(rows) or 'none'}",
            rows == ["CIFAR-10, ResNet-110"])


def text_row(ev):
    if (g := gone(ev, "text")):
        return g
    f = ev.tables[ev.tables.dataset_key == "20newsgroups"]
    pre, post = wins(pivot(f, "table1", "ece"), "dual_focal"), wins(pivot(f, "table1", "ece", True), "dual_focal")
    if not pre[1]:
        return "–", None
    return (f"20 Newsgroups: DFL lowest ECE pre T in {pre[0]} of {pre[1]} rows, post T in {post[0]} of {post[1]}",
            pre[0] == pre[1] and post[0] == post[1])


def _fig3_rows(ev):
    if ev.kind == "paper":
        return ["CIFAR-10, ResNet-50", "CIFAR-10, ResNet-110"]
    t1 = ev.tables[(ev.tables.table == "table1") & (ev.tables.dataset_key != "20newsgroups")]
    return list(dict.fromkeys(t1.row))[:1]


def fig3_metrics(ev):
    if (g := gone(ev, "image")):
        return g
    rows, won, n = _fig3_rows(ev), 0, 0
    for table, metric in (("table1", "ece"), ("table5", "adaece"), ("table6", "classwise_ece")):
        w, k, _ = wins(pivot(ev.tables, table, metric).reindex(rows), "dual_focal")
        won, n = won + w, n + k
    if not n:
        return "–", None
    return f"DFL lowest pre-T ECE, AdaECE and classwise ECE in {won} of {n} (row, metric) cells", won == n


def only_t_one(ev):
    if (g := gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T").reindex(_fig3_rows(ev))
    if t.empty or "dual_focal" not in t:
        return "–", None
    ones = {r: [m for m in t.columns if abs(t.at[r, m] - 1) <= T_TOL] for r in t.index}
    return ("methods with optimal T = 1: " + "; ".join(f"{r}: {', '.join(map(cmp.short, v)) or 'none'}"
                                                        for r, v in ones.items()),
            all(v == ["dual_focal"] for v in ones.values()))


# ----------------------------------------------------------------------------- Table 2
def accuracy_vs_fl(ev):
    if (g := gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table2", "error").reindex(columns=["dual_focal", "flsd53"]).dropna()
    k = int((t["dual_focal"] < t["flsd53"]).sum())
    return f"DFL's error below FLSD-53's in {k} of {len(t)} rows", (len(t) > 0 and k >= ALMOST_ALL * len(t)) \
        if len(t) else None


def cifar100_no_tradeoff(ev):
    f = ev.tables[ev.tables.dataset_key == "cifar100"]
    t = pivot(f, "table2", "error").reindex(columns=["dual_focal", "cross_entropy"]).dropna()
    if not len(t):
        return ("–", untested("no CIFAR-100 runs: " + OTHER_DATA)) if ev.kind == "ours" else ("–", None)
    k = int((t["dual_focal"] <= t["cross_entropy"]).sum())
    return f"CIFAR-100: DFL's error at most cross-entropy's in {k} of {len(t)} rows", k == len(t)


# ----------------------------------------------------------------------------- Sec. 5.2, Table 3
def evenly_matched(ev):
    if ev.kind == "ours":
        return "–", untested("a statement over the paper's eight rows; our runs make one row")
    t = pivot(ev.tables, "table3", "ece").reindex(columns=["dual_focal", "adafocal"]).dropna()
    k = int((t["dual_focal"] < t["adafocal"]).sum())
    return f"DFL below AdaFocal in {k} of {len(t)} rows", len(t) / 4 <= k <= 3 * len(t) / 4


def adadual_consistent(ev):
    if (g := gone(ev, "table3")):
        return g
    t = pivot(ev.tables, "table3", "ece").reindex(columns=["adadual_focal", "adafocal", "dual_focal"]).dropna()
    if not len(t):
        return "–", None
    k = int((t["adadual_focal"] < t[["adafocal", "dual_focal"]].min(axis=1)).sum())
    return f"AdaDualFocal below both AdaFocal and DFL in {k} of {len(t)} rows", k == len(t)


# ----------------------------------------------------------------------------- Sec. 5.4, Table 4
def _beat_fl(f) -> tuple[int, int]:
    """``(cells below the focal-loss row, cells)`` of the 'other logits' rows of a Table 4 frame."""
    fl = f[f.setting == dfl.FL_ROW].set_index("metric")["mean"]
    v = f[f.setting.str.startswith(dfl.OTHER) & f.metric.isin(["ece", "adaece"])]
    return int(sum(r["mean"] < fl.get(r["metric"], math.nan) for _, r in v.iterrows())), len(v)


def other_logits_beat_fl(ev):
    if (g := gone(ev, "dual_logit")):
        return g
    t4 = ev.tables[ev.tables.table == "table4"]
    if ev.kind == "paper":
        k, n = _beat_fl(t4)
        return f"{k} of {n} (row, metric) cells below focal loss", (k == n) if n else None
    got = {r: _beat_fl(t4[t4.method == name]) for r, name in dfl.READINGS.items()}
    got = {r: kn for r, kn in got.items() if kn[1]}
    if not got:
        return "–", None
    text = "; ".join(f"{r} reading: {k} of {n} (row, metric) cells below focal loss" for r, (k, n) in got.items())
    out = {f"{r}_reading": k == n for r, (k, n) in got.items()}
    return text, readings(**out) if len(out) > 1 else next(iter(out.values()))
