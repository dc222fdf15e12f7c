"""The global GPU queue: every run the experiment chapters plan at a profile, in the order
a GPU loan should train them (issue #20).

GPU machines are lent rarely and briefly (15 minutes of device time, by chance), so the
runs that unblock the most of the book come first:

====  ===========================================================================
step  runs
====  ===========================================================================
a     cross-entropy pilot: the leaderboard's cross-entropy run (seed 1); it also says
      whether the profile is in the papers' regime (test error, ECE before scaling)
b     the Mukhoti chapter's CIFAR-10 methods (``exp_focal_loss``), seed 1
c     the other chapters' main tables at seed 1 (``image`` and ``history`` groups of
      AdaFocal - both update rules -, Dual Focal Loss - with inverse focal -, FCL, FTS
      and the leaderboard - AdaDualFocal -)
d     20 Newsgroups runs of every chapter
e     seeds 2 and 3 of the leaderboard's methods
f     everything else the chapters plan (ablations, more seeds)
====  ===========================================================================

A run planned by several chapters (the same configuration has the same key everywhere)
is queued once, at its earliest step. Each chapter is planned with its own parameters
cell's defaults (:func:`replicate.sweep.plan.sweep_plan`), so the queue holds exactly what
the chapters will load. :func:`sizing` turns the queue into device time from the measured
throughput in :data:`replicate.profiles.GPU_SIZING`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: The queue's steps in priority order, each with its meaning.
STEPS = {
    "a": "cross-entropy pilot (the leaderboard's cross-entropy, seed 1)",
    "b": "the Mukhoti chapter's CIFAR-10 methods, seed 1",
    "c": "the other chapters' main CIFAR-10 tables, seed 1",
    "d": "20 Newsgroups runs",
    "e": "seeds 2 and 3 of the leaderboard's methods",
    "f": "everything else (ablations, more seeds)",
}
#: Chapters whose main tables are step c (the Mukhoti chapter is step b).
OTHER_CHAPTERS = ("exp_adafocal", "exp_dual_focal", "exp_fcl", "exp_fts", "exp_leaderboard")
MAIN_GROUPS = ("image", "history")
TEXT_DATASETS = ("20newsgroups",)


@dataclass(frozen=True)
class Item:
    """One queued run: its step, the first chapter (group, method) that plans it, and its configuration."""

    step: str
    chapter: str
    group: str
    method: str
    seed: int
    config: object

    @property
    def key(self) -> str:
        return self.config.key


def check_steps(steps: str) -> str:
    """``steps`` (e.g. "abc") validated: letters of :data:`STEPS`, each once; ValueError otherwise."""
    if not isinstance(steps, str) or not steps or any(s not in STEPS for s in steps) or len(set(steps)) != len(steps):
        raise ValueError(f"steps must be distinct letters of {''.join(STEPS)} (e.g. 'abc'); got {steps!r}")
    return "".join(s for s in STEPS if s in steps)


def step_of(chapter: str, group: str, method: str, seed: int, dataset: str) -> str:
    """The queue step of one planned run (see the module docstring)."""
    if dataset in TEXT_DATASETS:
        return "d"
    if chapter == "exp_leaderboard" and method == "cross_entropy" and seed == 1:
        return "a"
    if seed == 1 and group in MAIN_GROUPS:
        if chapter == "exp_focal_loss":
            return "b"
        if chapter in OTHER_CHAPTERS:
            return "c"
    if chapter == "exp_leaderboard" and seed in (2, 3):
        return "e"
    return "f"


def build(profile: str = "gpu", steps: str = "abcdef", chapters=None) -> list[Item]:
    """Every distinct run the chapters plan at ``profile``, ordered by step, then chapter
    and plan order; only the ``steps`` asked for. Nothing trains."""
    from .. import experiments
    from ..sweep.plan import sweep_plan

    steps = check_steps(steps)
    names = list(experiments.CHAPTERS) if chapters is None else list(chapters)
    found: dict[str, Item] = {}
    for chapter in names:
        _, _, plan = sweep_plan(chapter, {}, profile)
        for group, cfgs in plan.groups.items():
            for (method, seed), cfg in cfgs.items():
                item = Item(step_of(chapter, group, method, seed, cfg.dataset), chapter, group, method, seed, cfg)
                old = found.get(cfg.key)
                if old is None or item.step < old.step:
                    found[cfg.key] = item
    order = {s: i for i, s in enumerate(STEPS)}
    items = sorted(found.values(), key=lambda it: order[it.step])      # stable: chapter and plan order kept
    return [it for it in items if it.step in steps]


def missing(items) -> list[Item]:
    """The items whose run is finished in neither store (results, cache)."""
    from ..runs import find

    return [it for it in items if find(it.config) is None]


def stale(profile: str) -> list[str]:
    """Keys of the committed runs (``results/``) at ``profile`` that no chapter plans at its
    default parameters - e.g. every old run after the profile's settings change. The ``gpu``
    profile's cross-entropy pilot (:func:`replicate.protocol.gpu_pilot`, the evidence for the
    profile's network and length) is never stale."""
    from ..runs import list_runs

    planned = {it.key for it in build(profile)}
    if profile == "gpu":
        from ..protocol import gpu_pilot

        planned |= set(gpu_pilot()["key"])
    frame = list_runs("results")
    return sorted(k for k in frame.loc[frame["profile"] == profile, "key"] if k not in planned)


def assumptions(**override) -> dict:
    """:data:`replicate.profiles.GPU_SIZING` with ``override`` on top (ValueError on unknown names)."""
    from ..profiles import GPU_SIZING

    unknown = sorted(set(override) - set(GPU_SIZING))
    if unknown:
        raise ValueError(f"unknown sizing assumption(s) {unknown}; allowed: {', '.join(GPU_SIZING)}")
    return {**GPU_SIZING, **override}


def epoch_cost(item: Item, a: dict | None = None) -> float:
    """Training epochs of the run, in units of one plain training epoch: per-epoch metrics
    (``eval_every_epoch``) and the adaptive losses' validation pass add their share."""
    a = a or assumptions()
    train = item.config.resolve()["train"]
    extra = a["history_share"] if train["eval_every_epoch"] else 0.0
    if item.config.loss in a["validating_losses"]:
        extra += a["validation_share"]
    return train["epochs"] * (1.0 + extra)


def estimate_seconds(item: Item, workers: int, mps: bool = True, a: dict | None = None) -> float:
    """Wall seconds of one run while ``workers`` runs share one GPU, from the measured
    aggregate throughput (:data:`replicate.profiles.GPU_SIZING`, or ``a``)."""
    a = a or assumptions()
    resolved = item.config.resolve()
    if resolved["kind"] == "text":
        return resolved["train"]["epochs"] * a["text_seconds_per_epoch"] + a["run_overhead_seconds"]
    rate = a["images_per_second_mps" if mps else "images_per_second"]
    n = resolved["n_train"] or a["train_images"]
    per_epoch = n * max(1, workers) / rate        # each of k runs gets 1/k of the aggregate throughput
    return epoch_cost(item, a) * per_epoch + a["run_overhead_seconds"]


def sizing(items, workers: int | None = None, mps: bool = True, **override) -> dict:
    """Device time of ``items`` (runs to train) at the measured throughput, and the loans it takes.

    ``override`` replaces :data:`replicate.profiles.GPU_SIZING` entries (ValueError on
    unknown names). A loan's usable seconds are its device time less the machine start,
    the engine check, packing and the start of a second command; each loan also loses
    about half a run per worker that cannot finish before the loan ends.
    """
    a = assumptions(**override)
    k = workers or a["workers"]
    runs = [estimate_seconds(it, k, mps, a) for it in items]
    work = sum(runs) / k                                        # k runs at once
    usable = a["loan_seconds"] - a["loan_overhead_seconds"]
    per_loan = max(usable - 0.5 * (max(runs) if runs else 0.0), 1.0)
    return {"runs": len(runs), "workers": k, "mps": mps, "seconds": work, "usable_seconds_per_loan": usable,
            "run_seconds_max": max(runs) if runs else 0.0, "loans_exact": work / per_loan,
            "loans": math.ceil(work / per_loan - 1e-9) if runs else 0}
