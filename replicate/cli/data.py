"""The ``data`` subcommand of the ``replicate`` command line.

``replicate data check [DATASET]... [--option NAME=VALUE]... [--download]``
    load each data set (default: all of them) from the data directory and print which
    copy was found (official files, the JPEG q75 copy, generated test data), its split
    sizes, source and notes: a check to run after filling the data directory and before
    a long training run. A missing or damaged data set prints
    ``replicate: error: ...`` and the exit status is 2. Nothing is downloaded unless
    ``--download`` is given.
``replicate data generate DIR [--datasets NAME...]``
    write small generated data sets in the official file formats into ``DIR`` (a new
    or empty folder), to try the chapters without the real data
    (``replicate --data-dir DIR book --profile smoke``); everything loaded from it is
    labelled "(generated test data)".
"""
from __future__ import annotations

import sys


def describe(splits) -> str:
    """Lines saying what a loaded data set is: copy, sizes, classes, source and notes."""
    info = splits.info
    n = {k: len(getattr(splits, k)[1]) for k in ("train", "val", "test")}
    lines = [f"{info.name}: {info.display_name}: {n['train']} train / {n['val']} validation / {n['test']} test, "
             f"{info.num_classes} classes" + (f", vocabulary {len(info.vocab)}" if info.vocab else ""),
             f"  source: {info.source}"]
    lines += [f"  note: {note}" for note in info.notes]
    return "\n".join(lines)


def _cmd_check(args) -> int:
    from .. import data
    from .errors import is_user_error
    from .runs import parse_assignment

    options = dict(parse_assignment(t) for t in (args.option or []))
    names = args.datasets or list(data.DATASETS)
    unknown = [n for n in names if n not in data.DATASETS]
    if unknown:
        raise ValueError(f"unknown data set(s) {unknown}; allowed: {', '.join(data.DATASETS)}")
    failed = 0
    for name in names:
        try:
            splits = data.load(name, download=args.download, **options)
        except Exception as err:  # noqa: BLE001 - user errors are reported per data set, others re-raised
            if not is_user_error(err) or len(names) == 1:
                raise
            print(f"replicate: error: {err}", file=sys.stderr)
            failed += 1
            continue
        print(describe(splits), flush=True)
    return 2 if failed else 0


def _cmd_generate(args) -> int:
    from ..data import generated

    folder = generated.write_data_dir(args.folder, datasets=args.datasets or generated.CHAPTER_DATASETS)
    print(f"wrote generated test data ({', '.join(args.datasets or generated.CHAPTER_DATASETS)}) to {folder}; "
          f"use it with --data-dir {folder} or REPLICATE_DATA={folder}")
    return 0


def add_subcommands(subparsers, parents=()) -> None:
    """Register ``data check`` and ``data generate`` on the top-level parser's subparsers."""
    from ..data.generated import GENERATABLE

    parents = list(parents)
    d = subparsers.add_parser("data", help="check the data directory, or write generated test data")
    dsub = d.add_subparsers(dest="data_command", required=True)
    c = dsub.add_parser("check", parents=parents, help="load data sets and say which copy was found")
    c.add_argument("datasets", nargs="*", metavar="DATASET",
                   help="data sets to check, e.g. cifar10 20newsgroups (default: all)")
    c.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="data set option for every listed data set, e.g. source=jpeg (repeatable)")
    c.add_argument("--download", action="store_true",
                   help="download the official files when absent (when online; never into generated data)")
    c.set_defaults(func=_cmd_check)
    g = dsub.add_parser("generate", parents=parents, help="write small generated data sets in the official formats")
    g.add_argument("folder", metavar="DIR", help="a new or empty folder")
    g.add_argument("--datasets", nargs="+", choices=GENERATABLE, metavar="NAME",
                   help=f"which ({', '.join(GENERATABLE)}; default: those the chapters use)")
    g.set_defaults(func=_cmd_generate)
