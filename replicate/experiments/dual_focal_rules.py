"""The rules that decide the experimental claims of Tao, Dong & Xu (2023), Dual Focal Loss,
on its tables (the claims themselves are listed in :mod:`.dual_focal_claims`).

A rule reads an :class:`~replicate.experiments.dual_focal_evidence.Evidence` - the paper's
printed Tables 1-13, or our runs in the same layout - and returns the numbers behind the
verdict and the outcome, so the same rule decides a claim on the paper's own tables (does the
table support the sentence?) and on our runs. Words the paper leaves vague get one stated
threshold:

- "in most cases": more than half of the rows that have the numbers;
- "almost all": at least :data:`ALMOST_ALL` of them;
- "lowest": ties included (printed values are rounded);
- "competitive" (AUROC): among the best :data:`TOP_K` of the seven methods.

Where a sentence reads two ways with different verdicts, :func:`replicate.claims.readings`
gives each. A claim about data sets or networks our runs do not cover is "not tested", with
the reason. The figure claims (Figs. 2, 4) are in :mod:`.dual_focal_figure_rules`.
"""
from __future__ import annotations

import math

import pandas as pd

from .. import comparison as cmp
from ..claims import readings, untested
from ..comparison.layouts import pivot
from . import dual_focal as dfl

ALMOST_ALL = 0.8
TOP_K = 3
T_TOL = 0.05          # a temperature within this of 1 "is" 1 (the grid step is 0.1)
SEVEN = dfl.METHOD_KEYS
BASELINES = tuple(k for k in SEVEN if k != "dual_focal")
OTHER_DATA = ("the claim compares data sets: our runs cover one image data set per execution of the chapter "
              "(parameter dataset), and CIFAR-100 and Tiny-ImageNet are not available offline here")
OTHER_NETS = ("the claim compares the paper's four networks: our runs train one network per execution of the "
              "chapter (parameter model; the cpu profile trains tiny_cnn, the gpu and paper profiles ResNet-50)")
KDE_XE = ("KDE-XE (Popordanoska et al. 2022), its training setting and its networks (ResNet-110sd, DenseNet-40) "
          "are not implemented here")


def _most(k: int, n: int) -> bool:
    return n > 0 and k > n / 2


def _wins(tab: pd.DataFrame, method: str, among=SEVEN, highest: bool = False) -> tuple[int, int, list]:
    """``(rows where method is best, rows with its value and another's, rows it loses)``."""
    cols = [c for c in among if c in tab.columns]
    if method not in cols:
        return 0, 0, []
    won, n, lost = 0, 0, []
    for row, v in tab[cols].iterrows():
        v = v.dropna()
        if method not in v.index or len(v) < 2:
            continue
        n += 1
        best = v.max() if highest else v.min()
        if math.isclose(v[method], best, rel_tol=0, abs_tol=1e-9):
            won += 1
        else:
            lost.append(row)
    return won, n, lost


def _gone(ev, group: str):
    """``("–", not tested)`` when our ``group`` of runs is missing, else None."""
    if ev.kind == "ours" and group in ev.missing:
        return "–", untested(ev.missing[group])
    return None


def _ours_only_rows(ev, reason: str):
    return ("–", untested(reason)) if ev.kind == "ours" else None


# ----------------------------------------------------------------------------- Abstract, Sec. 1 and 3.2
def fl_underconfident(ev):
    if (g := _gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T")
    if "flsd53" not in t:
        return "–", None
    T = t["flsd53"].dropna()
    under = int((T < 1 - T_TOL).sum())
    return (f"optimal T of FLSD-53 below 1 (under-confident) in {under} of {len(T)} rows "
            f"(T: {', '.join(f'{x:.2f}' for x in T)})",
            readings(can_happen=under > 0, in_most_rows=_most(under, len(T))))


def ifl_overconfident(ev):
    if (g := _gone(ev, "image")):
        return g
    t = pivot(ev.tables, "table1", "ece", True, col="T").reindex(columns=["inverse_focal", "cross_entropy"])
    t = t.dropna()
    k = int((t["inverse_focal"] > t["cross_entropy"] + 1e-9).sum())
    return f"optimal T of inverse focal above cross-entropy's in {k} of {len(t)} rows", _most(k, len(t)) if len(t) \
        else None


# ----------------------------------------------------------------------------- Sec. 5.1, Table 1
def sota_ece(ev):
    if (g := _gone(ev, "image")):
        return g
    pre = _wins(pivot(ev.tables, "table1", "ece"), "dual_focal")
    post = _wins(pivot(ev.tables, "table1", "ece", True), "dual_focal")
    if not pre[1]:
        return "–", None
    return (f"DFL lowest ECE in {pre[0]} of {pre[1]} rows pre T, {post[0]} of {post[1]} post T",
            _most(pre[0], pre[1]) and pre[0] / pre[1] >= (post[0] / post[1] if post[1] else 0))


def beats_post_ts(ev):
    if (g := _gone(ev, "image")):
        return g
    pre = pivot(ev.tables, "table1", "ece")
    post = pivot(ev.tables, "table1", "ece", True, among=BASELINES)
    rows = [r for r in pre.index if r in post.index and "dual_focal" in pre and not pd.isna(pre.at[r, "dual_focal"])]
    if not rows:
        return "–", None
    below_best = sum(pre.at[r, "dual_focal"] < post.loc[r].min() for r in rows)
    below_most = sum(_most(int((pre.at[r, "dual_focal"] < post.loc[r].dropna()).sum()), post.loc[r].notna().sum())
                     for r in rows)
    return (f"DFL's pre-T ECE below the best baseline's post-T ECE in {below_best} of {len(rows)} rows, below most "
            f"baselines' post-T ECE in {below_most}",
            readings(below_the_best_baseline=_most(below_best, len(rows)),
                     below_most_baselines=_most(below_most, len(rows))))


def dfl_t_is_one(ev):
    if (g := _gone(ev, "image")):
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
            f"Tiny-ImageNet in {k2} of {n2} (ResNet-50)", _most(k1 + k2, n1 + n2))


def tiny_better(ev):
    if (g := _ours_only_rows(ev, OTHER_DATA)):
        return g
    k, n = _pairs(ev, "tiny_imagenet", "cifar100", "resnet50")
    return f"ResNet-50 pre-T ECE lower on Tiny-ImageNet than CIFAR-100 for {k} of {n} methods", _most(k, n)


def ifl_worst(ev):
    if (g := _gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table1", "ece", among=SEVEN)
    worst = _wins(tab, "inverse_focal", highest=True)
    t = tab.reindex(columns=["inverse_focal", "cross_entropy"]).dropna()
    above = int((t["inverse_focal"] > t["cross_entropy"]).sum())
    if not worst[1]:
        return "–", None
    return (f"inverse focal has the highest pre-T ECE in {worst[0]} of {worst[1]} rows, a higher one than "
            f"cross-entropy in {above} of {len(t)}",
            readings(worst_in_most_rows=_most(worst[0], worst[1]), above_cross_entropy=_most(above, len(t))))


def ifl_best_post_once(ev):
    if ev.kind == "ours":
        return "–", untested("a count over the paper's ten rows; our runs make one row per data set")
    won, n, lost = _wins(pivot(ev.tables, "table1", "ece", True), "inverse_focal")
    rows = [r for r in pivot(ev.tables, "table1", "ece", True).index if r not in lost]
    return (f"inverse focal lowest post-T ECE in {won} of {n} rows: {'; '.join(rows) or 'none'}",
            rows == ["CIFAR-10, ResNet-110"])


def text_row(ev):
    if (g := _gone(ev, "text")):
        return g
    f = ev.tables[ev.tables.dataset_key == "20newsgroups"]
    pre, post = _wins(pivot(f, "table1", "ece"), "dual_focal"), _wins(pivot(f, "table1", "ece", True), "dual_focal")
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
    if (g := _gone(ev, "image")):
        return g
    rows, won, n = _fig3_rows(ev), 0, 0
    for table, metric in (("table1", "ece"), ("table5", "adaece"), ("table6", "classwise_ece")):
        w, k, _ = _wins(pivot(ev.tables, table, metric).reindex(rows), "dual_focal")
        won, n = won + w, n + k
    if not n:
        return "–", None
    return f"DFL lowest pre-T ECE, AdaECE and classwise ECE in {won} of {n} (row, metric) cells", won == n


def only_t_one(ev):
    if (g := _gone(ev, "image")):
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
    if (g := _gone(ev, "image")):
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
    if (g := _gone(ev, "table3")):
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
    if (g := _gone(ev, "dual_logit")):
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


# ----------------------------------------------------------------------------- Appendix E
def adaece_competitive(ev, gap: float = 0.1):
    if (g := _gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table5", "adaece", among=SEVEN).dropna(subset=["dual_focal"]) \
        if "dual_focal" in pivot(ev.tables, "table5", "adaece") else None
    if tab is None or not len(tab):
        return "–", None
    d = tab["dual_focal"] - tab.min(axis=1)
    won = int((d <= 1e-9).sum())
    return (f"DFL lowest pre-T AdaECE in {won} of {len(d)} rows; largest gap to the lowest {d.max():.2f}",
            bool((d <= gap + 1e-9).all()) and won >= len(d) - 1)


def _lowest_in_most(table, metric, label):
    def rule(ev):
        if (g := _gone(ev, "image")):
            return g
        pre = _wins(pivot(ev.tables, table, metric), "dual_focal")
        post = _wins(pivot(ev.tables, table, metric, True), "dual_focal")
        if not pre[1]:
            return "–", None
        text = f"DFL lowest pre-T {label} in {pre[0]} of {pre[1]} rows" + (
            f", post T in {post[0]} of {post[1]}" if post[1] else "")
        return text, _most(pre[0], pre[1]) and (not post[1] or pre[0] / pre[1] >= post[0] / post[1])
    return rule


def nll_complex(ev):
    f = ev.tables[ev.tables.dataset_key.isin(["cifar100", "tiny_imagenet"])]
    won, n, lost = _wins(pivot(f, "table8", "nll"), "dual_focal")
    if not n:
        return ("–", untested("no CIFAR-100 or Tiny-ImageNet runs: " + OTHER_DATA)) if ev.kind == "ours" \
            else ("–", None)
    return (f"DFL lowest pre-T NLL in {won} of {n} CIFAR-100/Tiny-ImageNet rows"
            + (f" (not in: {'; '.join(lost)})" if lost else ""), won == n)


def auroc_competitive(ev):
    if (g := _gone(ev, "image")):
        return g
    tab = pivot(ev.tables, "table9", "auroc", setting=None, among=SEVEN)
    if tab.empty or "dual_focal" not in tab:
        return ("–", untested("no run of the chapter recorded OOD logits")) if ev.kind == "ours" else ("–", None)
    tab = tab.dropna(subset=["dual_focal"])
    ranks = [int((r.dropna() > r["dual_focal"] + 1e-9).sum()) + 1 for _, r in tab.iterrows()]
    k = sum(rk <= TOP_K for rk in ranks)
    where = "; ".join(f"{row.split(', ')[-1]} {s.replace('ood=', '')}: rank {rk} of {int(r.notna().sum())}"
                      for ((row, s), r), rk in zip(tab.iterrows(), ranks))
    return f"DFL's pre-T AUROC {where}", _most(k, len(ranks)) if ranks else None


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
    if (g := _gone(ev, "image")):
        return g
    won, n, lost = _wins(pivot(ev.tables, "table11", "rbs"), "dual_focal")
    return (f"DFL lowest RBS in {won} of {n} rows", won == n) if n else ("–", None)


def robust_over_seeds(ev):
    if (g := _gone(ev, "image")):
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
    if (g := _gone(ev, "gamma")):
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
