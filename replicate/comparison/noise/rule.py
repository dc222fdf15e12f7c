"""The decision rule of :mod:`replicate.comparison.noise`: a claim's interval -> ``holds``,
``fails`` or ``inconclusive`` (:func:`decide`, :func:`decide_within`), what would decide an
undecided one (:func:`test_size_needed`), the :class:`Resolution` every test returns, and
the one counting rule for claims over several rows ("in k of N rows", "most", "every"):
:func:`tally`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

from ...claims import FAILS, HOLDS, INCONCLUSIVE, Outcome, inconclusive

#: With this many seeds or more a difference is tested across seeds; with fewer, over test examples.
MIN_SEEDS = 3
ALPHA, POWER = 0.05, 0.8
N_BOOT = 1000
#: Resamples of a metric recomputed one resample at a time (smCE, AUROC, debiased ECE, ...).
N_BOOT_SLOW = 200
CLAIMED = ("lower", "higher")


# ----------------------------------------------------------------------------- checks
def _alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def _count(name: str, v, least: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
        raise ValueError(f"{name} must be an integer >= {least}; got {v!r}")
    return int(v)


def _claimed(claimed: str) -> str:
    if claimed not in CLAIMED:
        raise ValueError(f"claimed must be one of {', '.join(CLAIMED)}; got {claimed!r}")
    return claimed


def _finite(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or math.isnan(v):
        raise ValueError(f"{name} must be a number; got {v!r}")
    return float(v)


# ----------------------------------------------------------------------------- the rule
def decide(low: float, high: float, claimed: str, needs: str) -> Outcome:
    """The verdict on a claimed difference ``a - b`` from its interval ``[low, high]``:
    ``claimed="lower"`` (a < b) holds when ``high < 0`` and fails when ``low >= 0``;
    ``"higher"`` holds when ``low > 0`` and fails when ``high <= 0``; anything else is
    ``inconclusive`` with ``needs`` (what would decide it) as its note."""
    low, high, claimed = _finite("low", low), _finite("high", high), _claimed(claimed)
    if low > high:
        raise ValueError(f"low must be <= high; got [{low}, {high}]")
    if claimed == "higher":
        low, high = -high, -low
    if high < 0:
        return Outcome(HOLDS)
    if low >= 0:
        return Outcome(FAILS)
    return inconclusive(needs)


def decide_within(low: float, high: float, lo: float, hi: float, needs: str) -> Outcome:
    """The verdict on "the value lies in ``[lo, hi]``" from its interval ``[low, high]``:
    holds when the interval lies inside the range, fails when it lies wholly outside,
    ``inconclusive`` (``needs``) when it straddles an end. The ends are compared within a
    relative 1e-9 (a mean of grid temperatures such as 1.1 is a float)."""
    low, high, lo, hi = (_finite(n, v) for n, v in (("low", low), ("high", high), ("lo", lo), ("hi", hi)))
    if low > high or lo > hi:
        raise ValueError(f"intervals must have low <= high; got [{low}, {high}] and range [{lo}, {hi}]")
    eps = 1e-9 * max(1.0, abs(lo), abs(hi))          # grid values such as 1.1 are floats
    if lo - eps <= low and high <= hi + eps:
        return Outcome(HOLDS)
    if high < lo - eps or low > hi + eps:
        return Outcome(FAILS)
    return inconclusive(needs)


def test_size_needed(diff: float, sd: float, n_test: int, alpha: float = ALPHA, power: float = POWER):
    """About how many test examples a paired bootstrap would need to resolve a difference
    ``diff`` whose bootstrap standard deviation is ``sd`` at ``n_test`` examples, with
    probability ``power`` at level ``alpha``, assuming the standard deviation shrinks as
    ``1/sqrt(n)`` (the normal approximation: ``n (z_{1-alpha/2} + z_power)^2 sd^2 / diff^2``).
    None when ``diff`` is 0 (no size resolves it); rounded up to 100."""
    diff, sd = _finite("diff", diff), _finite("sd", sd)
    n_test, alpha = _count("n_test", n_test), _alpha(alpha)
    if sd < 0:
        raise ValueError(f"sd must be >= 0; got {sd!r}")
    if diff == 0:
        return None
    z = _st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(_alpha(power))
    need = n_test * (z * sd / abs(diff)) ** 2
    return int(max(100, math.ceil(need / 100) * 100))



@dataclass(frozen=True)
class Resolution:
    """A claim's quantity on our runs with its interval and the verdict :func:`decide` gives.

    ``estimate`` is the difference ``a - b`` (or the rank, or the temperature), ``low`` /
    ``high`` its interval, ``test`` how the interval was made, ``needs`` what would decide
    the claim (empty when it is decided) and ``outcome`` the verdict (``holds``, ``fails``
    or ``inconclusive`` with ``needs`` as its note). ``text`` is the row's result."""

    estimate: float
    low: float
    high: float
    test: str
    needs: str
    outcome: Outcome
    text: str
    details: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def verdict(self) -> str:
        return self.outcome.verdict



# ----------------------------------------------------------------------------- claims over several rows
def all_hold(outcomes) -> Outcome:
    """Parts that must all hold (a claim "before and after TS", or over several metrics):
    ``holds`` when every part holds, ``fails`` when any fails, else ``inconclusive`` with
    each undecided part's note. ``not tested`` parts make the whole ``not tested``."""
    outcomes = [o.outcome if isinstance(o, Resolution) else o for o in outcomes]
    if not outcomes:
        raise ValueError("outcomes must hold at least one part")
    verdicts = [o.verdict for o in outcomes]
    if "not tested" in verdicts:
        return next(o for o in outcomes if o.verdict == "not tested")
    if all(v == HOLDS for v in verdicts):
        return Outcome(HOLDS)
    if FAILS in verdicts:
        return Outcome(FAILS)
    return inconclusive("; ".join(dict.fromkeys(o.note for o in outcomes if o.verdict == INCONCLUSIVE)))


def tally(outcomes: dict, k: int, what: str = "rows") -> Outcome:
    """The one counting rule for a claim over ``N`` rows that needs ``k`` of them ("in 9 of
    11 cases", "in most rows", "in every row"), each row decided within the runs' noise
    (``{row: Outcome or Resolution}``): ``holds`` when at least ``k`` rows hold, ``fails``
    when more than ``N - k`` rows fail (``k`` can no longer be reached), else
    ``inconclusive``, saying how many rows are undecided and what would decide each.
    A row that is ``not tested`` counts as neither (it is left out of ``N``)."""
    got = {r: (o.outcome if isinstance(o, Resolution) else o) for r, o in dict(outcomes).items()}
    got = {r: o for r, o in got.items() if o.verdict != "not tested"}
    n = len(got)
    k = _count("k", k)
    if n == 0:
        raise ValueError("outcomes must hold at least one decided or undecided row")
    if k > n:
        raise ValueError(f"k must be at most the number of rows ({n}); got {k}")
    held = sum(o.verdict == HOLDS for o in got.values())
    failed = sum(o.verdict == FAILS for o in got.values())
    if held >= k:
        return Outcome(HOLDS)
    if failed > n - k:
        return Outcome(FAILS)
    open_rows = {r: o.note for r, o in got.items() if o.verdict not in (HOLDS, FAILS)}
    return inconclusive(f"{k} of {n} {what} must hold: {held} {'holds' if held == 1 else 'hold'}, {failed} "
                        f"{'fails' if failed == 1 else 'fail'}, {len(open_rows)} undecided ("
                        + "; ".join(f"{r}: {note}" for r, note in open_rows.items()) + ")")
