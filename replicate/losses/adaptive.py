"""Calibration-aware adaptive gammas: CalFocal, AdaFocal (Ghosh et al. 2022), AdaDualFocal (Tao et al. 2023).

Once per epoch the trainer calls :meth:`update_from_validation` with the validation logits.
The validation set is cut into ``num_bins`` equal-mass bins of top-1 confidence (edges by
``np.interp`` over the sorted confidences, as the reference ``adaECE`` code), and each bin's
gap ``E_b = C_val,b - A_val,b`` (mean confidence minus accuracy) updates that bin's gamma:

- CalFocal (AdaFocal paper Eq. 1 and Eq. 2): case 1 ``gamma_n = exp(lam (p_n - A_val,b))``
  per training sample, case 2 ``gamma_b = exp(lam E_b)``;
- AdaFocal, ``variant="paper"`` (Eq. 4 with the ``lam`` of the code):
  ``gamma_b <- min(gamma_max, gamma_b exp(lam E_b))``;
- AdaFocal, ``variant="code"`` (authors' final code, the book's page "The authors' code"): the exponent's sign
  follows gamma's sign; if ``|gamma| < switch`` it flips to ``-/+ switch``; clip to
  ``[gamma_min, gamma_max]``. Negative gamma means inverse focal ``-(1 + p)^|gamma| log p``.

A training sample uses the (detached) gamma of the validation bin containing its key - the
probability of its true class ``p_y`` (AdaFocal) or, in the DFL authors' AdaDualFocal code,
the margin ``p_y - p_j`` - with bin 0 catching everything below and the last bin everything
above (``lower <= key < upper`` inside). Before the first update the bins are equally spaced
and every gamma is ``gamma_init`` (Algorithm 1).

Two validation bin rules (``bin_rule``):

- ``"inclusive"`` (the default; the package's own rule, not the authors'): confidences,
  edges and bin statistics in float64, validation samples binned like training samples
  (``lower <= c < upper``, ends open), an empty bin keeps its gamma;
- ``"reference"``: the authors' final code step by step (:func:`reference_validation_bins`;
  the book's page "The authors' code"): validation confidences ``exp(max log_softmax)`` in float32,
  equal-mass edges by ``np.interp`` over the sorted float32 confidences, bins
  ``lower < c <= upper`` compared in float32 (so the edges act rounded to float32; the
  minimum-confidence sample falls in no bin), float32 bin means, and an empty bin's gap
  taken as 0 (their bin dictionary holds 0 for its confidence and accuracy). When many
  validation confidences saturate (top-1 = 1.0 in float32) several top edges coincide at
  1.0, the bins between them are empty, and the gammas differ from a float64 computation.
  Training samples are then looked up in the unrounded float64 edges, as the authors' loss
  does. Their empty-bin handling agrees with keeping the gamma whenever ``|gamma| >=
  switch`` - always after the first update, and from the start when ``|gamma_init| >= 0.2``.

The only thread of all this that runs inside a training step - the per-sample gamma lookup -
reads buffers (``edges``, ``gamma``) that :meth:`update_from_validation` changes in place,
so a captured CUDA graph sees every epoch's update (:mod:`replicate.training.steps`).

The bins and the gamma update are plain functions of :mod:`.gamma_bins`; the losses here
hold their state.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..array_io import reject_probs, torch_native
from .base import _PROBS_HINT, CalibrationLoss, LossDivergedError, check_choice, check_number, log_probs, one_minus_exp
from .dual import dual_term
from .gamma_bins import adafocal_gamma_update, assign_bins, bin_statistics, equal_mass_edges, reference_validation_bins

BIN_RULES = ("inclusive", "reference")


class _BinnedGammaLoss(CalibrationLoss):
    """Shared machinery: validation bins in buffers, per-sample gamma lookup, diagnostics."""

    needs_validation = True

    def __init__(self, num_bins: int, gamma_init: float, bin_rule: str, reduction: str):
        super().__init__(reduction)
        self.num_bins = check_number(self.name, "num_bins", num_bins, lo=1, hi=1000, integer=True)
        self.bin_rule = check_choice(self.name, "bin_rule", bin_rule, BIN_RULES)
        m = self.num_bins
        self.register_buffer("edges", torch.linspace(0.0, 1.0, m + 1, dtype=torch.float64))
        self.register_buffer("gamma", torch.full((m,), float(gamma_init), dtype=torch.float64))
        self.register_buffer("gap", torch.zeros(m, dtype=torch.float64))
        self.register_buffer("count", torch.zeros(m, dtype=torch.float64))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.long))

    def bin_of(self, key: torch.Tensor) -> torch.Tensor:
        """Validation-bin index of each training key (no gradient).

        Parameters
        ----------
        key : torch.Tensor
            Each training sample's key (``p_y``; for AdaDualFocal's ``bin_key="margin"``,
            ``p_y - p_j``), shape ``(N,)``; looked up in the validation bins' ``edges`` with
            the ``"inclusive"`` rule (:func:`assign_bins`).

        Returns
        -------
        torch.Tensor
            Bin indices in ``[0, num_bins)``, shape ``(N,)``.
        """
        return assign_bins(key, self.edges, "inclusive")

    def _new_gamma(self, gap, conf_mean, acc_mean) -> torch.Tensor:
        raise TypeError

    @torch_native
    @torch.no_grad()
    def update_from_validation(self, val_logits: torch.Tensor, val_labels: torch.Tensor) -> dict:
        """Re-bin the validation set and update the gammas (once per epoch; module docstring).

        Parameters
        ----------
        val_logits : torch.Tensor or numpy.ndarray
            Validation logits (N, K), not probabilities (ValueError).
        val_labels : torch.Tensor or numpy.ndarray
            Validation labels (N,).

        Returns
        -------
        dict
            The new state and the bins' statistics as numpy arrays (whatever the input):
            ``gamma``, ``gamma_before``, ``gap``, ``edges``, ``count``, ``confidence``,
            ``accuracy`` (and ``edges_float32`` under ``bin_rule="reference"``).
        """
        if not isinstance(val_logits, torch.Tensor) or not isinstance(val_labels, torch.Tensor) \
                or val_logits.dim() != 2 or val_labels.dim() != 1 or val_labels.shape[0] != val_logits.shape[0]:
            raise ValueError(f"loss {self.name!r}: need val_logits (N, K) and val_labels (N,); got "
                             f"{tuple(getattr(val_logits, 'shape', ()))} and {tuple(getattr(val_labels, 'shape', ()))}")
        reject_probs(val_logits, "val_logits", where=f"loss {self.name!r}", hint=_PROBS_HINT)
        logits = val_logits.detach().to(self.edges.device, torch.float64)
        labels = val_labels.detach().to(self.edges.device).long()
        if not bool(torch.isfinite(logits).all()):
            raise LossDivergedError(f"loss {self.name!r}: validation logits contain NaN or inf")
        extra = {}
        if self.bin_rule == "reference":
            ref = reference_validation_bins(val_logits, val_labels, self.num_bins)
            edges, count, cmean, amean = (torch.as_tensor(ref[k], dtype=torch.float64, device=self.edges.device)
                                          for k in ("edges", "count", "confidence", "accuracy"))
            extra["edges_float32"] = torch.as_tensor(ref["edges_float32"])
        else:
            conf, pred = torch.softmax(logits, dim=1).max(dim=1)
            edges = equal_mass_edges(conf, self.num_bins)
            count, cmean, amean = bin_statistics(conf, pred == labels, edges, self.bin_rule)
        gap = cmean - amean
        before = self.gamma.clone()
        self.gamma.copy_(self._new_gamma(gap, cmean, amean))
        self.edges.copy_(edges)
        self.gap.copy_(torch.nan_to_num(gap, nan=0.0))
        self.count.copy_(count)
        self.n_updates.add_(1)
        out = {"gamma": self.gamma, "gamma_before": before, "gap": gap, "edges": edges, "count": count,
               "confidence": cmean, "accuracy": amean, **extra}
        return {k: v.detach().cpu().numpy().copy() for k, v in out.items()}

    def _gamma_limits(self) -> tuple[float, float]:
        return -math.inf, math.inf

    def _check_state(self) -> None:
        lo, hi = self._gamma_limits()
        g = self.gamma
        if not bool(torch.isfinite(g).all()) or bool((g < lo - 1e-9).any()) or bool((g > hi + 1e-9).any()):
            raise LossDivergedError(f"loss {self.name!r}: gamma per bin {np.round(g.cpu().numpy(), 4).tolist()} "
                                    f"is not finite or outside [{lo:g}, {hi:g}]")


class CalFocal(_BinnedGammaLoss):
    """CalFocal (AdaFocal paper Sec. 5.1): ``-(1 - p_n)^gamma log p_n`` with

    - ``case=1`` (Eq. 1): ``gamma_n = exp(lam * (p_n - A_val,b))`` per sample;
    - ``case=2`` (Eq. 2): ``gamma_b = exp(lam * (C_val,b - A_val,b))`` per bin.

    Gamma is detached. Algorithm 1 starts from ``C = A = `` bin midpoints, i.e. gamma 1 in
    case 2. ``gamma_max`` only guards against float overflow of the exponential (the paper
    has no cap; Fig. 3 uses lam = 10 and 100). CalFocal is not in the authors' final code;
    with ``bin_rule="reference"`` its validation bins are theirs, and an empty bin keeps its
    gamma under both rules.

    Parameters
    ----------
    case : {1, 2}
        Eq. 1 (per-sample gamma) or Eq. 2 (per-bin gamma).
    lam : float
        ``lambda >= 0``.
    num_bins : int
        Equal-mass validation bins.
    gamma_max : float
        Overflow guard on gamma (>= 1).
    bin_rule : {"inclusive", "reference"}
        The validation binning (module docstring).
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import CalFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(CalFocal(case=2, reduction="sum")(z, y).item(), 4)
    1.3887
    """

    name = "calfocal"

    def __init__(self, case: int = 2, lam: float = 10.0, num_bins: int = 15, gamma_max: float = 1e6,
                 bin_rule: str = "inclusive", reduction: str = "mean"):
        if isinstance(case, bool) or case not in (1, 2):
            raise ValueError(f"loss 'calfocal': parameter 'case' must be one of [1, 2]; got {case!r}")
        self.case = int(case)
        super().__init__(num_bins, 1.0, bin_rule, reduction)
        self.lam = check_number(self.name, "lam", lam, lo=0.0)
        self.gamma_max = check_number(self.name, "gamma_max", gamma_max, lo=1.0)
        e = self.edges
        self.register_buffer("acc", (e[:-1] + e[1:]) / 2)
        self._set_params(case=self.case, lam=self.lam, num_bins=self.num_bins, gamma_max=self.gamma_max,
                         bin_rule=self.bin_rule)

    def _new_gamma(self, gap, conf_mean, acc_mean):
        self.acc.copy_(torch.where(torch.isnan(acc_mean), self.acc, acc_mean))
        new = torch.exp((self.lam * gap).clamp(max=math.log(self.gamma_max)))
        return torch.where(torch.isnan(gap), self.gamma, new)

    def _gamma_limits(self):
        return 0.0, self.gamma_max

    def per_sample(self, logits, targets):
        lpt = log_probs(logits, targets)[1]
        p = lpt.exp()
        b = self.bin_of(p)
        if self.case == 1:
            x = (self.lam * (p.detach().to(torch.float64) - self.acc[b])).clamp(max=math.log(self.gamma_max))
            g = torch.exp(x)
        else:
            g = self.gamma[b]
        return -one_minus_exp(lpt).pow(g.to(lpt.dtype)) * lpt


class AdaFocal(_BinnedGammaLoss):
    """AdaFocal (Ghosh et al. 2022, Eq. 4 / authors' code; see the module docstring).

    Defaults that follow the authors' final code (the book's page "The authors' code"): ``variant="code"``
    (sign-aware update with the inverse-focal switch at ``|gamma| < switch = 0.2``),
    15 bins, ``gamma_init`` 1, ``lam`` 1, gamma clipped to ``[-2, 20]``, the update once per
    epoch from the validation set in eval mode, training samples looked up by ``p_y``.
    The default that does NOT: ``bin_rule="inclusive"`` is the package's own validation
    binning (float64, half-open bins, empty bins keep their gamma); ``bin_rule="reference"``
    is the authors' (float32 confidences and edges, ``(lower, upper]`` bins, empty bin =
    gap 0; :func:`reference_validation_bins`). ``variant="paper"`` is the paper's Eq. 4
    (no switch). The loss itself differs from their code only where their
    ``(1 - p + 1e-20)`` guard differs from our ``max(1 - p, 1e-20)`` (at p within 1e-20 of 1).

    Parameters
    ----------
    variant : {"code", "paper"}
        The authors' final code's update or the paper's Eq. 4.
    gamma_init : float
        Every bin's gamma before the first update.
    lam : float
        ``lambda >= 0`` of the update.
    gamma_min, gamma_max : float
        The clip of gamma.
    switch : float
        ``|gamma|`` below which the code's variant switches to inverse focal.
    num_bins : int
        Equal-mass validation bins.
    bin_rule : {"inclusive", "reference"}
        The validation binning (module docstring).
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import AdaFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> loss = AdaFocal(num_bins=2); stats = loss.update_from_validation(z, y)  # once per epoch
    >>> [round(g, 4) for g in loss.gamma.tolist()]
    [1.8878, 0.807]
    """

    name = "adafocal"

    def __init__(self, variant: str = "code", gamma_init: float = 1.0, lam: float = 1.0, gamma_min: float = -2.0,
                 gamma_max: float = 20.0, switch: float = 0.2, num_bins: int = 15, bin_rule: str = "inclusive",
                 reduction: str = "mean"):
        name = type(self).name
        self.variant = check_choice(name, "variant", variant, ("code", "paper"))
        self.lam = check_number(name, "lam", lam, lo=0.0)
        self.gamma_min = check_number(name, "gamma_min", gamma_min)
        self.gamma_max = check_number(name, "gamma_max", gamma_max, lo=max(self.gamma_min, 0.0), lo_open=True)
        self.switch = check_number(name, "switch", switch, lo=0.0, hi=self.gamma_max)
        lo_init = 0.0 if variant == "paper" else self.gamma_min
        gi = check_number(name, "gamma_init", gamma_init, lo=lo_init, hi=self.gamma_max, lo_open=variant == "paper")
        if gi < self.gamma_min:
            raise ValueError(f"loss {name!r}: parameter 'gamma_init' must lie in [gamma_min, gamma_max] = "
                             f"[{self.gamma_min:g}, {self.gamma_max:g}]; got {gi!r}")
        self.gamma_init = gi
        super().__init__(num_bins, gi, bin_rule, reduction)
        self._set_params(variant=self.variant, gamma_init=gi, lam=self.lam, gamma_min=self.gamma_min,
                         gamma_max=self.gamma_max, switch=self.switch, num_bins=self.num_bins,
                         bin_rule=self.bin_rule)

    def _new_gamma(self, gap, conf_mean, acc_mean):
        if self.bin_rule == "reference":  # the authors' empty bin: confidence 0 - accuracy 0
            gap = torch.nan_to_num(gap, nan=0.0)
        return adafocal_gamma_update(self.gamma, gap, self.lam, self.gamma_min, self.gamma_max,
                                     self.variant, self.switch)

    def _gamma_limits(self):
        return self.gamma_min, self.gamma_max

    def _key(self, p, logp):
        return p

    def _base(self, lpt, p, logp):
        """``(1 - p_y, 1 + p_y)``: the focal and inverse-focal bases."""
        return one_minus_exp(lpt), 1.0 + p

    def per_sample(self, logits, targets):
        logp, lpt = log_probs(logits, targets)
        p = lpt.exp()
        g = self.gamma[self.bin_of(self._key(p, logp))].to(lpt.dtype)
        focal_base, inverse_base = self._base(lpt, p, logp)
        base = torch.where(g >= 0, focal_base, inverse_base)
        return -base.pow(g.abs()) * lpt


class AdaDualFocal(AdaFocal):
    """AdaDualFocal (Tao et al. 2023, Sec. 5.2): AdaFocal's per-bin gamma on dual focal loss.

    Loss ``-(1 - p_y + p_j)^gamma log p_y``. Defaults follow the DFL authors' code
    (``Losses/adadualfocal.py``, ``train.py``): the Eq. 4 update (``variant="paper"``, no sign
    switch), ``gamma_max`` 20 (their job script), and the training key ``bin_key="margin"``
    = ``p_y - p_j``, looked up in bins of validation top-1 confidence; ``bin_key="p_true"``
    uses ``p_y`` as AdaFocal does. With ``variant="code"`` a negative gamma uses
    ``(1 + p_y - p_j)^|gamma|`` - our extension by analogy with inverse focal, not in the paper.
    As for AdaFocal, the default ``bin_rule="inclusive"`` is the package's own validation
    binning and ``bin_rule="reference"`` the authors' float32 one (the DFL code bins its
    validation set with the same ``adaECE`` routine).

    Parameters
    ----------
    variant, gamma_init, lam, gamma_min, gamma_max, switch, num_bins
        As :class:`AdaFocal` (``variant`` defaults to ``"paper"`` here, ``gamma_max`` to 20).
    bin_key : {"margin", "p_true"}
        The training sample's key looked up in the validation bins (default ``"margin"``).
    bin_rule : {"inclusive", "reference"}
        As :class:`AdaFocal`: the package's validation binning (default) or the authors'.
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import AdaDualFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(AdaDualFocal(num_bins=3, reduction="sum")(z, y).item(), 4)
    1.7174
    """

    name = "adadual_focal"

    def __init__(self, variant: str = "paper", gamma_init: float = 1.0, lam: float = 1.0,
                 gamma_min: float = -2.0, gamma_max: float = 20.0, switch: float = 0.2, num_bins: int = 15,
                 bin_key: str = "margin", bin_rule: str = "inclusive", reduction: str = "mean"):
        self.bin_key = check_choice("adadual_focal", "bin_key", bin_key, ("margin", "p_true"))
        super().__init__(variant, gamma_init, lam, gamma_min, gamma_max, switch, num_bins, bin_rule, reduction)
        self._set_params(bin_key=self.bin_key)

    def _dual(self, p, logp):
        return dual_term(logp.exp(), p)

    def _key(self, p, logp):
        return p - self._dual(p, logp) if self.bin_key == "margin" else p

    def _base(self, lpt, p, logp):
        d = self._dual(p, logp)
        return one_minus_exp(lpt) + d, 1.0 + p - d
