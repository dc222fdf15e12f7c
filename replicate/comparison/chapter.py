"""The chapter contract: what every experiment chapter provides, and the pieces they share.

An experiment chapter is one folder, ``replicate/experiments/<chapter>/``, named as its
notebook ``exp_<chapter>`` (and as the paper's chapter in :data:`replicate.papers.PAPERS`),
with five modules, one per role, each role one name everywhere:

``plan``
    ``PAPER`` (the paper key), ``CHAPTER`` (the notebook), ``SECTION`` (the heading that
    decides the claims), ``METHOD_KEYS``, ``SMOKE_METHODS``, ``default_methods(profile)``
    and ``plan(**parameters) -> Plan`` with exactly the chapter's parameters cell (so
    ``replicate sweep`` and ``replicate book`` plan a chapter without executing it).
``claims``
    ``definitions(...)``: the paper's claims, each a :class:`replicate.claims.claim.Claim`
    with its one test of :mod:`replicate.claims.tests` and the rows it covers.
``report``
    ``report(plan, runs)``: the chapter's :class:`replicate.comparison.report.Report`, whose
    sections (the evaluation, the tables, the claims on both sides, ...) are computed once
    and kept on disk; ``decide(plan, runs)`` (the claims on the paper's printed tables and on
    our runs) and ``claims(profile)``, the builder the claims registry finds by the folder's
    name (it reads the runs from the store and never trains).
``views``
    what the chapter shows: tables with their captions, and the texts glued into its prose.
``figures``
    the chapter's figures, drawn from runs or the report (they decide nothing).

The notebook reaches them through one alias, ``ch = rp.experiments.<chapter>``:
``ch.plan.plan(...)``, ``ch.report.report(plan, runs)``, ``ch.views``, ``ch.figures``; its
verdict prose reads :func:`replicate.claims.verdict_counts` with the noise model's rule
(:func:`replicate.comparison.noise.rule_text`).

Shared here: :data:`SECTION`, :func:`at_profile` (a default that depends on the profile) and
:func:`not_in_store` (the reason a claim on our runs is not tested).
"""
from __future__ import annotations

#: The heading of an experiment chapter that decides its claims (the ledger links to it).
SECTION = "Verdict"


def at_profile(profile: str, smoke, default):
    """``smoke`` at the ``smoke`` profile, else ``default`` (a chapter's methods, seeds, ...)."""
    from ..profiles import get_profile

    return smoke if get_profile(profile).name == "smoke" else default


def not_in_store(profile: str) -> str:
    """Why a claim on our runs is not tested when the chapter's runs are missing."""
    return f"the chapter's {profile} runs are not in the run store (execute the chapter at that profile)"
