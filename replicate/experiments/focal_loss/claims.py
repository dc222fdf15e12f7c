"""The experimental claims of Mukhoti et al. (2020), ``exp_focal_loss``: each sentence, where
the paper makes it and its rule (:mod:`.rules`), in :func:`rules`; and the chapter's claims
table, those rules on our runs and on the paper's own row (:func:`.evidence.evidence`).
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import chapter, noise, wording
from . import rules as r
from .evidence import evidence, sides
from .plan import CHAPTER, FOCAL_KEYS, PAPER, SECTION, plan


def rules(min_s99: float = r.MIN_S99) -> tuple[cmp.Claim, ...]:
    """The conclusions of Mukhoti et al. (2020), Sec. 5-6, as rules. "Near 1" is the book's
    one reading (:data:`replicate.comparison.wording.T_TOLERANCE`, from this paper's "mostly
    lying between 0.9 and 1.1"). The |S99| claim is about models confident before
    temperature scaling (cross-entropy: 95.93 % of the test set in Table 6); it is "not tested"
    when cross-entropy puts less than ``min_s99`` percent of the test set at confidence >=
    0.99 before TS. On our runs each comparison is decided within the runs' noise
    (:mod:`replicate.comparison.noise`: holds or fails only when the runs resolve it)."""
    if isinstance(min_s99, bool) or not isinstance(min_s99, (int, float)) or not min_s99 >= 0:
        raise ValueError(f"min_s99 must be a number >= 0; got {min_s99!r}")
    tol = wording.T_TOLERANCE
    return (
        cmp.Claim("Focal loss (FLSD-53) has a lower test ECE than cross-entropy", "Sec. 6, Tables 1, 7",
                  r.focal_beats_ce, "pre-T ECE of FLSD-53 vs cross-entropy",
                  noise.lower("flsd53", "cross_entropy")),
        cmp.Claim("The optimal T of the focal-loss model FLSD-53 is near 1", "Sec. 6", r.t_near_one(tol),
                  f"{wording.near_one_text()} for FLSD-53 (T by validation ECE)", noise.near_one("flsd53")),
        cmp.Claim("Cross-entropy needs a larger optimal T than FLSD-53", "Sec. 6, Table 1", r.ce_needs_larger_t,
                  "optimal T (validation ECE) of cross-entropy vs FLSD-53",
                  noise.t_higher("cross_entropy", "flsd53")),
        cmp.Claim("FLSD-53 is the best focal variant (lowest ECE before and after TS)", "Sec. 5-6, Table 7",
                  r.flsd53_best_focal, "lowest pre-T and post-T ECE among the focal variants",
                  noise.all_of(noise.best("flsd53", FOCAL_KEYS), noise.best("flsd53", FOCAL_KEYS, scaled=True))),
        cmp.Claim("After TS, FLSD-53 keeps more confident predictions (larger |S99|) than cross-entropy",
                  "Sec. 6, Table 6", r.keeps_confidence(min_s99),
                  f"post-T |S99| of FLSD-53 vs cross-entropy (tested when CE's pre-T |S99| >= {min_s99:g} %)",
                  noise.higher("flsd53", "cross_entropy", "s99_fraction", scaled=True)),
    )


def claims_log(p: cmp.Plan, runs: dict | None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`rules` on our runs of plan ``p``
    (``runs``: :func:`replicate.comparison.train` or :func:`~replicate.comparison.load`
    output; None: "not tested"), each comparison decided within their noise, and on the
    paper's rows."""
    summaries, missing, ours = sides(p, runs)
    return chapter.chapter_log(PAPER, CHAPTER, rules(), summaries, missing, section=SECTION, runs=ours)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained) and the paper's rows."""
    p = plan(profile, device="cpu")
    return claims_log(p, cmp.load(p))
