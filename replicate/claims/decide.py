"""The one decision rule of every claim test, for both sides: a statistic's interval ->
``holds``, ``fails`` or ``inconclusive``.

A claim test (:mod:`replicate.claims.tests`) reduces a claim to one number per row - a
difference of two cells, a cell minus the lowest of its rivals, a temperature - and
compares it with a threshold. The number comes with *draws* (:class:`replicate.claims.evidence.Draws`):
the paper's printed cells carry none (their interval is the point itself), our runs carry
the joint resamples of the noise model (:mod:`replicate.comparison.noise`), and the interval is the
central ``1 - alpha`` share of the statistic over them. Then

- the claim **holds** when the whole interval satisfies the claimed relation
  (``stat < threshold`` for "lower", ``<=`` for "at most", ...);
- it **fails** when the whole interval satisfies the contrary relation;
- it is **inconclusive** otherwise, with what would decide it (:func:`needs_text`).

For the paper's side the interval is one point, so the rule is the plain comparison of the
printed numbers; for ours it is the same comparison, made only where the noise cannot
reverse it. A claim over several rows counts its rows with :func:`tally`, parts that must
all hold are combined by :func:`all_hold`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from .vocabulary import FAILS, HOLDS, INCONCLUSIVE, NOT_TESTED, Outcome, inconclusive, untested

#: The level of every interval on our runs: 95 %.
ALPHA = 0.05
#: The power the "what would decide it" estimates aim at.
POWER = 0.8
#: The relations a claim can state between its statistic and a threshold, and their contraries.
OPS = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
OP_WORDS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least"}


@dataclass(frozen=True)
class Resolution:
    """What a claim test found on one side: the ``outcome`` (verdict and note), the
    statistic's point ``estimate`` and interval ``[low, high]`` (NaN when the test combines
    parts), ``text`` (the row's result: the numbers behind the verdict), ``noise`` (how
    noise was handled: the resamples, seeds and examples behind the interval, or why the
    quantity has none), ``needs`` (what would decide an inconclusive test) and ``used``
    (what the test read: ``(row, who, seeds)`` triples, for the row's evidence label)."""

    outcome: Outcome
    estimate: float = math.nan
    low: float = math.nan
    high: float = math.nan
    text: str = ""
    noise: str = ""
    needs: str = ""
    used: tuple = ()
    parts: tuple = field(default=(), compare=False, repr=False)

    @property
    def verdict(self) -> str:
        return self.outcome.verdict


def not_tested(reason: str, used: tuple = ()) -> Resolution:
    """A :class:`Resolution` whose outcome is ``not tested`` with ``reason``."""
    return Resolution(untested(reason), text="–", noise="–", used=used)


def _finite(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or math.isnan(v):
        raise ValueError(f"{name} must be a number; got {v!r}")
    return float(v)


def check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def check_op(op: str) -> str:
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    return op


def interval(point: float, reps, alpha: float = ALPHA) -> tuple[float, float]:
    """The central ``1 - alpha`` interval of a statistic: the percentiles of its resampled
    values ``reps``, or ``[point, point]`` when it has none (a printed number)."""
    alpha = check_alpha(alpha)
    if reps is None:
        return float(point), float(point)
    reps = np.asarray(reps, dtype=np.float64)
    reps = reps[np.isfinite(reps)]
    if reps.size == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _holds(value: float, op: str, threshold: float) -> bool:
    return {"<": value < threshold, "<=": value <= threshold, ">": value > threshold,
            ">=": value >= threshold}[op]


def decide(low: float, high: float, op: str, threshold: float, needs: str) -> Outcome:
    """The verdict on "statistic ``op`` ``threshold``" from the statistic's interval
    ``[low, high]``: ``holds`` when every value of the interval satisfies the relation,
    ``fails`` when every value satisfies its contrary (:data:`OPS`), ``inconclusive``
    (with ``needs``) otherwise. A point interval (the paper's side) is never inconclusive.

    >>> decide(-2.0, -0.5, "<", 0.0, "more seeds").verdict
    'holds'
    >>> decide(-0.5, 0.4, "<", 0.0, "more seeds").verdict
    'inconclusive'
    >>> decide(0.0, 0.0, "<", 0.0, "").verdict          # a tie is not "lower"
    'fails'
    """
    low, high, threshold, op = _finite("low", low), _finite("high", high), _finite("threshold", threshold), \
        check_op(op)
    if low > high:
        raise ValueError(f"low must be <= high; got [{low}, {high}]")
    if _holds(low, op, threshold) and _holds(high, op, threshold):
        return Outcome(HOLDS)
    contrary = OPS[op]
    if _holds(low, contrary, threshold) and _holds(high, contrary, threshold):
        return Outcome(FAILS)
    return inconclusive(needs or "a narrower interval")


def decide_within(low: float, high: float, lo: float, hi: float, needs: str) -> Outcome:
    """The verdict on "the value lies in ``[lo, hi]``": holds when the interval lies inside
    the range, fails when it lies wholly outside, ``inconclusive`` when it straddles an
    end. The ends are compared within a relative 1e-9 (grid temperatures such as 1.1 are
    floats)."""
    low, high, lo, hi = (_finite(n, v) for n, v in (("low", low), ("high", high), ("lo", lo), ("hi", hi)))
    if low > high or lo > hi:
        raise ValueError(f"intervals must have low <= high; got [{low}, {high}] and range [{lo}, {hi}]")
    eps = 1e-9 * max(1.0, abs(lo), abs(hi))
    if lo - eps <= low and high <= hi + eps:
        return Outcome(HOLDS)
    if high < lo - eps or low > hi + eps:
        return Outcome(FAILS)
    return inconclusive(needs or "a narrower interval")


def needs_text(estimate: float, reps, threshold: float, alpha: float = ALPHA, power: float = POWER) -> str:
    """What would decide an inconclusive comparison: how many times the evidence behind the
    interval (seeds and test examples alike; the interval narrows as one over the square
    root of both) would resolve a statistic this far from ``threshold`` with probability
    ``power``, by the normal approximation ``((z_{1-alpha/2} + z_power) sd / |d|)^2``."""
    gap = abs(float(estimate) - float(threshold))
    if reps is None:
        return "no resamples"
    sd = float(np.nanstd(np.asarray(reps, dtype=np.float64), ddof=1))
    if gap == 0 or not math.isfinite(gap):
        return "no difference to resolve: the estimate sits on the threshold"
    z = _st.norm.ppf(1 - check_alpha(alpha) / 2) + _st.norm.ppf(power)
    factor = (z * sd / gap) ** 2
    if factor < 1:
        return "a new draw of the runs (the point estimate is beyond the threshold, the interval is not)"
    shown = f"{gap:.2g}" if gap >= 1e-3 else f"{gap:.1e}"  # never more than four decimals (issue #32)
    return f"about {factor:.1f} times the seeds and test examples behind this interval to resolve a gap of {shown}"


def all_hold(parts) -> Outcome:
    """Parts that must all hold ("before and after TS", several metrics): ``holds`` when
    every part holds, ``fails`` when any fails, else ``inconclusive`` with each undecided
    part's note. A part that is ``not tested`` makes the whole ``not tested``."""
    outcomes = [p.outcome if isinstance(p, Resolution) else p for p in parts]
    if not outcomes:
        raise ValueError("parts must hold at least one outcome")
    verdicts = [o.verdict for o in outcomes]
    if NOT_TESTED in verdicts:
        return next(o for o in outcomes if o.verdict == NOT_TESTED)
    if all(v == HOLDS for v in verdicts):
        return Outcome(HOLDS)
    if FAILS in verdicts:
        return Outcome(FAILS)
    return inconclusive("; ".join(dict.fromkeys(o.note for o in outcomes if o.verdict == INCONCLUSIVE)))


def tally(outcomes: dict, k: int, what: str = "rows") -> Outcome:
    """The one counting rule for a claim over ``N`` items that needs ``k`` of them ("in 9 of
    11 cases", "in most rows", "in every row"): ``holds`` when at least ``k`` items hold,
    ``fails`` when more than ``N - k`` fail (``k`` can no longer be reached), else
    ``inconclusive``, saying how many are undecided and what would decide each. Items that
    are ``not tested`` are left out of ``N`` (``{item: Outcome or Resolution}``)."""
    got = {r: (o.outcome if isinstance(o, Resolution) else o) for r, o in dict(outcomes).items()}
    got = {r: o for r, o in got.items() if o.verdict != NOT_TESTED}
    n = len(got)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}")
    if n == 0:
        raise ValueError("outcomes must hold at least one decided or undecided item")
    if k > n:
        raise ValueError(f"k must be at most the number of items ({n}); got {k}")
    held = sum(o.verdict == HOLDS for o in got.values())
    failed = sum(o.verdict == FAILS for o in got.values())
    if held >= k:
        return Outcome(HOLDS)
    if failed > n - k:
        return Outcome(FAILS)
    open_items = {r: o.note for r, o in got.items() if o.verdict not in (HOLDS, FAILS)}
    return inconclusive(f"{k} of {n} {what} must hold: {held} {'holds' if held == 1 else 'hold'}, {failed} "
                        f"{'fails' if failed == 1 else 'fail'}, {len(open_items)} undecided ("
                        + "; ".join(f"{r}: {note}" for r, note in open_items.items()) + ")")


def _union(parts) -> tuple:
    return tuple(dict.fromkeys(u for p in parts for u in p.used))


def _noise(parts) -> str:
    return "; ".join(dict.fromkeys(p.noise for p in parts if p.noise and p.noise != "–")) or "–"


def joined(parts, outcome, sep=" | ", labels=None) -> Resolution:
    """The :class:`Resolution` of several ``parts`` combined into ``outcome``: their texts
    joined (each after its label), their noise and what they used, kept together."""
    texts = [p.text if lab is None else f"{lab}: {p.text}" for lab, p in zip(labels or [None] * len(parts), parts)]
    return Resolution(outcome, text=sep.join(texts), noise=_noise(parts),
                      needs=outcome.note if outcome.verdict == INCONCLUSIVE else "", used=_union(parts),
                      parts=tuple(parts))
