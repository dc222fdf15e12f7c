"""A paper's conclusions as rules on its tables, tested on any set of numbers.

A :class:`Claim` is a sentence, where the paper makes it, and a rule that reads a
summary frame (:func:`replicate.comparison.summarise` of our runs, or
:func:`replicate.comparison.paper_values` of the paper's own row) and returns the numbers
behind the verdict and whether the claim holds (None when a method it needs is missing).
Testing the same rule on the paper's row tells a claim that fails on our runs apart from
one that already fails on the paper's closest row.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from .methods import FOCAL_KEYS, MUKHOTI_METHODS
from .tables import value

VERDICTS = ("holds", "fails", "not tested")


@dataclass(frozen=True)
class Claim:
    """A conclusion of a paper: ``rule(summary) -> (numbers, holds or None)``."""

    text: str
    source: str
    rule: Callable[[pd.DataFrame], tuple[str, bool | None]]


def _short(key: str) -> str:
    return MUKHOTI_METHODS[key].short if key in MUKHOTI_METHODS else key


def _present(summ: pd.DataFrame, metric: str = "ece", scaled: bool = False, col: str = "mean") -> dict:
    return {m: v for m in dict.fromkeys(summ.method) if not math.isnan(v := value(summ, m, metric, scaled, col))}


def _focal_beats_ce(summ):
    ece = _present(summ)
    if not {"cross_entropy", "flsd53"} <= set(ece):
        return "–", None
    focal = [k for k in FOCAL_KEYS if k in ece]
    below = sum(ece[k] < ece["cross_entropy"] for k in focal)
    return (f"ECE %: CE {ece['cross_entropy']:.2f}, FLSD-53 {ece['flsd53']:.2f}; {below} of {len(focal)} focal "
            f"variants below CE", ece["flsd53"] < ece["cross_entropy"])


def _t_near_one(t_tolerance):
    def rule(summ):
        temps = {k: t for k, t in _present(summ, "ece", True, "T").items() if k in FOCAL_KEYS}
        if "flsd53" not in temps:
            return "–", None
        near = [k for k, t in temps.items() if abs(t - 1) <= t_tolerance + 1e-9]   # grid values like 1.1
        return (f"T: FLSD-53 {temps['flsd53']:.1f}; {len(near)} of {len(temps)} focal variants within "
                f"{t_tolerance:g} of 1", "flsd53" in near)
    return rule


def _ce_needs_larger_t(summ):
    temps = _present(summ, "ece", True, "T")
    if not {"cross_entropy", "flsd53"} <= set(temps):
        return "–", None
    return (f"T: CE {temps['cross_entropy']:.1f}, FLSD-53 {temps['flsd53']:.1f}",
            temps["cross_entropy"] > temps["flsd53"])


def _flsd53_best_focal(summ):
    best = {}
    for scaled in (False, True):
        ece = {k: v for k, v in _present(summ, "ece", scaled).items() if k in FOCAL_KEYS}
        best[scaled] = (min(ece, key=ece.get), len(ece)) if len(ece) >= 2 and "flsd53" in ece else None
    if best[False] is None or best[True] is None:
        return "–", None
    return (f"lowest ECE of {best[False][1]} focal variants: {_short(best[False][0])} pre T, "
            f"{_short(best[True][0])} post T", best[False][0] == best[True][0] == "flsd53")


def _keeps_confidence(min_s99):
    def rule(summ):
        s99 = _present(summ, "s99_fraction", True)
        if not {"cross_entropy", "flsd53"} <= set(s99):
            return "–", None
        numbers = f"|S99| % post T: CE {s99['cross_entropy']:.2f}, FLSD-53 {s99['flsd53']:.2f}"
        ce_pre = value(summ, "cross_entropy", "s99_fraction", False)
        if ce_pre < min_s99:   # NaN (pre-T |S99| not in the frame) does not block the test
            return (f"{numbers}; but only {ce_pre:.2f} % of CE's predictions reach 0.99 before TS "
                    f"(< {min_s99:g} %): no confident model to compare", None)
        return numbers, s99["flsd53"] > s99["cross_entropy"]
    return rule


def mukhoti_claims(t_tolerance: float = 0.1, min_s99: float = 1.0) -> tuple[Claim, ...]:
    """The conclusions of Mukhoti et al. (2020), Sec. 5-6, as rules. "Near 1" means
    ``|T - 1| <= t_tolerance`` (the paper: "mostly lying between 0.9 and 1.1"). The |S99|
    claim is about models confident before temperature scaling (cross-entropy: 96 % of the
    test set in Table 6); it is "not tested" when cross-entropy puts less than ``min_s99``
    percent of the test set at confidence >= 0.99 before TS."""
    for name, v in (("t_tolerance", t_tolerance), ("min_s99", min_s99)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return (
        Claim("Focal loss (FLSD-53) has a lower test ECE than cross-entropy", "Sec. 6, Tables 1, 7", _focal_beats_ce),
        Claim("The optimal T of the focal-loss model FLSD-53 is near 1", "Sec. 6", _t_near_one(t_tolerance)),
        Claim("Cross-entropy needs a larger optimal T than FLSD-53", "Sec. 6, Table 1", _ce_needs_larger_t),
        Claim("FLSD-53 is the best focal variant (lowest ECE before and after TS)", "Sec. 5-6, Table 7",
              _flsd53_best_focal),
        Claim("After TS, FLSD-53 keeps more confident predictions (larger |S99|) than cross-entropy",
              "Sec. 6, Table 6", _keeps_confidence(min_s99)),
    )


def verdicts(summaries: dict, claims=None) -> pd.DataFrame:
    """Each claim (default :func:`mukhoti_claims`) tested on each ``{label: summary}``, in
    long form: ``claim, source, evidence`` (the label), ``numbers`` and ``verdict`` (one of
    :data:`VERDICTS`), grouped by claim."""
    if not isinstance(summaries, dict) or not summaries:
        raise ValueError("summaries must be a non-empty dict label -> summary frame")
    claims = mukhoti_claims() if claims is None else tuple(claims)
    rows = []
    for claim in claims:
        for label, summ in summaries.items():
            numbers, holds = claim.rule(summ)
            rows.append({"claim": claim.text, "source": claim.source, "evidence": label, "numbers": numbers,
                         "verdict": VERDICTS[2] if holds is None else VERDICTS[0 if holds else 1]})
    return pd.DataFrame(rows, columns=["claim", "source", "evidence", "numbers", "verdict"])
