"""The GPU job (issue #20): one command that spends a GPU loan on the queue's next runs.

A GPU machine is lent rarely, for 15 minutes of device time, one command at most 10
minutes, at most 8 files of 16 MiB back. ``replicate gpu-job`` (``make gpu-job``) is
prepared and rehearsed on the CPU so that a loan needs no thinking on the machine:

1. it prints the device, PyTorch and the free GPU memory;
2. it starts the CUDA MPS daemon when the machine has one (``mps="auto"``: four trainings
   at once train 1.6 times as many images per second under MPS as without, measured);
3. it checks the CUDA-graph engine on the losses of the runs it will train, in about a
   minute (``benchmarks/gpu_check.py`` on a small ResNet-18 problem); losses that pass
   train with the whole step captured (``graph``), the others with the eager bf16 loop,
   and it says so; the result is kept for later calls on the same machine;
4. it trains the missing runs of the global queue (:mod:`replicate.sweep.queue`) in
   priority order, ``workers`` at once on the one GPU, each process on its own CPU
   cores (:func:`replicate.sweep.execute.run_local`, the runner of ``replicate sweep``);
   every run checkpoints each epoch on the machine's disk;
5. before its time budget it stops starting runs that would not finish and pauses the
   running ones at an epoch boundary, then packs every run it has finished on this
   machine into ``out`` (records and float16 logits, :func:`replicate.runs.pack`) beside
   its log. Its runs live in the machine's run cache (``.cache/``, which the device tool
   keeps between the calls of one loan, while it resets the checkout's ``results/``); a
   second call on the same machine resumes the paused runs from their checkpoints and
   packs again (the archives hold every run finished on the machine).

6. once every run of the Mukhoti chapter's ``gpu`` plan is finished (queue steps b and d,
   :data:`CHAPTER`), it executes that chapter there as its users with a GPU will
   (``replicate run exp_focal_loss --profile gpu``, loading the runs, training nothing;
   :func:`chapter_step`) and returns the executed notebook beside the archives. It needs
   the Jupyter stack the machine lacks: the wheels ``replicate gpu-job --check-travel
   --with-chapter`` carries (:mod:`replicate.sweep.wheels`), which the job installs into a
   ``--target`` folder first; the job itself needs a few of them (jupytext, to read the
   chapters' parameters cells), carried by every ``--check-travel``.

Back on the development machine, ``replicate runs unpack <archives>`` checks them and
writes the runs into ``results/``. The same code runs on the CPU at the ``smoke`` profile
(tests/test_gpu_job.py): queue order, two processes, the budget, resume after a kill,
pack and unpack.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: Exit statuses: every run of the requested steps finished / some left for the next call /
#: a run failed.
DONE, MORE, FAILED = 0, 3, 1
MPS_MODES = ("auto", "on", "off")
#: Seconds kept free at the end of the budget for packing and the log.
PACK_RESERVE = 25.0
#: At most this many archive parts (the device returns 8 files; the log takes one).
MAX_PARTS = 6
ENGINE_CHECK_SECONDS = 60.0
#: The chapter the job executes on the machine once its runs are all finished (issue #20, item 6).
CHAPTER = "exp_focal_loss"
#: Seconds the chapter's execution is given, a conservative estimate: it loads its 22 runs and
#: trains none. Measured on the development machine (2 CPU cores shared with a training
#: sweep, 2026-11-26): 180 s at the ``cpu`` profile, whose 22 runs have the ``gpu`` profile's
#: 5,000 validation and 10,000 test images, 81 s of which went to loading 20 Newsgroups and
#: its word vectors to name the data of old text runs that record none (``gpu`` runs record
#: it); 15-20 s at ``smoke``. 240 s is about 2.4 times the remaining 100 s.
CHAPTER_SECONDS = 240.0
CHAPTER_ESTIMATE = "2.4 x the 100 s it took here at the cpu profile's sizes on 2 busy CPU cores"
#: Training seconds a call keeps at least before it reserves :data:`CHAPTER_SECONDS` for the chapter.
CHAPTER_MIN_TRAINING = 60.0
#: What executing a chapter imports beyond the machine's image (the ``chapter`` wheels).
CHAPTER_MODULES = ("jupytext", "nbformat", "papermill", "nbclient", "jupyter_client", "zmq", "ipykernel", "IPython",
                   "myst_nb.ext.glue")
#: An executed notebook larger than this does not come back (16 MiB a file; margin).
NOTEBOOK_LIMIT = 15 * 2**20


def state_dir() -> Path:
    """``<cache>/gpu-job``: what the job keeps on the machine between its calls."""
    from .. import config

    return config.cache_dir() / "gpu-job"


class Log:
    """Prints each line and keeps it for the job's log file in ``out``."""

    def __init__(self, path: Path | None, echo=print):
        self.path, self.echo, self.lines = path, echo, []

    def __call__(self, text: str = "") -> None:
        stamp = time.strftime("%H:%M:%S")
        for line in str(text).splitlines() or [""]:
            self.lines.append(f"{stamp} {line}")
            if self.echo:
                self.echo(line, flush=True) if self.echo is print else self.echo(line)
        if self.path is not None:
            self.path.write_text("\n".join(self.lines) + "\n")


def device_report(device: str) -> str:
    """One line: the device, PyTorch and CUDA versions, the free and total GPU memory."""
    import torch

    if device.startswith("cuda"):
        free, total = torch.cuda.mem_get_info()
        return (f"device {torch.cuda.get_device_name()} | torch {torch.__version__} (CUDA {torch.version.cuda}) | "
                f"GPU memory free {free / 2**30:.1f} of {total / 2**30:.1f} GiB | {os.cpu_count()} CPU cores")
    return f"device cpu | torch {torch.__version__} | {os.cpu_count()} CPU cores (no GPU: a rehearsal)"


@contextlib.contextmanager
def mps_daemon(mode: str, device: str, log):
    """Start the CUDA MPS control daemon for the block when asked (``on``) or available
    (``auto``, CUDA only); yields whether it runs. ``on`` without the daemon is an error."""
    if mode not in MPS_MODES:
        raise ValueError(f"mps must be one of {', '.join(MPS_MODES)}; got {mode!r}")
    exe = shutil.which("nvidia-cuda-mps-control")
    want = mode == "on" or (mode == "auto" and device.startswith("cuda") and exe is not None)
    if not want:
        log(f"MPS: off ({'asked' if mode == 'off' else 'no CUDA or no nvidia-cuda-mps-control'})")
        yield False
        return
    if exe is None:
        raise ValueError("mps='on' but nvidia-cuda-mps-control is not on this machine; use mps='auto' or 'off'")
    started = subprocess.run([exe, "-d"], capture_output=True, text=True).returncode == 0
    log("MPS: daemon started" if started else "MPS: the daemon did not start; trainings time-share the GPU")
    try:
        yield started
    finally:
        if started:
            subprocess.run([exe], input="quit\n", capture_output=True, text=True)


def engine_check(losses, device: str, log, seconds: float = ENGINE_CHECK_SECONDS) -> dict:
    """``{loss: engine}``: ``graph`` for the losses whose captured step matches the eager
    loop (``benchmarks/gpu_check.py``, small ResNet-18 problem, at most ``seconds``),
    ``eager`` for the others; results are kept for this machine and PyTorch version."""
    import torch

    losses = list(dict.fromkeys(losses))
    if not device.startswith("cuda"):
        log("engine: the CPU runs the eager loop (no CUDA graph to check)")
        return {name: "auto" for name in losses}
    cache = state_dir() / "engine.json"
    tag = f"{torch.cuda.get_device_name()} | torch {torch.__version__}"
    known = json.loads(cache.read_text()) if cache.exists() else {}
    verdicts = dict(known.get(tag, {}))
    todo = [n for n in losses if n not in verdicts]
    from .. import config

    script = config.repo_root() / "benchmarks" / "gpu_check.py"
    if todo and script.exists():
        cmd = [sys.executable, str(script), "--model", "resnet18", "--epochs", "3", "--steps", "6",
               "--nondeterministic", "--losses", ",".join(todo)]
        t0 = time.monotonic()
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds).stdout
        except subprocess.TimeoutExpired as err:
            out = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        for name, verdict in re.findall(r"^(\w+): (ok|FAIL)\b", out, flags=re.M):
            verdicts[name] = verdict
        log(f"engine check ({time.monotonic() - t0:.0f} s, {len(todo)} losses): "
            + ", ".join(f"{n} {verdicts.get(n, 'not reached')}" for n in todo))
        known[tag] = verdicts
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known, indent=1))
    elif todo:
        log(f"engine check: {script} is missing; every loss trains with the eager bf16 loop")
    engines = {n: "graph" if verdicts.get(n) == "ok" else "eager" for n in losses}
    eager = [n for n, e in engines.items() if e == "eager"]
    log("engine: CUDA graph for " + (", ".join(n for n in losses if engines[n] == "graph") or "no loss")
        + ("; eager bf16 (the check failed or did not reach them) for " + ", ".join(eager) if eager else ""))
    return engines


def _manifest() -> Path:
    return state_dir() / "finished.json"


def _remember(keys) -> list[str]:
    path = _manifest()
    old = json.loads(path.read_text()) if path.exists() else []
    new = list(dict.fromkeys([*old, *keys]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(new, indent=1))
    return new


def trainable(items, log) -> list:
    """The items whose data set is at hand (or downloadable). The others are left for a loan
    that carries their data, one log line per data set; when no item's data is at hand,
    one line for all of them (``FileNotFoundError``), before anything trains."""
    from ..data import availability

    needs = availability.needed_by_runs([it.config for it in items], "gpu-job")
    gone = availability.missing(needs)
    if gone and len(gone) == len(needs):
        availability.require(needs, purpose="replicate gpu-job")
    for detail in gone.values():
        log(f"data: left for a later loan: {detail}")
    return [it for it in items if it.config.dataset not in gone]


def prepare_data(items, log) -> None:
    """Decode every data set the runs need once, in this process, before the workers start
    (so that several workers do not decode the same archive at once); the data sets are
    at hand (:func:`trainable`)."""
    from .. import data

    for name in sorted({it.config.dataset for it in items}):
        t0 = time.monotonic()
        data.load(name, download=False)
        log(f"data: {name} ready ({time.monotonic() - t0:.0f} s)")


def run(out, *, profile: str = "gpu", budget: float = 540.0, workers: int | None = None, mps: str = "auto",
        steps: str = "abcdef", device: str = "auto", check_engine: bool = True, echo=print, items=None,
        wheel_dir=None, chapter: str | None = None, python: str | None = None) -> int:
    """The GPU job (module docstring). Returns :data:`DONE`, :data:`MORE` or :data:`FAILED`.

    ``items``: train these :class:`replicate.sweep.queue.Item` instead of the queue's
    ``steps`` at ``profile`` (tests use longer smoke runs to exercise pause and resume).
    ``wheel_dir``: carried wheels to install first (:mod:`replicate.sweep.wheels`; the CLI
    passes ``.gpu-carry/wheels``). ``chapter``: the chapter to execute at ``profile`` once
    its runs are finished (:func:`chapter_step`; the CLI passes :data:`CHAPTER`; None: no
    chapter step), with ``python`` (default: this interpreter).
    """
    t_start = time.monotonic()
    from .. import profiles, runs, training
    from . import queue
    from .execute import run_local

    # every argument checked before anything expensive
    profiles.get_profile(profile)
    steps = queue.check_steps(steps)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= PACK_RESERVE + 5:
        raise ValueError(f"budget must be a number of seconds > {PACK_RESERVE + 5:.0f}; got {budget!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer; got {workers!r}")
    if mps not in MPS_MODES:
        raise ValueError(f"mps must be one of {', '.join(MPS_MODES)}; got {mps!r}")
    dev = str(training.select_device(device))
    out = Path(out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out / "gpu-job.log", echo)
    deadline = t_start + float(budget) - PACK_RESERVE
    k = workers or (profiles.GPU_SIZING["workers"] if dev.startswith("cuda") else 2)
    log(f"gpu-job {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} | profile {profile} | steps {steps} | "
        f"budget {budget:.0f} s | {k} trainings at once")
    log(device_report(dev))
    carried_wheels(wheel_dir, log)
    if items is None:
        try:
            items = queue.build(profile, steps)
        except ModuleNotFoundError as err:
            raise FileNotFoundError(
                f"replicate gpu-job plans the queue from the chapters' parameters cells, which needs {err.name}; "
                f"this Python lacks it: carry the wheels `replicate gpu-job --check-travel` puts into "
                f".gpu-carry/wheels/ (carry=[\".gpu-carry\"])") from None
    items = list(items)
    todo = queue.missing(items)
    counts = {s: sum(1 for it in todo if it.step == s) for s in steps}
    log(f"queue: {len(items)} runs in steps {steps}, {len(todo)} missing ("
        + ", ".join(f"{s}: {n}" for s, n in counts.items()) + ")")
    chapter_due = False
    if chapter:
        before = chapter_status(chapter, profile, python)
        chapter_due = not before["reasons"]
        if chapter_due:
            spare = float(budget) - PACK_RESERVE - CHAPTER_SECONDS
            if todo and spare >= CHAPTER_MIN_TRAINING:
                deadline -= CHAPTER_SECONDS
                log(f"chapter: {chapter} at {profile} is due (its {before['runs']} runs are finished, the wheels "
                    f"carried): training stops {CHAPTER_SECONDS:.0f} s early to execute it after packing "
                    f"(estimate: {CHAPTER_ESTIMATE})")
            elif todo:
                log(f"chapter: {chapter} at {profile} is due, but this call's budget ({budget:.0f} s) trains first: "
                    f"it would leave under {CHAPTER_MIN_TRAINING:.0f} s of training beside the "
                    f"{CHAPTER_SECONDS:.0f} s the chapter is given")
    status, rows = DONE, []
    with mps_daemon(mps, dev, log) as mps_on:
        try:
            todo = trainable(todo, log) if todo else todo
        except FileNotFoundError as err:
            if not chapter_due:
                raise
            log(f"data: {err}; the chapter step goes on")
            todo = []
        if todo:
            prepare_data(todo, log)
            engines = (engine_check([it.config.loss for it in todo], dev, log) if check_engine
                       else {it.config.loss: "auto" for it in todo})
            configs = {it.key: it.config for it in todo}
            by_key = {it.key: it for it in todo}
            a = queue.assumptions()

            def on_row(row):
                it = by_key[row["key"]]
                rows.append(row)
                log(f"[{it.step}] {row['status']:<8} {it.chapter} {it.method} seed {it.seed} ({row['key']}, "
                    f"{row['seconds']:.0f} s){': ' + row['reason'] if row['reason'] else ''}")

            summary = run_local(configs, state_dir() / "logs", k, dev, store="cache", quiet=True,
                                per_gpu=k, deadline=deadline, on_row=on_row, logits_dtype="float16",
                                estimate=lambda key: queue.estimate_seconds(by_key[key], k, mps_on, a),
                                engines={key: engines.get(cfg.loss, "auto") for key, cfg in configs.items()})
            c = summary.counts()
            log(f"trained {c['trained']}, paused {c['paused']}, not started {c['deferred']}, failed {c['failed']}, "
                f"already finished {c['skipped']}")
            for row in rows:
                if row["status"] == "failed":
                    tail = Path(row["log"]).read_text().splitlines()[-15:] if Path(row["log"]).exists() else []
                    log(f"--- log of failed run {row['key']} (last lines)\n" + "\n".join(tail))
            status = FAILED if c["failed"] else (DONE if summary.ok else MORE)
    mine = _remember([r["key"] for r in rows if r["status"] == "trained"])
    in_cache = runs.store_dir("cache")
    status = pack([key for key in mine if (in_cache / key / "record.json").exists()], out, log, status)
    if chapter:
        chapter_step(out, log, chapter=chapter, profile=profile, python=python,
                     seconds_left=t_start + float(budget) - time.monotonic())
    left = len(queue.missing(items))
    log(f"done in {time.monotonic() - t_start:.0f} s: {len(items) - left} of {len(items)} runs of steps {steps} "
        f"finished, {left} left" + (" - call again to go on" if left else ""))
    return status


def pack(keys, out: Path, log, status: int) -> int:
    """Pack the runs ``keys`` finished on this machine into ``out`` (at most :data:`MAX_PARTS` parts)."""
    from .. import runs

    if not keys:
        log("pack: no run finished on this machine yet; nothing to bring back")
        return status
    for old in out.glob("gpu-runs*.tar.gz"):
        old.unlink()
    paths = runs.pack(keys, out / "gpu-runs", store="cache", max_bytes=15 * 2**20)
    if len(paths) > MAX_PARTS:
        log(f"pack: {len(paths)} parts, more than the {MAX_PARTS} that come back; bring back the first "
            f"{MAX_PARTS} and pack the rest in a second call")
    log(f"pack: {len(keys)} runs in {len(paths)} archive(s): {' '.join(p.name for p in paths)}; on the development "
        f"machine: replicate runs unpack {' '.join(p.name for p in paths)}")
    return status


# ----------------------------------------------------------------------------- wheels
def carried_wheels(wheel_dir, log) -> Path | None:
    """Install the wheels of ``wheel_dir`` (the carried ``.gpu-carry/wheels``) whose
    distributions this Python lacks (on the machine: all of them; in a rehearsal with the
    development .venv: none) into the machine's ``<cache>/gpu-job/site`` once, put that
    folder first on this process's path and on ``PYTHONPATH`` (workers, engine check,
    chapter and kernel inherit it), and log what it did and any requirement of theirs the
    installed packages do not meet. Returns the folder, or None when nothing is installed
    (then nothing changes)."""
    from . import wheels

    found = sorted(Path(wheel_dir).glob("*.whl")) if wheel_dir is not None and Path(wheel_dir).is_dir() else []
    if not found:
        log("wheels: none carried" + (f" in {wheel_dir}" if wheel_dir is not None else ""))
        return None
    tiers = wheels.tiers_carried(wheel_dir)
    head = f"wheels: {len(found)} carried ({', '.join(tiers) or 'an incomplete set'} of {wheels.LIST})"
    todo, unusable = wheels.lacking(wheel_dir)
    if unusable:
        log(f"wheels: built for another Python or platform, not installed: {' '.join(p.name for p in unusable)}")
    if not todo:
        log(f"{head}: this Python has them all at their versions; nothing to install")
        return None
    target = state_dir() / "site"
    done = wheels.install(wheel_dir, target, files=todo)
    wheels.activate(target)
    log(f"{head}: {len(todo)} "
        + (f"installed into {target} in {done['seconds']:.0f} s" if done["installed"] else f"already in {target}"))
    for problem in wheels.check_installed(wheel_dir):
        log(f"wheels: unmet requirement: {problem}")
    return target


# ----------------------------------------------------------------------------- the chapter
def _import_check(python: str, modules) -> list[str]:
    """The ``modules`` that ``python`` cannot import (with this process's ``PYTHONPATH``)."""
    code = ("import importlib, sys\nbad = []\nfor m in sys.argv[1:]:\n    try:\n        importlib.import_module(m)\n"
            "    except Exception:\n        bad.append(m)\nprint(' '.join(bad))")
    try:
        done = subprocess.run([python, "-c", code, *modules], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        return [f"({python} does not run: {err})"]
    if done.returncode:
        return [f"({python} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]})"]
    return done.stdout.split()


def _chapter_marker() -> Path:
    return state_dir() / "chapter.json"


def _fingerprint(chapter: str, profile: str, keys) -> str:
    import hashlib

    return hashlib.sha256(json.dumps([chapter, profile, sorted(keys)]).encode()).hexdigest()[:16]


def chapter_status(chapter: str, profile: str, python: str | None = None) -> dict:
    """Whether the job can execute ``chapter`` at ``profile`` now: ``{"reasons": [...],
    "runs": n, "keys": [...], "data": {...}}``, one sentence per reason it cannot (no
    reason: due). Reasons: runs of its plan (the chapter's parameters cell, ``profile``)
    not finished in either store, by queue step (the chapter would train them); finished
    runs whose ``logits.npz`` did not travel; data the chapter would load that is not at
    hand; ``python`` unable to import the Jupyter stack (the ``chapter`` wheels); the
    chapter already executed by an earlier call on this machine with the same runs."""
    from ..data import availability
    from ..runs import find
    from . import queue
    from .plan import sweep_plan

    python = python or sys.executable
    reasons, out = [], {"runs": 0, "keys": [], "data": {}}
    lacking = _import_check(python, CHAPTER_MODULES)
    if lacking:
        reasons.append(f"no wheels: {python} cannot import {', '.join(lacking)} (carry the chapter wheels: "
                       f"`make gpu-job-check-chapter` on the development machine)")
    try:
        _, _, plan = sweep_plan(chapter, {}, profile)
    except ModuleNotFoundError as err:
        reasons.append(f"runs unknown: reading the chapter's parameters cell needs {err.name}")
        out["reasons"] = reasons
        return out
    configs = plan.configs()
    out.update(runs=len(configs), keys=sorted(configs))
    absent, steps = [], {}
    for group, cfgs in plan.groups.items():
        for (method, seed), cfg in cfgs.items():
            if cfg.key in absent or find(cfg) is not None:
                continue
            absent.append(cfg.key)
            step = queue.step_of(chapter, group, method, seed, cfg.dataset)
            steps[step] = steps.get(step, 0) + 1
    if absent:
        reasons.append(f"runs incomplete: {len(absent)} of the {len(configs)} runs of {chapter} at {profile} are not "
                       f"finished (" + ", ".join(f"queue step {s}: {n}" for s, n in sorted(steps.items()))
                       + "); executing it now would train them")
    else:
        bare = [k for k, cfg in configs.items() if not (find(cfg).path / "logits.npz").is_file()]
        if bare:
            reasons.append(f"logits not carried: {len(bare)} of its runs have no logits.npz here (prepare with "
                           f"`replicate gpu-job --check-travel --with-chapter`, which keeps them in the travel)")
        needs = chapter_data(chapter, profile, plan)
        gone = availability.missing(needs) if needs else {}
        if gone:
            reasons.append("data missing: " + "; ".join(gone.values()))
        out["data"] = needs
    marker = _chapter_marker()
    if marker.is_file() and not reasons:
        old = json.loads(marker.read_text())
        if old.get("fingerprint") == _fingerprint(chapter, profile, configs):
            reasons.append(f"done: an earlier call on this machine executed it on these runs "
                           f"({old.get('notebook')}, {old.get('seconds', 0):.0f} s); not again")
    out["reasons"] = reasons
    return out


def chapter_data(chapter: str, profile: str, plan) -> dict:
    """The data sets executing ``chapter`` at ``profile`` loads when every run of ``plan``
    is finished, as ``{data set: (options, why)}``: what :func:`replicate.runner.data_needs`
    finds, plus the data sets of the plan's image runs, whose test images the chapter shows
    (the Mukhoti chapter's Appendix F draws CIFAR-10 test images; found by executing it
    with an empty data directory, which ``data_needs`` does not foresee)."""
    from .. import runner
    from ..data import availability

    needs = dict(runner.data_needs(runner.resolve_notebook(chapter), profile=profile))
    images = [cfg for cfg in plan.configs().values() if cfg.resolve()["kind"] == "image"]
    for name, (options, _) in availability.needed_by_runs(images).items():
        needs.setdefault(name, (options, f"{chapter} (it shows test images of its image runs' data)"))
    return needs


def _run_keys() -> set:
    from ..runs import store_dir

    return {p.parent.name for s in ("results", "cache") for p in store_dir(s).glob("*/record.json")}


def chapter_step(out: Path, log, *, chapter: str = CHAPTER, profile: str = "gpu", python: str | None = None,
                 seconds_left: float = float("inf")) -> str:
    """Execute ``chapter`` at ``profile`` into ``out/<chapter>-<profile>.ipynb`` as a
    subprocess (``python -m replicate run``) when :func:`chapter_status` finds it due and
    ``seconds_left`` holds :data:`CHAPTER_SECONDS`; one log line per reason it does not,
    and one for the outcome. The chapter trains nothing: it runs only when every run of its
    plan is finished, and with an empty data directory when it needs no data (a run it
    tried to train would fail at once). Returns "executed", "failed" or "skipped"."""
    import tempfile

    from .. import config

    python = python or sys.executable
    status = chapter_status(chapter, profile, python)
    for reason in status["reasons"]:
        log(f"chapter: {chapter} at {profile} skipped: {reason}")
    if status["reasons"]:
        return "skipped"
    budget = seconds_left - 5.0
    if budget < CHAPTER_SECONDS:
        log(f"chapter: {chapter} at {profile} skipped: not enough time: {max(budget, 0):.0f} s left in this call, the "
            f"step is given {CHAPTER_SECONDS:.0f} s ({CHAPTER_ESTIMATE}); a later call with the default "
            f"budget (540 s) reserves the time")
        return "skipped"
    root = config.repo_root()
    target = Path(out) / f"{chapter}-{profile}.ipynb"
    source = root / "notebooks" / f"{chapter}.md"
    cmd = [python, "-m", "replicate", "run", str(source.relative_to(root)), "--profile", profile,
           "--output", str(target)]
    keys_before = _run_keys()
    with tempfile.TemporaryDirectory(prefix="gpu-job-nodata-") as empty:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [env.get("PYTHONPATH", ""), str(root)] if p)
        env["REPLICATE_OFFLINE"] = "1"
        if not status["data"]:
            env[config.DATA_ENV] = empty            # nothing to train from: a run it tried to train fails at once
        log(f"chapter: executing {chapter} at {profile} ({status['runs']} runs finished; "
            f"{'no data needed: an empty data directory' if not status['data'] else 'data: ' + ', '.join(status['data'])}"
            f"; at most {budget:.0f} s): {' '.join(cmd[1:])}")
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            text, _ = proc.communicate(timeout=budget)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)               # the runner and its kernel
            text, _ = proc.communicate()
            code = None
    seconds = time.monotonic() - t0
    trained = sorted(_run_keys() - keys_before)
    if trained:
        log(f"chapter: WARNING: {len(trained)} runs appeared while it executed: {' '.join(trained)}")
    if code == 0 and target.is_file():
        size = target.stat().st_size
        if size > NOTEBOOK_LIMIT:
            target.unlink()
            log(f"chapter: {chapter} executed at {profile} in {seconds:.0f} s, but its notebook ({size / 2**20:.1f} "
                f"MiB) is over the {NOTEBOOK_LIMIT / 2**20:.0f} MiB that come back: removed")
            return "failed"
        _chapter_marker().parent.mkdir(parents=True, exist_ok=True)
        _chapter_marker().write_text(json.dumps({"fingerprint": _fingerprint(chapter, profile, status["keys"]),
                                                 "notebook": target.name, "seconds": seconds}, indent=1))
        log(f"chapter: {chapter} executed at {profile} in {seconds:.0f} s, its {status['runs']} runs loaded, "
            f"{len(trained)} trained: {target.name} ({size / 2**20:.1f} MiB) in the output folder")
        return "executed"
    tail = "\n".join((text or "").splitlines()[-15:])
    why = f"timed out after {seconds:.0f} s" if code is None else f"exit {code} after {seconds:.0f} s"
    log(f"chapter: {chapter} at {profile} FAILED ({why}); last lines:\n{tail}")
    target.unlink(missing_ok=True)
    return "failed"
