"""The fitted post-hoc map of :mod:`replicate.posthoc`: :class:`Calibrator`."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .. import checks
from .. import metrics as _metrics
from ..array_io import numpy_native
from ._inputs import _check_choice, _check_logits, _check_T
from .fts import LINKS, check_clamp, fts_probs

__all__ = ["Calibrator"]


@dataclass(frozen=True)
class Calibrator:
    """A fitted post-hoc map from logits to probabilities.

    ``name`` is ``"temperature"`` (params ``{"T"}``) or ``"focal_temperature"`` (params
    ``{"T", "gamma"}``, optionally ``"link"`` and ``"clamp"`` of
    :func:`replicate.posthoc.fts.fts_probs`); ``metric`` is the validation selection
    criterion and ``score`` its value at the chosen parameters; ``search`` holds every
    candidate and its score.

    Parameters
    ----------
    name : {"temperature", "focal_temperature"}
        The map.
    params : dict
        Its parameters (above).
    metric : str
        The validation criterion that chose them.
    score : float
        Its value there.
    search : pandas.DataFrame, optional
        Every candidate and its score (grid fits).

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> cal = fit_temperature(z, y, method="grid", metric="ece")
    >>> cal.name, cal.params, cal(z).shape
    ('temperature', {'T': 3.9}, (3, 3))
    """

    name: str
    params: dict
    metric: str
    score: float
    search: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        _check_choice("name", self.name, ("temperature", "focal_temperature"))
        _check_T(self.params.get("T"))
        if self.name == "focal_temperature":
            checks.gamma(self.params.get("gamma"), lo=-1.0, strict=True)
            _check_choice("link", self.params.get("link", "intended"), LINKS)
            check_clamp(self.params.get("clamp"))

    @property
    def T(self) -> float:
        return float(self.params["T"])

    @property
    def gamma(self) -> float | None:
        return None if "gamma" not in self.params else float(self.params["gamma"])

    def __call__(self, logits, *, is_probs: bool = False):
        """Calibrated probabilities (float64, shape of ``logits``).

        Parameters
        ----------
        logits : array_like or torch.Tensor
            Shape (N, K); numpy in, numpy out; tensor in, tensor out (same device).
        is_probs : bool
            True: ``logits`` holds probabilities (their logs are scaled); False: probabilities
            raise a ValueError.
        """
        return _apply(logits, self, is_probs)


@numpy_native
def _apply(logits, cal: Calibrator, is_probs: bool):
    z = _check_logits(logits, is_probs=is_probs, where="Calibrator")
    if cal.name == "focal_temperature":
        return fts_probs(z, cal.T, cal.gamma, cal.params.get("link", "intended"), cal.params.get("clamp"))
    return _metrics.probs_from_logits(z, temperature=cal.T)
