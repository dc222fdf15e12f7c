"""Resampled metrics computed once: per scored run, metric and draws, in any process.

A run's metric on the resamples of the noise model (:func:`replicate.comparison.noise.scores.replicated`)
depends only on its scored test set (probabilities, labels, log-probabilities of the labels
and, for the AUROC, its out-of-distribution probabilities), the metric and the weight matrix
(:func:`replicate.comparison.noise.resampling.weights`). Chapters share runs - the
cross-entropy baseline of CIFAR-10 ResNet-50 is in five of them - and ``replicate claims``
builds them in two processes at once, so :func:`replicated` keeps each result in this
process and on disk (:func:`replicate.claims.cache.shared`, keyed by a hash of those inputs
and the package's code): whichever chapter asks first computes it, the others read it.
:func:`temperature` keeps the temperature a run's validation logits choose on a grid the
same way (every chapter's post-T column and the noise model's "after TS" fit it), and
:func:`focal_temperature` the ``(T, gamma_ev)`` of focal temperature scaling (the
leaderboard's and the noise model's "after FTS"; runs whose validation logits are identical,
such as AdaFocal's two update rules at ``cpu``, are fitted once).
"""
from __future__ import annotations

import hashlib

import numpy as np

from . import resampling, scores

_MEMO: dict = {}


def fingerprint(s: scores.Scored, metric: str, ood_set: str = "") -> str:
    """A hash of everything ``metric`` of ``s`` reads: its probabilities, labels and
    log-probabilities of the labels, and its out-of-distribution probabilities of ``ood_set``
    for the AUROC."""
    key = ("fingerprint", ood_set if metric == "auroc" else "")
    if key not in s._terms:
        arrays = [s.probs, s.labels, s.logp_y] + ([s.ood[ood_set]] if metric == "auroc" and ood_set in s.ood else [])
        s._terms[key] = digest(*arrays)
    return s._terms[key]


def replicated(s: scores.Scored, metric: str, w: np.ndarray, ood_set: str = "") -> np.ndarray:
    """:func:`replicate.comparison.noise.scores.replicated`, computed once per scored test set,
    metric and weight matrix and read back after (a copy). Weights that are not a whole
    matrix of :func:`~replicate.comparison.noise.resampling.weights` are not kept."""
    made = resampling._key(np.asarray(w))
    if made is None:
        return scores.replicated(s, metric, w, ood_set)
    sig = (fingerprint(s, metric, ood_set), scores.check_metric(metric), ood_set, made)
    return _once("draws", sig, lambda: scores.replicated(s, metric, w, ood_set)).copy()


def _once(kind: str, sig: tuple, build):
    """``build()`` kept in this process and on disk under ``draws-<code version>/`` by ``kind``
    and ``sig`` (:func:`replicate.claims.cache.shared`: computed by one process, read by the
    others): what every function of this module keeps."""
    if sig not in _MEMO:
        from ...claims import cache

        path = cache.folder() / f"draws-{cache.code_version()}" / f"{cache.name(kind, sig)}.pkl"
        _MEMO[sig] = cache.shared(path, build)
    return _MEMO[sig]


def digest(*arrays) -> str:
    """SHA-256 (hex) of ``arrays``: each one's dtype, shape and bytes in order, so that two
    arrays with the same bytes but another dtype or shape differ."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def temperature(val_logits, val_labels, selector: str = "ece", grid=None, n_bins: int = 15) -> float:
    """The ``T`` of :func:`replicate.posthoc.fit_temperature` (``method="grid"``, ``metric=selector``,
    ``grid`` default :data:`replicate.posthoc.TS_GRID`, ``n_bins``), computed once per
    validation set, selector, grid and bin count and read back after."""
    from ... import posthoc

    grid = np.asarray(posthoc.TS_GRID if grid is None else grid, dtype=np.float64)

    def fit():
        return float(posthoc.fit_temperature(val_logits, val_labels, method="grid", metric=selector, grid=grid,
                                             n_bins=n_bins, warn=False).params["T"])
    return _fitted_once("temperature", val_logits, val_labels, grid, fit, selector, int(n_bins))


def focal_temperature(val_logits, val_labels, selector: str = "ece", grid=None) -> tuple[float, float]:
    """``(T, gamma_ev)`` of :func:`replicate.posthoc.fit_focal_temperature` (``metric=selector``
    over the paper's gammas x ``grid``, default :data:`replicate.posthoc.TS_GRID`), computed
    once per validation set, selector and grid and read back after."""
    from ... import posthoc

    grid = np.asarray(posthoc.TS_GRID if grid is None else grid, dtype=np.float64)

    def fit():
        f = posthoc.fit_focal_temperature(val_logits, val_labels, metric=selector, temperatures=grid, warn=False)
        return float(f.T), float(f.gamma)
    return _fitted_once("focal_temperature", val_logits, val_labels, grid, fit, selector)


def _fitted_once(kind: str, val_logits, val_labels, grid: np.ndarray, fit, *settings):
    """``fit()`` of a validation set kept by :func:`_once` under ``kind``, keyed by what the
    fit reads: the logits (as float64), the labels, the ``grid`` and the fit's ``settings``.
    Labels that are not integers are not kept: the fit says what is wrong with them."""
    z, y = np.asarray(val_logits, dtype=np.float64), np.asarray(val_labels)
    if y.dtype.kind not in "iu":
        return fit()
    return _once(kind, (kind, digest(z, y.astype(np.int64), grid), *settings), fit)
