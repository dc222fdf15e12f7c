"""The run store: finished runs on disk and ``get_or_train``.

Where the stores and their run folders lie (``<store>/runs/<key>/`` holding ``record.json``
and ``logits.npz``, checkpoints in ``<cache>/checkpoints/``): :mod:`replicate.runs.layout`.

A damaged file of a finished run (a half-written ``record.json``, a truncated
``logits.npz``) is never read as a run. In the committed ``results`` store it stops with
:class:`DamagedRunError`, one line naming the run folder, the file, what is wrong and the
fix (``git checkout -- results/runs/<key>``, or delete the folder to retrain); the record
is checked when the run is opened, the logits when they are read. In the writable
``cache`` an entry whose record or logits do not read back is moved aside (to
``<cache>/runs/.damaged/<key>-<time>``) with a warning when it is looked up, and treated
as missing, so it is trained again.

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
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .. import config as _config
from ..data.archives import DataArchiveError
from .layout import STORES, _store_of, checkpoint_path, store_dir
from .spec import RunConfig

FORMAT = 1
#: The fields every record holds (a record without one of them is damaged).
RECORD_FIELDS = ("key", "config", "resolved", "metrics", "temperature", "history", "provenance", "wall_time")
#: What reading a damaged ``logits.npz`` raises (a truncated zip, a corrupt member, a missing one).
LOGITS_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError)
#: The folder of a store's runs where damaged cache entries are moved aside.
DAMAGED_DIR = ".damaged"


class DamagedRunError(DataArchiveError):
    """A file of a finished run is truncated, corrupted or missing. The message is one line:
    the run folder, the file, what is wrong, and the fix."""


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (as git names it)."""
    try:
        return str(Path(path).resolve().relative_to(_config.repo_root()))
    except ValueError:
        return str(path)


def damaged(run_dir: Path, name: str, what: str) -> DamagedRunError:
    """The one-line error for the damaged file ``name`` of the run folder ``run_dir``."""
    run_dir = Path(run_dir)
    where = _shown(run_dir)
    if _store_of(run_dir) == "results":
        fix = (f"restore the committed copy with `git checkout -- {where}` (or delete {where} to train the run "
               f"again)")
    else:
        fix = f"delete {where} to train the run again"
    what = " ".join(str(what).split())
    return DamagedRunError(f"run {where}: {name} is damaged ({what}); {fix}")


def _read_record(run_dir: Path) -> dict:
    """The record of ``run_dir``, checked: JSON, every field of :data:`RECORD_FIELDS`, its
    key the folder's name, a configuration that resolves; else :class:`DamagedRunError`."""
    path = run_dir / "record.json"
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise damaged(run_dir, "record.json", f"not valid JSON, half-written? {type(exc).__name__}: {exc}") from None
    if not isinstance(record, dict):
        raise damaged(run_dir, "record.json", f"a JSON {type(record).__name__}, not a record")
    lacking = [f for f in RECORD_FIELDS if f not in record]
    if lacking:
        raise damaged(run_dir, "record.json", f"lacks {', '.join(lacking)}")
    if record["key"] != run_dir.name and not run_dir.name.startswith(".tmp-"):
        raise damaged(run_dir, "record.json", f"holds the record of run {record['key']}, not of {run_dir.name}")
    return record


def check_logits(run_dir: Path) -> None:
    """Read every array of ``run_dir/logits.npz`` back (CRC-checked by zipfile);
    :class:`DamagedRunError` when it is missing, truncated or corrupt."""
    path = Path(run_dir) / "logits.npz"
    try:
        with open(path, "rb") as fh, np.load(fh) as f:      # our handle: closed even when np.load fails
            for name in f.files:
                f[name]
    except LOGITS_ERRORS as exc:
        what = "missing" if isinstance(exc, FileNotFoundError) else \
            f"truncated or corrupt, {type(exc).__name__}: {exc}"
        raise damaged(run_dir, "logits.npz", what) from None


def _move_aside(run_dir: Path, err: DamagedRunError) -> None:
    """Move a damaged cache entry to ``<cache>/runs/.damaged/`` and warn (one line)."""
    target = run_dir.parent / DAMAGED_DIR / f"{run_dir.name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(run_dir, target)
    except OSError:
        if run_dir.exists():
            raise
        return                                          # another process moved it first
    warnings.warn(f"{err}; it was moved aside to {_shown(target)} and the run counts as missing", stacklevel=3)


def _open(run_dir: Path):
    """The finished run in ``run_dir``, or None for a damaged cache entry (moved aside, with a
    warning); a damaged run of any other store raises :class:`DamagedRunError`."""
    if _store_of(run_dir) != "cache":
        return Run(run_dir)
    try:
        run = Run(run_dir)
        check_logits(run_dir)
        return run
    except DamagedRunError as err:
        _move_aside(run_dir, err)
        return None


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


class Run:
    """A finished run read from its folder: ``.config``, ``.metrics``, ``.history``, ``.logits()``.

    Example
    -------
    >>> from replicate import runs
    >>> run = runs.load(runs.list_runs('results').iloc[0]['key'], store='results')  # doctest: +SKIP
    >>> run.metrics['test']['ece'], run.temperature, run.logits('test').shape  # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        record_file = self.path / "record.json"
        if not record_file.exists():
            raise FileNotFoundError(f"no finished run at {self.path} (record.json missing)")
        self.record = _read_record(self.path)
        self.key: str = self.record["key"]
        try:
            self.config = RunConfig.from_dict(self.record["config"])
        except (ValueError, KeyError, TypeError) as exc:
            raise damaged(self.path, "record.json", f"its configuration does not read: {exc}") from None
        self.resolved: dict = self.record["resolved"]
        self.metrics: dict = self.record["metrics"]
        self.temperature: float = self.record["temperature"]
        self.history: list = self.record["history"]
        self.provenance: dict = self.record["provenance"]
        self.wall_time: float = self.record["wall_time"]

    @property
    def store(self) -> str:
        return _store_of(self.path)

    @property
    def data(self) -> dict:
        """Which copy of the data the run was trained on: ``{"name", "source", "how"}``.

        Recorded when the run was trained (``how`` = "recorded"). Runs recorded before that
        was stored: for CIFAR-10 the copy is told from the stored test labels - the offline
        JPEG copy is an image-folder archive ordered by class, so its test subset's labels
        come out sorted, the official test set's do not (``how`` says so); otherwise empty.
        """
        rec = self.provenance.get("data")
        if rec:
            return {**rec, "how": "recorded"}
        if self.resolved.get("dataset") == "cifar10":
            y = self.logits("test")[1]
            jpeg = bool(np.all(np.diff(y) >= 0)) and len(np.unique(y)) > 1
            return {"name": "CIFAR-10 (JPEG q75)" if jpeg else "CIFAR-10", "source": "",
                    "how": "inferred from the order of the stored test labels (class-ordered: the JPEG copy)"
                    if jpeg else "inferred from the order of the stored test labels (not class-ordered: official)"}
        return {}

    @property
    def ood_sets(self) -> dict:
        """``{name: description}`` of the out-of-distribution sets whose logits the run holds
        (:mod:`replicate.runs.ood`); empty for runs recorded without them."""
        return dict(self.record.get("ood", {}))

    def logits(self, split: str = "test") -> tuple[np.ndarray, np.ndarray]:
        """``(logits float32 (n, K), labels int64 (n,))`` of ``split``: "val", "test" or
        "ood:NAME" for an out-of-distribution set of :attr:`ood_sets`."""
        allowed = ("val", "test", *(f"ood:{k}" for k in self.ood_sets))
        if split not in allowed:
            raise ValueError(f"split must be one of {', '.join(allowed)} for run {self.key}; got {split!r}")
        name = split.replace("ood:", "ood_")
        try:
            with open(self.path / "logits.npz", "rb") as fh, np.load(fh) as f:
                return f[f"{name}_logits"].astype(np.float32), f[f"{name}_labels"].astype(np.int64)
        except LOGITS_ERRORS as exc:
            what = "missing" if isinstance(exc, FileNotFoundError) else \
                f"truncated or corrupt, {type(exc).__name__}: {exc}"
            raise damaged(self.path, "logits.npz", what) from None

    def history_frame(self):
        """The per-epoch history as a pandas DataFrame (nested per-split metrics flattened
        to ``split/metric`` columns; histograms and loss state left out)."""
        import pandas as pd

        rows = []
        for row in self.history:
            flat = {}
            for k, v in row.items():
                if isinstance(v, dict) and k in ("train", "val", "test"):
                    flat.update({f"{k}/{m}": x for m, x in v.items()})
                elif not isinstance(v, (dict, list)):
                    flat[k] = v
            rows.append(flat)
        return pd.DataFrame(rows)

    def summary(self) -> dict:
        """One row for listings: identity, error, ECE before and after TS, T."""
        r, t, ts = self.resolved, self.metrics["test"], self.metrics["test_ts"]
        params = ",".join(f"{k}={v}" for k, v in sorted(self.config.loss_params.items()))
        return {"key": self.key, "store": self.store, "dataset": r["dataset"], "model": r["model"],
                "loss": r["loss"] + (f"({params})" if params else ""), "profile": self.config.profile,
                "seed": r["train"]["seed"], "epochs": r["train"]["epochs"], "error": t.get("error"),
                "ece": t.get("ece"), "ece_ts": ts.get("ece"), "T": self.temperature,
                "wall_time": self.wall_time}

    def __repr__(self) -> str:
        s = self.summary()
        f = lambda v: "nan" if v is None else f"{v:.4f}"  # noqa: E731
        return (f"Run({s['key']}: {s['dataset']}/{s['model']}/{s['loss']} seed {s['seed']}, "
                f"error {f(s['error'])}, ECE {f(s['ece'])} -> {f(s['ece_ts'])} at T={s['T']:g})")


def find(config: RunConfig | str) -> Run | None:
    """The finished run of ``config`` (or key) in ``results`` first, then ``cache``; None if absent.

    Example
    -------
    >>> from replicate.runs import RunConfig, find
    >>> find(RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke', seed=12345)) is None
    True
    """
    key = config if isinstance(config, str) else config.key
    for store in STORES:
        path = store_dir(store) / key
        if (path / "record.json").exists():
            run = _open(path)
            if run is not None:
                return run
    return None


def load(key: str, store: str | None = None) -> Run:
    """The finished run whose key is ``key`` or starts with it (unique prefix).

    Example
    -------
    >>> from replicate import runs
    >>> key = runs.list_runs('results').iloc[0]['key']  # doctest: +SKIP
    >>> runs.load(key[:8]).config['loss']  # doctest: +SKIP
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
        run = _open(path)
        if run is not None:
            return run
    raise ValueError(f"no finished run with key {key!r} in {', '.join(stores)}")


def list_runs(store: str = "all"):
    """A pandas DataFrame with one :meth:`Run.summary` row per finished run in ``store``.

    Example
    -------
    >>> from replicate.runs import list_runs
    >>> {'key', 'loss', 'profile'} <= set(list_runs('results').columns)
    True
    """
    import pandas as pd

    stores = STORES if store == "all" else (store,)
    rows = []
    for name in stores:
        base = store_dir(name)
        if base.exists():
            found = [_open(p) for p in sorted(base.iterdir())
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

    Example
    -------
    >>> from replicate import runs
    >>> runs.write_record(config, result, store='cache')  # doctest: +SKIP
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
    cal = posthoc.fit_temperature(val_z, val_y, method="grid", metric="ece")
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

    Example
    -------
    >>> from replicate import runs
    >>> runs.promote('KEY')  # doctest: +SKIP
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

    Example
    -------
    >>> from replicate.runs import RunConfig, get_or_train
    >>> run = get_or_train(RunConfig('cifar10', 'adafocal', profile='smoke'))  # doctest: +SKIP
    >>> run.metrics['test']['ece']  # doctest: +SKIP
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
