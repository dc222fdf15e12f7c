"""Calibration and accuracy metrics of the five papers, on one float64 binning core.

Inputs are numpy arrays or torch tensors: probabilities ``probs`` of shape (N, K) and
integer ``labels`` of shape (N,). Results are Python floats, as fractions (the book
prints percentages), whatever the input; :func:`probs_from_logits` returns the container
of its input (numpy in, numpy out; tensor in, tensor out). Binned metrics use
:mod:`replicate.binning`: ``n_bins`` equal-width
(``binning="width"``) or equal-mass (``"mass"``) bins, ``closed="right"`` meaning
intervals (lower, upper] with 0 in the first bin (Guo et al. 2017; Mukhoti et al. 2020,
Eq. 1), ``closed="left"`` meaning [lower, upper) with 1 in the last bin (torchmetrics).

Keyword-only options shared by the functions that take probabilities:

* ``is_probs=True``: with ``False`` the first argument holds logits and is turned into
  float64 probabilities by :func:`probs_from_logits`; probabilities given there (every
  entry in [0, 1], rows summing to 1 within 1e-6) raise a ValueError, as they do in every
  function that takes logits (:func:`nll`, :func:`evaluate`, :func:`probs_from_logits`);
* ``validate=True``: check that probabilities are finite, in [0, 1] and that rows sum to
  1 within 1e-3 (float32 softmax); ``False`` skips these O(NK) checks (shapes and label
  range are always checked).

Top-label metrics use the confidence ``max_k p_k`` and the prediction ``argmax_k p_k``
(ties go to the lowest class index, as in numpy and torch).

``paper_compat=True`` (``adaptive_ece``, ``classwise_ece``) reproduces the released code of
Mukhoti et al. (torrvision/focal_calibration, ``Metrics/metrics.py``), which AdaFocal, DFL
and FCL reuse, so that numbers can be matched to the papers' code exactly (the book's page "The authors' code").

The package holds one module per concept; everything public is re-exported here, so
``replicate.metrics.NAME`` is the name to use:

* :mod:`replicate.metrics.binned`: reliability bins and the binned errors (ECE, AdaECE,
  classwise ECE, MCE, RMS and debiased L2 errors, ECE_sweep);
* :mod:`replicate.metrics.smooth`: the smooth ECE of Blasiok & Nakkiran (2023);
* :mod:`replicate.metrics.scores`: NLL, Brier and root Brier scores, error rate, S99,
  out-of-distribution AUROC;
* ``replicate.metrics._inputs``: the input checks and the float64 (log-)softmax the others
  share (:func:`probs_from_logits`);
* this ``__init__``: :func:`evaluate`, the per-epoch metrics in one pass.

Imports point one way: ``__init__`` imports the modules, which import ``_inputs`` (and
:mod:`replicate.binning`), never the package.
"""
from __future__ import annotations

import numpy as np

from .. import binning as _b
from ._inputs import _log_softmax, _logits, documented, probs_from_logits
from .binned import (ReliabilityBins, _ece_from_sums, _sums, adaptive_ece, classwise_ece, debiased_ece, ece,
                     ece_sweep, mce, reliability_bins, rms_calibration_error)
from .scores import _brier, brier, error_rate, nll, ood_auroc, root_brier_lower_bound, root_brier_score, s99
from .smooth import smooth_ece

__all__ = [
    "ReliabilityBins", "probs_from_logits", "reliability_bins", "ece", "adaptive_ece",
    "classwise_ece", "mce", "rms_calibration_error", "nll", "brier", "root_brier_score",
    "root_brier_lower_bound", "error_rate",
    "smooth_ece", "debiased_ece", "ece_sweep", "s99", "ood_auroc", "evaluate",
]


# ----------------------------------------------------------------------------- per epoch
@documented()
def evaluate(logits, labels, n_bins: int = 15) -> dict:
    """The cheap metrics in one pass over ``softmax(logits)``: ``error``, ``nll``, ``ece``
    (equal width), ``adaece`` (equal mass), ``classwise_ece``, ``mce`` (equal width) and
    ``brier``, all fractions, with the defaults of the functions of the same names.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import evaluate
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> {k: round(v, 4) for k, v in evaluate(z, y).items()}
    {'error': 0.3333, 'nll': 0.6882, 'ece': 0.3353, 'adaece': 0.3353, 'classwise_ece': 0.262, 'mce': 0.6354, 'brier': 0.4017}
    """
    z = _logits(logits, where="evaluate")
    y = _b.as_labels(labels, z.shape[0], z.shape[1])
    n_bins = _b.check_n_bins(n_bins)
    lp = _log_softmax(z)
    p = np.exp(lp)
    conf, pred = _b.top_label(p)
    hit = pred == y
    n = y.size
    _, c, sc, sh = _sums(conf, hit, n_bins, "width", "right")
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(sh - sc) / c
    _, cm, scm, shm = _sums(conf, hit, n_bins, "mass", "right")
    kc, ks, kh = _b.classwise_sums(p, y, _b.width_edges(n_bins), "right")
    return {
        "error": float(1.0 - hit.mean()),
        "nll": float(-lp[np.arange(n), y].mean()),
        "ece": _ece_from_sums(c, sc, sh, n),
        "adaece": _ece_from_sums(cm, scm, shm, n),
        "classwise_ece": float(np.abs(kh - ks).sum(axis=1).mean() / n),
        "mce": float(np.nanmax(gap)),
        "brier": _brier(p, y),
    }
