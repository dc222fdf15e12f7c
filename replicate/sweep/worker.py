"""One sweep job: train one run into the store, logging to its own file.

:class:`TrainJob` is a ``submitit.helpers.Checkpointable``: on a Slurm time-out or
pre-emption submitit calls its ``checkpoint`` and requeues the same call, which resumes
the run from the checkpoint the engine writes after every epoch
(:func:`replicate.runs.get_or_train`). The same callable runs in the local process pool.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from pathlib import Path

try:                                        # submitit is needed for Slurm only
    from submitit.helpers import Checkpointable as _Base
except ImportError:                         # pragma: no cover - local sweeps work without it
    _Base = object


def train_one(config: dict, log_path: str, device: str = "auto", store: str = "auto",
              deadline: float | None = None, engine: str = "auto", logits_dtype: str | None = None) -> dict:
    """Train (or load) the run of ``config`` (a RunConfig as a dict); stdout and stderr go
    to ``log_path``. Returns ``{"key", "status" (trained/skipped/failed/paused), "seconds",
    "reason"}``; a failure's traceback is in the log, its last line in ``reason``.
    ``deadline`` (``time.monotonic()``, shared by the processes of one machine): the run
    stops cleanly before an epoch that would end after it (status ``paused``; the
    checkpoint resumes it). ``engine``: the training steps (:mod:`replicate.training.steps`).
    ``logits_dtype``: as :func:`replicate.runs.get_or_train` (default: the store's)."""
    from ..runs import RunConfig, find, get_or_train
    from ..training import TrainingPaused

    cfg = RunConfig.from_dict(config)
    t0 = time.perf_counter()
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", buffering=1) as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        print(f"== {time.strftime('%Y-%m-%d %H:%M:%S')} run {cfg.key} on {device} (pid {os.getpid()})")
        if find(cfg) is not None:
            print("finished already: nothing to train")
            return {"key": cfg.key, "status": "skipped", "seconds": 0.0, "reason": "finished already"}
        try:
            run = get_or_train(cfg, store=store, progress="log", device=device, deadline=deadline, engine=engine,
                               logits_dtype=logits_dtype)
        except TrainingPaused as err:
            print(f"paused: {err}")
            return {"key": cfg.key, "status": "paused", "seconds": time.perf_counter() - t0,
                    "reason": f"paused after epoch {err.epochs_done}/{err.epochs}: resumes from its checkpoint"}
        except Exception as err:            # noqa: BLE001 - reported in the summary, traceback in the log
            traceback.print_exc()
            reason = f"{type(err).__name__}: {err}".splitlines()[0]
            return {"key": cfg.key, "status": "failed", "seconds": time.perf_counter() - t0, "reason": reason}
        print(f"finished: {run!r}")
        return {"key": cfg.key, "status": "trained", "seconds": time.perf_counter() - t0, "reason": ""}


class TrainJob(_Base):
    """``TrainJob()(config, log_path, device, store)``: :func:`train_one` as a requeueable
    submitit job (the requeued call resumes from the run's last epoch checkpoint)."""

    def __call__(self, config: dict, log_path: str, device: str = "auto", store: str = "auto") -> dict:
        return train_one(config, log_path, device, store)


def init_worker(gpus, threads: int, core_sets=None) -> None:
    """Process-pool initialiser: pin this worker to one GPU of the queue ``gpus`` (or none)
    and to one CPU core set of the queue ``core_sets`` (or none), with ``threads`` CPU
    threads (0: one per core of its set)."""
    import torch

    if gpus is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpus.get())
    cores = core_sets.get() if core_sets is not None else None
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)
    torch.set_num_threads(max(1, threads or (len(cores) if cores else 1)))
    sys.stdout.flush()
