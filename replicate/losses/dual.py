"""Dual Focal Loss (Tao, Dong & Xu 2023, Eq. 3) and the variants of its Table 4 ablation.

``L_DFL = -(1 - p_y + p_j)^gamma log p_y`` where ``p_j`` is the largest probability
strictly below ``p_y`` (0 if none); ``p_j`` is NOT detached (the authors' code). The
ablation replaces ``p_j`` by another "dual" term ``d`` (``variant``):

- ``"largest"``: ``p_j`` (DFL itself; the same as ``"kth"`` with ``k = 1``);
- ``"kth"``: the k-th largest probability strictly below ``p_y`` (0 if fewer than k);
- ``"mean_topk"``: the mean of the k largest probabilities strictly below ``p_y``
  (over those that exist; ``k = "all"``: all of them);
- ``"fixed"``: a constant ``offset`` (the "+0.1", "+0.2" rows);
- ``"sum_topk"``: the SUM of the k largest below ``p_y`` - what the authors' ablation code
  (``Losses/dual_focal_loss_ablation.py``, classes 1-3) computes for its multi-logit rows;
- ``"batch_mean_sum_topk"``: the batch mean of that per-sample sum, one constant for the
  whole batch - what the authors' "mean(...)" ablation classes 4-6 compute (``torch.mean``
  over the batch of ``p_j + p_3rd + ...``).

The paper's Table 4 labels do not say which code produced each row; the last two variants
exist so a chapter can show the difference.
"""
from __future__ import annotations

import torch

from ..array_io import torch_native
from .base import CalibrationLoss, check_choice, check_number, log_probs, one_minus_exp

DUAL_VARIANTS = ("largest", "kth", "mean_topk", "fixed", "sum_topk", "batch_mean_sum_topk")

# Gammas per (dataset, model) from the authors' README (the book's page "The authors' code").
DUAL_FOCAL_GAMMAS = {
    ("cifar10", "resnet50"): 5.0, ("cifar10", "resnet110"): 4.5, ("cifar10", "wide_resnet"): 2.6,
    ("cifar10", "densenet121"): 5.0, ("cifar100", "resnet50"): 5.0, ("cifar100", "resnet110"): 6.1,
    ("cifar100", "wide_resnet"): 3.9, ("cifar100", "densenet121"): 3.4, ("tiny_imagenet", "resnet50"): 2.3,
}


@torch_native
def dual_term(probs: torch.Tensor, p_true: torch.Tensor, variant: str = "largest", k=1,
              offset: float = 0.0) -> torch.Tensor:
    """The dual term ``d`` of each sample (shape ``(N,)``); differentiable in ``probs``.

    Parameters
    ----------
    probs : torch.Tensor or numpy.ndarray
        Probabilities, shape (N, K) (numpy in, numpy out).
    p_true : torch.Tensor or numpy.ndarray
        ``p_y`` per sample, shape (N,).
    variant : str
        One of :data:`DUAL_VARIANTS` (module docstring).
    k : int or "all"
        How many probabilities below ``p_y`` the variant uses.
    offset : float
        The constant of ``variant="fixed"``.

    Example
    -------
    >>> import torch; from replicate.losses import dual_term
    >>> p = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    >>> dual_term(p, p[[0, 1], [0, 2]]).round(decimals=4)
    tensor([0.3000, 0.2000])
    """
    if variant == "fixed":
        return torch.full_like(p_true, float(offset))
    below = probs < p_true[:, None]
    masked = torch.where(below, probs, torch.zeros_like(probs))
    kk = probs.shape[1] if k == "all" else int(k)
    if kk > probs.shape[1]:
        raise ValueError(f"dual focal: k = {kk} exceeds the number of classes K = {probs.shape[1]}")
    top = torch.topk(masked, kk, dim=1).values
    if variant in ("largest", "kth"):
        return top[:, kk - 1]
    if variant == "sum_topk":
        return top.sum(dim=1)
    if variant == "batch_mean_sum_topk":
        return top.sum(dim=1).mean().expand_as(p_true)
    n_valid = below.sum(dim=1).clamp(max=kk)
    valid = torch.arange(kk, device=probs.device)[None, :] < n_valid[:, None]
    return (top * valid).sum(dim=1) / n_valid.clamp_min(1).to(top.dtype)


def dual_focal_per_sample(logp: torch.Tensor, lpt: torch.Tensor, gamma, variant: str = "largest", k=1,
                          offset: float = 0.0) -> torch.Tensor:
    """``-(1 - p_y + d)^gamma log p_y`` per sample from log-probabilities."""
    d = dual_term(logp.exp(), lpt.exp(), variant, k, offset)
    return -(one_minus_exp(lpt) + d).pow(gamma) * lpt


class DualFocal(CalibrationLoss):
    """Dual focal loss (Tao et al. 2023, Eq. 3) with the Table 4 ablation variants.

    Parameters
    ----------
    gamma : float
        ``gamma >= 0``.
    variant : str
        One of :data:`DUAL_VARIANTS` (module docstring).
    k : int or "all"
        For the variants that use several probabilities below ``p_y``.
    offset : float
        The constant dual term of ``variant="fixed"``, in [0, 1].
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import DualFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(DualFocal(gamma=5.0, reduction="sum")(z, y).item(), 4)
    1.5104
    """

    name = "dual_focal"

    def __init__(self, gamma: float = 5.0, variant: str = "largest", k=1, offset: float = 0.0,
                 reduction: str = "mean"):
        super().__init__(reduction)
        self.gamma = check_number(self.name, "gamma", gamma, lo=0.0)
        self.variant = check_choice(self.name, "variant", variant, DUAL_VARIANTS)
        if k == "all" and variant in ("mean_topk", "sum_topk", "batch_mean_sum_topk"):
            self.k = "all"
        else:
            self.k = check_number(self.name, "k", k, lo=1, integer=True)
        if variant == "largest" and self.k != 1:
            raise ValueError(f"loss {self.name!r}: parameter 'k' must be 1 for variant 'largest'; "
                             f"use variant='kth' for k = {self.k}")
        self.offset = check_number(self.name, "offset", offset, lo=0.0, hi=1.0)
        if variant != "fixed" and self.offset != 0.0:
            raise ValueError(f"loss {self.name!r}: parameter 'offset' is used only with variant='fixed'")
        self._set_params(gamma=self.gamma, variant=self.variant, k=self.k, offset=self.offset)

    def per_sample(self, logits, targets):
        logp, lpt = log_probs(logits, targets)
        return dual_focal_per_sample(logp, lpt, self.gamma, self.variant, self.k, self.offset)
