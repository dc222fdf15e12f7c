"""Closest temperatures and their linear fits (Komisarenko & Kull 2024, Sec. 3.2-3.3, Figs. 2,
5-7), each with an estimate of its own numerical error, and the comparison of our numbers
with the paper's printed ones.

The closest temperature of :func:`~replicate.theory.fts.bounds.closest_temperature` is a
minimax over a grid of logits with step ``h``, found by a bounded scalar search on ``1/T``
to ``XATOL``. Our error estimate for every fitted number is the change when the logit step
is doubled (``h`` to ``2h``, a subgrid, so the maximum can only fall) plus, for lines, the
change when every second gamma is dropped, plus the optimiser's tolerance propagated
(``|dT| <= XATOL T^2``; ``|d dev| <= XATOL * lim``, since a softmax coordinate of logits in
``[-lim, lim]`` moves by at most ``2 lim / 4`` per unit of ``1/T``). A maximum deviation is a
minimax over a finite grid: a finer grid can only raise it, so below it only the
optimiser's tolerance applies (``err_dev`` is the pair ``(below, above)``).

A printed number with ``d`` decimals agrees with ours when they differ by at most half a
unit of its last digit (it was rounded) plus our error; the reading that it was truncated
is checked too (:func:`printed_numbers`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...claims import check, readings, untested

if TYPE_CHECKING:
    from ...claims.vocabulary import Outcome
from .bounds import closest_temperature, linear_fit, logit_grid, temperature_fits

__all__ = ["XATOL", "fit_with_error", "closest_with_error", "printed_numbers"]

#: The bounded scalar search's tolerance on 1/T in :func:`closest_temperature`.
XATOL = 1e-7


def _dev_tol(lim: float) -> float:
    return XATOL * lim


def fit_with_error(gammas, n_classes: int, step: float, lim: float = 5.0, *, stride: int = 1) -> dict:
    """Closest ``T`` and max deviation per gamma on the logit grid with ``step`` (in
    ``[-lim, lim]``), the least-squares line of ``1/T`` on gamma, and error estimates
    (``err_*``): the grid with step ``2 step`` is evaluated on every ``stride``-th gamma."""
    g = np.asarray(gammas, float)
    T, dev = temperature_fits(g, logit_grid(n_classes, step, lim))
    T2, dev2 = temperature_fits(g[::stride], logit_grid(n_classes, 2 * step, lim))
    slope, intercept, resid = linear_fit(g, 1 / T)
    s_sub, i_sub, _ = linear_fit(g[::stride], 1 / T[::stride])
    s2, i2, _ = linear_fit(g[::stride], 1 / T2)
    s_half, i_half, _ = linear_fit(g[::2], 1 / T[::2])
    err_t = float(np.abs(T[::stride] - T2).max() + XATOL * T.max() ** 2)
    return dict(gammas=g, T=T, dev=dev, slope=slope, intercept=intercept, max_residual=resid,
                err_T=err_t, err_dev=(_dev_tol(lim), float(np.abs(dev[::stride] - dev2).max() + _dev_tol(lim))),
                err_slope=float(abs(s_sub - s2) + abs(slope - s_half)),
                err_intercept=float(abs(i_sub - i2) + abs(intercept - i_half)), step=step, lim=lim)


def closest_with_error(gamma: float, n_classes: int, step: float, lim: float = 5.0):
    """``(T, err_T, dev, err_dev)`` at one gamma, errors as in :func:`fit_with_error`."""
    t, d = closest_temperature(gamma, logit_grid(n_classes, step, lim))
    t2, d2 = closest_temperature(gamma, logit_grid(n_classes, 2 * step, lim))
    return t, abs(t - t2) + XATOL * t * t, d, (_dev_tol(lim), abs(d - d2) + _dev_tol(lim))


def _interval(ours, err):
    below, above = (err, err) if np.isscalar(err) else err
    return ours - below, ours + above


def _reading(items, printed_interval) -> "Outcome":
    """``fails`` when some true value cannot be in the printed interval (our interval misses
    it), ``holds`` when every one can and our interval is no wider than the printed one
    (we computed at least as precisely as the paper printed), else ``not tested``."""
    spans = []
    for ours, err, printed, decimals in items:
        lo, hi = _interval(ours, err)
        p_lo, p_hi = printed_interval(printed, 10.0 ** -int(decimals))
        if hi < p_lo or lo > p_hi:
            return check(False)
        spans.append((hi - lo) / (p_hi - p_lo))
    if max(spans) <= 1:
        return check(True)
    return untested(f"consistent, but our numerical error is {max(spans):.0f}x the printed precision; "
                    "a finer profile can decide")


def printed_numbers(*items):
    """The verdict on printed numbers ``(ours, error, printed, decimals)``; ``error`` is
    symmetric or a pair ``(below, above)``: the true value lies in
    ``[ours - below, ours + above]``. The printed number is read as rounded (the true value
    lies within half a unit of its last digit) and as truncated (within one unit above it):
    a reading fails when some true value cannot lie in its printed interval, holds when all
    can and our intervals are no wider than the printed ones, and is not tested otherwise.
    The two readings are combined by :func:`replicate.claims.readings` (one verdict when they
    agree)."""
    if not items:
        raise ValueError("printed_numbers needs at least one (ours, error, printed, decimals)")
    rounded = _reading(items, lambda p, u: (p - u / 2, p + u / 2))
    truncated = _reading(items, lambda p, u: (p, p + u))
    return rounded if rounded == truncated else readings(rounded=rounded, truncated=truncated)
