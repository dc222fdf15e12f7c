"""Focal temperature scaling fitted on a grid: :func:`fit_focal_temperature` and
:func:`fit_focal_temperatures` of :mod:`replicate.posthoc` (the maps and the vectorised grid
scores are :mod:`replicate.posthoc.fts`)."""
from __future__ import annotations

import numpy as np

from .. import checks
from ._inputs import (_check_choice, _check_flag, _check_grid, _check_labels, _check_logits, _first_min,
                      _warn_grid_limit)
from .calibrator import Calibrator
from .fts import AUTHORS_CLAMP, FTS_GAMMAS, FTS_T_GRID, LINKS, SELECT_METRICS, check_clamp
from .fts_grid import grid_scores

__all__ = ["fit_focal_temperature", "fit_focal_temperatures"]

_FTS_METRICS = SELECT_METRICS


def fit_focal_temperature(val_logits, val_labels, gammas=None, temperatures=None,
                          metric: str = "nll", n_bins: int = 15,
                          paper_compat: bool = False, link: str = "intended", clamp=None, *,
                          is_probs: bool = False, warn: bool = True) -> Calibrator:
    """Focal temperature scaling (Komisarenko & Kull 2024, Sec. 4.2) by grid search.

    For every ``T`` of ``temperatures`` (default :data:`FTS_T_GRID`; the paper text's is
    :data:`PAPER_T_GRID`) and ``gamma_ev`` of ``gammas`` (default :data:`FTS_GAMMAS`), the
    validation score of ``focal_calibration_map(softmax(z / T), gamma_ev)`` (their Eq. 1) is
    ``metric``: ``"nll"`` (the default: the log-loss, a proper scoring rule, as
    :func:`fit_temperature`'s default), ``"adaece"`` (equal-mass, ``n_bins`` = 15 as in the
    paper; ``paper_compat=True`` uses the bins of the released code of Mukhoti et al., which
    the FTS code inherits) or ``"ece"`` (equal-width). The book's chapters pass the metric
    they follow explicitly. The first minimum in (gamma in the given order, T ascending)
    wins, so ties keep the smaller ``T``; non-finite scores are never chosen. A chosen ``T``
    at the end of ``temperatures`` warns (:class:`SearchLimitWarning`); ``gammas`` is the
    paper's list of candidates, not a range, and does not.

    ``link="intended"`` computes Eq. (1) exactly, after clipping ``q`` to
    ``[clamp, 1 - clamp]`` when ``clamp`` is given (the authors' code: 1e-12,
    :data:`AUTHORS_CLAMP`). ``link="authors"`` reproduces the authors' focal link, its
    float32 arithmetic, clamp and overflow guard (:mod:`replicate.posthoc.fts`); off by
    default. The search table also counts, per pair, the validation rows the authors'
    guard rewrote (``overflowed``).

    Parameters
    ----------
    val_logits, val_labels : array_like or torch.Tensor
        Validation logits (N, K) (not probabilities, unless ``is_probs``) and labels (N,).
    gammas : sequence of float, optional
        Candidate ``gamma_ev`` (> -1); default :data:`FTS_GAMMAS`.
    temperatures : sequence of float, optional
        Candidate ``T`` (> 0); default :data:`FTS_T_GRID`.
    metric : {"nll", "adaece", "ece"}
        The validation selection criterion.
    n_bins : int
        Bins of the ECEs.
    paper_compat : bool
        The released code's AdaECE bins.
    link : {"intended", "authors"}
        The focal map.
    clamp : float, optional
        Clip of ``q`` before the map (None: exact).
    is_probs : bool
        ``val_logits`` holds probabilities (``log p`` is scaled).
    warn : bool
        Warn when ``T`` lands on the end of ``temperatures`` (default); the book's protocol
        code, which reports the chosen pair itself, passes False.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_focal_temperature
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> fit_focal_temperature(z, y).params
    {'T': 3.3, 'gamma': 5.0}
    """
    return _fit(val_logits, val_labels, gammas, temperatures, (metric,), n_bins, paper_compat, link, clamp,
                is_probs, warn)[metric]


def fit_focal_temperatures(val_logits, val_labels, gammas=None, temperatures=None,
                           metrics=("nll", "adaece"), n_bins: int = 15, paper_compat: bool = False,
                           link: str = "intended", clamp=None, *, is_probs: bool = False,
                           warn: bool = True) -> dict:
    """:func:`fit_focal_temperature` for several selection ``metrics`` from one pass over the
    grid: ``{metric: Calibrator}`` (each with the same search table).

    Parameters
    ----------
    val_logits, val_labels, gammas, temperatures
        As :func:`fit_focal_temperature`.
    metrics : sequence of str
        The selection criteria, each one of ``"nll"``, ``"adaece"``, ``"ece"`` (default
        ``("nll", "adaece")``); one fit per criterion from one search of the grid.
    n_bins, paper_compat, link, clamp, is_probs, warn
        As :func:`fit_focal_temperature`.

    Example
    -------
    >>> import numpy as np; from replicate.posthoc import fit_focal_temperatures
    >>> z, y = np.array([[2.0, 0.5, -1.0], [0.2, 1.5, 0.3], [1.0, 0.0, 3.0]]), np.array([0, 2, 2])
    >>> {m: cal.params for m, cal in fit_focal_temperatures(z, y).items()}
    {'nll': {'T': 3.3, 'gamma': 5.0}, 'adaece': {'T': 2.2, 'gamma': 5.0}}
    """
    return _fit(val_logits, val_labels, gammas, temperatures, metrics, n_bins, paper_compat, link, clamp, is_probs,
                warn)


def _fit(val_logits, val_labels, gammas, temperatures, metrics, n_bins, paper_compat, link, clamp,
         is_probs, warn) -> dict:
    """The fits of :func:`fit_focal_temperatures` (a search-limit warning points at their caller)."""
    warn = _check_flag("warn", warn)
    z = _check_logits(val_logits, is_probs=is_probs, where="fit_focal_temperature")
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
        if warn:
            _warn_grid_limit("fit_focal_temperature", metric, params["T"], temps, stacklevel=4)
        out[metric] = Calibrator("focal_temperature", params, metric, float(search[metric].iloc[k]), search=search)
    return out
