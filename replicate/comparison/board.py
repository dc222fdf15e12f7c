"""What the old noise rules of :mod:`replicate.comparison.noise` still read of the former
leaderboard machinery: a calibrated run (:class:`Calibrated`), its metrics on a subset of the
test samples (:func:`score`) and bootstrap rank intervals (:func:`rank_intervals`).

The leaderboard itself (evaluation under no calibration, TS and FTS, the board table, the
paired tests and Kendall's tau) lives in :mod:`replicate.experiments.leaderboard`, its rank
intervals in :func:`replicate.noise.rank_intervals`. This module goes with
:mod:`replicate.comparison.noise` once no chapter uses that.

Values are percentages as the papers print them (NLL and Brier x100, AUROC in %).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import metrics as _m
from . import stats

POSTHOC = ("none", "ts", "fts")
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
