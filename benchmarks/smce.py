"""The exact Lipschitz smCE (``replicate.smce``): the dynamic programme on deques in Python
beside the same programme on arrays compiled by numba (the ``fast`` extra), on the sizes the
noise model meets (a resample of a 10,000-image test set) and larger; both must give the same
number to the last bit.

    .venv/bin/python benchmarks/smce.py            # about 10 s
    .venv/bin/python benchmarks/smce.py --smoke    # tiny sizes: the code paths only
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from replicate import smce


def _best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (the timings then mean nothing)")
    args = ap.parse_args()
    compiled = smce._solver()
    if compiled is smce._dynamic_programme:
        print("numba is not installed (pip install \"focal-calibration[fast]\"): nothing to compare")
        return 1
    rng = np.random.default_rng(0)
    print(f"{'predictions':>12} {'distinct':>9} {'deques s':>10} {'compiled s':>11} {'ratio':>7}  same bits")
    ok = True
    for n in ((200, 1000) if args.smoke else (6_300, 10_000, 50_000)):
        conf = np.round(rng.beta(5, 1.5, n), 6)                       # top-label confidences, some tied
        hit = (rng.uniform(size=n) < conf ** 1.3).astype(np.float64)   # over-confident
        v, r = smce._support(conf, hit)
        compiled(v, r)                                                 # compiled (or read from numba's cache)
        slow, fast = _best(lambda: smce._dynamic_programme(v, r), 3), _best(lambda: compiled(v, r), 20)
        same = smce._dynamic_programme(v, r) == compiled(v, r)
        ok &= bool(same)
        print(f"{n:>12,} {v.size:>9,} {slow:>10.4f} {fast:>11.6f} {slow / fast:>7.0f}  {same}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
