"""What a sweep trains: the chapter's own plan for given parameters, and the cost of each run.

The runs come from the same function the chapter calls
(:func:`replicate.experiments.chapter_plan`), with the chapter's parameters cell as
defaults and the user's ``-p NAME VALUE`` and ``--profile`` on top, validated by the
runner exactly as ``replicate run`` validates them - so a sweep never plans a run the
chapter would not ask for.
"""
from __future__ import annotations

import math
import statistics

import pandas as pd

#: Training-set sizes of the full data sets (the reference split), to estimate costs of
#: runs that train on all of it.
FULL_TRAIN = {"cifar10": 45000, "cifar100": 45000, "cifar10c": 45000, "svhn": 65932, "tiny_imagenet": 90000,
              "20newsgroups": 10414}


def chapter_parameters(chapter: str, given: dict | None = None, profile: str | None = None) -> dict:
    """The chapter's parameters: its cell's defaults, then ``given``, then ``profile``;
    validated like ``replicate run`` (unknown names, wrong types, unknown profile)."""
    from .. import experiments, runner

    source = runner.resolve_notebook(chapter)
    experiments.chapter_module(source.stem)              # refuses chapters that train nothing
    defaults = runner.default_parameters(runner.read_notebook(source))
    parsed = {k: runner.parse_value(v) for k, v in (given or {}).items()}   # CLI text -> Python literals
    return {**defaults, **runner.validate_parameters(source.stem, defaults, parsed, profile)}


def sweep_plan(chapter: str, given: dict | None = None, profile: str | None = None):
    """``(chapter name, parameters, Plan)`` for a sweep; nothing trains."""
    from .. import experiments, runner

    name = runner.resolve_notebook(chapter).stem
    params = chapter_parameters(chapter, given, profile)
    return name, params, experiments.chapter_plan(name, **params)


def _work(resolved: dict) -> float:
    n = resolved["n_train"] or FULL_TRAIN.get(resolved["dataset"], math.nan)
    return resolved["train"]["epochs"] * n


def seconds_per_sample_epoch(device_type: str) -> dict:
    """``{(dataset kind, model): median seconds per training sample-epoch}`` over the
    finished runs in the stores that ran on ``device_type`` ("cpu" or "cuda")."""
    from ..runs import list_runs, load

    rates: dict = {}
    frame = list_runs()
    for key in frame["key"]:
        run = load(key)
        if not str(run.provenance.get("device", "")).startswith(device_type):
            continue
        seconds = run.record.get("train_seconds") or run.wall_time
        work = _work(run.resolved)
        if seconds and work and not math.isnan(work):
            rates.setdefault((run.resolved["kind"], run.resolved["model"]), []).append(seconds / work)
    return {k: statistics.median(v) for k, v in rates.items()}


def runs_table(plan, device_type: str | None = None) -> pd.DataFrame:
    """One row per distinct run of ``plan``: key, data set, model, loss, parameters, seed,
    epochs, whether it is finished, and the estimated training seconds on ``device_type``
    (from finished runs of the same network on that kind of device; NaN when none)."""
    from ..runs import find

    device_type = device_type or ("cuda" if str(plan.device).startswith("cuda") else "cpu")
    rates = seconds_per_sample_epoch(device_type)
    seeds = {cfg.key: seed for cfgs in plan.groups.values() for (_, seed), cfg in cfgs.items()}
    groups = {}
    for g, cfgs in plan.groups.items():
        for (method, _), cfg in cfgs.items():
            groups.setdefault(cfg.key, []).append(f"{g}/{method}")
    rows = []
    for key, cfg in plan.configs().items():
        r = cfg.resolve()
        rate = rates.get((r["kind"], r["model"]), math.nan)
        rows.append({"key": key, "runs": ", ".join(groups[key]), "dataset": r["dataset"], "model": r["model"],
                     "loss": r["loss"], "params": ", ".join(f"{k}={v}" for k, v in sorted(cfg.loss_params.items()))
                     or "–", "seed": seeds[key], "epochs": r["train"]["epochs"],
                     "finished": find(cfg) is not None, "estimated_s": rate * _work(r)})
    return pd.DataFrame(rows)


def totals(table: pd.DataFrame, workers: int = 1) -> str:
    """One line: runs, finished, to train, estimated training time in total and per worker."""
    todo = table[~table.finished]
    if not len(todo):
        return f"{len(table)} runs: all finished, nothing to train"
    est = todo.estimated_s
    known = est.notna().sum()
    t = f"{est.sum() / 60:.1f} min" if known else "unknown"
    part = "" if known == len(todo) else f" ({len(todo) - known} runs without an estimate)"
    wall = f", about {est.sum() / 60 / max(workers, 1):.1f} min on {workers} worker{'s' if workers != 1 else ''}" if known else ""
    return (f"{len(table)} runs: {int(table.finished.sum())} finished (skipped), {len(todo)} to train; "
            f"estimated training time {t}{part}{wall}")
