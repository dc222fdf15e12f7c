"""Our side of a comparison: the papers' table metrics recomputed from our runs' logits.

:func:`evaluate_logits` recomputes the table metrics (:data:`METRICS`) from validation and
test logits, before and after temperature scaling. T is chosen on the validation set over
a grid (default the papers' 0.1..10.0) by the metric the paper cross-validates on
(:data:`T_SELECTED_BY`: ECE for the ECE, MCE and NLL tables, AdaECE for the AdaECE tables,
Mukhoti et al. Sec. 6; a chapter may pass its paper's own choice). Values are percentages
as the papers print them (NLL and Brier x100); temperatures are not. :func:`evaluate_runs`
does the same for every run of a chapter; :func:`summarise` takes the mean and standard
deviation over seeds, :func:`value` and :func:`quote` read one number of it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import metrics, smce


def _s99(which):
    def f(p, y, z):
        return metrics.s99(p, y, validate=False)[which]
    return f


#: metric -> (name for captions, score(probs, labels, logits) -> fraction). Scores are
#: multiplied by 100 in the tables.
METRICS = {
    "ece": ("ECE (%, 15 equal-width bins)", lambda p, y, z: metrics.ece(p, y, validate=False)),
    "adaece": ("AdaECE (%, 15 equal-mass bins)", lambda p, y, z: metrics.adaptive_ece(p, y, validate=False)),
    "classwise_ece": ("classwise ECE (%, 15 bins)", lambda p, y, z: metrics.classwise_ece(p, y, validate=False)),
    "mce": ("MCE (%, 15 equal-width bins)", lambda p, y, z: metrics.mce(p, y, validate=False)),
    "nll": ("NLL (x100)", lambda p, y, z: metrics.nll(z, y)),
    "error": ("test error (%)", lambda p, y, z: metrics.error_rate(p, y, validate=False)),
    "brier": ("Brier score (x100)", lambda p, y, z: metrics.brier(p, y, validate=False)),
    "smece": ("smooth ECE (%, Blasiok & Nakkiran)", lambda p, y, z: metrics.smooth_ece(p, y, validate=False)),
    "smce": ("smCE (%, Lipschitz, Blasiok et al.)", lambda p, y, z: smce.top_label_smce(p, y, validate=False)),
    "debiased_ece": ("debiased ECE (%, 15 equal-mass bins)",
                     lambda p, y, z: metrics.debiased_ece(p, y, validate=False)),
    "sweep_ece": ("ECE-sweep (%, equal-width)", lambda p, y, z: metrics.ece_sweep(p, y, validate=False)),
    "debiased_ece_30": ("debiased ECE (%, 30 equal-mass bins)",
                        lambda p, y, z: metrics.debiased_ece(p, y, n_bins=30, validate=False)),
    "sweep_ece_mass": ("ECE-sweep (%, equal-mass)",
                       lambda p, y, z: metrics.ece_sweep(p, y, binning="mass", validate=False)),
    "s99_fraction": ("|S99| (%)", _s99(0)),
    "s99_accuracy": ("accuracy on S99 (%)", _s99(1)),
}
METRIC_NAMES = {k: v[0] for k, v in METRICS.items()}
#: metric -> the metric that selects T on the validation set (Mukhoti et al.'s tables)
T_SELECTED_BY = {"ece": "ece", "adaece": "adaece", "classwise_ece": "ece", "mce": "ece", "nll": "ece",
                 "error": "ece", "s99_fraction": "ece", "s99_accuracy": "ece"}
TABLE_METRICS = tuple(T_SELECTED_BY)
SELECTORS = ("ece", "adaece", "nll")


def _check_metrics(names, t_selected_by: dict) -> tuple:
    names = tuple(names)
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}")
    bad = {m: s for m, s in t_selected_by.items() if s not in SELECTORS}
    if bad:
        raise ValueError(f"T can be selected by {', '.join(SELECTORS)}; got {bad}")
    return names


def _scores(logits: np.ndarray, labels: np.ndarray, names, T: float = 1.0) -> dict:
    probs = metrics.probs_from_logits(logits, temperature=T)
    z = np.asarray(logits, dtype=np.float64) / T
    return {m: METRICS[m][1](probs, labels, z) for m in names}


def evaluate_logits(val_logits, val_labels, test_logits, test_labels, n_bins: int = 15, metrics=TABLE_METRICS,
                    t_selected_by: dict | None = None, grid=None) -> pd.DataFrame:
    """Every metric of ``metrics`` on the test set, pre and post temperature scaling (long
    form, percent). Columns ``metric, temperature_scaled, value, T, T_selected_by``; post-T
    rows use the temperature of ``grid`` (default 0.1..10.0) minimising the validation
    value of ``t_selected_by[metric]`` (default :data:`T_SELECTED_BY`, ECE for metrics it
    does not name). ``n_bins`` is the bin count of that validation metric only: the test
    metrics are reported with the papers' 15 bins (call :func:`replicate.metrics.ece` with
    ``n_bins`` for another count)."""
    sel_by = {**T_SELECTED_BY, **(t_selected_by or {})}
    names = _check_metrics(metrics, sel_by)
    val_z, test_z = (np.asarray(z, dtype=np.float64) for z in (val_logits, test_logits))
    pre = _scores(test_z, test_labels, names)
    selectors = sorted({sel_by.get(m, "ece") for m in names})
    from ..noise.store import temperature                   # each run's T fitted once for every chapter

    temps = {sel: temperature(val_z, val_labels, sel, grid, n_bins) for sel in selectors}
    post = {sel: _scores(test_z, test_labels, [m for m in names if sel_by.get(m, "ece") == sel], T)
            for sel, T in temps.items()}
    rows = []
    for m in names:
        sel = sel_by.get(m, "ece")
        rows.append({"metric": m, "temperature_scaled": False, "value": 100 * pre[m], "T": math.nan,
                     "T_selected_by": ""})
        rows.append({"metric": m, "temperature_scaled": True, "value": 100 * post[sel][m], "T": temps[sel],
                     "T_selected_by": sel})
    return pd.DataFrame(rows)


def evaluate_runs(runs: dict, n_bins: int = 15, **kw) -> pd.DataFrame:
    """:func:`evaluate_logits` of every run of ``{(method, seed): Run}`` (keywords passed on;
    ``n_bins`` only changes how T is selected), with columns ``method`` and ``seed`` in front."""
    frames = []
    for (key, seed), run in runs.items():
        f = evaluate_logits(*run.logits("val"), *run.logits("test"), n_bins=n_bins, **kw)
        f.insert(0, "seed", seed)
        f.insert(0, "method", key)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def summarise(ours: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample standard deviation over seeds (NaN with one seed) per method, metric, TS."""
    g = ours.groupby(["method", "metric", "temperature_scaled"], sort=False)
    return g.agg(mean=("value", "mean"), std=("value", "std"), T=("T", "mean"), T_std=("T", "std"),
                 n_seeds=("seed", "nunique")).reset_index()


def _cell(summ: pd.DataFrame, method: str, metric: str, scaled: bool) -> dict:
    r = summ[(summ.method == method) & (summ.metric == metric) & (summ.temperature_scaled == scaled)]
    if not len(r):
        return {"mean": math.nan, "std": math.nan, "T": math.nan, "T_std": math.nan}
    return {k: float(r[k].iloc[0]) for k in ("mean", "std", "T", "T_std")}


def value(summary: pd.DataFrame, method: str, metric: str, temperature_scaled: bool = False,
          col: str = "mean") -> float:
    """One number (``col``: mean, std, T or T_std) of a :func:`summarise` or
    :func:`replicate.comparison.paper_values` frame; NaN when the frame does not hold it."""
    if col not in ("mean", "std", "T", "T_std"):
        raise ValueError(f"col must be one of mean, std, T, T_std; got {col!r}")
    return _cell(summary, method, metric, temperature_scaled)[col]


def quote(summary: pd.DataFrame, method: str, metric: str, temperature_scaled: bool = False, col: str = "mean",
          digits: int = 2) -> str:
    """:func:`value` as text for prose; "not available" when the frame does not hold it."""
    v = value(summary, method, metric, temperature_scaled, col)
    return "not available" if math.isnan(v) else f"{v:.{digits}f}"
