"""Speed of the focal temperature scaling grid search beside a per-pair loop, from one run.

    .venv/bin/python benchmarks/fts_grid.py                 # N = 5,000 validation logits, K = 10
    .venv/bin/python benchmarks/fts_grid.py --n 10000 --k 100

The FTS fit scores every (gamma_ev, T) pair of the paper's grid: 9 gammas x 100 temperatures
(the authors' code) or x 500 (the paper's text). ``replicate.posthoc.fit_focal_temperatures``
computes the parts of the map that do not depend on gamma once per block of temperatures and
scores log-loss and equal-mass ECE from one pass; the reference loop applies
``replicate.theory.fts.calibration_map.focal_calibration_map`` and ``replicate.metrics`` pair by pair (what
``fit_focal_temperature`` did before). Both choose the same (gamma_ev, T); ratio = time / replicate's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from replicate import metrics, posthoc, synthetic  # noqa: E402
from replicate.theory.fts.calibration_map import focal_calibration_map  # noqa: E402


def loop(z, y, temps):
    """Per-pair reference: first minimum of log-loss and of equal-mass ECE over (gamma, T)."""
    best = {"nll": (np.inf, None), "adaece": (np.inf, None)}
    for g in posthoc.FTS_GAMMAS:
        for t in temps:
            p = focal_calibration_map(metrics.probs_from_logits(z, t), g)
            with np.errstate(divide="ignore"):
                scores = {"nll": -np.mean(np.log(p[np.arange(len(y)), y])),
                          "adaece": metrics.adaptive_ece(p, y, validate=False)}
            for m, s in scores.items():
                if s < best[m][0]:
                    best[m] = (s, (g, float(t)))
    return {m: v[1] for m, v in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--grid", choices=("code", "paper"), default="code")
    args = ap.parse_args()
    s = synthetic.LogitModel(n_classes=args.k, beta=1.6, scale=4.0).sample(args.n, rng=0)
    temps = posthoc.FTS_T_GRID if args.grid == "code" else posthoc.PAPER_T_GRID
    posthoc.fit_focal_temperatures(s.logits[:200], s.labels[:200], temperatures=temps[:3])  # warm-up
    t0 = time.perf_counter()
    fits = posthoc.fit_focal_temperatures(s.logits, s.labels, temperatures=temps)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = loop(s.logits, s.labels, temps)
    theirs = time.perf_counter() - t0
    same = all(ref[m] == (fits[m].gamma, fits[m].T) for m in ref)
    print(f"N = {args.n}, K = {args.k}, {len(posthoc.FTS_GAMMAS)} gammas x {len(temps)} temperatures "
          f"({args.grid} grid); log-loss and equal-mass ECE")
    print(f"{'implementation':<34}{'seconds':>10}{'ratio':>8}")
    print(f"{'replicate fit_focal_temperatures':<34}{ours:>10.2f}{1.0:>8.1f}")
    print(f"{'per-pair loop (map + metrics)':<34}{theirs:>10.2f}{theirs / ours:>8.1f}")
    print(f"same choices: {same}")


if __name__ == "__main__":
    main()
