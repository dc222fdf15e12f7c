"""A claim's noise test, built from the comparisons and read on a :class:`RunEvidence` (one
row of our runs) or on ``{row: RunEvidence}`` (several rows):

- one comparison: :func:`lower`, :func:`higher`, :func:`at_most` (within a margin),
  :func:`best` (best of N, by rank intervals), :func:`near` (an optimal temperature in a
  range; :func:`near_one`, the book's "close to 1"), :func:`t_higher`;
- parts that must all hold: :func:`all_of`;
- over rows: :func:`in_rows` ("in k of N rows", "most", "every", counted by
  :func:`tally`) and :func:`row_readings` (a sentence read with two quantifiers);
- the regime an OOD-detection claim speaks of: :func:`detects` (not tested on models that
  detect at or near chance).

Every test returns a :class:`Resolution`; a test that cannot run on the runs it is given (a
method without runs, models outside the claim's regime) returns one whose outcome is
``not tested`` with the reason. Results are remembered on the evidence
(:meth:`RunEvidence.memo`), so claims that share a comparison compute it once.
"""
from __future__ import annotations

import math

from ...claims import INCONCLUSIVE, NOT_TESTED, Outcome, inconclusive, readings, untested
from .. import wording
from .comparisons import best_of, compare
from .evidence import RunEvidence, as_rows
from .resampling import interval
from .rule import MIN_SEEDS, Resolution, all_hold, tally
from .temperatures import temperature_compare, temperature_near


def not_tested(reason: str) -> Resolution:
    """A :class:`Resolution` whose outcome is ``not tested`` with ``reason``."""
    return Resolution(math.nan, math.nan, math.nan, "", "", untested(reason), reason)


def _one(ev) -> RunEvidence:
    if isinstance(ev, RunEvidence):
        return ev
    rows = as_rows(ev)
    if len(rows) != 1:
        raise ValueError(f"this test reads one row of runs; got {len(rows)} rows ({', '.join(rows)}): "
                         f"wrap it in noise.in_rows")
    return next(iter(rows.values()))


def _absent(ev: RunEvidence, *methods) -> Resolution | None:
    gone = [m for m in methods if m not in ev.methods]
    return not_tested(f"no run of {', '.join(gone)} in {ev.name}") if gone else None


def _key(kw: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in kw.items()))


def lower(a: str, b: str, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``a`` has a lower ``metric`` than ``b`` (post-T when ``scaled``);
    ``kw`` go to :func:`compare`. Returns ``test(evidence: RunEvidence) -> Resolution``."""
    return _pair(a, b, metric, scaled, "lower", kw)


def higher(a: str, b: str, metric: str = "ece", scaled: bool = False, **kw):
    """As :func:`lower`, claiming ``a``'s ``metric`` is higher than ``b``'s."""
    return _pair(a, b, metric, scaled, "higher", kw)


def method_labels() -> dict:
    """``{method key: short label}`` of the catalogue (and ``adafocal``), for the rows' texts."""
    from ..methods import METHODS

    return {"adafocal": "AdaFocal", **{k: m.short for k, m in METHODS.items()}}


def _pair(a, b, metric, scaled, claimed, kw):
    kw = {"labels": method_labels(), **kw}

    def test(ev) -> Resolution:
        ev = _one(ev)
        return _absent(ev, a, b) or ev.memo(("compare", a, b, metric, bool(scaled), claimed, _key(kw)),
                                            lambda: compare(ev.cells(scaled, metric), a, b, metric, claimed, **kw))
    return test


def at_most(a: str, b: str, margin: float, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``a``'s ``metric`` exceeds ``b``'s by at most ``margin`` points
    ("without a significant loss in accuracy", "very similar"): the interval of ``a - b``
    (:func:`compare`) ``holds`` when it lies at or below ``margin``, ``fails`` when it lies
    wholly above, else ``inconclusive``."""
    margin = float(margin)

    def test(ev) -> Resolution:
        ev = _one(ev)
        if (gone := _absent(ev, a, b)):
            return gone
        r = _pair(a, b, metric, scaled, "lower", kw)(ev)
        needs = (f"seeds or a larger test set: the interval [{r.low:.2f}, {r.high:.2f}] of the difference "
                 f"straddles the margin {margin:g}")
        if r.high <= margin:
            outcome = Outcome("holds")
        elif r.low > margin:
            outcome = Outcome("fails")
        else:
            outcome = inconclusive(needs)
        return Resolution(r.estimate, r.low, r.high, r.test, needs if outcome.verdict == INCONCLUSIVE else "",
                          outcome, f"{r.text}; margin {margin:g}", r.details)
    return test


def best(method: str, among=None, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``method`` is the best of ``among`` (default every method of the
    runs; methods without runs are left out) by ``metric`` (:func:`best_of`; ``top=k``:
    among the k best)."""
    def test(ev) -> Resolution:
        ev = _one(ev)
        if (gone := _absent(ev, method)):
            return gone
        pool = [m for m in (ev.methods if among is None else dict.fromkeys(among)) if m in ev.methods]
        if len(pool) < 2:
            return not_tested(f"no other method of the claim has runs in {ev.name}")
        args = {"labels": method_labels(), **kw}
        return ev.memo(("best", method, tuple(pool), metric, bool(scaled), _key(kw)),
                       lambda: best_of(ev.cells(scaled, metric), method, metric, pool, **args))
    return test


def near(method: str, lo: float, hi: float, metric: str = "ece", **kw):
    """A claim's noise test: ``method``'s optimal T (chosen by validation ``metric``, as in
    the chapter's frame) lies in ``[lo, hi]`` (:func:`temperature_near`)."""
    def test(ev) -> Resolution:
        ev = _one(ev)
        if (gone := _absent(ev, method)):
            return gone
        ts = ev.temperatures(method, metric)
        few = len(ts) < kw.get("min_seeds", MIN_SEEDS)
        if metric != "ece" and few:
            raise ValueError(f"metric must be 'ece' with fewer than {MIN_SEEDS} seeds (the bootstrap chooses T "
                             f"again by validation ECE); got {metric!r}")
        return ev.memo(("near", method, lo, hi, metric, _key(kw)),
                       lambda: temperature_near(ts, lo, hi, val=ev.val(method) if few else None,
                                                what=f"T of {method_labels().get(method, method)}", **kw))
    return test


def near_one(method: str, metric: str = "ece", **kw):
    """:func:`near` on the book's one reading of "the optimal T is close to 1"
    (:data:`replicate.comparison.wording.T_NEAR_ONE`)."""
    return near(method, *wording.T_NEAR_ONE, metric=metric, **kw)


def t_higher(a: str, b: str, metric: str = "ece", **kw):
    """A claim's noise test: ``a``'s optimal T is higher than ``b``'s (:func:`temperature_compare`)."""
    def test(ev) -> Resolution:
        ev = _one(ev)
        if (gone := _absent(ev, a, b)):
            return gone
        ta, tb = ev.temperatures(a, metric), ev.temperatures(b, metric)
        name = method_labels().get
        few = len(ta) < kw.get("min_seeds", MIN_SEEDS)
        if few and metric != "ece":
            raise ValueError(f"metric must be 'ece' with fewer than {MIN_SEEDS} seeds (the bootstrap chooses T "
                             f"again by validation ECE); got {metric!r}")
        return ev.memo(("t_higher", a, b, metric, _key(kw)),
                       lambda: temperature_compare(ta, tb, "higher", ev.val(a) if few else None,
                                                   ev.val(b) if few else None,
                                                   what=f"T({name(a, a)}) − T({name(b, b)})", **kw))
    return test


def negated(test):
    """The contrary of ``test`` ("T is not close to 1"): its ``holds`` and ``fails`` swapped,
    ``inconclusive`` and ``not tested`` kept."""
    def run(ev) -> Resolution:
        r = test(ev)
        if r.verdict not in ("holds", "fails"):
            return r
        flip = Outcome("fails" if r.verdict == "holds" else "holds")
        return Resolution(r.estimate, r.low, r.high, r.test, "", flip, f"not: {r.text}", r.details)
    return run


def readings_of(**tests):
    """A sentence read several ways, each reading its own test (``worst=..., above_ce=...``):
    the verdicts combined by :func:`replicate.claims.readings`."""
    if len(tests) < 2:
        raise ValueError("readings_of needs at least two named tests")

    def run(ev) -> Resolution:
        got = {name: t(ev) for name, t in tests.items()}
        outcome = readings(**{name: r.outcome for name, r in got.items()})
        return Resolution(math.nan, math.nan, math.nan, "; ".join(dict.fromkeys(r.test for r in got.values()
                                                                                if r.test)),
                          outcome.note if outcome.verdict == INCONCLUSIVE else "", outcome,
                          " | ".join(f"{name.replace('_', ' ')}: {r.text}" for name, r in got.items()),
                          {"readings": got})
    return run


def _joined(parts: list, outcome: Outcome, sep: str = " | ", labels=None) -> Resolution:
    texts = [p.text if labels is None else f"{lab}: {p.text}" for lab, p in zip(labels or [None] * len(parts), parts)]
    return Resolution(math.nan, math.nan, math.nan, "; ".join(dict.fromkeys(p.test for p in parts if p.test)),
                      outcome.note if outcome.verdict == INCONCLUSIVE else "", outcome, sep.join(texts),
                      {"parts": parts})


def all_of(*tests):
    """A claim made of several comparisons that must all hold: ``holds`` when every one
    holds, ``fails`` when any fails, else ``inconclusive`` (with each undecided part's needs;
    :func:`all_hold`)."""
    if not tests:
        raise ValueError("all_of needs at least one test")

    def test(ev) -> Resolution:
        parts = [t(ev) for t in tests]
        return _joined(parts, all_hold(parts))
    return test


def _parts(parts) -> dict:
    if callable(parts):
        return {"": parts}
    if isinstance(parts, dict) and parts and all(callable(t) for t in parts.values()):
        return dict(parts)
    raise ValueError("parts must be a test or a non-empty dict name -> test")


def _per_row(parts: dict, ev, rows) -> dict:
    """``{part: {row: Resolution}}`` over the rows of ``ev`` that ``rows`` keeps."""
    got = {name: {} for name in parts}
    for row, one in as_rows(ev).items():
        if rows is not None and not rows(row):
            continue
        for name, t in parts.items():
            got[name][row] = t(one)
    return got


def _count(got: dict, quantifier, what: str) -> Outcome:
    """Per part, :func:`tally` with the quantifier's k of that part's decidable rows; the
    parts must all hold."""
    outs = []
    for name, rows in got.items():
        live = {r: res for r, res in rows.items() if res.verdict != NOT_TESTED}
        if not live:
            reasons = "; ".join(dict.fromkeys(res.outcome.note for res in rows.values())) or "no row to test"
            outs.append(untested(reasons))
            continue
        label = f"{name} {what}".strip()
        outs.append(tally(live, wording.needed(quantifier, len(live)), label))
    return all_hold(outs)


def _rows_text(got: dict) -> list:
    return [f"{name + ', ' if name else ''}{row}: {res.text}" for name, rows in got.items()
            for row, res in rows.items()]


def in_rows(parts, quantifier="every", what: str = "rows", rows=None):
    """A claim over rows of our runs ("in 9 of 11 cases": ``quantifier=9 / 11``; "most";
    "every"; see :func:`replicate.comparison.wording.needed`), each row decided by a test
    (``parts``: one test, or ``{name: test}`` parts that must each reach the count, e.g. one
    per metric) and the rows counted by :func:`tally`; ``rows(name)`` keeps some rows only."""
    parts = _parts(parts)
    wording.needed(quantifier, 1)

    def test(ev) -> Resolution:
        got = _per_row(parts, ev, rows)
        res = [r for part in got.values() for r in part.values()]
        if not res:
            return not_tested("our runs hold no row this claim is about")
        outcome = _count(got, quantifier, what)
        return Resolution(math.nan, math.nan, math.nan, "; ".join(dict.fromkeys(r.test for r in res if r.test)),
                          outcome.note if outcome.verdict == INCONCLUSIVE else "", outcome,
                          " | ".join(_rows_text(got)), {"rows": got})
    return test


def row_readings(parts, rows=None, what: str = "rows", **quantifiers):
    """A sentence over rows read with several quantifiers (``every_row="every",
    most_rows="most"``): each row decided once by ``parts`` (as :func:`in_rows`), each
    reading counted by :func:`tally`, the verdicts combined by
    :func:`replicate.claims.readings`. With one row every reading is the same test, and the
    verdict is that row's count."""
    parts = _parts(parts)
    if len(quantifiers) < 2:
        raise ValueError("row_readings needs at least two named quantifiers")
    for q in quantifiers.values():
        wording.needed(q, 1)

    def test(ev) -> Resolution:
        got = _per_row(parts, ev, rows)
        res = [r for part in got.values() for r in part.values()]
        if not res:
            return not_tested("our runs hold no row this claim is about")
        outs = {name: _count(got, q, what) for name, q in quantifiers.items()}
        n_rows = max(len(p) for p in got.values())
        outcome = next(iter(outs.values())) if n_rows == 1 else readings(**outs)
        return Resolution(math.nan, math.nan, math.nan, "; ".join(dict.fromkeys(r.test for r in res if r.test)),
                          outcome.note if outcome.verdict == INCONCLUSIVE else "", outcome,
                          " | ".join(_rows_text(got)), {"rows": got})
    return test


def detects(test, methods=None, n_boot: int = 200):
    """An OOD-detection claim's test, run only on models in the regime the claim speaks of:
    unless the 95 % bootstrap interval of every model's AUROC (of ``methods``, default all)
    lies below :data:`replicate.comparison.wording.DETECTS_AUROC` (they detect at or near
    chance), ``test`` decides; otherwise the claim is ``not tested``, with the AUROCs as the
    reason."""
    def run(ev) -> Resolution:
        ev = _one(ev)
        pool = [m for m in (ev.methods if methods is None else methods) if m in ev.methods]
        cells = ev.cells(False)
        pool = [m for m in pool if all(c.ood_probs is not None for (k, _), c in cells.items() if k == m)]
        if not pool:
            return not_tested(f"no run in {ev.name} recorded out-of-distribution logits")
        ivs = {m: ev.memo(("auroc", m, n_boot), lambda m=m: interval(cells, m, "auroc", n_boot=n_boot)) for m in pool}
        if any(iv["high"] >= wording.DETECTS_AUROC for iv in ivs.values()):
            return test(ev)
        lo, hi = min(iv["mean"] for iv in ivs.values()), max(iv["mean"] for iv in ivs.values())
        top = max(iv["high"] for iv in ivs.values())
        return not_tested(f"our models detect out-of-distribution inputs at or near chance: AUROC {lo:.1f}-{hi:.1f} % "
                          f"({len(ivs)} models, every 95 % interval below {wording.DETECTS_AUROC:g} %, the highest "
                          f"end {top:.1f} %); the claim is about models that detect them")
    return run
