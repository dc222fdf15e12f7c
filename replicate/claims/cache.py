"""What the book's verdicts are computed from, computed once and kept on disk.

The claims of a theory chapter (its checks at a profile's grid sizes), the sections of an
experiment chapter's report (:mod:`replicate.comparison.report`) and the post-hoc fits they
share are kept under ``<cache>/reports/`` (:func:`folder`), each in a file named by a hash of
what it depends on - the chapter, the profile, the keys of the runs it read - and of the
package's code (:func:`code_version`): a chapter, ``replicate claims`` and the claims ledger
compute each once and read it back after, in any process; new runs or changed code compute
it anew. ``REPLICATE_REPORT_CACHE=0`` keeps nothing on disk.

What several processes may want at the same moment (``replicate claims`` builds the chapters
two at a time, and chapters share runs) is kept with :func:`shared`: the first process to
ask computes it under a lock of its file, the others wait for the file and read it.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
import time
from pathlib import Path

#: Set to "0" to compute everything anew (no reading or writing of the disk cache).
CACHE_ENV = "REPLICATE_REPORT_CACHE"
#: Reports kept per chapter and profile (other plans, older code: the oldest go first).
KEEP = 4


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The hash of every Python module of the package (:func:`replicate.config.source_hash`,
    the package hash that run records and executed chapters record): nothing computed by
    other code is read back."""
    from ..config import source_hash

    return source_hash()


def folder() -> Path:
    """Where kept results live: ``<cache>/reports`` (:func:`replicate.config.cache_dir`)."""
    from ..config import cache_dir

    return cache_dir() / "reports"


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1") != "0"


def name(*parts) -> str:
    """A file name for what depends on ``parts`` and on the code: 24 hex digits."""
    return hashlib.sha256(repr((parts, code_version())).encode()).hexdigest()[:24]


def kept(path: Path, build):
    """``build()`` read from ``path`` when it was written before, else computed and written
    atomically. A new sub-folder ``<stem>-<hash>`` of :func:`folder` prunes its siblings of the
    same stem to the :data:`KEEP` most recent. A value that cannot be pickled is returned
    without being kept."""
    if not enabled():
        return build()
    if path.exists():
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            path.unlink(missing_ok=True)                # unreadable: compute it again
    value = build()
    parent = path.parent
    if not parent.exists():
        parent.mkdir(parents=True, exist_ok=True)
        if parent.parent == folder() and "-" in parent.name:
            stem = parent.name.rsplit("-", 1)[0]
            others = sorted((d for d in parent.parent.glob(f"{stem}-*") if d != parent and d.is_dir()),
                            key=lambda d: d.stat().st_mtime, reverse=True)
            for old in others[KEEP - 1:]:
                shutil.rmtree(old, ignore_errors=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        tmp.unlink(missing_ok=True)
        return value
    os.replace(tmp, path)
    return value


#: How long :func:`shared` waits for another process's entry before computing it itself.
WAIT = 600.0


def _read(path: Path):
    """The value kept at ``path``; raises ``LookupError`` when there is none or it is unreadable."""
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        raise LookupError(path) from None
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        path.unlink(missing_ok=True)
        raise LookupError(path) from None


def shared(path: Path, build, wait: float | None = None):
    """:func:`kept` for values that several processes may want at the same time: ``build()``
    is computed by one of them, under an exclusive lock of ``<path>.lock`` (released by the
    OS if the process dies), while the others wait for the file and read it. A process that
    has waited ``wait`` seconds (default :data:`WAIT`) computes the value itself. ``build``
    must not ask for another shared value (two processes could wait for each other: the
    timeout would end it, not a deadlock, but slowly)."""
    if not enabled():
        return build()
    try:
        return _read(path)
    except LookupError:
        pass
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no cross-process lock
        return kept(path, build)
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + (WAIT if wait is None else wait)
    with open(path.with_name(path.name + ".lock"), "a+") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return kept(path, build)
                time.sleep(0.02)
                continue
            try:
                try:
                    return _read(path)                   # another process wrote it while we waited
                except LookupError:
                    return kept(path, build)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
