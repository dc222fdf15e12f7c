"""The experiment chapter of Mukhoti et al. (2020), ``exp_focal_loss``: its methods and its
plan (:func:`plan`). The paper's conclusions (Sec. 5-6), each with its test, are in
:mod:`.claims`; :mod:`.report` computes the chapter's evidence and verdicts once.

The eleven methods of Sec. 5 and Appendix E: cross-entropy, Brier score, MMCE (lambda 2 on
images, 8 on text, Appendix D), label smoothing 0.05, focal loss with gamma 1/2/3,
scheduled FLS-531/532 and the sample-dependent FLSD-53/532 (the paper's FLA-53/532).
"""
from __future__ import annotations

from ... import comparison as cmp
from ...comparison import chapter

PAPER = "mukhoti2020"
CHAPTER = "exp_focal_loss"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = chapter.SECTION
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
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=(1,), methods=None,
         text_dataset: str | None = "20newsgroups", device: str | None = "auto",
         text_profile: str | None = None) -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    Groups: ``image`` (``dataset``) and ``text`` (``text_dataset``; None skips it), the text
    group at ``text_profile`` (None: ``profile``; the book shows the image rows at ``gpu`` and
    the text rows at ``cpu`` while the text runs wait for a GPU loan of their own).
    ``methods`` None takes :func:`default_methods` of the profile. Each bad parameter raises
    a ValueError naming it and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile

    prof = get_profile(profile)
    seeds = cmp.check_seeds(seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    dev = str(training.select_device(device))
    cmp.check_datasets(dataset, text_dataset)
    text_prof = cmp.check_text_profile(text_profile, prof.name)
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=HISTORY_METHODS)
    cmp.add_referenced(p, "image", chosen, image, PAPER)
    if text_dataset is not None:
        text = cmp.configs(chosen, text_dataset, None, text_prof, seeds)
        cmp.add_referenced(p, "text", chosen, text, PAPER)
        if text_prof != prof.name:
            p.profiles["text"] = text_prof
    return p
