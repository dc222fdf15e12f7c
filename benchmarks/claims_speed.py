"""How long the claims registry and the book take, cold and warm (issue #30, item 5).

    .venv/bin/python benchmarks/claims_speed.py            # replicate claims, cold then warm
    .venv/bin/python benchmarks/claims_speed.py --repeat 3 # each three times (the median is judged)
    .venv/bin/python benchmarks/claims_speed.py --book     # and the book from the committed runs
    .venv/bin/python benchmarks/claims_speed.py --smoke    # the code paths only (smoke profile; no book)

Each chapter computes its evidence once, as the sections of its report, kept on disk under
``<cache>/reports/`` (``replicate.comparison.report``). This script runs the commands as a
user would, in fresh processes, with ``REPLICATE_CACHE`` pointed at an empty temporary
folder (cold: no report, no calibration cached), then again with the same folder (warm:
every report read back). The committed run store is read, nothing trains. It prints each
wall time beside its target and the ratio, and checks that the cold and warm ledgers are
identical (the cache returns what it stored). The book is built as on a fresh clone: in a new
temporary folder (``replicate book --workdir``: no executed chapter and no HTML build to
reuse) with an empty cache, from the committed runs.

Targets (issue #30): ``replicate claims`` cold at most 60 s and warm at most 10 s;
``make book`` from the committed runs at most 6 minutes, on the 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"claims cold": 60.0, "claims warm": 10.0, "book": 360.0}


def _run(cmd: list[str], env: dict, out: Path | None = None) -> float:
    t0 = time.perf_counter()
    with open(out, "w") if out else open(os.devnull, "w") as fh:
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def reference_seconds(n: int = 5000) -> float:
    """Seconds of a fixed workload (the FTS grid of 5,000 seeded logits, 10 classes: 100 T x 9
    gamma_ev, the best of three) on this machine now: the same machine ran the same code 15 %
    faster or slower from one hour to the next, so each timing is printed beside it."""
    import numpy as np

    from replicate.posthoc import FTS_GAMMAS, TS_GRID
    from replicate.posthoc.fts_grid import grid_scores

    rng = np.random.default_rng(0)
    z, y = rng.normal(size=(n, 10)) * 3, rng.integers(0, 10, n)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        grid_scores(z, y, list(FTS_GAMMAS), TS_GRID, ("ece",))
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--book", action="store_true", help="also time `replicate book` (cold cache; several minutes)")
    ap.add_argument("--profile", default="cpu", help="profile of the claims and the book (default cpu)")
    ap.add_argument("--repeat", type=int, default=1, help="cold and warm runs of the claims each (default 1)")
    ap.add_argument("--smoke", action="store_true", help="the code paths only: the smoke profile, a tiny "
                    "reference workload, no book (the timings then mean nothing)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat must be a whole number >= 1; got {args.repeat}")
    if args.smoke:
        args.profile, args.book = "smoke", False
    ref_n = 200 if args.smoke else 5000
    py = sys.executable
    ref_before = reference_seconds(ref_n)
    times: dict = {"claims cold": [], "claims warm": []}
    same = True
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="claims-speed-") as tmp:
            env = {**os.environ, "REPLICATE_CACHE": tmp}
            env.pop("REPLICATE_REPORT_CACHE", None)
            cmd = [py, "-m", "replicate", "claims", "--format", "csv", "--quiet", "--profile", args.profile]
            times["claims cold"].append(_run(cmd, env, Path(tmp) / "cold.csv"))
            times["claims warm"].append(_run(cmd, env, Path(tmp) / "warm.csv"))
            same &= (Path(tmp) / "cold.csv").read_bytes() == (Path(tmp) / "warm.csv").read_bytes()
            n = len((Path(tmp) / "cold.csv").read_text().splitlines()) - 1
    if args.book:
        with tempfile.TemporaryDirectory(prefix="book-speed-") as tmp:
            env = {**os.environ, "REPLICATE_CACHE": str(Path(tmp) / "cache")}
            times["book"] = [_run([py, "-m", "replicate", "book", "--profile", args.profile,
                                   "--workdir", str(Path(tmp) / "book")], env)]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"profile {args.profile}, {cores} cores, load average {os.getloadavg()[0]:.1f} at the end; "
          f"{n} claims; cold and warm ledgers identical: {same}")
    print(f"reference workload (reference_seconds: lower is a faster machine): {ref_before:.3f} s before, "
          f"{reference_seconds(ref_n):.3f} s after")
    print(f"{'what':<12} {'seconds':>9} {'target':>8} {'ratio':>7}  each run (s)")
    for name, secs in times.items():
        sec = statistics.median(secs)
        print(f"{name:<12} {sec:9.1f} {TARGETS[name]:8.0f} {sec / TARGETS[name]:7.2f}  "
              f"{', '.join(f'{x:.1f}' for x in secs)}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
