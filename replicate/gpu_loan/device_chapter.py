"""The chapter the GPU job executes on the machine (issue #20, item 6).

Once every run of the Mukhoti chapter's ``gpu`` plan is finished (queue steps b and d),
:func:`chapter_step` executes that chapter there as its users with a GPU will
(``replicate run exp_focal_loss --profile gpu``, loading the runs, training nothing) and
leaves the executed notebook beside the job's archives. The machine's image lacks the
Jupyter stack: :func:`carried_wheels` installs the wheels ``replicate gpu-job
--check-travel --with-chapter`` carried (:mod:`replicate.gpu_loan.wheels`). One log line per
reason the step does not run.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .machine import state_dir

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
    from ..sweep.plan import sweep_plan

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
