"""Argument checks shared by the modules: one wording for one kind of bad input.

- :func:`positive_int` -- a count (an integer >= 1, or >= ``lo``).
- :func:`gamma` / :func:`gammas` -- the focal parameter ``gamma`` of ``-(1 - p)^gamma log p``
  (Mukhoti et al. 2020, Eq. 2), one number or an array of them: finite and >= 0 by
  default; focal temperature scaling allows ``gamma > -1`` (Komisarenko & Kull 2024,
  Prop. 4: the calibration weights stay positive exactly there).
- :func:`probabilities` -- values in [0, 1]; :func:`simplex` -- probability vectors with the
  classes on the last axis (summing to 1 unless ``normalised=False``).

Every check returns the value in the form the caller computes with (int, float or float64
array) and raises a ValueError that names the parameter and what it must be.
"""
from __future__ import annotations

import math

import numpy as np


def positive_int(name: str, value, lo: int = 1) -> int:
    """``value`` as an int if it is an integer >= ``lo`` (not a bool); else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        what = "a positive integer" if lo == 1 else f"an integer >= {lo}"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def _gamma_rule(lo: float, strict: bool) -> str:
    return f"{'>' if strict else '>='} {lo:g}"


def gamma(value, *, name: str = "gamma", lo: float = 0.0, strict: bool = False, why: str = "") -> float:
    """The focal parameter as a float: a finite real number ``>= lo`` (``> lo`` when
    ``strict``); else ValueError naming ``name`` (and ``why``, the reason for the bound)."""
    rule = _gamma_rule(lo, strict)
    try:
        g = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number {rule}, got {value!r}") from None
    if not math.isfinite(g) or g < lo or (strict and g <= lo):
        raise ValueError(f"{name} must be a finite real number {rule}{why}, got {value!r}")
    return g


def gammas(value, *, name: str = "gamma", lo: float = 0.0, strict: bool = False, why: str = "") -> np.ndarray:
    """:func:`gamma` for a number or an array of them: a float64 array, every value finite
    and ``>= lo`` (``> lo`` when ``strict``)."""
    rule = _gamma_rule(lo, strict)
    try:
        g = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or array {rule}, got {value!r}") from None
    if not np.all(np.isfinite(g) & ((g > lo) if strict else (g >= lo))):
        raise ValueError(f"{name} must be finite and {rule}{why}, got {value!r}")
    return g


def probabilities(p, name: str = "p") -> np.ndarray:
    """``p`` as a float64 array of values in [0, 1] (no NaN); else ValueError naming ``name``."""
    a = np.asarray(p, dtype=np.float64)
    if not np.all((a >= 0) & (a <= 1)):
        raise ValueError(f"{name} must hold probabilities in [0, 1] (finite, no NaN)")
    return a


def simplex(x, name: str = "eta", *, normalised: bool = True, atol: float = 1e-6) -> np.ndarray:
    """Probability vectors with the classes on the last axis (at least 2), each value in
    [0, 1] and, when ``normalised``, each vector summing to 1 within ``atol``; a float64 array."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim < 1 or a.shape[-1] < 2:
        raise ValueError(f"{name} must have the classes on the last axis (>= 2 classes), got shape {a.shape}")
    probabilities(a, name)
    if normalised and np.any(np.abs(a.sum(-1) - 1.0) > atol):
        raise ValueError(f"{name} must sum to 1 along the last axis (within {atol:g})")
    return a
