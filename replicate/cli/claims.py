"""The ``claims`` subcommand: every claim the book checks, from the one registry.

``replicate claims [--paper P] [--kind theory|experiment] [--format table|json|csv]
[--profile smoke|cpu|gpu|paper] [--beside gpu,paper] [--workers N]``
    print every registered claim (:func:`replicate.claims.collect`) with its paper, claim,
    where in the paper, how it was checked, result, verdict and the chapter section that
    shows it. Theory checks run at the grid sizes of ``--profile`` (default ``cpu``: under
    a minute on a laptop CPU; ``paper``: larger grids); experiment claims read the
    chapters' runs of that profile from the run store (never training). ``--beside`` adds
    the verdicts on our runs at more profiles where the store holds them (the claims ledger
    page shows those of every larger profile). A damaged run does not stop the ledger: a
    claim whose evidence needs it is ``not tested`` with "run <key> damaged", and every
    damaged run file of the stores is listed at the end, one line each on stderr with its
    fix (exit status 1 when there is one).
"""
from __future__ import annotations

import sys

FORMATS = ("table", "json", "csv")
SHOWN = ["paper", "kind", "claim", "where", "evidence", "how", "result", "verdict", "note", "chapter", "section",
         "noise"]


def _cmd_claims(args) -> int:
    from tqdm import tqdm

    from .. import claims
    from ..papers import PAPERS

    if args.format not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}; got {args.format!r}")
    srcs = claims.sources(args.paper, args.kind)         # validates --paper and --kind before any work
    if args.profile not in claims.registry.PROFILES:
        raise ValueError(f"--profile must be one of {', '.join(claims.registry.PROFILES)}; got {args.profile!r}")
    beside = claims.registry.check_beside([b for b in (args.beside or "").split(",") if b], args.profile)
    workers = claims.registry.default_workers() if args.workers is None else args.workers
    from .runs import report_damaged

    damaged: list = []

    def check() -> None:                                  # every damaged run file, before the builders read them
        from ..runs import check_store                    # (imports torch: while the workers start)

        damaged.extend(check_store("all"))

    with tqdm(total=len(srcs), desc="claims", unit="source", file=sys.stderr, disable=args.quiet) as bar:
        frames = claims.registry.build_frames(srcs, args.profile, workers, done=lambda *_: bar.update(), first=check)
    frames = claims.registry.add_beside(srcs, frames, beside, workers)
    import pandas as pd

    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=claims.COLUMNS)
    frame = frame[SHOWN]
    if not len(frame) and args.format == "table":
        print("no claims registered" + (f" for paper {args.paper}" if args.paper else "")
              + (f" of kind {args.kind}" if args.kind else ""))
        return 1 if report_damaged(damaged) else 0
    if args.format == "json":
        print(frame.to_json(orient="records", indent=1, force_ascii=False))
    elif args.format == "csv":
        print(frame.to_csv(index=False), end="")
    else:
        counts = claims.counts_frame(frame, by="paper") if len(frame) else None
        with pd.option_context("display.max_colwidth", 60, "display.width", 250, "display.max_rows", None):
            for paper, rows in frame.groupby("paper", sort=False):
                print(f"\n== {PAPERS[paper].short}: {PAPERS[paper].topic} ==")
                print(rows.drop(columns="paper").to_string(index=False))
            if counts is not None:
                print("\nverdicts per paper:")
                print(counts.to_string())
    return 1 if report_damaged(damaged) else 0


def add_subcommands(sub, parents) -> None:
    c = sub.add_parser("claims", parents=parents, help="print every claim the book checks, with its verdict")
    c.add_argument("--paper", help="only this paper (mukhoti2020, ghosh2022, tao2023, liang2024, komisarenko2024)")
    c.add_argument("--kind", help="only theory or experiment claims")
    c.add_argument("--format", default="table", help="table (default), json or csv")
    c.add_argument("--profile", default="cpu", help="grid sizes / runs of this profile: smoke, cpu (default), gpu, paper")
    c.add_argument("--workers", type=int, default=None,
                   help="processes building the chapters' claims (default: the CPU cores, at most 4; 1: none)")
    c.add_argument("--beside", default="",
                   help="comma-separated larger profiles (e.g. gpu,paper) whose verdicts on our runs follow each "
                        "experiment claim where the store holds their runs, as on the claims ledger page")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=_cmd_claims)
