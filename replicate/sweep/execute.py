"""Running a sweep's missing runs in parallel, locally or through submitit, with a summary.

- local: a process pool of ``workers`` processes, ``per_gpu`` of them on each visible GPU
  (several trainings at once remove a single process's kernel-launch bound; issue #20
  measured the throughput) or all on the CPU; each worker is pinned to its own set of CPU
  cores. Runs start in the given order as workers free up. Optional limits for a caller
  with a fixed time: with a ``deadline`` each run stops cleanly before an epoch that would
  end after it (its checkpoint kept: the same call on the same disk resumes it); a
  ``defer`` hook may keep a run, and every run after it, from starting (the caller decides
  which runs still fit); a ``hard_stop`` interrupts the runs still training then (an epoch
  far slower than the one before it, or a run's final evaluation), so that the call
  returns in time; they resume from their last finished epoch. Ctrl-C stops the workers;
  finished runs are kept (written atomically) and every unfinished run resumes from its
  last epoch checkpoint when the same sweep is run again.
- submitit (``cluster="slurm"``; ``"local"``/``"debug"`` for tests): one job array, one
  run per job, each job a requeueable :class:`replicate.sweep.worker.TrainJob`.

Two workers never train the same run: :func:`replicate.runs.get_or_train` holds the run's
lock (a file lock in the cache folder - on a cluster both ``REPLICATE_RESULTS`` and
``REPLICATE_CACHE`` must be on the shared file system), and a crashed worker leaves no
half-written run (records are written to a temporary folder and renamed).
"""
from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import checks
from .worker import TrainJob, init_worker, train_one

#: Seconds the workers get to stop after SIGINT at a hard stop before they are killed.
STOP_GRACE = 5.0

#: trained, skipped (finished already), failed, paused (stopped at the deadline, checkpoint
#: kept), deferred (not started: the ``defer`` hook's reason, or the hard stop came), stopped (Ctrl-C).
STATUSES = ("trained", "skipped", "failed", "paused", "deferred", "stopped")
#: Slurm settings a sweep passes to submitit, with their defaults (printed by ``--dry-run``).
SLURM_DEFAULTS = {"partition": None, "time_min": 240, "gpus_per_job": 1, "cpus_per_job": 8,
                  "array_parallelism": 16, "mem_gb": 32}


@dataclass
class Summary:
    """What a sweep did: one row per run (key, status, seconds, reason, log)."""

    rows: list = field(default_factory=list)

    def add(self, row: dict) -> None:
        self.rows.append(row)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["key", "status", "seconds", "reason", "log"])

    def counts(self) -> dict:
        statuses = [r["status"] for r in self.rows]
        return {s: statuses.count(s) for s in STATUSES}

    def line(self) -> str:
        c = self.counts()
        return ", ".join(f"{n} {s}" for s, n in c.items() if n) or "nothing to do"

    @property
    def ok(self) -> bool:
        c = self.counts()
        return c["failed"] == 0 and c["stopped"] == 0 and c["paused"] == 0 and c["deferred"] == 0


def _bar(total: int, disable: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="run", desc="sweep", file=sys.stderr, disable=disable, smoothing=0)


def core_sets(workers: int, cores=None) -> list[list[int]]:
    """``workers`` disjoint sets of this process's CPU cores (as even as possible; shared
    round-robin when there are fewer cores than workers)."""
    if cores is None:
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    cores = list(cores)
    if workers >= len(cores):
        return [[cores[i % len(cores)]] for i in range(workers)]
    per, extra = divmod(len(cores), workers)
    out, start = [], 0
    for i in range(workers):
        n = per + (1 if i < extra else 0)
        out.append(cores[start:start + n])
        start += n
    return out


def run_local(configs: dict, log_dir: Path, workers: int, device: str, store: str = "auto",
              quiet: bool = False, *, per_gpu: int = 1, deadline: float | None = None, defer=None,
              engines=None, on_row=None, logits_dtype: str | None = None,
              hard_stop: float | None = None) -> Summary:
    """Train ``configs`` (``{key: RunConfig}``, in priority order) in ``workers`` processes on ``device``.

    ``per_gpu``: workers sharing each GPU (CUDA only; ``workers`` GPUs x ``per_gpu`` at
    most is sensible). ``deadline`` (a ``time.monotonic()`` value): runs pause before an
    epoch that would end after it. ``defer(key)`` is called before each run starts, in the
    given order: a reason (a string) not to start it now reports it and every run after it
    ``deferred`` with that reason, None starts it. ``engines``: one engine name, or
    ``{key: engine}`` (default ``auto``). ``on_row(row)`` is called for every finished row.
    ``logits_dtype``: the stored logits' dtype (default: the store's; e.g. float16 in the
    cache, as ``results/`` keeps them).
    ``hard_stop`` (a ``time.monotonic()`` value): the runs still training then are
    interrupted (SIGINT, then SIGKILL after :data:`STOP_GRACE` seconds) and reported
    ``paused`` (their last finished epoch is checkpointed), the runs not started
    ``deferred``; the call returns at most about :data:`STOP_GRACE` seconds after it.
    """
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    summary = Summary()
    if not configs:
        return summary
    checks.positive_int("per_gpu", per_gpu)
    ctx = mp.get_context("spawn")
    gpus = None
    if device.startswith("cuda"):
        import torch

        gpus = ctx.Queue()
        n_gpus = max(1, torch.cuda.device_count())
        for i in range(workers):
            gpus.put(i // per_gpu % n_gpus)
    sets = ctx.Queue()
    for cores in core_sets(workers):
        sets.put(cores)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init_worker,
                               initargs=(gpus, 0, sets))
    logs = {k: str(log_dir / f"{k}.log") for k in configs}
    run_device = "cuda" if gpus is not None else device
    pending = list(configs)
    running: dict = {}
    bar = _bar(len(configs), quiet)

    def add(row):
        summary.add(row)
        bar.update()
        bar.set_postfix_str(summary.line())
        if on_row is not None:
            on_row(row)

    def start_next() -> None:
        while pending and len(running) < workers:
            key = pending[0]
            reason = defer(key) if defer is not None else None
            if reason is not None:
                _defer(pending, add, logs, reason)  # in the given order: none of the rest starts either
                return
            pending.pop(0)
            engine = engines.get(key, "auto") if isinstance(engines, dict) else (engines or "auto")
            fut = pool.submit(train_one, configs[key].to_dict(), logs[key], run_device, store, deadline, engine,
                              logits_dtype)
            running[fut] = (key, time.monotonic())

    try:
        start_next()
        while running:
            timeout = None if hard_stop is None else max(0.0, hard_stop - time.monotonic())
            done, _ = wait(list(running), timeout=timeout, return_when=FIRST_COMPLETED)
            if not done:                        # the hard stop, with runs still training
                _stop_at_hard_stop(pool, running, pending, add, logs, deadline, configs)
                break
            for fut in done:
                key, _ = running.pop(fut)
                try:
                    row = fut.result()
                except Exception as err:        # noqa: BLE001 - a worker that died (e.g. out of memory)
                    row = {"key": key, "status": "failed", "seconds": 0.0,
                           "reason": f"worker died: {type(err).__name__}: {err}".splitlines()[0]}
                add({**row, "log": logs[key]})
            start_next()
    except KeyboardInterrupt:
        _signal_workers(pool, signal.SIGINT)    # stop the workers now, not after their run
        pool.shutdown(wait=True, cancel_futures=True)
        done = {r["key"] for r in summary.rows}
        for key in configs:
            if key not in done:
                summary.add({"key": key, "status": "stopped", "seconds": 0.0,
                             "reason": "interrupted: resumes from its last epoch on the next sweep", "log": logs[key]})
        bar.close()
        return summary
    bar.close()
    pool.shutdown(wait=True, cancel_futures=True)
    return summary


def _signal_workers(pool, sig) -> None:
    """Send ``sig`` to the pool's live worker processes (a private attribute of
    ``ProcessPoolExecutor``: the standard library offers no public way to reach them)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        if proc.is_alive():
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:          # it ended in between
                pass


def _stop_at_hard_stop(pool, running: dict, pending: list, add, logs: dict, deadline, configs: dict) -> None:
    """:func:`run_local`'s hard stop: interrupt the workers, take the rows of the runs that
    still ended on their own (or whose record was written just before the signal: an idle
    worker's interrupt can break the pool before a busy one's result arrives), report the
    others ``paused`` and the rest ``deferred``."""
    from concurrent.futures import wait

    from ..runs import find

    _signal_workers(pool, signal.SIGINT)
    _, stuck = wait(list(running), timeout=STOP_GRACE)
    if stuck:
        _signal_workers(pool, signal.SIGKILL)
        wait(list(running), timeout=STOP_GRACE)
    late = f", {time.monotonic() - deadline:.0f} s after the deadline" if deadline is not None else ""
    for fut, (key, t0) in list(running.items()):
        row = None
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            row = fut.result()                  # it ended by itself (trained, paused, failed) just in time
        if row is None and find(configs[key]) is not None:
            row = {"key": key, "status": "trained", "seconds": time.monotonic() - t0,
                   "reason": "finished as the hard stop came"}
        if row is None:
            row = {"key": key, "status": "paused", "seconds": time.monotonic() - t0,
                   "reason": f"stopped at the hard stop{late}: resumes from its last finished epoch"}
        add({**row, "log": logs[key]})
    running.clear()
    _defer(pending, add, logs, "not started: would not finish before the deadline")


def _defer(pending: list, add, logs: dict, reason: str) -> None:
    """Report every run of ``pending`` ``deferred`` (not started) with ``reason`` and empty it."""
    for key in pending:
        add({"key": key, "status": "deferred", "seconds": 0.0, "reason": reason, "log": logs[key]})
    pending.clear()


def run_submitit(configs: dict, log_dir: Path, cluster: str = "slurm", device: str = "auto", store: str = "auto",
                 quiet: bool = False, poll_s: float = 5.0, name: str = "replicate", **slurm) -> Summary:
    """Train ``configs`` as one submitit job array on ``cluster`` ("slurm", or "local" /
    "debug" for tests); ``slurm`` overrides :data:`SLURM_DEFAULTS`."""
    import submitit

    unknown = set(slurm) - set(SLURM_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown Slurm setting(s) {sorted(unknown)}; allowed: {', '.join(SLURM_DEFAULTS)}")
    opts = {**SLURM_DEFAULTS, **slurm}
    summary = Summary()
    if not configs:
        return summary
    executor = submitit.AutoExecutor(folder=str(log_dir / "submitit"), cluster=cluster)
    params = {"timeout_min": opts["time_min"], "name": name}
    if cluster == "slurm":
        params.update(gpus_per_node=opts["gpus_per_job"], cpus_per_task=opts["cpus_per_job"],
                      mem_gb=opts["mem_gb"], slurm_array_parallelism=opts["array_parallelism"])
        if opts["partition"]:
            params["slurm_partition"] = opts["partition"]
    executor.update_parameters(**params)
    keys = list(configs)
    logs = [str(log_dir / f"{k}.log") for k in keys]
    jobs = executor.map_array(TrainJob(), [configs[k].to_dict() for k in keys], logs, [device] * len(keys),
                              [store] * len(keys))
    bar = _bar(len(jobs), quiet)
    pending = dict(zip(keys, zip(jobs, logs)))
    try:
        while pending:
            for key, (job, log) in list(pending.items()):
                if not job.done():
                    continue
                try:
                    row = job.result()
                except Exception as err:    # noqa: BLE001 - a job that failed outside train_one
                    row = {"key": key, "status": "failed", "seconds": 0.0,
                           "reason": f"job {job.job_id}: {type(err).__name__}: {err}".splitlines()[0]}
                summary.add({**row, "log": log})
                del pending[key]
                bar.update()
                bar.set_postfix_str(summary.line())
            if pending:
                time.sleep(poll_s)
    except KeyboardInterrupt:
        for key, (job, log) in pending.items():
            summary.add({"key": key, "status": "stopped", "seconds": 0.0,
                         "reason": f"not waited for: job {job.job_id} keeps running on the cluster", "log": log})
    bar.close()
    return summary
