"""The ``sweep`` subcommand: train a chapter's missing runs in parallel, then execute it.

``replicate sweep CHAPTER [-p NAME VALUE]... [--profile P] [--executor local|slurm]
[--workers N] [--per-gpu K] [--dry-run] [--no-execute] [--log-dir DIR] [--partition P] [--time-min M]
[--gpus-per-job G] [--cpus-per-job C] [--mem-gb M] [--array-parallelism A]``

The runs are the chapter's own plan (:mod:`replicate.sweep`); runs already in the store
are skipped; ``--dry-run`` prints the table of runs and the totals and trains nothing.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from .. import checks

EXECUTORS = ("local", "slurm")


def _log_dir(args, name: str, params: dict) -> Path:
    from .. import config

    if args.log_dir:
        return Path(args.log_dir).expanduser().resolve()
    tag = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return config.cache_dir() / "sweeps" / f"{name}-{params.get('profile', '')}-{tag}"


def _sweep_all(args) -> int:
    """``replicate sweep --all``: every run every training chapter plans at the profile (the
    global queue, each run once), trained where missing; the chapters are not executed."""
    import time

    from .. import profiles, sweep, training
    from ..data import availability
    from ..gpu_loan import queue

    if args.executor != "local":
        raise ValueError("--all runs with --executor local only")
    profile = args.profile or "cpu"
    profiles.get_profile(profile)
    items = queue.build(profile)
    todo = queue.missing(items)
    device = str(training.select_device("auto"))
    workers = args.workers or 1
    print(f"sweep --all | profile {profile} | {len(items)} runs planned by the chapters, {len(todo)} to train | "
          f"{workers} worker{'s' if workers != 1 else ''} | device {device}")
    if args.dry_run or not todo:
        return 0
    configs = {it.key: it.config for it in todo}
    availability.require(availability.needed_by_runs(configs.values(), "sweep --all"), purpose="replicate sweep")
    log_dir = _log_dir(args, "all", {"profile": profile})
    log_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    summary = sweep.run_local(configs, log_dir, workers, device, quiet=args.quiet)
    print(f"summary: {summary.line()} in {(time.monotonic() - t0) / 60:.1f} min; logs in {log_dir}")
    if not summary.ok:
        print("replicate: sweep incomplete: rerun the same command to continue where it stopped", file=sys.stderr)
        return 1
    return 0


def _cmd_sweep(args) -> int:
    import pandas as pd

    from .. import runner, sweep

    if args.all:
        if args.chapter:
            raise ValueError("give a chapter or --all, not both")
        return _sweep_all(args)
    if not args.chapter:
        raise ValueError("sweep needs a chapter (e.g. exp_focal_loss) or --all")
    if args.executor not in EXECUTORS:
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}; got {args.executor!r}")
    if args.workers is not None:
        checks.positive_int("--workers", args.workers)
    checks.positive_int("--per-gpu", args.per_gpu)
    name, params, plan = sweep.sweep_plan(args.chapter, dict(args.param or []), args.profile)
    device = plan.device
    if args.executor == "local":
        import torch

        workers = args.workers or (torch.cuda.device_count() * args.per_gpu if device.startswith("cuda") else 1)
    else:
        workers = args.array_parallelism
    table = sweep.runs_table(plan)
    slurm = {"partition": args.partition, "time_min": args.time_min, "gpus_per_job": args.gpus_per_job,
             "cpus_per_job": args.cpus_per_job, "mem_gb": args.mem_gb, "array_parallelism": args.array_parallelism}
    print(f"sweep {name} | profile {plan.profile} | parameters {params} | executor {args.executor} | "
          f"{workers} worker{'s' if workers != 1 else ''} | device {device}")
    if args.executor == "slurm":
        print("slurm: " + ", ".join(f"{k}={v}" for k, v in slurm.items()))
    if args.dry_run:
        with pd.option_context("display.width", 250, "display.max_rows", None, "display.max_colwidth", 40):
            shown = table.assign(estimated=table.estimated_s.map(lambda s: "?" if s != s else f"{s / 60:.1f} min"))
            print(shown.drop(columns="estimated_s").to_string(index=False))
        print(sweep.totals(table, workers))
        return 0
    todo = {k: c for k, c in plan.configs().items() if k in set(table.key[~table.finished])}
    from ..data import availability

    # every data set the runs need, checked before any run starts: one line for all that are missing
    availability.require(availability.needed_by_runs(todo.values(), f"sweep {name}"), purpose="replicate sweep")
    log_dir = _log_dir(args, name, params)
    log_dir.mkdir(parents=True, exist_ok=True)
    print(sweep.totals(table, workers) + f"; logs in {log_dir}")
    if args.executor == "local":
        summary = sweep.run_local(todo, log_dir, workers, device, quiet=args.quiet, per_gpu=args.per_gpu)
    else:
        summary = sweep.run_submitit(todo, log_dir, "slurm", quiet=args.quiet, name=f"replicate-{name}", **slurm)
    for key in table.key[table.finished]:
        summary.add({"key": key, "status": "skipped", "seconds": 0.0, "reason": "finished already", "log": ""})
    frame = summary.frame()
    problems = frame[frame.status.isin(["failed", "stopped"])]
    if len(problems):
        with pd.option_context("display.width", 250, "display.max_colwidth", 120):
            print(problems.to_string(index=False))
    print(f"summary: {summary.line()}")
    if not summary.ok:
        stopped = summary.counts()["stopped"]
        print("replicate: sweep incomplete: " + ("rerun the same command to continue where it stopped"
                                                 if stopped else "see the logs of the failed runs"), file=sys.stderr)
        return 130 if stopped and not summary.counts()["failed"] else 1
    if args.no_execute:
        return 0
    source = runner.resolve_notebook(name)
    given = {k: v for k, v in params.items() if k != "profile"}
    output = runner.default_output(source, args.profile, given)
    path = runner.execute(source, output, parameters=given, profile=args.profile, force=True)
    print(f"executed notebook: {path}")
    return 0


def add_subcommands(sub, parents) -> None:
    s = sub.add_parser("sweep", parents=parents, help="train a chapter's runs in parallel, then execute the chapter")
    s.add_argument("chapter", nargs="?", help="chapter that trains: notebooks/NAME.md, NAME.md or NAME")
    s.add_argument("--all", action="store_true",
                   help="every run of every training chapter at --profile (each once, queue order); no execution")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="a parameter of the chapter's parameters cell (repeatable)")
    s.add_argument("--profile", help="profile: smoke, cpu, gpu or paper (default: the chapter's)")
    s.add_argument("--executor", default="local", help="local (default) or slurm")
    s.add_argument("--workers", type=int, help="local: worker processes (default: --per-gpu per GPU, else 1)")
    s.add_argument("--per-gpu", type=int, default=1,
                   help="local: trainings at once on each GPU (default 1; the GPU job uses 4, issue #20)")
    s.add_argument("--dry-run", action="store_true", help="print the runs and the totals; train nothing")
    s.add_argument("--no-execute", action="store_true", help="train only; do not execute the chapter afterwards")
    s.add_argument("--log-dir", help="per-run logs (default: <cache>/sweeps/CHAPTER-PROFILE-HASH)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    g = s.add_argument_group("slurm (executor slurm)")
    d = __import__("replicate.sweep.execute", fromlist=["SLURM_DEFAULTS"]).SLURM_DEFAULTS
    g.add_argument("--partition", default=d["partition"], help="Slurm partition (default: the cluster's)")
    g.add_argument("--time-min", type=int, default=d["time_min"], help=f"time limit per job, minutes ({d['time_min']})")
    g.add_argument("--gpus-per-job", type=int, default=d["gpus_per_job"], help=f"GPUs per job ({d['gpus_per_job']})")
    g.add_argument("--cpus-per-job", type=int, default=d["cpus_per_job"], help=f"CPUs per job ({d['cpus_per_job']})")
    g.add_argument("--mem-gb", type=int, default=d["mem_gb"], help=f"memory per job, GB ({d['mem_gb']})")
    g.add_argument("--array-parallelism", type=int, default=d["array_parallelism"],
                   help=f"jobs of the array running at once ({d['array_parallelism']})")
    s.set_defaults(func=_cmd_sweep)
