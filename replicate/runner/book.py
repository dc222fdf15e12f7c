"""Building the book (:func:`build`): every chapter of ``_toc.yml`` executed
(:mod:`.execution`) at the profile the book shows (:func:`showable_profile`), the data sets
they need checked first (:func:`check_data`), then ``jupyter-book build`` with execution off
and warnings as errors (:func:`build_html`).

Not to be confused with :mod:`replicate.book`, the Sphinx extensions and page checks this
build loads: that package sits below the package's analyses and imports none of them,
while this module reads the experiments' plans and the run store, so it lives here.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import config
from ..processes import worker_env
from .chapters import CHAPTER_DIR, default_parameters, read_notebook, toc_chapters
from .execution import ChapterError, data_needs, execute, will_skip

#: Profiles ``make book`` may show instead of a chapter's default, largest first.
BOOK_PROFILES = ("paper", "gpu")
BOOK_DIR_ENV = "REPLICATE_BOOK_DIR"
#: How many chapters ``replicate book`` executes at once (default :func:`default_workers`).
WORKERS_ENV = "REPLICATE_BOOK_WORKERS"


def _copy_book_sources(root: Path, workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, workdir / name)
    shutil.copytree(root / "book", workdir / "book", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("chapters"))


def showable_profile(source: Path, defaults: dict) -> tuple[str | None, str]:
    """The largest profile of :data:`BOOK_PROFILES` at which every run the chapter ``source``
    plans with ``defaults`` (its parameters cell) is in ``results/``, and why; ``(None,
    reason)`` when there is none or the chapter trains nothing. Reads the store only; a
    damaged run counts as missing (:meth:`replicate.comparison.Plan.missing`)."""
    from .. import experiments

    name = Path(source).stem
    if name not in experiments.CHAPTERS:
        return None, "trains nothing"
    allowed = set(experiments.plan_parameters(name))
    notes = []
    for prof in BOOK_PROFILES:
        params = {k: v for k, v in defaults.items() if k in allowed}
        params["profile"] = prof
        try:
            plan = experiments.chapter_plan(name, **params)
        except ValueError as err:
            notes.append(f"{prof}: plan does not validate ({err})")
            continue
        total, missing = len(plan.configs()), len(plan.missing("results"))
        if not missing:
            return prof, f"all {total} runs of profile {prof} are in results/"
        notes.append(f"{prof}: {total - missing}/{total} runs in results/")
    return None, "; ".join(notes)


def showable_split(source: Path, defaults: dict) -> tuple[dict | None, str]:
    """For a chapter whose whole plan is complete at no profile of :data:`BOOK_PROFILES` but
    whose plan takes ``text_profile``: the parameters that show its image rows at the largest
    such profile whose non-text runs are all in ``results/`` and its text rows at the largest
    profile (of :data:`BOOK_PROFILES`, else the chapter's default) whose text runs are
    (``{"profile": "gpu", "text_profile": "cpu"}``), and why; ``(None, reason)`` when there
    is no such split. Reads the store only (issue #29: a chapter whose CIFAR-10 runs are at
    ``gpu`` while its 20 Newsgroups runs wait for a loan of their own)."""
    from .. import experiments

    name = Path(source).stem
    if name not in experiments.CHAPTERS or "text_profile" not in experiments.plan_parameters(name):
        return None, "no text_profile parameter"
    allowed = set(experiments.plan_parameters(name))
    params = {k: v for k, v in defaults.items() if k in allowed and k != "text_profile"}
    if params.get("text_dataset", "") is None:
        return None, "no text rows"

    def complete(prof: str, groups) -> bool:
        try:
            p = experiments.chapter_plan(name, **{**params, "profile": prof})
        except ValueError:
            return False
        want = [g for g in p.groups if (g == "text") == (groups == "text")]
        return bool(want) and p.complete("results", want)

    default = params.get("profile", "cpu")
    for prof in BOOK_PROFILES:
        if not complete(prof, "image"):
            continue
        for text_prof in [q for q in BOOK_PROFILES if q != prof] + [default]:
            if complete(text_prof, "text"):
                return ({"profile": prof, "text_profile": text_prof},
                        f"its image runs are all in results/ at {prof}, its text runs at {text_prof}")
        return None, f"its image runs are all in results/ at {prof}, its text runs at no profile"
    return None, "no profile with all its image runs"


def build(profile: str | None = None, workdir: Path | None = None, force: bool = False,
          strict: bool = True, log=print, workers: int = 1) -> Path:
    """Execute every chapter of ``_toc.yml`` and build the HTML book; return ``index.html``.

    With ``workdir`` the book sources are copied there and the executed chapters and the
    build go there too (used by the smoke test, so the checkout is left untouched).
    Without ``profile`` each experiment chapter shows the largest profile whose runs are
    all committed (:func:`showable_profile`), else its default. Chapters execute ``workers``
    at a time (:func:`execute_all`; ``replicate book`` passes :func:`default_workers`).
    """
    root = config.repo_root()
    chapters = toc_chapters(root)
    if profile is not None:
        from .. import profiles

        profiles.get_profile(profile)  # refuse an unknown profile before any chapter runs
    base = root
    if workdir is not None:
        base = Path(workdir).resolve()
        _copy_book_sources(root, base)
    os.environ[BOOK_DIR_ENV] = str(base)  # the reproducibility page reads the executed chapters here
    report_damaged(log)
    plan = []
    for ch in chapters:
        chosen, params = profile, None
        if profile is None:
            defaults = default_parameters(read_notebook(ch.source))
            shown, why = showable_profile(ch.source, defaults)
            split, split_why = (None, "") if shown is not None or why == "trains nothing" else \
                showable_split(ch.source, defaults)
            if shown is not None:
                chosen = shown
                log(f"[replicate] {ch.name}: showing profile {shown} ({why})")
            elif split is not None:
                chosen, params = split["profile"], {"text_profile": split["text_profile"]}
                log(f"[replicate] {ch.name}: showing profile {chosen}, its text rows at {split['text_profile']} "
                    f"({split_why})")
            elif why != "trains nothing":
                log(f"[replicate] {ch.name}: showing its default profile ({why})")
        plan.append((ch, chosen, base / CHAPTER_DIR / f"{ch.name}.ipynb", params))
    check_data([(ch.source, chosen, params) for ch, chosen, target, params in plan
                if not will_skip(ch.source, target, params, profile=chosen, force=force)], purpose="replicate book")
    execute_all(plan, force=force, log=log, workers=workers)
    return build_html(base, strict=strict, log=log)


def report_damaged(log=print) -> list:
    """Every damaged run file of the stores (:func:`replicate.runs.check_store`), logged at
    once, one line each with its fix, before any chapter executes. A chapter's showable
    profile counts a damaged run as missing (:func:`showable_profile`), the claims ledger says
    "run <key> damaged" where a claim needs one, and a chapter that needs one stops naming
    every damaged run of its plan (:func:`replicate.comparison.train`).

    Parameters
    ----------
    log : callable
        Where the lines go.

    Returns
    -------
    list of replicate.runs.records.DamagedRunError
    """
    from ..runs import check_store

    damaged = check_store("all")
    if damaged:
        log(f"[replicate] {len(damaged)} damaged run{'s' if len(damaged) > 1 else ''} in the stores "
            f"(left out where a chapter or claim needs them):")
    for err in damaged:
        log(f"[replicate] {err}")
    return damaged


def default_workers() -> int:
    """Chapters executed at once by :func:`build`: ``$REPLICATE_BOOK_WORKERS``, else the
    usable CPU cores, at most 2 (each chapter's kernel computes on one core most of the time)."""
    env = os.environ.get(WORKERS_ENV)
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"{WORKERS_ENV} must be a positive integer; got {env!r}")
        return int(env)
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(2, n))


def runs_after_chapters(source: Path) -> bool:
    """Whether the chapter reads what the other chapters computed (its metadata
    ``replicate: after_chapters: true``: the claims ledger reads their reports, the
    reproducibility page their executed copies), so that :func:`execute_all` runs it last."""
    return bool(read_notebook(source).metadata.get("replicate", {}).get("after_chapters", False))


#: Seconds each chapter took to execute at ``cpu`` from the committed runs with an empty cache,
#: two at a time on the 2-core machine (``benchmarks/claims_speed.py --book``'s log): what a
#: fresh clone, which has no executed copy to read them from, orders the chapters by. Only the
#: order matters: the FTS chapter, which also fits every other chapter's runs, goes first, so
#: that it never runs alone at the end.
EXPECTED_SECONDS = {"exp_fts": 120, "exp_leaderboard": 48, "exp_focal_loss": 35, "exp_dual_focal": 35,
                    "exp_adafocal": 33, "exp_fcl": 33, "measuring_calibration": 12, "theory_focal_loss": 12,
                    "protocol": 11, "theory_fts": 10, "theory_adafocal": 9, "library_loop": 8,
                    "theory_dual_focal": 7, "theory_fcl": 5, "authors_code": 4}


def expected_seconds(source: Path, target: Path) -> float:
    """How long the chapter ``source`` is expected to take: the wall time its executed copy
    ``target`` recorded, else :data:`EXPECTED_SECONDS`, else a guess by kind (an experiment
    chapter evaluates stored runs: 100 s; any other chapter: 10 s)."""
    from .. import experiments

    try:
        return float(json.loads(Path(target).read_text())["metadata"]["replicate"]["wall_time_s"])
    except (OSError, ValueError, KeyError, TypeError):
        stem = Path(source).stem
        return EXPECTED_SECONDS.get(stem, 100.0 if stem in experiments.CHAPTERS else 10.0)


def _execute_one(args) -> str:
    source, target, profile, force, params = args
    execute(source, target, parameters=params, profile=profile, force=force, log=lambda m: print(m, flush=True))
    return str(target)


def _job(entry, force: bool) -> tuple:
    """``(source, target, profile, force, parameters)`` of a plan entry ``(chapter, profile,
    target[, parameters])``."""
    ch, chosen, target, *rest = entry
    return ch.source, target, chosen, force, (rest[0] if rest else None)


def execute_all(plan, force: bool = False, log=print, workers: int | None = None) -> None:
    """Execute every ``(chapter, profile, target)`` of ``plan``: ``workers`` at a time
    (processes, default :func:`default_workers`, in :func:`replicate.processes.worker_env`),
    the longest expected first (:func:`expected_seconds`), then, one at a time, the chapters
    that read the others' results (:func:`runs_after_chapters`). The first failure stops the
    build (the chapters already running finish first)."""
    workers = default_workers() if workers is None else workers
    first = [_job(e, force) for e in plan if not runs_after_chapters(e[0].source)]
    last = [_job(e, force) for e in plan if runs_after_chapters(e[0].source)]
    if workers > 1:                        # the longest first, so that no long chapter runs alone at the end
        first.sort(key=lambda job: -expected_seconds(Path(job[0]), Path(job[1])))
    if workers <= 1 or len(first) <= 1:
        for ch_source, target, chosen, f, params in first:
            execute(ch_source, target, parameters=params, profile=chosen, force=f, log=log)
    else:
        import multiprocessing
        from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait

        log(f"[replicate] executing {len(first)} chapters, {workers} at a time")
        with worker_env(), ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_execute_one, job) for job in first]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for fut in pending:
                fut.cancel()
            for fut in futures:
                if fut.done() and not fut.cancelled() and fut.exception() is not None:
                    raise fut.exception()
    for ch_source, target, chosen, f, params in last:
        execute(ch_source, target, parameters=params, profile=chosen, force=f, log=log)


def check_data(chapters, purpose: str = "replicate book", data_dir=None, probe=None) -> dict:
    """Before any of ``chapters`` (``(source, profile)`` pairs, or ``(source, profile,
    parameters)``) executes: the data sets they need (:func:`data_needs`); ``FileNotFoundError``, one line for all, when any is missing
    and cannot be downloaded (:func:`replicate.data.availability.require`). Returns the
    needs (``{data set: (options, why)}``, the reasons of several chapters joined)."""
    from ..data import availability

    needs: dict = {}
    for source, prof, *params in chapters:
        for ds, (options, why) in data_needs(source, params[0] if params else None, profile=prof).items():
            if ds in needs:
                needs[ds] = (needs[ds][0], f"{needs[ds][1]}, {why}")
            else:
                needs[ds] = (options, why)
    availability.require(needs, data_dir=data_dir, purpose=purpose,
                         **({"probe": probe} if probe is not None else {}))
    return needs


def build_html(base: Path, strict: bool = True, log=print) -> Path:
    """Run ``jupyter-book build`` on ``base`` with execution off (and ``-W`` when strict), its
    repository and launch buttons pointing at the repository the book is built from, or
    left out (:mod:`replicate.book.repository`)."""
    from ..book import repository

    url, branch, why = repository.repository(config.repo_root())
    log(f"[replicate] repository and launch buttons: {url or 'left out'} ({why})")
    cfg = repository.effective_config(base / "_config.yml", base / "_build" / "config" / "_config.yml", url, branch)
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(base), "--builder", "html", "--config", str(cfg)]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    log(f"[replicate] building the book: jupyter-book {' '.join(cmd[1:])}")
    proc = subprocess.run(cmd, cwd=base, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
        raise ChapterError(f"jupyter-book build failed (exit {proc.returncode}):\n{tail}")
    index = base / "_build" / "html" / "index.html"
    log(f"[replicate] book built: {index}")
    return index


def provenance_table(root: Path | None = None):
    """One row per executed chapter: profile, device, wall time, commit, package hash, lock file
    digest (:func:`replicate.provenance.lock_digest`), executed at."""
    import pandas as pd

    root = Path(root or config.repo_root())
    base = Path(os.environ.get(BOOK_DIR_ENV, root))
    rows = []
    for ch in toc_chapters(root):
        target = base / CHAPTER_DIR / f"{ch.name}.ipynb"
        if not target.exists():
            continue
        meta = json.loads(target.read_text()).get("metadata", {}).get("replicate", {})
        if meta.get("always_execute"):
            continue  # pages such as this table itself, rebuilt every time
        commit = str(meta.get("commit", ""))
        short = commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")
        rows.append({"chapter": ch.name, "profile": meta.get("profile"), "device": meta.get("device"),
                     "wall time (s)": round(float(meta.get("wall_time_s", float("nan"))), 1), "commit": short,
                     "package hash": meta.get("package_hash"), "lock": meta.get("lock_sha256"),
                     "executed (UTC)": meta.get("timestamp")})
    return pd.DataFrame(rows, columns=["chapter", "profile", "device", "wall time (s)", "commit", "package hash",
                                       "lock", "executed (UTC)"])
