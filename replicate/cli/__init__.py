"""The ``replicate`` command line.

``replicate run NOTEBOOK [-p NAME VALUE]... [--profile P] [--output PATH]``
    execute one chapter with papermill parameters;
``replicate book [--profile P] [--force]``
    execute every chapter of ``_toc.yml`` and build the HTML book;
``replicate train ...`` / ``replicate runs ls`` / ``replicate runs show ID``
    train one configuration through the run store, list and inspect runs;
``replicate claims [--paper P] [--kind K] [--format table|json|csv] [--profile P]``
    print every claim the book checks, with its verdict (:mod:`replicate.cli.claims`);
``replicate sweep CHAPTER [-p NAME VALUE]... [--executor local|slurm] [--workers N] [--dry-run]``
    train a chapter's missing runs in parallel, then execute it (:mod:`replicate.cli.sweep`);
``replicate gpu-job [--budget S] [--steps abcdef] [--list] [--check-travel]``
    spend a GPU loan on the global queue's next runs and pack them (:mod:`replicate.cli.gpu_job`,
    :mod:`replicate.gpu_loan`);
``replicate data check [DATASET]...`` / ``replicate data generate DIR``
    say which copy of each data set the data directory holds; write generated test data.

``--data-dir DIR`` (any subcommand) sets the data directory for this invocation,
overriding ``$REPLICATE_DATA``.

Errors the user can fix (a bad argument, missing data, a truncated or corrupted data
file, a failing chapter) end the command with one line ``replicate: error: ...`` on
stderr and exit status 2, never a traceback (:func:`is_user_error`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from .. import config, runner
from .errors import is_user_error


def _cmd_run(args) -> int:
    source = runner.resolve_notebook(args.notebook)
    params = dict(args.param or [])
    output = Path(args.output) if args.output else runner.default_output(source, args.profile, params)
    path = runner.execute(source, output, parameters=params, profile=args.profile, force=True)
    print(f"executed notebook: {path}")
    return 0


def _cmd_book(args) -> int:
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be a positive integer; got {args.workers}")
    index = runner.build(profile=args.profile, workdir=Path(args.workdir) if args.workdir else None,
                         force=args.force,
                         workers=runner.book.default_workers() if args.workers is None else args.workers)
    print(f"\nThe book is ready: open {index}")
    return 0


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only="claims"`` registers that subcommand alone, beside
    ``run`` and ``book`` (``main`` does so for ``replicate claims``: registering ``train``,
    ``runs``, ``sweep`` and ``gpu-job`` imports torch, seconds before the claims start)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS,
                        help=f"data directory (default: ${config.DATA_ENV}, else data/ at the repository root, or in "
                             f"the per-user cache folder when the package is installed outside its checkout)")
    parser = argparse.ArgumentParser(prog="replicate", parents=[common],
                                     description="Executable replication of five focal-loss calibration papers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", parents=[common], help="execute one chapter with papermill parameters")
    p.add_argument("notebook", help="chapter: notebooks/NAME.md, NAME.md or NAME")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="set a parameter of the chapter's parameters cell (repeatable); VALUE is a Python literal or a string")
    p.add_argument("--profile", help="profile: smoke, cpu, gpu or paper")
    p.add_argument("--output", help="where to write the executed notebook (default: _build/executed/)")
    p.set_defaults(func=_cmd_run)

    b = sub.add_parser("book", parents=[common], help="execute every chapter and build the HTML book")
    b.add_argument("--profile", help="profile for every chapter (default: each chapter's own, cpu)")
    b.add_argument("--force", action="store_true", help="re-execute chapters even if their inputs are unchanged")
    b.add_argument("--workdir", help="build in this directory instead of the checkout (used by the smoke test)")
    b.add_argument("--workers", type=int, default=None,
                   help="chapters executed at once (default: $REPLICATE_BOOK_WORKERS, else the CPU cores, at most 2)")
    b.set_defaults(func=_cmd_book)

    from . import claims as cli_claims

    if only == "claims":
        cli_claims.add_subcommands(sub, parents=[common])
        return parser
    from . import data as cli_data, gpu_job as cli_gpu_job, runs as cli_runs, sweep as cli_sweep

    cli_runs.add_subcommands(sub, parents=[common])
    cli_claims.add_subcommands(sub, parents=[common])
    cli_sweep.add_subcommands(sub, parents=[common])
    cli_data.add_subcommands(sub, parents=[common])
    cli_gpu_job.add_subcommands(sub, parents=[common])
    return parser


def _command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is neither an option nor the value
    of ``--data-dir`` (None when a help option comes first)."""
    words = iter(argv)
    for a in words:
        if a in ("-h", "--help"):
            return None
        if a == "--data-dir":
            next(words, None)
        elif not a.startswith("-"):
            return a
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser("claims") if _command(argv) == "claims" else build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "data_dir", None):
        os.environ[config.DATA_ENV] = str(Path(args.data_dir).expanduser().resolve())
    try:
        return args.func(args)
    except Exception as err:  # noqa: BLE001 - anything but a user error keeps its traceback
        if not is_user_error(err):
            raise
        print(f"replicate: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
