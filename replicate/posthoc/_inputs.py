"""Input checks and conventions shared by the post-hoc fits of :mod:`replicate.posthoc`.

* Scores (issue #31, item 2): logits as numpy arrays, nested lists or torch tensors (any
  device); probabilities given where logits are expected raise a one-line ValueError
  unless ``is_probs=True``, which takes ``log p`` as the logits (temperature scaling of
  probabilities: ``softmax(log p / T)``, the recipe netcal applies to probabilities).
* Search limits (item 1): a fit whose chosen temperature is the end of its search - a
  bound of the continuous fit, the first or last temperature of a grid - warns with
  :class:`SearchLimitWarning`, naming the limit.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import binning as _b
from ..array_io import reject_probs

__all__ = ["SearchLimitWarning"]

_TIE_RTOL = 1e-12
# log of the smallest positive double: where a probability 0 goes with is_probs=True
_LOG_TINY = math.log(np.finfo(np.float64).tiny)


class SearchLimitWarning(UserWarning):
    """A post-hoc fit chose the end of its search range; the optimum may lie beyond it."""


def _check_T(T: Any, name: str = "T") -> float:
    try:
        t = float(T)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {T!r}") from None
    if not math.isfinite(t) or t <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {T!r}")
    return t


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _check_logits(logits, *, is_probs: bool = False, where: str = "posthoc") -> np.ndarray:
    """(N, K) float64 logits from logits (numpy, list or tensor), or from probabilities
    with ``is_probs=True`` (their logs; 0 becomes the log of the smallest positive double)."""
    if _check_flag("is_probs", is_probs):
        p = _b.as_probs(logits, "probs").astype(np.float64)
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(p), _LOG_TINY)
    z = _b.to_numpy(logits, "logits")
    if z.dtype.kind not in "fiu" or z.dtype.kind == "b":
        raise ValueError(f"logits must hold real numbers, got dtype {z.dtype}")
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] < 1:
        raise ValueError(f"logits must have shape (n_samples, n_classes) with n_classes >= 2, "
                         f"got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits must be finite (no NaN or inf)")
    reject_probs(z, where=where, hint="pass is_probs=True to calibrate probabilities")
    return z


def _check_labels(labels, z: np.ndarray) -> np.ndarray:
    y = _b.to_numpy(labels, "labels")
    if y.ndim != 1 or len(y) != len(z):
        raise ValueError(f"labels must be 1-D with one entry per row of logits ({len(z)}), "
                         f"got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= z.shape[1]:
        raise ValueError(f"labels must lie in [0, n_classes) = [0, {z.shape[1]})")
    return y.astype(np.int64)


def _check_grid(grid, name: str) -> np.ndarray:
    g = np.asarray(grid, dtype=np.float64).ravel()
    if g.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of temperatures")
    for t in g:
        _check_T(t, name=f"every value of {name}")
    return np.unique(g)                      # ascending, so 'first minimum' = smallest T


def _check_bounds(bounds) -> tuple[float, float]:
    msg = f"bounds must be two finite temperatures 0 < low < high, got {bounds!r}"
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo < hi):
        raise ValueError(msg)
    return lo, hi


def _check_choice(name: str, value, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def _first_min(scores: np.ndarray) -> int:
    """Index of the first minimum, treating scores within a relative 1e-12 as ties."""
    finite = np.isfinite(scores)
    if not finite.any():
        raise ValueError("every candidate has a non-finite validation score")
    best = scores[finite].min()
    tol = _TIE_RTOL * max(1.0, abs(best))
    return int(np.flatnonzero(finite & (scores <= best + tol))[0])


def _warn_grid_limit(where: str, metric: str, t: float, temps: np.ndarray, stacklevel: int = 3) -> None:
    """SearchLimitWarning when ``t`` is the smallest or largest of (at least two) ``temps``."""
    if temps.size < 2 or temps[0] < t < temps[-1]:
        return
    end = "smallest" if t <= temps[0] else "largest"
    warnings.warn(f"{where}: the validation {metric} is smallest at T = {t:g}, the {end} temperature of the "
                  f"grid ({temps[0]:g} .. {temps[-1]:g}); the optimum may lie beyond it - widen the grid",
                  SearchLimitWarning, stacklevel=stacklevel)


def _warn_bound(where: str, t: float, lo: float, hi: float, tol: float) -> None:
    """SearchLimitWarning when the continuous fit's ``t`` is within ``tol`` (in log T) of a bound."""
    if math.log(t) - math.log(lo) > tol and math.log(hi) - math.log(t) > tol:
        return
    end = lo if math.log(t) - math.log(lo) <= tol else hi
    warnings.warn(f"{where}: the validation NLL is smallest at the search limit T = {end:g} (bounds = "
                  f"({lo:g}, {hi:g})); the optimum may lie beyond it - pass wider bounds",
                  SearchLimitWarning, stacklevel=3)
