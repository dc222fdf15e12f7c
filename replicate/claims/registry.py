"""One registry of every claim the book checks: theory and experiments, all five papers.

:data:`SOURCES` lists the package function that builds each chapter's claims
(``builder(profile) -> ClaimLog``), derived from the chapter folders rather than kept by
hand: each paper of :data:`replicate.papers.PAPERS` has its theory chapter
(``replicate.theory.<chapter>.claims:claims``, notebook ``theory_<chapter>``) and its
experiment chapter (``replicate.experiments.<chapter>.report:claims``, notebook
``exp_<chapter>``: the chapter's report, computed once and shared with the notebook), and the
leaderboard restates each paper's headline claim
(``replicate.experiments.leaderboard.report:claims_<paper key>``). Chapters call the same
function and show its table; ``replicate claims``, the claims ledger page and the tests read
the rows through :func:`collect`. Builders are imported lazily by name, so this module
imports nothing heavy and the theory and experiment modules never import it (imports point
one way).

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

from ..checks import positive_int
from ..papers import PAPERS, get_paper
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


def _experiment(chapter: str, name: str) -> str:
    """The builder of an experiment chapter: its report's (``report:<name>``), which computes
    the chapter's evidence once for the notebook and the registry."""
    return f"replicate.experiments.{chapter}.report:{name}"


def _sources() -> tuple[Source, ...]:
    """Every claim source, in book order: the five theory chapters, the five experiment
    chapters, then the leaderboard's five headline claims (papers in :data:`PAPERS` order)."""
    out = [Source(p.key, "theory", f"theory_{p.chapter}", f"replicate.theory.{p.chapter}.claims:claims")
           for p in PAPERS.values()]
    out += [Source(p.key, "experiment", f"exp_{p.chapter}", _experiment(p.chapter, "claims")) for p in PAPERS.values()]
    out += [Source(p.key, "experiment", "exp_leaderboard", _experiment("leaderboard", f"claims_{p.key}"))
            for p in PAPERS.values()]
    return tuple(out)


#: Every claim source of the book, in book order (derived from the chapter folders: add a
#: paper to :data:`replicate.papers.PAPERS` and its chapters' ``claims`` modules).
SOURCES: tuple[Source, ...] = _sources()


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


def _build_indexed(job: tuple) -> tuple:
    """``(indices, results)`` of :func:`_build_group` for a job ``(indices, group, profile)``."""
    idx, group, profile = job
    return idx, _build_group(group, profile)


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


#: Roughly how long each chapter's claims take to build from an empty cache (CPU seconds on
#: the 2-core machine, ``benchmarks/claims_speed.py``): only their order matters, to start
#: the longest first. Theory chapters take a few seconds each.
EXPECTED_SECONDS = {"exp_leaderboard": 27, "exp_fts": 23, "exp_fcl": 20, "exp_adafocal": 9, "exp_dual_focal": 7,
                    "exp_focal_loss": 3}


def expected_seconds(source: Source) -> float:
    """:data:`EXPECTED_SECONDS` of the source's chapter: 20 for another experiment chapter, 3
    for a theory chapter."""
    return EXPECTED_SECONDS.get(source.chapter, 20 if source.kind == "experiment" else 3)


def _warm(modules: list[str]) -> None:
    """Import the builder ``modules`` in a worker process (what :func:`build_frames` has its
    workers do while the caller's ``first`` runs)."""
    for m in modules:
        importlib.import_module(m)


def build_frames(srcs: list[Source], profile: str = "cpu", workers: int = 1, done=None, first=None) -> list:
    """The claims frame of each source of ``srcs``, in their order. With ``workers`` > 1 the
    builder modules run in that many processes (spawned, so no thread state is inherited);
    sources of one module share a process, as they share its in-process caches (the
    leaderboard evaluates its runs once for its five sources), the longest first
    (:func:`expected_seconds`). ``done(source, n_claims, seconds)`` is called as each source
    finishes. ``first()`` (e.g. the command's check of the run store) runs in this process
    before any source is built, while the worker processes start and import the builders."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    workers = positive_int("workers", workers)
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
        if first is not None:
            first()
        for idx in groups.values():
            record(idx, _build_group([srcs[i] for i in idx], profile))
        return frames
    import multiprocessing

    from ..processes import worker_env

    n_proc = min(workers, len(groups))
    before = {p.pid for p in multiprocessing.active_children()}
    with worker_env():                      # inherited: one compute thread each, glibc's allocator reusing memory
        pool = multiprocessing.get_context("spawn").Pool(n_proc)
    started = {p.pid for p in multiprocessing.active_children()} - before
    try:
        # the longest first (a free worker takes the next): the workers finish together
        order = sorted(groups.values(), key=lambda idx: -expected_seconds(srcs[idx[0]]))
        if first is not None:               # the workers start and import while this process runs first()
            modules = [srcs[idx[0]].builder.partition(":")[0] for idx in order]
            warming = [pool.apply_async(_warm, (modules[k::n_proc],)) for k in range(n_proc)]
            first()
            for w in warming:
                _wait(w.get, started)
        jobs = [(idx, [srcs[i] for i in idx], profile) for idx in order]
        got = pool.imap_unordered(_build_indexed, jobs)
        for _ in jobs:
            record(*_wait(got.next, started))
    finally:
        # every result is in (or one failed): the workers hold nothing more, so they are stopped
        # instead of left to tear down torch and their caches (a second of a cold ledger)
        pool.terminate()
        pool.join()
    return frames


def _wait(get, workers: set, poll: float = 1.0):
    """``get(timeout=poll)`` of a pool's result (an ``AsyncResult.get`` or an
    ``imap_unordered`` iterator's ``next``) until it comes. A pool replaces a worker that dies
    (killed, out of memory) and never returns its task, so the ``workers`` started with the
    pool (their process ids) are checked between tries: one of them gone raises
    ``RuntimeError`` instead of waiting for ever."""
    import multiprocessing

    while True:
        try:
            return get(timeout=poll)
        except multiprocessing.TimeoutError:
            alive = {p.pid for p in multiprocessing.active_children()}
            if not workers <= alive:
                raise RuntimeError("a worker process building the claims died (killed, or out of memory?) "
                                   "before returning its chapters; run again with --workers 1 to see why") from None


def larger_profiles(profile: str) -> tuple[str, ...]:
    """The profiles whose verdicts on our runs the ledger shows beside those of ``profile``
    (:func:`collect`'s ``beside``): the larger ones of :data:`PROFILES`, none beside
    ``smoke`` (the tests' profile, which must stay quick)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}; got {profile!r}")
    return () if profile == "smoke" else PROFILES[PROFILES.index(profile) + 1:]


def _ours_at(frame, profile: str):
    """The rows of an experiment claims frame decided on our runs at ``profile`` (not the
    rows that only say its runs are missing: those have no result)."""
    ours = frame.evidence.str.contains(rf"\bours: {profile}\b", regex=True)
    return frame[ours & (frame.result.astype(str) != "–")]


def collect(paper: str | None = None, kind: str | None = None, profile: str = "cpu", log=None,
            workers: int | None = None, beside=()):
    """Every registered claim (filtered by ``paper``, ``kind``) as one DataFrame with the
    columns of :data:`replicate.claims.log.COLUMNS`, in registry order. ``log(message)``
    (e.g. ``print``) reports each source as it is built, with its time; ``workers``
    processes build them (None: :func:`default_workers`; 1: in this process).

    ``beside`` (e.g. :func:`larger_profiles` of ``profile``): more profiles whose verdicts on
    our runs follow each experiment source's rows, where the store holds runs of that
    profile for the source (a chapter whose CIFAR-10 runs are at ``gpu`` adds its ``gpu``
    rows on CIFAR-10; the paper's rows are not repeated)."""
    import pandas as pd

    from .log import COLUMNS

    beside = check_beside(beside, profile)
    srcs = sources(paper, kind)
    done = (lambda s, n, sec: log(f"{s.paper} {s.kind} ({s.chapter}): {n} claims in {sec:.1f} s")) if log else None
    n_workers = default_workers() if workers is None else workers
    frames = add_beside(srcs, build_frames(srcs, profile, n_workers, done), beside, n_workers)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def check_beside(beside, profile: str) -> tuple[str, ...]:
    """``beside`` as a tuple of profiles of :data:`PROFILES` other than ``profile``; else a
    ValueError naming the parameter and the allowed values."""
    beside = (beside,) if isinstance(beside, str) else tuple(beside)
    bad = [b for b in beside if b not in PROFILES or b == profile]
    if bad:
        raise ValueError(f"beside must name profiles of {', '.join(PROFILES)} other than profile {profile!r}; "
                         f"got {bad}")
    return beside


def add_beside(srcs, frames: list, beside, workers: int = 1) -> list:
    """``frames`` (one per source of ``srcs``) with, after each experiment source's frame,
    its rows on our runs at each profile of ``beside`` that the store holds runs of
    (:func:`_ours_at`)."""
    if not beside:
        return frames
    exp = [i for i, s in enumerate(srcs) if s.kind == "experiment"]
    extra = {b: dict(zip(exp, build_frames([srcs[i] for i in exp], b, workers))) for b in beside}
    out = [part for i, f in enumerate(frames) for part in [f, *(_ours_at(extra[b][i], b) for b in beside if i in extra[b])]]
    return [f for f in out if len(f)]
