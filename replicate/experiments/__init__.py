"""Each experiment chapter in code: one folder per chapter, named as its notebook
(``exp_<name>``), each with the same modules (the chapter contract,
:mod:`replicate.comparison.chapter`):

- :mod:`.focal_loss` -- ``exp_focal_loss`` (Mukhoti et al. 2020).
- :mod:`.adafocal` -- ``exp_adafocal`` (Ghosh et al. 2022).
- :mod:`.dual_focal` -- ``exp_dual_focal`` (Tao et al. 2023).
- :mod:`.fcl` -- ``exp_fcl`` (Liang et al., Focal Calibration Loss).
- :mod:`.fts` -- ``exp_fts`` (Komisarenko & Kull 2024, focal temperature scaling).
- :mod:`.leaderboard` -- ``exp_leaderboard`` (every method of the five papers, one protocol).

A chapter's ``plan`` module provides ``plan(**parameters) -> replicate.comparison.Plan``,
whose keywords are exactly the chapter's ``parameters`` cell (so ``replicate sweep`` and
``replicate book`` can plan a chapter from its parameters without executing it); its
``claims`` module provides ``claims(profile) -> replicate.claims.ClaimLog``, found by the
claims registry from the folder name, which reads the chapter's runs from the store and
never trains.
"""
from __future__ import annotations

import importlib
import inspect

from .. import lazy_submodules
from ..papers import PAPERS

#: chapter (notebook name) -> folder of this package that plans it: one per paper (named by
#: the paper's chapter, :data:`replicate.papers.PAPERS`) and the leaderboard
CHAPTERS = {**{f"exp_{p.chapter}": p.chapter for p in PAPERS.values()}, "exp_leaderboard": "leaderboard"}


def chapter_module(chapter: str):
    """The ``plan`` module of ``chapter``; ValueError lists the chapters that train."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter {chapter!r} trains nothing or is unknown; chapters that train: "
                         f"{', '.join(CHAPTERS)}")
    return importlib.import_module(f"{__name__}.{CHAPTERS[chapter]}.plan")


def plan_parameters(chapter: str) -> list[str]:
    """The keywords of the chapter's plan function (= its parameters cell's names)."""
    return list(inspect.signature(chapter_module(chapter).plan).parameters)


def chapter_plan(chapter: str, **parameters):
    """The validated :class:`replicate.comparison.Plan` of ``chapter`` for ``parameters``
    (any subset of its parameters; the rest take the plan function's defaults, which equal
    the chapter's)."""
    allowed = plan_parameters(chapter)
    unknown = [k for k in parameters if k not in allowed]
    if unknown:
        raise ValueError(f"chapter {chapter!r}: unknown parameter(s) {unknown}; allowed: {', '.join(allowed)}")
    return chapter_module(chapter).plan(**parameters)


__getattr__, __dir__ = lazy_submodules(__name__, __path__, ("CHAPTERS", "chapter_module", "plan_parameters",
                                                            "chapter_plan"))
