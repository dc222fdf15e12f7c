"""A paper's experimental conclusions as rules on its tables, tested on any set of numbers.

A :class:`Claim` is a sentence, where the paper makes it, how the rule decides it, and a
rule that reads a summary frame (:func:`replicate.comparison.summarise` of our runs, or
:func:`replicate.comparison.paper_values` of the paper's own row) and returns the numbers
behind the verdict and an outcome: a boolean, an :class:`replicate.claims.Outcome` (e.g.
``untested(reason)``), or None when a number it needs is missing. Testing the same rule on
the paper's row tells a claim that fails on our runs apart from one that already fails on
the paper's own table. :func:`log_claims` writes the verdicts into a chapter's
:class:`replicate.claims.ClaimLog` (one row per claim and evidence), which the registry
collects.

On our runs a comparative claim must also respect the runs' noise: a claim with a
``noise`` test (:mod:`replicate.comparison.noise`: ``lower``, ``higher``, ``best``,
``near``, ``all_of``) is decided on the evidence labels whose runs are passed to
:func:`log_claims` (``runs``) by that test -- ``holds`` / ``fails`` only when the runs
resolve the difference, else ``inconclusive`` with the seeds or test examples that would
decide it -- and by its ``rule`` elsewhere (the paper's printed numbers carry no noise).

The rule helpers (:func:`present`, :func:`lowest`, :func:`below`, :func:`short`) are
shared by every paper's rules.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..claims import ClaimLog, as_outcome
from .methods import METHODS
from .evaluation import value


@dataclass(frozen=True)
class Claim:
    """A conclusion of a paper: ``rule(summary) -> (numbers, outcome)``; ``how`` says what
    the rule compares (shown in the claims table). ``noise`` (optional), a test of
    :mod:`replicate.comparison.noise` (``noise.lower("flsd53", "cross_entropy")``), decides
    the claim on our runs with their noise (:func:`log_claims` with ``runs``)."""

    text: str
    source: str
    rule: Callable[[pd.DataFrame], tuple]
    how: str = ""
    noise: Callable | None = None


def short(key: str) -> str:
    """The short label of a method key ("flsd53" -> "FLSD-53"); the key when unknown."""
    return METHODS[key].short if key in METHODS else key


def present(summ: pd.DataFrame, metric: str = "ece", scaled: bool = False, col: str = "mean",
            among=None) -> dict:
    """``{method: number}`` of the methods of ``summ`` (restricted to ``among``) that have
    ``metric`` (pre or post T, column ``col``)."""
    keys = dict.fromkeys(summ.method) if among is None else [k for k in among if k in set(summ.method)]
    return {m: v for m in keys if not math.isnan(v := value(summ, m, metric, scaled, col))}


def lowest(summ: pd.DataFrame, metric: str, scaled: bool = False, among=None) -> tuple[str | None, dict]:
    """The method with the lowest ``metric`` (ties: the first in order) and all values."""
    vals = present(summ, metric, scaled, among=among)
    return (min(vals, key=vals.get) if vals else None), vals


def below(summ: pd.DataFrame, a: str, b: str, metric: str, scaled: bool = False):
    """``(text, a < b)`` for two methods' ``metric``; ``(text, None)`` when either is missing."""
    va, vb = value(summ, a, metric, scaled), value(summ, b, metric, scaled)
    if math.isnan(va) or math.isnan(vb):
        return "–", None
    return f"{metric} {'post' if scaled else 'pre'} T: {short(a)} {va:.2f}, {short(b)} {vb:.2f}", va < vb


def verdicts(summaries: dict, claims) -> pd.DataFrame:
    """Each claim tested on each ``{label: summary}``, in long form: ``claim, source,
    evidence`` (the label), ``numbers``, ``verdict`` (of :data:`replicate.claims.VERDICTS`)
    and ``note``, grouped by claim."""
    if not isinstance(summaries, dict) or not summaries:
        raise ValueError("summaries must be a non-empty dict label -> summary frame")
    rows = []
    for claim in tuple(claims):
        for label, summ in summaries.items():
            numbers, outcome = claim.rule(summ)
            o = as_outcome(outcome)
            rows.append({"claim": claim.text, "source": claim.source, "evidence": label, "numbers": numbers,
                         "verdict": o.verdict, "note": o.note})
    return pd.DataFrame(rows, columns=["claim", "source", "evidence", "numbers", "verdict", "note"])


def log_claims(log: ClaimLog, claims, summaries: dict, missing: dict | None = None,
               runs: dict | None = None) -> ClaimLog:
    """Add one row per (claim, evidence) to ``log``: the rule's numbers as the result and its
    outcome as the verdict. ``missing`` maps an evidence label with no numbers (e.g. runs
    not in the store) to the reason: its rows are ``not tested`` with that reason.

    ``runs`` maps an evidence label of ``summaries`` to its runs, a
    :class:`replicate.comparison.noise.RunEvidence`, ``{row name: RunEvidence}`` (our runs
    of several table rows) or ``{(method, seed): Run}``: there a
    claim with a ``noise`` test is decided by that test (its interval and what would decide
    it are the result; the rule's numbers are kept after them); where the rule itself says
    ``not tested`` (a number it needs is missing, or the models are outside the claim's
    regime) that verdict stands and the test is not run; a "beyond the paper" statement stays
    one, with the test's verdict as its own check."""
    from ..claims import BEYOND_THE_PAPER, beyond, untested
    from .noise import RunEvidence

    evidence = {}
    for label, ev in (runs or {}).items():
        if label not in summaries:
            raise ValueError(f"runs names evidence {label!r} that is not in summaries: {', '.join(summaries)}")
        rows = isinstance(ev, dict) and ev and all(isinstance(v, RunEvidence) for v in ev.values())
        evidence[label] = RunEvidence(ev) if isinstance(ev, dict) and not rows else ev
    for claim in tuple(claims):
        for label, summ in summaries.items():
            numbers, outcome = claim.rule(summ)
            o, how = as_outcome(outcome), claim.how or "rule on the tables"
            if claim.noise is not None and label in evidence and o.verdict != "not tested":
                res = claim.noise(evidence[label])
                extra = o.verdict == BEYOND_THE_PAPER and res.verdict != "not tested"
                o, numbers = (beyond(res.outcome) if extra else res.outcome), f"{res.text}; {numbers}"
                how = f"{how}; decided within the runs' noise ({res.test or 'see the note'})"
            log.add(claim.text, claim.source, how, numbers, o, evidence=label)
        for label, reason in (missing or {}).items():
            log.add(claim.text, claim.source, claim.how or "rule on the tables", "–", untested(reason),
                    evidence=label)
    return log
