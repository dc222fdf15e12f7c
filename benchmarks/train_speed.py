"""Seconds per training epoch: a loop in the style of the authors' code beside the engine.

    python benchmarks/train_speed.py                      # GPU: ResNet-50, full CIFAR-10, batch 128
    python benchmarks/train_speed.py --json $OUT/speed.json
    python benchmarks/train_speed.py --smoke              # CPU: a few steps on generated images
    python benchmarks/train_speed.py --concurrent 1,2,4,8 --models resnet18,resnet50   # k trainings at once

Issue #13, item 1. Modes, each training the same network from the same initial weights
with the papers' mathematics - summed cross-entropy, SGD (lr 0.1, momentum 0.9, weight
decay 5e-4), gradient-norm clipping at 2, random crop (4-pixel zero padding) and flip:

- ``reference``: the authors' style (Mukhoti et al.'s ``train.py``): a ``DataLoader``
  with ``--workers`` worker processes applying torchvision transforms to PIL images,
  pinned memory, a host copy per batch and ``loss.item()`` after every step;
- ``eager``: the engine's plain loop (data and augmentation on the device, one host
  synchronisation per epoch), float32 - the engine before issue #13;
- ``default``: the engine as ``TrainSettings()`` runs it (``engine="auto"``: the whole
  step captured as a CUDA graph on a GPU; eager on the CPU), float32;
- ``fastest``: graph + bf16 autocast (float32 head and loss) + channels-last.

Seconds per epoch are the median over the epochs after the first (which pays for
cuDNN's autotuning, the graph's warm-up and capture, the workers' start). The learning
rate is held at 0.1 (the first 150 epochs of the paper's schedule), so no re-capture
falls in the timed epochs. Per step: wall time, and the profiler's CPU time (all
operator time on the host) and GPU time (kernel time) over ``--profile-steps`` steps of
a warm epoch. The ratios are ``reference / mode`` (how many times faster). Targets on
one H100 (issue #13): ``fastest`` at most 3.5 s per epoch and at least 2.5x the
reference. Nothing here asserts: the numbers are printed (and written with ``--json``)
so that ``benchmarks/README.md`` can quote a real run.

``--concurrent K1,K2,...`` (issue #20, item 3) measures instead the aggregate throughput of
k trainings at once on the one device: for each network of ``--models`` and each k, k
separate processes (each pinned to its own set of CPU cores) train from generated images
of CIFAR's shape in the ``gpu`` profile's numerics (bf16 autocast, channels-last, the
engine's ``auto`` steps; float32 eager on the CPU) after ``--warmup-epochs`` short epochs;
once all k are warm (a file barrier) each counts the images it trains in ``--seconds``.
Printed per (network, k): images per second over all processes, the ratio to k = 1, and
the seconds one full CIFAR-10 epoch (45,000 images) takes per run when k run at once.
``--mps on`` measures under the CUDA MPS daemon (``nvidia-cuda-mps-control -d``, when the
machine has it; started before and stopped after), ``--mps both`` without and with it;
without it the processes' kernels only time-share the GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from replicate import data, losses, models, training  # noqa: E402
from replicate.training.engine import TrainSettings  # noqa: E402

MODES = ("reference", "eager", "default", "fastest")
HYPER = dict(lr=0.1, momentum=0.9, weight_decay=5e-4, clip_grad_norm=2.0, augment=True, milestones=())


def generated_splits(n_train: int, n_val: int, n_test: int, size: int = 32):
    """A learnable 10-class uint8 image set (colour per class plus noise) for ``--smoke``."""
    g = torch.Generator().manual_seed(0)
    colours = torch.rand(10, 3, 1, 1, generator=g) * 255

    def draw(n):
        y = torch.randint(0, 10, (n,), generator=g)
        x = colours[y] * 0.5 + 64 + 50 * torch.randn(n, 3, size, size, generator=g)
        return x.clamp(0, 255).to(torch.uint8), y

    info = data.DatasetInfo(name="generated", display_name="generated", num_classes=10,
                            classes=tuple(map(str, range(10))), kind="image", mean=data.CIFAR_MEAN,
                            std=data.CIFAR_STD, image_size=size)
    return data.Splits(draw(n_train), draw(n_val), draw(n_test), info)


def new_model(name: str, num_classes: int):
    torch.manual_seed(1)
    return models.get_model(name, num_classes)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def profiled(fn, device, steps: int) -> dict:
    """Per-step wall, CPU and GPU milliseconds of ``fn()`` (which runs ``steps`` steps)."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    sync(device)
    t0 = time.perf_counter()
    with profile(activities=acts) as prof:
        fn()
        sync(device)
    wall = time.perf_counter() - t0
    events = prof.key_averages()
    cpu_us = sum(e.self_cpu_time_total for e in events)
    gpu_us = sum(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)) for e in events)
    return {"wall_ms": 1e3 * wall / steps, "cpu_ms": cpu_us / 1e3 / steps,
            "gpu_ms": gpu_us / 1e3 / steps if device.type == "cuda" else None}


# ----------------------------------------------------------------------------- the authors' style
class PILImages(torch.utils.data.Dataset):
    """uint8 N x C x H x W images served as PIL images through torchvision transforms."""

    def __init__(self, x, y, transform):
        self.x, self.y, self.transform = x.permute(0, 2, 3, 1).contiguous().numpy(), y.tolist(), transform

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        from PIL import Image

        return self.transform(Image.fromarray(self.x[i])), self.y[i]


def reference_mode(splits, args, device) -> dict:
    import torchvision.transforms as T

    tf = T.Compose([T.RandomCrop(splits.info.image_size, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize(splits.info.mean, splits.info.std)])
    loader = torch.utils.data.DataLoader(PILImages(*splits.train, tf), batch_size=args.batch_size, shuffle=True,
                                         num_workers=args.workers, pin_memory=device.type == "cuda",
                                         persistent_workers=args.workers > 0)
    model = new_model(args.model, splits.info.num_classes).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=HYPER["lr"], momentum=HYPER["momentum"],
                          weight_decay=HYPER["weight_decay"])

    def epoch(max_steps=None):
        model.train()
        train_loss = 0.0
        for i, (xb, yb) in enumerate(loader):
            if max_steps is not None and i == max_steps:
                break
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb, reduction="sum")
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), HYPER["clip_grad_norm"])
            train_loss += loss.item()
            opt.step()
        return train_loss

    seconds = []
    for _ in range(args.epochs):
        t0 = time.perf_counter()
        epoch()
        sync(device)
        seconds.append(time.perf_counter() - t0)
    steps = min(args.profile_steps, len(loader))
    return {"seconds": seconds, **profiled(lambda: epoch(steps), device, steps)}


# ----------------------------------------------------------------------------- the engine
ENGINE_MODES = {
    "eager": dict(engine="eager", precision="float32", memory_format="contiguous"),
    "default": dict(),  # TrainSettings' own defaults: engine auto, float32, memory format auto
    "fastest": dict(engine="graph", precision="bf16", memory_format="channels_last"),
}


def engine_mode(mode, splits, args, device) -> dict:
    kw = dict(ENGINE_MODES[mode])
    if device.type != "cuda" and kw.get("engine") == "graph":
        kw["engine"] = "static"  # the graph engine's code without the capture (CPU smoke)
    s = TrainSettings(epochs=args.epochs, batch_size=args.batch_size, **HYPER, **kw)
    res = training.train(new_model(args.model, splits.info.num_classes), losses.get_loss("cross_entropy"), splits,
                         s, device=device, progress="none")
    out = {"seconds": [r["seconds"] for r in res.history], "engine": res.engine,
           "memory_format": res.memory_format, "precision": s.precision}
    # profile: a subset of exactly --profile-steps full batches, two epochs, the second profiled
    n = args.profile_steps * args.batch_size
    small = splits.subset(n_train=min(n, splits.train[1].numel()), n_val=args.batch_size, n_test=args.batch_size)
    steps = small.train[1].numel() // args.batch_size
    s2 = TrainSettings(epochs=2, batch_size=args.batch_size, **HYPER, **kw)
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    prof = profile(activities=acts)
    t = {}

    def hook(epoch, row):  # profile the second epoch's steps (and its end-of-epoch bookkeeping)
        sync(device)
        if epoch == 0:
            t["start"] = time.perf_counter()
            prof.start()
        else:
            t["wall"] = time.perf_counter() - t["start"]
            prof.stop()

    training.train(new_model(args.model, splits.info.num_classes), losses.get_loss("cross_entropy"), small, s2,
                   device=device, progress="none", on_epoch_end=hook)
    wall = t["wall"]
    events = prof.key_averages()
    cpu_us = sum(e.self_cpu_time_total for e in events)
    gpu_us = sum(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0)) for e in events)
    out.update(wall_ms=1e3 * wall / steps, cpu_ms=cpu_us / 1e3 / steps,
               gpu_ms=gpu_us / 1e3 / steps if device.type == "cuda" else None)
    return out


# ----------------------------------------------------------------------------- k trainings at once
CIFAR_TRAIN = 45_000  # training images of the reference split: the epoch the table's s/epoch refers to


class _Measured(Exception):
    """Raised by a concurrency worker's epoch hook once its window is measured."""


def concurrent_worker(args) -> int:
    """One of k processes: warm up, wait for the others, then count trained images for ``--seconds``."""
    import glob

    device = training.select_device(args.device)
    cuda = device.type == "cuda"
    steps = args.worker_steps
    splits = generated_splits(steps * args.batch_size, args.batch_size, args.batch_size)
    kw = dict(precision="bf16", memory_format="channels_last", engine=args.engine) if cuda else \
        dict(precision="float32", engine="eager")
    s = TrainSettings(epochs=10**6, batch_size=args.batch_size, **HYPER, **kw)
    state = {"images": 0}
    ready = os.path.join(args.barrier, f"ready-{os.getpid()}")

    def hook(epoch, row):
        sync(device)
        if epoch + 1 == args.warmup_epochs:
            open(ready, "w").close()
            t_wait = time.perf_counter()
            while len(glob.glob(os.path.join(args.barrier, "ready-*"))) < args.k:
                if time.perf_counter() - t_wait > 300:
                    raise RuntimeError("concurrency barrier: the other workers never got ready (300 s)")
                time.sleep(0.02)
            state["t0"] = time.perf_counter()
        elif epoch + 1 > args.warmup_epochs:
            state["images"] += steps * args.batch_size
            elapsed = time.perf_counter() - state["t0"]
            if elapsed >= args.seconds:
                state["seconds"] = elapsed
                raise _Measured

    try:
        res = training.train(new_model(args.model, 10), losses.get_loss("cross_entropy"), splits, s, device=device,
                             progress="none", on_epoch_end=hook)
        raise RuntimeError(f"worker finished {len(res.history)} epochs without reaching --seconds")
    except _Measured:
        pass
    with open(os.path.join(args.barrier, f"result-{os.getpid()}.json"), "w") as fh:
        json.dump({"images": state["images"], "seconds": state["seconds"]}, fh)
    return 0


def _core_sets(k: int) -> list[list[int]]:
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    per = max(1, len(cores) // k)
    return [cores[(i * per) % len(cores):(i * per) % len(cores) + per] for i in range(k)]


def _mps(on: bool) -> bool:
    """Start (``on``) or stop the CUDA MPS control daemon; False when the machine has none."""
    import shutil
    import subprocess

    exe = shutil.which("nvidia-cuda-mps-control")
    if exe is None:
        return False
    if on:
        return subprocess.run([exe, "-d"], capture_output=True).returncode == 0
    subprocess.run([exe], input=b"quit\n", capture_output=True)
    time.sleep(1.0)
    return True


def concurrent_mode(args) -> dict:
    """Aggregate throughput of k simultaneous trainings per network (see the module docstring)."""
    import subprocess
    import tempfile

    ks = [int(k) for k in args.concurrent.split(",") if k.strip()]
    if not ks or min(ks) < 1:
        raise SystemExit(f"--concurrent must be comma-separated counts >= 1; got {args.concurrent!r}")
    nets = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in nets if m not in models.MODELS or m == "text_cnn"]
    if bad or not nets:
        raise SystemExit(f"--models must be image networks of {', '.join(m for m in models.MODELS if m != 'text_cnn')}; "
                         f"got {args.models!r}")
    variants = {"off": [False], "on": [True], "both": [False, True]}[args.mps]
    rows = []
    for mps in variants:
        if mps and not _mps(True):
            print("  MPS: nvidia-cuda-mps-control is missing or failed to start; skipped", flush=True)
            break
        try:
            for net in nets:
                for k in ks:
                    with tempfile.TemporaryDirectory() as barrier:
                        t0 = time.perf_counter()
                        procs = []
                        for cores in _core_sets(k):
                            env = dict(os.environ, OMP_NUM_THREADS=str(len(cores)))
                            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--model", net,
                                   "--k", str(k), "--barrier", barrier, "--seconds", str(args.seconds),
                                   "--batch-size", str(args.batch_size), "--device", args.device,
                                   "--engine", args.engine, "--warmup-epochs", str(args.warmup_epochs),
                                   "--worker-steps", str(args.worker_steps)]
                            procs.append(subprocess.Popen(["taskset", "-c", ",".join(map(str, cores)), *cmd]
                                                          if _has_taskset() else cmd, env=env))
                        codes = [p.wait() for p in procs]
                        results = [json.load(open(os.path.join(barrier, f))) for f in sorted(os.listdir(barrier))
                                   if f.startswith("result-")]
                    if any(codes) or len(results) != k:
                        print(f"  {net} k={k}{' MPS' if mps else ''}: a worker failed (exit codes {codes})", flush=True)
                        continue
                    ips = sum(r["images"] / r["seconds"] for r in results)
                    per_run = min(r["images"] / r["seconds"] for r in results)
                    rows.append({"model": net, "k": k, "mps": mps, "images_per_s": ips,
                                 "s_per_epoch_per_run": CIFAR_TRAIN / per_run, "wall_s": time.perf_counter() - t0})
                    print(f"  {net} k={k}{' MPS' if mps else ''}: {ips:.0f} img/s in all, "
                          f"{CIFAR_TRAIN / per_run:.2f} s per 45k-image epoch per run "
                          f"({time.perf_counter() - t0:.0f} s)", flush=True)
        finally:
            if mps:
                _mps(False)
    base = {(r["model"], r["mps"]): r["images_per_s"] for r in rows if r["k"] == 1}
    print(f"\n{'network':<12}{'k':>3}{'MPS':>5}{'img/s (all)':>13}{'x k=1':>7}{'s/epoch/run':>13}")
    for r in rows:
        b = base.get((r["model"], False))
        r["x_k1"] = r["images_per_s"] / b if b else None
        print(f"{r['model']:<12}{r['k']:>3}{'yes' if r['mps'] else 'no':>5}{r['images_per_s']:>13.0f}"
              f"{'-' if b is None else format(r['x_k1'], '.2f'):>7}{r['s_per_epoch_per_run']:>13.2f}")
    return {"concurrent": rows}


def _has_taskset() -> bool:
    import shutil

    return shutil.which("taskset") is not None


def describe_device(device) -> str:
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        return (f"{p.name} ({p.total_memory / 2**30:.0f} GiB), CUDA {torch.version.cuda}, "
                f"cuDNN {torch.backends.cudnn.version()}")
    return f"CPU {platform.processor() or platform.machine()} ({torch.get_num_threads()} threads)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="CPU check: generated images, tiny_cnn, a few steps "
                    "(the timings mean nothing)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {', '.join(MODES)}")
    ap.add_argument("--model", default=None, help="network (default resnet50; tiny_cnn with --smoke)")
    ap.add_argument("--epochs", type=int, default=None, help="epochs per mode (default 3; 2 with --smoke)")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--workers", type=int, default=None,
                    help="DataLoader workers of the reference (default 4; 0 with --smoke)")
    ap.add_argument("--profile-steps", type=int, default=None, help="steps profiled per mode (default 20; 2 smoke)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--concurrent", metavar="K1,K2,...", help="measure k trainings at once instead (issue #20)")
    ap.add_argument("--models", default="resnet18,resnet50", help="networks of --concurrent (default resnet18,resnet50)")
    ap.add_argument("--seconds", type=float, default=6.0, help="--concurrent: measured seconds per worker (default 6)")
    ap.add_argument("--warmup-epochs", type=int, default=2, help="--concurrent: untimed epochs first (default 2)")
    ap.add_argument("--worker-steps", type=int, default=20, help="--concurrent: steps per short epoch (default 20)")
    ap.add_argument("--engine", default="auto", choices=["auto", "eager", "static", "graph"],
                    help="--concurrent: the engine's steps (default auto)")
    ap.add_argument("--mps", default="off", choices=["off", "on", "both"],
                    help="--concurrent: without (default), with, or without and with the CUDA MPS daemon")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--barrier", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return concurrent_worker(args)
    if args.concurrent:
        if args.smoke:
            torch.set_num_threads(1)
            args.device, args.batch_size, args.seconds = "cpu", min(args.batch_size, 16), min(args.seconds, 1.0)
            args.worker_steps = min(args.worker_steps, 2)
        device = training.select_device(args.device)
        print(f"train_speed --concurrent: device {describe_device(device)}; torch {torch.__version__}; "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; batch {args.batch_size}, "
              f"{args.seconds:g} s measured per worker", flush=True)
        out = concurrent_mode(args)
        if args.json:
            out["meta"] = {"device": describe_device(device), "torch": torch.__version__,
                           "date": time.strftime("%Y-%m-%d", time.gmtime()), "batch_size": args.batch_size}
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)
            print(f"wrote {args.json}")
        return 0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise SystemExit(f"--modes must be a comma-separated subset of {', '.join(MODES)}; got {args.modes!r}")
    smoke = args.smoke
    args.model = args.model or ("tiny_cnn" if smoke else "resnet50")
    args.epochs = args.epochs or (2 if smoke else 3)
    args.workers = (0 if smoke else 4) if args.workers is None else args.workers
    args.profile_steps = args.profile_steps or (2 if smoke else 20)
    if smoke:
        args.batch_size = min(args.batch_size, 16)
        torch.set_num_threads(1)
    if args.epochs < 2:
        raise SystemExit("--epochs must be at least 2 (the first epoch is not timed)")
    device = training.select_device(args.device)
    if smoke:
        splits = generated_splits(4 * args.batch_size + 5, 32, 32)
        what = f"--smoke: {args.model} on {splits.train[1].numel()} generated 32x32 images"
    else:
        splits = data.load("cifar10")
        what = f"{args.model} on CIFAR-10 ({splits.train[1].numel()} training images, the reference split)"
    print(f"train_speed: {what}, batch {args.batch_size}, {args.epochs} epochs per mode")
    print(f"device: {describe_device(device)}; torch {torch.__version__}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    results = {}
    for mode in modes:
        t0 = time.perf_counter()
        results[mode] = reference_mode(splits, args, device) if mode == "reference" else \
            engine_mode(mode, splits, args, device)
        r = results[mode]
        r["seconds_per_epoch"] = statistics.median(r["seconds"][1:])
        print(f"  {mode:<9} done in {time.perf_counter() - t0:.0f} s: epochs {[round(s, 2) for s in r['seconds']]}",
              flush=True)
    ref = results.get("reference", {}).get("seconds_per_epoch")
    print(f"\n{'mode':<10}{'engine':<8}{'precision':<10}{'s/epoch':>9}{'x ref':>8}{'wall ms':>9}"
          f"{'CPU ms':>9}{'GPU ms':>9}   (per step)")
    for mode, r in results.items():
        ratio = f"{ref / r['seconds_per_epoch']:.2f}" if ref else "-"
        gpu = "-" if r.get("gpu_ms") is None else f"{r['gpu_ms']:.1f}"
        print(f"{mode:<10}{r.get('engine', 'loop'):<8}{r.get('precision', 'float32'):<10}"
              f"{r['seconds_per_epoch']:>9.2f}{ratio:>8}{r['wall_ms']:>9.1f}{r['cpu_ms']:>9.1f}{gpu:>9}")
    if "fastest" in results and device.type == "cuda" and not smoke:
        f = results["fastest"]["seconds_per_epoch"]
        print(f"\ntarget (issue #13): fastest <= 3.5 s/epoch: {'met' if f <= 3.5 else 'NOT met'} ({f:.2f} s)"
              + (f"; >= 2.5x reference: {'met' if ref / f >= 2.5 else 'NOT met'} ({ref / f:.2f}x)" if ref else ""))
    if args.json:
        meta = {"device": describe_device(device), "torch": torch.__version__, "date": time.strftime(
            "%Y-%m-%d", time.gmtime()), "model": args.model, "batch_size": args.batch_size, "smoke": smoke,
            "n_train": int(splits.train[1].numel())}
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
