"""The library of claim tests: every experimental claim of the book is one of these, applied
by one rule to both sides (the paper's printed cells and our runs).

A test reads quantities of one row of an :class:`~replicate.claims.evidence.Evidence`
(:class:`~replicate.claims.evidence.Cell`, :class:`~replicate.claims.evidence.Named`),
reduces them to one statistic and decides it against a threshold with
:func:`replicate.claims.decide.decide` - on the paper's side the interval is the printed
point, on ours the central 95 % of the statistic over the noise model's joint resamples:

- :class:`Difference` -- ``a - b`` below (above, at most, ...) a margin: "A has a lower ECE
  than B", "the error rises by at most one point";
- :class:`Lowest` / :class:`Highest` -- a cell is the lowest (highest, or among the ``top``
  best) of a set: the statistic is the cell minus the best of its rivals;
- :class:`Value` -- one quantity against a fixed number ("a gamma above 20");
- :class:`Within` -- a quantity inside a stated range ("the optimal T is close to 1");
- :class:`Statistic` -- any other vectorised function of several quantities (a difference
  of differences), its statement a text or a template of the quantities' labels;
- :class:`Trend` -- a quantity that rises (falls) over an ordered parameter: every
  consecutive step in the claimed direction;
- combinators: :class:`AllOf` (parts that must all hold), :class:`Count` ("k of N" items in
  one row), :class:`Readings` (a sentence read several ways), :class:`Not`,
  :class:`Given` (a test run only in the regime the claim speaks of), :class:`PerSeed`
  (each run on its own), :class:`ByDataset` (a test per data set) and :class:`OnRows` (the
  rows of some networks only).

Which rows of a side a claim covers, and how many must hold, is its
:class:`replicate.claims.claim.Over`. Every test writes its own ``how`` text from its
parameters (:meth:`Test.how`), and its result says the numbers, the interval and how the
noise was handled. A comparison of two quantities that are the same model on our side
(identical test logits) is ``not tested`` with that reason instead of being counted.
"""
from __future__ import annotations

import math

import numpy as np

from . import wording
from .decide import (ALPHA, OP_WORDS, Resolution, all_hold, check_op, decide, decide_within, interval, joined,
                     needs_text, not_tested, tally)
from .evidence import Cell, Named, Names, combine
from .vocabulary import FAILS, HOLDS, INCONCLUSIVE, NOT_TESTED, Outcome, readings


def _quantity(q):
    if not isinstance(q, (Cell, Named)):
        raise ValueError(f"a quantity must be a Cell or a Named; got {q!r}")
    return q


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _numbers(est: float, low: float, high: float, exact: bool, digits: int = 2) -> str:
    f = lambda x: _fmt(x, digits)  # noqa: E731
    return f(est) if exact else f"{f(est)} [{f(low)}, {f(high)}]"


class Test:
    """A claim test: ``test(evidence, row) -> Resolution``; :meth:`how` says what it
    compares, :meth:`quantities` what it reads."""

    def __call__(self, ev, row: str) -> Resolution:
        return ev.memo((self.key(), row), lambda: self.run(ev, row))

    def run(self, ev, row: str) -> Resolution:
        raise NotImplementedError

    def key(self):
        return (type(self).__name__, repr(self.__dict__))

    def how(self, names: Names) -> str:
        raise NotImplementedError

    def quantities(self) -> tuple:
        return ()


class Statistic(Test):
    """``fn(*quantities) op threshold``: the general test (``text`` names the statistic in
    the ``how``). ``pairs`` are pairs of quantities that must not be the same model."""

    def __init__(self, fn, quantities, op: str = "<", threshold: float = 0.0, text: str = "statistic",
                 pairs=(), digits: int = 2):
        self.fn, self.qs, self.op = fn, tuple(_quantity(q) for q in quantities), check_op(op)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number; got {threshold!r}")
        self.threshold, self.text, self.pairs, self.digits = float(threshold), text, tuple(pairs), digits
        if not self.qs:
            raise ValueError("quantities must name at least one quantity")

    def key(self):
        fn = id(self.fn) if type(self) is Statistic else None
        return (type(self).__name__, self.text, self.qs, self.op, self.threshold, fn)

    def quantities(self) -> tuple:
        return self.qs

    def statement(self, names: Names) -> str:
        """``text``; a template (``"{0} − mean({1}, {2})"``) is filled with the quantities' labels."""
        return self.text.format(*(q.label(names) for q in self.qs)) if "{0}" in self.text else self.text

    def how(self, names: Names) -> str:
        return f"{self.statement(names)} {OP_WORDS[self.op]} {self.threshold:g}"

    def run(self, ev, row: str) -> Resolution:
        for a, b in self.pairs:
            why = ev.identical(row, a, b)
            if why:
                return not_tested(f"the same model at this profile: {why}")
        got = combine(ev, row, self.qs, self.fn)
        if isinstance(got, str):
            return not_tested(got)
        point, reps, noise, used = got
        low, high = interval(point, reps)
        if not (math.isfinite(low) and math.isfinite(point)):
            return not_tested(f"{self.statement(ev.names)} is not a number here", used)
        needs = needs_text(point, reps, self.threshold)
        outcome = decide(low, high, self.op, self.threshold, needs)
        text = f"{self.statement(ev.names)} = {_numbers(point, low, high, reps is None, self.digits)}"
        return Resolution(outcome, point, low, high, text, noise, needs if outcome.verdict == INCONCLUSIVE else "",
                          used)


class Difference(Statistic):
    """``a - b`` ``op`` ``margin``: "a is lower than b" is ``op="<"``, "higher" ``">"``,
    "exceeds b by at most 1 point" ``op="<=", margin=1``."""

    def __init__(self, a, b, op: str = "<", margin: float = 0.0):
        super().__init__(lambda x, y: x - y, (a, b), op, margin, pairs=((a, b),))
        self.a, self.b = a, b

    def statement(self, names: Names) -> str:
        if isinstance(self.a, Cell) and isinstance(self.b, Cell) and (self.a.metric, self.a.post, self.a.setting) \
                == (self.b.metric, self.b.post, self.b.setting):
            head = Cell(self.a.method, self.a.metric, self.a.post, self.a.setting).label(Names(metrics=names.metrics))
            head = head.split(" ", 1)[1] if " " in head else head
            return f"{head}: {names.method(self.a.method)} − {names.method(self.b.method)}"
        return f"{self.a.label(names)} − {self.b.label(names)}"


def _ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ..."""
    tail = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{tail}"


def _kth(stack: np.ndarray, k: int, largest: bool) -> np.ndarray:
    s = np.sort(stack, axis=0)
    return s[-k] if largest else s[k - 1]


class Lowest(Statistic):
    """``q`` is the lowest of ``among`` (or among the ``top`` lowest): ``q`` minus the
    ``top``-th lowest rival is below 0 (a tie is not lowest). Rivals without a number in the
    row are left out, unless ``complete`` (the numbers of a figure: all or none; the first
    missing one says why). :class:`Highest` mirrors it."""

    largest = False

    def __init__(self, q, among, top: int = 1, complete: bool = False):
        rivals = tuple(_quantity(r) for r in among if r != q)
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= max(1, len(rivals)):
            raise ValueError(f"top must be an integer in [1, {max(1, len(rivals))}]; got {top!r}")
        if not rivals:
            raise ValueError("among must name at least one quantity besides q")
        big = self.largest

        def fn(own, *others):
            return own - _kth(np.stack(np.broadcast_arrays(*others)), top, big)
        super().__init__(fn, (q, *rivals), ">" if big else "<", 0.0, pairs=tuple((q, r) for r in rivals))
        self.q, self.rivals, self.top, self.complete = q, rivals, top, bool(complete)

    def key(self):
        return (*super().key(), self.top, self.complete)

    def run(self, ev, row: str) -> Resolution:
        own = ev.draws(row, self.q)
        if isinstance(own, str):
            return not_tested(own)
        if self.complete:                      # a figure's numbers: all or none, the first missing says why
            missing = next((d for d in map(lambda r: ev.draws(row, r), self.rivals) if isinstance(d, str)), None)
            if missing is not None:
                return not_tested(missing)
        here = [r for r in self.rivals if not isinstance(ev.draws(row, r), str)]
        if not here:
            reasons = dict.fromkeys(ev.draws(row, r) for r in self.rivals)
            return not_tested("no rival has a number: " + "; ".join(reasons))
        if len(here) < len(self.rivals):
            sub = type(self)(self.q, here, min(self.top, len(here)), self.complete)
            return sub.run(ev, row)
        return super().run(ev, row)

    def statement(self, names: Names) -> str:
        best = "max" if self.largest else "min"
        best = best if self.top == 1 else f"{_ordinal(self.top)} {'largest' if self.largest else 'smallest'}"
        q, rivals = self.q, self.rivals
        if isinstance(q, Cell) and all(isinstance(r, Cell) and (r.metric, r.post, r.setting) ==
                                       (q.metric, q.post, q.setting) for r in rivals):
            head = Cell(q.method, q.metric, q.post, q.setting).label(Names(metrics=names.metrics)).split(" ", 1)[1]
            return f"{head}: {names.method(q.method)} − {best}({', '.join(names.method(r.method) for r in rivals)})"
        return f"{q.label(names)} − {best}({', '.join(r.label(names) for r in rivals)})"

    def how(self, names: Names) -> str:
        rank = "highest" if self.largest else "lowest"
        among = "the " + rank if self.top == 1 else f"among the {self.top} {rank}"
        return f"{self.q.label(names)} is {among} of {len(self.rivals) + 1}: {self.statement(names)} " \
               f"{OP_WORDS[self.op]} 0"


class Highest(Lowest):
    """``q`` is the highest of ``among`` (AUROC, accuracy)."""

    largest = True


class Value(Statistic):
    """One quantity ``op`` a fixed ``threshold`` ("the final gamma of the lowest bin is above 20")."""

    def __init__(self, q, op: str, threshold: float):
        super().__init__(lambda x: x, (q,), op, threshold)
        self.q = q

    def statement(self, names: Names) -> str:
        return self.q.label(names)


class Within(Test):
    """``q`` lies in ``[lo, hi]`` ("the optimal T is close to 1": :data:`replicate.claims.wording.T_NEAR_ONE`)."""

    def __init__(self, q, lo: float, hi: float, text: str = ""):
        self.q, self.lo, self.hi, self.text = _quantity(q), float(lo), float(hi), text
        if not self.lo <= self.hi:
            raise ValueError(f"lo must be <= hi; got [{lo}, {hi}]")

    def key(self):
        return ("Within", self.q, self.lo, self.hi)

    def quantities(self) -> tuple:
        return (self.q,)

    def how(self, names: Names) -> str:
        return f"{self.q.label(names)} in [{self.lo:g}, {self.hi:g}]" + (f" ({self.text})" if self.text else "")

    def run(self, ev, row: str) -> Resolution:
        got = combine(ev, row, (self.q,), lambda x: x)
        if isinstance(got, str):
            return not_tested(got)
        point, reps, noise, used = got
        low, high = interval(point, reps)
        gap = min(abs(point - self.lo), abs(self.hi - point))
        needs = f"a narrower interval than [{_fmt(low)}, {_fmt(high)}] ({needs_text(point, reps, point - gap)})"
        outcome = decide_within(low, high, self.lo, self.hi, needs)
        text = f"{self.q.label(ev.names)} = {_numbers(point, low, high, reps is None)}; range [{self.lo:g}, {self.hi:g}]"
        return Resolution(outcome, point, low, high, text, noise, needs if outcome.verdict == INCONCLUSIVE else "",
                          used)


def near_one(q) -> Within:
    """The book's one reading of "the optimal T is close to 1" (:data:`replicate.claims.wording.T_NEAR_ONE`)."""
    return Within(q, *wording.T_NEAR_ONE, text=wording.near_one_text())


def is_one(q) -> Within:
    """The book's one reading of "the optimal T is 1" (:data:`replicate.claims.wording.T_IS_ONE`)."""
    return Within(q, *wording.T_IS_ONE, text=wording.is_one_text())


class ByDataset(Test):
    """A sentence that says different things of different data sets: ``tests`` maps a tuple
    of data set keys to the test of their rows (a row of another data set: not tested)."""

    def __init__(self, tests: dict):
        if not tests or not all(isinstance(k, tuple) and isinstance(t, Test) for k, t in tests.items()):
            raise ValueError("tests must map tuples of data set keys to tests")
        self.tests = dict(tests)

    def key(self):
        return ("ByDataset", tuple((k, t.key()) for k, t in self.tests.items()))

    def quantities(self) -> tuple:
        return tuple(dict.fromkeys(q for t in self.tests.values() for q in t.quantities()))

    def how(self, names: Names) -> str:
        return "; ".join(f"on {', '.join(k)}: {t.how(names)}" for k, t in self.tests.items())

    def run(self, ev, row: str) -> Resolution:
        ds = next((r.dataset for r in ev.rows() if r.name == row), "")
        for keys, t in self.tests.items():
            if ds in keys:
                return t(ev, row)
        return not_tested(f"the claim says nothing of {ds or row}")


class OnRows(Test):
    """``test`` on the rows of the networks ``models`` only, other rows not tested; with
    ``paper_only`` only the paper's rows are filtered (our network stands in for the
    paper's figure). :class:`replicate.claims.claim.Over` selects rows on both sides alike."""

    def __init__(self, test: Test, models, paper_only: bool = False):
        self.test, self.models, self.paper_only = test, tuple(models), bool(paper_only)
        if not self.models:
            raise ValueError("models must name at least one network")

    def key(self):
        return ("OnRows", self.test.key(), self.models, self.paper_only)

    def quantities(self) -> tuple:
        return self.test.quantities()

    def how(self, names: Names) -> str:
        whose = " (the paper's rows; ours: every network)" if self.paper_only else ""
        return f"{self.test.how(names)}; on the rows of {', '.join(self.models)}{whose}"

    def run(self, ev, row: str) -> Resolution:
        model = next((r.model for r in ev.rows() if r.name == row), "")
        if (not self.paper_only or ev.side == "paper") and model not in self.models:
            return not_tested(f"{row} is not a row of {', '.join(self.models)}")
        return self.test(ev, row)


class AllOf(Test):
    """Parts that must all hold (:func:`replicate.claims.decide.all_hold`)."""

    def __init__(self, *tests):
        if not tests or not all(isinstance(t, Test) for t in tests):
            raise ValueError("AllOf needs at least one test")
        self.tests = tests

    def key(self):
        return ("AllOf", tuple(t.key() for t in self.tests))

    def quantities(self) -> tuple:
        return tuple(dict.fromkeys(q for t in self.tests for q in t.quantities()))

    def how(self, names: Names) -> str:
        return " and ".join(t.how(names) for t in self.tests)

    def run(self, ev, row: str) -> Resolution:
        parts = [t(ev, row) for t in self.tests]
        return joined(parts, all_hold(parts))


def Trend(quantities, direction: str = "decreasing") -> AllOf:
    """A quantity that falls (``"decreasing"``) or rises (``"increasing"``) over an ordered
    parameter: every consecutive step in that direction."""
    if direction not in ("decreasing", "increasing"):
        raise ValueError(f"direction must be 'decreasing' or 'increasing'; got {direction!r}")
    qs = [_quantity(q) for q in quantities]
    if len(qs) < 2:
        raise ValueError("a trend needs at least two quantities")
    op = "<" if direction == "decreasing" else ">"
    return AllOf(*(Difference(b, a, op) for a, b in zip(qs, qs[1:])))


class Count(Test):
    """``quantifier`` of the named ``tests`` hold in one row ("in most bins", "8 of 9
    runs"): counted by :func:`replicate.claims.decide.tally` (``what`` names the items)."""

    def __init__(self, tests: dict, quantifier="every", what: str = "items"):
        if not isinstance(tests, dict) or not tests or not all(isinstance(t, Test) for t in tests.values()):
            raise ValueError("tests must be a non-empty dict name -> test")
        wording.needed(quantifier, 1)
        self.tests, self.quantifier, self.what = dict(tests), quantifier, what

    def key(self):
        return ("Count", tuple((n, t.key()) for n, t in self.tests.items()), repr(self.quantifier))

    def quantities(self) -> tuple:
        return tuple(dict.fromkeys(q for t in self.tests.values() for q in t.quantities()))

    def how(self, names: Names) -> str:
        first = next(iter(self.tests.values())).how(names)
        return f"in {wording.quantifier_text(self.quantifier, self.what, len(self.tests))}: {first}, ..."

    def run(self, ev, row: str) -> Resolution:
        got = {name: t(ev, row) for name, t in self.tests.items()}
        live = {n: r for n, r in got.items() if r.verdict != NOT_TESTED}
        if not live:
            return not_tested("; ".join(dict.fromkeys(r.outcome.note for r in got.values())) or "no item to test")
        outcome = tally(live, wording.needed(self.quantifier, len(live)), self.what)
        held = sum(r.verdict == HOLDS for r in live.values())
        res = joined(list(live.values()), outcome, labels=list(live))
        return Resolution(res.outcome, text=f"{held} of {len(live)} {self.what} hold: {res.text}", noise=res.noise,
                          needs=res.needs, used=res.used, parts=res.parts)


class Readings(Test):
    """A sentence read several ways (``every_row=..., most_rows=...``), each reading its own
    test; the verdicts combined by :func:`replicate.claims.readings`."""

    def __init__(self, **tests):
        if len(tests) < 2 or not all(isinstance(t, Test) for t in tests.values()):
            raise ValueError("Readings needs at least two named tests")
        self.tests = tests

    def key(self):
        return ("Readings", tuple((n, t.key()) for n, t in self.tests.items()))

    def quantities(self) -> tuple:
        return tuple(dict.fromkeys(q for t in self.tests.values() for q in t.quantities()))

    def how(self, names: Names) -> str:
        return "; ".join(f"read as {n.replace('_', ' ')}: {t.how(names)}" for n, t in self.tests.items())

    def run(self, ev, row: str) -> Resolution:
        got = {n: t(ev, row) for n, t in self.tests.items()}
        outcome = readings(**{n: r.outcome for n, r in got.items()})
        return joined(list(got.values()), outcome, labels=[n.replace("_", " ") for n in got])


class Not(Test):
    """The contrary of ``test``: its holds and fails swapped."""

    def __init__(self, test: Test):
        self.test = test

    def key(self):
        return ("Not", self.test.key())

    def quantities(self) -> tuple:
        return self.test.quantities()

    def how(self, names: Names) -> str:
        return f"not ({self.test.how(names)})"

    def run(self, ev, row: str) -> Resolution:
        r = self.test(ev, row)
        if r.verdict not in (HOLDS, FAILS):
            return r
        flip = Outcome(FAILS if r.verdict == HOLDS else HOLDS)
        return Resolution(flip, r.estimate, r.low, r.high, f"not: {r.text}", r.noise, "", r.used, (r,))


class Given(Test):
    """``test`` in the regime the claim speaks of: run unless ``condition`` fails (its
    interval lies wholly outside the regime); then ``not tested``, ``reason`` and the
    condition's numbers saying why."""

    def __init__(self, condition: Test, test: Test, reason: str):
        if not reason:
            raise ValueError("reason must say what regime the claim speaks of")
        self.condition, self.test, self.reason = condition, test, reason

    def key(self):
        return ("Given", self.condition.key(), self.test.key())

    def quantities(self) -> tuple:
        return tuple(dict.fromkeys((*self.condition.quantities(), *self.test.quantities())))

    def how(self, names: Names) -> str:
        return f"{self.test.how(names)}; tested only where {self.condition.how(names)}"

    def run(self, ev, row: str) -> Resolution:
        c = self.condition(ev, row)
        if c.verdict == FAILS:
            return not_tested(f"{self.reason} ({c.text})", c.used)
        return self.test(ev, row)


class PerSeed(Test):
    """``test`` on each seed of the row on its own (noise: that seed's test examples),
    ``quantifier`` of the seeds must hold ("9 of 9 runs")."""

    def __init__(self, test: Test, quantifier="every"):
        wording.needed(quantifier, 1)
        self.test, self.quantifier = test, quantifier

    def key(self):
        return ("PerSeed", self.test.key(), repr(self.quantifier))

    def quantities(self) -> tuple:
        return self.test.quantities()

    def how(self, names: Names) -> str:
        return f"{self.test.how(names)}, each run on its own, in {wording.quantifier_text(self.quantifier, 'runs')}"

    def run(self, ev, row: str) -> Resolution:
        seeds = ev.per_seed(row)
        if isinstance(seeds, str):
            return not_tested(seeds)
        return Count({f"seed {s}": _AtSeed(self.test, one) for s, one in seeds.items()}, self.quantifier,
                     "runs").run(ev, row)


class _AtSeed(Test):
    """``test`` read on one seed's evidence (a part of :class:`PerSeed`)."""

    def __init__(self, test: Test, ev):
        self.test, self.ev = test, ev

    def __call__(self, ev, row: str) -> Resolution:
        return self.test(self.ev, row)              # remembered on the seed's own evidence


__all__ = ["ALPHA", "Test", "Statistic", "Difference", "Lowest", "Highest", "Value", "Within", "near_one", "is_one",
           "ByDataset", "OnRows", "AllOf", "Trend", "Count", "Readings", "Not", "Given", "PerSeed"]
