"""Post-hoc calibration: temperature scaling and focal temperature scaling.

Temperature scaling {cite}`guo2017calibration` divides the logits by one scalar ``T`` fitted
on held-out validation data: ``p = softmax(z / T)``. It never changes the predicted class.

Two ways of fitting ``T`` are provided:

- ``method="grid"`` -- what the public code of Mukhoti et al. {cite}`mukhoti2020focal`,
  AdaFocal {cite}`ghosh2022adafocal` and Dual Focal Loss {cite}`tao2023dual` does:
  ``T = 0.1, 0.2, ..., 10.0`` (:data:`TS_GRID`), keep the ``T`` with the smallest
  validation ECE (15 equal-width bins); ties keep the smaller ``T`` (their loop updates
  only on a strict improvement). ``metric="nll"`` or ``"adaece"`` select by those instead.
- ``method="nll"`` -- the continuous minimiser of validation NLL (Guo et al.'s recipe).
  NLL is convex in ``1/T`` so the bounded 1-D search over ``log T`` finds the global
  minimum on ``[1e-2, 1e2]``.

Focal temperature scaling (FTS, Komisarenko & Kull {cite}`komisarenko2024fts`, Sec. 4.2)
composes temperature scaling with the focal calibration map of their Prop. 4 / Eq. (1):
``p = focal_calibration_map(softmax(z / T), gamma_ev)``. The pair ``(gamma_ev, T)`` is chosen
on a grid (:data:`FTS_GAMMAS` x :data:`FTS_T_GRID`, the grid of the authors' code; the paper
text says T = 0.01..5 step 0.01, :data:`PAPER_T_GRID`) by validation NLL or equal-mass AdaECE
with 15 bins (or equal-width ECE). The maps, the authors' probability clamp and their focal
link (an off-by-default option, ``link="authors"``) live in :mod:`replicate.posthoc.fts`.

Every fit returns a :class:`Calibrator`: the fitted parameters, the selection metric, the
validation score and the whole search table, callable on test logits.

Speed: the grid search evaluates ECE and NLL for all temperatures from the top-1
confidence ``1 / sum_k exp((z_k - z_max) / T)`` alone (the predicted class does not depend
on ``T``), so 100 temperatures on 10k x 100 logits take well under a second in float64.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from .. import metrics as _metrics
from .. import checks
from .fts import AUTHORS_CLAMP, LINKS, PAPER_T_GRID, SELECT_METRICS, check_clamp, fts_probs
from .fts_grid import class_sum, grid_scores

__all__ = [
    "Calibrator", "temperature_scale", "temperature_curve", "fit_temperature",
    "fit_focal_temperature", "fit_focal_temperatures", "TS_GRID", "FTS_T_GRID", "PAPER_T_GRID", "FTS_GAMMAS",
    "AUTHORS_CLAMP",
]

#: The papers' temperature grid: 0.1, 0.2, ..., 10.0.
TS_GRID = np.round(np.arange(1, 101) * 0.1, 10)
#: FTS authors' code: T = 0.05, 0.10, ..., 5.00.
FTS_T_GRID = np.round(np.arange(1, 101) * 0.05, 10)
#: FTS paper Sec. 5.1: the gamma_ev grid.
FTS_GAMMAS = (-0.5, -0.25, 0.05, 0.25, 0.37, 0.5, 0.75, 1.0, 5.0)

_TS_METRICS = ("ece", "adaece", "nll")
_FTS_METRICS = SELECT_METRICS
_TIE_RTOL = 1e-12


# ----------------------------------------------------------------------------- checks
def _check_T(T: Any, name: str = "T") -> float:
    try:
        t = float(T)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {T!r}") from None
    if not math.isfinite(t) or t <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {T!r}")
    return t


def _check_logits(logits) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] < 1:
        raise ValueError(f"logits must have shape (n_samples, n_classes) with n_classes >= 2, "
                         f"got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits must be finite (no NaN or inf)")
    return z


def _check_labels(labels, z: np.ndarray) -> np.ndarray:
    y = np.asarray(labels)
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


# ----------------------------------------------------------------------------- maps
def temperature_scale(logits, T) -> np.ndarray:
    """``softmax(logits / T)`` in float64 (Guo et al. 2017, Sec. 4.2); ``T`` finite > 0.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import temperature_scale
    >>> temperature_scale(np.array([[2.0, 0.0]]), T=2.0).round(4)
    array([[0.7311, 0.2689]])
    """
    t = _check_T(T)
    return _metrics.probs_from_logits(_check_logits(logits), temperature=t)


@dataclass(frozen=True)
class Calibrator:
    """A fitted post-hoc map from logits to probabilities.

    ``name`` is ``"temperature"`` (params ``{"T"}``) or ``"focal_temperature"`` (params
    ``{"T", "gamma"}``, optionally ``"link"`` and ``"clamp"`` of
    :func:`replicate.posthoc.fts.fts_probs`); ``metric`` is the validation selection criterion and ``score`` its
    value at the chosen parameters; ``search`` holds every candidate and its score.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> cal = fit_temperature(z, y)
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

    def __call__(self, logits) -> np.ndarray:
        """Calibrated probabilities (float64, shape of ``logits``)."""
        if self.name == "focal_temperature":
            return fts_probs(_check_logits(logits), self.T, self.gamma, self.params.get("link", "intended"),
                             self.params.get("clamp"))
        return temperature_scale(logits, self.T)


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
    """Equal-width ECE, bins (lower, upper] (the papers' convention), for each row of ``conf``."""
    n_rows, n = conf.shape
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins      # as replicate.binning
    b = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    idx = (b + n_bins * np.arange(n_rows)[:, None]).ravel()
    gap = np.bincount(idx, weights=(correct[None, :] - conf).ravel(), minlength=n_rows * n_bins)
    return np.abs(gap.reshape(n_rows, n_bins)).sum(axis=1) / n


def temperature_curve(val_logits, val_labels, grid=None, n_bins: int = 15,
                      metrics: tuple[str, ...] = ("ece", "nll"), paper_compat: bool = False
                      ) -> pd.DataFrame:
    """Validation scores of ``softmax(z / T)`` for every ``T`` of ``grid`` (default :data:`TS_GRID`).

    Returns a DataFrame with a column ``T`` and one column per metric of ``metrics``
    (``"ece"``: 15 equal-width bins; ``"adaece"``: equal-mass bins via
    :func:`replicate.metrics.adaptive_ece`; ``"nll"``). ``ece`` and ``nll`` use the fast
    top-1 path; ``adaece`` computes the full probabilities once per temperature and
    ``paper_compat=True`` gives it the released code's bins (see ``adaptive_ece``).

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
    z = _check_logits(val_logits)
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


def fit_temperature(val_logits, val_labels, method: str = "grid", metric: str | None = None,
                    grid=None, n_bins: int = 15, paper_compat: bool = False) -> Calibrator:
    """Fit temperature scaling on validation logits and labels.

    ``method="grid"``: the papers' search over ``grid`` (default :data:`TS_GRID`, 0.1..10.0)
    selecting by ``metric`` (default ``"ece"``; also ``"adaece"``, ``"nll"``); ties keep the
    smaller ``T``; ``paper_compat`` applies to ``"adaece"`` only. ``method="nll"``:
    continuous minimisation of validation NLL over ``T`` in ``[1e-2, 1e2]`` (``metric``
    must be ``None`` or ``"nll"``).

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> round(fit_temperature(z, y, method='nll').params['T'], 3)
    1.006
    """
    _check_choice("method", method, ("grid", "nll"))
    z = _check_logits(val_logits)
    y = _check_labels(val_labels, z)
    if method == "nll":
        if metric not in (None, "nll"):
            raise ValueError(f"metric must be 'nll' (or None) when method='nll', got {metric!r}")
        lo, hi = math.log(1e-2), math.log(1e2)
        res = optimize.minimize_scalar(lambda s: _nll_of_temperature(z, y, math.exp(s)),
                                       bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-9, "maxiter": 500})
        t = float(math.exp(res.x))
        return Calibrator("temperature", {"T": t}, "nll", _nll_of_temperature(z, y, t))
    metric = "ece" if metric is None else _check_choice("metric", metric, _TS_METRICS)
    curve = temperature_curve(z, y, grid=grid, n_bins=n_bins, metrics=(metric,),
                              paper_compat=paper_compat)
    i = _first_min(curve[metric].to_numpy())
    return Calibrator("temperature", {"T": float(curve["T"].iloc[i])}, metric,
                      float(curve[metric].iloc[i]), search=curve)


# ----------------------------------------------------------------------------- FTS
def fit_focal_temperature(val_logits, val_labels, gammas=None, temperatures=None,
                          metric: str = "adaece", n_bins: int = 15,
                          paper_compat: bool = False, link: str = "intended", clamp=None) -> Calibrator:
    """Focal temperature scaling (Komisarenko & Kull 2024, Sec. 4.2) by grid search.

    For every ``T`` of ``temperatures`` (default :data:`FTS_T_GRID`; the paper text's is
    :data:`PAPER_T_GRID`) and ``gamma_ev`` of ``gammas`` (default :data:`FTS_GAMMAS`), the
    validation score of ``focal_calibration_map(softmax(z / T), gamma_ev)`` is ``metric``:
    ``"adaece"`` (equal-mass, ``n_bins`` = 15 as in the paper; ``paper_compat=True`` uses the
    bins of the released code of Mukhoti et al., which the FTS code inherits), ``"nll"`` or
    ``"ece"`` (equal-width). The first minimum in (gamma in the given order, T ascending)
    wins, so ties keep the smaller ``T``; non-finite scores are never chosen.

    ``link="intended"`` computes Eq. (1) exactly, after clipping ``q`` to
    ``[clamp, 1 - clamp]`` when ``clamp`` is given (the authors' code: 1e-12,
    :data:`AUTHORS_CLAMP`). ``link="authors"`` reproduces the authors' focal link, its
    float32 arithmetic, clamp and overflow guard (:mod:`replicate.posthoc.fts`); off by
    default. The search table also counts, per pair, the validation rows the authors'
    guard rewrote (``overflowed``).

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_focal_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> fit_focal_temperature(z, y, metric='nll').params
    {'T': 3.3, 'gamma': 5.0}
    """
    return fit_focal_temperatures(val_logits, val_labels, gammas, temperatures, (metric,), n_bins, paper_compat,
                                  link, clamp)[metric]


def fit_focal_temperatures(val_logits, val_labels, gammas=None, temperatures=None,
                           metrics=("nll", "adaece"), n_bins: int = 15, paper_compat: bool = False,
                           link: str = "intended", clamp=None) -> dict:
    """:func:`fit_focal_temperature` for several selection ``metrics`` from one pass over the
    grid: ``{metric: Calibrator}`` (each with the same search table).

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_focal_temperatures
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> {m: cal.params for m, cal in fit_focal_temperatures(z, y).items()}
    {'nll': {'T': 3.3, 'gamma': 5.0}, 'adaece': {'T': 2.2, 'gamma': 5.0}}
    """
    z = _check_logits(val_logits)
    y = _check_labels(val_labels, z)
    metrics = tuple(metrics) if not isinstance(metrics, str) else (metrics,)
    if not metrics:
        raise ValueError(f"metrics must name at least one of {list(_FTS_METRICS)}")
    for m in metrics:
        _check_choice("metric", m, _FTS_METRICS)
    n_bins = checks.positive_int("n_bins", n_bins)
    link = _check_choice("link", link, LINKS)
    clamp = check_clamp(clamp)
    if link == "authors" and clamp not in (None, AUTHORS_CLAMP):
        raise ValueError(f"clamp must be None or {AUTHORS_CLAMP} with link='authors' (their code's clamp); "
                         f"got {clamp!r}")
    gs = list(FTS_GAMMAS if gammas is None else np.asarray(gammas, dtype=np.float64).ravel())
    if not gs:
        raise ValueError("gammas must be a non-empty sequence")
    gs = [checks.gamma(g, lo=-1.0, strict=True) for g in gs]
    temps = _check_grid(FTS_T_GRID if temperatures is None else temperatures, "temperatures")
    search = grid_scores(z, y, gs, temps, tuple(dict.fromkeys(metrics)), link=link,
                         clamp=AUTHORS_CLAMP if link == "authors" else clamp, n_bins=n_bins,
                         paper_compat=paper_compat)
    out = {}
    for metric in metrics:
        k = _first_min(search[metric].to_numpy())
        params = {"T": float(search["T"].iloc[k]), "gamma": float(search["gamma"].iloc[k])}
        if link != "intended" or clamp is not None:
            params.update(link=link, clamp=AUTHORS_CLAMP if link == "authors" else clamp)
        out[metric] = Calibrator("focal_temperature", params, metric, float(search[metric].iloc[k]), search=search)
    return out
