"""Running a sweep's missing runs in parallel, locally or through submitit, with a summary.

- local: a process pool, one worker per visible GPU (each pinned to its GPU) or ``workers``
  CPU processes (sharing the cores). Ctrl-C stops the workers; finished runs are kept
  (written atomically) and every unfinished run resumes from its last epoch checkpoint
  when the same sweep is run again.
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

from .worker import TrainJob, init_worker, train_one

STATUSES = ("trained", "skipped", "failed", "stopped")
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
        return c["failed"] == 0 and c["stopped"] == 0


def _bar(total: int, disable: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="run", desc="sweep", file=sys.stderr, disable=disable, smoothing=0)


def run_local(configs: dict, log_dir: Path, workers: int, device: str, store: str = "auto",
              quiet: bool = False) -> Summary:
    """Train ``configs`` (``{key: RunConfig}``) in ``workers`` processes on ``device``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    summary = Summary()
    if not configs:
        return summary
    ctx = mp.get_context("spawn")
    gpus = None
    if device.startswith("cuda"):
        import torch

        gpus = ctx.Queue()
        for i in range(torch.cuda.device_count()):
            gpus.put(i)
    threads = max(1, (os.cpu_count() or 1) // workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init_worker,
                               initargs=(gpus, threads))
    logs = {k: str(log_dir / f"{k}.log") for k in configs}
    futures = {pool.submit(train_one, cfg.to_dict(), logs[k], "cuda" if gpus is not None else device, store): k
               for k, cfg in configs.items()}
    bar = _bar(len(futures), quiet)
    try:
        for fut in as_completed(futures):
            key = futures[fut]
            try:
                row = fut.result()
            except Exception as err:        # noqa: BLE001 - a worker that died (e.g. out of memory)
                row = {"key": key, "status": "failed", "seconds": 0.0,
                       "reason": f"worker died: {type(err).__name__}: {err}".splitlines()[0]}
            summary.add({**row, "log": logs[key]})
            bar.update()
            bar.set_postfix_str(summary.line())
    except KeyboardInterrupt:
        for proc in list(getattr(pool, "_processes", {}).values()):   # stop the workers now, not after their run
            if proc.is_alive():
                os.kill(proc.pid, signal.SIGINT)
        pool.shutdown(wait=True, cancel_futures=True)
        done = {r["key"] for r in summary.rows}
        for key in configs:
            if key not in done:
                summary.add({"key": key, "status": "stopped", "seconds": 0.0,
                             "reason": "interrupted: resumes from its last epoch on the next sweep", "log": logs[key]})
        bar.close()
        return summary
    bar.close()
    pool.shutdown()
    return summary


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
