"""Speed of replicate.metrics beside the oracle libraries, from one run.

    .venv/bin/python benchmarks/metrics.py            # N = 1,000,000 samples, K = 100
    .venv/bin/python benchmarks/metrics.py --n 100000 # smaller

Float32 softmax probabilities of random logits; each prediction is right with probability
(confidence - 0.1), so the model is over-confident as in the papers. Each implementation is timed once, after
a warm-up call on 1,000 samples that keeps imports and lazy set-up out of the timing.
Libraries written in pure Python (the `calibration` package of Kumar et al. 2019, pycalib)
run on the first ``--oracle-n`` samples where a full run would take minutes; their ratio
is then taken against replicate timed on the same subsample. ratio = time / replicate's.
Targets from the issue: ECE at least as fast as torchmetrics; classwise ECE under 10 s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import replicate.metrics as M  # noqa: E402


def _data(n: int, k: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    p = torch.softmax(torch.randn(n, k, generator=g) * 3.0, dim=1)
    conf, pred = p.max(dim=1)
    # correct with probability conf - 0.1: over-confident by about 10 points
    hit = torch.rand(n, generator=g) < conf - 0.1
    other = (pred + torch.randint(1, k, (n,), generator=g)) % k
    return p.numpy(), torch.where(hit, pred, other).numpy()


def _impls(k: int, n_bins: int):
    """metric -> list of (implementation, slow_python, fn(p, y) -> float)."""
    from torchmetrics.functional.classification import multiclass_calibration_error as tm_ce

    def tm(p, y):
        return tm_ce(torch.from_numpy(p), torch.from_numpy(y), k, n_bins=n_bins, norm="l1")

    out = {
        "ECE (15 equal-width)": [
            ("replicate", False, lambda p, y: M.ece(p, y, n_bins)),
            ("torchmetrics", False, tm),
        ],
        "AdaECE (15 equal-mass)": [
            ("replicate", False, lambda p, y: M.adaptive_ece(p, y, n_bins)),
            ("replicate paper_compat", False,
             lambda p, y: M.adaptive_ece(p, y, n_bins, paper_compat=True)),
        ],
        "classwise ECE (15 bins)": [
            ("replicate", False, lambda p, y: M.classwise_ece(p, y, n_bins)),
            ("replicate paper_compat", False,
             lambda p, y: M.classwise_ece(p, y, n_bins, paper_compat=True)),
        ],
    }
    try:
        import calibration as cal

        def top(p):
            return p.max(axis=1).astype(np.float64), p.argmax(axis=1)

        def kumar_top(scheme):
            def f(p, y):
                conf, pred = top(p)
                return cal.lower_bound_scaling_ce(conf, (pred == y).astype(int), p=1,
                                                  debias=False, num_bins=n_bins,
                                                  binning_scheme=scheme, mode="top-label")
            return f

        out["ECE (15 equal-width)"].append(
            ("uncertainty-calibration", True, kumar_top(cal.get_equal_prob_bins)))
        out["AdaECE (15 equal-mass)"].append(
            ("uncertainty-calibration", True, kumar_top(cal.get_equal_bins)))
        out["classwise ECE (15 bins)"].append(
            ("uncertainty-calibration", True,
             lambda p, y: cal.get_ece(p.astype(np.float64), y, num_bins=n_bins, mode="marginal")))
    except ImportError:
        print("uncertainty-calibration not installed: skipped")
    try:
        from pycalib.metrics import classwise_ECE, conf_ECE

        out["ECE (15 equal-width)"].append(
            ("pycalib", True, lambda p, y: conf_ECE(y, p, bins=n_bins)))
        out["classwise ECE (15 bins)"].append(
            ("pycalib", False,
             lambda p, y: classwise_ECE(np.eye(p.shape[1], dtype=np.uint8)[y], p, bins=n_bins)))
    except ImportError:
        print("pycalib not installed: skipped")
    return out


def _time(fn, p, y):
    t0 = time.perf_counter()
    v = float(fn(p, y))
    return time.perf_counter() - t0, v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="samples (default 1,000,000)")
    ap.add_argument("--k", type=int, default=100, help="classes (default 100)")
    ap.add_argument("--bins", type=int, default=15, help="bins (default 15)")
    ap.add_argument("--oracle-n", type=int, default=100_000,
                    help="samples given to pure-Python oracles (default 100,000)")
    a = ap.parse_args(argv)
    if a.n < 1000 or a.k < 2 or a.bins < 1 or a.oracle_n < 1000:
        ap.error("need --n >= 1000, --k >= 2, --bins >= 1, --oracle-n >= 1000")
    print(f"torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}; "
          f"data: {a.n:,} x {a.k} float32 probabilities")
    t0 = time.perf_counter()
    p, y = _data(a.n, a.k)
    print(f"data generated in {time.perf_counter() - t0:.1f} s\n")
    impls = _impls(a.k, a.bins)
    small = (p[:1000], y[:1000])
    sub_n = min(a.oracle_n, a.n)
    sub = (p[:sub_n], y[:sub_n])
    head = f"{'metric':<24} {'implementation':<24} {'N':>9} {'seconds':>9} {'ratio':>7} {'value':>10}"
    print(head + "\n" + "-" * len(head))
    verdict = {}
    for metric, rows in impls.items():
        ours = {}
        for name, slow, fn in rows:
            fn(*small)  # warm-up: imports, lazy set-up
            data = sub if slow else (p, y)
            nn = data[0].shape[0]
            if name == "replicate" and nn not in ours:
                ours[nn] = _time(fn, *data)
            if slow and nn not in ours:
                ours[nn] = _time(rows[0][2], *data)
            sec, val = ours[nn] if name == "replicate" else _time(fn, *data)
            ratio = sec / ours[nn][0]
            print(f"{metric:<24} {name:<24} {nn:>9,} {sec:>9.3f} {ratio:>7.2f} {val:>10.6f}")
            verdict[(metric, name)] = sec
        print()
    e, t = verdict[("ECE (15 equal-width)", "replicate")], verdict[("ECE (15 equal-width)", "torchmetrics")]
    c = verdict[("classwise ECE (15 bins)", "replicate")]
    print(f"target ECE <= torchmetrics: {e:.3f} s vs {t:.3f} s -> {'met' if e <= t else 'NOT met'}")
    print(f"target classwise ECE < 10 s: {c:.3f} s -> {'met' if c < 10 else 'NOT met'}")
    z = np.random.default_rng(1).normal(size=(10_000, 100)).astype(np.float32)
    yy = np.random.default_rng(2).integers(0, 100, 10_000)
    M.evaluate(z, yy)
    sec, _ = _time(lambda zz, lab: M.evaluate(zz, lab)["ece"], z, yy)
    print(f"evaluate() on 10,000 x 100 logits (training engine, per epoch): {sec:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
