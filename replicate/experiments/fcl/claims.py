"""The experimental claims of Liang et al. (Focal Calibration Loss), ``exp_fcl``: each
sentence, where the paper makes it, what its rule compares, and the rule (:mod:`.rules`
for the tables, :mod:`.figure_rules` for the figures), in :func:`rules`; and the
chapter's claims table, those rules on the numbers of :mod:`.evidence` - the paper's
printed tables and our runs.

The top of the chapter's modules: it imports the chapter (:mod:`.plan`), its evidence and its
rules; none of them imports it.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import chapter, wording
from . import evidence as ev
from . import figure_rules as f
from . import noise_rules as n
from . import rules as r
from .plan import CHAPTER, PAPER, SECTION, plan, toy_study


def rules(among: int = 3, fraction: float = 0.9, ts_drop: float = 0.2, toy_error: float = 1.0
          ) -> tuple[cmp.Claim, ...]:
    """The experimental claims of Liang et al., in the paper's order. Thresholds the paper
    leaves open: "among the lowest" = among the ``among`` lowest of the seven methods;
    "converges faster" = reaches ``fraction`` of its largest drop of normalised test loss
    sooner; a "significant reduction" by TS = at least ``ts_drop`` of the pre-T value; "T
    close to 1" is the book's one reading (:data:`replicate.comparison.wording.T_TOLERANCE`);
    "balancing accuracy" = at most ``toy_error`` points more test error. On our runs the
    comparisons are decided within the runs' noise (:mod:`.noise_rules`)."""
    t_tolerance = wording.T_TOLERANCE
    C = cmp.Claim
    return (
        C("FCL consistently has the lowest pre-T calibration error (ECE, smCE, AdaECE, classwise ECE)",
          "Sec. 5.1.1; Tables 1, 3, 6, 7", r.lowest_pre,
          "per row: FCL's pre-T value <= every other method's; read in every row and in most rows, per metric",
          n.lowest_pre()),
        C("FCL's post-T calibration error is also among the lowest", "Sec. 5.1.1; Tables 1, 3, 6, 7",
          r.among_lowest_post(among), f"per row: FCL among the {among} lowest of the seven methods post T; most rows",
          n.among_lowest_post(among)),
        C("FCL excels with DenseNet-121 and ResNet-50/110", "Sec. 5.1.1; Table 1", r.excels_on_networks,
          "CIFAR rows of those networks: FCL's pre-T ECE the lowest; every row"),
        C("FCL improves calibration markedly on CIFAR-10, CIFAR-100 and Tiny-ImageNet", "Sec. 5.1.1; Table 1",
          r.beats_ce_on_images, "rows of those data sets: FCL's pre-T ECE below cross-entropy's; every row",
          n.beats_ce_on_images()),
        C("FCL outperforms Brier, MMCE, label smoothing and focal loss before and after TS",
          "Sec. 5.1.1; Table 1", r.beats_rivals_pre_post,
          "per row: FCL's ECE <= that of Brier, MMCE, LS-0.05, FLSD-53, pre and post T; every row / most rows",
          n.beats_rivals_pre_post()),
        C("Of CE, FLSD-53, Dual Focal and FCL, FCL is the best calibrated, with the lowest ECE",
          "Sec. 5.1.2; Fig. 9 (ResNet-110, CIFAR-10)", r.fig9_lowest_ece,
          "pre-T ECE on CIFAR-10 (paper: Table 1's ResNet-110 row, the figure's network)", n.fig9_lowest_ece()),
        C("FCL has a relatively low MCE", "Sec. 5.1.2; Fig. 9", r.fig9_low_mce,
          "pre-T MCE of FCL below the mean of CE, FLSD-53 and DFL"),
        C("Cross-entropy shows a large gap between confidence and accuracy, especially in the high-confidence bins",
          "Sec. 5.1.2; Fig. 9", r.ce_overconfident_high,
          "CE's test reliability bins (>= 1 % of samples): over-confident in every bin at confidence >= 0.5, "
          "with a larger mean gap there than below 0.5"),
        C("FCL keeps the lowest test error during training", "Sec. 5.1.2; Fig. 8 (ResNet-50, epochs 100-300)",
          f.lowest_error_over_training, "mean test error over the epochs matching the paper's 100-300 of 350"),
        C("FCL achieves the lowest classification error in most cases across all data sets and models",
          "Sec. 5.2.1; Table 2", r.lowest_error_most, "rows where FCL's test error is the lowest; more than half",
          n.lowest_error_most()),
        C("FCL's error advantage shows especially on CIFAR-100 and the news data sets", "Sec. 5.2.1; Table 2",
          r.lowest_error_c100_news, "CIFAR-100, 20 Newsgroups and AG News rows: FCL's error the lowest; every row",
          n.lowest_error_c100_news()),
        C("Across most OOD data sets FCL achieves the highest AUROC", "Sec. 5.4; Table 4", r.highest_auroc,
          "per OOD row: FCL's entropy AUROC the highest, pre and post T; more than half of the rows; tested on "
          "models that detect better than chance", n.highest_auroc()),
        C("FCL converges faster: it reaches a low normalised test loss sooner than CE, FL and DFL",
          "Sec. 5.5.1; Fig. 3", f.fastest_convergence(fraction),
          f"first epoch at which the normalised test NLL has made {fraction:.0%} of its largest drop"),
        C("In epochs 50-150, FCL and DFL have the lowest and most stable test loss", "Sec. 5.5.1; Fig. 3",
          f.middle_lowest_stable, "the two lowest means and the two smallest s.d. of the normalised test NLL over "
                                "the matching epochs are FCL's and DFL's"),
        C("In epochs 0-50, cross-entropy's test loss falls steadily while focal loss varies more",
          "Sec. 5.5.1; Fig. 3", f.initial_ce_steadier,
          "s.d. of the epoch-to-epoch changes of the normalised test NLL over the matching epochs, FL-3 vs CE"),
        C("NLL decreases as lambda grows from 0 to 0.5", "Sec. 5.5.2; Fig. 6", f.sweep_falls("nll"),
          "pre-T test NLL of FCL at lambda 0.5 vs 0 (same gamma)"),
        C("After temperature scaling NLL is generally lower", "Sec. 5.5.2; Fig. 6", f.post_nll_lower,
          "post-T below pre-T NLL for more than half of the lambdas"),
        C("ECE decreases significantly at lambda 0.5", "Sec. 5.5.2; Fig. 6", f.sweep_falls("ece"),
          "pre-T ECE of FCL at lambda 0.5 vs 0 (one seed: no significance test)"),
        C("Calibration error increases for larger lambda: too much regularisation degrades calibration",
          "Sec. 5.5.2; Fig. 6", f.too_much_lambda("ece"), "pre-T ECE at the largest lambda above its minimum"),
        C("One lambda gives the best calibration on every ECE metric before and after TS",
          "Sec. 5.5.2; Fig. 6 (the value was lost in extraction)", f.one_best_lambda,
          "the lambda minimising ECE, AdaECE and classwise ECE, pre and post T, is the same"),
        C("Overly large lambda can reduce classification accuracy", "Sec. 5.5.2; Fig. 6", f.too_much_lambda("error"),
          "test error at the largest lambda above its minimum over the sweep"),
        C("Temperature scaling markedly reduces focal loss's calibration error (a substantial post-processing gap)",
          "Sec. 5.5.3; Tables 1, 3, 6, 7", r.focal_drops(ts_drop),
          f"per row: FLSD-53's post-T value at least {ts_drop:.0%} below its pre-T value; every row / most rows",
          n.focal_drops(ts_drop)),
        C("FCL's calibration error changes little with TS and its temperature is close to 1, confirming the "
          "reduced post-processing gap", "Sec. 5.5.3; Tables 1, 3, 6, 7", r.fcl_t_near_one(t_tolerance),
          f"per row: FCL's T close to 1, {wording.near_one_text()}, and TS changes its ECE no more than "
          "FLSD-53's; every row / most rows", n.fcl_t_near_one()),
        C("FCL's Lipschitz smCE (Def. 2.2; smCE^2 <= pGap <= 2 smCE, Blasiok et al.) is below focal loss's",
          "beyond the paper: Def. 2.2, Thm. 4.5", r.smce_below_focal, "pre-T smCE (exact LP) of FCL vs FLSD-53"),
        C("The L2 calibration term gives lower ECE than L1, consistently", "App. A.15; Table 8", r.l2_beats_l1,
          "per row: pre-T ECE of FCL with the L2 term below the L1 term's; every row"),
        C("On a noisy 2-D set, focal loss draws a sharp boundary around hard samples, FCL a smoother one",
          "App. A.11; Fig. 7", f.toy_smoother, "two moons, noise 0.2, mean over seeds; read as the boundary's "
                                             "shape (FCL's 0.5 boundary shorter) and as the probability "
                                             "transition (FCL's band 0.25 < p < 0.75 wider)"),
        C("There FCL balances accuracy and calibration", "App. A.11; Fig. 7", f.toy_balance(toy_error),
          f"two moons: FCL's mean test ECE below FL's, its error at most {toy_error:g} point above"),
        C("On CheXNet, FCL improves the average AUROC and the reliability scores (ECE, MCE)", "App. A.16; Table 9",
          r.chexnet, "not tested: see the note"),
        C("FCL gives the most precise anomaly localisation in Grad-CAM heatmaps", "Sec. 5.3; Fig. 1", r.gradcam,
          "not tested: see the note"),
    )


def evidence(p: cmp.Plan, runs: dict, toy=None) -> tuple[dict, dict]:
    """The numbers the claims are tested on: ``({label: Evidence}, {})`` for the paper's
    printed tables and our runs (:mod:`.evidence`; what is missing is recorded inside ours)."""
    ours = ev.our_evidence(p, runs, toy)
    return {ev.PAPER_LABEL: ev.paper_evidence(), ours.label: ours}, {}


def claims_log(p: cmp.Plan, runs: dict, toy=None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`rules` on the
    paper's printed tables and on our runs (``runs``: :func:`replicate.comparison.load_groups`
    or :func:`replicate.comparison.train` output; a missing group makes the claims that need
    it "not tested", with the reason); ``toy`` is :func:`replicate.experiments.fcl.toy_study`'s
    frame (None: Fig. 7's claims not tested). The comparisons on our runs are decided within
    their noise."""
    ours = ev.our_evidence(p, runs, toy)
    summaries = {ev.PAPER_LABEL: ev.paper_evidence(), ours.label: ours}
    return chapter.chapter_log(PAPER, CHAPTER, rules(), summaries, section=SECTION,
                               runs={ours.label: ours.runs} if ours.runs else None)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained), the paper's tables, and the
    two-dimensional study of Fig. 7 (small networks trained in seconds)."""
    p = plan(profile, device="cpu")
    return claims_log(p, cmp.load_groups(p), toy_study(profile)[0])
