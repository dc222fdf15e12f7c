"""The experimental claims of Tao, Dong & Xu (2023), Dual Focal Loss: each sentence, where
the paper makes it, what its rule compares, and the rule (:mod:`.rules` for the
main text's tables, :mod:`.appendix_rules` for the appendices',
:mod:`.figure_rules` for the figures), in the paper's order; and the chapter's
claims table (:func:`claims_log`, :func:`claims`).

:func:`rules` is what the chapter and the claims registry test on both sides (the paper's
printed tables and our runs, :mod:`.evidence`); see :mod:`.terms` for
the thresholds that make the paper's vague words ("most", "almost all", "competitive")
decidable. The top of the chapter's modules: none of them imports this one.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog, untested
from ...comparison import chapter, wording
from . import appendix_rules as a
from . import evidence as ev
from . import noise_rules as n
from . import rules as r
from . import terms as t
from .figure_rules import figure_claims
from .plan import CHAPTER, PAPER, SECTION, plan


def _explained(claim: cmp.Claim, test=None) -> cmp.Claim:
    """The claim with a rule that says why our runs could not decide it when a number it
    needs is missing (methods or ablation rows not in this execution's plan)."""
    def rule(ev):
        numbers, outcome = claim.rule(ev)
        if outcome is None and ev.kind == "ours":
            outcome = untested(f"the runs this rule needs are not in the {ev.profile} plan of this execution (its "
                               f"methods, seeds or ablation rows; the cpu profile trains them all)")
        return numbers, outcome
    return cmp.Claim(claim.text, claim.source, rule, claim.how, claim.noise)


def rules() -> tuple[cmp.Claim, ...]:
    """Every experimental claim of the paper, in the paper's order (figure claims included);
    on our runs the comparative ones carry a noise test (:mod:`.noise_rules`)."""
    return tuple(_explained(c) for c in _claims())


def _claims() -> tuple[cmp.Claim, ...]:
    C = cmp.Claim
    fig = figure_claims()
    return (
        C("Focal loss can lead to under-confident predictions", "Abstract; Sec. 1, 3.2; Table 1", r.fl_underconfident,
          "optimal T of FLSD-53 below 1 (a grid value below 1.0: a sharpening temperature) in some row / in "
          "most rows", n.under_confident()),
        C("Inverse focal loss aggravates over-confidence", "Sec. 1, 3.2; Table 1", r.ifl_overconfident,
          "optimal T of inverse focal above cross-entropy's in most rows", n.ifl_overconfident()),
        C("DFL achieves state-of-the-art ECE in most cases, especially before temperature scaling",
          "Abstract; Sec. 5.1, 6; Table 1", r.sota_ece,
          "DFL lowest pre-T ECE in most rows, and in at least as large a share pre T as post T",
          n.lowest_especially_pre()),
        C("DFL's ECE before temperature scaling beats most post-temperature-scaling results of previous works",
          "Sec. 5.1, Table 1", r.beats_post_ts, "DFL pre-T ECE vs the baselines' post-T ECE, per row: below the best "
          "baseline / below most baselines, in most rows", n.beats_post_ts()),
        C("All optimal temperatures of DFL are 1: DFL trains innately calibrated models", "Sec. 5.1, Table 1",
          r.dfl_t_is_one, f"DFL's optimal T is 1, {wording.is_one_text()}, in every row (every seed)", n.t_is_one()),
        C("CIFAR-10 models are better calibrated than those on data sets with more labels (CIFAR-100, "
          "Tiny-ImageNet)", "Sec. 5.1, Table 1", r.cifar10_better, "pre-T ECE per (network, method) pair"),
        C("Tiny-ImageNet models are generally better calibrated than CIFAR-100 models", "Sec. 5.1, Table 1",
          r.tiny_better, "ResNet-50 pre-T ECE per method"),
        C("ResNet-50 is the best calibrated of the four networks on CIFAR-10 and CIFAR-100", "Sec. 5.1, Table 1",
          r.resnet50_best, "lowest mean pre-T ECE over the seven methods / in DFL's column, on both data sets"),
        C("ResNet-110 is the worst calibrated network, especially with focal loss", "Sec. 5.1, Table 1",
          r.resnet110_worst, "highest mean pre-T ECE over the methods and in FLSD-53's column, on both data sets"),
        C("Wide-ResNet is generally better calibrated than the other networks", "Sec. 5.1, Table 1", r.wrn_best,
          "lowest mean pre-T ECE over the seven methods, on both data sets"),
        C("Inverse focal loss performs the worst of the methods, with an even higher ECE than cross-entropy",
          "Sec. 5.1, Table 1", r.ifl_worst, "highest pre-T ECE of the seven / above cross-entropy, in most rows",
          n.ifl_worst()),
        C("Inverse focal loss gives the best post-T ECE in only one case, ResNet-110 on CIFAR-10",
          "Sec. 5.1, Table 1", r.ifl_best_post_once, "rows where inverse focal has the lowest post-T ECE"),
        C("DFL has better pre- and post-T ECE on the NLP task (20 Newsgroups)", "Sec. 5.1, Table 1", r.text_row,
          "DFL lowest pre-T and post-T ECE on 20 Newsgroups", n.text_row()),
        C("DFL is state of the art across ECE, AdaECE and classwise ECE on CIFAR-10 (ResNet-50, ResNet-110)",
          "Sec. 5.1, Fig. 3; Tables 1, 5, 6", r.fig3_metrics, "DFL lowest in every (row, metric) cell, pre T",
          n.fig3_metrics()),
        C("DFL is the only method that achieves innately calibrated models (optimal T = 1)",
          "Sec. 5.1, Fig. 3; Table 1", r.only_t_one, f"methods whose optimal T is 1 ({wording.is_one_text()}) on those "
          "rows: DFL only", n.only_t_one()),
        fig["fig4a_below"], fig["fig4a_fl_vs_ce"], fig["fig4a_every_lr"], fig["fig2_bins"],
        C("DFL improves the classification accuracy over focal loss in almost all cases", "Sec. 5.1, Table 2",
          r.accuracy_vs_fl, f"DFL's error below FLSD-53's in at least {t.ALMOST_ALL:.0%} of the rows",
          n.accuracy_vs_fl()),
        C("On CIFAR-100 DFL calibrates without a trade-off in accuracy against cross-entropy on every network",
          "Sec. 5.1, Table 2", r.cifar100_no_tradeoff, "CIFAR-100 rows: DFL's error at most cross-entropy's"),
        C("DFL and AdaFocal are evenly matched", "Sec. 5.2, Table 3", r.evenly_matched,
          "DFL below AdaFocal in between a quarter and three quarters of the rows"),
        C("AdaDualFocal improves consistently on both AdaFocal and DFL", "Sec. 5.2, Table 3", r.adadual_consistent,
          "AdaDualFocal's ECE below both in every row"),
        fig["fig4b_balance"], fig["fig4c_qj"],
        C("With other dual logits DFL still outperforms focal loss consistently across metrics", "Sec. 5.4, Table 4",
          r.other_logits_beat_fl, "every 'other logits' row below the focal-loss row in ECE and AdaECE"),
        C("DFL's AdaECE is competitive with the best in almost all cases, only 0.1 from focal loss on "
          "Tiny-ImageNet", "App. E, Table 5", a.adaece_competitive,
          "DFL within 0.1 of the lowest pre-T AdaECE in every row, lowest in all but one", n.adaece_competitive()),
        C("DFL has the best classwise ECE", "App. E, Table 6", a.lowest_in_most("table6", "classwise_ece",
                                                                            "classwise ECE"),
          "DFL lowest pre-T classwise ECE in most rows", n.lowest_especially_pre("classwise_ece", n._image)),
        C("DFL achieves a better NLL on the more complex data sets CIFAR-100 and Tiny-ImageNet", "App. E, Table 8",
          a.nll_complex, "DFL lowest pre-T NLL in every CIFAR-100 and Tiny-ImageNet row"),
        C("DFL achieves state-of-the-art MCE in most cases, particularly before temperature scaling",
          "App. E, Table 7", a.lowest_in_most("table7", "mce", "MCE"),
          "DFL lowest pre-T MCE in most rows, and in at least as large a share pre T as post T",
          n.lowest_especially_pre("mce", n._image)),
        C("DFL achieves competitive OOD-detection AUROC in most cases", "App. E, Table 9", a.auroc_competitive,
          f"DFL's pre-T AUROC among the best {t.TOP_K} of the seven methods in most (row, OOD set) pairs; tested on "
          f"models that detect better than chance", n.auroc_competitive()),
        C("DFL outperforms KDE-XE in ECE", "App. F, Table 10", a.kde_xe("ece", True), "DFL below KDE-XE in every row"),
        C("DFL fails to outperform KDE-XE in the canonical calibration error", "App. F, Table 10",
          a.kde_xe("ece_kde", False), "DFL's ECE_KDE above KDE-XE's in every row"),
        C("DFL improves consistently on the other methods in RBS", "App. G, Table 11", a.rbs_lowest,
          "DFL lowest RBS in every row (on our runs: the lowest Brier score, RBS being its square root)",
          n.lowest_brier()),
        C("Over repeated runs DFL's calibration is consistent and robust", "App. H, Table 12", a.robust_over_seeds,
          "DFL lowest mean over runs in ECE, ECE(T), AdaECE and classwise ECE", n.robust_over_seeds()),
        C("Gamma = 5, chosen by cross-validation, gives DFL its best calibration", "App. I, Table 13", a.gamma5_best,
          "gamma with the lowest ECE, ECE(T), AdaECE and classwise ECE of the sweep is 5"),
    )


def evidence(p: cmp.Plan, runs: dict) -> tuple[dict, dict]:
    """``({label: Evidence}, {})``: the paper's printed tables and our runs of plan ``p``
    (:mod:`.evidence`; a group missing from ``runs`` is recorded inside our evidence)."""
    return {ev.PAPER_LABEL: ev.paper_evidence(), ev.our_label(p, runs): ev.our_evidence(p, runs)}, {}


def claims_log(p: cmp.Plan, runs: dict) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`rules` on the paper's
    printed tables and on our runs (``runs``: :func:`replicate.comparison.load_groups` or
    :func:`replicate.comparison.train` output; a missing group makes the claims that need it
    "not tested", with the reason); the comparisons on our runs decided within their noise."""
    ours = ev.our_evidence(p, runs)
    summaries = {ev.PAPER_LABEL: ev.paper_evidence(), ev.our_label(p, runs): ours}
    rows = ev.run_rows(runs, ours)
    return chapter.chapter_log(PAPER, CHAPTER, rules(), summaries, section=SECTION,
                               runs={ev.our_label(p, runs): rows} if rows else None)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained) and the paper's tables."""
    p = plan(profile, device="cpu")
    return claims_log(p, cmp.load_groups(p))
