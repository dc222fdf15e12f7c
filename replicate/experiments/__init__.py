"""Each experiment chapter in code: the runs it plans and the paper's conclusions as rules.

One module per chapter, built on the shared machinery of :mod:`replicate.comparison`:

- :mod:`.mukhoti` -- ``exp_focal_loss`` (Mukhoti et al. 2020).
- :mod:`.adafocal` -- ``exp_adafocal`` (Ghosh et al. 2022).
- :mod:`.dual_focal` -- ``exp_dual_focal`` (Tao et al. 2023).
- :mod:`.fcl` -- ``exp_fcl`` (Liang et al., Focal Calibration Loss).
- :mod:`.fts` -- ``exp_fts`` (Komisarenko & Kull 2024, focal temperature scaling).
- :mod:`.leaderboard` -- ``exp_leaderboard`` (every method of the five papers, one protocol).

A chapter module provides ``plan(**parameters) -> replicate.comparison.Plan``, whose
keywords are exactly the chapter's ``parameters`` cell (so ``replicate sweep`` and
``replicate book`` can plan a chapter from its parameters without executing it), and
``claims(profile) -> replicate.claims.ClaimLog`` (registered in
:data:`replicate.claims.SOURCES`), which reads the chapter's runs from the store and never
trains.

A chapter too large for one module is split, with imports pointing one way: ``X.py`` (the
chapter's constants and :func:`plan`; imports no ``X_*`` module) <- ``X_evidence``,
``X_rules``, ``X_figure_rules`` (the numbers the claims read, and the rules) <-
``X_claims`` (``evidence``, ``claims_log``, ``claims``: the registered builder). Views and
tables (``X_views``, ``X_tables``, ``X_report``) import the chapter and its evidence, never
the claims. Split so: :mod:`.adafocal`, :mod:`.dual_focal`, :mod:`.fcl`, :mod:`.fts`. Dual
Focal Loss has more rules than one module holds: :mod:`.dual_focal_rules` (main text) and
:mod:`.dual_focal_appendix_rules`, both on the thresholds and helpers of
:mod:`.dual_focal_terms`.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect

#: chapter (notebook name) -> module of this package that plans it
CHAPTERS = {"exp_focal_loss": "mukhoti",
            "exp_adafocal": "adafocal",
            "exp_dual_focal": "dual_focal",
            "exp_fcl": "fcl",
            "exp_fts": "fts",
            "exp_leaderboard": "leaderboard"}


def chapter_module(chapter: str):
    """The module that plans ``chapter``; ValueError lists the chapters that train."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter {chapter!r} trains nothing or is unknown; chapters that train: "
                         f"{', '.join(CHAPTERS)}")
    return importlib.import_module(f"{__name__}.{CHAPTERS[chapter]}")


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


def __getattr__(name: str):
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'replicate.experiments' has no attribute {name!r}")
