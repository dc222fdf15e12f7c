"""The verdicts of a claims table counted for prose: every chapter's verdict sections quote
them through glue keys of one convention.

- :func:`tally_text` -- verdicts as one clause whose verbs agree with the counts
  (``"1 holds, 3 fail and 2 cannot be tested"``);
- :func:`verdict_counts` -- the glue texts of a claims frame, per side of the evidence:
  ``n_claims_<side>``, ``n_<verdict>_<side>`` (spaces as underscores:
  ``n_not_tested_ours``), ``n_holds_any_<side>``, ``tally_<side>``, ``claim<i>_<side>``, and
  ``evidence_split`` (and ``noise_rule``, the rule text a caller passes).
"""
from __future__ import annotations

from collections.abc import Mapping

from .vocabulary import (BEYOND_THE_PAPER, DEPENDS_ON_READING, FAILS, HOLDS, HOLDS_WITH_CONDITIONS, INCONCLUSIVE,
                         MISPRINTED, NOT_TESTED, VERDICTS)

__all__ = ["tally_text", "verdict_counts"]


#: verdict -> (verb phrase for one claim, for several); every verdict of VERDICTS has one
_PHRASES = {
    HOLDS: ("holds", "hold"),
    HOLDS_WITH_CONDITIONS: ("holds only with a condition", "hold only with a condition"),
    MISPRINTED: ("rests on a misprinted number", "rest on misprinted numbers"),
    DEPENDS_ON_READING: ("depends on how the sentence is read", "depend on how the sentence is read"),
    FAILS: ("fails", "fail"),
    INCONCLUSIVE: ("is inconclusive", "are inconclusive"),
    BEYOND_THE_PAPER: ("goes beyond the paper", "go beyond the paper"),
    NOT_TESTED: ("cannot be tested", "cannot be tested"),
}
#: verdicts a tally names even when none has them
_ALWAYS = (HOLDS, FAILS)


def tally_text(verdicts) -> str:
    """The verdicts ``verdicts`` (an iterable of :data:`replicate.claims.VERDICTS` values) as
    one clause with agreeing verbs, in the vocabulary's order: ``"1 holds, 3 fail, 1 is
    inconclusive and 2 cannot be tested"``. Holds and fails are always named (``"0 fail"``),
    the other verdicts only when some claim has them.

    >>> tally_text(["holds", "fails", "fails", "inconclusive"])
    '1 holds, 2 fail and 1 is inconclusive'
    """
    verdicts = list(verdicts)
    unknown = sorted(set(verdicts) - set(VERDICTS))
    if unknown:
        raise ValueError(f"verdicts must be among {', '.join(VERDICTS)}; got {', '.join(map(repr, unknown))}")
    parts = []
    for verdict in VERDICTS:
        n = verdicts.count(verdict)
        if n or verdict in _ALWAYS:
            parts.append(f"{n} {_PHRASES[verdict][0 if n == 1 else 1]}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def verdict_counts(frame, sides: Mapping[str, str], per_claim: bool = False, rule_text: str = "") -> dict[str, str]:
    """The numbers of a chapter's verdict prose, as glue texts, from its claims frame
    (:meth:`replicate.claims.ClaimLog.frame`). A side ``who`` is the rows whose evidence
    label starts with ``sides[who]`` (e.g. ``{"ours": "ours", "paper": "paper"}``):
    ``n_claims_<who>`` (its rows), ``n_<verdict>_<who>`` for every verdict of
    :data:`replicate.claims.VERDICTS` (``n_holds_ours``, ``n_not_tested_paper``),
    ``n_holds_any_<who>`` (holds, with or without conditions), ``tally_<who>`` (the side's
    verdicts as one clause, :func:`tally_text`) and, with ``per_claim``,
    ``claim<i>_<who>``: the check of the side's i-th row (1-based, in the rules' order; a
    "beyond the paper" row gives its own check). Two sentences every verdict section
    quotes: ``evidence_split``, the verdicts split by what they rest on
    (:func:`replicate.claims.ledger.split_summary`: the paper's tables, our runs at each
    profile), and, when ``rule_text`` is given, ``noise_rule``: that text, the rule that
    decides a comparison on our runs (the chapters pass :func:`replicate.comparison.noise.rule_text`).
    Where a side's rows rest on our runs at several profiles (a chapter showing its image rows
    at ``gpu`` and its text rows at ``cpu``: one row per claim and profile), ``n_claims_<who>``
    counts claims, ``tally_<who>`` tallies each profile ("at gpu: ...; at cpu: ...") and
    ``claim<i>_<who>`` quotes the claim's checks with their profiles."""
    from .ledger import split_summary

    out = {"evidence_split": split_summary(frame)}
    if rule_text:
        out["noise_rule"] = rule_text
    for who, prefix in sides.items():
        part = frame[frame.evidence.str.startswith(prefix)]
        for verdict in VERDICTS:
            out[f"n_{verdict.replace(' ', '_')}_{who}"] = str(int((part.verdict == verdict).sum()))
        out[f"n_holds_any_{who}"] = str(int(part.verdict.str.startswith("holds").sum()))
        profiles = part.evidence.str.extract(r"\bours: (\w+)", expand=False)
        kinds = list(dict.fromkeys(profiles.dropna()))
        if len(kinds) < 2:
            out[f"n_claims_{who}"] = str(len(part))
            out[f"tally_{who}"] = tally_text(part.verdict)
            if per_claim:
                out.update({f"claim{i}_{who}": check for i, check in enumerate(part.check, 1)})
            continue
        # our runs at several profiles (image rows at gpu, text rows at cpu): each claim has
        # one row per profile, quoted together, each with its profile
        out[f"n_claims_{who}"] = str(part.claim.nunique())
        out[f"tally_{who}"] = "; ".join(f"at {k}: {tally_text(part.verdict[profiles == k])}" for k in kinds)
        if per_claim:
            for i, (_, rows) in enumerate(part.assign(_p=profiles).groupby("claim", sort=False), 1):
                out[f"claim{i}_{who}"] = "; ".join(f"{c} (at {k})" for c, k in zip(rows.check, rows._p))
    return out
