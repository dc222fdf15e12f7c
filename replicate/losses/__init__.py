"""Every training loss of the five papers behind one registry: ``get_loss(name, **params)``.

===================  ============================================================  =========
name                 loss (paper, equation)                                        papers'
===================  ============================================================  =========
``cross_entropy``    ``-log p_y``                                                  sum
``brier``            ``sum_k (p_k - y_k)^2`` (Brier 1950)                          mean
``mmce``             ``N (CE_mean + lam MMCE_w)`` (Kumar et al. 2018)              sum
``label_smoothing``  CE against ``(1-eps) onehot + eps/K`` (Mueller et al. 2019)   sum
``focal``            ``-(1-p_y)^gamma log p_y`` (Lin et al. 2017; Mukhoti Sec. 4)  sum
``flsd53/flsd532``   sample-dependent gamma 5/3 (/2) (Mukhoti Sec. 5)              sum
``fls531/fls532``    gamma scheduled 5/3/1 or 5/3/2 by epoch (Mukhoti Sec. 5)      sum
``calfocal``         CalFocal cases 1 and 2 (Ghosh et al. 2022, Eqs. 1-2)          sum
``adafocal``         AdaFocal, Eq. 4 or the authors' code (Ghosh et al. 2022)      sum
``inverse_focal``    ``-(1+p_y)^gamma log p_y`` (Wang et al. 2021)                 sum
``dual_focal``       DFL + Table 4 ablation variants (Tao et al. 2023, Eq. 3)      sum
``adadual_focal``    AdaFocal's gammas on DFL (Tao et al. 2023, Sec. 5.2)          sum
``fcl``              focal + ``lam ||p - y||^2`` (Liang et al., Def. 3.1)          mean
===================  ============================================================  =========

Every loss takes ``reduction`` in ``{"mean", "sum", "none"}``, ``"mean"`` by default as in
``torch.nn``. The last column is the reduction of the papers' code
(:func:`paper_reduction`), which the book's protocol passes explicitly
(:func:`replicate.runs.resolve`). Every loss takes torch tensors or numpy arrays (numpy in,
numpy out) and rejects probabilities given as logits (:mod:`.base`).

Every loss is a :class:`CalibrationLoss` (``torch.nn.Module``); see :mod:`.base` for the
trainer hooks (``on_epoch_start``, ``update_from_validation``, ``check_finite``, ``config``).
"""
from __future__ import annotations

import inspect

from .adaptive import AdaDualFocal, AdaFocal, CalFocal
from .base import CalibrationLoss, LossDivergedError
from .dual import DUAL_FOCAL_GAMMAS, DUAL_VARIANTS, DualFocal, dual_term
from .focal import (Focal, FocalCalibration, InverseFocal, SampleDependentFocal, SampleDependentFocal532,
                    ScheduledFocal, ScheduledFocal531, focal_per_sample)
from .gamma_bins import adafocal_gamma_update, assign_bins, bin_statistics, equal_mass_edges
from .standard import MMCE, Brier, CrossEntropy, LabelSmoothing, mmce_weighted

LOSSES: dict[str, type[CalibrationLoss]] = {cls.name: cls for cls in (
    CrossEntropy, Brier, MMCE, LabelSmoothing, Focal, SampleDependentFocal, SampleDependentFocal532,
    ScheduledFocal531, ScheduledFocal, CalFocal, AdaFocal, InverseFocal, DualFocal, AdaDualFocal,
    FocalCalibration)}


def available_losses() -> list[str]:
    """The registered loss names.

    Example
    -------
    >>> from replicate.losses import available_losses
    >>> available_losses()[:5]
    ['cross_entropy', 'brier', 'mmce', 'label_smoothing', 'focal']
    """
    return list(LOSSES)


def loss_parameters(name: str) -> list[str]:
    """The parameter names ``get_loss(name, ...)`` accepts.

    Parameters
    ----------
    name : str
        A registered loss name (:func:`available_losses`); an unknown name raises a ValueError
        listing them.

    Example
    -------
    >>> from replicate.losses import loss_parameters
    >>> loss_parameters('focal')
    ['gamma', 'reduction']
    """
    cls = _lookup(name)
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def paper_reduction(name: str) -> str:
    """How the papers' code reduces loss ``name`` over a batch: ``"sum"``, or ``"mean"`` for
    Brier and FCL (the book's page "The authors' code"); what the book's runs pass.

    Parameters
    ----------
    name : str
        A registered loss name (:func:`available_losses`).

    Example
    -------
    >>> from replicate.losses import get_loss, paper_reduction
    >>> paper_reduction('focal'), paper_reduction('fcl'), get_loss('focal').reduction
    ('sum', 'mean', 'mean')
    """
    return _lookup(name).paper_reduction


def _lookup(name: str) -> type[CalibrationLoss]:
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; available: {', '.join(LOSSES)}")
    return LOSSES[name]


def get_loss(name: str, **params) -> CalibrationLoss:
    """Build the loss ``name`` with ``params``; ValueError for unknown names or parameters.

    Parameters
    ----------
    name : str
        A registered loss name (:func:`available_losses`).
    **params
        The loss's parameters (:func:`loss_parameters`); ``reduction`` defaults to ``"mean"``.

    Example
    -------
    >>> import torch; from replicate.losses import get_loss
    >>> z, y = torch.tensor([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3]]), torch.tensor([0, 2])
    >>> round(get_loss('focal', gamma=3)(z, y).item(), 4)
    0.4383
    >>> round(get_loss('focal', gamma=3, reduction='sum')(z, y).item(), 4)
    0.8766
    """
    allowed = loss_parameters(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"loss {name!r}: unknown parameter(s) {unknown}; allowed: {allowed}")
    return LOSSES[name](**params)


__all__ = [
    "LOSSES", "available_losses", "get_loss", "loss_parameters", "paper_reduction", "CalibrationLoss",
    "LossDivergedError",
    "CrossEntropy", "Brier", "MMCE", "LabelSmoothing", "Focal", "SampleDependentFocal",
    "SampleDependentFocal532", "ScheduledFocal", "ScheduledFocal531", "InverseFocal", "FocalCalibration",
    "CalFocal", "AdaFocal", "AdaDualFocal", "DualFocal", "adafocal_gamma_update", "equal_mass_edges",
    "assign_bins", "bin_statistics", "mmce_weighted", "focal_per_sample", "dual_term", "DUAL_FOCAL_GAMMAS",
    "DUAL_VARIANTS",
]
