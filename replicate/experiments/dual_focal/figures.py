"""The figures of Tao, Dong & Xu (2023), Dual Focal Loss, redrawn from recorded runs; the
numbers behind them (which the chapter's claims read) are computed in :mod:`.evidence`.

- Fig. 2 -- reliability diagrams before temperature scaling (:func:`reliability_frame`,
  :func:`figure2`);
- Fig. 3 -- bar plots of ECE, AdaECE and classwise ECE with confidence intervals over
  seeds (:func:`interval_frame`, :func:`figure3`);
- Fig. 4a -- test ECE over the epochs, smoothed by an exponential moving average with
  factor 0.5 (:func:`ece_over_epochs`); 4b -- histograms of the maximum logit
  (:func:`max_logit_frame`); 4c -- boxplots of the dual probability ``q_j``, the largest
  probability strictly below that of the true class (:func:`dual_prob_frame`), outliers not
  drawn (:func:`figure4`);
- Table 9's ROC curves of the softmax-entropy OOD score (:func:`roc_frame`,
  :func:`roc_figure`).

Runs are passed as ``{label: Run}`` (one seed) or, for Fig. 3, as the long frame of
:func:`replicate.comparison.evaluate_runs` (every seed).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ... import metrics
from .evidence import SMOOTHING, _runs


def _caption(fig, caption_text):
    from ...plots import add_caption

    fig.tight_layout()
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def figure2(runs, n_bins: int = 15, caption_text: str | None = None):
    """Fig. 2: reliability diagrams of ``{label: Run}`` before temperature scaling (test set,
    ``n_bins`` equal-width bins), with the confidence histograms underneath."""
    from ...plots import reliability_grid

    panels = {k: (metrics.probs_from_logits(r.logits("test")[0]), r.logits("test")[1])
              for k, r in _runs(runs).items()}
    return reliability_grid(panels, n_bins=n_bins, caption_text=caption_text)


def figure3(intervals: pd.DataFrame, labels: Mapping[str, str], level: float = 0.95,
            caption_text: str | None = None):
    """Fig. 3: one bar plot per metric of :func:`interval_frame` (means over seeds, error bars
    the t interval at ``level``); ``labels`` maps method keys to bar labels, in order."""
    import matplotlib.pyplot as plt

    names = {"ece": "ECE (%)", "adaece": "AdaECE (%)", "classwise_ece": "classwise ECE (%)"}
    mets = list(dict.fromkeys(intervals.metric))
    from ...plots import page_figure

    fig, axes = page_figure(len(mets), 3.3)
    for ax, m in zip(axes, mets):
        f = intervals[intervals.metric == m].set_index("method").reindex([k for k in labels if k in
                                                                         set(intervals.method)])
        err = np.vstack([f["mean"] - f["low"], f["high"] - f["mean"]])
        ax.bar(range(len(f)), f["mean"], yerr=np.where(np.isfinite(err), err, 0), capsize=3,
               color=[f"C{i}" for i in range(len(f))])
        ax.set_xticks(range(len(f)), [labels[k] for k in f.index], rotation=45, ha="right", fontsize="small")
        ax.set(title=names.get(m, m), ylabel=f"{names.get(m, m)}, {int(100 * level)} % t interval")
    return _caption(fig, caption_text)


def figure4(curves: pd.DataFrame, max_logits: pd.DataFrame, dual: pd.DataFrame, caption_text: str | None = None):
    """Fig. 4: (a) smoothed test ECE over the epochs with the learning-rate drops marked,
    (b) histograms of the maximum logit, (c) boxplots of ``q_j`` without outliers."""
    import matplotlib.pyplot as plt

    from ...plots import page_figure

    fig, (a, b, c) = page_figure(3, 2.9, max_cols=1)
    for m, f in curves.groupby("method", sort=False):
        a.plot(f["epoch"], f["ece_ema"], marker="o", ms=3, label=m)
    first = curves[curves.method == curves.method.iloc[0]]
    for e in first["epoch"][np.r_[False, ~np.isclose(first["lr"].to_numpy()[1:], first["lr"].to_numpy()[:-1])]]:
        a.axvline(e - 0.5, color="0.6", ls=":", lw=1)
    a.set(title=f"(a) test ECE, EMA {SMOOTHING:g}", xlabel="epoch (dotted: lr drop)", ylabel="ECE (%)")
    a.legend(fontsize="x-small")
    bins = np.histogram_bin_edges(max_logits["max_logit"], bins=40)
    for m, f in max_logits.groupby("method", sort=False):
        b.hist(f["max_logit"], bins=bins, histtype="step", lw=1.5, label=m)
    b.set(title="(b) maximum logit (test set)", xlabel="max_k z_k", ylabel="samples")
    b.legend(fontsize="x-small")
    groups = list(dict.fromkeys(dual.method))
    c.boxplot([dual.loc[dual.method == m, "q_j"] for m in groups], showfliers=False)
    c.set_xticks(range(1, len(groups) + 1), groups, fontsize="small")
    c.set(title="(c) q_j (test set, outliers not shown)", ylabel="q_j")
    return _caption(fig, caption_text)


def roc_figure(roc: pd.DataFrame, title: str, caption_text: str | None = None):
    """ROC curves of :func:`roc_frame` before (solid) and after (dashed) temperature scaling,
    AUROC in the legend."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    for i, (m, f) in enumerate(roc.groupby("method", sort=False)):
        for scaled, ls in ((False, "-"), (True, "--")):
            g = f[f.temperature_scaled == scaled]
            if len(g):
                ax.plot(g["fpr"], g["tpr"], ls=ls, color=f"C{i}", lw=1.3,
                        label=f"{m} {'post' if scaled else 'pre'} T ({g['auroc'].iloc[0]:.1f})")
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    ax.set(xlabel="false positive rate", ylabel="true positive rate (OOD detected)", title=title)
    ax.legend(fontsize="x-small", ncol=1)
    return _caption(fig, caption_text)
