"""The leaderboard chapter, ``exp_leaderboard``: every training method of the five papers
trained under one protocol, evaluated under three post-hoc settings, with seeds, error
bars, rank intervals, paired tests, rank agreement with each paper, and each paper's
headline claim restated on the common protocol.

The methods (:data:`METHOD_KEYS`, from :data:`replicate.comparison.METHODS`): cross-entropy,
Brier, MMCE, LS-0.05, focal loss with gamma 1/2/3/5/7, FLS-531, FLSD-53 (Mukhoti et al.),
AdaFocal with both update rules (Ghosh et al.), inverse focal loss, Dual Focal Loss and
AdaDualFocal (Tao et al.), FCL (Liang et al.); focal temperature scaling (Komisarenko &
Kull) is one of the three post-hoc settings of :mod:`.report`.

Runs are shared with the experiment chapters (same configuration, same key); a run another
chapter trained with per-epoch records stands in for the same run without them
(:func:`replicate.comparison.plan.reuse_finished`). Paper-specific choices live here as
data read from :mod:`replicate.paper_tables`: which printed column each paper's ranking is
read from (:data:`AGREEMENT_COLUMNS`), which printed method is not ours (:data:`EXCLUDED`),
and each paper's headline table (:data:`HEADLINE`). The evaluation, the rank intervals, the
rank agreement and the claims' verdicts are in :mod:`.report`, the claims in :mod:`.claims`,
the tables and texts of the prose in :mod:`.views`, the figures in :mod:`.figures`.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...comparison import chapter

CHAPTER = "exp_leaderboard"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = "Headline claims on the common protocol"
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "fl1", "fl2", "fl3", "fl5", "fl7", "fls531", "flsd53",
               "adafocal_paper", "adafocal_code", "inverse_focal", "dual_focal", "adadual_focal", "fcl")
#: The methods trained at the ``smoke`` profile: enough for every table, figure and statistic to run.
SMOKE_METHODS = ("cross_entropy", "fl3", "flsd53")
SEEDS = (1, 2, 3)
#: paper -> (its method's printed key, the table of its headline comparison on CIFAR-10 ResNet-50)
HEADLINE = {"mukhoti2020": ("flsd53", "1"), "ghosh2022": ("adafocal", "1"), "tao2023": ("dual_focal", "1"),
            "liang2024": ("fcl", "1")}
#: paper -> printed columns compared with ours: (label, paper metric, post-T?, paper setting, our setting, our metric)
AGREEMENT_COLUMNS = {
    **{p: (("pre-T ECE", "ece", False, "", "none", "ece"), ("post-T ECE", "ece", True, "", "ts", "ece"))
       for p in ("mukhoti2020", "ghosh2022", "tao2023", "liang2024")},
    "komisarenko2024": (("post-TS equal-mass ECE", "adaece", True, "posthoc=ts,select=adaece", "ts", "adaece"),
                        ("post-FTS equal-mass ECE", "adaece", True, "posthoc=fts,select=adaece", "fts", "adaece")),
}
#: paper -> printed method keys that stand for none of our methods (the reason is the paper table's note)
EXCLUDED = {"komisarenko2024": ("adafocal",)}
#: The FTS paper's claim: FTS lowers the ECE of every model of its Table 1 (read from its TS rows).
FTS_PAPER, FTS_SETTING = "komisarenko2024", "posthoc=ts,select=adaece"


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all of :data:`METHOD_KEYS`."""
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=SEEDS, methods=None,
         device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    One group, ``image``: every method of ``methods`` (None: :func:`default_methods`; any
    method of the catalogue :data:`replicate.comparison.METHODS` may be added) at every seed, on ``dataset`` with ``model`` (None: the profile's network). A run another chapter
    trained with per-epoch records is reused. Each bad parameter raises a ValueError naming
    it and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile
    from ...runs import dataset_kind

    prof = get_profile(profile)
    seeds = cmp.check_seeds(seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods)
    if len(chosen) < 2:
        raise ValueError(f"methods must name at least two methods to rank; got {methods!r}")
    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set; got {dataset!r}")
    dev = str(training.select_device(device))
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    p.add("image", chosen, cmp.reuse_finished(cmp.configs(chosen, dataset, model, prof.name, seeds)))
    return p
