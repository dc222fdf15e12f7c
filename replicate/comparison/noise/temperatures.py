"""The noise of a chosen temperature: the validation examples resampled, T chosen again.

A run's optimal temperature is the grid value (the papers' 0.1..10.0) that minimises a
validation metric. Its noise is that of the validation set: :func:`replicated` draws the
validation examples with replacement (the rows of a weight matrix,
:func:`replicate.comparison.noise.resampling.weights` of stream ``"val"``) and chooses T again on each
resample. For the ECE and the NLL this is vectorised over the grid and the resamples: every
example's top-label confidence and log-loss at every grid T are computed once, and each
resample's ECE (its bins' weighted residual sums) or NLL at every T is one matrix product;
the first grid value within a relative 1e-12 of the minimum wins, as in
:func:`replicate.posthoc.fit_temperature`. The equal-mass ECE (AdaECE) is refitted by
:func:`replicate.posthoc.fit_temperature` on each of the first
:data:`~replicate.comparison.noise.resampling.N_BOOT_SLOW` resamples.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ... import binning as _b
from ... import posthoc
from ...posthoc.fts_grid import class_sum
from .resampling import N_BOOT_SLOW, indices, matmul
from .scores import N_BINS

SELECTORS = ("ece", "nll", "adaece")


def _per_temperature(z: np.ndarray, y: np.ndarray, grid: np.ndarray):
    """Top-label confidence and per-example log-loss of ``softmax(z / T)``, ``(nT, n)`` each."""
    zs = z - z.max(axis=1, keepdims=True)
    zy = zs[np.arange(len(zs)), y]
    zs = np.ascontiguousarray(zs.T)                        # class-major: the same row sums, faster
    conf = np.empty((len(grid), zs.shape[1]))
    nll = np.empty_like(conf)
    for i, t in enumerate(grid):
        s = class_sum(np.exp(zs / t))
        conf[i], nll[i] = 1.0 / s, np.log(s) - zy / t
    return conf, nll


def _first_min(scores: np.ndarray) -> np.ndarray:
    """Per row, the index of the first value within a relative 1e-12 of the row's minimum."""
    best = scores.min(axis=1, keepdims=True)
    tol = posthoc._TIE_RTOL * np.maximum(1.0, np.abs(best))
    return np.argmax(scores <= best + tol, axis=1)


def replicated(val_logits, val_labels, w: np.ndarray, selector: str = "ece", grid=None) -> np.ndarray:
    """The temperature chosen by validation ``selector`` on each resample (row) of ``w``
    (``"adaece"``: the first :data:`N_BOOT_SLOW` rows only)."""
    if selector not in SELECTORS:
        raise ValueError(f"selector must be one of {', '.join(SELECTORS)}; got {selector!r}")
    z = np.asarray(val_logits, dtype=np.float64)
    y = np.asarray(val_labels, dtype=np.int64)
    grid = np.asarray(posthoc.TS_GRID if grid is None else grid, dtype=np.float64)
    w = np.asarray(w)
    if w.ndim != 2 or w.shape[1] != len(y):
        raise ValueError(f"w must be a (resamples, {len(y)}) weight matrix; got shape {w.shape}")
    if selector == "adaece":
        return np.array([posthoc.fit_temperature(z[i], y[i], method="grid", metric="adaece", grid=grid,
                                                 warn=False).params["T"]
                         for i in map(indices, w[:N_BOOT_SLOW])])
    n, nt = len(y), len(grid)
    conf, nll = _per_temperature(z, y, grid)
    total = w.sum(axis=1, dtype=np.float64)[:, None]
    if selector == "nll":
        return grid[_first_min(matmul(w, nll.T) / total)]
    hit = (z.argmax(axis=1) == y).astype(np.float64)
    b = _b.bin_index(conf, _b.width_edges(N_BINS), "right", uniform=True)             # (nT, n)
    cols = (b + N_BINS * np.arange(nt)[:, None]).ravel()
    terms = sparse.csr_matrix(((hit[None, :] - conf).ravel(), (np.tile(np.arange(n), nt), cols)),
                              shape=(n, nt * N_BINS))
    out = np.empty(w.shape[0], dtype=np.float64)
    for a in range(0, w.shape[0], 100):
        sums = matmul(w[a:a + 100], terms)                                             # (rows, nT * bins)
        ece = np.abs(sums).reshape(-1, nt, N_BINS).sum(axis=2) / total[a:a + 100]
        out[a:a + 100] = grid[_first_min(ece)]
    return out


def chosen(val_logits, val_labels, selector: str = "ece", grid=None) -> float:
    """The temperature :func:`replicate.posthoc.fit_temperature` chooses (grid, by ``selector``),
    fitted once per validation set (:func:`replicate.comparison.noise.store.temperature`)."""
    from .store import temperature

    return temperature(val_logits, val_labels, selector, grid)
