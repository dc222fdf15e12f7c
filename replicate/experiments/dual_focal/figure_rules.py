"""The Dual Focal Loss claims read off figures (Figs. 2 and 4), as rules on our runs.

The paper prints no numbers for its figures, so on the paper's side these claims are "not
tested"; on ours the rules read the numbers behind our redrawn figures
(:mod:`replicate.experiments.dual_focal.figures`, collected in ``Evidence.figures``). Thresholds:

- warm-up: the first :data:`WARMUP_FRACTION` of the epochs (at least one) are left out;
- "remains at a lower level" / "almost all bins": at least
  :data:`replicate.experiments.dual_focal.terms.ALMOST_ALL` of the epochs / bins;
- a reliability bin counts when each of the four methods has at least :data:`MIN_BIN`
  test samples in it.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import untested
from .terms import ALMOST_ALL

WARMUP_FRACTION = 0.1
MIN_BIN = 10
CE, FL, DFL = "cross_entropy", "flsd53", "dual_focal"


def _figure(ev, name: str, number: str):
    """``(frame, None)`` or ``(None, (numbers, outcome))`` when the figure's numbers are missing."""
    if ev.kind == "paper":
        return None, ("–", untested(f"Figure {number} prints no numbers: the claim is tested on our runs only"))
    f = ev.figures.get(name)
    if f is None or not len(f):
        group = "history" if name == "fig4a" else "image"
        return None, ("–", untested(ev.missing.get(group, f"the runs behind Figure {number} are missing")))
    return f, None


def _after_warmup(curves):
    from .evidence import lr_phases

    curves = curves.assign(phase=lr_phases(curves))
    n = int(curves.epoch.max())
    warm = max(1, int(round(WARMUP_FRACTION * n)))
    return curves[curves.epoch > warm].pivot_table(index=["epoch", "phase"], columns="method", values="ece_ema"), warm


def _fig4a(ev):
    """Fig. 4(a)'s smoothed test ECE after the warm-up (:func:`_after_warmup`): ``(table,
    warm-up epochs, None)``, or ``(None, None, (numbers, outcome))`` when it is not tested
    (the paper's side, missing runs, or no epoch after the warm-up)."""
    f, out = _figure(ev, "fig4a", "4a")
    if out:
        return None, None, out
    t, warm = _after_warmup(f)
    if not len(t):
        return None, None, ("–", untested(f"only {int(f.epoch.max())} epoch(s): none after the warm-up"))
    return t, warm, None


def ece_stays_below(ev):
    t, warm, out = _fig4a(ev)
    if out:
        return out
    if not {CE, FL, DFL} <= set(t.columns):
        return "–", None
    below = int((t[DFL] < t[[CE, FL]].min(axis=1)).sum())
    return (f"DFL's smoothed test ECE below both in {below} of {len(t)} epochs after the first {warm}",
            below >= ALMOST_ALL * len(t))


def fl_worse_at_high_lr(ev):
    t, warm, out = _fig4a(ev)
    if out:
        return out
    first = t.xs(0, level="phase") if 0 in t.index.get_level_values("phase") else None
    if first is None or not {CE, FL} <= set(t.columns) or not len(first):
        return "–", None
    fl, ce = first[FL].mean(), first[CE].mean()
    return (f"mean smoothed test ECE over epochs {warm + 1}-{int(first.index.max())} (first learning rate): "
            f"FLSD-53 {fl:.2f} %, cross-entropy {ce:.2f} %", fl > ce)


def dfl_every_lr(ev):
    t, _, out = _fig4a(ev)
    if out:
        return out
    if not {CE, FL, DFL} <= set(t.columns):
        return "–", None
    m = t.groupby(level="phase").mean()
    ok = [row[DFL] < min(row[CE], row[FL]) for _, row in m.iterrows()]
    text = "; ".join(f"lr phase {p + 1}: DFL {r[DFL]:.2f}, CE {r[CE]:.2f}, FLSD-53 {r[FL]:.2f}"
                     for p, r in m.iterrows())
    return f"mean smoothed test ECE (%) {text}", all(ok)


def reliability_bins(ev):
    f, out = _figure(ev, "fig2", "2")
    if out:
        return out
    methods = list(dict.fromkeys(f.method))
    if DFL not in methods or len(methods) < 2:
        return "–", None
    count = f.pivot_table(index="bin", columns="method", values="count")
    full = count.index[(count[methods] >= MIN_BIN).all(axis=1)]
    g = f.pivot_table(index="bin", columns="method", values="gap").abs().reindex(full)
    best = int((g[DFL] <= g.min(axis=1) + 1e-12).sum())
    return (f"DFL's bin closest to the diagonal in {best} of {len(g)} bins (bins with >= {MIN_BIN} test samples for "
            f"each of {', '.join(map(cmp.short, methods))})", (best >= ALMOST_ALL * len(g)) if len(g) else None)


def max_logit_balance(ev):
    f, out = _figure(ev, "fig4b", "4b")
    if out:
        return out
    med = f.groupby("method")["max_logit"].median()
    if not {CE, FL, DFL} <= set(med.index):
        return "–", None
    return (f"median maximum logit: FLSD-53 {med[FL]:.2f}, DFL {med[DFL]:.2f}, cross-entropy {med[CE]:.2f}",
            min(med[FL], med[CE]) < med[DFL] < max(med[FL], med[CE]))


def qj_spread(ev):
    from .evidence import box_stats

    f, out = _figure(ev, "fig4c", "4c")
    if out:
        return out
    b = box_stats(f, "q_j").set_index("method")
    if not {CE, FL, DFL} <= set(b.index):
        return "–", None
    rng = b["whisker_high"] - b["whisker_low"]
    checks = (b.at[DFL, "median"] < b.at[FL, "median"], b.at[DFL, "median"] > b.at[CE, "median"], rng[DFL] > rng[FL])
    return (f"median q_j: DFL {b.at[DFL, 'median']:.3f}, FLSD-53 {b.at[FL, 'median']:.3f}, cross-entropy "
            f"{b.at[CE, 'median']:.3f}; whisker range: DFL {rng[DFL]:.3f}, FLSD-53 {rng[FL]:.3f}", all(checks))


def figure_claims() -> dict:
    """The figure claims by name (:func:`replicate.experiments.dual_focal.claims.rules` places them)."""
    C = cmp.Claim
    w = f"after the first {WARMUP_FRACTION:.0%} of the epochs"
    return {
        "fig4a_below": C("After the first warm-up epochs, DFL's test ECE stays below cross-entropy's and focal "
                         "loss's", "Sec. 5.1, Fig. 4a", ece_stays_below,
                         f"smoothed test ECE of DFL below both in at least {ALMOST_ALL:.0%} of the epochs {w}"),
        "fig4a_fl_vs_ce": C("With the large learning rate focal loss is less calibrated than cross-entropy",
                            "Sec. 5.1, Fig. 4a", fl_worse_at_high_lr,
                            f"mean smoothed test ECE over the first learning-rate phase ({w}), FLSD-53 vs CE"),
        "fig4a_every_lr": C("DFL trains calibrated models regardless of the learning rate", "Sec. 5.1, Fig. 4a",
                            dfl_every_lr, f"DFL lowest mean smoothed test ECE in every learning-rate phase ({w})"),
        "fig2_bins": C("DFL retains the best calibration over almost all bins of the reliability diagram",
                       "Sec. 5.1, Fig. 2", reliability_bins,
                       f"DFL's |accuracy - confidence| the smallest of the four methods in at least "
                       f"{ALMOST_ALL:.0%} of the bins"),
        "fig4b_balance": C("DFL's maximum logits lie between cross-entropy's and focal loss's: a balance that "
                           "regularises while keeping hardness information", "Sec. 5.3, Fig. 4b", max_logit_balance,
                           "median maximum logit of DFL strictly between FLSD-53's and cross-entropy's"),
        "fig4c_qj": C("DFL gives q_j a wider range and a lower median than focal loss and keeps it higher than "
                      "cross-entropy", "Sec. 5.3, Fig. 4c", qj_spread,
                      "median q_j: DFL < FLSD-53 and DFL > CE; whisker range: DFL > FLSD-53"),
    }

