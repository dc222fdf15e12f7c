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


def _build_group(group: list[Source], profile: str) -> list[tuple]:
    """``(frame, seconds)`` of each source of ``group``, built one after the other in this
    process (a worker of :func:`build_frames`)."""
    out = []
    for s in group:
        t0 = time.perf_counter()
        out.append((build(s, profile).frame(), time.perf_counter() - t0))
    return out


def default_workers() -> int:
    """Worker processes for :func:`build_frames`: the usable CPU cores, at most 4."""
    import os

    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, n))


def build_frames(srcs: list[Source], profile: str = "cpu", workers: int = 1, done=None) -> list:
    """The claims frame of each source of ``srcs``, in their order. With ``workers`` > 1 the
    builder modules run in that many processes (spawned, so no thread state is inherited);
    sources of one module share a process, as they share its in-process caches (the
    leaderboard evaluates its runs once for its five sources). ``done(source, n_claims,
    seconds)`` is called as each source finishes."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1; got {workers!r}")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(srcs):
        groups.setdefault(s.builder.partition(":")[0], []).append(i)
    frames: list = [None] * len(srcs)

    def record(idx, results):
        for i, (frame, seconds) in zip(idx, results):
            frames[i] = frame
            if done:
                done(srcs[i], len(frame), seconds)

    if workers == 1 or len(groups) == 1:
        for idx in groups.values():
            record(idx, _build_group([srcs[i] for i in idx], profile))
        return frames
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(min(workers, len(groups)), mp_context=multiprocessing.get_context("spawn")) as pool:
        # the experiment chapters (the slow ones: they evaluate stored runs) start first
        order = sorted(groups.values(), key=lambda idx: srcs[idx[0]].kind != "experiment")
        futures = {pool.submit(_build_group, [srcs[i] for i in idx], profile): idx for idx in order}
        for fut in as_completed(futures):
            record(futures[fut], fut.result())
    return frames


def collect(paper: str | None = None, kind: str | None = None, profile: str = "cpu", log=None,
            workers: int | None = None):
    """Every registered claim (filtered by ``paper``, ``kind``) as one DataFrame with the
    columns of :data:`replicate.claims.log.COLUMNS`, in registry order. ``log(message)``
    (e.g. ``print``) reports each source as it is built, with its time; ``workers``
    processes build them (None: :func:`default_workers`; 1: in this process)."""
    import pandas as pd

    from .log import COLUMNS

    srcs = sources(paper, kind)
    done = (lambda s, n, sec: log(f"{s.paper} {s.kind} ({s.chapter}): {n} claims in {sec:.1f} s")) if log else None
    frames = build_frames(srcs, profile, default_workers() if workers is None else workers, done)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
