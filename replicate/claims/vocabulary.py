"""The verdict vocabulary of the book: one set of words for every claim, theory or experiment.

A verdict is never typed: it is computed from the outcome of a check by one of the
constructors below, each of which returns an :class:`Outcome` (the verdict and the words
that qualify it). The vocabulary:

``holds``
    the check confirms the statement as the paper words it;
``holds with conditions``
    it holds only under a condition the paper does not state (the condition is given,
    e.g. a range of gamma);
``fails``
    the check contradicts the statement (the counterexample or the measured violation is
    given); on our runs, only when the runs resolve the contrary of the claim (the
    difference is outside their noise);
``inconclusive``
    evidence from our runs whose difference is within the runs' noise: the runs cannot
    tell whether the claim holds (what would decide it is given: the seeds or the test
    examples needed);
``misprinted``
    the printed formula fails, and a corrected formula, stated beside it, is checked and
    holds (a corrected formula that also fails makes the verdict ``fails``);
``depends on reading``
    the statement admits two (or more) readings whose verdicts differ; each reading is
    checked and its own verdict given;
``beyond the paper``
    a statement the book adds and the paper does not make (its own check result is
    given); never counted for or against the paper;
``not tested``
    the check could not be run (the reason is given), e.g. runs or data are missing, or
    the models are not in the regime the claim is about.
"""
from __future__ import annotations

from dataclasses import dataclass

HOLDS = "holds"
HOLDS_WITH_CONDITIONS = "holds with conditions"
FAILS = "fails"
MISPRINTED = "misprinted"
DEPENDS_ON_READING = "depends on reading"
INCONCLUSIVE = "inconclusive"
BEYOND_THE_PAPER = "beyond the paper"
NOT_TESTED = "not tested"

#: Every verdict, in the order tables count them.
VERDICTS = (HOLDS, HOLDS_WITH_CONDITIONS, MISPRINTED, DEPENDS_ON_READING, FAILS, INCONCLUSIVE, BEYOND_THE_PAPER,
            NOT_TESTED)

#: One sentence per verdict (the book's page on verdicts shows them).
MEANINGS = {
    HOLDS: "the check confirms the statement as the paper words it",
    HOLDS_WITH_CONDITIONS: "it holds only under a condition the paper does not state; the condition is given",
    MISPRINTED: "the printed formula fails; a corrected formula, stated beside it, is checked and holds",
    DEPENDS_ON_READING: "the wording admits readings whose verdicts differ; each reading's verdict is given",
    FAILS: "the check contradicts the statement; the counterexample or measured violation is given (on our runs: "
           "the runs resolve the contrary, beyond their noise)",
    INCONCLUSIVE: "our runs cannot tell: the difference the claim is about is within the runs' noise (across "
                  "seeds, or over resampled test examples with one seed); what would decide it is given",
    BEYOND_THE_PAPER: "a statement the book adds, not the paper's; its own result is given, never counted "
                      "for or against the paper",
    NOT_TESTED: "the check could not be run here; the reason is given",
}


@dataclass(frozen=True)
class Outcome:
    """A verdict of :data:`VERDICTS` and ``note``: the condition, the corrected formula,
    each reading's verdict or the reason a claim was not tested (empty for plain
    holds/fails). ``check`` is the raw result of a ``beyond the paper`` statement's own
    check (``holds``/``fails``), else equal to the verdict."""

    verdict: str
    note: str = ""
    check: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}; got {self.verdict!r}")
        if not self.check:
            object.__setattr__(self, "check", self.verdict)

    def __str__(self) -> str:
        return self.verdict + (f" ({self.note})" if self.note else "")


def _truth(ok, name: str = "ok") -> bool:
    """``bool(ok)`` for booleans and numpy booleans; refuses None and other types so that a
    missing result is never read as a verdict."""
    if ok is None or not hasattr(ok, "__bool__") or isinstance(ok, (str, bytes)):
        raise ValueError(f"{name} must be a boolean (the result of a check); got {ok!r}")
    return bool(ok)


def check(ok) -> Outcome:
    """``holds`` when the check ``ok`` is true, else ``fails``."""
    return Outcome(HOLDS if _truth(ok) else FAILS)


def conditional(ok: bool, ok_under_condition: bool, condition: str) -> Outcome:
    """``holds`` when the statement holds as worded; ``holds with conditions`` when it
    fails as worded but holds under ``condition`` (say which: "for gamma >= 1"); else
    ``fails``."""
    if not isinstance(condition, str) or not condition.strip():
        raise ValueError("condition must be a non-empty description of where the statement holds")
    if _truth(ok):
        return Outcome(HOLDS)
    if _truth(ok_under_condition, "ok_under_condition"):
        return Outcome(HOLDS_WITH_CONDITIONS, condition)
    return Outcome(FAILS, f"also fails {condition}")


def corrected(printed_ok: bool, corrected_ok: bool, correction: str) -> Outcome:
    """``misprinted`` only when the printed formula fails and the ``correction`` (the
    corrected formula, as stated in the chapter) was checked and holds; ``holds`` when the
    printed formula holds; ``fails`` when both fail."""
    if not isinstance(correction, str) or not correction.strip():
        raise ValueError("correction must state the corrected formula that was checked")
    if _truth(printed_ok, "printed_ok"):
        return Outcome(HOLDS)
    if _truth(corrected_ok, "corrected_ok"):
        return Outcome(MISPRINTED, f"corrected: {correction}")
    return Outcome(FAILS, f"the correction {correction} fails too")


def readings(**outcomes) -> Outcome:
    """One verdict for a statement read several ways: ``readings(with_ties=False,
    tie_free=True)`` (booleans or :class:`Outcome`). When every reading gets the same
    verdict that is the verdict; otherwise ``depends on reading`` with each reading's."""
    if len(outcomes) < 2:
        raise ValueError("readings needs at least two named readings")
    got = {name.replace("_", " "): (o if isinstance(o, Outcome) else check(o)) for name, o in outcomes.items()}
    verdicts = {o.verdict for o in got.values()}
    note = "; ".join(f"{name}: {o}" for name, o in got.items())
    if len(verdicts) == 1:
        return Outcome(verdicts.pop(), note)
    return Outcome(DEPENDS_ON_READING, note)


def beyond(ok) -> Outcome:
    """A statement the book adds: verdict ``beyond the paper``, its own check in ``check``."""
    o = ok if isinstance(ok, Outcome) else check(ok)
    return Outcome(BEYOND_THE_PAPER, o.note, check=o.verdict)


def inconclusive(needs: str) -> Outcome:
    """``inconclusive``: the runs cannot tell; ``needs`` says what would decide it (e.g.
    "~145 seeds to resolve a difference this size")."""
    if not isinstance(needs, str) or not needs.strip():
        raise ValueError("needs must say what would decide the claim (seeds or test examples needed)")
    return Outcome(INCONCLUSIVE, needs)


def untested(reason: str) -> Outcome:
    """``not tested``, with the reason."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("reason must say why the claim could not be tested")
    return Outcome(NOT_TESTED, reason)


def as_outcome(value) -> Outcome:
    """An :class:`Outcome` from an Outcome, a boolean (:func:`check`) or None (not tested)."""
    if isinstance(value, Outcome):
        return value
    if value is None:
        return untested("a result the rule needs is missing")
    return check(value)


def counts(verdicts) -> dict:
    """``{verdict: count}`` over :data:`VERDICTS`, in that order (zeros kept)."""
    verdicts = list(verdicts)
    unknown = sorted(set(verdicts) - set(VERDICTS))
    if unknown:
        raise ValueError(f"unknown verdict(s) {unknown}; allowed: {', '.join(VERDICTS)}")
    return {v: verdicts.count(v) for v in VERDICTS}
