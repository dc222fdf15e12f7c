"""A claim's noise test, built from the comparisons and read on a :class:`RunEvidence` (one
row of our runs) or on ``{row: RunEvidence}`` (several rows):

- one comparison: :func:`lower`, :func:`higher`, :func:`best` (best of N, by rank
  intervals), :func:`near` (an optimal temperature in a range), :func:`t_higher`;
- parts that must all hold: :func:`all_of`;
- over rows: :func:`in_rows` ("in k of N rows", "most", "every", counted by
  :func:`tally`) and :func:`row_readings` (a sentence read with two quantifiers);
- the regime an OOD-detection claim speaks of: :func:`detects`.

Every test returns a :class:`Resolution`; a test that cannot run on the runs it is given (a
method without runs, models outside the claim's regime) returns one whose outcome is
``not tested`` with the reason. Results are remembered on the evidence
(:meth:`RunEvidence.memo`), so claims that share a comparison compute it once.
"""
from __future__ import annotations

import math

from ...claims import INCONCLUSIVE, NOT_TESTED, Outcome, readings, untested
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


def _pair(a, b, metric, scaled, claimed, kw):
    def test(ev) -> Resolution:
        ev = _one(ev)
        return _absent(ev, a, b) or ev.memo(("compare", a, b, metric, bool(scaled), claimed, _key(kw)),
                                            lambda: compare(ev.cells(scaled, metric), a, b, metric, claimed, **kw))
    return test


def best(method: str, among=None, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``method`` is the best of ``among`` (default every method of the
    runs; methods without runs are left out) by ``metric`` (:func:`best_of`)."""
    def test(ev) -> Resolution:
        ev = _one(ev)
        if (gone := _absent(ev, method)):
            return gone
        pool = [m for m in (ev.methods if among is None else dict.fromkeys(among)) if m in ev.methods]
        if len(pool) < 2:
            return not_tested(f"no other method of the claim has runs in {ev.name}")
        return ev.memo(("best", method, tuple(pool), metric, bool(scaled), _key(kw)),
                       lambda: best_of(ev.cells(scaled, metric), method, metric, pool, **kw))
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
                                                what=f"T of {method}", **kw))
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
        few = len(ta) < kw.get("min_seeds", MIN_SEEDS)
        if few and metric != "ece":
            raise ValueError(f"metric must be 'ece' with fewer than {MIN_SEEDS} seeds (the bootstrap chooses T "
                             f"again by validation ECE); got {metric!r}")
        return ev.memo(("t_higher", a, b, metric, _key(kw)),
                       lambda: temperature_compare(ta, tb, "higher", ev.val(a) if few else None,
                                                   ev.val(b) if few else None, what=f"T({a}) − T({b})", **kw))
    return test


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
    at least one model of ``methods`` (default all) whose AUROC's 95 % bootstrap interval
    lies above chance (:data:`replicate.comparison.wording.CHANCE_AUROC`). Otherwise the
    claim is ``not tested``, with every model's AUROC interval as the reason."""
    def run(ev) -> Resolution:
        ev = _one(ev)
        pool = [m for m in (ev.methods if methods is None else methods) if m in ev.methods]
        cells = ev.cells(False)
        pool = [m for m in pool if all(c.ood_probs is not None for (k, _), c in cells.items() if k == m)]
        if not pool:
            return not_tested(f"no run in {ev.name} recorded out-of-distribution logits")
        ivs = {m: ev.memo(("auroc", m, n_boot), lambda m=m: interval(cells, m, "auroc", n_boot=n_boot)) for m in pool}
        if any(iv["low"] > wording.CHANCE_AUROC for iv in ivs.values()):
            return test(ev)
        lo, hi = min(iv["mean"] for iv in ivs.values()), max(iv["mean"] for iv in ivs.values())
        return not_tested(f"our models detect out-of-distribution inputs no better than chance: AUROC "
                          f"{lo:.1f}-{hi:.1f} %, no 95 % interval above {wording.CHANCE_AUROC:g} % "
                          f"({len(ivs)} models); the claim is about models that detect them")
    return run
