"""The chapter contract: what every experiment chapter provides, and the pieces they share.

An experiment chapter is one folder, ``replicate/experiments/<chapter>/``, named as its
notebook ``exp_<chapter>`` (and as the paper's chapter in :data:`replicate.papers.PAPERS`),
with one module per role, each role one name everywhere:

``plan``
    ``PAPER`` (the paper key), ``CHAPTER`` (the notebook), ``SECTION`` (the heading that
    decides the claims), ``METHOD_KEYS``, ``SMOKE_METHODS``, ``default_methods(profile)``
    and ``plan(**parameters) -> Plan`` with exactly the chapter's parameters cell (so
    ``replicate sweep`` and ``replicate book`` plan a chapter without executing it).
``evidence``
    the numbers the claims are decided on, ours and the paper's, in one shape per side.
``rules``
    the rule functions: each reads one side's evidence and returns ``(numbers, outcome)``.
``claims``
    ``rules()`` (each sentence of the paper, where it is made, its rule),
    ``evidence(p, runs, **options) -> (summaries, missing)``,
    ``claims_log(p, runs, **options) -> ClaimLog`` (the chapter calls it on the runs it has)
    and ``claims(profile)``, the builder the claims registry finds by the folder's name
    (it reads the runs from the store and never trains).
``views``
    what the chapter shows: tables with their captions, and the texts glued into its prose.
``figures``
    the chapter's figures, drawn from runs or evidence (they compute nothing a rule reads).

A chapter may split a role (``figure_rules``, ``appendix_rules``, ``terms``, ``noise_rules``
(the comparative claims decided on our runs within their noise, :mod:`replicate.comparison.noise`);
``links`` in
FTS) but never renames one. The notebook reaches them through one alias,
``ch = rp.experiments.<chapter>``: ``ch.plan.plan(...)``, ``ch.claims.claims_log(plan,
runs)``, ``ch.views``, ``ch.figures``.

Shared here: :data:`SECTION`, :func:`at_profile` (a default that depends on the profile),
:func:`not_in_store` (the reason a claim on our runs is not tested), :func:`chapter_log`
(every chapter's claims table is built by it) and :func:`verdict_counts`, the one glue-key
convention of the verdict prose: ``n_claims_<side>``, ``n_<verdict>_<side>`` (spaces as
underscores: ``n_not_tested_ours``), ``n_holds_any_<side>``, ``tally_<side>`` (the counts as
one clause whose verbs agree with them, :func:`tally_text`) and ``claim<i>_<side>``.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..claims import (BEYOND_THE_PAPER, DEPENDS_ON_READING, FAILS, HOLDS, HOLDS_WITH_CONDITIONS, INCONCLUSIVE,
                      MISPRINTED, NOT_TESTED, VERDICTS, ClaimLog)
from .verdicts import log_claims

#: The heading of an experiment chapter that decides its claims (the ledger links to it).
SECTION = "Verdict"


def at_profile(profile: str, smoke, default):
    """``smoke`` at the ``smoke`` profile, else ``default`` (a chapter's methods, seeds, ...)."""
    from ..profiles import get_profile

    return smoke if get_profile(profile).name == "smoke" else default


def not_in_store(profile: str) -> str:
    """Why a claim on our runs is not tested when the chapter's runs are missing."""
    return f"the chapter's {profile} runs are not in the run store (execute the chapter at that profile)"


def chapter_log(paper: str, chapter: str, claims, summaries: dict, missing: dict | None = None,
                section: str = SECTION, runs: dict | None = None) -> ClaimLog:
    """A chapter's claims table: every claim of ``claims`` (its ``rules()``) decided on each
    side of ``summaries`` (``{evidence label: evidence}``), and "not tested" with the reason
    for each label of ``missing``. ``runs`` (``{evidence label: RunEvidence or {row:
    RunEvidence}}``) are our runs behind a label: there a claim with a noise test is decided
    within the runs' noise (:func:`replicate.comparison.verdicts.log_claims`)."""
    return log_claims(ClaimLog(paper, chapter, kind="experiment", section=section), claims, summaries, missing,
                      runs)


def noise_rule() -> str:
    """The rule every chapter applies to its comparative claims on our runs, in words, with
    its thresholds (:mod:`replicate.comparison.noise`, :mod:`replicate.comparison.wording`)."""
    from . import noise, wording

    return (f"a comparison holds only when its {100 * (1 - noise.ALPHA):g} % interval lies wholly on the claimed "
            f"side (the paired t-test over the seeds with {noise.MIN_SEEDS} or more, else a paired bootstrap over "
            f"the test examples; bootstrap rank intervals for \"the lowest\"), fails when it lies wholly on the "
            f"contrary side, and is inconclusive otherwise, the row saying how many seeds or test examples would "
            f"decide it; a claim over k of N rows (\"most\": more than half; \"almost all\": "
            f"{wording.ALMOST_ALL:.0%}) holds once k rows hold and fails once more than N − k fail; an optimal "
            f"temperature close to 1 means {wording.near_one_text()}, one that is 1 means {wording.is_one_text()}; "
            f"an out-of-distribution claim is not tested on models whose AUROC interval stays below "
            f"{wording.DETECTS_AUROC:g} % (they detect at or near chance)")


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


def verdict_counts(frame, sides: Mapping[str, str], per_claim: bool = False) -> dict[str, str]:
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
    profile), and ``noise_rule``, the rule that decides a comparison on our runs
    (:func:`noise_rule`)."""
    from ..claims.ledger import split_summary

    out = {"evidence_split": split_summary(frame), "noise_rule": noise_rule()}
    for who, prefix in sides.items():
        part = frame[frame.evidence.str.startswith(prefix)]
        out[f"n_claims_{who}"] = str(len(part))
        for verdict in VERDICTS:
            out[f"n_{verdict.replace(' ', '_')}_{who}"] = str(int((part.verdict == verdict).sum()))
        out[f"n_holds_any_{who}"] = str(int(part.verdict.str.startswith("holds").sum()))
        out[f"tally_{who}"] = tally_text(part.verdict)
        if per_claim:
            out.update({f"claim{i}_{who}": check for i, check in enumerate(part.check, 1)})
    return out
