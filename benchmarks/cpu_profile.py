"""Choose the ``cpu`` profile by measurement (issue #25): candidate settings side by side.

    python benchmarks/cpu_profile.py --json cpu_profile.json      # on a quiet 2-core machine (~15 min)
    python benchmarks/cpu_profile.py --smoke                      # the code paths, seconds

For each candidate setting (training images, network, epochs, augmentation; validation
5,000 images and always the full 10,000 test images) it trains cross-entropy and focal
loss (gamma = 3) at seed 1 on two CPU threads, in a private run cache, and prints per run:
wall and CPU seconds, test error, ECE (15 bins) before and after temperature scaling, and
the noise floor - the mean ECE a perfectly calibrated model with the same confidences
shows at this test size (:func:`replicate.comparison.scale.calibrated_ece`). The rule of issue #25:
the setting with the lowest cross-entropy error whose cross-entropy model is clearly
over-confident before scaling (ECE >= 5 %) and whose runs take at most about 60 s; the
script prints which candidate that is. Nothing asserts: the table goes into
``benchmarks/README.md`` and the profile's docstring.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: label -> (n_train, model, model_params, epochs, augment). The first is today's ``cpu``.
CANDIDATES = {
    "now: 3k, tiny_cnn w32, 20 ep": (3000, "tiny_cnn", {"width": 32}, 20, False),
    "10k, tiny_cnn w32, 20 ep": (10000, "tiny_cnn", {"width": 32}, 20, False),
    "15k, tiny_cnn w32, 15 ep": (15000, "tiny_cnn", {"width": 32}, 15, False),
    "20k, tiny_cnn w32, 12 ep": (20000, "tiny_cnn", {"width": 32}, 12, False),
    "10k, tiny_cnn w48, 15 ep": (10000, "tiny_cnn", {"width": 48}, 15, False),
    "10k, resnet8 w16, 15 ep": (10000, "resnet8", {"width": 16}, 15, False),
    "10k, tiny_cnn w32, 20 ep, augment": (10000, "tiny_cnn", {"width": 32}, 20, True),
}
METHODS = {"cross-entropy": ("cross_entropy", {}), "focal (gamma 3)": ("focal", {"gamma": 3.0})}
LIMIT_S, MIN_ECE = 60.0, 0.05


def run_one(label, spec, method, smoke: bool) -> dict:
    import replicate as rp

    n_train, model, params, epochs, augment = spec
    loss, loss_params = METHODS[method]
    options = {"n_train": n_train, "n_val": 5000, "n_test": None, "epochs": epochs, "augment": augment}
    if smoke:
        options.update(n_train=min(n_train, 300), n_val=100, n_test=200, epochs=1)
    cfg = rp.runs.RunConfig("cifar10", loss, loss_params, model=model, model_params=params, profile="cpu",
                            options=options)
    wall, cpu = time.perf_counter(), time.process_time()
    run = rp.runs.get_or_train(cfg, store="cache", progress="none", device="cpu")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    logits, labels = run.logits("test")
    probs = rp.metrics.softmax(logits) if hasattr(rp.metrics, "softmax") else _softmax(logits)
    floor, _ = rp.comparison.scale.calibrated_ece(probs, reps=20 if smoke else 200)
    m, m_ts = run.metrics["test"], run.metrics["test_ts"]
    return {"candidate": label, "method": method, "wall_s": wall, "cpu_s": cpu, "n_test": int(len(labels)),
            "error": m["error"], "ece": m["ece"], "ece_ts": m_ts["ece"], "T": run.temperature,
            "train_acc": run.history[-1].get("train/accuracy", run.history[-1].get("train_accuracy"))
            if run.history else None, "ece_floor": floor}


def _softmax(z):
    import numpy as np

    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one epoch: the code paths only")
    ap.add_argument("--candidates", help="comma-separated indices into the candidate list (default all)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(2)
    os.environ["REPLICATE_CACHE"] = tempfile.mkdtemp(prefix="cpu-profile-")   # a private run cache
    chosen = list(CANDIDATES.items())
    if args.candidates:
        try:
            chosen = [chosen[int(i)] for i in args.candidates.split(",")]
        except (ValueError, IndexError):
            raise SystemExit(f"--candidates must be indices 0..{len(CANDIDATES) - 1}; got {args.candidates!r}")
    print(f"cpu_profile: {len(chosen)} candidates x {len(METHODS)} methods, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          f", load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for label, spec in chosen:
        for method in METHODS:
            r = run_one(label, spec, method, args.smoke)
            rows.append(r)
            print(f"  {label:<36} {method:<16} {r['wall_s']:6.1f} s (cpu {r['cpu_s']:6.1f} s)  error "
                  f"{100 * r['error']:5.1f} %  ECE {100 * r['ece']:5.2f} % -> {100 * r['ece_ts']:5.2f} % (T "
                  f"{r['T']:.2f})  floor {100 * r['ece_floor']:.2f} %", flush=True)
    ok = [r for r in rows if r["method"] == "cross-entropy" and r["ece"] >= MIN_ECE
          and max(x["wall_s"] for x in rows if x["candidate"] == r["candidate"]) <= LIMIT_S]
    best = min(ok, key=lambda r: r["error"]) if ok else None
    print("\nchoice (lowest cross-entropy error with ECE >= 5 % and every run <= 60 s): "
          + (best["candidate"] if best else "none of the candidates"))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "choice": best["candidate"] if best else None,
                       "load_average": os.getloadavg()[0]}, fh, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
