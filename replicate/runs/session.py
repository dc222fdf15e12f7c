"""Training a set of runs within a time budget, across commands that are cut off.

A rented GPU machine may run each command for a few minutes only (ten on ours) and keep
its disk only while it stays leased. :func:`train_within` trains the runs of a set (a
chapter's plan) one after the other, loading the finished ones, and stops cleanly
*before* an epoch that would end after the budget: every finished epoch is in the run's
checkpoint (``<cache>/checkpoints/<key>.pt``), so the same command, run again on the
same disk, resumes where it stopped (:func:`replicate.runs.get_or_train`). Finished runs
go to the store; :mod:`replicate.runs.archive` packs them to travel back.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class SessionReport:
    """What :func:`train_within` did: run keys finished before and during this call, the run
    paused at the deadline (None when all are finished) and those not started.

    Parameters
    ----------
    total : int
        The number of distinct runs asked for.
    loaded : list of str
        Keys of the runs already in a store.
    trained : list of str
        Keys of the runs trained by this call.
    paused : str or None
        The key of the run paused at the deadline; None when none was.
    paused_at : str
        Where it paused (``"epoch N"``, ``"not started"``); empty when none did.
    not_started : list of str
        Keys of the runs after the paused one.

    Example
    -------
    >>> from replicate.runs import SessionReport
    >>> SessionReport(total=3, loaded=['a'], trained=['b']).paused is None
    True
    """

    total: int
    loaded: list = field(default_factory=list)
    trained: list = field(default_factory=list)
    paused: str | None = None
    paused_at: str = ""
    not_started: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.paused is None and not self.not_started

    def summary(self) -> str:
        done = len(self.loaded) + len(self.trained)
        text = (f"{done}/{self.total} runs finished ({len(self.trained)} trained now, "
                f"{len(self.loaded)} already in the store)")
        if not self.complete:
            text += (f"; paused in run {self.paused} ({self.paused_at}), {len(self.not_started)} not started: "
                     "run the same command again (on the same disk) to resume")
        return text


def train_within(configs, seconds: float | None = None, *, store: str = "auto", engine: str = "auto",
                 device=None, progress: str = "log", deterministic: bool = False, log=print) -> SessionReport:
    """Train or load every :class:`~replicate.runs.RunConfig` of ``configs`` (an iterable, or a
    mapping whose values are configurations) until ``seconds`` have passed.

    Every configuration is validated before anything trains. A run stops before an epoch
    that would not end within the budget (:class:`replicate.training.TrainingPaused`); the
    runs after it are not started. A new run is not started either when less than twice
    the longest epoch trained so far in this call is left (its first epoch also pays for
    the warm-up and the graph capture). ``seconds`` None: no limit.

    Parameters
    ----------
    configs : iterable or mapping of RunConfig
        The runs to finish.
    seconds : float or None
        The budget in seconds, ``> 0``; None (default): no limit.
    store : {"auto", "cache", "results"}
        Where new runs are written (:func:`get_or_train`; default ``"auto"``).
    engine : str
        One of :data:`replicate.training.ENGINES` (default ``"auto"``).
    device : str or torch.device or None
        As :func:`get_or_train` (default None: CUDA when present).
    progress : {"auto", "bar", "log", "none"}
        How training reports its epochs (default ``"log"``).
    deterministic : bool
        True asks torch for deterministic kernels (default False).
    log : callable
        Called with each line the session reports (default ``print``).

    Returns
    -------
    SessionReport

    Example
    -------
    A run already stored is loaded, not trained:

    >>> from replicate import runs
    >>> report = runs.train_within([runs.RunConfig('cifar10', 'brier', profile='gpu')], seconds=60, log=lambda line: None)
    >>> report.loaded, report.trained, report.complete
    (['1bef35eabfc1ab17'], [], True)
    """
    from .. import training
    from .store import find, get_or_train

    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0):
        raise ValueError(f"seconds must be a positive number or None; got {seconds!r}")
    cfgs = list(configs.values()) if hasattr(configs, "values") else list(configs)
    unique = {}
    for cfg in cfgs:
        cfg.resolve()  # every configuration checked before anything trains
        unique.setdefault(cfg.key, cfg)
    deadline = None if seconds is None else time.monotonic() + float(seconds)
    report = SessionReport(total=len(unique))
    keys = list(unique)
    longest = 0.0
    for i, key in enumerate(keys):
        cfg = unique[key]
        if find(cfg) is not None:
            get_or_train(cfg, store=store, progress="none", device=device, engine=engine)  # promotes if cached
            report.loaded.append(key)
            continue
        if deadline is not None and time.monotonic() + 2 * longest >= deadline:
            report.paused, report.paused_at = key, "not started"
            report.not_started = keys[i + 1:]
            break
        try:
            run = get_or_train(cfg, store=store, progress=progress, device=device, engine=engine, deadline=deadline,
                               deterministic=deterministic)
        except training.TrainingPaused as err:
            report.paused, report.paused_at = key, f"after epoch {err.epochs_done}/{err.epochs}"
            report.not_started = keys[i + 1:]
            break
        report.trained.append(key)
        this_call = run.history[run.provenance.get("resumed_from_epoch", 0):]
        longest = max([longest, *(r.get("seconds", 0.0) for r in this_call)])
        if log:
            log(f"[{i + 1}/{len(keys)}] finished run {key} ({cfg.dataset} {cfg.loss} seed {cfg.seed})")
    if log:
        log(report.summary())
    return report
