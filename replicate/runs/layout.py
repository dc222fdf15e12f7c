"""Where finished runs lie on disk: the stores, the run folders and the checkpoints.

A run's key is the SHA-256 of its resolved configuration as canonical JSON
(:mod:`replicate.runs.spec`: numbers canonicalised, so ``gamma=3`` and ``gamma=3.0`` are
the same run; the profile's *name* is not part of it, only the values it resolves to).

A finished run is a folder ``<store>/runs/<key>/`` holding ``record.json`` (configuration,
metrics on the validation and test sets before and after temperature scaling with the
fitted ``T``, per-epoch history, provenance, wall time) and ``logits.npz`` (compressed
validation and test logits with their labels). The folder is written under a temporary
name and renamed into place, so a half-written run is never read as finished. Stores:
``results`` (:func:`replicate.config.results_dir`, committed, no checkpoints) and
``cache`` (:func:`replicate.config.cache_dir`, local). Checkpoints live only in
``<cache>/checkpoints/<key>.pt`` and are deleted when the run finishes.

Reading a run folder (and a damaged one): :mod:`replicate.runs.records`; looking runs up,
writing them and ``get_or_train``: :mod:`replicate.runs.store`.
"""
from __future__ import annotations

from pathlib import Path

from .. import config as _config

STORES = ("results", "cache")


def _store_of(path: Path) -> str:
    for name in STORES:
        if Path(path).parent == store_dir(name):
            return name
    return "other"


def store_dir(store: str) -> Path:
    """The folder holding the finished runs of ``store``.

    Parameters
    ----------
    store : {"results", "cache"}
        The committed store (:func:`replicate.config.results_dir`) or the local cache
        (:func:`replicate.config.cache_dir`).

    Example
    -------
    >>> from replicate.runs import store_dir
    >>> store_dir('results').name
    'runs'
    """
    if store == "results":
        return _config.results_dir() / "runs"
    if store == "cache":
        return _config.cache_dir() / "runs"
    raise ValueError(f"store must be one of {', '.join(STORES)}; got {store!r}")


def checkpoint_path(key: str) -> Path:
    """Where the run ``key`` keeps its checkpoint while training (local cache only).

    Parameters
    ----------
    key : str
        The run's key (16 hex digits).

    Example
    -------
    >>> from replicate.runs import checkpoint_path
    >>> checkpoint_path('0123abcd').suffix
    '.pt'
    """
    return _config.cache_dir() / "checkpoints" / f"{key}.pt"
