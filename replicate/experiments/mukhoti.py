"""The experiment chapter of Mukhoti et al. (2020), ``exp_focal_loss``: its methods, its
plan, and the paper's conclusions (Sec. 5-6) as rules.

The eleven methods of Sec. 5 and Appendix E: cross-entropy, Brier score, MMCE (lambda 2 on
images, 8 on text, Appendix D), label smoothing 0.05, focal loss with gamma 1/2/3,
scheduled FLS-531/532 and the sample-dependent FLSD-53/532 (the paper's FLA-53/532).
"""
from __future__ import annotations

from .. import comparison as cmp
from ..claims import ClaimLog, untested

PAPER = "mukhoti2020"
CHAPTER = "exp_focal_loss"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = "Verdict"
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "fl1", "fl2", "fl3", "fls531", "fls532", "flsd53",
               "flsd532")
FOCAL_KEYS = ("fl1", "fl2", "fl3", "fls531", "fls532", "flsd53", "flsd532")
#: Methods whose image runs record metrics after every epoch (Figures 1, 3 and 4 read them).
HISTORY_METHODS = ("cross_entropy", "fl1", "fl2", "fl3")
#: Methods of Appendix F (qualitative results).
QUALITATIVE_METHODS = ("cross_entropy", "brier", "mmce", "flsd53")
#: The methods trained at the ``smoke`` profile: enough for every table, figure and verdict to run.
SMOKE_METHODS = ("cross_entropy", "fl3", "flsd53")


def default_methods(profile: str) -> tuple[str, ...]:
    """The methods the chapter trains at ``profile``: :data:`SMOKE_METHODS` at ``smoke``, else all eleven."""
    from ..profiles import get_profile

    return SMOKE_METHODS if get_profile(profile).name == "smoke" else METHOD_KEYS


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=(1,), methods=None,
         text_dataset: str | None = "20newsgroups", device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    Groups: ``image`` (``dataset``) and ``text`` (``text_dataset``; None skips it).
    ``methods`` None takes :func:`default_methods` of the profile. Each bad parameter raises
    a ValueError naming it and the allowed values.
    """
    from .. import training
    from ..profiles import get_profile

    prof = get_profile(profile)
    seeds = cmp.check_seeds(seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    dev = str(training.select_device(device))
    cmp.check_datasets(dataset, text_dataset)
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=HISTORY_METHODS)
    cmp.add_referenced(p, "image", chosen, image, PAPER)
    if text_dataset is not None:
        text = cmp.configs(chosen, text_dataset, None, prof.name, seeds)
        cmp.add_referenced(p, "text", chosen, text, PAPER)
    return p


# ----------------------------------------------------------------------------- the paper's conclusions
def _focal_beats_ce(summ):
    ece = cmp.present(summ)
    if not {"cross_entropy", "flsd53"} <= set(ece):
        return "–", None
    focal = [k for k in FOCAL_KEYS if k in ece]
    n_below = sum(ece[k] < ece["cross_entropy"] for k in focal)
    return (f"ECE %: CE {ece['cross_entropy']:.2f}, FLSD-53 {ece['flsd53']:.2f}; {n_below} of {len(focal)} focal "
            f"variants below CE", ece["flsd53"] < ece["cross_entropy"])


def _t_near_one(t_tolerance):
    def rule(summ):
        temps = {k: t for k, t in cmp.present(summ, "ece", True, "T").items() if k in FOCAL_KEYS}
        if "flsd53" not in temps:
            return "–", None
        near = [k for k, t in temps.items() if abs(t - 1) <= t_tolerance + 1e-9]   # grid values like 1.1
        return (f"T: FLSD-53 {temps['flsd53']:.1f}; {len(near)} of {len(temps)} focal variants within "
                f"{t_tolerance:g} of 1", "flsd53" in near)
    return rule


def _ce_needs_larger_t(summ):
    temps = cmp.present(summ, "ece", True, "T")
    if not {"cross_entropy", "flsd53"} <= set(temps):
        return "–", None
    return (f"T: CE {temps['cross_entropy']:.1f}, FLSD-53 {temps['flsd53']:.1f}",
            temps["cross_entropy"] > temps["flsd53"])


def _flsd53_best_focal(summ):
    best = {}
    for scaled in (False, True):
        key, ece = cmp.lowest(summ, "ece", scaled, among=FOCAL_KEYS)
        best[scaled] = (key, len(ece)) if len(ece) >= 2 and "flsd53" in ece else None
    if best[False] is None or best[True] is None:
        return "–", None
    return (f"lowest ECE of {best[False][1]} focal variants: {cmp.short(best[False][0])} pre T, "
            f"{cmp.short(best[True][0])} post T", best[False][0] == best[True][0] == "flsd53")


def _keeps_confidence(min_s99):
    def rule(summ):
        s99 = cmp.present(summ, "s99_fraction", True)
        if not {"cross_entropy", "flsd53"} <= set(s99):
            return "–", None
        numbers = f"|S99| % post T: CE {s99['cross_entropy']:.2f}, FLSD-53 {s99['flsd53']:.2f}"
        ce_pre = cmp.value(summ, "cross_entropy", "s99_fraction", False)
        if ce_pre < min_s99:   # NaN (pre-T |S99| not in the frame) does not block the test
            return numbers, untested(f"only {ce_pre:.2f} % of CE's predictions reach 0.99 before TS "
                                     f"(< {min_s99:g} %): no confident model to compare")
        return numbers, s99["flsd53"] > s99["cross_entropy"]
    return rule


def rules(t_tolerance: float = 0.1, min_s99: float = 1.0) -> tuple[cmp.Claim, ...]:
    """The conclusions of Mukhoti et al. (2020), Sec. 5-6, as rules. "Near 1" means
    ``|T - 1| <= t_tolerance`` (the paper: "mostly lying between 0.9 and 1.1"). The |S99|
    claim is about models confident before temperature scaling (cross-entropy: 96 % of the
    test set in Table 6); it is "not tested" when cross-entropy puts less than ``min_s99``
    percent of the test set at confidence >= 0.99 before TS."""
    for name, v in (("t_tolerance", t_tolerance), ("min_s99", min_s99)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return (
        cmp.Claim("Focal loss (FLSD-53) has a lower test ECE than cross-entropy", "Sec. 6, Tables 1, 7",
                  _focal_beats_ce, "pre-T ECE of FLSD-53 vs cross-entropy"),
        cmp.Claim("The optimal T of the focal-loss model FLSD-53 is near 1", "Sec. 6", _t_near_one(t_tolerance),
                  f"|T - 1| <= {t_tolerance:g} for FLSD-53 (T by validation ECE)"),
        cmp.Claim("Cross-entropy needs a larger optimal T than FLSD-53", "Sec. 6, Table 1", _ce_needs_larger_t,
                  "optimal T (validation ECE) of cross-entropy vs FLSD-53"),
        cmp.Claim("FLSD-53 is the best focal variant (lowest ECE before and after TS)", "Sec. 5-6, Table 7",
                  _flsd53_best_focal, "lowest pre-T and post-T ECE among the focal variants"),
        cmp.Claim("After TS, FLSD-53 keeps more confident predictions (larger |S99|) than cross-entropy",
                  "Sec. 6, Table 6", _keeps_confidence(min_s99),
                  f"post-T |S99| of FLSD-53 vs cross-entropy (tested when CE's pre-T |S99| >= {min_s99:g} %)"),
    )


def evidence(p: cmp.Plan, runs: dict | None) -> tuple[dict, dict]:
    """The numbers the claims are tested on: ``({label: summary}, {label: reason})`` - our
    runs of each group (evaluated from their logits) and the paper's reference rows;
    ``runs`` None (not in the store) makes our evidence missing, with the reason."""
    summaries, missing = {}, {}
    for group, dataset in (("image", next(iter(p.image.values())).dataset),
                           ("text", next(iter(p.text.values())).dataset if p.text else None)):
        if dataset is None:
            continue
        ref = p.references[dataset]
        if runs is not None:
            summaries[cmp.evidence_label(runs[group])] = cmp.summarise(cmp.evaluate_runs(runs[group]))
        else:
            missing[f"ours: {p.profile}, {dataset}"] = (f"the chapter's {p.profile} runs are not in the run store "
                                                        f"(execute the chapter at that profile)")
        if ref.found:
            summaries[f"paper: {ref.note}"] = cmp.paper_values(ref)
    return summaries, missing


def claims_log(summaries: dict, missing: dict | None = None) -> ClaimLog:
    """The chapter's claims table from ``evidence``'s output."""
    log = ClaimLog(PAPER, CHAPTER, kind="experiment", section=SECTION)
    return cmp.log_claims(log, rules(), summaries, missing)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained) and the paper's rows."""
    p = plan(profile, device="cpu")
    return claims_log(*evidence(p, cmp.load(p)))
