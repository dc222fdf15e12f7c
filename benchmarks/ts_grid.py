"""Speed of the temperature-scaling grid search beside a naive per-temperature loop, from one run.

    .venv/bin/python benchmarks/ts_grid.py                  # N = 10,000 validation logits, K = 100

``replicate.posthoc.fit_temperature`` scores the papers' 100 temperatures (0.1..10.0) by
validation ECE from the top-1 confidence alone (the predicted class does not change with
T); the reference loop builds the full softmax at each T and calls ``replicate.metrics.ece``.
Both must choose the same T; ratio = reference time / replicate's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from replicate import metrics, posthoc  # noqa: E402


def loop(z, y):
    scores = [metrics.ece(metrics.probs_from_logits(z, t), y) for t in posthoc.TS_GRID]
    return float(posthoc.TS_GRID[int(np.argmin(scores))])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, size=(args.n, args.k))
    y = rng.integers(0, args.k, size=args.n)
    posthoc.fit_temperature(z[:100], y[:100], method="grid", metric="ece")  # warm-up
    t0 = time.perf_counter()
    fast = posthoc.fit_temperature(z, y, method="grid", metric="ece").params["T"]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = loop(z, y)
    t_ref = time.perf_counter() - t0
    print(f"N={args.n} K={args.k}, 100 temperatures, selection by validation ECE")
    print(f"{'replicate.posthoc.fit_temperature':40s} {t_fast:8.3f} s   T = {fast:g}")
    print(f"{'full softmax + metrics.ece per T':40s} {t_ref:8.3f} s   T = {ref:g}   ratio {t_ref / t_fast:.1f}x")
    if fast != ref:
        print("MISMATCH: the two searches chose different temperatures", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
