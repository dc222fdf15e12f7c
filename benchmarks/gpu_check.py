"""Check the fast training engine against float32 eager training, loss by loss; fail loudly.

    python benchmarks/gpu_check.py                    # GPU: every loss, ResNet-50, CIFAR-10 subset
    python benchmarks/gpu_check.py --losses adafocal,fls531 --json $OUT/check.json
    python benchmarks/gpu_check.py --smoke            # CPU: the same comparisons, static engine, tiny net

Issue #13, item 2. For each loss of the package the same network (same initial weights,
same data order and augmentation draws) is trained for ``--epochs`` short epochs of
``--steps`` full batches plus one smaller batch, with the learning rate decaying at the
paper's 150/350 and 250/350 (two re-captures), FLS's gamma switching at 100/350 and
250/350, and AdaFocal-type losses updating their gammas from the validation set after
every epoch - all the state changes a captured graph must see. Modes:

- ``eager``  : float32, the plain loop (deterministic algorithms) - the reference;
- ``eager2`` : the same again: the floor of run-to-run differences on this device;
- ``graph``  : float32, the whole step captured as a CUDA graph (``static`` on the CPU);
- ``eagerbf``: the eager loop with the fast mode's numerics (bf16 autocast with a
  float32 head and loss, channels-last);
- ``fast``   : graph + bf16 + channels-last: the ``gpu`` profile's fast mode.

Pass criteria (per loss), on the per-epoch mean training loss and the loss state
(FLS's gamma, AdaFocal-type gammas and their number of updates):

1. ``graph`` equals ``eager`` and ``fast`` equals ``eagerbf``, epoch by epoch and in the
   final state, up to ``max(1e-5, 10 x the eager/eager2 difference)`` relative - the
   capture must not change what is computed (on the CPU, ``--smoke``: exactly);
2. ``fast`` against float32 ``eager`` over the first epoch (the first ``--steps`` + 1
   steps): within 5 % relative - bf16 rounding before the trajectories drift apart;
   later epochs are printed, not judged (bf16 and float32 runs of a chaotic early
   training, or of CalFocal's exploding gammas, part ways); every epoch finite, the same
   FLS gamma and as many AdaFocal updates.

All modes run with PyTorch's deterministic algorithms (``--nondeterministic`` turns them
off). A mode that raises (a capture that fails on a host synchronisation inside a loss, say)
fails its loss, and the check goes on with the next. The
script prints every curve and exits with status 1 naming each failing loss.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before the first cuBLAS call
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from replicate import data, losses, models, training  # noqa: E402
from replicate.profiles import PAPER_MILESTONES  # noqa: E402
from replicate.training.engine import TrainSettings  # noqa: E402

TOL_SAME = 1e-5
FLOOR_FACTOR = 10.0
TOL_FAST_FIRST = 0.05
MODES = {
    "eager": dict(engine="eager", precision="float32", memory_format="contiguous"),
    "eager2": dict(engine="eager", precision="float32", memory_format="contiguous"),
    "graph": dict(engine="graph", precision="float32", memory_format="contiguous"),
    "eagerbf": dict(engine="eager", precision="bf16", memory_format="channels_last"),
    "fast": dict(engine="graph", precision="bf16", memory_format="channels_last"),
}


def generated_splits(n_train, n_val, n_test):
    g = torch.Generator().manual_seed(0)
    colours = torch.rand(10, 3, 1, 1, generator=g) * 255

    def draw(n):
        y = torch.randint(0, 10, (n,), generator=g)
        return (colours[y] * 0.5 + 64 + 50 * torch.randn(n, 3, 32, 32, generator=g)).clamp(0, 255).to(torch.uint8), y

    info = data.DatasetInfo(name="generated", display_name="generated", num_classes=10,
                            classes=tuple(map(str, range(10))), kind="image", mean=data.CIFAR_MEAN,
                            std=data.CIFAR_STD, image_size=32)
    return data.Splits(draw(n_train), draw(n_val), draw(n_test), info)


def state_of(loss) -> dict:
    buffers = dict(loss.named_buffers())
    return {k: buffers[k].detach().double().cpu().reshape(-1).tolist()
            for k in ("current_gamma", "gamma", "n_updates") if k in buffers}


def train_once(name, mode, splits, args, device):
    kw = dict(MODES[mode])
    if device.type != "cuda":
        kw["engine"] = "static" if kw["engine"] == "graph" else kw["engine"]
        kw["memory_format"] = "contiguous"
    s = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, lr=0.1, milestones=PAPER_MILESTONES,
                      clip_grad_norm=2.0, augment=True, eval_batch_size=500, **kw)
    torch.manual_seed(1)
    model = models.get_model(args.model, splits.info.num_classes)
    loss = losses.get_loss(name)
    t0 = time.perf_counter()
    res = training.train(model, loss, splits, s, device=device, deterministic=args.deterministic, progress="none")
    return {"loss": [r["train_loss"] for r in res.history], "state": state_of(loss), "engine": res.engine,
            "seconds": time.perf_counter() - t0}


def rel(a, b) -> float:
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b)) if a else 0.0


def state_rel(a: dict, b: dict) -> float:
    worst = 0.0
    for k in a:
        worst = max(worst, rel(a[k], b[k]))
    return worst


def check(name, runs, smoke) -> list[str]:
    """The failures of one loss (empty when it passes)."""
    fails = []
    e, e2, f = runs["eager"], runs["eager2"], runs["fast"]
    for m, r in runs.items():
        if not all(math.isfinite(v) for v in r["loss"]):
            fails.append(f"{m}: non-finite training loss {r['loss']}")
    floor = max(rel(e2["loss"], e["loss"]), state_rel(e2["state"], e["state"]))
    tol = 0.0 if smoke else max(TOL_SAME, FLOOR_FACTOR * floor)
    for a, b in (("graph", "eager"), ("fast", "eagerbf")):
        d = rel(runs[a]["loss"], runs[b]["loss"])
        if d > tol:
            fails.append(f"{a} vs {b}: loss curves differ by {d:.3g} relative (allowed {tol:.3g})")
        ds = state_rel(runs[a]["state"], runs[b]["state"])
        if ds > tol:
            fails.append(f"{a} vs {b}: loss state differs by {ds:.3g} relative (allowed {tol:.3g})")
    d1 = rel(f["loss"][:1], e["loss"][:1])
    if d1 > TOL_FAST_FIRST:
        fails.append(f"fast vs eager: first-epoch loss differs by {d1:.3g} relative (allowed {TOL_FAST_FIRST})")
    if "current_gamma" in e["state"] and f["state"]["current_gamma"] != e["state"]["current_gamma"]:
        fails.append(f"fast vs eager: FLS gamma {f['state']['current_gamma']} != {e['state']['current_gamma']}")
    if "n_updates" in e["state"] and f["state"]["n_updates"] != e["state"]["n_updates"]:
        fails.append("fast vs eager: a different number of AdaFocal updates")
    if "gamma" in f["state"] and not all(math.isfinite(v) for v in f["state"]["gamma"]):
        fails.append(f"fast: non-finite gammas {f['state']['gamma']}")
    return fails


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="CPU: static engine, tiny_cnn, generated images")
    ap.add_argument("--losses", default=",".join(losses.available_losses()),
                    help="comma-separated loss names (default: every loss)")
    ap.add_argument("--model", default=None, help="network (default resnet50; tiny_cnn with --smoke)")
    ap.add_argument("--epochs", type=int, default=5, help="epochs (default 5: two lr decays, two FLS switches)")
    ap.add_argument("--steps", type=int, default=None, help="full batches per epoch (default 10; 3 with --smoke)")
    ap.add_argument("--batch-size", type=int, default=None, help="default 128; 16 with --smoke")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--nondeterministic", dest="deterministic", action="store_false",
                    help="leave PyTorch's deterministic algorithms off (the tolerance then follows the eager/eager2 "
                         "difference); use it if a capture fails only under deterministic algorithms")
    ap.add_argument("--json", help="also write every curve and verdict to this JSON file")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.losses.split(",") if n.strip()]
    unknown = [n for n in names if n not in losses.LOSSES]
    if unknown or not names:
        raise SystemExit(f"--losses: unknown {unknown}; available: {', '.join(losses.available_losses())}")
    device = training.select_device(args.device)
    smoke = args.smoke
    if not smoke and device.type != "cuda":
        raise SystemExit("gpu_check needs a CUDA device; on a CPU run it with --smoke")
    args.model = args.model or ("tiny_cnn" if smoke else "resnet50")
    args.steps = args.steps or (3 if smoke else 10)
    args.batch_size = args.batch_size or (16 if smoke else 128)
    if smoke:
        torch.set_num_threads(1)
    n_train = args.steps * args.batch_size + args.batch_size // 2  # full batches and one smaller
    if smoke:
        splits = generated_splits(n_train, 64, 32)
    else:
        splits = data.load("cifar10").subset(n_train=n_train, n_val=1000, n_test=500)
    dev = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"gpu_check on {dev}, torch {torch.__version__}: {args.model}, {n_train} training images "
          f"({args.steps} full batches of {args.batch_size} + 1), {args.epochs} epochs, losses: {', '.join(names)}")
    report, failed = {}, {}
    for name in names:
        runs, crashed = {}, []
        for m in MODES:
            try:
                runs[m] = train_once(name, m, splits, args, device)
            except Exception as err:  # noqa: BLE001 - a failed capture is a result: report it, go on
                crashed.append(f"{m}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
        fails = crashed or check(name, runs, smoke)
        report[name] = {"runs": runs, "failures": fails}
        verdict = "ok" if not fails else "FAIL"
        print(f"\n{name}: {verdict}  (" + ", ".join(f"{m} {r['engine']} {r['seconds']:.1f}s" for m, r in runs.items())
              + ")")
        for m, r in runs.items():
            print(f"  {m:<7}" + " ".join(f"{v:9.5f}" for v in r["loss"]) + (f"  state {r['state']}" if r["state"]
                                                                            else ""))
        for msg in fails:
            print(f"  !! {msg}")
        if fails:
            failed[name] = fails
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": dev, "torch": torch.__version__, "smoke": smoke, "report": report}, fh, indent=1)
    if failed:
        print(f"\nFAILED: {len(failed)} of {len(names)} losses: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"\nall {len(names)} losses passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
