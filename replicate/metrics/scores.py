"""Scores that need no binning: the proper scores (negative log-likelihood, Brier score,
root Brier score and its lower bound at a given error), the top-1 error, the high-confidence
set S99 of Mukhoti et al. (2020, Table 6) and the out-of-distribution AUROC of predictive
entropy. ``_brier`` is the Brier score on checked inputs, shared with ``evaluate``.
"""
from __future__ import annotations

import numpy as np
from scipy.special import entr
from scipy.stats import rankdata

from .. import binning as _b
from ._inputs import _log_softmax, _logits, _prepare, _probs, _top, documented

__all__ = ["nll", "brier", "root_brier_score", "root_brier_lower_bound", "error_rate", "s99", "ood_auroc"]


@documented()
def nll(logits, labels) -> float:
    """Mean negative log-likelihood ``-mean_i log softmax(z_i)[y_i]`` from logits (float64
    log-softmax, so no probability ever underflows to log 0).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import nll
    >>> round(nll(np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([0, 0])), 4)
    0.7201
    """
    z = _logits(logits, where="nll")
    y = _b.as_labels(labels, z.shape[0], z.shape[1])
    lp = _log_softmax(z)
    return float(-lp[np.arange(y.size), y].mean())


@documented()
def brier(probs, labels, *, is_probs: bool = True, validate: bool = True) -> float:
    """Multiclass Brier score (Brier 1950), as in the papers: squared error between the
    probability vector and the one-hot label, summed over the K classes and averaged over
    samples, ``mean_i sum_k (p_ik - 1[y_i = k])^2`` (range [0, 2]).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import brier
    >>> round(brier(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.4933
    """
    p, y = _prepare(probs, labels, is_probs, validate)
    return _brier(p, y)


def _brier(p, y):
    rows = max(1, _b._CHUNK // p.shape[1])
    sq = 0.0
    for a in range(0, p.shape[0], rows):
        blk = p[a:a + rows].astype(np.float64)
        sq += float(np.einsum("ij,ij->", blk, blk))
    pt = p[np.arange(y.size), y].astype(np.float64)
    return float((sq - 2.0 * pt.sum()) / y.size + 1.0)


@documented()
def root_brier_score(probs, labels, *, is_probs: bool = True, validate: bool = True) -> float:
    """Root Brier score, RBS = ``sqrt(mean_i sum_k (p_ik - 1[y_i = k])^2)``, the square root
    of :func:`brier` (Gruber & Buettner 2022, "Better uncertainty calibration via proper
    scores for classification and beyond"): an upper bound of the L2 canonical calibration
    error ``sqrt(E ||E[Y | p] - p||^2)`` that needs no binning and no kernel. This is the
    plug-in (sample mean) estimator; Tao et al. (2023) report RBS in their Table 11. No
    library offers it (it is one line on top of the Brier score).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import root_brier_score
    >>> round(root_brier_score(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.7024
    """
    return float(np.sqrt(brier(probs, labels, is_probs=is_probs, validate=validate)))


@documented(error=("float", "A top-1 error rate as a fraction in [0, 1] (not a percentage)."))
def root_brier_lower_bound(error) -> float:
    """The smallest RBS any model with top-1 error rate ``error`` can have: ``sqrt(error / 2)``.

    A misclassified sample has some class ``c != y`` with ``p_c >= p_y``, so its squared error
    is at least ``(1 - p_y)^2 + p_c^2 >= 1/2`` (equality at ``p_y = p_c = 1/2``); correct
    samples contribute at least 0. Used to test whether printed RBS values can belong to
    models of a printed error rate.

    Example
    -------
    >>> from replicate.metrics import root_brier_lower_bound
    >>> root_brier_lower_bound(0.08)
    0.2
    """
    e = float(error)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"error must be a fraction in [0, 1]; got {error!r}")
    return float(np.sqrt(e / 2.0))


@documented()
def error_rate(probs, labels, *, is_probs: bool = True, validate: bool = True) -> float:
    """Top-1 error, the fraction of samples whose argmax differs from the label.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import error_rate
    >>> round(error_rate(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.3333
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    return float(1.0 - hit.mean())


@documented(threshold=("float", "The confidence from which a sample is in S99, in (0, 1] (0.99, the paper's)."))
def s99(probs, labels, threshold: float = 0.99, *, is_probs: bool = True,
        validate: bool = True) -> tuple[float, float]:
    """Mukhoti et al. (2020), Table 6: the share of samples with confidence >= ``threshold``
    (the set S99) and the accuracy on S99 (NaN when S99 is empty).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import s99
    >>> s99(np.array([[0.995, 0.005], [0.6, 0.4]]), np.array([0, 1]))
    (0.5, 1.0)
    """
    if not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
        raise ValueError(f"threshold must be a number in (0, 1]; got {threshold!r}")
    conf, hit = _top(probs, labels, is_probs, validate)
    sel = conf >= threshold
    return float(sel.mean()), (float(hit[sel].mean()) if sel.any() else float("nan"))


def _entropy(p):
    rows = max(1, _b._CHUNK // p.shape[1])
    return np.concatenate([entr(p[a:a + rows].astype(np.float64)).sum(axis=1)
                           for a in range(0, p.shape[0], rows)])


@documented(probs_in=("array_like or torch.Tensor", "Probabilities of the in-distribution samples (the "
                                                    "negatives), shape ``(N_in, K)``; logits with ``is_probs=False``."),
            probs_out=("array_like or torch.Tensor", "Probabilities of the out-of-distribution samples (the "
                                                     "positives), shape ``(N_out, K)`` with the same K."))
def ood_auroc(probs_in, probs_out, *, is_probs: bool = True, validate: bool = True) -> float:
    """AUROC of predictive entropy ``-sum_k p_k log p_k`` for telling out-of-distribution
    samples (positives) from in-distribution ones, i.e. P(H_out > H_in) + P(H_out = H_in)/2
    (Mann-Whitney with mid-ranks for ties).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import ood_auroc
    >>> ood_auroc(np.array([[0.9, 0.1], [0.8, 0.2]]), np.array([[0.5, 0.5], [0.6, 0.4]]))
    1.0
    """
    get = (lambda x, nm: _b.as_probs(x, nm, validate)) if is_probs else \
        (lambda x, nm: _probs(x))
    pi, po = get(probs_in, "probs_in"), get(probs_out, "probs_out")
    if pi.shape[1] != po.shape[1]:
        raise ValueError(f"probs_in and probs_out must have the same number of classes K; "
                         f"got {pi.shape[1]} and {po.shape[1]}")
    h_in, h_out = _entropy(pi), _entropy(po)
    r = rankdata(np.concatenate([h_in, h_out]))[h_in.size:]
    n0, n1 = h_in.size, h_out.size
    return float((r.sum() - n1 * (n1 + 1) / 2.0) / (n0 * n1))
