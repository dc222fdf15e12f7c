"""The development machine's side of a GPU loan: what ``replicate gpu-job`` does before and
after the device call, never on the machine.

- :func:`list_queue` (``replicate gpu-job --list``): the queue (:mod:`.queue`), what is
  finished, and the device time the rest takes;
- :func:`check_travel` (``make gpu-job-check``, ``make gpu-job-check-chapter``): put the
  data archives the next runs need (:data:`DATA_FILES`, in the queue's order while the
  travel fits) and the wheels the machine lacks (:mod:`.wheels`; with ``--with-chapter``
  also those that execute the Mukhoti chapter there) into ``.gpu-carry/``, keep the
  committed logits off the device (:mod:`.travel`; with ``--with-chapter`` except the
  chapter's runs'), and say in one line what would travel and whether it fits, then the
  state of the chapter (:func:`chapter_plan_state`) and the exact device call;
- :func:`stage` (``replicate gpu-job --stage DIR``, behind ``make gpu-job-twin``): copy
  exactly what would travel into a new folder, for a rehearsal on the GPU image's packages;
- :func:`restore` (``make gpu-job-restore``; ``replicate runs unpack`` does it too): after
  the call, the hidden logits back into the index.

Each prints its report and returns the command's exit status.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .travel import CARRY

#: The files a data set is read from, in the order the loaders look for them.
DATA_FILES = {"cifar10": ("cifar-10-python.tar.gz", "cifar10-jpeg.tar.gz"),
              "20newsgroups": ("20news-bydate.tar.gz",)}
#: The wheel tiers (:data:`replicate.gpu_loan.wheels.TIERS`) a data set's runs need on the machine.
DATA_TIERS = {"20newsgroups": ("text",)}


def chapter_plan_state(profile: str) -> dict:
    """The Mukhoti chapter (:data:`replicate.gpu_loan.device_chapter.CHAPTER`) at ``profile``, as the
    development machine sees it: ``{"keys", "missing" (not in results/), "data" (what it
    would load when complete), "executed" (a committed copy executed on a GPU machine)}``."""
    from .. import config
    from ..sweep.plan import sweep_plan
    from . import device_chapter as dc

    _, _, plan = sweep_plan(dc.CHAPTER, {}, profile)
    missing = plan.missing("results")
    data = {} if missing else dc.chapter_data(dc.CHAPTER, profile, plan)
    executed = sorted(config.repo_root().glob(f"benchmarks/measured/*/{dc.CHAPTER}-{profile}.ipynb"))
    return {"keys": sorted(plan.configs()), "missing": sorted(missing), "data": data, "executed": executed}


def check_travel(steps: str, profile: str, with_chapter: bool = False) -> int:
    """Fill ``.gpu-carry/`` for the next call on the queue's ``steps`` at ``profile`` and say
    what would travel (module docstring); 0 when it fits and the call has something to do."""
    from .. import config
    from . import device_chapter as dc, queue, travel, wheels

    root = config.repo_root()
    todo = queue.missing(queue.build(profile, steps))
    chapter = chapter_plan_state(profile)
    chapter_due = not chapter["missing"]
    # the data sets in the queue's order: the first one's runs come first
    needed = list(dict.fromkeys([it.config.dataset for it in todo]
                                + (sorted(chapter["data"]) if with_chapter and chapter_due else [])))
    left = {d: "gpu-job does not know which files to carry" for d in needed if d not in DATA_FILES}
    carry = root / CARRY / "data"
    carry.mkdir(parents=True, exist_ok=True)
    source = config.data_dir()
    archives = {}
    for name in (d for d in needed if d not in left):
        found = ([carry / f for f in DATA_FILES[name] if (carry / f).is_file()]
                 or [source / f for f in DATA_FILES[name] if (source / f).is_file()])
        if found:
            archives[name] = found[0]
        else:
            left[name] = (f"none of {', '.join(DATA_FILES[name])} in the data directory {source} (set REPLICATE_DATA "
                          f"or --data-dir to the folder holding it)")
    # the wheels the machine lacks: the job's own (jupytext) always, the chapter's when asked,
    # a data set's (gensim for 20 Newsgroups) with its archive
    base_tiers = ("job", "chapter") if with_chapter else ("job",)
    wheel_dir = root / wheels.CARRY_DIR
    try:
        wheels.download(wheel_dir, base_tiers + tuple(dict.fromkeys(t for d in archives for t in DATA_TIERS.get(d, ()))))
    except RuntimeError as err:
        print(f"gpu-job travel: the wheels could not be downloaded into {wheel_dir}: {err}")
        return 1
    # the job reads records only (runs grow past the travel limit); the chapter reads its runs' logits
    hidden = travel.hide(root, keep=(), keep_keys=chapter["keys"] if with_chapter else ())
    tree, tier_mib = travel.mib(travel.files(root, carry=None)), wheels.tier_sizes(wheel_dir)
    sizes = {d: (path.stat().st_size / 2**20, {t: tier_mib.get(t, 0.0) for t in DATA_TIERS.get(d, ())})
             for d, path in archives.items()}
    alone = {d: f"make gpu-job-check GPU_JOB_ARGS='--steps {''.join(sorted({it.step for it in todo if it.config.dataset == d}))}'"
             for d in archives}
    carried, too_big = travel.choose_data(list(archives), tree + sum(tier_mib.get(t, 0.0) for t in base_tiers), sizes,
                                          alone=alone)
    left.update(too_big)
    for name in carried:
        if archives[name].parent != carry:
            shutil.copy2(archives[name], carry / archives[name].name)
    # carry only the archives this call needs: no other data set, nothing a rehearsal unpacked
    pruned = travel.prune_carry(carry, {archives[d].name for d in carried})
    tiers = base_tiers + tuple(dict.fromkeys(t for d in carried for t in DATA_TIERS.get(d, ())))
    wheel_files = wheels.download(wheel_dir, tiers)      # drops the tiers of the data sets left out
    gaps = wheels.unmet(wheel_dir)
    carried_mib = travel.mib((root / CARRY).rglob("*"))
    total = tree + carried_mib
    fits = total <= travel.LIMIT_MIB
    runnable = sum(1 for it in todo if it.config.dataset not in left)
    print(f"gpu-job travel: working tree {tree:.1f} MiB + {CARRY}/ {carried_mib:.1f} MiB ({', '.join(carried) or 'no data'}"
          f", {len(wheel_files)} wheels) = {total:.1f} MiB of {travel.LIMIT_MIB:g} MiB: {'fits' if fits else 'DOES NOT FIT'}; "
          f"{len(todo)} runs left in steps {steps}, {runnable} of them with their data carried")
    for name, why in left.items():
        print(f"not carried: {name} (its runs wait for a later loan): {why}")
    if pruned:
        print(f"removed from {CARRY}/data (not needed on this call): {', '.join(pruned)}")
    print(f"wheels: {len(wheel_files)} in {wheels.CARRY_DIR}/ ({travel.mib(wheel_files):.1f} MiB; {' and '.join(tiers)} of {wheels.LIST}); "
          + ("their requirements are carried or on the GPU image" if not (gaps["missing"] or gaps["version"])
             else "UNMET: " + "; ".join([f"{w} needs {r}" for w, r in gaps["missing"]]
                                        + [f"{w} needs {r}, carried {v}" for w, r, v in gaps["version"]]))
          + (f"; left out on purpose: {', '.join(sorted(gaps['left_out']))}" if gaps["left_out"] else ""))
    n_keys, n_missing = len(chapter["keys"]), len(chapter["missing"])
    state = (f"chapter {dc.CHAPTER} at {profile}: {n_keys - n_missing} of its {n_keys} runs in results/"
             + (f" ({n_missing} missing: the job executes it once they are all finished)" if n_missing else ""))
    if with_chapter:
        kept = sum(1 for k in chapter["keys"] if (root / "results" / "runs" / k / "logits.npz").is_file())
        state += f"; its wheels carried and {kept} runs' logits kept in the travel"
        if chapter_due:
            state += ": the job executes it on the machine"
    elif chapter_due and not chapter["executed"]:
        state += ("; no copy executed on a GPU machine is committed: prepare with `make gpu-job-check-chapter` "
                  "(--with-chapter) so that the job executes it there")
    elif chapter["executed"]:
        state += f"; executed on a GPU machine: {chapter['executed'][-1].relative_to(root)}"
    print(state)
    if hidden:
        print(f"{len(hidden)} logits.npz of committed runs stay here during the call (committed ones out of the "
              f"index, all ignored; the files are untouched): after the call, `replicate runs unpack` (or "
              f"`make gpu-job-restore`) puts them back; commit nothing before that")
    print(f'device call: run(command="make gpu-job", carry=["{CARRY}"], timeout_s=600)')
    return 0 if fits and (runnable or (with_chapter and chapter_due)) else 1


def list_queue(steps: str, profile: str, workers: int | None, mps: bool) -> int:
    """Print the queue's ``steps`` at ``profile``, one run a row, and per step the device time
    of its missing runs with ``workers`` at once (under MPS when ``mps``)."""
    import pandas as pd

    from ..runs import find
    from . import queue

    items = queue.build(profile, steps)
    a = queue.assumptions()
    k = workers or a["workers"]
    rows = [{"step": it.step, "chapter": it.chapter, "group": it.group, "method": it.method, "seed": it.seed,
             "key": it.key, "finished": find(it.config) is not None,
             "estimated_s": round(queue.estimate_seconds(it, k, mps, a))} for it in items]
    frame = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_rows", None, "display.max_colwidth", 30):
        print(frame.to_string(index=False))
    for s in steps:
        part = [it for it, r in zip(items, rows) if it.step == s and not r["finished"]]
        size = queue.sizing(part, k, mps)
        done = sum(1 for it, r in zip(items, rows) if it.step == s and r["finished"])
        print(f"step {s} ({queue.STEPS[s]}): {done} finished, {size['runs']} to train, about "
              f"{size['seconds'] / 60:.1f} min of GPU work with {k} at once{' under MPS' if mps else ''} "
              f"({size['loans_exact']:.1f} loans)")
    return 0


def stage(dest) -> int:
    """Copy what would travel (:func:`replicate.gpu_loan.travel.stage`) into the new folder ``dest``."""
    from .. import config
    from . import travel

    size = travel.stage(config.repo_root(), Path(dest))
    print(f"gpu-job: staged what travels ({size:.1f} MiB of {travel.LIMIT_MIB:g}) in {dest}")
    return 0


def restore() -> int:
    """Put back the committed logits :func:`check_travel` kept off the device
    (:func:`replicate.gpu_loan.travel.restore`)."""
    from .. import config
    from . import travel

    n = travel.restore(config.repo_root())
    print(f"gpu-job: {n} hidden logits back in the index" if n else "gpu-job: nothing was hidden")
    return 0
