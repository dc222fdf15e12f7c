"""Going on past damaged runs: checking a whole store, and the damaged runs met so far.

A reader that lists or compares many runs (``replicate runs ls``, ``replicate claims``, a
chapter's plan, ``replicate book``) does not stop at the first damaged run
(:class:`replicate.runs.records.DamagedRunError`): it leaves the run out, as if it were
missing, and goes on with the others. :func:`check_store` checks every run folder of a store
at once (record and logits) and returns one error per damaged file, each one line with the
fix that fits where the store lies; :func:`note` keeps the damaged runs this process has met
while looking runs up (:func:`replicate.runs.find` with ``on_damage="skip"``), so that a claim
whose evidence needs one says why it is not tested (:func:`reason`: "run <key> damaged").
"""
from __future__ import annotations

import functools
from pathlib import Path

from .layout import STORES, store_dir
from .records import DamagedRunError, Run, _move_aside, _open, check_logits

#: What a reader does with a damaged run: stop with its error, or leave it out and go on.
ON_DAMAGE = ("raise", "skip")

_SEEN: dict[str, DamagedRunError] = {}      # run folder -> the error met there (this process)


def check_on_damage(on_damage: str) -> str:
    """``on_damage`` if it is one of :data:`ON_DAMAGE`; else a ValueError naming the parameter."""
    if on_damage not in ON_DAMAGE:
        raise ValueError(f"on_damage must be one of {', '.join(ON_DAMAGE)}; got {on_damage!r}")
    return on_damage


def note(err: DamagedRunError) -> None:
    """Keep ``err`` among the damaged runs met by this process (:func:`seen`)."""
    _SEEN[str(err.path)] = err


def seen(keys=None) -> list[DamagedRunError]:
    """The damaged runs this process has met (looked up with ``on_damage="skip"``), in the
    order met; only those whose key is in ``keys`` when given.

    Parameters
    ----------
    keys : iterable of str, optional
        Run keys (e.g. a plan's :meth:`replicate.comparison.Plan.configs`).

    Returns
    -------
    list of DamagedRunError
    """
    wanted = None if keys is None else set(keys)
    return [e for e in _SEEN.values() if wanted is None or e.key in wanted]


def forget() -> None:
    """Forget the damaged runs met so far (a store that was repaired; tests)."""
    _SEEN.clear()


def reason(keys) -> str | None:
    """Why a claim on the runs ``keys`` is not tested when some of them are damaged:
    ``"run <key> damaged (<file>)"`` for each one met (:func:`seen`), joined by ``"; "``;
    None when none of them is.

    Parameters
    ----------
    keys : iterable of str
        The run keys the evidence needs.

    Returns
    -------
    str or None
    """
    found = seen(keys)
    if not found:
        return None
    return "; ".join(f"run {e.key} damaged ({e.file}: see `replicate runs ls`)" for e in found)


def read(path: Path, on_damage: str = "raise") -> Run | None:
    """The run in the folder ``path``; None for a damaged cache entry (moved aside). A damaged
    run of another store raises with ``on_damage="raise"``; with ``"skip"`` its logits are
    read back too (:func:`check_logits_once`), and a damaged run is kept (:func:`note`) and
    None.

    Parameters
    ----------
    path : Path
        A run folder, ``<store>/runs/<key>``.
    on_damage : str
        One of :data:`ON_DAMAGE`.

    Returns
    -------
    Run or None
    """
    try:
        run = _open(path)
        if run is not None and on_damage == "skip" and run.store != "cache":
            check_logits_once(path)
        return run
    except DamagedRunError as err:
        if on_damage == "raise":
            raise
        note(err)
        return None


@functools.lru_cache(maxsize=4096)
def _logits_read_back(path: str, mtime_ns: int, size: int) -> None:
    check_logits(Path(path))


def check_logits_once(path: Path) -> None:
    """:func:`replicate.runs.records.check_logits` of the run folder ``path``, once per state
    of its ``logits.npz`` (path, modification time, size): a chapter's plan looks the same runs
    up many times. Raises :class:`DamagedRunError` when they do not read back."""
    f = Path(path) / "logits.npz"
    try:
        st = f.stat()
    except OSError:
        check_logits(path)              # missing: the error says so
        return
    _logits_read_back(str(f.parent), st.st_mtime_ns, st.st_size)


def _check(path: Path) -> DamagedRunError | None:
    try:
        Run(path)
        check_logits_once(path)
    except DamagedRunError as err:
        return err
    return None


def check_store(store: str = "all", logits: bool = True) -> list[DamagedRunError]:
    """Every damaged file of the finished runs of ``store`` (``"all"``, ``"results"`` or
    ``"cache"``): each run folder's record read and checked, and its logits read back
    (``logits``; CRC-checked, about a second for the 150 committed runs). One error per
    damaged run, each one line with the fix (:func:`replicate.runs.records.fix_for`); they
    are also kept (:func:`note`). A damaged cache entry is moved aside, as when it is looked
    up, and its line says so.

    Parameters
    ----------
    store : str
        "all" or one of :data:`replicate.runs.STORES`.
    logits : bool
        Also read every ``logits.npz`` back (else only the records).

    Returns
    -------
    list of DamagedRunError
        In store order, then folder order; empty when every run reads back.

    Example
    -------
    >>> from replicate.runs import check_store
    >>> [str(err) for err in check_store('results')]   # one line per damaged file; none here
    []
    """
    if store != "all" and store not in STORES:
        raise ValueError(f"store must be one of all, {', '.join(STORES)}; got {store!r}")
    out = []
    for name in STORES if store == "all" else (store,):
        base = store_dir(name)
        if not base.exists():
            continue
        for path in sorted(base.iterdir()):
            if path.name.startswith(".") or not (path / "record.json").exists():
                continue
            err = _check(path) if logits else _check_record(path)
            if err is None:
                continue
            if name == "cache":
                err = DamagedRunError(_move_aside(path, err, warn=False), err.key, err.path, err.file)
            note(err)
            out.append(err)
    return out


def _check_record(path: Path) -> DamagedRunError | None:
    try:
        Run(path)
    except DamagedRunError as err:
        return err
    return None
