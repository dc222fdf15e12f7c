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
4. it trains the missing runs of the global queue (:mod:`replicate.gpu_loan.queue`) in
   priority order, ``workers`` at once on the one GPU, each process on its own CPU
   cores (:func:`replicate.sweep.execute.run_local`, the runner of ``replicate sweep``);
   every run checkpoints each epoch on the machine's disk;
5. before its time budget it stops starting runs that would not finish and pauses the
   running ones at an epoch boundary (one still training
   :data:`~replicate.gpu_loan.deadline.HARD_STOP_AFTER` seconds after that deadline is
   interrupted, keeping its finished epochs: :mod:`replicate.gpu_loan.deadline`), then
   packs every run it has finished on this machine into ``out`` (records and float16
   logits, :func:`replicate.runs.pack`) beside its log. Its runs live in the machine's run
   cache (``.cache/``, which the device tool keeps between the calls of one loan, while it
   resets the checkout's ``results/``); a second call on the same machine resumes the
   paused runs from their checkpoints and packs again (the archives hold every run
   finished on the machine).

6. once every run of the Mukhoti chapter's ``gpu`` plan is finished (queue steps b and d,
   :data:`replicate.gpu_loan.device_chapter.CHAPTER`), it executes that chapter there as its
   users with a GPU will (``replicate run exp_focal_loss --profile gpu``, loading the runs,
   training nothing; :func:`~replicate.gpu_loan.device_chapter.chapter_step`) and returns
   the executed notebook beside the archives. It needs the Jupyter stack the machine lacks:
   the wheels ``replicate gpu-job --check-travel --with-chapter`` carries
   (:mod:`replicate.gpu_loan.wheels`), which the job installs into a ``--target`` folder
   first; the job itself needs a few of them (jupytext, to read the chapters' parameters
   cells), carried by every ``--check-travel``.

Back on the development machine, ``replicate runs unpack <archives>`` checks them and
writes the runs into ``results/``. The same code runs on the CPU at the ``smoke`` profile
(tests/test_gpu_job.py): queue order, two processes, the budget, resume after a kill,
pack and unpack.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from .. import checks
from .deadline import Admission, Budget
from .device_chapter import (CHAPTER_ESTIMATE, CHAPTER_MIN_TRAINING, CHAPTER_SECONDS, carried_wheels,
                             chapter_status, chapter_step)
from .machine import MPS_MODES, Log, device_report, mps_daemon, state_dir

#: Exit statuses: every run of the requested steps finished / some left for the next call /
#: a run failed.
DONE, MORE, FAILED = 0, 3, 1
#: At most this many archive parts (the device returns 8 files; the log takes one).
MAX_PARTS = 6
ENGINE_CHECK_SECONDS = 60.0


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


#: Data sets whose preparation depends on the run's data options (20 Newsgroups: the
#: vocabulary and the word2vec vectors, learnt from the training documents of the split).
PER_OPTIONS = ("20newsgroups",)


def prepare_data(items, log) -> None:
    """Decode every data set the runs need once, in this process, before the workers start
    (so that several workers do not decode the same archive at once); the data sets are
    at hand (:func:`trainable`). A data set of :data:`PER_OPTIONS` is prepared once per
    distinct set of the runs' data options, which leaves its word vectors in the data
    cache: the workers read them instead of each training word2vec anew."""
    from .. import data
    from ..runs import canonical_json
    from ..runs.build import clear_data_cache, load_data

    for name in sorted({it.config.dataset for it in items}):
        t0 = time.monotonic()
        if name in PER_OPTIONS:
            seen = {}
            for it in items:
                if it.config.dataset == name:
                    resolved = it.config.resolve()
                    seen.setdefault(canonical_json(resolved["data"]), resolved)
            for resolved in seen.values():
                load_data(resolved)
            clear_data_cache()
            log(f"data: {name} ready for {len(seen)} set(s) of data options ({time.monotonic() - t0:.0f} s)")
            continue
        data.load(name, download=False)
        log(f"data: {name} ready ({time.monotonic() - t0:.0f} s)")


def run(out, *, profile: str = "gpu", budget: float = 540.0, workers: int | None = None, mps: str = "auto",
        steps: str = "abcdef", device: str = "auto", check_engine: bool = True, echo=print, items=None,
        wheel_dir=None, chapter: str | None = None, python: str | None = None) -> int:
    """The GPU job (module docstring). Returns :data:`DONE`, :data:`MORE` or :data:`FAILED`.

    ``items``: train these :class:`replicate.gpu_loan.queue.Item` instead of the queue's
    ``steps`` at ``profile`` (tests use longer smoke runs to exercise pause and resume).
    ``wheel_dir``: carried wheels to install first (:mod:`replicate.gpu_loan.wheels`; the CLI
    passes ``.gpu-carry/wheels``). ``chapter``: the chapter to execute at ``profile`` once
    its runs are finished (:func:`~replicate.gpu_loan.device_chapter.chapter_step`; the CLI passes
    :data:`replicate.gpu_loan.device_chapter.CHAPTER`; None: no
    chapter step), with ``python`` (default: this interpreter).
    """
    t_start = time.monotonic()
    from .. import profiles, runs, training
    from ..sweep.execute import run_local
    from . import queue

    # every argument checked before anything expensive
    profiles.get_profile(profile)
    steps = queue.check_steps(steps)
    clock = Budget(budget, start=t_start)
    if workers is not None:
        checks.positive_int("workers", workers)
    if mps not in MPS_MODES:
        raise ValueError(f"mps must be one of {', '.join(MPS_MODES)}; got {mps!r}")
    dev = str(training.select_device(device))
    out = Path(out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out / "gpu-job.log", echo)
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
            if todo and clock.reserve(CHAPTER_SECONDS, keep=CHAPTER_MIN_TRAINING):
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
            admission = Admission(clock.deadline, lambda key: queue.estimate_seconds(by_key[key], k, mps_on, a))

            def on_row(row):
                admission.finished(row)
                it = by_key[row["key"]]
                rows.append(row)
                log(f"[{it.step}] {row['status']:<8} {it.chapter} {it.method} seed {it.seed} ({row['key']}, "
                    f"{row['seconds']:.0f} s){': ' + row['reason'] if row['reason'] else ''}")

            summary = run_local(configs, state_dir() / "logs", k, dev, store="cache", quiet=True,
                                per_gpu=k, deadline=clock.deadline, on_row=on_row, logits_dtype="float16",
                                hard_stop=clock.hard_stop, defer=admission.defer,
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
                     seconds_left=clock.left())
    left = len(queue.missing(items))
    log(f"done in {time.monotonic() - t_start:.0f} s: {len(items) - left} of {len(items)} runs of steps {steps} "
        f"finished, {left} left" + (" - call again to go on" if left else ""))
    return status


def run_from_checkout(out=None, *, with_chapter: bool = True, **options) -> int:
    """:func:`run` as ``replicate gpu-job`` (``make gpu-job``) starts it on the machine, from the
    carried checkout: into ``out`` (default ``$OUT``, else ``gpu-out``), with the data of
    ``.gpu-carry/data`` unless ``REPLICATE_DATA`` is set, the carried wheels
    (:data:`replicate.gpu_loan.wheels.CARRY_DIR`) and, unless ``with_chapter`` is False, the
    Mukhoti chapter (:data:`replicate.gpu_loan.device_chapter.CHAPTER`); ``options`` go to
    :func:`run`."""
    import os

    from .. import config
    from .device_chapter import CHAPTER
    from .travel import CARRY
    from .wheels import CARRY_DIR

    out = out or os.environ.get("OUT") or "gpu-out"
    carried = config.repo_root() / CARRY / "data"
    if not os.environ.get(config.DATA_ENV) and carried.is_dir():
        os.environ[config.DATA_ENV] = str(carried)      # the data `make gpu-job-check` put in .gpu-carry/
    return run(Path(out), wheel_dir=config.repo_root() / CARRY_DIR, chapter=CHAPTER if with_chapter else None,
               **options)


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
