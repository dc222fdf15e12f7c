"""Every trained model under one evaluation protocol: three post-hoc settings, every metric.

The leaderboard (chapter ``exp_leaderboard``) compares all training methods of the five
papers as they were trained under one protocol. Each run of ``{(method, seed): Run}`` is
calibrated on its validation logits in three post-hoc settings (:data:`POSTHOC`):

``none``
    the softmax of the logits;
``ts``
    temperature scaling, ``T`` chosen by validation ECE (15 equal-width bins) on the papers'
    grid 0.1, 0.2, ..., 10.0 (Mukhoti et al. Sec. 6; :data:`replicate.posthoc.TS_GRID`);
``fts``
    focal temperature scaling (Komisarenko & Kull 2024, Sec. 4.2): the focal calibration map
    with ``gamma_ev`` of the paper's grid (:data:`replicate.posthoc.FTS_GAMMAS`) after
    temperature scaling, ``(gamma_ev, T)`` chosen together by validation ECE on the same T
    grid (the paper selects by equal-mass ECE over T = 0.01..5; here both post-hoc settings
    use one selection metric and one grid, so that they differ only by the focal map).

Each calibrated run (:class:`Calibrated`) keeps its test probabilities, the log-probability
of each test label and its probabilities on the run's out-of-distribution set (its own test
images with CIFAR-10-C Gaussian noise of severity 5, :mod:`replicate.runs.ood`), so that any
metric of :data:`BOARD_METRICS` can be computed on any subset of the test samples
(:func:`score`: the bootstrap of :func:`replicate.comparison.stats.bootstrap_ranks` resamples
the test images, and the same indices of the noisy copies for the AUROC).

Values are percentages as the papers print them (NLL and Brier x100, AUROC in %).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import metrics as _m
from .. import posthoc
from . import stats

POSTHOC = ("none", "ts", "fts")
POSTHOC_NAMES = {"none": "none", "ts": "TS", "fts": "FTS"}
POSTHOC_LONG = {"none": "no post-hoc calibration",
                "ts": "temperature scaling, T by validation ECE on 0.1..10.0",
                "fts": "focal temperature scaling, gamma_ev and T by validation ECE (gamma_ev in "
                       f"{{{', '.join(f'{g:g}' for g in posthoc.FTS_GAMMAS)}}}, T on 0.1..10.0)"}
OOD_SET = "cifar10c_gaussian5"
#: metric -> (column label, full name). Lower is better except for :data:`HIGHER_IS_BETTER`.
BOARD_METRICS = {
    "error": ("error", "test error (%)"),
    "nll": ("NLL", "negative log-likelihood (x100)"),
    "brier": ("Brier", "Brier score (x100, summed over classes)"),
    "ece": ("ECE", "ECE (%, 15 equal-width bins)"),
    "adaece": ("AdaECE", "AdaECE (%, 15 equal-mass bins)"),
    "classwise_ece": ("cw-ECE", "classwise ECE (%, 15 bins)"),
    "mce": ("MCE", "MCE (%, 15 equal-width bins)"),
    "smece": ("smECE", "smooth ECE (%, Blasiok & Nakkiran 2023)"),
    "auroc": ("AUROC", "AUROC (%) of the softmax entropy, test images against the same images with "
                       "CIFAR-10-C Gaussian noise, severity 5"),
}
HIGHER_IS_BETTER = ("auroc",)
_CACHE: dict = {}        # (run key, setting) -> Calibrated: each run is calibrated once per session


@dataclass(frozen=True)
class Calibrated:
    """One run after one post-hoc setting: test probabilities ``probs`` (n x K), labels,
    ``logp_y`` (log-probability of each test label, exact in log space), ``ood_probs`` (the
    same test images with Gaussian noise; None when the run did not record them), and the
    fitted ``T`` (1 for ``none``) and ``gamma`` (NaN unless ``fts``)."""

    setting: str
    probs: np.ndarray
    labels: np.ndarray
    logp_y: np.ndarray
    ood_probs: np.ndarray | None
    T: float
    gamma: float

    @property
    def n(self) -> int:
        return len(self.labels)


def check_setting(setting: str) -> str:
    if setting not in POSTHOC:
        raise ValueError(f"setting must be one of {', '.join(POSTHOC)}; got {setting!r}")
    return setting


def check_metric(metric: str) -> str:
    if metric not in BOARD_METRICS:
        raise ValueError(f"metric must be one of {', '.join(BOARD_METRICS)}; got {metric!r}")
    return metric


def _log_probs(z: np.ndarray, setting: str, T: float, gamma: float) -> np.ndarray:
    if setting == "fts":
        from ..posthoc.fts import fts_log_probs

        return fts_log_probs(z, T, gamma)
    return _m._log_softmax(np.asarray(z, dtype=np.float64) / T)


def calibrate_logits(val_logits, val_labels, test_logits, test_labels, setting: str, ood_logits=None) -> Calibrated:
    """``setting`` of :data:`POSTHOC` fitted on the validation logits, applied to the test
    (and out-of-distribution) logits."""
    check_setting(setting)
    zv, zt = np.asarray(val_logits, dtype=np.float64), np.asarray(test_logits, dtype=np.float64)
    T, gamma = 1.0, math.nan
    if setting == "ts":
        T = float(posthoc.fit_temperature(zv, val_labels, method="grid", metric="ece", grid=posthoc.TS_GRID).T)
    elif setting == "fts":
        fit = posthoc.fit_focal_temperature(zv, val_labels, metric="ece", temperatures=posthoc.TS_GRID)
        T, gamma = float(fit.T), float(fit.gamma)
    lp = _log_probs(zt, setting, T, gamma)
    y = np.asarray(test_labels, dtype=np.int64)
    ood = None if ood_logits is None else np.exp(_log_probs(np.asarray(ood_logits, dtype=np.float64), setting, T,
                                                            gamma))
    return Calibrated(setting, np.exp(lp), y, lp[np.arange(len(y)), y], ood, T, gamma)


def calibrate_run(run, setting: str) -> Calibrated:
    """:func:`calibrate_logits` of a stored run (with its CIFAR-10-C logits when recorded);
    cached per run and setting for the session."""
    check_setting(setting)
    key = (run.key, setting)
    if key not in _CACHE:
        ood = run.logits(f"ood:{OOD_SET}")[0] if OOD_SET in run.ood_sets else None
        _CACHE[key] = calibrate_logits(*run.logits("val"), *run.logits("test"), setting, ood_logits=ood)
    return _CACHE[key]


def calibrate_runs(runs: dict, settings=POSTHOC, log=None) -> dict:
    """``{(method, seed, setting): Calibrated}`` for every run of ``{(method, seed): Run}``."""
    settings = [check_setting(s) for s in ((settings,) if isinstance(settings, str) else settings)]
    out = {}
    for i, ((method, seed), run) in enumerate(runs.items(), 1):
        for s in settings:
            out[(method, seed, s)] = calibrate_run(run, s)
        if log:
            log(f"[{i}/{len(runs)}] {method} seed {seed}: calibrated ({', '.join(settings)})")
    return out


def score(cal: Calibrated, metric: str, idx=None) -> float:
    """``metric`` of :data:`BOARD_METRICS` (percent; NLL and Brier x100) on the test samples
    ``idx`` (default all; the AUROC uses the same indices of the noisy copies). NaN for the
    AUROC of a run without out-of-distribution logits."""
    check_metric(metric)
    p, y, lpy = (cal.probs, cal.labels, cal.logp_y) if idx is None else \
        (cal.probs[idx], cal.labels[idx], cal.logp_y[idx])
    if metric == "auroc":
        if cal.ood_probs is None:
            return math.nan
        return 100 * _m.ood_auroc(p, cal.ood_probs if idx is None else cal.ood_probs[idx], validate=False)
    if metric == "nll":
        return -100 * float(np.mean(lpy))
    from .evaluation import METRICS

    return 100 * METRICS[metric][1](p, y, None)


def evaluate_board(calibrated: dict, metrics=tuple(BOARD_METRICS)) -> pd.DataFrame:
    """Long frame ``method, seed, setting, metric, value, T, gamma`` of every calibrated run."""
    metrics = [check_metric(m) for m in metrics]
    rows = [(method, seed, setting, m, score(cal, m), cal.T, cal.gamma)
            for (method, seed, setting), cal in calibrated.items() for m in metrics]
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "metric", "value", "T", "gamma"])


def summarise_board(frame: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per ``method, setting, metric``: ``mean``, ``sd`` (sample, over seeds), ``n`` seeds and the
    Student-t interval ``low``/``high`` at ``level`` (:func:`stats.seed_interval`; NaN with
    one seed), the mean ``T`` and the ``gammas`` chosen (one per seed). Methods keep their
    order of appearance."""
    rows = []
    for (method, setting, metric), g in frame.groupby(["method", "setting", "metric"], sort=False):
        v = g["value"].dropna()
        ci = stats.seed_interval(v, level) if len(v) else {"mean": math.nan, "sd": math.nan, "n": 0,
                                                             "low": math.nan, "high": math.nan}
        rows.append({"method": method, "setting": setting, "metric": metric, **ci, "T": float(g["T"].mean()),
                     "gammas": ", ".join(f"{x:g}" for x in g["gamma"].dropna())})
    return pd.DataFrame(rows)


def seed_values(frame: pd.DataFrame, metric: str, setting: str) -> pd.DataFrame:
    """``metric`` after ``setting`` as a seeds x methods table (columns in order of appearance)."""
    part = frame[(frame.metric == check_metric(metric)) & (frame.setting == check_setting(setting))]
    return part.pivot(index="seed", columns="method", values="value")[list(dict.fromkeys(part.method))]


def missing_ood(calibrated: dict, setting: str = "none") -> list:
    """``(method, seed)`` of the runs calibrated with ``setting`` that have no
    out-of-distribution logits (a text data set, or a run recorded before the store kept
    them): the AUROC cannot rank them (:func:`rank_intervals` refuses)."""
    check_setting(setting)
    return sorted((m, s) for (m, s, st), cal in calibrated.items() if st == setting and cal.ood_probs is None)


def rank_intervals(calibrated: dict, metric: str, setting: str, n_boot: int = 200, seed: int = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Ranks of the methods by ``metric`` after ``setting`` with bootstrap intervals
    (:func:`stats.bootstrap_ranks`: test samples resampled with the same indices for every
    method, seeds resampled with the same seeds for every method). Rank 1 is the best (for
    the AUROC, the highest: it is ranked on its negative). Columns as ``bootstrap_ranks``'s,
    with ``score`` in the metric's own sign."""
    check_metric(metric), check_setting(setting)
    cells = {(m, s): cal for (m, s, st), cal in calibrated.items() if st == setting}
    if not cells:
        raise ValueError(f"no calibrated runs for setting {setting!r}")
    methods = list(dict.fromkeys(m for m, _ in cells))
    seeds = sorted({s for _, s in cells})
    missing = [(m, s) for m in methods for s in seeds if (m, s) not in cells]
    if missing:
        raise ValueError(f"every method needs every seed for the bootstrap; missing {missing}")
    sizes = {c.n for c in cells.values()}
    if len(sizes) != 1:
        raise ValueError(f"the runs were evaluated on test sets of different sizes {sorted(sizes)}")
    if metric == "auroc":
        no_ood = missing_ood(calibrated, setting)
        if no_ood:
            raise ValueError(f"runs without out-of-distribution logits cannot be ranked by the AUROC: {no_ood}")
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    out = stats.bootstrap_ranks((lambda m, s, idx: sign * score(cells[(m, s)], metric, idx), methods, seeds,
                                 sizes.pop()), n_boot=n_boot, seed=seed, level=level)
    out["score"] = sign * out["score"]
    out.attrs.update(metric=metric, setting=setting, seeds=seeds, n_boot=n_boot)
    return out


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def board_table(summary: pd.DataFrame, caption: str, labels: dict | None = None, metrics=None, digits: int = 2):
    """The leaderboard as a sortable HTML table (:func:`replicate.book.tables.sortable_table`):
    one row per method and post-hoc setting, one column per metric with "mean ± sd" over seeds
    and the 95 % interval below it (sorted by the mean); ``T`` and ``gamma_ev`` are the mean
    temperature and the gammas chosen per seed. ``labels`` maps method keys to names; rows
    come in the order of ``summary``. ``caption`` should say profile, data, network, seeds."""
    from ..book.tables import sortable_table

    metrics = [check_metric(m) for m in (metrics or [m for m in BOARD_METRICS if m in set(summary.metric)])]
    labels = labels or {}
    cells, keys, notes = [], [], []
    for (method, setting), g in summary.groupby(["method", "setting"], sort=False):
        by = g.set_index("metric")
        first = g.iloc[0]
        row = {"method": labels.get(method, method), "post-hoc": POSTHOC_NAMES[setting],
               "T": _fmt(first["T"]) if setting != "none" else "–",
               "γ_ev": first["gammas"] if setting == "fts" else "–"}
        key = {"T": first["T"] if setting != "none" else math.nan}
        note = {}
        for m in metrics:
            col = BOARD_METRICS[m][0]
            if m not in by.index:
                row[col], key[col] = "–", math.nan
                continue
            r = by.loc[m]
            sd = f" ± {_fmt(r['sd'], digits)}" if math.isfinite(r["sd"]) else ""
            row[col], key[col] = _fmt(r["mean"], digits) + sd, r["mean"]
            if math.isfinite(r["low"]):
                note[col] = f"[{_fmt(r['low'], digits)}, {_fmt(r['high'], digits)}]"
        cells.append(row), keys.append(key), notes.append(note)
    cells, keys, notes = pd.DataFrame(cells), pd.DataFrame(keys), pd.DataFrame(notes, index=range(len(cells)))
    titles = {BOARD_METRICS[m][0]: BOARD_METRICS[m][1] + (" - higher is better" if m in HIGHER_IS_BETTER else "")
              for m in metrics}
    titles.update({"T": "temperature chosen on the validation set (mean over seeds)",
                   "γ_ev": "gamma_ev chosen on the validation set, one per seed"})
    return sortable_table(cells, keys, notes.reindex(columns=cells.columns), caption=caption,
                          text_columns=("method", "post-hoc", "γ_ev"), title_row=titles)
