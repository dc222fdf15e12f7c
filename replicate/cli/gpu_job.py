"""The ``gpu-job`` subcommand: spend a GPU loan on the queue's next runs; argument parsing only,
the work is :mod:`replicate.gpu_loan`'s.

``replicate gpu-job [--out DIR] [--budget S] [--workers K] [--mps auto|on|off] [--steps abcdef]``
    on the GPU machine (``make gpu-job``): train, pause before the budget, pack into ``--out``
    (default ``$OUT``); without ``REPLICATE_DATA`` it reads the data from ``.gpu-carry/data``
    (:func:`replicate.gpu_loan.job.run_from_checkout`);
``replicate gpu-job --list [--steps ...]``
    the queue, what is finished, and the device time the rest takes (no GPU needed;
    :func:`replicate.gpu_loan.prepare.list_queue`);
``replicate gpu-job --check-travel [--with-chapter]``
    on the development machine (``make gpu-job-check``, ``make gpu-job-check-chapter``):
    put the data archives the next runs need and the wheels the machine lacks
    (:mod:`replicate.gpu_loan.wheels`; with ``--with-chapter`` also those that execute the
    Mukhoti chapter there) into ``.gpu-carry/``, keep the committed logits off the device
    (:mod:`replicate.gpu_loan.travel`; with ``--with-chapter`` except the chapter's runs'),
    and say in one line what would travel and whether it fits
    (:func:`replicate.gpu_loan.prepare.check_travel`);
``replicate gpu-job --stage DIR``
    copy exactly what would travel into the new folder ``DIR`` (``make gpu-job-twin``
    rehearses the job there on a Python with the GPU image's packages);
``replicate gpu-job --restore``
    after the call (``make gpu-job-restore``; ``replicate runs unpack`` does it too): the
    hidden logits back into the index.
"""
from __future__ import annotations

from ..gpu_loan.travel import CARRY


def _cmd_gpu_job(args) -> int:
    from ..gpu_loan import job, prepare, queue

    steps = queue.check_steps(args.steps)
    if args.list:
        return prepare.list_queue(steps, args.profile, args.workers, args.mps != "off")
    if args.with_chapter and not args.check_travel:
        raise ValueError("--with-chapter goes with --check-travel (the job itself executes the chapter whenever "
                         "its wheels were carried)")
    if args.check_travel:
        return prepare.check_travel(steps, args.profile, with_chapter=args.with_chapter)
    if args.stage:
        return prepare.stage(args.stage)
    if args.restore:
        return prepare.restore()
    return job.run_from_checkout(args.out, profile=args.profile, budget=args.budget, workers=args.workers,
                                 mps=args.mps, steps=steps, device=args.device,
                                 check_engine=not args.no_engine_check, with_chapter=not args.no_chapter)


def add_subcommands(sub, parents) -> None:
    from ..gpu_loan.machine import MPS_MODES
    from ..profiles import PROFILES

    g = sub.add_parser("gpu-job", parents=parents,
                       help="train the GPU queue's next runs within a time budget and pack them (a GPU loan)")
    g.add_argument("--out", help="folder for the archives and the log (default: $OUT, else gpu-out)")
    g.add_argument("--budget", type=float, default=540.0,
                   help="seconds for the whole job, packing included (default 540: one 10-minute command)")
    g.add_argument("--workers", type=int, help="trainings at once (default 4 on a GPU, 2 on the CPU)")
    g.add_argument("--mps", default="auto", choices=list(MPS_MODES), help="CUDA MPS daemon (default auto)")
    g.add_argument("--steps", default="abcdef", help="queue steps to train, e.g. abc (default abcdef)")
    g.add_argument("--profile", default="gpu", choices=list(PROFILES), help="profile (default gpu; smoke rehearses)")
    g.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    g.add_argument("--no-engine-check", action="store_true", help="skip the CUDA-graph check (engine auto)")
    g.add_argument("--list", action="store_true", help="print the queue and its device time; train nothing")
    g.add_argument("--check-travel", action="store_true",
                   help=f"fill {CARRY}/ with the data the queue needs and say what would travel")
    g.add_argument("--with-chapter", action="store_true",
                   help="with --check-travel: also carry the wheels that execute the Mukhoti chapter on the machine, "
                        "and its runs' logits")
    g.add_argument("--no-chapter", action="store_true",
                   help="do not execute the Mukhoti chapter on the machine even when it is due")
    g.add_argument("--stage", metavar="DIR",
                   help="copy what would travel (tree and .gpu-carry/) into the new folder DIR, for a rehearsal "
                        "on the image's packages (make gpu-job-twin)")
    g.add_argument("--restore", action="store_true",
                   help="put back the committed logits --check-travel kept off the device")
    g.set_defaults(func=_cmd_gpu_job)
