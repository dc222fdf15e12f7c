"""Baseline training losses: cross-entropy, Brier, MMCE (weighted), label smoothing.

Every loss reduces by the batch mean unless given ``reduction="sum"`` or ``"none"``
(:mod:`.base`). Conventions of the reference code (Mukhoti et al. 2020,
``torrvision/focal_calibration``; the book's page "The authors' code"), which the book passes
explicitly (``paper_reduction``): cross-entropy is summed over the batch; Brier is the batch
mean of ``sum_k (p_k - y_k)^2``; the MMCE training loss is ``N * (CE_mean + lambda * MMCE_w)``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..array_io import torch_native
from .base import CalibrationLoss, check_choice, check_number, log_probs, one_hot


class CrossEntropy(CalibrationLoss):
    """Negative log-likelihood ``-log p_y`` (the gamma = 0 member of the focal family).

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import CrossEntropy
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(CrossEntropy()(z, y).item(), 4), round(CrossEntropy(reduction="sum")(z, y).item(), 4)
    (0.9474, 1.8948)
    """

    name = "cross_entropy"

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)

    def per_sample(self, logits, targets):
        return -log_probs(logits, targets)[1]


class Brier(CalibrationLoss):
    """Brier score ``sum_k (p_k - y_k)^2`` (Brier 1950), reduced by the batch mean by default.

    The reference code divides the batch sum by N too (:attr:`paper_reduction` ``"mean"``),
    so its effective step is ~N times smaller than the summed losses' (the book's page
    "The authors' code").

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        Batch mean (default; also the papers' code), batch sum or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import Brier
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(Brier()(z, y).item(), 4)
    0.5829
    """

    name = "brier"
    paper_reduction = "mean"

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)

    def per_sample(self, logits, targets):
        p = F.softmax(logits, dim=1)
        y = one_hot(targets, p)
        return (p - y).pow(2).sum(dim=1)


class LabelSmoothing(CalibrationLoss):
    """Cross-entropy against ``(1 - eps) * onehot + eps / K`` (Mueller et al. 2019).

    Mukhoti's repository has no implementation (its LS-0.05 numbers come from released
    checkpoints); this is the standard form named on the book's page "The authors' code".

    Parameters
    ----------
    smoothing : float
        ``eps`` in [0, 1).
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (:attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import LabelSmoothing
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(LabelSmoothing(smoothing=0.05, reduction="sum")(z, y).item(), 4)
    1.9514
    """

    name = "label_smoothing"

    def __init__(self, smoothing: float = 0.05, reduction: str = "mean"):
        super().__init__(reduction)
        self.smoothing = check_number(self.name, "smoothing", smoothing, lo=0.0, hi=1.0, hi_open=True)
        self._set_params(smoothing=self.smoothing)

    def per_sample(self, logits, targets):
        logp = F.log_softmax(logits, dim=1)
        k = logits.shape[1]
        q = one_hot(targets, logp) * (1.0 - self.smoothing) + self.smoothing / k
        return -(q * logp).sum(dim=1)


@torch_native
def mmce_weighted(logits: torch.Tensor, targets: torch.Tensor, *, bandwidth: float = 0.4,
                  normalization: str = "reference") -> torch.Tensor:
    """Weighted MMCE of one batch (Kumar et al. 2018), as a differentiable scalar.

    ``r_i`` = top-1 confidence, ``c_i`` = 1 if the prediction is correct; Laplacian kernel
    ``k(r, r') = exp(-|r - r'| / bandwidth)``; weights ``(1 - r)`` for correct and ``r`` for
    incorrect samples. With ``m`` correct and ``n`` incorrect samples and the pair sums
    ``A = sum_CC (1-r_i)(1-r_j) k``, ``B = sum_II r_i r_j k``, ``X = sum_CI (1-r_i) r_j k``:

    - ``"kumar"``: ``MMCE^2 = A/m^2 + B/n^2 - 2X/(mn)`` (the kernel-mean-embedding form);
    - ``"reference"`` (Mukhoti's ``Losses/mmce.py``): each pair sum is first *averaged*
      over its pair matrix and then divided again by ``m^2 + 1e-5``, ``n^2 + 1e-5`` and
      ``mn + 1e-5``, i.e. ``A/m^4 + B/n^4 - 2X/(mn)^2`` up to those 1e-5 terms.

    Returns ``sqrt(MMCE^2 + 1e-10)``, or 0 when the batch has no correct or no incorrect
    sample (as the reference code does).

    Parameters
    ----------
    logits : torch.Tensor or numpy.ndarray
        Shape (N, K); numpy in, numpy out.
    targets : torch.Tensor or numpy.ndarray
        Class indices, shape (N,).
    bandwidth : float
        Kernel width.
    normalization : {"reference", "kumar"}
        See above.

    Example
    -------
    >>> import torch; from replicate.losses import mmce_weighted
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(mmce_weighted(z, y).item(), 4)
    0.5124
    """
    p = F.softmax(logits, dim=1)
    r, pred = p.max(dim=1)
    c = (pred == targets).to(r.dtype)
    m, n = c.sum(), (1.0 - c).sum()
    kern = torch.exp(-(r[:, None] - r[None, :]).abs() / bandwidth)
    wc, wi = c * (1.0 - r), (1.0 - c) * r
    a = (wc[:, None] * wc[None, :] * kern).sum()
    b = (wi[:, None] * wi[None, :] * kern).sum()
    x = (wc[:, None] * wi[None, :] * kern).sum()
    ms, ns = m.clamp_min(1.0), n.clamp_min(1.0)
    if normalization == "kumar":
        mmd = a / ms**2 + b / ns**2 - 2.0 * x / (ms * ns)
    else:
        mmd = (a / ms**2) / (m * m + 1e-5) + (b / ns**2) / (n * n + 1e-5) - 2.0 * (x / (ms * ns)) / (m * n + 1e-5)
    both = (m > 0) & (n > 0)
    val = torch.sqrt(mmd.clamp_min(0.0) + 1e-10)
    return torch.where(both, val, torch.zeros_like(val))


class MMCE(CalibrationLoss):
    """Cross-entropy plus ``lambda`` times the weighted MMCE (Kumar et al. 2018).

    MMCE is a batch quantity, so the per-sample value of sample ``i`` is taken as
    ``CE_i + lam * MMCE_w`` (the batch's MMCE shared by every sample): the ``"sum"`` and
    ``"mean"`` reductions are the sum and mean of those values.

    Parameters
    ----------
    lam : float
        ``lambda`` >= 0: 2 for images, 8 for text (Mukhoti App. D).
    bandwidth : float
        Laplacian kernel width (> 0), 0.4 as Kumar et al.
    normalization : {"reference", "kumar"}
        The kernel sums' normalisation (:func:`mmce_weighted`).
    reduction : {"mean", "sum", "none"}
        ``"mean"`` (default): ``CE_mean + lam * MMCE_w``; ``"sum"`` (the reference training
        loop, :attr:`paper_reduction`): ``N * (CE_mean + lam * MMCE_w)``; ``"none"``: the
        per-sample values above.

    Example
    -------
    >>> import torch; from replicate.losses import MMCE
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(MMCE(lam=2.0, reduction="sum")(z, y).item(), 4)
    3.9443
    """

    name = "mmce"

    def __init__(self, lam: float = 2.0, bandwidth: float = 0.4, normalization: str = "reference",
                 reduction: str = "mean"):
        super().__init__(reduction)
        self.lam = check_number(self.name, "lam", lam, lo=0.0)
        self.bandwidth = check_number(self.name, "bandwidth", bandwidth, lo=0.0, lo_open=True)
        self.normalization = check_choice(self.name, "normalization", normalization, ("reference", "kumar"))
        self._set_params(lam=self.lam, bandwidth=self.bandwidth, normalization=self.normalization)

    def _compute(self, logits, targets):
        ce = -log_probs(logits, targets)[1]
        mm = mmce_weighted(logits, targets, bandwidth=self.bandwidth, normalization=self.normalization)
        if self.reduction == "none":
            return ce + self.lam * mm
        val = ce.mean() + self.lam * mm
        return val * logits.shape[0] if self.reduction == "sum" else val
