"""The claims table of Liang et al. (Focal Calibration Loss), ``exp_fcl``: the rules of
:mod:`.fcl_rules` (figure claims from :mod:`.fcl_figure_rules`) on the numbers of
:mod:`.fcl_evidence` - the paper's printed tables and our runs.

The top of the chapter's modules: it imports the chapter (:mod:`.fcl`), its evidence and its
rules; none of them imports it.
"""
from __future__ import annotations

from .. import comparison as cmp
from ..claims import ClaimLog
from . import fcl_evidence as ev
from .fcl import CHAPTER, PAPER, SECTION, plan, toy_study
from .fcl_rules import rules


def evidence(p: cmp.Plan, runs: dict, toy=None) -> dict:
    """The numbers the claims are tested on: ``{label: Evidence}`` for the paper's printed
    tables and our runs (:mod:`.fcl_evidence`)."""
    ours = ev.our_evidence(p, runs, toy)
    return {ev.PAPER_LABEL: ev.paper_evidence(), ours.label: ours}


def claims_log(p: cmp.Plan, runs: dict, toy=None) -> ClaimLog:
    """The chapter's claims table: every rule of :func:`rules` (:mod:`.fcl_rules`) on the
    paper's printed tables and on our runs (``runs``: :func:`replicate.comparison.load_groups`
    or :func:`replicate.comparison.train` output; a missing group makes the claims that need
    it "not tested", with the reason); ``toy`` is :func:`replicate.experiments.fcl.toy_study`'s
    frame (None: Fig. 7's claims not tested)."""
    log = ClaimLog(PAPER, CHAPTER, kind="experiment", section=SECTION)
    return cmp.log_claims(log, rules(), evidence(p, runs, toy))


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained), the paper's tables, and the
    two-dimensional study of Fig. 7 (small networks trained in seconds)."""
    p = plan(profile, device="cpu")
    return claims_log(p, cmp.load_groups(p), toy_study(profile)[0])
