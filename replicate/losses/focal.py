"""The focal-loss family with fixed, sample-dependent or scheduled gamma; inverse focal; FCL.

Focal loss (Lin et al. 2017; Mukhoti et al. 2020, Sec. 4, unnumbered): ``-(1 - p_y)^gamma log p_y``
with ``p_y = softmax(z)_y`` NOT detached, so the gradient flows through the modulating
factor (Mukhoti Prop. 1: the last-layer gradient is ``g(p, gamma)`` times cross-entropy's).

- FLSD-53 / FLSD-532 (Mukhoti Sec. 5, "sample-dependent gamma"; the reference code's
  ``focal_loss_adaptive_gamma.py``): gamma = 5 for ``p_y < 0.2``, 3 for ``0.2 <= p_y``
  (FLSD-532: 3 for ``0.2 <= p_y < 0.5``, 2 above), chosen on a detached ``p_y``.
- FLS-531 / FLS-532 (Mukhoti Sec. 5, "scheduled gamma"): gamma 5 / 3 / (1 or 2) for the
  epochs [0, 100), [100, 250), [250, 350) of 350, rescaled to any number of epochs.
- Inverse focal (Wang et al. 2021, a DFL baseline): ``-(1 + p_y)^gamma log p_y``.
- FCL (Liang et al., Def. 3.1): focal term + ``lambda * ||p - y||_2^2`` (optionally / K);
  the L1 distance instead of the squared L2 one for the ablation of App. A.15.
"""
from __future__ import annotations

import torch

from ..array_io import torch_native
from .base import CalibrationLoss, check_choice, check_number, log_probs, one_hot, one_minus_exp


@torch_native
def focal_per_sample(logp_true: torch.Tensor, gamma) -> torch.Tensor:
    """``-(1 - p)^gamma log p`` from ``log p``; gamma a float or a per-sample tensor (>= 0).

    Parameters
    ----------
    logp_true : torch.Tensor or numpy.ndarray
        ``log p_y`` per sample (numpy in, numpy out).
    gamma : float or torch.Tensor
        The focusing parameter, one or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import focal_per_sample
    >>> focal_per_sample(torch.log(torch.tensor([0.9, 0.5])), gamma=2.0).round(decimals=4)
    tensor([0.0011, 0.1733])
    """
    return -one_minus_exp(logp_true).pow(gamma) * logp_true


class Focal(CalibrationLoss):
    """Focal loss with a fixed ``gamma >= 0`` (gamma = 0 is cross-entropy): ``-(1 - p_y)^gamma
    log p_y`` (Lin et al. 2017; Mukhoti et al. 2020, Sec. 4).

    Parameters
    ----------
    gamma : float
        ``gamma >= 0``.
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import Focal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(Focal(gamma=3.0)(z, y).item(), 4), round(Focal(gamma=3.0, reduction="sum")(z, y).item(), 4)
    (0.4383, 0.8766)
    """

    name = "focal"

    def __init__(self, gamma: float = 3.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.gamma = check_number(self.name, "gamma", gamma, lo=0.0)
        self._set_params(gamma=self.gamma)

    def per_sample(self, logits, targets):
        return focal_per_sample(log_probs(logits, targets)[1], self.gamma)


class SampleDependentFocal(CalibrationLoss):
    """FLSD: gamma chosen per sample from the detached ``p_y`` (Mukhoti et al. 2020, Sec. 5).

    ``gammas[i]`` applies to ``thresholds[i-1] <= p_y < thresholds[i]`` (the reference code's
    strict ``p_y < threshold`` rule). Presets: ``flsd53`` = ((0.2,), (5, 3)) and
    ``flsd532`` = ((0.2, 0.5), (5, 3, 2)).

    Parameters
    ----------
    thresholds : sequence of float, optional
        Strictly increasing, in (0, 1); None: the preset's.
    gammas : sequence of float, optional
        One more than ``thresholds``, each >= 0; None: the preset's.
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import SampleDependentFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> SampleDependentFocal().gamma_of(torch.softmax(z, 1)[[0, 1], y]).tolist()
    [3.0, 5.0]
    """

    name = "flsd53"
    _default = ((0.2,), (5.0, 3.0))

    def __init__(self, thresholds=None, gammas=None, reduction: str = "mean"):
        super().__init__(reduction)
        thresholds = self._default[0] if thresholds is None else thresholds
        gammas = self._default[1] if gammas is None else gammas
        try:
            th = tuple(check_number(self.name, "thresholds", t, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
                       for t in thresholds)
            gs = tuple(check_number(self.name, "gammas", g, lo=0.0) for g in gammas)
        except TypeError:
            raise ValueError(f"loss {self.name!r}: 'thresholds' and 'gammas' must be sequences of numbers") from None
        if len(gs) != len(th) + 1 or any(a >= b for a, b in zip(th, th[1:])):
            raise ValueError(f"loss {self.name!r}: parameters 'thresholds' (strictly increasing, in (0, 1)) and "
                             f"'gammas' (one more than thresholds) do not fit; got {th}, {gs}")
        self.thresholds, self.gammas = th, gs
        self.register_buffer("_th", torch.tensor(th, dtype=torch.float64))
        self.register_buffer("_gam", torch.tensor(gs, dtype=torch.float64))
        self._set_params(thresholds=th, gammas=gs)

    def gamma_of(self, p_true: torch.Tensor) -> torch.Tensor:
        """Per-sample gamma for probabilities of the true class (no gradient).

        Parameters
        ----------
        p_true : torch.Tensor
            The softmax probability of each sample's true class, in [0, 1], shape ``(N,)``;
            detached before the lookup.

        Returns
        -------
        torch.Tensor
            ``gammas[i]`` for ``thresholds[i-1] <= p_true < thresholds[i]``, shape ``(N,)``,
            in ``p_true``'s dtype.
        """
        idx = torch.bucketize(p_true.detach().to(torch.float64), self._th, right=True)
        return self._gam[idx].to(p_true.dtype)

    def per_sample(self, logits, targets):
        lpt = log_probs(logits, targets)[1]
        return focal_per_sample(lpt, self.gamma_of(lpt.exp()))


class SampleDependentFocal532(SampleDependentFocal):
    """FLSD-532 (Mukhoti et al. 2020, Sec. 5): :class:`SampleDependentFocal` with three gammas,
    5 for ``p_y < 0.2``, 3 for ``0.2 <= p_y < 0.5`` and 2 above.

    Parameters
    ----------
    thresholds : sequence of float, optional
        Strictly increasing, in (0, 1); None: ``(0.2, 0.5)``.
    gammas : sequence of float, optional
        One more than ``thresholds``, each >= 0; None: ``(5, 3, 2)``.
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import SampleDependentFocal532
    >>> SampleDependentFocal532().gamma_of(torch.tensor([0.1, 0.3, 0.9])).tolist()
    [5.0, 3.0, 2.0]
    """

    name = "flsd532"
    _default = ((0.2, 0.5), (5.0, 3.0, 2.0))


class ScheduledFocal(CalibrationLoss):
    """FLS: gamma switched by epoch (Mukhoti et al. 2020, Sec. 5, "scheduled gamma").

    ``gammas[i]`` is used from epoch ``milestones[i-1] * n_epochs / reference_epochs`` on
    (integer arithmetic, so with 350 epochs the switches land exactly at 100 and 250). The
    current gamma is a buffer, so a resumed run continues with the right one.

    Parameters
    ----------
    gammas : sequence of float, optional
        One gamma per stage (None: the preset's).
    milestones : sequence of int
        Stage starts in epochs of a ``reference_epochs`` run.
    reference_epochs : int
        The schedule's length (350, the paper's).
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> from replicate.losses import ScheduledFocal
    >>> loss = ScheduledFocal(); loss.on_epoch_start(epoch=120, n_epochs=350)
    >>> loss.current_gamma.item()
    3.0
    """

    name = "fls532"
    _default_gammas = (5.0, 3.0, 2.0)

    def __init__(self, gammas=None, milestones=(100, 250), reference_epochs: int = 350,
                 reduction: str = "mean"):
        super().__init__(reduction)
        gammas = self._default_gammas if gammas is None else gammas
        try:
            gs = tuple(check_number(self.name, "gammas", g, lo=0.0) for g in gammas)
            ms = tuple(check_number(self.name, "milestones", m, lo=1, integer=True) for m in milestones)
        except TypeError:
            raise ValueError(f"loss {self.name!r}: 'gammas' and 'milestones' must be sequences") from None
        ref = check_number(self.name, "reference_epochs", reference_epochs, lo=1, integer=True)
        if len(gs) != len(ms) + 1 or any(a >= b for a, b in zip(ms, ms[1:])) or (ms and ms[-1] >= ref):
            raise ValueError(f"loss {self.name!r}: parameters 'milestones' (strictly increasing, below "
                             f"reference_epochs={ref}) and 'gammas' (one more than milestones) do not fit; "
                             f"got {ms}, {gs}")
        self.gammas, self.milestones, self.reference_epochs = gs, ms, ref
        self.register_buffer("current_gamma", torch.tensor(gs[0], dtype=torch.float64))
        self._set_params(gammas=gs, milestones=ms, reference_epochs=ref)

    def gamma_at(self, epoch: int, n_epochs: int) -> float:
        """The gamma of epoch ``epoch`` (0-based) in a run of ``n_epochs``.

        Parameters
        ----------
        epoch : int
            The epoch, 0-based.
        n_epochs : int
            The run's length in epochs; the milestones, given in epochs of a
            ``reference_epochs`` run, are rescaled to it.
        """
        stage = sum(epoch * self.reference_epochs >= m * n_epochs for m in self.milestones)
        return self.gammas[stage]

    def on_epoch_start(self, epoch: int, n_epochs: int) -> None:
        super().on_epoch_start(epoch, n_epochs)
        self.current_gamma.fill_(self.gamma_at(int(epoch), int(n_epochs)))

    def per_sample(self, logits, targets):
        lpt = log_probs(logits, targets)[1]
        return focal_per_sample(lpt, self.current_gamma.to(lpt.dtype))


class ScheduledFocal531(ScheduledFocal):
    """FLS-531 (Mukhoti et al. 2020, Sec. 5): :class:`ScheduledFocal` with gammas 5, 3 and 1
    (the last stage's 1 instead of 2).

    Parameters
    ----------
    gammas : sequence of float, optional
        One gamma per stage, each >= 0; None: ``(5, 3, 1)``.
    milestones : sequence of int
        Stage starts in epochs of a ``reference_epochs`` run, strictly increasing (default
        ``(100, 250)``).
    reference_epochs : int
        The schedule's length in epochs (default 350, the paper's).
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> from replicate.losses import ScheduledFocal531
    >>> [ScheduledFocal531().gamma_at(e, 35) for e in (0, 10, 25)]
    [5.0, 3.0, 1.0]
    """

    name = "fls531"
    _default_gammas = (5.0, 3.0, 1.0)


class InverseFocal(CalibrationLoss):
    """Inverse focal loss ``-(1 + p_y)^gamma log p_y`` (Wang et al. 2021; DFL baseline).

    Parameters
    ----------
    gamma : float
        ``gamma >= 0``.
    reduction : {"mean", "sum", "none"}
        Batch mean (default), batch sum (the papers' code, :attr:`paper_reduction`) or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import InverseFocal
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(InverseFocal(gamma=1.0, reduction="sum")(z, y).item(), 4)
    2.4008
    """

    name = "inverse_focal"

    def __init__(self, gamma: float = 1.0, reduction: str = "mean"):
        super().__init__(reduction)
        self.gamma = check_number(self.name, "gamma", gamma, lo=0.0)
        self._set_params(gamma=self.gamma)

    def per_sample(self, logits, targets):
        lpt = log_probs(logits, targets)[1]
        return -(1.0 + lpt.exp()).pow(self.gamma) * lpt


class FocalCalibration(CalibrationLoss):
    """Focal Calibration Loss (Liang et al., Def. 3.1): focal + ``lam * ||p - y||^2``.

    ``brier_scale="sum"``: the squared Euclidean distance (the book's page "The authors' code"); ``"mean"``: divided by
    the number of classes K (the paper's "mean squared norm" read literally). The reference
    code reduces with the batch mean (the default; :attr:`paper_reduction`) and uses gamma 2,
    lambda 1.

    ``norm="l1"`` replaces the calibration term by the L1 distance ``sum_k |p_k - y_k|``
    (the "Mean Absolute Error" of the paper's ablation, App. A.15, Table 8; for a one-hot
    ``y`` it equals ``2 (1 - p_y)``), divided by K under ``brier_scale="mean"``. The
    default ``"l2"`` is left out of :meth:`config`, so the run keys of L2 runs are those
    of the loss before the option existed.

    Parameters
    ----------
    gamma : float
        Focal ``gamma >= 0``.
    lam : float
        Weight ``lambda >= 0`` of the calibration term.
    brier_scale : {"sum", "mean"}
        The distance summed over the classes, or divided by K.
    norm : {"l2", "l1"}
        Squared Euclidean or L1 distance.
    reduction : {"mean", "sum", "none"}
        Batch mean (default; also the papers' code), batch sum or per sample.

    Example
    -------
    >>> import torch; from replicate.losses import FocalCalibration
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(FocalCalibration(gamma=2.0, lam=1.0)(z, y).item(), 4)
    1.129
    """

    name = "fcl"
    paper_reduction = "mean"

    def __init__(self, gamma: float = 2.0, lam: float = 1.0, brier_scale: str = "sum", norm: str = "l2",
                 reduction: str = "mean"):
        super().__init__(reduction)
        self.gamma = check_number(self.name, "gamma", gamma, lo=0.0)
        self.lam = check_number(self.name, "lam", lam, lo=0.0)
        self.brier_scale = check_choice(self.name, "brier_scale", brier_scale, ("sum", "mean"))
        self.norm = check_choice(self.name, "norm", norm, ("l2", "l1"))
        self._set_params(gamma=self.gamma, lam=self.lam, brier_scale=self.brier_scale)
        if self.norm != "l2":
            self._set_params(norm=self.norm)

    def per_sample(self, logits, targets):
        logp, lpt = log_probs(logits, targets)
        p = logp.exp()
        diff = p - one_hot(targets, p)
        dist = diff.abs().sum(dim=1) if self.norm == "l1" else diff.pow(2).sum(dim=1)
        if self.brier_scale == "mean":
            dist = dist / logits.shape[1]
        return focal_per_sample(lpt, self.gamma) + self.lam * dist
