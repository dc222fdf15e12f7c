"""The figures of Tao, Dong & Xu (2023), Dual Focal Loss, redrawn from recorded runs, and the
numbers behind them (the claims read the same numbers on every seed, with their noise:
:func:`replicate.experiments.dual_focal.report.figure_numbers`).

- Fig. 2 -- reliability diagrams before temperature scaling (:func:`reliability_frame`,
  :func:`figure2`);
- Fig. 3 -- bar plots of ECE, AdaECE and classwise ECE with their 95 % intervals under the
  noise model (:func:`interval_frame`, :func:`figure3`);
- Fig. 4a -- test ECE over the epochs, smoothed by an exponential moving average with
  factor 0.5 (:func:`ece_over_epochs`); 4b -- histograms of the maximum logit
  (:func:`max_logit_frame`); 4c -- boxplots of the dual probability ``q_j``, the largest
  probability strictly below that of the true class (:func:`dual_prob_frame`), outliers not
  drawn (:func:`figure4`);
- Table 9's ROC curves of the softmax-entropy OOD score (:func:`roc_frame`,
  :func:`roc_figure`).

Runs are passed as ``{label: Run}`` (one seed), Fig. 3's numbers as the report's intervals.
:func:`quantiles`, :func:`whisker_range` and :func:`bin_gaps` are the boxplot's and the
reliability diagram's numbers on every resample of the test examples (a row of weights of
:func:`replicate.noise.resampling.weights`): what the figure claims are decided on.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ... import metrics
from ...checks import positive_int


#: Fig. 4a's smoothing factor ("Exponential Moving Average with smoothing factor equals to 0.5").
SMOOTHING = 0.5


def _runs(runs) -> Mapping:
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    return runs


def ema(values, smoothing: float = SMOOTHING) -> np.ndarray:
    """Exponential moving average ``s_0 = x_0``, ``s_t = smoothing s_{t-1} + (1 - smoothing) x_t``."""
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must be a number in [0, 1); got {smoothing!r}")
    x = np.asarray(values, dtype=np.float64)
    out = np.empty_like(x)
    for i, v in enumerate(x):
        out[i] = v if i == 0 else smoothing * out[i - 1] + (1 - smoothing) * v
    return out


def ece_over_epochs(runs, smoothing: float = SMOOTHING) -> pd.DataFrame:
    """Test ECE (%) after every epoch of ``{label: Run}`` (runs trained with
    ``eval_every_epoch``): columns ``method, epoch, lr, ece, ece_ema``."""
    from ...plots import history

    h = history(_runs(runs), require=("test/ece", "lr"))
    frames = []
    for label in runs:
        f = h[h.method == label].sort_values("epoch")
        frames.append(pd.DataFrame({"method": label, "epoch": f["epoch"].astype(int), "lr": f["lr"],
                                    "ece": 100 * f["test/ece"], "ece_ema": ema(100 * f["test/ece"], smoothing)}))
    return pd.concat(frames, ignore_index=True)


def lr_phases(curves: pd.DataFrame) -> pd.Series:
    """The learning-rate phase (0, 1, 2, ...) of each line of :func:`ece_over_epochs`: a new
    phase starts where a method's learning rate changes."""
    method, lr = curves["method"].to_numpy(), curves["lr"].to_numpy(dtype=np.float64)
    out = np.zeros(len(curves), dtype=int)
    for m in dict.fromkeys(method):
        at = np.flatnonzero(method == m)
        out[at] = np.r_[0, np.cumsum(~np.isclose(lr[at][1:], lr[at][:-1]))]
    return pd.Series(out, index=curves.index)


def dual_probabilities(logits, labels) -> np.ndarray:
    """``q_j`` of each sample: the largest softmax probability strictly below the probability
    of the true class, 0 when there is none (Tao et al. 2023, Eq. 3)."""
    p = metrics.probs_from_logits(logits)
    y = np.asarray(labels).astype(int)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},); got {y.shape}")
    pt = p[np.arange(y.size), y]
    return np.where(p < pt[:, None], p, 0.0).max(axis=1)


def max_logit_frame(runs) -> pd.DataFrame:
    """The largest logit of every test sample (Fig. 4b): columns ``method, max_logit``."""
    return pd.concat([pd.DataFrame({"method": k, "max_logit": r.logits("test")[0].astype(np.float64).max(axis=1)})
                      for k, r in _runs(runs).items()], ignore_index=True)


def dual_prob_frame(runs) -> pd.DataFrame:
    """``q_j`` of every test sample (Fig. 4c): columns ``method, q_j``."""
    return pd.concat([pd.DataFrame({"method": k, "q_j": dual_probabilities(*r.logits("test"))})
                      for k, r in _runs(runs).items()], ignore_index=True)


def box_stats(frame: pd.DataFrame, col: str) -> pd.DataFrame:
    """Per method the numbers a boxplot draws (matplotlib's rule): quartiles, median, IQR and
    the whiskers at the furthest sample within 1.5 IQR of the box."""
    rows = []
    for m, v in frame.groupby("method", sort=False)[col]:
        x = np.sort(v.to_numpy(dtype=np.float64))
        q1, med, q3 = np.percentile(x, [25, 50, 75])
        iqr = q3 - q1
        rows.append({"method": m, "q1": q1, "median": med, "q3": q3, "iqr": iqr,
                     "whisker_low": x[x >= q1 - 1.5 * iqr].min(), "whisker_high": x[x <= q3 + 1.5 * iqr].max()})
    return pd.DataFrame(rows)


def reliability_frame(runs, n_bins: int = 15) -> pd.DataFrame:
    """Test-set reliability bins before temperature scaling (Fig. 2) of ``{label: Run}``:
    columns ``method, bin, lower, upper, count, mean_confidence, accuracy, gap``
    (``gap = accuracy - confidence``, :func:`replicate.metrics.reliability_bins`)."""
    n_bins = positive_int("n_bins", n_bins)
    frames = []
    for k, r in _runs(runs).items():
        z, y = r.logits("test")
        f = metrics.reliability_bins(metrics.probs_from_logits(z), y, n_bins=n_bins).to_frame()
        frames.append(f.assign(method=k, bin=np.arange(n_bins)))
    return pd.concat(frames, ignore_index=True)[["method", "bin", "lower", "upper", "count", "mean_confidence",
                                                 "accuracy", "gap"]]


def interval_frame(intervals: dict, metrics_=("ece", "adaece", "classwise_ece")) -> pd.DataFrame:
    """Fig. 3's bars: each method's pre-T mean over the seeds and its 95 % interval under the
    noise model, from the report's ``intervals`` of the image group (``{metric: {(method, post
    T): {"mean", "low", "high", "how"}}}``): ``method, metric, mean, low, high``."""
    rows = [{"method": k, "metric": m, "mean": v["mean"], "low": v["low"], "high": v["high"]}
            for m in metrics_ for (k, scaled), v in intervals.get(m, {}).items() if not scaled]
    return pd.DataFrame(rows, columns=["method", "metric", "mean", "low", "high"])


def entropy(logits, T: float = 1.0) -> np.ndarray:
    """Softmax entropy (nats) of each row of ``logits / T``: the OOD score."""
    from scipy.special import entr

    return entr(metrics.probs_from_logits(logits, temperature=T)).sum(axis=1)


def roc_frame(runs, ood_set: str = "cifar10c_gaussian5") -> pd.DataFrame:
    """ROC curves of the entropy score (OOD = positive) of every run of ``{label: Run}`` that
    holds ``ood_set``, pre and post temperature scaling (the run's T): ``method,
    temperature_scaled, fpr, tpr, auroc`` (sklearn's ``roc_curve``; AUROC in %)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    frames = []
    for k, r in _runs(runs).items():
        if ood_set not in r.ood_sets:
            continue
        z_in, z_out = r.logits("test")[0], r.logits(f"ood:{ood_set}")[0]
        y = np.r_[np.zeros(len(z_in)), np.ones(len(z_out))]
        for scaled, T in ((False, 1.0), (True, r.temperature)):
            s = np.r_[entropy(z_in, T), entropy(z_out, T)]
            fpr, tpr, _ = roc_curve(y, s)
            frames.append(pd.DataFrame({"method": k, "temperature_scaled": scaled, "fpr": fpr, "tpr": tpr,
                                        "auroc": 100 * roc_auc_score(y, s)}))
    cols = ["method", "temperature_scaled", "fpr", "tpr", "auroc"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def quantiles(x, w, qs) -> np.ndarray:
    """``np.percentile(sample, 100 q)`` (linear) of the sample that repeats ``x_i`` ``w_bi``
    times, for each row ``b`` of the weights ``w`` (rows summing to ``len(x)``): ``(B, len(qs))``."""
    order = np.argsort(x, kind="stable")
    xs, out = np.asarray(x, dtype=np.float64)[order], []
    for a in range(0, w.shape[0], 100):
        cum = np.cumsum(np.asarray(w[a:a + 100])[:, order], axis=1)
        n = cum[:, -1]
        cols = []
        for q in qs:
            h = q * (n - 1)
            lo = np.floor(h)
            i0 = (cum <= lo[:, None]).sum(axis=1)
            i1 = np.minimum((cum <= lo[:, None] + 1).sum(axis=1), len(xs) - 1)
            cols.append(xs[i0] + (h - lo) * (xs[i1] - xs[i0]))
        out.append(np.stack(cols, axis=1))
    return np.concatenate(out)


def whisker_range(x, w) -> np.ndarray:
    """The span between a boxplot's whiskers (matplotlib's rule: the furthest samples within 1.5
    IQR of the box, :func:`.figures.box_stats`) of each resample (row) of ``w``."""
    order = np.argsort(x, kind="stable")
    xs = np.asarray(x, dtype=np.float64)[order]
    q1, q3 = quantiles(x, w, (0.25, 0.75)).T
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    out = np.empty(w.shape[0])
    for a in range(0, w.shape[0], 100):
        drawn = np.asarray(w[a:a + 100])[:, order] > 0
        first = np.argmax(drawn & (xs[None, :] >= lo[a:a + 100, None]), axis=1)
        last = len(xs) - 1 - np.argmax((drawn & (xs[None, :] <= hi[a:a + 100, None]))[:, ::-1], axis=1)
        out[a:a + 100] = xs[last] - xs[first]
    return out


def bin_gaps(probs, labels, w, n_bins: int = 15) -> np.ndarray:
    """|accuracy − confidence| of each of the 15 equal-width bins of the top-label confidence
    (the reliability diagram's, :func:`replicate.metrics.reliability_bins`) on each resample
    (row) of ``w``: ``(B, 15)`` (NaN where a bin is empty), and the counts on all the data."""
    from scipy import sparse

    from ... import binning as _b
    from ...noise.resampling import matmul

    conf, hit = _b.top_label(probs)
    hit = (hit == labels).astype(np.float64)
    b = _b.bin_index(conf, _b.width_edges(n_bins), "right", uniform=True)
    n = len(conf)
    res = sparse.csr_matrix((hit - conf, (np.arange(n), b)), shape=(n, n_bins))
    cnt = sparse.csr_matrix((np.ones(n), (np.arange(n), b)), shape=(n, n_bins))
    r, c = matmul(w, res), matmul(w, cnt)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(r) / np.where(c > 0, c, np.nan), np.bincount(b, minlength=n_bins)


# ----------------------------------------------------------------------------- the figures
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
    the noise model's interval at ``level``); ``labels`` maps method keys to bar labels, in order."""
    import matplotlib.pyplot as plt

    names = {"ece": "ECE (%)", "adaece": "AdaECE (%)", "classwise_ece": "classwise ECE (%)"}
    mets = list(dict.fromkeys(intervals.metric))
    from ...plots import page_figure

    fig, axes = page_figure(len(mets), 3.3)
    for ax, m in zip(axes, mets):
        f = intervals[intervals.metric == m].set_index("method").reindex([k for k in labels if k in
                                                                         set(intervals.method)])
        x = np.arange(len(f))
        ax.bar(x, f["mean"], color=[f"C{i}" for i in range(len(f))])
        # the interval as drawn (a bootstrap interval of a binned ECE need not contain the mean)
        ax.vlines(x, f["low"], f["high"], color="k", lw=1)
        ax.hlines(np.r_[f["low"], f["high"]], np.r_[x, x] - 0.15, np.r_[x, x] + 0.15, color="k", lw=1)
        ax.set_xticks(range(len(f)), [labels[k] for k in f.index], rotation=45, ha="right", fontsize="small")
        ax.set(title=names.get(m, m), ylabel=f"{names.get(m, m)}, {int(100 * level)} % interval")
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
