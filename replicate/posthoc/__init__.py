"""Post-hoc calibration: temperature scaling and focal temperature scaling.

Temperature scaling {cite}`guo2017calibration` divides the logits by one scalar ``T`` fitted
on held-out validation data: ``p = softmax(z / T)``. It never changes the predicted class.

Two ways of fitting ``T`` are provided:

- ``method="nll"`` (the default) -- Guo et al.'s recipe: the continuous minimiser of the
  validation NLL. NLL is convex in ``1/T``, so the bounded 1-D search over ``log T``
  (:func:`scipy.optimize.minimize_scalar`) finds the global minimum on ``bounds``
  (default ``[1e-2, 1e2]``).
- ``method="grid"`` -- what the public code of Mukhoti et al. {cite}`mukhoti2020focal`,
  AdaFocal {cite}`ghosh2022adafocal` and Dual Focal Loss {cite}`tao2023dual` does:
  ``T = 0.1, 0.2, ..., 10.0`` (:data:`TS_GRID`), keep the ``T`` with the smallest
  validation ECE (15 equal-width bins); ties keep the smaller ``T`` (their loop updates
  only on a strict improvement). ``metric="nll"`` or ``"adaece"`` select by those instead.
  The book passes ``method="grid", metric="ece"`` explicitly wherever it follows the papers.

Focal temperature scaling (FTS, Komisarenko & Kull {cite}`komisarenko2024fts`, Sec. 4.2)
composes temperature scaling with the focal calibration map of their Prop. 4 / Eq. (1):
``p = focal_calibration_map(softmax(z / T), gamma_ev)``. The pair ``(gamma_ev, T)`` is chosen
on a grid (:data:`FTS_GAMMAS` x :data:`FTS_T_GRID`, the grid of the authors' code; the paper
text says T = 0.01..5 step 0.01, :data:`PAPER_T_GRID`) by a validation score: by default
the log-loss (NLL, a proper scoring rule, as the default temperature fit), or equal-mass
AdaECE with 15 bins or equal-width ECE, which the book's chapters pass explicitly. The maps,
the authors' probability clamp and their focal link (an off-by-default option,
``link="authors"``) live in :mod:`replicate.posthoc.fts`.

Every fit returns a :class:`Calibrator`: the fitted parameters, the selection metric, the
validation score and the whole search table, callable on test logits. A fit whose chosen
``T`` is the end of its search range warns (:class:`SearchLimitWarning`), naming the limit.

Scores: logits as numpy arrays, lists or torch tensors; the maps return the container of
their input (numpy in, numpy out; tensor in, tensor out, on the input's device; float64).
Probabilities passed as logits raise a ValueError unless ``is_probs=True`` (then ``log p``
is scaled: ``softmax(log p / T)``).

ECE everywhere here is binned by :mod:`replicate.binning` (``bin_index``, bins
``(lower, upper]``, 0 in the first), the same function as :func:`replicate.metrics.ece`.

Speed: the grid search evaluates ECE and NLL for all temperatures from the top-1
confidence ``1 / sum_k exp((z_k - z_max) / T)`` alone (the predicted class does not depend
on ``T``), so 100 temperatures on 10k x 100 logits take well under a second in float64.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, special

from .. import binning as _b
from .. import checks
from .. import metrics as _metrics
from ..array_io import numpy_native
from ._inputs import (_TIE_RTOL, SearchLimitWarning, _check_bounds, _check_choice, _check_flag,  # noqa: F401
                      _check_grid, _check_labels, _check_logits, _check_T, _first_min, _warn_bound,
                      _warn_grid_limit)
from .calibrator import Calibrator
from .fts import (AUTHORS_CLAMP, FTS_GAMMAS, FTS_T_GRID, LINKS, PAPER_T_GRID, SELECT_METRICS,  # noqa: F401
                  check_clamp, fts_probs)
from .fts_fit import fit_focal_temperature, fit_focal_temperatures
from .fts_grid import class_sum, grid_scores  # noqa: F401

__all__ = [
    "Calibrator", "temperature_scale", "temperature_curve", "fit_temperature",
    "fit_focal_temperature", "fit_focal_temperatures", "TS_GRID", "FTS_T_GRID", "PAPER_T_GRID", "FTS_GAMMAS",
    "AUTHORS_CLAMP", "SearchLimitWarning", "TS_BOUNDS",
]

#: The papers' temperature grid: 0.1, 0.2, ..., 10.0.
TS_GRID = np.round(np.arange(1, 101) * 0.1, 10)
#: The continuous fit's default search range of T.
TS_BOUNDS = (1e-2, 1e2)

_TS_METRICS = ("ece", "adaece", "nll")
_XATOL = 1e-9                                # of the continuous fit, in log T


# ----------------------------------------------------------------------------- maps
@numpy_native
def temperature_scale(logits, T, *, is_probs: bool = False):
    """``softmax(logits / T)`` in float64 (Guo et al. 2017, Sec. 4.2); ``T`` finite > 0.

    Parameters
    ----------
    logits : array_like or torch.Tensor
        Shape (N, K); numpy in, numpy out; tensor in, tensor out (float64, same device).
    T : float
        The temperature, finite and > 0.
    is_probs : bool
        True: ``logits`` holds probabilities, scaled as ``softmax(log p / T)``. False (default):
        probabilities given here raise a ValueError.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import temperature_scale
    >>> temperature_scale(np.array([[2.0, 0.0]]), T=2.0).round(4)
    array([[0.7311, 0.2689]])
    """
    t = _check_T(T)
    return _metrics.probs_from_logits(_check_logits(logits, is_probs=is_probs, where="temperature_scale"),
                                      temperature=t)


# ----------------------------------------------------------------------------- fast grid
def _top_conf_and_nll(z: np.ndarray, y: np.ndarray, temps: np.ndarray):
    """Top-1 confidence (nT, N) and NLL (nT,) of softmax(z / T) for every T, from one pass each
    (class-major: each row's sum over the classes in numpy's order, :func:`.fts_grid.class_sum`)."""
    zs = z - z.max(axis=1, keepdims=True)                 # <= 0, row max 0
    zy = zs[np.arange(len(zs)), y]
    zs = np.ascontiguousarray(zs.T)
    buf = np.empty_like(zs)
    conf = np.empty((len(temps), zs.shape[1]))
    nll = np.empty(len(temps))
    for i, t in enumerate(temps):
        np.multiply(zs, 1.0 / t, out=buf)
        np.exp(buf, out=buf)
        s = class_sum(buf)                                # >= 1
        conf[i] = 1.0 / s
        nll[i] = np.mean(np.log(s) - zy / t)
    return conf, nll


def _width_ece_rows(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width ECE of each row of ``conf`` (top-1 confidences, one row per temperature)
    against ``correct``: binned by :func:`replicate.binning.bin_index` and summed by
    :func:`replicate.binning.bin_sums`, the functions :func:`replicate.metrics.ece` uses."""
    idx = _b.bin_index(conf, _b.width_edges(n_bins), "right", uniform=True)
    _, s_conf, s_hit = _b.bin_sums(idx, n_bins, conf, np.broadcast_to(correct, conf.shape))
    return np.abs(s_hit - s_conf).sum(axis=-1) / conf.shape[-1]


def temperature_curve(val_logits, val_labels, grid=None, n_bins: int = 15,
                      metrics: tuple[str, ...] = ("ece", "nll"), paper_compat: bool = False, *,
                      is_probs: bool = False) -> pd.DataFrame:
    """Validation scores of ``softmax(z / T)`` for every ``T`` of ``grid`` (default :data:`TS_GRID`).

    Returns a DataFrame with a column ``T`` and one column per metric of ``metrics``
    (``"ece"``: ``n_bins`` equal-width bins, as :func:`replicate.metrics.ece`; ``"adaece"``:
    equal-mass bins via :func:`replicate.metrics.adaptive_ece`; ``"nll"``). ``ece`` and
    ``nll`` use the fast top-1 path; ``adaece`` computes the full probabilities once per
    temperature and ``paper_compat=True`` gives it the released code's bins (see ``adaptive_ece``).

    Parameters
    ----------
    val_logits : array_like or torch.Tensor
        Validation logits (N, K).
    val_labels : array_like or torch.Tensor
        Validation labels (N,).
    grid : sequence of float, optional
        Temperatures (> 0); default :data:`TS_GRID`.
    n_bins : int
        Bins of the two ECEs.
    metrics : tuple of str
        Any of ``"ece"``, ``"adaece"``, ``"nll"``.
    paper_compat : bool
        The released code's AdaECE bins.
    is_probs : bool
        ``val_logits`` holds probabilities (scaled as ``softmax(log p / T)``).

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import temperature_curve
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> temperature_curve(z, y, grid=[0.5, 1.0, 2.0]).round(4)
         T     ece     nll
    0  0.5  0.3095  0.8747
    1  1.0  0.3353  0.6882
    2  2.0  0.4215  0.7734
    """
    z = _check_logits(val_logits, is_probs=is_probs, where="temperature_curve")
    y = _check_labels(val_labels, z)
    temps = _check_grid(TS_GRID if grid is None else grid, "grid")
    n_bins = checks.positive_int("n_bins", n_bins)
    for m in metrics:
        _check_choice("metric", m, _TS_METRICS)
    out = {"T": temps}
    if "ece" in metrics or "nll" in metrics:
        conf, nll = _top_conf_and_nll(z, y, temps)
        if "ece" in metrics:
            correct = (z.argmax(axis=1) == y).astype(np.float64)
            out["ece"] = _width_ece_rows(conf, correct, n_bins)
        if "nll" in metrics:
            out["nll"] = nll
    if "adaece" in metrics:
        out["adaece"] = np.array([
            _metrics.adaptive_ece(_metrics.probs_from_logits(z, t), y, n_bins=n_bins,
                                  paper_compat=paper_compat, validate=False) for t in temps])
    return pd.DataFrame(out)[["T", *metrics]]


def _nll_of_temperature(z: np.ndarray, y: np.ndarray, t: float) -> float:
    zt = z / t
    return float(np.mean(special.logsumexp(zt, axis=1) - zt[np.arange(len(zt)), y]))


def fit_temperature(val_logits, val_labels, method: str = "nll", metric: str | None = None,
                    grid=None, n_bins: int = 15, paper_compat: bool = False, *, bounds=TS_BOUNDS,
                    is_probs: bool = False, warn: bool = True) -> Calibrator:
    """Fit temperature scaling on validation logits and labels.

    ``method="nll"`` (default): Guo et al.'s continuous fit, the ``T`` in ``bounds`` that
    minimises the validation NLL ``-mean_i log softmax(z_i / T)_{y_i}`` (Guo et al. 2017,
    Sec. 4.2), by a bounded search over ``log T`` (NLL is convex in ``1/T``, so the minimum
    is global). ``method="grid"``: the papers' search over ``grid`` (default :data:`TS_GRID`,
    0.1..10.0) selecting by ``metric`` (default ``"ece"``, Mukhoti et al. 2020 Eq. 1, 15
    equal-width bins; also ``"adaece"``, ``"nll"``); ties keep the smaller ``T``. A chosen
    ``T`` at the end of the search warns (:class:`SearchLimitWarning`), naming the limit; the
    continuous fit returns a bound whenever the NLL there is no larger than where the
    search stopped (a flat NLL - every validation prediction right and confident - has
    no finite optimum).

    Parameters
    ----------
    val_logits : array_like or torch.Tensor
        Validation logits (N, K), not probabilities (unless ``is_probs``).
    val_labels : array_like or torch.Tensor
        Validation labels (N,).
    method : {"nll", "grid"}
        Continuous NLL fit (default) or the papers' grid search.
    metric : {None, "ece", "adaece", "nll"}
        The grid's selection criterion (None: ``"ece"``); with ``method="nll"`` only None or ``"nll"``.
    grid : sequence of float, optional
        The grid's temperatures (``method="grid"`` only); default :data:`TS_GRID`.
    n_bins : int
        Bins of the grid's ECE / AdaECE.
    paper_compat : bool
        The released code's AdaECE bins (``metric="adaece"`` only).
    bounds : tuple of float
        The continuous fit's range of ``T``, ``0 < low < high``; default :data:`TS_BOUNDS`.
    is_probs : bool
        ``val_logits`` holds probabilities, scaled as ``softmax(log p / T)``.
    warn : bool
        Warn when ``T`` lands on a search limit (default). The book's protocol code, which
        reports every chosen ``T`` itself and refits on many resamples, passes False.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> round(fit_temperature(z, y).params['T'], 3)
    1.006
    >>> fit_temperature(z, y, method="grid", metric="ece").params
    {'T': 3.9}
    """
    _check_choice("method", method, ("nll", "grid"))
    z = _check_logits(val_logits, is_probs=is_probs, where="fit_temperature")
    y = _check_labels(val_labels, z)
    if method == "nll":
        if metric not in (None, "nll"):
            raise ValueError(f"metric must be 'nll' (or None) when method='nll', got {metric!r}; "
                             "selecting by ECE needs method='grid'")
        if grid is not None:
            raise ValueError("grid applies only with method='grid'; the continuous fit searches bounds")
        if paper_compat:
            raise ValueError("paper_compat applies only with method='grid', metric='adaece'")
        lo, hi = _check_bounds(bounds)
        res = optimize.minimize_scalar(lambda s: _nll_of_temperature(z, y, math.exp(s)),
                                       bounds=(math.log(lo), math.log(hi)), method="bounded",
                                       options={"xatol": _XATOL, "maxiter": 500})
        t = float(math.exp(res.x))
        score = _nll_of_temperature(z, y, t)
        for end in (lo, hi):  # a flat NLL (e.g. every prediction right) can stop the search short of a bound
            if _nll_of_temperature(z, y, end) <= score:
                t, score = end, _nll_of_temperature(z, y, end)
        if _check_flag("warn", warn):
            _warn_bound("fit_temperature", t, lo, hi, tol=1e-4)
        return Calibrator("temperature", {"T": t}, "nll", score)
    if bounds is not TS_BOUNDS:
        raise ValueError("bounds applies only with method='nll'; the grid search searches grid")
    metric = "ece" if metric is None else _check_choice("metric", metric, _TS_METRICS)
    curve = temperature_curve(z, y, grid=grid, n_bins=n_bins, metrics=(metric,), paper_compat=paper_compat)
    i = _first_min(curve[metric].to_numpy())
    t = float(curve["T"].iloc[i])
    if _check_flag("warn", warn):
        _warn_grid_limit("fit_temperature", metric, t, curve["T"].to_numpy())
    return Calibrator("temperature", {"T": t}, metric, float(curve[metric].iloc[i]), search=curve)


