"""The inputs every metric starts from, shared by the modules of :mod:`replicate.metrics`.

Logits and labels are checked by :mod:`replicate.binning` (shapes, label range, finite
values); :func:`probs_from_logits` is the float64 softmax the ``is_probs=False`` option
uses; ``_prepare`` returns checked probabilities and labels, ``_top`` the top-label
confidence and correctness of each sample. Imports only :mod:`replicate.binning`.
"""
from __future__ import annotations

import numpy as np

from .. import binning as _b

__all__ = ["probs_from_logits"]


def _logits(x, name: str = "logits") -> np.ndarray:
    a = _b.as_matrix(x, name)
    _b.check_finite(a, name)
    return a


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)  # always a fresh float64 copy
    z -= z.max(axis=1, keepdims=True)
    z -= np.log(np.exp(z).sum(axis=1, keepdims=True))
    return z


def probs_from_logits(logits, temperature: float = 1.0) -> np.ndarray:
    """Float64 softmax of ``logits / temperature`` (max-shifted, so it never overflows).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import probs_from_logits
    >>> probs_from_logits(np.array([[2.0, 0.0]]), temperature=2.0).round(4)
    array([[0.7311, 0.2689]])
    """
    if not (isinstance(temperature, (int, float, np.floating)) and np.isfinite(temperature)
            and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0; got {temperature!r}")
    z = _logits(logits).astype(np.float64) / float(temperature)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _prepare(probs, labels, is_probs: bool, validate: bool, name: str = "probs"):
    p = _b.as_probs(probs, name, validate) if is_probs else probs_from_logits(probs)
    return p, _b.as_labels(labels, p.shape[0], p.shape[1])


def _top(probs, labels, is_probs, validate):
    p, y = _prepare(probs, labels, is_probs, validate)
    conf, pred = _b.top_label(p)
    return conf, pred == y
