"""An experimental claim: the paper's sentence, where it is made, its one test and the rows
it covers; decided on every side of a chapter by the same test (:func:`claims_log`).

    Claim("FLSD-53 has a lower test ECE than cross-entropy", "Sec. 6, Table 1",
          Difference(Cell("flsd53"), Cell("cross_entropy"), "<"), Over("every"))

:class:`Over` is which rows of a side the claim covers (every row, or those of some data
sets) and how many of them must hold ("every", "most", "9 of 11": a share), counted by
:func:`replicate.claims.decide.tally`; it may read the sentence with several quantifiers
(``readings``). It is stated the same way in every chapter, and its words end the row's
``how`` text, which the test writes from its parameters (:meth:`Claim.how`).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import wording
from .decide import Resolution, joined, not_tested, tally
from .evidence import Evidence, Missing, Names, Row
from .log import ClaimLog
from .tests import Test
from .vocabulary import (BEYOND_THE_PAPER, FAILS, HOLDS, HOLDS_WITH_CONDITIONS, INCONCLUSIVE, NOT_TESTED, Outcome,
                         beyond, readings)


@dataclass(frozen=True)
class Over:
    """The rows of a side a claim covers and how many must hold: ``quantifier`` (``"every"``,
    ``"most"``, ``"almost all"``, ``"any"`` or a share such as ``9 / 11``); the rows of the
    data sets ``datasets`` and networks ``models`` only (empty: every row); ``readings``
    (``(("every row", "every"), ("most rows", "most"))``) reads the sentence with several
    quantifiers; ``conditional`` (a quantifier) makes a claim that fails its quantifier but
    holds in that many rows "holds with conditions", the rows where it holds named."""

    quantifier: object = "every"
    datasets: tuple = ()
    readings: tuple = ()
    models: tuple = ()
    conditional: object = None

    def __post_init__(self):
        wording.needed(self.quantifier, 1)
        for name, q in self.readings:
            wording.needed(q, 1)
        for name in ("datasets", "models"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a tuple of keys, not a string")
        if len(self.readings) == 1:
            raise ValueError("readings needs at least two (name, quantifier) pairs")
        if self.conditional is not None:
            wording.needed(self.conditional, 1)
            if self.readings:
                raise ValueError("conditional and readings are two answers to one question: give one of them")

    def select(self, rows) -> list[Row]:
        return [r for r in rows if (not self.datasets or r.dataset in self.datasets)
                and (not self.models or r.model in self.models)]

    def how(self) -> str:
        where = (f" of {', '.join(self.datasets)}" if self.datasets else "") + \
            (f" with {', '.join(self.models)}" if self.models else "")
        if self.readings:
            return "; ".join(f"read as {name}: in {wording.quantifier_text(q, 'rows' + where)}"
                             for name, q in self.readings)
        text = f"in {wording.quantifier_text(self.quantifier, 'rows' + where)}"
        if self.conditional is not None:
            text += f" (holds with conditions in {wording.quantifier_text(self.conditional, 'rows' + where)})"
        return text


def _row_text(row: str, r: Resolution, several: bool) -> str:
    return f"{row}: {r.text}" if several else r.text


def decide_over(test: Test, ev: Evidence, over: Over) -> Resolution:
    """``test`` on every row of ``ev`` that ``over`` selects, the rows counted by
    :func:`tally` with the claim's quantifier (each reading's, with ``readings``)."""
    rows = over.select(ev.rows())
    if not rows:
        where = (f" of {', '.join(over.datasets)}" if over.datasets else "") + \
            (f" with {', '.join(over.models)}" if over.models else "")
        return not_tested(f"this side has no row{where}")
    got = {r.name: test(ev, r.name) for r in rows}
    live = {n: r for n, r in got.items() if r.verdict != NOT_TESTED}
    if not live:
        notes = list(dict.fromkeys(r.outcome.note for r in got.values()))
        res = next(iter(got.values()))
        return Resolution(res.outcome if len(notes) == 1 else not_tested("; ".join(notes)).outcome, text="–",
                          noise="–", used=tuple(u for r in got.values() for u in r.used))
    several = len(got) > 1
    if over.readings:
        outcome = readings(**{name.replace(" ", "_"): tally(live, wording.needed(q, len(live)))
                              for name, q in over.readings}) if len(live) > 1 else next(iter(live.values())).outcome
    else:
        outcome = tally(live, wording.needed(over.quantifier, len(live)))
        if over.conditional is not None and outcome.verdict == FAILS and \
                tally(live, wording.needed(over.conditional, len(live))).verdict == HOLDS:
            held = [n for n, r in live.items() if r.verdict == HOLDS]
            outcome = Outcome(HOLDS_WITH_CONDITIONS, f"only in {len(held)} of {len(live)} rows: {'; '.join(held)}")
    if len(live) == 1 and not several:
        return next(iter(live.values()))
    res = joined(list(got.values()), outcome)
    skipped = [n for n, r in got.items() if r.verdict == NOT_TESTED]
    text = " | ".join(_row_text(n, r, several) for n, r in got.items() if r.verdict != NOT_TESTED)
    if skipped:
        text += f" | not tested: {'; '.join(skipped)}"
    return Resolution(outcome, text=text, noise=res.noise, needs=outcome.note if outcome.verdict == INCONCLUSIVE
                      else "", used=res.used, parts=res.parts)


@dataclass(frozen=True)
class Claim:
    """A claim of a paper: ``text`` (its sentence), ``where`` (section, table), its
    ``test`` and the rows it covers (``over``). ``beyond`` marks a statement the book adds
    (never counted for or against the paper); ``section`` overrides the chapter's heading
    that decides it."""

    text: str
    where: str
    test: Test
    over: Over = Over()
    beyond: bool = False
    section: str | None = None

    def __post_init__(self):
        for name in ("text", "where"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string")
        if not isinstance(self.test, Test):
            raise ValueError(f"test must be a claim test of replicate.claims.tests; got {self.test!r}")

    def how(self, names: Names, side: str = "") -> str:
        """What the test compares, over which rows, and on what interval (generated)."""
        tail = {"ours": "; decided on the 95 % interval of the noise model (seeds, then the test or validation "
                        "examples the quantity is measured on)",
                "paper": "; decided on the printed numbers"}.get(side, "")
        return f"{self.test.how(names)}; {self.over.how()}{tail}"

    def decide(self, ev: Evidence) -> Resolution:
        res = decide_over(self.test, ev, self.over)
        if self.beyond and res.verdict != NOT_TESTED:
            return Resolution(beyond(res.outcome), res.estimate, res.low, res.high, res.text, res.noise, res.needs,
                              res.used, res.parts)
        return res


def claims_log(paper: str, chapter: str, claims, sides, section: str, names: Names | None = None,
               kind: str = "experiment") -> ClaimLog:
    """A chapter's claims table: every claim of ``claims`` decided on every side of
    ``sides`` (:class:`Evidence` or :class:`Missing`) by its own test, one row per claim
    and side, with the side's evidence label (the rows and seeds the test used) and how the
    noise was handled."""
    log = ClaimLog(paper, chapter, kind=kind, section=section)
    names = names or Names()
    for claim in claims:
        if not isinstance(claim, Claim):
            raise ValueError(f"claims must be Claim objects; got {claim!r}")
        for ev in sides:
            if isinstance(ev, Missing):
                log.add(claim.text, claim.where, claim.how(names, ev.side), "–", not_tested(ev.reason).outcome,
                        evidence=ev.label(), section=claim.section, noise="–")
                continue
            res = claim.decide(ev)
            log.add(claim.text, claim.where, claim.how(names, ev.side), res.text, res.outcome,
                    evidence=ev.label(res.used), section=claim.section, noise=res.noise)
    return log


__all__ = ["Claim", "Over", "claims_log", "decide_over", "BEYOND_THE_PAPER"]
