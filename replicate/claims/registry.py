"""One registry of every claim the book checks: theory and experiments, all five papers.

:data:`SOURCES` lists, once, the package function that builds each chapter's claims
(``builder(profile) -> ClaimLog``). Chapters call the same function and show its table;
``replicate claims``, the claims ledger page and the tests read the rows through
:func:`collect`. Builders are imported lazily by name, so this module imports nothing
heavy and the theory and experiment modules never import it (imports point one way).

A theory builder computes its checks at the grid sizes of ``profile`` (``smoke`` for
tests, ``cpu`` by default: the whole registry in under a minute on a laptop CPU;
``paper`` for larger grids). An experiment builder never trains: it reads the chapter's
runs of ``profile`` from the run store (verdicts on our runs are ``not tested`` when they
are missing) and the paper's printed tables.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass

from ..papers import get_paper
from .log import KINDS, ClaimLog

PROFILES = ("smoke", "cpu", "gpu", "paper")


@dataclass(frozen=True)
class Source:
    """The claims of ``paper`` of ``kind`` decided in chapter ``chapter`` (notebook name),
    built by ``builder`` ("module:function", called with ``profile``)."""

    paper: str
    kind: str
    chapter: str
    builder: str

    def load(self):
        module, _, name = self.builder.partition(":")
        return getattr(importlib.import_module(module), name)


#: Every claim source of the book, in book order. Add a chapter's builder here, once.
SOURCES: tuple[Source, ...] = (
    Source("mukhoti2020", "theory", "theory_focal_loss", "replicate.theory.focal_claims:claims"),
    Source("ghosh2022", "theory", "theory_adafocal", "replicate.theory.adafocal_claims:claims"),
    Source("tao2023", "theory", "theory_dual_focal", "replicate.theory.dual_focal_claims:claims"),
    Source("liang2024", "theory", "theory_fcl", "replicate.theory.fcl_claims:claims"),
    Source("komisarenko2024", "theory", "theory_fts", "replicate.theory.fts_claims:claims"),
    Source("mukhoti2020", "experiment", "exp_focal_loss", "replicate.experiments.mukhoti:claims"),
    Source("ghosh2022", "experiment", "exp_adafocal", "replicate.experiments.adafocal_claims:claims"),
    Source("tao2023", "experiment", "exp_dual_focal", "replicate.experiments.dual_focal_claims:claims"),
    Source("liang2024", "experiment", "exp_fcl", "replicate.experiments.fcl_claims:claims"),
    Source("komisarenko2024", "experiment", "exp_fts", "replicate.experiments.fts_claims:claims"),
    *(Source(p, "experiment", "exp_leaderboard", f"replicate.experiments.leaderboard:claims_{p}")
      for p in ("mukhoti2020", "ghosh2022", "tao2023", "liang2024", "komisarenko2024")),
)


def sources(paper: str | None = None, kind: str | None = None) -> list[Source]:
    """The registered sources, filtered by ``paper`` and ``kind`` (None: all)."""
    if paper is not None:
        get_paper(paper)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return [s for s in SOURCES if paper in (None, s.paper) and kind in (None, s.kind)]


def build(source: Source, profile: str = "cpu") -> ClaimLog:
    """The claims of one source at ``profile``; checks the builder returned a log of the
    source's paper, chapter and kind."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    log = source.load()(profile=profile)
    if not isinstance(log, ClaimLog):
        raise TypeError(f"{source.builder} returned {type(log).__name__}, not a ClaimLog")
    if (log.paper, log.chapter, log.kind) != (source.paper, source.chapter, source.kind):
        raise ValueError(f"{source.builder} built claims of {log.paper}/{log.chapter}/{log.kind}, registered as "
                         f"{source.paper}/{source.chapter}/{source.kind}")
    return log


def collect(paper: str | None = None, kind: str | None = None, profile: str = "cpu", log=None):
    """Every registered claim (filtered by ``paper``, ``kind``) as one DataFrame with the
    columns of :data:`replicate.claims.log.COLUMNS`. ``log(message)`` (e.g. ``print``)
    reports each source as it is built, with its time."""
    import pandas as pd

    from .log import COLUMNS

    frames = []
    for s in sources(paper, kind):
        t0 = time.perf_counter()
        frames.append(build(s, profile).frame())
        if log:
            log(f"{s.paper} {s.kind} ({s.chapter}): {len(frames[-1])} claims in {time.perf_counter() - t0:.1f} s")
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
