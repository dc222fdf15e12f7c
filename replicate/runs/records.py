"""A finished run read from its folder (:class:`Run`), and damaged runs.

A damaged file of a finished run (a half-written ``record.json``, a truncated
``logits.npz``) is never read as a run. It raises :class:`DamagedRunError`, one line naming
the run folder, the file, what is wrong and the fix that fits where the store lies
(:func:`damaged`): ``git checkout -- results/runs/<key>`` for the committed store inside the
package's checkout; restoring the folder from the copy it came from, or deleting it to train
the run again, for a store elsewhere. The record is checked when the run is opened, the
logits when they are read (:func:`check_logits` reads them all). In the writable ``cache``
an entry whose record or logits do not read back is moved aside (to
``<cache>/runs/.damaged/<key>-<time>``) with a warning when it is looked up, and treated as
missing, so it is trained again.

Readers that go on past a damaged run (listings, the claims, a chapter's plan) and the
damaged runs they met: :mod:`replicate.runs.damage`. Where the run folders lie:
:mod:`replicate.runs.layout`; looking runs up in the stores and writing them:
:mod:`replicate.runs.store`.
"""
from __future__ import annotations

import json
import os
import time
import uuid
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .. import config as _config
from ..data.archives import DataArchiveError
from .layout import _store_of
from .spec import RunConfig

#: The fields every record holds (a record without one of them is damaged).
RECORD_FIELDS = ("key", "config", "resolved", "metrics", "temperature", "history", "provenance", "wall_time")
#: What reading a damaged ``logits.npz`` raises (a truncated zip, a corrupt member, a missing one).
LOGITS_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError)
#: The folder of a store's runs where damaged cache entries are moved aside.
DAMAGED_DIR = ".damaged"


class DamagedRunError(DataArchiveError):
    """A file of a finished run is truncated, corrupted or missing. The message is one line:
    the run folder, the file, what is wrong, and the fix. ``key`` (the folder's name),
    ``path`` (the run folder) and ``file`` ("record.json" or "logits.npz") say which."""

    def __init__(self, message: str, key: str = "", path: Path | None = None, file: str = ""):
        super().__init__(message)
        self.key, self.path, self.file = key, path, file


def _in_checkout(path: Path) -> Path | None:
    """``path`` relative to the package's git checkout when it lies inside it, else None."""
    root = _config.checkout()
    if root is None or not (root / ".git").exists():
        return None
    try:
        return Path(path).resolve().relative_to(root)
    except ValueError:
        return None


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when it lies inside it (as git names it), else whole."""
    rel = _in_checkout(path)
    return str(rel) if rel is not None else str(path)


def fix_for(run_dir: Path) -> str:
    """What repairs the damaged run folder ``run_dir``, as fits where it lies: inside the
    package's git checkout, ``git checkout`` of the committed copy; in the cache, deleting it
    (it is trained again); in a store elsewhere, restoring it from the copy it came from or
    deleting it to train the run again.

    Parameters
    ----------
    run_dir : Path
        The run folder, ``<store>/runs/<key>``.

    Returns
    -------
    str
        The fix, to follow a semicolon in the one-line message of :func:`damaged`.
    """
    where = _shown(run_dir)
    if _store_of(run_dir) == "cache":
        return f"delete {where} to train the run again"
    if _in_checkout(run_dir) is not None:
        return f"restore the committed copy with `git checkout -- {where}` (or delete {where} to train the run again)"
    return (f"restore {where} from the copy it came from (a backup, or `replicate runs unpack` of its archive), "
            f"or delete it to train the run again")


def damaged(run_dir: Path, name: str, what: str) -> DamagedRunError:
    """The one-line error for the damaged file ``name`` of the run folder ``run_dir``: the
    folder, the file, ``what`` is wrong and the fix (:func:`fix_for`).

    Parameters
    ----------
    run_dir : Path
        The run folder.
    name : str
        The damaged file ("record.json" or "logits.npz").
    what : str
        What is wrong with it (whitespace folded into one line).

    Returns
    -------
    DamagedRunError
        The error, not raised.
    """
    run_dir = Path(run_dir)
    what = " ".join(str(what).split())
    return DamagedRunError(f"run {_shown(run_dir)}: {name} is damaged ({what}); {fix_for(run_dir)}",
                           key=run_dir.name, path=run_dir, file=name)


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


def _move_aside(run_dir: Path, err: DamagedRunError, warn: bool = True) -> str:
    """Move a damaged cache entry to ``<cache>/runs/.damaged/``; the one-line message (``err``
    and where the entry went), also given as a warning when ``warn``."""
    target = run_dir.parent / DAMAGED_DIR / f"{run_dir.name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(run_dir, target)
    except OSError:
        if run_dir.exists():
            raise
        return f"{err}; another process moved it aside"  # another process moved it first
    text = f"{err}; it was moved aside to {_shown(target)} and the run counts as missing"
    if warn:
        warnings.warn(text, stacklevel=3)
    return text


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


class Run:
    """A finished run read from its folder: ``.config``, ``.metrics``, ``.history``, ``.logits()``.

    Parameters
    ----------
    path : str or os.PathLike
        The run's folder, ``<store>/runs/<key>``, holding ``record.json`` and ``logits.npz``
        (FileNotFoundError without the record; a damaged one raises
        :class:`~replicate.runs.records.DamagedRunError`).

    Example
    -------
    >>> from replicate import runs
    >>> run = runs.Run(runs.store_dir('results') / '1bef35eabfc1ab17')
    >>> run.config.loss, run.config.profile, run.store
    ('brier', 'gpu', 'results')
    >>> z, y = run.logits('test'); z.shape == (len(y), 10)
    True
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
        """``(logits float32 (n, K), labels int64 (n,))`` of ``split``.

        Parameters
        ----------
        split : str
            ``"val"``, ``"test"`` (default) or ``"ood:NAME"`` for an out-of-distribution set
            of :attr:`ood_sets`; ValueError lists the allowed ones.

        Example
        -------
        >>> from replicate import runs
        >>> run = runs.load('1bef35eabfc1ab17')
        >>> [run.logits(s)[0].dtype.name for s in ('val', 'test')]
        ['float32', 'float32']
        """
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
