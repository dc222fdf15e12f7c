"""The experimental claims of Komisarenko & Kull (2024), ``exp_fts``: each conclusion of
Sec. 4.1, 5.2, 6 and Fig. 8, where the paper makes it, what its rule compares, and the rule
(:mod:`.rules`), in :func:`rules`; and the chapter's claims table, those rules on the
frames of :mod:`.evidence` - our runs and the paper's Table 1.

The top of the chapter's modules: it imports the chapter (:mod:`.plan`), its evidence and its
rules; none of them imports it.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import chapter, wording
from . import evidence as ev
from . import noise_rules as n
from . import rules as r
from .plan import CHAPTER, PAPER, SECTION, plan


def rules(acc_tol: float = 1e-6, max_loss_share: float = 0.5, ece_gain: float = 0.15, nll_gain_max: float = 0.03,
          min_r2: float = 0.9) -> tuple[cmp.Claim, ...]:
    """The conclusions of Komisarenko & Kull (2024), Sec. 4.1, 5.2, 6 and Fig. 8, as rules on
    :func:`.evidence.ours_frame` / :func:`.evidence.paper_frame`. Thresholds (each
    stated in the claims table): ``acc_tol`` accuracy points for "the same accuracy"; "occasionally marginally losing"
    on log-loss = at most ``max_loss_share`` of the models lose, each by at most two
    standard deviations over seeds; "an extra 20 %" = a mean relative gain of at least
    ``ece_gain``; "minor but consistent, around 1 %" = no model loses and the mean gain is
    at most ``nll_gain_max``; "close to linear" = R² of a straight line at least ``min_r2``
    for every model; "about 1" is the book's one "close to 1"
    (:data:`replicate.comparison.wording.T_TOLERANCE`; focal models with gamma_tr <= 3, the
    commonly used values). On our runs the comparisons are decided within the runs' noise
    (:mod:`.noise_rules`)."""
    t_tolerance = wording.T_TOLERANCE
    for name, v in (("acc_tol", acc_tol), ("max_loss_share", max_loss_share), ("ece_gain", ece_gain),
                    ("nll_gain_max", nll_gain_max), ("min_r2", min_r2)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return (
        cmp.Claim("FTS improves (equal-mass) ECE over TS for every baseline model", "Sec. 5.2, Sec. 6, abstract",
                  r.fts_improves_ece, "test ECE after FTS < after TS, both chosen by validation ECE, every model "
                                     "and data set", n.fts_improves_ece()),
        cmp.Claim("FTS keeps the accuracy of TS", "Sec. 5.2, Sec. 6 ('unchanged by design')", r.keeps_accuracy(acc_tol),
                  f"|accuracy after FTS - after TS| <= {acc_tol:g} points, every model and selection",
                  n.keeps_accuracy(acc_tol)),
        cmp.Claim("FTS only occasionally and marginally loses to TS on log-loss", "Sec. 5.2, Sec. 6",
                  r.log_loss_close(max_loss_share),
                  f"FTS log-loss > TS log-loss (both chosen by validation log-loss) for at most "
                  f"{max_loss_share:.0%} of the models, each loss within 2 sd over seeds"),
        cmp.Claim("The optimal temperature decreases as gamma_tr grows", "Sec. 5.2", r.t_decreases_with_gamma_tr,
                  "Kendall tau of gamma_tr and the TS temperature < 0 (focal-loss models), T chosen by log-loss "
                  "and by ECE"),
        cmp.Claim("Higher gamma_tr gives better ECE but worse accuracy", "Sec. 5.2", r.gamma_tr_tradeoff,
                  "Kendall tau of gamma_tr with accuracy < 0 and with ECE < 0 (focal-loss models), after TS and "
                  "after FTS"),
        cmp.Claim("Choosing the parameters by validation ECE gives an extra ~20 % relative ECE improvement",
                  "Sec. 5.2", r.selection_gain("adaece", "nll", (ece_gain, None)),
                  f"mean relative test-ECE gain of selection by validation ECE over selection by validation "
                  f"log-loss >= {ece_gain:.0%} (FTS; TS and FTS together); the paper does not print this comparison"),
        cmp.Claim("For log-loss, choosing by validation log-loss gives a minor but consistent ~1 % improvement",
                  "Sec. 5.2", r.selection_gain("nll", "adaece", (0.0, nll_gain_max)),
                  f"relative test log-loss gain of selection by log-loss over selection by ECE >= 0 for every "
                  f"model, mean <= {nll_gain_max:.0%}"),
        cmp.Claim("The optimal T is close to linear in gamma_ev for every model (Fig. 8)", "Sec. 5.2, Fig. 8, Sec. 6",
                  r.close_to_linear(min_r2),
                  f"per focal-loss model, T chosen by validation ECE for each gamma_ev of the grid: R² of a straight "
                  f"line >= {min_r2:g} (T, and 1/T)"),
        cmp.Claim("The post-hoc temperature of focal-loss models is about 1", "Sec. 4.1",
                  r.focal_t_near_one(t_tolerance),
                  f"{wording.near_one_text()} for the TS temperature of focal models with gamma_tr <= 3, T chosen by "
                  f"log-loss and by ECE", n.focal_t_near_one()),
    )


def evidence(p: cmp.Plan, runs: dict | None, grid: str = "code", log=None) -> tuple[dict, dict]:
    """``({label: frame}, {label: reason})``: our runs (:func:`.evidence.ours_frame`) and
    the paper's Table 1 (:func:`.evidence.paper_frame`); ``runs`` None (not in the store)
    makes ours missing."""
    return sides(p, runs, grid, log)[:2]


def sides(p: cmp.Plan, runs: dict | None, grid: str = "code", log=None) -> tuple[dict, dict, dict]:
    """:func:`evidence` and, third, our runs behind our label as the noise tests read them
    (:func:`.evidence.run_evidence`)."""
    summaries, missing, ours = {}, {}, {}
    dataset = next(iter(p.image.values())).dataset
    if runs is not None:
        label = cmp.evidence_label(runs["image"])
        summaries[label] = ev.ours_frame(runs["image"], dataset, grid, log=log)
        ours[label] = ev.run_evidence(runs["image"], grid, log=log)
    else:
        missing[f"ours: {p.profile}, {dataset}"] = chapter.not_in_store(p.profile)
    summaries[ev.PAPER_LABEL] = ev.paper_frame()
    return summaries, missing, ours


def claims_log(p: cmp.Plan, runs: dict | None, grid: str = "code", log=None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`rules` on our runs of plan ``p``
    (``runs`` None: "not tested"), post-hoc fits over the T grid ``grid``, and on the paper's
    Table 1; ``log`` reports progress. The comparisons on our runs are decided within their
    noise."""
    summaries, missing, ours = sides(p, runs, grid, log)
    return chapter.chapter_log(PAPER, CHAPTER, rules(), summaries, missing, section=SECTION, runs=ours)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained) and the paper's Table 1."""
    p = plan(profile, device="cpu")
    return claims_log(p, cmp.load(p))
