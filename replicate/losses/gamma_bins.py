"""AdaFocal's validation bins and its per-bin gamma update (Ghosh et al. 2022).

What the stateful losses of :mod:`.adaptive` (CalFocal, AdaFocal, AdaDualFocal) compute once
per epoch from the validation set, as plain functions:

- :func:`adafocal_gamma_update`: one gamma update per bin, the paper's Eq. 4
  (``variant="paper"``) or the authors' final code (``variant="code"``: sign-aware, with the
  focal/inverse-focal switch);
- :func:`equal_mass_edges`: equal-mass edges of the validation confidences (``np.interp``
  over the sorted confidences, as the reference ``adaECE`` code), in torch float64;
- :func:`assign_bins`: the bin of each value, under the ``"inclusive"`` or ``"reference"`` rule;
- :func:`bin_statistics`: per-bin count, mean confidence and accuracy;
- :func:`reference_validation_bins`: the authors' validation bins, step by step in their
  float32 arithmetic.

The numpy binning of the calibration metrics is :mod:`replicate.binning`.
"""
from __future__ import annotations

import numpy as np
import torch

from ..array_io import torch_native
from .base import check_choice, check_number


def adafocal_gamma_update(gamma, gap, lam: float = 1.0, gamma_min: float = -2.0, gamma_max: float = 20.0,
                          variant: str = "code", switch: float = 0.2):
    """One AdaFocal gamma update per bin (numpy arrays or torch tensors; same type back).

    ``gap`` is ``C_val - A_val`` per bin; a NaN gap (empty bin) leaves that gamma unchanged.
    ``variant="paper"``: ``clip(gamma * exp(lam * gap), gamma_min, gamma_max)`` (Eq. 4, whose
    only active bound is ``gamma_max`` for positive gammas); ``"code"``: sign-aware update and
    the focal/inverse-focal switch at ``|gamma| < switch``, then the clip.

    Parameters
    ----------
    gamma : numpy.ndarray or torch.Tensor
        The current gamma of each bin, shape ``(M,)``.
    gap : numpy.ndarray or torch.Tensor
        ``C_val - A_val`` of each bin (mean confidence minus accuracy on the validation set),
        shape ``(M,)``; NaN for an empty bin.
    lam : float
        The update's step, ``>= 0`` (default 1, the paper's lambda).
    gamma_min, gamma_max : float
        The clip's bounds (defaults -2 and 20, the reference code's); ``gamma_max >= gamma_min``.
    variant : {"code", "paper"}
        ``"code"`` (default): the authors' sign-aware update with the switch; ``"paper"``:
        Eq. 4 as printed.
    switch : float
        ``"code"`` only: a gamma whose magnitude falls below it flips to ``-switch`` or
        ``+switch`` (focal to inverse focal and back); ``>= 0``, default 0.2.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        The new gammas, in ``gamma``'s container.

    Example
    -------
    >>> import numpy as np; from replicate.losses import adafocal_gamma_update
    >>> adafocal_gamma_update(np.array([1.0, 1.0]), gap=np.array([0.1, -0.3])).round(4)
    array([1.1052, 0.7408])
    """
    check_choice("adafocal", "variant", variant, ("code", "paper"))
    lam = check_number("adafocal", "lam", lam, lo=0.0)
    gmin = check_number("adafocal", "gamma_min", gamma_min)
    gmax = check_number("adafocal", "gamma_max", gamma_max, lo=gmin)
    sw = check_number("adafocal", "switch", switch, lo=0.0)
    xp = torch if isinstance(gamma, torch.Tensor) else np
    g = gamma if xp is torch else np.asarray(gamma, dtype=float)
    e = (gap.to(g.dtype) if isinstance(gap, torch.Tensor) else torch.as_tensor(gap, dtype=g.dtype, device=g.device)) \
        if xp is torch else np.asarray(gap, dtype=float)
    empty = xp.isnan(e)
    e = xp.where(empty, xp.zeros_like(e), e)
    if variant == "paper":
        new = g * xp.exp(lam * e)
    else:
        new = xp.where(g > 0, g * xp.exp(lam * e), g * xp.exp(-lam * e))
        small = xp.abs(new) < sw
        flipped = xp.where(new > 0, -sw * xp.ones_like(new), sw * xp.ones_like(new))
        new = xp.where(small, flipped, new)
    new = xp.clip(new, gmin, gmax) if xp is np else new.clamp(gmin, gmax)
    return xp.where(empty, g, new)


@torch_native
def equal_mass_edges(conf: torch.Tensor, num_bins: int) -> torch.Tensor:
    """``np.interp(linspace(0, N, M+1), arange(N), sort(conf))`` in torch (float64).

    Parameters
    ----------
    conf : torch.Tensor or numpy.ndarray
        Confidences, any shape (flattened); numpy in, numpy out.
    num_bins : int
        Number of bins M.

    Example
    -------
    >>> import torch; from replicate.losses import equal_mass_edges
    >>> equal_mass_edges(torch.tensor([0.9, 0.5, 0.7, 0.6]), num_bins=2)
    tensor([0.5000, 0.7000, 0.9000], dtype=torch.float64)
    """
    s = torch.sort(conf.detach().reshape(-1).to(torch.float64)).values
    n = s.numel()
    if n == 0:
        raise ValueError("equal_mass_edges: no confidences given")
    pos = torch.linspace(0.0, float(n), num_bins + 1, dtype=torch.float64, device=s.device).clamp(max=n - 1)
    lo = pos.floor().long()
    hi = (lo + 1).clamp(max=n - 1)
    return s[lo] + (pos - lo) * (s[hi] - s[lo])


@torch_native
def assign_bins(values: torch.Tensor, edges: torch.Tensor, rule: str = "inclusive") -> torch.Tensor:
    """Bin index of each value; -1 where the rule drops it.

    Parameters
    ----------
    values : torch.Tensor or numpy.ndarray
        The keys to bin; numpy in, numpy out.
    edges : torch.Tensor or numpy.ndarray
        ``M + 1`` increasing edges.
    rule : {"inclusive", "reference"}
        ``"inclusive"`` (default): ``lower <= v < upper`` with bin 0 catching everything
        below and the last bin everything above (the rule the reference code applies to
        training samples); ``"reference"``: ``lower < v <= upper`` (the reference ``adaECE``
        rule for validation samples, which drops the minimum-confidence sample and empties
        bins between equal edges).

    Returns
    -------
    torch.Tensor or numpy.ndarray
        The bin index of each value, ``-1`` where ``"reference"`` drops it.

    Example
    -------
    >>> import torch; from replicate.losses import assign_bins
    >>> assign_bins(torch.tensor([0.1, 0.5, 0.9]), torch.tensor([0.0, 0.5, 1.0]))
    tensor([0, 1, 1])
    """
    v = values.detach().to(edges.dtype)
    m = edges.numel() - 1
    if rule == "inclusive":
        return torch.bucketize(v, edges[1:-1].contiguous(), right=True)
    idx = torch.bucketize(v, edges.contiguous(), right=False) - 1
    return torch.where((idx >= 0) & (idx < m), idx, torch.full_like(idx, -1))


@torch_native
def bin_statistics(conf: torch.Tensor, correct: torch.Tensor, edges: torch.Tensor, rule: str = "inclusive"):
    """Per-bin ``(count, mean confidence, accuracy)``; the means are NaN for empty bins.

    Parameters
    ----------
    conf : torch.Tensor or numpy.ndarray
        Confidences, shape (N,); numpy in, numpy out.
    correct : torch.Tensor or numpy.ndarray
        Whether each prediction is right (bool or 0/1), shape (N,).
    edges : torch.Tensor or numpy.ndarray
        ``M + 1`` edges.
    rule : {"inclusive", "reference"}
        As :func:`assign_bins`.

    Example
    -------
    >>> import torch; from replicate.losses import bin_statistics
    >>> conf, correct = torch.tensor([0.6, 0.8, 0.9]), torch.tensor([1.0, 0.0, 1.0])
    >>> bin_statistics(conf, correct, torch.tensor([0.0, 0.7, 1.0]))
    (tensor([1., 2.], dtype=torch.float64), tensor([0.6000, 0.8500], dtype=torch.float64), tensor([1.0000, 0.5000], dtype=torch.float64))
    """
    m = edges.numel() - 1
    idx = assign_bins(conf, edges, rule)
    keep = (idx >= 0).to(torch.float64)
    idx = idx.clamp_min(0)
    z = torch.zeros(m, dtype=torch.float64, device=edges.device)
    count = z.scatter_add(0, idx, keep)
    csum = z.scatter_add(0, idx, keep * conf.detach().to(torch.float64))
    asum = z.scatter_add(0, idx, keep * correct.to(torch.float64))
    nan = torch.full_like(count, float("nan"))
    return count, torch.where(count > 0, csum / count.clamp_min(1), nan), torch.where(count > 0, asum / count.clamp_min(1), nan)


@torch_native
def reference_validation_bins(val_logits: torch.Tensor, val_labels: torch.Tensor, num_bins: int) -> dict:
    """The validation bins of the AdaFocal authors' final code, in its float32 arithmetic.

    Their evaluation computes top-1 confidences as ``exp(max(log_softmax(z)))`` on float32
    logits and the prediction as that argmax; their ``adaECE`` routine (Mukhoti et al.'s)
    takes equal-mass edges ``np.interp(linspace(0, N, M+1), arange(N), sort(conf))`` (float64
    numbers interpolated between float32 confidences) and puts a sample in bin ``b`` when
    ``conf > lower_b`` and ``conf <= upper_b`` on a float32 CPU tensor compared with Python
    floats - torch rounds those edges to float32 - and takes float32 means of the confidence
    and of the correctness in each bin. The same operations are done here, in the same
    order, with torch and numpy (no library has this routine; it is the authors' own).

    Parameters
    ----------
    val_logits : torch.Tensor or numpy.ndarray
        Validation logits (N, K).
    val_labels : torch.Tensor or numpy.ndarray
        Validation labels (N,).
    num_bins : int
        Number of bins.

    Returns float64 arrays: ``edges`` (what the authors store and look training samples up
    in), ``edges_float32`` (the same rounded to float32: the edges the validation bins
    actually use), ``count``, ``confidence`` and ``accuracy`` per bin (NaN where empty).
    Where a result can still differ from theirs: the float32 softmax and means are this
    PyTorch version's kernels (another version, or a GPU's log-softmax against a CPU's,
    may round a last bit differently).
    """
    z = val_logits.detach().float()
    logc, pred = torch.log_softmax(z, dim=1).max(dim=1)
    conf = logc.exp().cpu()                                        # float32, as theirs
    correct = (pred.cpu() == val_labels.detach().cpu().long())
    n = conf.numel()
    if n == 0:
        raise ValueError("reference_validation_bins: no validation samples given")
    edges = np.interp(np.linspace(0, n, num_bins + 1), np.arange(n), np.sort(conf.numpy()))
    count = np.zeros(num_bins)
    cmean = np.full(num_bins, np.nan)
    amean = np.full(num_bins, np.nan)
    for b in range(num_bins):
        in_bin = conf.gt(float(edges[b])) & conf.le(float(edges[b + 1]))
        count[b] = float(in_bin.sum())
        if count[b] > 0:
            cmean[b] = conf[in_bin].mean().item()
            amean[b] = correct[in_bin].float().mean().item()
    return {"edges": edges, "edges_float32": edges.astype(np.float32).astype(np.float64), "count": count,
            "confidence": cmean, "accuracy": amean}
