"""The run store: looking finished runs up, writing them, and ``get_or_train``.

Where the stores and their run folders lie (``<store>/runs/<key>/`` holding ``record.json``
and ``logits.npz``, checkpoints in ``<cache>/checkpoints/``): :mod:`replicate.runs.layout`.
A finished run read from its folder, and what happens to a damaged one:
:mod:`replicate.runs.records`.

Temperature scaling follows the papers' code (the book's page "The authors' code"): grid T = 0.1..10.0
chosen by minimum validation ECE (:func:`replicate.posthoc.fit_temperature`).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import numpy as np

from .. import config as _config
from . import damage
from .layout import STORES, checkpoint_path, store_dir
from .records import Run
from .seeds import RECORD_ONLY, seeds_in_store  # noqa: F401 - the store's API, kept here
from .spec import RunConfig

FORMAT = 1


def _jsonable(obj):
    """Numpy scalars and arrays to Python, non-finite floats to None, tuples to lists."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def find(config: RunConfig | str, on_damage: str = "raise") -> Run | None:
    """The finished run of ``config`` (or key) in ``results`` first, then ``cache``; None if absent.

    Parameters
    ----------
    config : RunConfig or str
        The configuration, or its key.
    on_damage : str
        What a damaged run of ``results`` does (:data:`replicate.runs.damage.ON_DAMAGE`):
        ``"raise"`` (default) stops with its one-line
        :class:`~replicate.runs.records.DamagedRunError`; ``"skip"`` also reads its logits
        back, keeps the error (:func:`replicate.runs.damage.seen`) and treats the run as
        missing, so that a reader of many runs goes on with the others. A damaged cache entry
        is moved aside and missing either way.

    Returns
    -------
    Run or None

    Example
    -------
    >>> from replicate.runs import RunConfig, find
    >>> find(RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke', seed=12345)) is None
    True
    """
    damage.check_on_damage(on_damage)
    key = config if isinstance(config, str) else config.key
    for store in STORES:
        path = store_dir(store) / key
        if (path / "record.json").exists():
            run = damage.read(path, on_damage)
            if run is not None:
                return run
    return None


def load(key: str, store: str | None = None) -> Run:
    """The finished run whose key is ``key`` or starts with it (unique prefix).

    Parameters
    ----------
    key : str
        A run key (16 hex digits) or a prefix of one that names a single run; ValueError
        for an ambiguous prefix or no run.
    store : {"results", "cache"} or None
        The store to look in; None (default): ``results``, then ``cache``.

    Example
    -------
    >>> from replicate import runs
    >>> key = runs.list_runs('results').iloc[0]['key']
    >>> runs.load(key[:8]).config.loss
    'brier'
    """
    stores = STORES if store is None else (store,)
    matches = []
    for name in stores:
        base = store_dir(name)
        if base.exists():
            matches += [p for p in sorted(base.iterdir()) if p.name.startswith(key) and (p / "record.json").exists()]
    if len({p.name for p in matches}) > 1:
        raise ValueError(f"key prefix {key!r} is ambiguous: {', '.join(sorted({p.name for p in matches}))}")
    for path in matches:
        run = damage.read(path)
        if run is not None:
            return run
    raise ValueError(f"no finished run with key {key!r} in {', '.join(stores)}")


def list_runs(store: str = "all", on_damage: str = "skip"):
    """A pandas DataFrame with one :meth:`Run.summary` row per finished run in ``store``.

    Parameters
    ----------
    store : str
        "all" or one of :data:`replicate.runs.STORES`.
    on_damage : str
        ``"skip"`` (default): a damaged run is left out and kept
        (:func:`replicate.runs.damage.seen`; :func:`replicate.runs.damage.check_store` lists
        every damaged file at once), the others are listed; ``"raise"``: the first one stops
        the listing with its one-line error.

    Returns
    -------
    pandas.DataFrame

    Example
    -------
    >>> from replicate.runs import list_runs
    >>> {'key', 'loss', 'profile'} <= set(list_runs('results').columns)
    True
    """
    import pandas as pd

    damage.check_on_damage(on_damage)
    if store != "all" and store not in STORES:
        raise ValueError(f"store must be one of all, {', '.join(STORES)}; got {store!r}")
    stores = STORES if store == "all" else (store,)
    rows = []
    for name in stores:
        base = store_dir(name)
        if base.exists():
            found = [damage.read(p, on_damage) for p in sorted(base.iterdir())
                     if not p.name.startswith(".") and (p / "record.json").exists()]
            rows += [r.summary() for r in found if r is not None]
    columns = ["key", "store", "dataset", "model", "loss", "profile", "seed", "epochs", "error", "ece",
               "ece_ts", "T", "wall_time"]
    return pd.DataFrame(rows, columns=columns)


@contextlib.contextmanager
def _lock(key: str):
    """An exclusive per-run lock (released by the OS if the process dies)."""
    path = _config.cache_dir() / "locks" / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no cross-process lock
        yield
        return
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_atomic_dir(final: Path, files: dict) -> Path:
    """Write ``files`` (name -> callable(path)) into a temporary folder, then rename it to ``final``."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-{final.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        for name, write in files.items():
            write(tmp / name)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "record.json").exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # someone else finished the same run first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _metrics(logits: np.ndarray, labels: np.ndarray) -> dict:
    from .. import metrics

    return {k: float(v) for k, v in metrics.evaluate(logits, labels).items() if np.ndim(v) == 0}


def write_record(config: RunConfig, result, store: str = "cache", logits_dtype: str = "float32",
                 extra_provenance: dict | None = None, wall_time: float | None = None, ood: dict | None = None) -> Run:
    """Fit T, compute metrics and write the finished run of ``config`` from a
    :class:`replicate.training.TrainResult` into ``store``.

    ``wall_time`` defaults to the sum of the epochs' times; :func:`get_or_train` passes
    the earlier sessions' epochs plus this session's whole time (data, training,
    evaluation). ``ood`` (``{name: (logits, labels, description)}``, from
    :func:`replicate.runs.ood.ood_logits`) adds out-of-distribution logits and their
    entropy AUROC before and after temperature scaling.

    Parameters
    ----------
    config : RunConfig
        The run's configuration; its key names the folder.
    result : replicate.training.TrainResult
        What :func:`replicate.training.train` returned: ``logits`` (``{"val": (logits,
        labels), "test": ...}``, CPU tensors), ``history``, ``selected_epoch``, ``device``.
    store : {"cache", "results"}
        Where the run is written (default ``"cache"``).
    logits_dtype : {"float32", "float16"}
        How the logits are stored (default float32; float16 is kept to float32 where a
        logit exceeds float16's range).
    extra_provenance : dict or None
        Entries added to the record's provenance (default none).
    wall_time : float or None
        The run's wall time in seconds; None (default): the sum of the epochs' times.
    ood : dict or None
        ``{name: (logits, labels, description)}`` of out-of-distribution sets (default none).

    Returns
    -------
    Run

    Example
    -------
    Here the "training result" is a stored run's logits, written again under another seed
    into the cache:

    >>> import torch; from replicate import runs, training
    >>> run = runs.load('1bef35eabfc1ab17')
    >>> logits = {s: tuple(torch.from_numpy(a) for a in run.logits(s)) for s in ('val', 'test')}
    >>> result = training.TrainResult(model=None, history=run.history, logits=logits,
    ...                               selected_epoch=run.record['selected_epoch'])
    >>> copy = runs.write_record(run.config.replace(seed=7), result, store='cache')
    >>> copy.store, copy.config.seed, copy.temperature == run.temperature
    ('cache', 7, True)
    """
    from .. import posthoc, provenance
    from .ood import entropy_auroc

    if logits_dtype not in ("float32", "float16"):
        raise ValueError(f"logits_dtype must be 'float32' or 'float16'; got {logits_dtype!r}")
    splits = {**result.logits, **{f"ood_{k}": (lg, y) for k, (lg, y, _) in (ood or {}).items()}}
    if logits_dtype == "float16" and max(float(lg.abs().max()) for lg, _ in splits.values()) > 6e4:
        logits_dtype = "float32"  # beyond float16's range (65504): keep full precision
    # metrics and T are computed from the logits exactly as stored (float16 in results/),
    # so that anything recomputed from logits.npz agrees with the record
    arrays = {f"{s}_{what}": (lg.numpy().astype(logits_dtype) if what == "logits" else y.numpy().astype(np.int64))
              for s, (lg, y) in splits.items() for what in ("logits", "labels")}
    val_z, val_y = arrays["val_logits"].astype(np.float64), arrays["val_labels"]
    test_z, test_y = arrays["test_logits"].astype(np.float64), arrays["test_labels"]
    cal = posthoc.fit_temperature(val_z, val_y, method="grid", metric="ece", warn=False)
    T = float(cal.params["T"])
    metrics = {"val": _metrics(val_z, val_y), "test": _metrics(test_z, test_y),
               "val_ts": _metrics(val_z / T, val_y), "test_ts": _metrics(test_z / T, test_y)}
    if ood:
        metrics["ood_auroc"] = {k: {"pre": entropy_auroc(test_z, arrays[f"ood_{k}_logits"].astype(np.float64)),
                                    "post": entropy_auroc(test_z, arrays[f"ood_{k}_logits"].astype(np.float64), T)}
                                for k in ood}
    prov = provenance.collect(result.device)
    prov.update(extra_provenance or {})
    record = {"format": FORMAT, "key": config.key, "config": config.to_dict(), "resolved": config.resolve(),
              "metrics": metrics, "temperature": T, "temperature_method": "grid 0.1..10.0 by validation ECE",
              "selected_epoch": result.selected_epoch, "history": result.history, "provenance": prov,
              "wall_time": float(wall_time if wall_time is not None else
                                 sum(r.get("seconds", 0.0) for r in result.history)),
              "train_seconds": float(sum(r.get("seconds", 0.0) for r in result.history)),
              "logits_dtype": logits_dtype, "ood": {k: what for k, (_, _, what) in (ood or {}).items()}}
    files = {"record.json": lambda p: p.write_text(json.dumps(_jsonable(record), indent=1, sort_keys=True)),
             "logits.npz": lambda p: np.savez_compressed(p, **arrays)}
    return Run(_write_atomic_dir(store_dir(store) / config.key, files))


def promote(key: str) -> Run:
    """Copy a finished run from the cache into the committed ``results`` store.

    Parameters
    ----------
    key : str
        The key (or a unique prefix) of a run in the cache.

    Returns
    -------
    Run
        The copy in ``results``.

    Example
    -------
    A run of the cache (here a stored run's logits, written again under another seed):

    >>> import torch; from replicate import runs, training
    >>> run = runs.load('1bef35eabfc1ab17')
    >>> logits = {s: tuple(torch.from_numpy(a) for a in run.logits(s)) for s in ('val', 'test')}
    >>> result = training.TrainResult(model=None, history=run.history, logits=logits)
    >>> key = runs.write_record(run.config.replace(seed=8), result, store='cache').key
    >>> runs.promote(key).store
    'results'
    """
    run = load(key, store="cache")
    files = {name: (lambda p, src=run.path / name: shutil.copyfile(src, p)) for name in ("record.json", "logits.npz")}
    return Run(_write_atomic_dir(store_dir("results") / run.key, files))


def get_or_train(config: RunConfig, store: str = "cache", progress: str = "auto", device=None,
                 deterministic: bool = False, data_dir=None, retrain: bool = False,
                 logits_dtype: str | None = None, engine: str = "auto", deadline: float | None = None) -> Run:
    """The finished run of ``config``: loaded from ``results`` or ``cache`` if there, else trained.

    The whole configuration (names, parameters, profile, device) is validated before any
    data is loaded. Training resumes from the run's checkpoint if a previous attempt was
    killed. ``store`` says where a new run is written (``results`` also promotes a cached
    run). ``logits_dtype`` defaults to float16 in ``results`` (small enough to commit) and
    float32 in the cache. ``store="auto"`` (what chapters use) means ``results`` for every
    profile but ``smoke``, whose runs are test fixtures, not worth committing. ``engine``
    (:data:`replicate.training.ENGINES`; ``auto``: a CUDA graph on a GPU, the eager loop
    on the CPU) is recorded in the provenance and is not part of the key. ``deadline``
    (a :func:`time.monotonic` time) pauses training before an epoch that would end after
    it, raising :class:`replicate.training.TrainingPaused`; the checkpoint stays, and the
    same call later resumes.

    Parameters
    ----------
    config : RunConfig
        What to train.
    store : {"cache", "results", "auto"}
        Where a new run is written (default ``"cache"``).
    progress : {"auto", "bar", "log", "none"}
        How training reports its epochs (:mod:`replicate.training.progress`; default
        ``"auto"``: a bar in a terminal, log lines elsewhere).
    device : str or torch.device or None
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``; None or ``"auto"`` (default): CUDA when present.
    deterministic : bool
        True asks torch for deterministic kernels (slower on a GPU; default False).
    data_dir : str or os.PathLike or None
        The data directory; None (default): :func:`replicate.config.data_dir`.
    retrain : bool
        True trains again even when the run is stored (default False).
    logits_dtype : {"float32", "float16"} or None
        How the logits are stored; None (default): float16 in ``results``, float32 in the cache.
    engine : str
        One of :data:`replicate.training.ENGINES` (default ``"auto"``).
    deadline : float or None
        A :func:`time.monotonic` time before which training pauses (default None: none).

    Returns
    -------
    Run

    Example
    -------
    A stored run is loaded, not trained again:

    >>> from replicate.runs import RunConfig, get_or_train
    >>> run = get_or_train(RunConfig('cifar10', 'brier', profile='gpu'), progress='none')
    >>> run.key, run.store
    ('1bef35eabfc1ab17', 'results')
    """
    from .. import training
    from .build import build

    if store == "auto":
        store = "cache" if config.profile == "smoke" else "results"
    if store not in STORES:
        raise ValueError(f"store must be one of auto, {', '.join(STORES)}; got {store!r}")
    resolved = config.resolve()
    training.select_device(device)
    training.progress.resolve_mode(progress)
    if engine not in training.ENGINES:
        raise ValueError(f"engine must be one of {', '.join(training.ENGINES)}; got {engine!r}")
    if not retrain:
        found = find(config)
        if found is not None:
            if store == "results" and found.store == "cache":
                return promote(found.key)
            return found
    with _lock(config.key):
        found = None if retrain else find(config)
        if found is not None:
            return promote(found.key) if store == "results" and found.store == "cache" else found
        t0 = time.perf_counter()
        splits, model, loss = build(resolved, data_dir=data_dir)
        label = f"{resolved['dataset']}/{resolved['model']}/{resolved['loss']} seed {resolved['train']['seed']}"
        ckpt = checkpoint_path(config.key)
        if retrain and ckpt.exists():
            ckpt.unlink()
        settings = training.TrainSettings(**resolved["train"], engine=engine)
        result = training.train(model, loss, splits, settings, device=device, deterministic=deterministic,
                                checkpoint=ckpt, key=config.key, progress=progress, label=label, deadline=deadline)
        from .ood import ood_logits

        ood = ood_logits(result.model, resolved, splits, data_dir=data_dir)
        dtype = logits_dtype or ("float16" if store == "results" else "float32")
        if retrain:
            shutil.rmtree(store_dir(store) / config.key, ignore_errors=True)
        earlier = sum(r.get("seconds", 0.0) for r in result.history[:result.resumed_from])
        session = time.perf_counter() - t0
        info = splits.info
        run = write_record(config, result, store=store, logits_dtype=dtype, wall_time=earlier + session, ood=ood,
                           extra_provenance={"data": {"name": info.display_name, "source": info.source,
                                                      "generated": bool(info.generated)},
                                             "deterministic": bool(deterministic),
                                             "resumed_from_epoch": result.resumed_from,
                                             "session_seconds": session, "engine": result.engine,
                                             "engine_note": result.engine_note,
                                             "memory_format": result.memory_format})
        with contextlib.suppress(FileNotFoundError):
            ckpt.unlink()
    mode = training.progress.resolve_mode(progress)
    if mode != "none":
        print(f"[{label}] finished in {run.wall_time:.1f}s: {run!r}", file=sys.stdout if mode == "log" else sys.stderr,
              flush=True)
    return run
