"""The experimental claims of Ghosh et al. (2022), ``exp_adafocal``: each sentence, where the
paper makes it, what its rule compares, and the rule (:mod:`.rules` for the tables,
:mod:`.figure_rules` for the figures), in :func:`rules`; and the chapter's claims
table, those rules on the numbers of :mod:`.evidence` - the paper's printed tables
and our runs, once per AdaFocal rule (Eq. 4 and the authors' code).

The top of the chapter's modules: it imports the chapter (:mod:`.plan`), its evidence
and its rules; none of them imports it.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import chapter, noise, wording
from . import evidence as ev
from . import figure_rules as f
from . import noise_rules as n
from . import rules as r
from .plan import ADAFOCAL_KEYS, CHAPTER, PAPER, RULE_NAMES, SECTION, plan


def rules(error_tolerance: float = 1.0, similar_tolerance: float = 0.5, slight_tolerance: float = 0.5,
          ts_tolerance: float = 1.0):
    """The claims of Ghosh et al. (2022) as rules; tolerances in percentage points.

    "Close to 1" for the optimal T is the book's one reading
    (:data:`replicate.comparison.wording.T_TOLERANCE`); ``error_tolerance``: "without a
    significant loss in accuracy" (error at most this far above cross-entropy's);
    ``similar_tolerance``: "very similar" ECE (CalFocal Eq. 2 vs Eq. 1);
    ``slight_tolerance``: "only slightly better" (FLSD-53 vs fixed gamma); ``ts_tolerance``:
    "temperature scaling is ineffective" (largest AUROC gain). On our runs the comparative
    claims are decided within the runs' noise (:mod:`.noise_rules`), rows counted by
    :func:`replicate.comparison.noise.tally`.
    """
    t_tolerance = wording.T_TOLERANCE
    for name, v in (("error_tolerance", error_tolerance), ("similar_tolerance", similar_tolerance),
                    ("slight_tolerance", slight_tolerance), ("ts_tolerance", ts_tolerance)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    low_t1 = lambda v: r._lowest(v, r.TABLE1)  # noqa: E731
    C = cmp.Claim
    return (
        C("Before temperature scaling AdaFocal has the lowest ECE, by a substantial margin, in 9 of 11 cases",
          "Sec. 6, Table 1", r.share_rule(low_t1, "ece", 9 / 11, "AdaFocal lowest pre-T ECE"),
          "rows where AdaFocal's pre-T ECE is below CE, Brier, MMCE, LS-0.05 and FLSD-53: share >= 9/11",
          noise.in_rows(n.lowest(), 9 / 11)),
        C("With temperature scaling included, AdaFocal has the lowest ECE in 7 of 11 experiments",
          "Sec. 6, Table 1", r.lowest_with_ts(7 / 11), "rows where AdaFocal holds the lowest of all pre- and post-T "
                                                      "ECE cells: share >= 7/11", noise.in_rows(n.lowest_cell(), 7 / 11)),
        C("AdaFocal's optimal temperature is 1 in many cases and close to 1 in the rest (innately calibrated)",
          "Sec. 6, Sec. 7, Table 1", r.t_near_one(t_tolerance),
          f"{wording.near_one_text()} for AdaFocal in every row (T by validation ECE)",
          noise.in_rows(noise.near_one(r.ADA), "every")),
        C("For any dataset-model pair AdaFocal leads to the gammas that give the best calibration",
          "App. A", r.every_rule(low_t1, "ece", "AdaFocal lowest pre-T ECE"),
          "AdaFocal's pre-T ECE below every baseline of Table 1 in every row",
          noise.in_rows(n.lowest(), "every")),
        C("AdaFocal substantially outperforms the regular focal loss (FLSD-53) consistently",
          "Abstract, Sec. 1, Table 1", r.every_rule(lambda v: r._lowest(v, ("flsd53",)), "ece",
                                                  "AdaFocal pre-T ECE below FLSD-53"),
          "AdaFocal's pre-T ECE below FLSD-53's in every row",
          noise.in_rows(noise.lower(r.ADA, "flsd53"), "every")),
        C("AdaFocal improves calibration without a significant loss in accuracy", "Abstract, Sec. 6, Table 2",
          r.error_kept(error_tolerance), f"AdaFocal's test error at most {error_tolerance:g} points above "
                                       f"cross-entropy's in every row",
          noise.in_rows(noise.at_most(r.ADA, "cross_entropy", error_tolerance, "error"), "every")),
        C("FLSD-53 is much better calibrated than CE on CIFAR-10, CIFAR-100 and Tiny-ImageNet; on ImageNet "
          "the reverse", "Sec. 6, Fig. 4, Table 1", r.flsd_vs_ce, "pre-T ECE of FLSD-53 vs CE per row", n.flsd_vs_ce()),
        C("AdaFocal outperforms all the baselines by a substantial margin in AdaECE, especially pre-T",
          "App. F, Table 3", r.lowest_readings(("adaece",), r.TABLE1, "AdaFocal lowest pre-T AdaECE"),
          "AdaFocal's pre-T AdaECE below every baseline: in every row / in most rows",
          noise.row_readings(n.lowest("adaece"), every_row="every", most_rows="most")),
        C("AdaFocal outperforms all the baselines by a substantial margin in classwise ECE, especially pre-T",
          "App. F, Table 4", r.lowest_readings(("classwise_ece",), r.TABLE1, "AdaFocal lowest pre-T classwise ECE"),
          "AdaFocal's pre-T classwise ECE strictly below every baseline (a tie is not below): every / most rows",
          noise.row_readings(n.lowest("classwise_ece"), every_row="every", most_rows="most")),
        C("The debiased estimates (ECE_debias 15 and 30 bins, EW and EM ECE_sweep) confirm AdaFocal's lower "
          "calibration error", "Sec. 2, Sec. 6, App. G, Tables 5-8",
          r.lowest_readings(r.DEBIASED, ("cross_entropy", "flsd53"), "AdaFocal below CE and FLSD-53 pre-T"),
          "AdaFocal's pre-T value below CE's and FLSD-53's, each of the four metrics: every / most rows",
          noise.row_readings({m: noise.all_of(noise.lower(r.ADA, "cross_entropy", m), noise.lower(r.ADA, "flsd53", m))
                              for m in r.DEBIASED}, every_row="every", most_rows="most")),
        C("The best results come from 10 to 20 validation bins; fewer than 10 or more than 20 degrade them",
          "Sec. 6, App. I, Table 9", r.bins_best_middle,
          "per Table 9 metric (pre-T): the best of 10-20 bins below every setting < 10 and > 20"),
        C("AdaFocal with γmax = 20 is consistently better than FLSD-53 (9 of 9 runs)", "App. L.1, Fig. 17",
          f.runs_below_flsd("", 1.0, "γmax 20"), "every AdaFocal run's pre-T ECE below FLSD-53's mean over seeds"),
        C("AdaFocal with γmax = 50 is mostly better than FLSD-53", "App. L.2, Fig. 19",
          f.runs_below_flsd("gamma_max=50", 0.5 + 1e-9, "γmax 50"),
          "more than half of the γmax-50 runs below FLSD-53's mean pre-T ECE"),
        C("AdaFocal with γmax = 50 varies more across runs than with γmax = 20", "App. L.2, Fig. 19", f.more_variable,
          "standard deviation over seeds of the pre-T ECE"),
        C("Unconstrained AdaFocal is better than FLSD-53 in 7 of 9 runs", "App. L.3, Fig. 21",
          f.runs_below_flsd("gamma_max=unbounded", 7 / 9, "unbounded"),
          "share of unbounded runs below FLSD-53's mean pre-T ECE >= 7/9"),
        C("Unconstrained gammas blow up to very high values in the lower bins and settle in the higher bins",
          "App. L.3, Fig. 22", f.unbounded_blows_up, "final γ above 20 in one of the three lowest bins, at most 20 "
                                                  "in the three highest"),
        C("AdaFocal is significantly better at OOD detection than the competing methods",
          "Abstract, Sec. 1, Sec. 7, Table 10", r.ood_beats(("cross_entropy", "brier", "mmce", "ls005", "fl3",
                                                           "flsd53"), "AdaFocal highest AUROC"),
          "AdaFocal's pre-T entropy AUROC above every other cell (pre and post T) of its row; tested on models "
          "that detect better than chance", n.ood(n.lowest("auroc", (*r.TABLE10, r.ADA)))),
        C("Models trained with AdaFocal outperform FL-3 and FLSD-53 at OOD detection", "Sec. 6, Table 10, Fig. 6",
          r.ood_beats(("fl3", "flsd53"), "AdaFocal above FL-3 and FLSD-53"),
          "AdaFocal's pre-T AUROC above FL-3's and FLSD-53's, pre and post T, every row; tested on models that "
          "detect better than chance",
          n.ood(noise.all_of(noise.higher(r.ADA, "fl3", "auroc"), noise.higher(r.ADA, "flsd53", "auroc")))),
        C("Temperature scaling is ineffective for OOD detection under distributional shift", "Sec. 6, Fig. 6",
          r.ts_ineffective(ts_tolerance), f"no method gains more than {ts_tolerance:g} AUROC points from TS; "
                                         f"tested on models that detect better than chance",
          n.ood(n.ts_gain_at_most(ts_tolerance))),
        C("Although FL-4 achieves the lowest validation AdaECE, no single γ is the best in every bin",
          "Sec. 3, Fig. 1, App. B", f.fl4_lowest_adaece, "final validation AdaECE (15 equal-mass bins) of CE, "
                                                       "FL-3/4/5: is FL-4 the lowest?"),
        C("No single fixed γ achieves the best calibration in every validation bin", "Sec. 3, Fig. 1, App. B",
          f.no_single_gamma, "per validation bin, the γ in {0, 3, 4, 5} with the smallest |E_val|: not always "
                           "the same"),
        C("FLSD-53 is not the best strategy across all the bins either", "Sec. 3, Fig. 1(b)", f.flsd_not_best,
          "FLSD-53 is not the smallest |E_val| among CE, FL-3/4/5, FLSD-53 in every bin"),
        C("C_train and C_val correspond: as γ increases (0, 3, 5) both get lower", "Sec. 4, Fig. 2(b)",
          f.correspondence, "in most validation bins CE > FL-3 > FL-5 for both C_train (common binning) and C_val "
                          "(final epoch)"),
        C("CalFocal (λ = 10, 100) reduces the calibration error compared to CE but stays far from FLSD-53",
          "Sec. 5.1, Fig. 3(c)", r.calfocal_between, "pre-T ECE: FLSD-53 < CalFocal Eq. 1 (λ 10 and 100) < CE",
          n.calfocal_between()),
        C("Too high λ (= 100) affects the accuracy of CalFocal", "Sec. 5.1, Fig. 3(b)", r.calfocal_accuracy,
          "test error of CalFocal Eq. 1 λ 100 above λ 10's and CE's", n.calfocal_accuracy()),
        C("CalFocal Eq. 2 performs very similarly to (or slightly better than) Eq. 1", "Sec. 5.1, App. D, Fig. 13",
          r.calfocal_eq2_similar(similar_tolerance), f"ECE(Eq. 2) - ECE(Eq. 1) <= {similar_tolerance:g} points, "
                                                   f"λ 10 and 100", n.calfocal_eq2_similar(similar_tolerance)),
        C("CE is over-confident compared to FLSD-53 in every bin (CIFAR-10)", "Sec. 6, Fig. 5(a)",
          f.ce_overconfident_every_bin, "final validation E_val = C_val - A_val per bin: CE above FLSD-53 in all"),
        C("AdaFocal finds the γs that produce the lowest calibration error in each bin", "Fig. 5 caption",
          f.ada_lowest_every_bin, "final |E_val| per validation bin: AdaFocal at most CE's and FLSD-53's in all"),
        C("On CIFAR-10 AdaFocal's γ ends close to 1 in the higher bins and close to 20 in the lowest bin",
          "Sec. 6, Fig. 5(a)", f.gamma_ends, "final γ of the lowest bin nearer 20 than 1, of the highest nearer 1"),
        C("On ImageNet FLSD-53 is under-confident in every bin and AdaFocal's γ goes to 0 (cross-entropy)",
          "Sec. 6, Fig. 5(b), App. A, Fig. 8", r.not_here("imagenet"), "ImageNet validation bins and γ"),
        C("AdaFocal's mean ECE over runs is significantly below the baselines' (error bars)", "Sec. 6, App. H, "
          "Fig. 14", f.error_bars_separate, "AdaFocal's mean + 1 sd below CE's and FLSD-53's mean - 1 sd (pre-T)"),
        C("FLSD-53 is only slightly better than focal loss with a fixed γ", "Abstract",
          r.flsd_slightly_better(slight_tolerance),
          f"0 < best fixed-γ ECE - FLSD-53 ECE <= {slight_tolerance:g} points (FL-3/4/5, pre-T)",
          n.flsd_slightly_better(slight_tolerance)),
        C("The moving-average γ update (MA-α) is not as effective as AdaFocal's", "App. K, Fig. 15-16",
          r.not_here("moving_average"), "ECE of MA-α runs vs AdaFocal"),
    )


def evidence(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict]:
    """The numbers the claims are tested on: ``({label: Evidence}, {label: reason})`` - the
    paper's printed tables (all rows) and our runs, once per AdaFocal rule (each renamed
    ``adafocal``, the paper's key); ``runs`` None makes our evidence missing, with the reason."""
    return sides(p, runs)[:2]


def sides(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict, dict]:
    """:func:`evidence` and, third, our runs behind each of our labels as the noise tests read
    them (``{label: {row: RunEvidence}}``, :func:`.evidence.run_rows`)."""
    summaries = {"paper: Ghosh et al. (2022), Tables 1-10, all rows": ev.paper_evidence()}
    missing, rows = {}, {}
    trained = {m.key for m in p.methods["image"]}
    ours = ev.our_tables(p, runs) if runs is not None else None
    for rule in ADAFOCAL_KEYS:
        if runs is None:
            missing[f"ours ({RULE_NAMES[rule]}): {p.profile}"] = chapter.not_in_store(p.profile)
        elif rule not in trained:
            missing[f"ours ({RULE_NAMES[rule]}): {ev.evidence_label(runs)}"] = (
                f"{RULE_NAMES[rule]} is not among this plan's methods")
        else:
            label = f"ours ({RULE_NAMES[rule]}): {ev.evidence_label(runs)}"
            summaries[label] = ev.our_evidence(p, runs, ours, rule)
            rows[label] = ev.run_rows(runs, ours, rule)
    return summaries, missing, rows


def claims_log(p: cmp.Plan, runs: dict | None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`rules` on the paper's printed
    tables and on our runs of plan ``p``, once per AdaFocal rule (``runs`` None: "not
    tested"), the comparisons on our runs decided within their noise."""
    summaries, missing, rows = sides(p, runs)
    return chapter.chapter_log(PAPER, CHAPTER, rules(), summaries, missing, section=SECTION,
                               runs={k: v for k, v in rows.items() if v})


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained; the text row is left out when
    its runs are missing) and the paper's tables."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p, [g for g in p.groups if g != "text"])
    text = cmp.load(p, "text") if runs is not None and "text" in p.groups else None
    return claims_log(p, {**runs, **(text or {})} if runs is not None else None)
