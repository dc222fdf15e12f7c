"""The draws of the noise model: which seeds and which examples each resample holds.

Every resample ``b`` of a row of our runs is one draw of a two-level bootstrap:

1. **seeds**: for a method trained with ``S`` seeds, ``S`` seed positions drawn with
   replacement (:func:`seed_draws`). Methods with the same number of seeds get the same
   positions (seed lists are sorted, so seed 1 stands beside seed 1: the draws are paired,
   as the seeds share their data order and initialisation);
2. **examples**: ``n`` examples drawn with replacement from the shared test set (or the
   validation set, for a temperature), held as a *weight matrix* ``W`` (``B x n``: how often
   each example is in each resample, :func:`weights`). Every run of a row, every method and
   every seed, is scored on the same ``W``: the test set is shared, so its noise is shared.

A resampled metric is then a matrix product: per-example terms (a hit, a log-loss, a
residual in its bin) summed with the weights of each resample, ``W @ terms``
(:mod:`replicate.comparison.noise.scores`); the matrices are kept per size for the process (a
row of 10,000 test examples and 1,000 resamples: 80 MB). The first ``k`` rows of ``W`` are themselves a valid set of
``k`` resamples, so metrics that must be recomputed one resample at a time use the first
:data:`N_BOOT_SLOW` rows of the same draws and stay joint with the rest.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

#: Resamples of the noise model (every vectorised statistic).
N_BOOT = 1000
#: Resamples of a metric recomputed one resample at a time (equal-mass and debiased ECEs,
#: ECE-sweep, smooth ECE) and of a temperature chosen again on each resample.
N_BOOT_SLOW = 200


def _count(name: str, v, least: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
        raise ValueError(f"{name} must be an integer >= {least}; got {v!r}")
    return int(v)


@functools.lru_cache(maxsize=16)
def weights(n: int, n_boot: int = N_BOOT, seed: int = 0, stream: str = "test") -> np.ndarray:
    """``(n_boot, n)`` multiplicities (float64, exact small integers): row ``b`` counts how often each of ``n``
    examples is drawn in resample ``b`` (``n`` draws with replacement). Deterministic in
    ``(n, n_boot, seed, stream)``; ``stream`` separates the test set's draws from the
    validation set's. Read-only (shared by every run of the process)."""
    n, n_boot = _count("n", n), _count("n_boot", n_boot)
    rng = np.random.default_rng([_count("seed", seed, 0), n, sum(map(ord, stream))])
    idx = rng.integers(0, n, size=(n_boot, n))
    flat = (idx + n * np.arange(n_boot)[:, None]).ravel()
    w = np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)
    w.flags.writeable = False
    _MADE[id(w)] = (n, n_boot, seed, stream)
    weakref.finalize(w, _MADE.pop, id(w), None)       # forgotten when the cache lets it go
    return w


def indices(w_row: np.ndarray) -> np.ndarray:
    """The example indices of one resample (a row of :func:`weights`), each repeated as
    often as drawn: what the plain loop feeds a metric."""
    return np.repeat(np.arange(w_row.size), w_row.astype(np.int64))


@functools.lru_cache(maxsize=64)
def seed_draws(n_seeds: int, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """``(n_boot, n_seeds)`` seed positions drawn with replacement, one row per resample
    (all zeros with one seed: nothing to resample). Deterministic in its arguments, so
    methods with the same number of seeds get the same draws."""
    n_seeds, n_boot = _count("n_seeds", n_seeds), _count("n_boot", n_boot)
    if n_seeds == 1:
        out = np.zeros((n_boot, 1), dtype=np.intp)
    else:
        out = np.random.default_rng([_count("seed", seed, 0), 7919, n_seeds]).integers(0, n_seeds,
                                                                                      size=(n_boot, n_seeds))
    out.flags.writeable = False
    return out


def over_seeds(per_seed: np.ndarray, seed: int = 0) -> np.ndarray:
    """The two-level resamples of a mean over seeds: ``per_seed`` is ``(S, B)``, each seed's
    metric on the ``B`` example resamples; resample ``b`` averages the seeds drawn for it
    (:func:`seed_draws`), each scored on that resample's examples."""
    per_seed = np.asarray(per_seed, dtype=np.float64)
    if per_seed.ndim != 2 or per_seed.shape[0] < 1:
        raise ValueError(f"per_seed must be a (seeds, resamples) array; got shape {per_seed.shape}")
    s, b = per_seed.shape
    draws = seed_draws(s, b, seed)
    return per_seed[draws, np.arange(b)[:, None]].mean(axis=1)


@functools.lru_cache(maxsize=4)
def _transposed(n: int, n_boot: int, seed: int, stream: str) -> np.ndarray:
    t = np.ascontiguousarray(weights(n, n_boot, seed, stream).T)
    t.flags.writeable = False
    return t


def totals(w: np.ndarray) -> np.ndarray:
    """``w.sum(axis=1)`` in float64 (each resample's size), kept once per whole matrix of
    :func:`weights`."""
    key = _key(w)
    return _totals(*key) if key is not None else w.sum(axis=1, dtype=np.float64)


@functools.lru_cache(maxsize=4)
def _totals(n: int, n_boot: int, seed: int, stream: str) -> np.ndarray:
    t = weights(n, n_boot, seed, stream).sum(axis=1, dtype=np.float64)
    t.flags.writeable = False
    return t


def _key(w: np.ndarray):
    """The arguments of :func:`weights` that made ``w`` (the whole matrix, or a view of all of
    it), or None (its first rows, or any other matrix). By identity, so it never calls
    :func:`weights` again: with more matrices made than its cache holds, calling it for older
    ones pushed the newer out of the cache and they were no longer recognised."""
    full = w if w.base is None else w.base
    key = _MADE.get(id(full))
    return key if key is not None and w.shape == full.shape else None


#: ``id`` of each matrix :func:`weights` made and still alive -> its arguments.
_MADE: dict = {}


def matmul(w: np.ndarray, terms) -> np.ndarray:
    """``w @ terms`` for a weight matrix and a dense or sparse ``(n, k)`` (or ``(n,)``) array of
    per-example terms, in float64. A sparse product with a whole matrix of :func:`weights`
    reads its transposed copy, kept once per matrix (scipy's sparse product wants the dense
    side in row order: transposing on every call copied 80 MB); with numba installed (the
    ``fast`` extra) that copy is kept as bytes and the product compiled
    (:func:`_sparse_rows`): the same sums, bit for bit, reading an eighth of the memory."""
    from scipy import sparse

    wd = w if w.dtype == np.float64 else np.asarray(w, dtype=np.float64)
    if sparse.issparse(terms):
        key = _key(wd)
        # terms.T of a CSR matrix is CSC: the product runs over the examples in order, each
        # example's row of weights read once, and adds each output's terms in the same order
        # as a CSR product (ascending examples): the same sums, without the conversion
        t = terms if terms.format == "csr" else terms.tocsr()
        product = _compiled() if key is not None else None
        counts = _counts(*key) if product is not None else None
        if counts is not None:
            out = np.zeros((t.shape[1], counts.shape[1]))
            product(t.indptr, t.indices, np.asarray(t.data, dtype=np.float64), counts, out)
            return out.T
        wt = _transposed(*key) if key is not None else np.ascontiguousarray(wd.T)
        return np.asarray(t.T @ wt).T
    return wd @ np.asarray(terms, dtype=np.float64)


def _sparse_rows(indptr, indices, data, counts, out):
    """``out += terms.T @ counts`` for CSR ``terms`` (``indptr, indices, data``) and ``counts``
    ``(n, B)``: for each example ``j`` in order, each of its terms ``a`` in column ``i`` adds
    ``a * counts[j]`` to ``out[i]`` - the loop of scipy's ``csc_matvecs`` on ``terms.T``, one
    multiplication and one addition per element in the same order, so the same float64 sums.
    ``counts`` may hold the multiplicities as bytes (whole numbers: exact in float64)."""
    nv = counts.shape[1]
    for j in range(indptr.size - 1):
        for ii in range(indptr[j], indptr[j + 1]):
            i, a = indices[ii], data[ii]
            for b in range(nv):
                out[i, b] += a * counts[j, b]


@functools.cache
def _compiled():
    """:func:`_sparse_rows` compiled by numba (no fast-math: no fused multiply-add, so its
    sums are scipy's), or None without numba; decided once per process."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True)(_sparse_rows)


@functools.lru_cache(maxsize=4)
def _counts(n: int, n_boot: int, seed: int, stream: str) -> np.ndarray | None:
    """The transposed multiplicities of :func:`weights` as bytes ``(n, n_boot)``, or None
    when one exceeds 255 (a resample drawing one example 256 times: then the float64 copy)."""
    w = weights(n, n_boot, seed, stream)
    if w.max() > 255:
        return None
    t = np.ascontiguousarray(w.T.astype(np.uint8))
    t.flags.writeable = False
    return t
