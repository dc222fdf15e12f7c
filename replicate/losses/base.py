"""The common interface of every training loss: :class:`CalibrationLoss`.

A loss is a :class:`torch.nn.Module` called as ``loss(logits, targets)`` and returning a
scalar. Its adaptive state (AdaFocal's per-bin gammas, the scheduled gamma of FLS) lives
in registered buffers, so ``state_dict()`` / ``load_state_dict()`` resume a run exactly.

Reduction (issue #31, item 1): every loss takes ``reduction`` in ``{"mean", "sum", "none"}``
with ``"mean"`` as default, as ``torch.nn`` losses do: the batch mean, the batch sum, or the
per-sample values of shape ``(N,)``. The papers' code reduces otherwise (the book's page
"The authors' code"): the reference code of Mukhoti et al. (2020), AdaFocal and DFL *sum*
the per-sample losses over the batch, Brier is a batch mean, FCL uses the mean. Each loss
names its papers' reduction in :attr:`CalibrationLoss.paper_reduction`
(:func:`replicate.losses.paper_reduction`); the book's protocol passes it explicitly
(:func:`replicate.runs.resolve` fills it into every run configuration that does not set
``reduction``), so the book's runs, their keys and its numbers do not depend on the default.

Inputs (item 2): ``loss(logits, targets)`` takes torch tensors (with autograd) or numpy
arrays (numpy in, numpy out: the value as a numpy array, no autograd). Probabilities given
as logits - every entry in [0, 1] and every row summing to 1 within 1e-6 - raise a
ValueError at once; inside the training engine's steps (``deferred_checks``, set by
:func:`replicate.training.train`) they are counted on the device, like the non-finite
losses, and raised by the next :meth:`CalibrationLoss.check_finite`, so that a training
step never synchronises.

Health check without host syncs: every forward adds "this loss was not finite" to an
on-device counter; :meth:`CalibrationLoss.check_finite`, called once per epoch, reads it
(one sync) and raises :class:`LossDivergedError` with a clear message.

Graph safety (:attr:`CalibrationLoss.graph_safe`): the training engine may capture the
whole training step, loss included, as a CUDA graph and replay it (issue #13,
:mod:`replicate.training.steps`). A loss is safe to capture when its forward and backward
(i) never synchronise with the host - no ``.item()``, no Python ``if`` on a tensor, no
tensor built from Python numbers on the device - and (ii) keep every value that changes
between epochs in a registered buffer updated *in place* (``copy_``/``fill_``), so the
replayed kernels read the current value at the same address. Every loss of the package
is written so: data-dependent choices are branch-free (FLSD's gamma by ``bucketize``,
DFL's ``p_j`` by ``where`` + ``topk``, MMCE's "no correct or no incorrect sample" case by
``where``, AdaFocal's bin lookup by ``bucketize`` on the ``edges`` buffer), and the
per-epoch hooks change buffers in place. A subclass that cannot be captured sets
``graph_safe = False`` and says why in ``graph_unsafe_reason``; the engine then runs the
step eagerly and records the reason.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from ..array_io import PROBS_ATOL, ProbabilitiesAsLogitsError, reject_probs, torch_native

REDUCTIONS = ("mean", "sum", "none")
# 1 - p is clamped below at this value before it is raised to a power: at p == 1 (a
# saturated softmax) the derivative of x**gamma (gamma < 1) is infinite at x = 0. The
# AdaFocal reference code adds 1e-20 for the same reason. The clamp passes zero gradient,
# and the true gradient there is zero anyway (dp/dz = 0 at p = 1).
BASE_EPS = 1e-20


class LossDivergedError(RuntimeError):
    """A training loss became NaN/inf, or an adaptive gamma left its allowed range."""


def check_number(loss: str, name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False,
                 integer=False) -> float | int:
    """Validate a scalar parameter; raise ValueError naming it and its allowed range."""
    lo_s = "-inf" if lo is None else f"{lo:g}"
    hi_s = "inf" if hi is None else f"{hi:g}"
    rng = f"{'(' if lo_open or lo is None else '['}{lo_s}, {hi_s}{')' if hi_open or hi is None else ']'}"
    kind = "an integer" if integer else "a finite number"
    msg = f"loss {loss!r}: parameter {name!r} must be {kind} in {rng}; got {value!r}"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(msg)
    if integer and not float(value).is_integer():
        raise ValueError(msg)
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(msg)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(msg)
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(msg)
    return int(v) if integer else v


def check_choice(loss: str, name: str, value, choices) -> str:
    """Validate a categorical parameter; raise ValueError listing the allowed values."""
    if value not in choices:
        raise ValueError(f"loss {loss!r}: parameter {name!r} must be one of {list(choices)}; got {value!r}")
    return value


def log_probs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log_softmax(logits), log p_true)`` with shapes ``(N, K)`` and ``(N,)``."""
    logp = F.log_softmax(logits, dim=1)
    return logp, logp.gather(1, targets.view(-1, 1)).squeeze(1)


def one_hot(targets: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """One-hot rows shaped and typed like ``like`` (scatter: no host sync, unlike some one_hot paths)."""
    return torch.zeros_like(like).scatter_(1, targets.view(-1, 1), 1.0)


def one_minus_exp(logp: torch.Tensor) -> torch.Tensor:
    """``1 - exp(logp)`` computed as ``-expm1(logp)`` (accurate near p = 1), clamped at BASE_EPS."""
    return (-torch.expm1(logp)).clamp_min(BASE_EPS)


_PROBS_HINT = "pass logits (log-probabilities will do: torch.log(probs))"


def _probs_flag(logits: torch.Tensor) -> torch.Tensor:
    """On-device bool: every entry in [0, 1] and every row summing to 1 within PROBS_ATOL."""
    in_unit = ((logits >= 0) & (logits <= 1)).all()
    sums = ((logits.to(torch.float64).sum(dim=1) - 1).abs() <= PROBS_ATOL).all()
    return in_unit & sums


class CalibrationLoss(torch.nn.Module):
    """Base class: ``forward(logits (N, K), targets (N,))`` reduced by ``reduction``.

    Subclasses implement :meth:`per_sample` (unreduced ``(N,)`` losses) or override
    :meth:`_compute` when the loss is not a sum of per-sample terms (MMCE).

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}
        ``"mean"`` (default, as ``torch.nn``): the batch mean; ``"sum"``: the batch sum
        (what the papers' code does for most losses, :attr:`paper_reduction`); ``"none"``:
        the per-sample values, shape ``(N,)``.

    Example
    -------
    >>> import torch; from replicate.losses import CalibrationLoss, get_loss
    >>> isinstance(get_loss('adafocal'), (CalibrationLoss, torch.nn.Module))
    True
    """

    name: ClassVar[str] = ""
    needs_validation: ClassVar[bool] = False
    #: How the papers' code reduces this loss over a batch (the book's page "The authors' code");
    #: the book's protocol passes it explicitly. Not the default, which is always "mean".
    paper_reduction: ClassVar[str] = "sum"
    #: True when a training step with this loss can be captured as a CUDA graph (module docstring).
    graph_safe: ClassVar[bool] = True
    graph_unsafe_reason: ClassVar[str] = ""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = check_choice(self.name, "reduction", reduction, REDUCTIONS)
        self._params: dict = {}
        self.register_buffer("_nonfinite", torch.zeros((), dtype=torch.long), persistent=False)
        self.register_buffer("_probs_like", torch.zeros((), dtype=torch.long), persistent=False)
        #: True while the training engine runs its steps (:func:`replicate.training.train`): the
        #: probabilities-as-logits check is then counted on the device and raised by
        #: :meth:`check_finite`, so that a step never reads a value back to the host.
        self.deferred_checks = False

    # -- parameters -------------------------------------------------------------------
    def _set_params(self, **params) -> None:
        self._params.update(params)

    def config(self) -> dict:
        """The loss name and all its parameters (JSON-serialisable), for run keys."""
        out = {"name": self.name, "reduction": self.reduction}
        for k, v in self._params.items():
            out[k] = list(v) if isinstance(v, tuple) else v
        return out

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.config().items() if k != "name")

    # -- computation ------------------------------------------------------------------
    def _prepare(self, logits: torch.Tensor, targets: torch.Tensor):
        if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
            raise ValueError(f"loss {self.name!r}: logits must be a 2-d tensor or array (N, K); "
                             f"got shape {tuple(getattr(logits, 'shape', ()))}")
        if not isinstance(targets, torch.Tensor) or targets.dim() != 1 or targets.shape[0] != logits.shape[0]:
            raise ValueError(f"loss {self.name!r}: targets must be a 1-d tensor or array of N = {logits.shape[0]} "
                             f"class indices; got shape {tuple(getattr(targets, 'shape', ()))}")
        if targets.dtype.is_floating_point or targets.dtype == torch.bool:
            raise ValueError(f"loss {self.name!r}: targets must hold integer class indices; got {targets.dtype}")
        if logits.shape[1] < 2:
            raise ValueError(f"loss {self.name!r}: need at least 2 classes; got K = {logits.shape[1]}")
        if logits.dtype in (torch.float16, torch.bfloat16):
            logits = logits.float()
        if self._nonfinite.device != logits.device:
            self.to(logits.device)
        if self.deferred_checks:  # inside the engine's steps: no host synchronisation, raised by check_finite
            with torch.no_grad():
                self._probs_like.add_(_probs_flag(logits.detach()).long())
        else:
            reject_probs(logits, where=f"loss {self.name!r}", hint=_PROBS_HINT)
        return logits, targets.long()

    def per_sample(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The unreduced loss of each sample, shape ``(N,)`` (what ``reduction="none"`` returns).

        Parameters
        ----------
        logits : torch.Tensor
            Unnormalised scores, shape ``(N, K)``, already checked by :meth:`forward`.
        targets : torch.Tensor
            Class indices in ``[0, K)``, shape ``(N,)``, dtype long.

        Returns
        -------
        torch.Tensor
            Shape ``(N,)``, with autograd.
        """
        raise TypeError(f"{type(self).__name__} defines no per-sample loss")

    def _reduce(self, values: torch.Tensor) -> torch.Tensor:
        if self.reduction == "none":
            return values
        return values.sum() if self.reduction == "sum" else values.mean()

    def _compute(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self._reduce(self.per_sample(logits, targets))

    @torch_native
    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The loss of ``logits`` (N, K) against integer ``targets`` (N,), reduced by ``reduction``.

        Parameters
        ----------
        logits : torch.Tensor or numpy.ndarray
            Unnormalised scores, shape (N, K); not probabilities (ValueError).
        targets : torch.Tensor or numpy.ndarray
            Class indices in [0, K), shape (N,).

        Returns
        -------
        torch.Tensor or numpy.ndarray
            A scalar (``"mean"``, ``"sum"``) or shape ``(N,)`` (``"none"``); numpy when
            ``logits`` is numpy.
        """
        logits, targets = self._prepare(logits, targets)
        loss = self._compute(logits, targets)
        with torch.no_grad():
            self._nonfinite.add_((~torch.isfinite(loss.detach())).any().long())
        return loss

    # -- training-loop hooks ------------------------------------------------------------
    def on_epoch_start(self, epoch: int, n_epochs: int) -> None:
        """Called by the trainer before each epoch; a no-op unless the loss is scheduled.

        Parameters
        ----------
        epoch : int
            The epoch about to start, 0-based, ``>= 0``.
        n_epochs : int
            The run's number of epochs, ``>= 1`` (a schedule given in the reference's epochs is
            rescaled to it).
        """
        check_number(self.name, "epoch", epoch, lo=0, integer=True)
        check_number(self.name, "n_epochs", n_epochs, lo=1, integer=True)

    def update_from_validation(self, val_logits: torch.Tensor, val_labels: torch.Tensor) -> dict:
        """Per-epoch update from validation predictions; a no-op (empty dict) unless adaptive.

        Parameters
        ----------
        val_logits : torch.Tensor or numpy.ndarray
            The validation set's logits after the epoch, shape ``(N, K)``.
        val_labels : torch.Tensor or numpy.ndarray
            Its class indices, shape ``(N,)``.

        Returns
        -------
        dict
            The new state (an adaptive loss's per-bin gammas, gaps, ...); empty here.
        """
        return {}

    def _check_state(self) -> None:
        """Subclasses with adaptive state raise LossDivergedError when it is out of range."""

    def check_finite(self) -> bool:
        """Raise LossDivergedError if a loss since the last call was NaN/inf or the state is bad.

        One host sync per call; meant to be called once per epoch. Returns True when healthy.
        """
        bad = int(self._nonfinite.item())
        self._nonfinite.zero_()
        probs_like = int(self._probs_like.item())
        self._probs_like.zero_()
        if probs_like:
            raise ProbabilitiesAsLogitsError(f"loss {self.name!r}: in {probs_like} call(s) since the last check the "
                                             f"logits looked like probabilities (every entry in [0, 1], every row "
                                             f"summing to 1 within {PROBS_ATOL:g}); {_PROBS_HINT}")
        if bad:
            raise LossDivergedError(f"loss {self.name!r} was NaN or infinite in {bad} training step(s) "
                                    "since the last check; lower the learning rate or check the inputs")
        self._check_state()
        return True
