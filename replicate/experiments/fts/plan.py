"""The experiment chapter of Komisarenko & Kull (2024), ``exp_fts``: focal temperature
scaling (FTS) against temperature scaling (TS) on the models of Sec. 5.1 - its constants and
:func:`plan`.

Models (Sec. 5.1): cross-entropy, focal loss with gamma_tr 1, 2, 3, 5, 7, FLSD-53 and
AdaFocal. The paper's "AdaFocal" was focal loss with gamma 1 in effect (the book's page "The authors' code", its defects); we train both AdaFocal rules of the catalogue (``adafocal_code``,
``adafocal_paper``) and set the paper's AdaFocal row beside each, with that note. Every
model is calibrated post hoc by :func:`replicate.comparison.evaluate_posthoc`: TS and FTS
(gamma_ev grid of Sec. 5.1) on one temperature grid, chosen by validation log-loss for the
log-loss column and by validation equal-mass ECE (15 bins, the paper's "ECE") for the ECE
column.

The chapter's other modules: :mod:`.claims` (the paper's conclusions, Sec. 4.1, 5.2, 6 and
Fig. 8, each with its test), :mod:`.report` (everything computed from the plan and runs,
once: the fits, the evidence of both sides, the verdicts, the link and grid comparisons),
:mod:`.views` (what the chapter shows) and :mod:`.figures` (its figures).
"""
from __future__ import annotations

from ... import comparison as cmp
from ...comparison import chapter
from ..focal_loss.plan import HISTORY_METHODS


PAPER = "komisarenko2024"
CHAPTER = "exp_fts"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = chapter.SECTION
METHOD_KEYS = ("cross_entropy", "fl1", "fl2", "fl3", "fl5", "fl7", "flsd53", "adafocal_code", "adafocal_paper")
#: focal-loss models and their training gamma (gamma_tr)
GAMMA_TR = {"fl1": 1.0, "fl2": 2.0, "fl3": 3.0, "fl5": 5.0, "fl7": 7.0}
#: The methods trained at the ``smoke`` profile: enough for every table, figure and verdict to run.
SMOKE_METHODS = ("cross_entropy", "fl1", "fl3")
SEEDS = (1, 2, 3)
SMOKE_SEEDS = (1, 2)
T_GRIDS = tuple(cmp.GRIDS)
#: the paper's note beside every AdaFocal row
ADAFOCAL_NOTE = ("FTS's own 'AdaFocal' was focal loss with gamma 1 in effect: the authors' code rebuilds the "
                 "AdaFocal loss every batch, so its gammas never leave 1 (see the book's page on the authors' code)")
#: Data the paper uses that is not available offline: data set -> reason.
UNREACHABLE = {
    "cifar100": "CIFAR-100 is not in the offline data directory; the loader exists (replicate.data.DATASETS), "
                "so plan(dataset='cifar100') trains it once the archive is there",
    "tiny_imagenet": "TinyImageNet is not in the offline data directory; the loader exists, "
                     "plan(dataset='tiny_imagenet') trains it once the archive is there",
}


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all of :data:`METHOD_KEYS`."""
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def default_seeds(profile: str) -> tuple[int, ...]:
    """:data:`SMOKE_SEEDS` at ``smoke``, else :data:`SEEDS` (the paper: 5 seeds)."""
    return chapter.at_profile(profile, SMOKE_SEEDS, SEEDS)


def check_grid(grid) -> str:
    """``grid`` as one of :data:`T_GRIDS` ("code": 0.05..5.00, "paper": 0.01..5.00, "ts": 0.1..10.0)."""
    if grid not in T_GRIDS:
        raise ValueError(f"grid must be one of {', '.join(T_GRIDS)}; got {grid!r}")
    return grid


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=None, methods=None,
         grid: str = "code", device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    One group, ``image``. ``seeds`` None: :func:`default_seeds`; ``methods`` None:
    :func:`default_methods`; ``grid``: the temperature grid of the tables (:func:`check_grid`;
    it changes no run). Each bad parameter raises a ValueError naming it and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile
    from ...runs import dataset_kind

    prof = get_profile(profile)
    seeds = cmp.check_seeds(default_seeds(prof.name) if seeds is None else seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    check_grid(grid)
    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set (the paper's are CIFAR-10/100 and TinyImageNet); "
                         f"got {dataset!r}")
    dev = str(training.select_device(device))
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    # the Mukhoti chapter's runs of these methods record per-epoch metrics: the same options make the same runs
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=HISTORY_METHODS)
    p.add("image", chosen, image)
    p.references[dataset] = cmp.paper_reference(dataset, next(iter(image.values())).resolve()["model"], PAPER)
    return p
