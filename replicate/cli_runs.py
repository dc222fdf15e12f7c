"""The ``train`` and ``runs`` subcommands of the ``replicate`` command line.

``replicate train DATASET MODEL LOSS [--param NAME=VALUE]... [--option NAME=VALUE]...
[--profile P] [--seed S] [--epochs E] [--device D] [--store S]``
    train one configuration through the run store (or load it if it is finished);
    ``MODEL`` ``default`` takes the profile's network;
``replicate runs ls [--store all|results|cache]``
    list the finished runs;
``replicate runs show KEY [--json]``
    print one run's configuration, metrics before and after temperature scaling,
    history and provenance (``KEY`` may be a unique prefix).
"""
from __future__ import annotations

import ast
import json
import sys


def parse_assignment(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` with VALUE a Python literal (``3``, ``0.5``, ``None``, ``(0.5, 0.75)``)
    or else a plain string."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"expected NAME=VALUE, got {text!r}")
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return name.strip(), parsed


def _assignments(items) -> dict:
    return dict(parse_assignment(t) for t in (items or []))


def _cmd_train(args) -> int:
    from . import runs

    options = _assignments(args.option)
    if args.epochs is not None:
        options["epochs"] = args.epochs
    config = runs.RunConfig(dataset=args.dataset, loss=args.loss, loss_params=_assignments(args.param),
                            model=None if args.model == "default" else args.model, profile=args.profile,
                            seed=args.seed, options=options)
    from .training import TrainingDiverged

    try:
        run = runs.get_or_train(config, store=args.store, progress=args.progress, device=args.device,
                                deterministic=args.deterministic, retrain=args.retrain)
    except TrainingDiverged as err:
        print(f"replicate: training diverged: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\nreplicate: interrupted; the last finished epoch is checkpointed in "
              f"{runs.checkpoint_path(config.key)} - run the same command again to resume", file=sys.stderr)
        return 130
    print(_describe(run))
    return 0


def _cmd_ls(args) -> int:
    from . import runs

    frame = runs.list_runs(args.store)
    if frame.empty:
        print(f"no finished runs in {args.store}")
        return 0
    with __import__("pandas").option_context("display.width", 200, "display.max_columns", 20):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def _describe(run) -> str:
    lines = [f"run {run.key} ({run.store}: {run.path})"]
    c = run.config
    lines.append(f"  {c.dataset} / {run.resolved['model']} / {c.loss} {c.loss_params or ''} "
                 f"profile {c.profile}, seed {c.seed}, options {c.options or '{}'}")
    lines.append(f"  temperature T = {run.temperature:g} (grid 0.1..10.0 by validation ECE)")
    keys = ["error", "nll", "ece", "adaece", "classwise_ece", "mce", "brier"]
    lines.append("  " + f"{'metric':<14}" + "".join(f"{k:>10}" for k in ("val", "val_ts", "test", "test_ts")))
    for k in keys:
        vals = [run.metrics[s].get(k) for s in ("val", "val_ts", "test", "test_ts")]
        lines.append("  " + f"{k:<14}" + "".join(f"{v:>10.4f}" if v is not None else f"{'-':>10}" for v in vals))
    last = run.history[-1] if run.history else {}
    lines.append(f"  epochs {len(run.history)}, selected epoch {run.record.get('selected_epoch')}, final train "
                 f"loss {last.get('train_loss', float('nan')):.4f}, train accuracy "
                 f"{last.get('train_accuracy', float('nan')):.4f}, wall time {run.wall_time:.1f}s")
    p = run.provenance
    lines.append(f"  commit {p.get('commit')}, package {p.get('package_hash')}, device {p.get('device')}")
    return "\n".join(lines)


def _cmd_show(args) -> int:
    from . import runs

    run = runs.load(args.key)
    if args.json:
        print(json.dumps(run.record, indent=1, sort_keys=True))
    else:
        print(_describe(run))
    return 0


def add_subcommands(subparsers, parents=()) -> None:
    """Register ``train`` and ``runs`` on the top-level ``replicate`` parser's subparsers."""
    from .profiles import PROFILES
    from .runs.store import STORES
    from .training.progress import MODES

    parents = list(parents)
    t = subparsers.add_parser("train", parents=parents, help="train one configuration (or load it if finished)")
    t.add_argument("dataset", help="data set, e.g. cifar10, cifar100, 20newsgroups")
    t.add_argument("model", help="network, e.g. resnet50, resnet8, tiny_cnn; 'default' = the profile's")
    t.add_argument("loss", help="loss, e.g. cross_entropy, focal, flsd53, adafocal, dual_focal, fcl")
    t.add_argument("--param", action="append", metavar="NAME=VALUE", help="loss parameter (repeatable)")
    t.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="protocol option overriding the profile, e.g. lr=0.05, clip_grad_norm=None (repeatable)")
    t.add_argument("--profile", default="cpu", choices=list(PROFILES), help="profile (default cpu)")
    t.add_argument("--seed", type=int, default=1, help="torch seed (default 1)")
    t.add_argument("--epochs", type=int, help="number of epochs (default: the profile's)")
    t.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N")
    t.add_argument("--store", default="cache", choices=list(STORES),
                   help="where the finished run is written: cache (local) or results (committed)")
    t.add_argument("--progress", default="auto", choices=list(MODES), help="progress display (default auto)")
    t.add_argument("--deterministic", action="store_true", help="deterministic algorithms (slower on GPU)")
    t.add_argument("--retrain", action="store_true", help="train again even if the run is finished")
    t.set_defaults(func=_cmd_train)

    r = subparsers.add_parser("runs", help="list and inspect finished runs")
    rsub = r.add_subparsers(dest="runs_command", required=True)
    ls = rsub.add_parser("ls", parents=parents, help="list finished runs")
    ls.add_argument("--store", default="all", choices=["all", *STORES])
    ls.set_defaults(func=_cmd_ls)
    show = rsub.add_parser("show", parents=parents, help="show one run")
    show.add_argument("key", help="run key or a unique prefix of it")
    show.add_argument("--json", action="store_true", help="print the whole record as JSON")
    show.set_defaults(func=_cmd_show)
