"""The ``train`` and ``runs`` subcommands of the ``replicate`` command line.

``replicate train DATASET MODEL LOSS [--param NAME=VALUE]... [--option NAME=VALUE]...
[--profile P] [--seed S] [--epochs E] [--device D] [--store S]``
    train one configuration through the run store (or load it if it is finished);
    ``MODEL`` ``default`` takes the profile's network;
``replicate runs ls [--store all|results|cache]``
    list the finished runs; then every damaged run file, one line each on stderr with the
    fix that fits where the store lies (exit status 1 when there is one);
``replicate runs show KEY [--json]``
    print one run's configuration, metrics before and after temperature scaling,
    history and provenance (``KEY`` may be a unique prefix);
``replicate runs plan CHAPTER [-p NAME VALUE]... [--profile P]``
    list the runs a chapter trains at those parameters and which are finished;
``replicate runs train-plan CHAPTER [-p NAME VALUE]... [--profile P] [--time-budget S]``
    train the chapter's missing runs into ``results/``, stopping cleanly before ``S``
    seconds (exit status 3: paused, run the same command again to resume; 0: all done);
``replicate runs pack [KEY]... [--chapter CHAPTER [-p NAME VALUE]...] [--profile P] --output PREFIX``
    pack finished runs of ``results/`` into ``PREFIX.tar.gz`` (or several parts of at most
    ``--max-mib`` MiB each);
``replicate runs unpack ARCHIVE... [--replace]``
    check archives completely, then write their runs into ``results/``.

See the README, "Training on a GPU machine", for the workflow these serve.
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


PAUSED = 3  # exit status of a train-plan (or train) that stopped at its time budget


def _cmd_train(args) -> int:
    import time

    from .. import runs

    options = _assignments(args.option)
    if args.epochs is not None:
        options["epochs"] = args.epochs
    config = runs.RunConfig(dataset=args.dataset, loss=args.loss, loss_params=_assignments(args.param),
                            model=None if args.model == "default" else args.model, profile=args.profile,
                            seed=args.seed, options=options)
    from ..training import TrainingDiverged, TrainingPaused

    deadline = None if args.time_budget is None else time.monotonic() + _budget(args.time_budget)
    try:
        run = runs.get_or_train(config, store=args.store, progress=args.progress, device=args.device,
                                deterministic=args.deterministic, retrain=args.retrain, engine=args.engine,
                                deadline=deadline)
    except TrainingDiverged as err:
        print(f"replicate: training diverged: {err}", file=sys.stderr)
        return 1
    except TrainingPaused as err:
        print(f"replicate: {err}", file=sys.stderr)
        return PAUSED
    except KeyboardInterrupt:
        print(f"\nreplicate: interrupted; the last finished epoch is checkpointed in "
              f"{runs.checkpoint_path(config.key)} - run the same command again to resume", file=sys.stderr)
        return 130
    print(_describe(run))
    return 0


def report_damaged(errors, out=None) -> int:
    """Print each damaged run of ``errors`` (one line each: the run, the file, the fix) on
    ``out`` (default stderr), after a count; the number printed."""
    out = out or sys.stderr
    if errors:
        print(f"replicate: {len(errors)} damaged run{'s' if len(errors) > 1 else ''} left out:", file=out)
    for err in errors:
        print(f"replicate: {err}", file=out)
    return len(errors)


def _cmd_ls(args) -> int:
    from .. import runs

    damaged = runs.check_store(args.store)       # every damaged file at once, records and logits
    frame = runs.list_runs(args.store)           # the others (a damaged run is left out)
    if frame.empty:
        print(f"no finished runs in {args.store}" + (" that read back" if damaged else ""))
    else:
        with __import__("pandas").option_context("display.width", 200, "display.max_columns", 20):
            print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 1 if report_damaged(damaged) else 0


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
    from .. import runs

    run = runs.load(args.key)
    if args.json:
        print(json.dumps(run.record, indent=1, sort_keys=True))
    else:
        print(_describe(run))
    return 0


def _budget(value) -> float:
    if value is None or value <= 0:
        raise ValueError(f"--time-budget must be a positive number of seconds; got {value!r}")
    return float(value)


def _chapter_plan(args):
    """The validated plan of ``args.chapter`` with its ``-p`` parameters and ``--profile``."""
    from .. import experiments, runner

    params = {k: runner.parse_value(v) for k, v in (args.param or [])}
    if args.profile is not None:
        params["profile"] = args.profile
    return experiments.chapter_plan(args.chapter, **params)


def _cmd_plan(args) -> int:
    plan = _chapter_plan(args)
    frame = plan.frame()
    with __import__("pandas").option_context("display.width", 200, "display.max_columns", 20,
                                             "display.max_colwidth", 40):
        print(frame.to_string(index=False))
    done = int(frame.drop_duplicates("key")["finished"].sum())
    print(f"\n{args.chapter} at profile {plan.profile}: {done}/{frame['key'].nunique()} distinct runs finished")
    return 0


def _cmd_train_plan(args) -> int:
    from .. import runs

    plan = _chapter_plan(args)
    seconds = None if args.time_budget is None else _budget(args.time_budget)
    report = runs.train_within(plan.configs(), seconds, store="auto", engine=args.engine, device=plan.device,
                               progress=args.progress, deterministic=args.deterministic)
    return 0 if report.complete else PAUSED


def _cmd_pack(args) -> int:
    from .. import runs

    keys = list(args.keys or [])
    if args.chapter:
        plan = _chapter_plan(args)
        missing = plan.missing("results")
        finished = [k for k in plan.configs() if k not in missing]
        print(f"{args.chapter} at profile {plan.profile}: {len(finished)} of {len(plan.configs())} runs finished "
              f"in results/" + (f" ({len(missing)} missing, not packed)" if missing else ""))
        keys += finished
    elif args.param:
        raise ValueError("-p/--param sets a chapter's parameters; it needs --chapter")
    elif args.profile and not keys:
        frame = runs.list_runs("results")
        keys = frame.loc[frame["profile"] == args.profile, "key"].tolist()
    if not keys:
        raise ValueError("nothing to pack: give run keys, --chapter CHAPTER or --profile P "
                         "with finished runs in results/")
    paths = runs.pack(keys, args.output, store="results", max_bytes=int(args.max_mib * 2**20))
    for path in paths:
        print(f"packed {path} ({path.stat().st_size / 2**20:.2f} MiB)")
    print(f"{len(set(keys))} runs in {len(paths)} archive(s); bring them back and run: "
          f"replicate runs unpack {' '.join(p.name for p in paths)}")
    return 0


def _cmd_prune(args) -> int:
    import shutil

    from .. import profiles, runs
    from ..gpu_loan import queue

    if args.profile is None:
        raise ValueError("runs prune needs --profile (one of " + ", ".join(profiles.PROFILES) + ")")
    profiles.get_profile(args.profile)
    keys = queue.stale(args.profile)
    print(f"{len(keys)} committed {args.profile} runs that no chapter plans"
          + (" (dry run: nothing removed)" if args.dry_run else ": removed from results/"))
    for key in keys:
        print(f"  {key}")
        if not args.dry_run:
            shutil.rmtree(runs.store_dir("results") / key)
    return 0


def _cmd_unpack(args) -> int:
    from .. import config, runs
    from ..gpu_loan import travel

    back = travel.restore(config.repo_root())   # what `gpu-job --check-travel` kept off the device
    if back:
        print(f"gpu-job: {back} hidden logits back in the index")
    out = runs.unpack(args.archives, store="results", replace=args.replace)
    print(f"unpacked into results/: {len(out['written'])} runs written, {len(out['unchanged'])} already there "
          f"(identical)")
    return 0


def add_subcommands(subparsers, parents=()) -> None:
    """Register ``train`` and ``runs`` on the top-level ``replicate`` parser's subparsers."""
    from ..profiles import PROFILES
    from ..runs.layout import STORES
    from ..training.progress import MODES
    from ..training.steps import ENGINES

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
    t.add_argument("--engine", default="auto", choices=list(ENGINES),
                   help="training steps: auto (a CUDA graph on a GPU, eager on the CPU), eager, static, graph")
    t.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="stop cleanly before an epoch that would end after this many seconds (exit status 3); "
                        "the same command resumes from the checkpoint")
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

    def chapter_args(q, required=True):
        if required:
            q.add_argument("chapter", help="experiment chapter, e.g. exp_focal_loss")
        q.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                       help="a parameter of the chapter's parameters cell (repeatable)")
        q.add_argument("--profile", choices=list(PROFILES), help="profile (default: the chapter's)")

    pl = rsub.add_parser("plan", parents=parents, help="list the runs a chapter trains and which are finished")
    chapter_args(pl)
    pl.set_defaults(func=_cmd_plan)
    tp = rsub.add_parser("train-plan", parents=parents,
                         help="train a chapter's missing runs into results/, within a time budget")
    chapter_args(tp)
    tp.add_argument("--time-budget", type=float, metavar="SECONDS",
                    help="stop cleanly before an epoch that would end after this many seconds (exit status 3)")
    tp.add_argument("--engine", default="auto", choices=list(ENGINES), help="training steps (default auto)")
    tp.add_argument("--progress", default="log", choices=list(MODES), help="progress display (default log)")
    tp.add_argument("--deterministic", action="store_true", help="deterministic algorithms (slower on GPU)")
    tp.set_defaults(func=_cmd_train_plan)
    pk = rsub.add_parser("pack", parents=parents, help="pack finished runs of results/ into archives that travel")
    pk.add_argument("keys", nargs="*", help="run keys (or unique prefixes)")
    pk.add_argument("--chapter", help="pack the finished runs of this chapter's plan")
    chapter_args(pk, required=False)
    pk.add_argument("--output", required=True, metavar="PREFIX", help="archive path without .tar.gz")
    pk.add_argument("--max-mib", type=float, default=16.0, help="largest archive in MiB (default 16)")
    pk.set_defaults(func=_cmd_pack)
    pr = rsub.add_parser("prune", parents=parents,
                         help="remove the committed runs of a profile that no chapter plans any more")
    pr.add_argument("--profile", choices=list(PROFILES), help="the profile whose stale runs go")
    pr.add_argument("--dry-run", action="store_true", help="list them; remove nothing")
    pr.set_defaults(func=_cmd_prune)

    up = rsub.add_parser("unpack", parents=parents, help="check archives, then write their runs into results/")
    up.add_argument("archives", nargs="+", help="archives made by 'replicate runs pack' (all parts of a set)")
    up.add_argument("--replace", action="store_true", help="overwrite runs already in results/ that differ")
    up.set_defaults(func=_cmd_unpack)
