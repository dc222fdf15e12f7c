"""The claims table of Ghosh et al. (2022), ``exp_adafocal``: the rules of
:mod:`.adafocal_rules` on the numbers of :mod:`.adafocal_evidence` - the paper's printed
tables and our runs, once per AdaFocal rule (Eq. 4 and the authors' code).

The top of the chapter's modules: it imports the chapter (:mod:`.adafocal`), its evidence
and its rules; none of them imports it.
"""
from __future__ import annotations

from .. import comparison as cmp
from ..claims import ClaimLog
from . import adafocal_evidence as ev
from .adafocal import ADAFOCAL_KEYS, CHAPTER, PAPER, RULE_NAMES, SECTION, plan
from .adafocal_rules import rules


def evidence(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict]:
    """The numbers the claims are tested on: ``({label: Evidence}, {label: reason})`` - the
    paper's printed tables (all rows) and our runs, once per AdaFocal rule (each renamed
    ``adafocal``, the paper's key); ``runs`` None makes our evidence missing, with the reason."""
    summaries = {"paper: Ghosh et al. (2022), Tables 1-10, all rows": ev.paper_evidence()}
    missing = {}
    trained = {m.key for m in p.methods["image"]}
    ours = ev.our_tables(p, runs) if runs is not None else None
    for rule in ADAFOCAL_KEYS:
        if runs is None:
            missing[f"ours ({RULE_NAMES[rule]}): {p.profile}"] = (
                f"the chapter's {p.profile} runs are not in the run store (execute the chapter at that profile)")
        elif rule not in trained:
            missing[f"ours ({RULE_NAMES[rule]}): {ev.evidence_label(runs)}"] = (
                f"{RULE_NAMES[rule]} is not among this plan's methods")
        else:
            summaries[f"ours ({RULE_NAMES[rule]}): {ev.evidence_label(runs)}"] = ev.our_evidence(p, runs, ours,
                                                                                                  rule)
    return summaries, missing


def claims_log(summaries: dict, missing: dict | None = None) -> ClaimLog:
    """The chapter's claims table from :func:`evidence`'s output."""
    log = ClaimLog(PAPER, CHAPTER, kind="experiment", section=SECTION)
    return cmp.log_claims(log, rules(), summaries, missing)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained; the text row is left out when
    its runs are missing) and the paper's tables."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p, [g for g in p.groups if g != "text"])
    text = cmp.load(p, "text") if runs is not None and "text" in p.groups else None
    return claims_log(*evidence(p, {**runs, **(text or {})} if runs is not None else None))
