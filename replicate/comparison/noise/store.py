"""Resampled metrics computed once: per scored run, metric and draws, in any process.

A run's metric on the resamples of the noise model (:func:`replicate.comparison.noise.scores.replicated`)
depends only on its scored test set (probabilities, labels, log-probabilities of the labels
and, for the AUROC, its out-of-distribution probabilities), the metric and the weight matrix
(:func:`replicate.comparison.noise.resampling.weights`). Chapters share runs - the
cross-entropy baseline of CIFAR-10 ResNet-50 is in five of them - and ``replicate claims``
builds them in two processes at once, so :func:`replicated` keeps each result in this
process and on disk (:func:`replicate.claims.cache.shared`, keyed by a hash of those inputs
and the package's code): whichever chapter asks first computes it, the others read it.
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
        h = hashlib.sha256()
        arrays = [s.probs, s.labels, s.logp_y] + ([s.ood[ood_set]] if metric == "auroc" and ood_set in s.ood else [])
        for a in arrays:
            a = np.ascontiguousarray(a)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        s._terms[key] = h.hexdigest()
    return s._terms[key]


def replicated(s: scores.Scored, metric: str, w: np.ndarray, ood_set: str = "") -> np.ndarray:
    """:func:`replicate.comparison.noise.scores.replicated`, computed once per scored test set,
    metric and weight matrix and read back after (a copy). Weights that are not a whole
    matrix of :func:`~replicate.comparison.noise.resampling.weights` are not kept."""
    made = resampling._key(np.asarray(w))
    if made is None:
        return scores.replicated(s, metric, w, ood_set)
    sig = (fingerprint(s, metric, ood_set), scores.check_metric(metric), ood_set, made)
    if sig not in _MEMO:
        from ...claims import cache

        path = cache.folder() / f"draws-{cache.code_version()}" / f"{cache.name('draws', sig)}.pkl"
        _MEMO[sig] = cache.shared(path, lambda: scores.replicated(s, metric, w, ood_set))
    return _MEMO[sig].copy()
