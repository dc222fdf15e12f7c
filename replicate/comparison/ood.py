"""Out-of-distribution detection from recorded runs: the AUROC tables and ROC curves of
AdaFocal (Ghosh et al. 2022, Table 10 / Fig. 6), Dual Focal Loss and FCL.

Every CIFAR run records its logits on out-of-distribution sets when it finishes
(:mod:`replicate.runs.ood`: its own test images with generated CIFAR-10-C Gaussian noise
of severity 5, and SVHN when its files are present). The score is the entropy of the
softmax (higher: more likely out-of-distribution); AUROC is the probability that an OOD
sample has a higher entropy than an in-distribution test sample
(:func:`replicate.metrics.ood_auroc`). Post-T rows divide both sets of logits by the
temperature chosen on the validation set by ECE over the grid 0.1..10.0, as the papers do.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import metrics, posthoc

#: The out-of-distribution sets of :mod:`replicate.runs.ood` and how the papers print them
#: (``setting`` of :mod:`replicate.paper_tables`, e.g. AdaFocal Table 10).
OOD_SETTINGS = {"cifar10c_gaussian5": "ood=CIFAR-10-C", "svhn": "ood=SVHN"}


def _check_set(ood_set: str) -> str:
    if ood_set not in OOD_SETTINGS:
        raise ValueError(f"ood_set must be one of {', '.join(OOD_SETTINGS)}; got {ood_set!r}")
    return ood_set


def _temperature(run, grid=None) -> float:
    return float(posthoc.fit_temperature(*run.logits("val"), method="grid", metric="ece", grid=grid,
                                         warn=False).params["T"])


def evaluate_ood(runs: dict, ood_set: str = "cifar10c_gaussian5", grid=None) -> pd.DataFrame:
    """Entropy AUROC (%) of every run of ``{(method, seed): Run}`` that holds ``ood_set``,
    pre and post temperature scaling, in :func:`replicate.comparison.evaluate_runs`' layout
    (metric ``auroc``). Runs recorded without that set are left out and listed in
    ``frame.attrs["missing"]`` (``[(method, seed)]``)."""
    _check_set(ood_set)
    rows, missing = [], []
    for (key, seed), run in runs.items():
        if ood_set not in run.ood_sets:
            missing.append((key, seed))
            continue
        z_in, _ = run.logits("test")
        z_out, _ = run.logits(f"ood:{ood_set}")
        T = _temperature(run, grid)
        for scaled, t in ((False, 1.0), (True, T)):
            auroc = metrics.ood_auroc(metrics.probs_from_logits(z_in, t), metrics.probs_from_logits(z_out, t))
            rows.append({"method": key, "seed": seed, "metric": "auroc", "temperature_scaled": scaled,
                         "value": 100 * auroc, "T": T if scaled else math.nan,
                         "T_selected_by": "ece" if scaled else ""})
    frame = pd.DataFrame(rows, columns=["method", "seed", "metric", "temperature_scaled", "value", "T",
                                        "T_selected_by"])
    frame.attrs["missing"] = missing
    return frame


def roc_curves(runs: dict, ood_set: str = "cifar10c_gaussian5", grid=None) -> pd.DataFrame:
    """ROC curves of the entropy score (OOD = positive) of every run that holds ``ood_set``,
    pre and post temperature scaling: long frame ``method, seed, temperature_scaled, fpr, tpr``
    (points of :func:`sklearn.metrics.roc_curve`) with ``auroc`` (its area, %)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    _check_set(ood_set)
    frames = []
    for (key, seed), run in runs.items():
        if ood_set not in run.ood_sets:
            continue
        z_in, _ = run.logits("test")
        z_out, _ = run.logits(f"ood:{ood_set}")
        T = _temperature(run, grid)
        y = np.r_[np.zeros(len(z_in)), np.ones(len(z_out))]
        for scaled, t in ((False, 1.0), (True, T)):
            score = np.r_[entropy(z_in, t), entropy(z_out, t)]
            fpr, tpr, _ = roc_curve(y, score)
            frames.append(pd.DataFrame({"method": key, "seed": seed, "temperature_scaled": scaled, "fpr": fpr,
                                        "tpr": tpr, "auroc": 100 * roc_auc_score(y, score)}))
    if not frames:
        return pd.DataFrame(columns=["method", "seed", "temperature_scaled", "fpr", "tpr", "auroc"])
    return pd.concat(frames, ignore_index=True)


def entropy(logits, T: float = 1.0) -> np.ndarray:
    """Softmax entropy ``-sum_k p_k log p_k`` (nats) of each row of ``logits / T``."""
    z = np.asarray(logits, dtype=np.float64) / T
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(np.exp(logp) * logp).sum(axis=1)


def ood_side_by_side(ours: pd.DataFrame, papers: dict, methods, digits: int = 2) -> pd.DataFrame:
    """AUROC beside the paper's: a row per method; for "Pre T" and "Post T" one column per
    printed row of ``papers`` (``{column label: paper_values frame}``, e.g. the paper's
    ResNet-110 and Wide-ResNet rows) and ours (mean ± std over seeds; "–" where a run has no
    logits of the set). ``ours`` is :func:`evaluate_ood` output. Each method is compared
    with its printed method (``Method.compared_with``)."""
    from .evaluation.tables import _cell, summarise
    from .side_by_side.tables import _fmt

    ours_s = summarise(ours) if len(ours) else ours.assign(mean=[], std=[], T_std=[])
    table = {}
    for m in methods:
        row = {}
        for scaled, phase in ((False, "Pre T"), (True, "Post T")):
            for label, paper in papers.items():
                p = _cell(paper, m.compared_with, "auroc", scaled) if len(paper) else {"mean": math.nan}
                row[(phase, label)] = _fmt(p["mean"], digits=digits)
            o = _cell(ours_s, m.key, "auroc", scaled) if len(ours_s) else {"mean": math.nan, "std": math.nan}
            row[(phase, "ours")] = _fmt(o["mean"], o["std"], digits=digits)
        table[m.label] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "method"
    return frame
