"""The figures of Tao, Dong & Xu (2023), Dual Focal Loss, redrawn from recorded runs, and the
numbers behind them: those the figures draw (first seed, :func:`frames`) and those the figure
claims are decided on (every stored seed, on every resample of the noise model:
:func:`figure_numbers`, the Named numbers of :mod:`.claims`).

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
:func:`replicate.comparison.noise.resampling.weights`): what the figure claims are decided on.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ... import metrics
from ...checks import positive_int
from ...claims.evidence import Draws
from ...comparison.noise import resampling
from . import claims as cl
from . import plan as dfl

if TYPE_CHECKING:
    from ... import comparison as cmp


#: Fig. 4a's smoothing factor ("Exponential Moving Average with smoothing factor equals to 0.5").
SMOOTHING = 0.5


def _name(key: str) -> str:
    from ...comparison.report import names

    return names().method(key)


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


class _Ranked:
    """``x`` sorted (``xs``) and each resample's cumulative weights in that order (``cum``,
    one row per row of ``w``), the rows also laid end to end for one search over all."""

    def __init__(self, x, w):
        order = np.argsort(x, kind="stable")
        self.xs = np.asarray(x, dtype=np.float64)[order]
        self.cum = np.cumsum(np.asarray(w, dtype=np.float64)[:, order], axis=1)
        b, self.n = self.cum.shape
        self.off = (self.cum[:, -1].max() + 1) * np.arange(b)
        self.flat = (self.cum + self.off[:, None]).ravel()

    def search(self, targets, side: str) -> np.ndarray:
        """``np.searchsorted(cum[b], targets[b], side)`` for every row ``b``."""
        return np.searchsorted(self.flat, targets + self.off, side) - self.n * np.arange(len(self.off))

    def quantiles(self, qs) -> np.ndarray:
        xs, n, out = self.xs, self.cum[:, -1], []
        for q in qs:
            h = q * (n - 1)
            lo = np.floor(h)
            i0, i1 = self.search(lo, "right"), np.minimum(self.search(lo + 1, "right"), len(xs) - 1)
            out.append(xs[i0] + (h - lo) * (xs[i1] - xs[i0]))
        return np.stack(out, axis=1)


def quantiles(x, w, qs) -> np.ndarray:
    """``np.percentile(sample, 100 q)`` (linear) of the sample that repeats ``x_i`` ``w_bi``
    times, for each row ``b`` of the weights ``w`` (rows summing to ``len(x)``): ``(B, len(qs))``."""
    return _Ranked(x, w).quantiles(qs)


def box_numbers(x, w) -> tuple[np.ndarray, np.ndarray]:
    """The median and the span between the whiskers (matplotlib's rule: the furthest samples
    within 1.5 IQR of the box, :func:`box_stats`) of each resample (row) of ``w``."""
    r = _Ranked(x, w)
    q1, med, q3 = r.quantiles((0.25, 0.5, 0.75)).T
    lo, hi, rows = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1), np.arange(len(r.cum))
    j = np.searchsorted(r.xs, lo, "left")                                 # the first x >= lo ...
    first = r.search(np.where(j > 0, r.cum[rows, np.maximum(j - 1, 0)], 0.0), "right")     # ... drawn
    last = r.search(r.cum[rows, np.searchsorted(r.xs, hi, "right") - 1], "left")          # the last drawn <= hi
    xs = r.xs
    return med, xs[last] - xs[first]


def whisker_range(x, w) -> np.ndarray:
    """The span between a boxplot's whiskers of each resample (row) of ``w`` (:func:`box_numbers`)."""
    return box_numbers(x, w)[1]


def bin_gaps(probs, labels, w, n_bins: int = 15) -> tuple[np.ndarray, np.ndarray]:
    """|accuracy − confidence| of each of the ``n_bins`` equal-width bins of the top-label
    confidence (the reliability diagram's, :func:`replicate.metrics.reliability_bins`) on each
    resample (row) of ``w``: ``(B, n_bins)`` (NaN where a bin is empty), and the counts on all
    the data: one product of ``w`` with the per-example residual and count of each bin."""
    from ...comparison.noise.scores import width_sums

    count, sc, sh = width_sums(probs, labels, np.vstack([np.ones((1, len(labels))), np.asarray(w)]), n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(sh[1:] - sc[1:]) / np.where(count[1:] > 0, count[1:], np.nan)
    return gap, count[0].astype(np.int64)


def frames(p: cmp.Plan, runs: dict) -> dict:
    """The numbers Figs. 2 and 4 draw (first seed, as the paper's figures): ``fig2``, ``fig4a``
    (without the history runs: absent), ``fig4b``, ``fig4c``."""
    seed, image = p.seeds[0], runs["image"]
    first = {k: image[(k, seed)] for k in dfl.FIG2_METHODS if (k, seed) in image}
    trio = {k: first[k] for k in dfl.HISTORY_METHODS if k in first}
    out = {"fig2": reliability_frame(first), "fig4b": max_logit_frame(trio), "fig4c": dual_prob_frame(trio)}
    hist = runs.get("history")
    if hist is not None and (cl.CE, seed) in image:
        out["fig4a"] = ece_over_epochs({cl.CE: image[(cl.CE, seed)],
                                            **{k: hist[(k, seed)] for k in dfl.HISTORY_METHODS if (k, seed) in hist}})
    return out



# ----------------------------------------------------------------------------- the claims' numbers
def _noise(n_seeds: int, n_boot: int, what: str) -> str:
    if n_seeds == 1:
        return f"bootstrap over {what} ({n_boot:,} resamples, the draws of every cell); one seed: the training " \
               f"noise is not measured"
    return f"two-level bootstrap ({n_boot:,} resamples): the {n_seeds} seeds resampled, then {what} (the draws of " \
           f"every cell)"


def figure_numbers(image: dict, history: dict | None, row: str, no_history: str) -> dict:
    """The Named numbers of the figure claims (keys of :func:`.claims.named` with a figure
    prefix): Fig. 2's per-bin |accuracy − confidence| and Fig. 4b/c's medians and whisker range
    of each test example's maximum logit and q_j (resampled with the noise model's test
    draws, every stored seed; the order statistics on its first
    :data:`~replicate.comparison.noise.resampling.N_BOOT_SLOW`, as the library's slow metrics), Fig. 4a's
    smoothed test ECE (its seeds resampled)."""
    out, per = {}, {}
    for (m, st, s), run in image.items():
        if st == "" and m in dfl.FIG2_METHODS:
            per.setdefault(m, {})[s] = run
    if not per:
        return out
    n = next(iter(next(iter(per.values())).values())).logits("test")[1].size
    w, ones = resampling.weights(n, resampling.N_BOOT, 0, "test"), np.ones((1, n))
    slow = w[:resampling.N_BOOT_SLOW]
    what = f"the {n:,} test examples"
    gaps, counts = {}, {}
    for m, runs in per.items():
        used = ((row, _name(m), tuple(sorted(runs))),)
        stats = {"logit": [], "median": [], "range": [], "gap": []}
        for s, run in sorted(runs.items()):
            z, y = run.logits("test")
            z = np.asarray(z, dtype=np.float64)
            top, qj = z.max(axis=1), dual_probabilities(z, y)
            if m in dfl.HISTORY_METHODS:          # Fig. 4b/c: order statistics, on the first resamples
                stats["logit"].append((quantiles(top, ones, (0.5,))[0, 0], quantiles(top, slow, (0.5,))[:, 0]))
                (m0, r0), (med, rng) = box_numbers(qj, ones), box_numbers(qj, slow)
                stats["median"].append((m0[0], med))
                stats["range"].append((r0[0], rng))
            p = np.exp(z - z.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            g, c = bin_gaps(p, y, w, cl.N_BINS)
            stats["gap"].append((bin_gaps(p, y, ones, cl.N_BINS)[0][0], g))
            counts[m] = np.minimum(counts.get(m, c), c)
        def drawn(pairs):
            points, reps = zip(*pairs)
            return np.mean(points, axis=0), resampling.over_seeds(np.stack(reps))
        k = len(runs)
        for key, name in (("logit", "fig4b|{m}"), ("median", "fig4c|median|{m}"), ("range", "fig4c|range|{m}")):
            if not stats[key]:
                continue
            point, reps = drawn(stats[key])
            out[name.format(m=m)] = Draws(float(point), reps, _noise(k, len(reps), what), used)
        gaps[m] = (np.mean([g for g, _ in stats["gap"]], axis=0), np.stack([r for _, r in stats["gap"]]), used, k)
    for b in range(cl.N_BINS):
        few = [m for m in gaps if counts[m][b] < cl.MIN_BIN]
        for m, (point, reps, used, k) in gaps.items():
            key = f"fig2|bin{b}|{m}"
            out[key] = (f"bin {b + 1} holds fewer than {cl.MIN_BIN} test samples of "
                        f"{', '.join(_name(x) for x in few)}" if few else
                        Draws(float(point[b]), resampling.over_seeds(reps[:, :, b]), _noise(k, reps.shape[1], what),
                              used))
    out.update(curve_numbers(image, history, row) if history else
               {q.key: no_history for q in cl.named() if q.key.startswith("fig4a|")})
    return out


def curve_numbers(image: dict, history: dict, row: str) -> dict:
    """Fig. 4a's Named numbers: the smoothed test ECE (mean over the drawn seeds) after the
    warm-up, its share of epochs with DFL below both and its mean per learning-rate phase."""
    def recorded(run):              # a seed another chapter trained may not record the per-epoch test ECE
        return bool(run.history) and all("ece" in (h.get("test") or {}) for h in run.history)
    runs = {cl.CE: {s: r for (m, st, s), r in image.items() if (m, st) == (cl.CE, "") and recorded(r)},
            **{m: {s: r for (k, s), r in history.items() if k == m and recorded(r)} for m in (cl.FL, cl.DFL)}}
    if not all(runs.values()):
        return {q.key: "no run records the per-epoch test ECE of every method" for q in cl.named()
                if q.key.startswith("fig4a|")}
    curves, phases = {}, None
    for m, by_seed in runs.items():
        f = ece_over_epochs({s: by_seed[s] for s in sorted(by_seed)})
        n = int(f.epoch.max())
        warm = max(1, int(round(cl.WARMUP_FRACTION * n)))
        f = f.assign(phase=lr_phases(f))
        f = f[f.epoch > warm]
        if f.empty:
            return {q.key: f"only {n} epoch(s): none after the warm-up" for q in cl.named() if q.key.startswith("fig4a|")}
        curves[m] = f.pivot_table(index="epoch", columns="method", values="ece_ema").to_numpy().T   # (S, E)
        phases = f[f.method == f.method.iloc[0]].phase.to_numpy()
    b = resampling.N_BOOT
    mean = {m: c[resampling.seed_draws(len(c), b)].mean(axis=1) for m, c in curves.items()}     # (B, E)
    pt = {m: c.mean(axis=0) for m, c in curves.items()}
    counts = ", ".join(f"{_name(m)} {len(c)}" for m, c in curves.items())
    several = any(len(c) > 1 for c in curves.values())
    noise = (f"the seeds resampled ({b:,} resamples; seeds with per-epoch records: {counts}); the per-epoch test "
             f"ECE as each run recorded it (no per-example values are kept to resample)" if several else
             "one seed, and the per-epoch test ECE as the run recorded it: no resampling")
    used = tuple((row, _name(m), tuple(sorted(runs[m]))) for m in runs)

    def draws(fn):
        return Draws(float(fn(pt)), fn(mean) if several else None, noise, used)

    def below(c):
        return (c[cl.DFL] < np.minimum(c[cl.CE], c[cl.FL])).mean(axis=-1)
    out = {"fig4a|below": draws(below)}
    for p in range(1, cl.PHASES + 1):
        at = phases == p - 1
        for m in runs:
            out[f"fig4a|phase{p}|{m}"] = draws(lambda c, m=m: c[m][..., at].mean(axis=-1)) if at.any() else \
                f"the schedule has no learning-rate phase {p} after the warm-up"
    return out


# ----------------------------------------------------------------------------- the figures
def _caption(fig, caption_text):
    from ...plots import add_caption, settle_legends

    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
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
        # upright names would run into each other once the chapter shows many methods
        ax.set_xticks(range(len(f)), [labels[k] for k in f.index], rotation=90, fontsize="small")
        # the interval's level in the title: a long y label runs past a short panel
        ax.set(title=f"{names.get(m, m)}, {int(100 * level)} % interval", ylabel=names.get(m, m))
    return _caption(fig, caption_text)


def figure4(curves: pd.DataFrame, max_logits: pd.DataFrame, dual: pd.DataFrame, caption_text: str | None = None):
    """Fig. 4: (a) smoothed test ECE over the epochs with the learning-rate drops marked,
    (b) histograms of the maximum logit, (c) boxplots of ``q_j`` without outliers."""

    from ...plots import page_figure, place_legend

    fig, (a, b, c) = page_figure(3, 2.9, max_cols=1)
    for m, f in curves.groupby("method", sort=False):
        a.plot(f["epoch"], f["ece_ema"], marker="o", ms=3, label=m)
    first = curves[curves.method == curves.method.iloc[0]]
    for e in first["epoch"][np.r_[False, ~np.isclose(first["lr"].to_numpy()[1:], first["lr"].to_numpy()[:-1])]]:
        a.axvline(e - 0.5, color="0.6", ls=":", lw=1)
    a.set(title=f"(a) test ECE, EMA {SMOOTHING:g}", xlabel="epoch (dotted: lr drop)", ylabel="ECE (%)")
    place_legend(a, fontsize="x-small")
    bins = np.histogram_bin_edges(max_logits["max_logit"], bins=40)
    for m, f in max_logits.groupby("method", sort=False):
        b.hist(f["max_logit"], bins=bins, histtype="step", lw=1.5, label=m)
    b.set(title="(b) maximum logit (test set)", xlabel="max_k z_k", ylabel="samples")
    place_legend(b, fontsize="x-small")
    groups = list(dict.fromkeys(dual.method))
    c.boxplot([dual.loc[dual.method == m, "q_j"] for m in groups], showfliers=False)
    c.set_xticks(range(1, len(groups) + 1), groups, fontsize="small")
    c.set(title="(c) q_j (test set, outliers not shown)", ylabel="q_j")
    return _caption(fig, caption_text)


def roc_figure(roc: pd.DataFrame, title: str, caption_text: str | None = None):
    """ROC curves of :func:`roc_frame` before (solid) and after (dashed) temperature scaling,
    AUROC in the legend."""
    import matplotlib.pyplot as plt

    from ...plots import place_legend

    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    for i, (m, f) in enumerate(roc.groupby("method", sort=False)):
        for scaled, ls in ((False, "-"), (True, "--")):
            g = f[f.temperature_scaled == scaled]
            if len(g):
                ax.plot(g["fpr"], g["tpr"], ls=ls, color=f"C{i}", lw=1.3,
                        label=f"{m} {'post' if scaled else 'pre'} T ({g['auroc'].iloc[0]:.1f})")
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    ax.set(xlabel="false positive rate", ylabel="true positive rate (OOD detected)", title=title)
    place_legend(ax, fontsize="x-small", ncol=1)
    return _caption(fig, caption_text)
