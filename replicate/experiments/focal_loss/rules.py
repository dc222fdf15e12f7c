"""The conclusions of Mukhoti et al. (2020, Sec. 5-6) as rules on a summary frame (ours, or
the paper's row): each returns the numbers behind its verdict and the outcome. The claims
that use them are listed in :mod:`.claims`."""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import untested
from .plan import FOCAL_KEYS

#: The |S99| claim is tested when cross-entropy puts at least this share (%) of the test set
#: at confidence >= 0.99 before TS (the paper's cross-entropy: 95.93 %, Table 6).
MIN_S99 = 1.0


def focal_beats_ce(summ):
    ece = cmp.present(summ)
    if not {"cross_entropy", "flsd53"} <= set(ece):
        return "–", None
    focal = [k for k in FOCAL_KEYS if k in ece]
    n_below = sum(ece[k] < ece["cross_entropy"] for k in focal)
    return (f"ECE %: CE {ece['cross_entropy']:.2f}, FLSD-53 {ece['flsd53']:.2f}; {n_below} of {len(focal)} focal "
            f"variants below CE", ece["flsd53"] < ece["cross_entropy"])


def t_near_one(t_tolerance):
    def rule(summ):
        temps = {k: t for k, t in cmp.present(summ, "ece", True, "T").items() if k in FOCAL_KEYS}
        if "flsd53" not in temps:
            return "–", None
        near = [k for k, t in temps.items() if abs(t - 1) <= t_tolerance + 1e-9]   # grid values like 1.1
        return (f"T: FLSD-53 {temps['flsd53']:.1f}; {len(near)} of {len(temps)} focal variants within "
                f"{t_tolerance:g} of 1", "flsd53" in near)
    return rule


def ce_needs_larger_t(summ):
    temps = cmp.present(summ, "ece", True, "T")
    if not {"cross_entropy", "flsd53"} <= set(temps):
        return "–", None
    return (f"T: CE {temps['cross_entropy']:.1f}, FLSD-53 {temps['flsd53']:.1f}",
            temps["cross_entropy"] > temps["flsd53"])


def flsd53_best_focal(summ):
    best = {}
    for scaled in (False, True):
        key, ece = cmp.lowest(summ, "ece", scaled, among=FOCAL_KEYS)
        best[scaled] = (key, len(ece)) if len(ece) >= 2 and "flsd53" in ece else None
    if best[False] is None or best[True] is None:
        return "–", None
    return (f"lowest ECE of {best[False][1]} focal variants: {cmp.short(best[False][0])} pre T, "
            f"{cmp.short(best[True][0])} post T", best[False][0] == best[True][0] == "flsd53")


def keeps_confidence(min_s99):
    def rule(summ):
        s99 = cmp.present(summ, "s99_fraction", True)
        if not {"cross_entropy", "flsd53"} <= set(s99):
            return "–", None
        numbers = f"|S99| % post T: CE {s99['cross_entropy']:.2f}, FLSD-53 {s99['flsd53']:.2f}"
        ce_pre = cmp.value(summ, "cross_entropy", "s99_fraction", False)
        if ce_pre < min_s99:   # NaN (pre-T |S99| not in the frame) does not block the test
            return numbers, untested(f"only {ce_pre:.2f} % of CE's predictions reach 0.99 before TS "
                                     f"(< {min_s99:g} %): no confident model to compare")
        return numbers, s99["flsd53"] > s99["cross_entropy"]
    return rule
