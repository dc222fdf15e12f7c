"""Reliability bins and the binned calibration errors: :class:`ReliabilityBins` and
:func:`reliability_bins`, ECE, AdaECE, classwise ECE, MCE, the RMS and debiased L2 errors
and ECE_sweep, all on the float64 binning core of :mod:`replicate.binning`.

The bins (``n_bins``, ``binning``, ``closed``), the keyword options ``is_probs`` and
``validate`` and ``paper_compat`` are described in the docstring of the package,
:mod:`replicate.metrics` (the "module docstring" the functions here refer to).
``_sums`` (bin counts and sums) and ``_ece_from_sums`` are shared with
:func:`replicate.metrics.evaluate`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import binning as _b
from ._inputs import _prepare, _top, documented

__all__ = [
    "ReliabilityBins", "reliability_bins", "ece", "adaptive_ece", "classwise_ece", "mce",
    "rms_calibration_error", "debiased_ece", "ece_sweep",
]


# ----------------------------------------------------------------------------- bins
def _edges(conf, n_bins, binning):
    if _b.check_choice("binning", binning, _b.BINNINGS) == "width":
        return _b.width_edges(n_bins)
    return _b.mass_edges(conf, n_bins)


def _sums(conf, hit, n_bins, binning, closed):
    e = _edges(conf, n_bins, binning)
    idx = _b.bin_index(conf, e, closed, uniform=binning == "width")
    return (e, *_b.bin_sums(idx, e.size - 1, conf, hit))


# ----------------------------------------------------------------------------- reliability
@dataclass(frozen=True)
class ReliabilityBins:
    """Per-bin statistics of a reliability diagram (Guo et al. 2017, Sec. 2).

    ``edges`` has n_bins + 1 entries; ``count`` is the number of samples per bin;
    ``mean_confidence`` and ``accuracy`` are bin means; ``gap = accuracy - mean_confidence``
    (negative: over-confident). The three means are NaN for empty bins.

    Parameters
    ----------
    edges : numpy.ndarray
        The ``n_bins + 1`` bin edges, increasing, from 0 to 1 (equal width) or the
        confidences' quantiles (equal mass).
    count : numpy.ndarray
        The number of samples in each bin, shape ``(n_bins,)``.
    mean_confidence : numpy.ndarray
        The mean top-label confidence of each bin, in [0, 1]; NaN for an empty bin.
    accuracy : numpy.ndarray
        The share of correct predictions in each bin, in [0, 1]; NaN for an empty bin.
    gap : numpy.ndarray
        ``accuracy - mean_confidence`` of each bin (negative: over-confident); NaN for an
        empty bin.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import reliability_bins
    >>> bins = reliability_bins(np.array([[0.8, 0.2], [0.3, 0.7]]), np.array([0, 0]), n_bins=2)
    >>> bins.count.tolist(), bins.accuracy.tolist()
    ([0, 2], [nan, 0.5])
    """

    edges: np.ndarray
    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray
    gap: np.ndarray

    @property
    def ece(self) -> float:
        """Count-weighted mean of ``|gap|`` (Mukhoti et al. 2020, Eq. 1)."""
        w = self.count / self.count.sum()
        return float(np.nansum(w * np.abs(self.gap)))

    def to_frame(self):
        """pandas DataFrame, one row per bin: lower, upper, count, confidence, accuracy, gap."""
        import pandas as pd

        return pd.DataFrame({
            "lower": self.edges[:-1], "upper": self.edges[1:], "count": self.count,
            "mean_confidence": self.mean_confidence, "accuracy": self.accuracy, "gap": self.gap,
        })


@documented()
def reliability_bins(probs, labels, n_bins: int = 15, binning: str = "width",
                     closed: str = "right", *, is_probs: bool = True,
                     validate: bool = True) -> ReliabilityBins:
    """Top-label reliability statistics per bin (see the module docstring for the bins).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import reliability_bins
    >>> reliability_bins(np.array([[0.8, 0.2], [0.3, 0.7]]), np.array([0, 0]), n_bins=2).gap.tolist()
    [nan, -0.25]
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    e, c, sc, sh = _sums(conf, hit, n_bins, binning, closed)
    with np.errstate(invalid="ignore", divide="ignore"):
        mc, acc = sc / c, sh / c
    return ReliabilityBins(e, c, mc, acc, acc - mc)


# ----------------------------------------------------------------------------- binned errors
def _ece_from_sums(c, sc, sh, n):
    return float(np.abs(sh - sc).sum() / n)


@documented()
def ece(probs, labels, n_bins: int = 15, binning: str = "width", closed: str = "right", *,
        is_probs: bool = True, validate: bool = True) -> float:
    """Expected calibration error, ``sum_b |B_b|/N |A_b - C_b|`` (Mukhoti et al. 2020, Eq. 1;
    Naeini et al. 2015; Guo et al. 2017), computed as ``sum_b |sum_hits_b - sum_conf_b| / N``.

    Equal-width edges are the float64 values ``b / n_bins``. The released code of the
    papers compares float32 confidences with float32 ``torch.linspace`` edges, so a float32
    confidence exactly equal to a float32-rounded edge may sit one bin away from here;
    with the default (lower, upper] it never drops a sample (confidence >= 1/K > 0).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import ece
    >>> round(ece(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.4
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    _, c, sc, sh = _sums(conf, hit, n_bins, binning, closed)
    return _ece_from_sums(c, sc, sh, conf.size)


@documented()
def adaptive_ece(probs, labels, n_bins: int = 15, paper_compat: bool = False, *,
                 is_probs: bool = True, validate: bool = True) -> float:
    """AdaECE (Mukhoti et al. 2020, Eq. 3): ECE over equal-mass bins.

    Default: ``ece(..., binning="mass")``, every sample in exactly one bin.

    ``paper_compat=True`` reproduces ``AdaptiveECELoss`` of the released code:

    1. edges ``np.interp(np.linspace(0, N, n_bins + 1), np.arange(N), np.sort(conf))``
       (the grid overshoots the last index, so edges are shifted by up to one rank and the
       last edge is the maximum); float32 input compares against float32-rounded edges, as
       torch does with a Python float;
    2. every bin is (lower, upper], the first included, so the samples equal to the minimum
       confidence fall in no bin and are dropped, while the weights stay ``|B_b| / N``;
    3. tied confidences make equal edges, i.e. empty bins, and the tied samples pile into
       one bin.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import adaptive_ece
    >>> round(adaptive_ece(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1]), n_bins=2), 4)
    0.2
    """
    p, y = _prepare(probs, labels, is_probs, validate)
    conf, pred = _b.top_label(p)
    hit = pred == y
    if not paper_compat:
        _, c, sc, sh = _sums(conf, hit, n_bins, "mass", "right")
        return _ece_from_sums(c, sc, sh, conf.size)
    e = _b.paper_adaptive_edges(conf.astype(p.dtype), n_bins)  # confidences at input dtype
    idx = _b.bin_index(conf, e, "right", drop_outside=True)
    c, sc, sh = _b.bin_sums(idx, n_bins, conf, hit)
    return _ece_from_sums(c, sc, sh, conf.size)


@documented()
def classwise_ece(probs, labels, n_bins: int = 15, paper_compat: bool = False, *,
                  closed: str = "right", is_probs: bool = True, validate: bool = True) -> float:
    """Classwise ECE (Kull et al. 2019; Mukhoti et al. 2020, Sec. 5): mean over classes k of
    the equal-width ECE of ``p_k`` against ``1[y = k]``.

    ``paper_compat=True`` reproduces ``ClasswiseECELoss`` of the released code:

    1. the number of classes is ``max(labels) + 1``: classes above the largest label
       present are left out of the mean;
    2. edges are ``torch.linspace(0, 1, n_bins + 1)`` in float32;
    3. every bin is (lower, upper], the first included, so probabilities exactly 0 (float32
       softmax underflow) fall in no bin and are dropped, weights staying ``|B_b| / N``.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import classwise_ece
    >>> round(classwise_ece(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.4
    """
    p, y = _prepare(probs, labels, is_probs, validate)
    n_bins = _b.check_n_bins(n_bins)
    _b.check_choice("closed", closed, _b.CLOSED)
    if paper_compat and closed != "right":
        raise ValueError("closed must be 'right' with paper_compat=True (the released code "
                         f"uses (lower, upper]); got {closed!r}")
    if paper_compat:
        k = int(y.max()) + 1
        c, sc, sh = _b.classwise_sums(p, y, _b.paper_width_edges(n_bins), "right",
                                      n_classes=k, drop_outside=True)
    else:
        c, sc, sh = _b.classwise_sums(p, y, _b.width_edges(n_bins), closed)
    return float(np.abs(sh - sc).sum(axis=1).mean() / p.shape[0])


@documented()
def mce(probs, labels, n_bins: int = 15, binning: str = "width", *, closed: str = "right",
        is_probs: bool = True, validate: bool = True) -> float:
    """Maximum calibration error ``max_b |A_b - C_b|`` over non-empty bins (Mukhoti Eq. 2).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import mce
    >>> round(mce(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.8
    """
    r = reliability_bins(probs, labels, n_bins, binning, closed, is_probs=is_probs,
                         validate=validate)
    return float(np.nanmax(np.abs(r.gap)))


@documented()
def rms_calibration_error(probs, labels, n_bins: int = 15, binning: str = "width", *,
                          closed: str = "right", is_probs: bool = True,
                          validate: bool = True) -> float:
    """Binned L2 calibration error ``sqrt(sum_b |B_b|/N (A_b - C_b)^2)`` (Nixon et al. 2019).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import rms_calibration_error
    >>> round(rms_calibration_error(np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]), np.array([0, 1, 1])), 4)
    0.4967
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    _, c, sc, sh = _sums(conf, hit, n_bins, binning, closed)
    nz = c > 0
    return float(np.sqrt(np.sum((sh[nz] - sc[nz]) ** 2 / c[nz]) / conf.size))


@documented()
def debiased_ece(probs, labels, n_bins: int = 15, binning: str = "mass", *,
                 closed: str = "right", is_probs: bool = True, validate: bool = True) -> float:
    """Debiased L2 calibration error of Kumar et al. (2019, Sec. 5, "debiased estimator").

    ``sqrt(max(0, sum_b |B_b|/N [(A_b - C_b)^2 - A_b (1 - A_b) / (|B_b| - 1)]))``, where
    bins with fewer than two samples contribute 0, as in their ``calibration`` package
    (``unbiased_l2_ce``). It estimates the L2 (RMS) error, not the L1 ECE.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import debiased_ece
    >>> p = np.random.default_rng(0).dirichlet([1, 1, 1], size=500); y = p.argmax(1)
    >>> round(debiased_ece(p, y), 4)
    0.4166
    """
    conf, hit = _top(probs, labels, is_probs, validate)
    _, c, sc, sh = _sums(conf, hit, n_bins, binning, closed)
    ok = c >= 2
    a, cf, m = sh[ok] / c[ok], sc[ok] / c[ok], c[ok]
    sq = np.sum(m * ((a - cf) ** 2 - a * (1 - a) / (m - 1))) / conf.size
    return float(np.sqrt(max(sq, 0.0)))


@documented(p=("float", "The power of the binned error, ``>= 1``: 1 the L1 ECE, 2 the RMS error."),
            return_n_bins=("bool", "True returns ``(error, n_bins_chosen)`` instead of the error alone."))
def ece_sweep(probs, labels, binning: str = "width", *, p: float = 1.0, closed: str = "right",
              return_n_bins: bool = False, is_probs: bool = True, validate: bool = True):
    """ECE_sweep of Roelofs et al. (2022): the binned L_p error with the largest number of
    bins that keeps bin accuracies monotone (see :func:`replicate.binning.sweep`).

    With ``return_n_bins=True`` returns ``(error, n_bins_chosen)``. The number of steps
    grows with the chosen bin count (up to N - 1 for perfectly sorted outcomes).

    Example
    -------
    >>> import numpy as np; from replicate.metrics import ece_sweep
    >>> p = np.random.default_rng(0).dirichlet([1, 1, 1], size=500); y = p.argmax(1)
    >>> round(ece_sweep(p, y), 4)
    0.3901
    """
    if not (isinstance(p, (int, float)) and p >= 1):
        raise ValueError(f"p must be a number >= 1; got {p!r}")
    conf, hit = _top(probs, labels, is_probs, validate)
    err, nb = _b.sweep(conf, hit, binning, closed, float(p))
    return (err, nb) if return_n_bins else err

