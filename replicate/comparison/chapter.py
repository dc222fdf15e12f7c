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
(every chapter's claims table is built by it), :func:`noise_rule` and :func:`verdict_counts`,
the one glue-key convention of the verdict prose: ``n_claims_<side>``, ``n_<verdict>_<side>``
(spaces as underscores: ``n_not_tested_ours``), ``n_holds_any_<side>``, ``tally_<side>`` (the
counts as one clause whose verbs agree with them, :func:`replicate.claims.tallies.tally_text`),
``claim<i>_<side>``, ``evidence_split`` and ``noise_rule`` (the counting is
:func:`replicate.claims.tallies.verdict_counts`; the rule, which reads this package's noise
thresholds, is added here).
"""
from __future__ import annotations

from collections.abc import Mapping

from ..claims import ClaimLog
from ..claims.tallies import verdict_counts as _verdict_counts
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


def verdict_counts(frame, sides: Mapping[str, str], per_claim: bool = False) -> dict[str, str]:
    """The numbers of a chapter's verdict prose, as glue texts
    (:func:`replicate.claims.tallies.verdict_counts`: ``n_claims_<side>``, ``n_<verdict>_<side>``,
    ``n_holds_any_<side>``, ``tally_<side>``, with ``per_claim`` ``claim<i>_<side>``, and
    ``evidence_split``), with ``noise_rule``, the rule that decides a comparison on our runs
    (:func:`noise_rule`): the two sentences every verdict section quotes."""
    return _verdict_counts(frame, sides, per_claim, rule_text=noise_rule())
