"""Figures of Ghosh et al. (2022, AdaFocal) drawn from recorded runs; none trains.

- :func:`bins_history` -- a run's per-epoch validation bins as a long frame: from the
  engine's ``val_bins`` record (any loss, runs with ``eval_every_epoch``) or from the
  AdaFocal/CalFocal loss state (``loss_state``: the bins the loss used, with its gammas).
- :func:`figure1` -- Fig. 1: validation AdaECE (15 equal-mass bins) and the gap
  ``E_val = C_val - A_val`` of a low, a middle and a high bin over the epochs, per method.
- :func:`common_binning` -- Fig. 2(b) / 3(d): C_train (training samples grouped by the
  validation bins' edges on p_true), C_val and A_val of some bins over the epochs.
- :func:`over_epochs` -- Fig. 3(b-c), 4(a), 13, 17, 19, 21: per-epoch test metrics, mean
  over seeds with a band of one standard deviation.
- :func:`bin_dynamics` -- Fig. 5(a), 18, 20, 22: per bin (one row each), E_val (left) and
  gamma_t (right) over the epochs, one line per run.
- :func:`error_bars` -- Fig. 14: ECE mean and standard deviation over seeds, pre (dark) and
  post (light) temperature scaling.
- :func:`roc_figure` -- Fig. 6: ROC curves of the softmax entropy as an OOD score.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plots import PAGE_WIDTH, add_caption, integer_epochs, page_figure, place_legend, settle_legends
from ...plots.lint import keep_limits

SOURCES = ("val_bins", "loss_state")


def bins_history(run, source: str = "val_bins") -> pd.DataFrame:
    """Per-epoch validation bins of ``run``: columns ``epoch, bin, count, confidence (C_val),
    accuracy (A_val), gap (E_val = C_val - A_val)`` and, from ``val_bins``,
    ``train_confidence`` (C_train), from ``loss_state``, ``gamma`` (after the epoch's update).
    Empty when the run has no such record (trained without ``eval_every_epoch``, or a loss
    without validation bins)."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}; got {source!r}")
    frames = []
    for row in run.history:
        rec = row.get(source)
        if not rec:
            continue
        cols = {k: np.asarray([np.nan if x is None else x for x in v], dtype=float) for k, v in rec.items()
                if k in ("count", "confidence", "accuracy", "train_confidence", "gamma")}
        f = pd.DataFrame(cols)
        f.insert(0, "bin", np.arange(len(f)))
        f.insert(0, "epoch", row["epoch"])
        frames.append(f)
    if not frames:
        return pd.DataFrame(columns=["epoch", "bin", "count", "confidence", "accuracy", "gap"])
    out = pd.concat(frames, ignore_index=True)
    out["gap"] = out["confidence"] - out["accuracy"]
    return out


def adaece_history(bins: pd.DataFrame) -> pd.Series:
    """AdaECE (%) per epoch from :func:`bins_history`: count-weighted mean of ``|E_val|``."""
    w = bins.assign(w=bins["count"] * bins["gap"].abs())
    g = w.groupby("epoch")
    return 100 * g["w"].sum() / g["count"].sum()


def _check_runs(runs) -> None:
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")


def _check_bins(bins, n: int):
    bins = tuple(bins)
    bad = [b for b in bins if not isinstance(b, (int, np.integer)) or not 0 <= b < n]
    if not bins or bad:
        raise ValueError(f"bins must be bin indices in 0..{n - 1}; got {bins!r}")
    return bins


def _note_missing(fig, missing: list) -> None:
    if missing:
        fig.text(0.01, 1.0, "no per-epoch validation bins recorded: " + ", ".join(missing), fontsize="x-small",
                 va="bottom", color="0.35")


def figure1(runs: Mapping[str, object], bins=(0, 7, 14), caption_text: str | None = None):
    """Fig. 1: (a) validation AdaECE (%) over the epochs and (b) ``E_val`` of ``bins``, one
    line per run of ``{label: Run}`` (runs without per-epoch bins are named above the plot)."""
    _check_runs(runs)
    hist = {k: bins_history(r) for k, r in runs.items()}
    missing = [k for k, h in hist.items() if not len(h)]
    hist = {k: h for k, h in hist.items() if len(h)}
    n = int(max((h["bin"].max() for h in hist.values()), default=14)) + 1
    bins = _check_bins(bins, n)
    fig, axes = page_figure(1 + len(bins), 2.8, layout="constrained")   # laid out with the titles wrapped
    for label, h in hist.items():
        a = adaece_history(h)
        axes[0].plot(a.index, a.values, marker="o", ms=2.5, label=label)
        for ax, b in zip(axes[1:], bins):
            hb = h[h["bin"] == b]
            ax.plot(hb["epoch"], hb["gap"], marker="o", ms=2.5, label=label)
    axes[0].set(title="(a) validation AdaECE", xlabel="epoch", ylabel="%")
    for ax, b in zip(axes[1:], bins):
        ax.axhline(0, color="black", lw=0.8)
        ax.set(title=f"(b) bin {b}: E_val = C_val − A_val", xlabel="epoch")
        keep_limits(ax, "0 in view: the sign of the gap E_val turns γ up or down", axis="y")
    place_legend(axes[0], fontsize="x-small")
    integer_epochs(axes)
    _note_missing(fig, missing)
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def common_binning(runs: Mapping[str, object], bins=(0, 7, 14), caption_text: str | None = None):
    """Fig. 2(b): per bin, C_train (solid; training samples grouped by the validation bins'
    edges on their true-class probability) and C_val (starred) over the epochs, per run."""
    _check_runs(runs)
    hist = {k: bins_history(r) for k, r in runs.items()}
    missing = [k for k, h in hist.items() if not len(h) or h["train_confidence"].isna().all()]
    hist = {k: h for k, h in hist.items() if k not in missing}
    n = int(max((h["bin"].max() for h in hist.values()), default=14)) + 1
    bins = _check_bins(bins, n)
    fig, axes = page_figure(len(bins), 2.8)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for (label, h), c in zip(hist.items(), colors * 3):
        for ax, b in zip(axes, bins):
            hb = h[h["bin"] == b]
            ax.plot(hb["epoch"], hb["train_confidence"], color=c, label=f"{label}, C_train")
            ax.plot(hb["epoch"], hb["confidence"], color=c, ls="", marker="*", ms=5, label=f"{label}, C_val")
    for ax, b in zip(axes, bins):
        ax.set(title=f"validation bin {b}", xlabel="epoch", ylabel="mean confidence")
    place_legend(axes[0], fontsize="x-small")
    integer_epochs(axes)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    _note_missing(fig, missing)
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def over_epochs(runs: Mapping[tuple, object], columns: Mapping[str, str] | None = None,
                caption_text: str | None = None):
    """Per-epoch metrics of ``{(label, seed): Run}`` (default: test error and ECE, %), the
    mean over seeds as a line with a one-standard-deviation band, cut to the range the metric
    can take (:func:`replicate.comparison.stats.metric_range`: 0-100 for the percentages;
    :func:`replicate.plots.bands.sd_band`); the caption says so when a band is drawn. Returns
    the Figure."""
    from ...comparison.stats import metric_range
    from ...plots import history
    from ...plots.bands import cut_text, sd_band

    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping (label, seed) -> Run")
    columns = dict(columns or {"test/error": "(a) test error (%)", "test/ece": "(b) test ECE (%)"})
    frames = [history({label: run}, require=tuple(columns)).assign(seed=seed) for (label, seed), run in runs.items()]
    h = pd.concat(frames, ignore_index=True)
    fig, axes = page_figure(len(columns), 2.9, max_cols=1)
    cuts = set()                                          # the ranges the drawn bands were cut to
    for ax, (col, title) in zip(axes, columns.items()):
        bounds = metric_range(col.rsplit("/", 1)[-1])     # "test/ece" -> the ECE's range
        for label, g in h.groupby("method", sort=False):
            s = g.groupby("epoch")[col].agg(["mean", "std", "count"]) * [100, 100, 1]
            n = int(s["count"].max())
            ax.plot(s.index, s["mean"], marker="o", ms=2, label=f"{label} ({n} seed{'s' if n > 1 else ''})")
            if n > 1:
                ax.fill_between(s.index, *sd_band(s["mean"], s["std"], *bounds), alpha=0.2)
                cuts.add(bounds)
        ax.set(title=title, xlabel="epoch")
    place_legend(axes[0], fontsize="x-small")
    integer_epochs(axes)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        cut = cut_text(*next(iter(cuts))) if len(cuts) == 1 else "cut to each metric's range"
        band = f" Bands: mean ± one sd over seeds, {cut}." if cuts else ""
        add_caption(fig, caption_text + band)
    return fig


def bin_dynamics(runs: Mapping[str, object], bins=(0, 4, 7, 10, 14), caption_text: str | None = None):
    """Fig. 5(a): for each bin of ``bins``, ``E_val`` (top) and ``gamma_t`` (bottom; log scale
    when the gammas span more than a factor 50) after each epoch's update, one line per
    AdaFocal/CalFocal run of ``{label: Run}``."""
    _check_runs(runs)
    hist = {k: bins_history(r, "loss_state") for k, r in runs.items()}
    empty = [k for k, h in hist.items() if not len(h)]
    if empty:
        raise ValueError(f"run(s) {empty} record no per-bin gammas (not an AdaFocal or CalFocal run)")
    n = int(min(h["bin"].max() for h in hist.values())) + 1
    bins = _check_bins(bins, n)
    # one row per bin (the page is narrow): E_val left, gamma_t right
    fig, axes = plt.subplots(len(bins), 2, figsize=(PAGE_WIDTH, 1.9 * len(bins) + 0.6), sharex=True, squeeze=False)
    for label, h in hist.items():
        for j, b in enumerate(bins):
            hb = h[h["bin"] == b]
            axes[j, 0].plot(hb["epoch"], hb["gap"], marker="o", ms=2, label=label)
            axes[j, 1].plot(hb["epoch"], hb["gamma"], marker="o", ms=2, label=label)
    for j, b in enumerate(bins):
        axes[j, 0].axhline(0, color="black", lw=0.8, ls=":")
        axes[j, 0].set_ylabel(f"bin {b}")
    axes[-1, 0].set(xlabel="epoch")
    axes[-1, 1].set(xlabel="epoch")
    g = pd.concat(hist.values())["gamma"].abs()
    if g.min() > 0 and g.max() / g.min() > 50:
        for ax in axes[:, 1]:
            ax.set_yscale("log")
    axes[0, 0].set_title("E_val = C_val − A_val")
    axes[0, 1].set_title("γ_t")
    place_legend(axes[0, 0], fontsize="x-small")
    integer_epochs(axes)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def error_bars(frame: pd.DataFrame, labels: Mapping[str, str] | None = None, metric: str = "ece",
               caption_text: str | None = None):
    """Fig. 14: mean and standard deviation over seeds of ``metric`` per method, pre (dark)
    and post (light) temperature scaling, from an :func:`replicate.comparison.evaluate_runs`
    frame (one row per method, seed, metric, phase)."""
    f = frame[frame.metric == metric]
    if not len(f):
        raise ValueError(f"frame has no rows of metric {metric!r}")
    methods = list(dict.fromkeys(f.method))
    stats = f.groupby(["method", "temperature_scaled"])["value"].agg(["mean", "std", "count"])
    fig, ax = plt.subplots(figsize=(min(PAGE_WIDTH, 1.3 * len(methods) + 2.5), 3.4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x = np.arange(len(methods))
    for dx, scaled, alpha in ((-0.18, False, 1.0), (0.18, True, 0.45)):
        for i, m in enumerate(methods):
            s = stats.loc[(m, scaled)]
            ax.bar(x[i] + dx, s["mean"], 0.36, yerr=0 if np.isnan(s["std"]) else s["std"], capsize=3,
                   color=colors[i % len(colors)], alpha=alpha,
                   label=("pre T" if not scaled else "post T") if i == 0 else None)
    n = int(stats["count"].max())
    ax.set_xticks(x, [(labels or {}).get(m, m) for m in methods], fontsize="small")
    ax.set(ylabel=f"test {metric.upper()} (%)", title=f"mean ± sd over {n} seed{'s' if n > 1 else ''}")
    place_legend(ax, fontsize="x-small")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def roc_figure(curves: pd.DataFrame, labels: Mapping[str, str] | None = None, title: str = "",
               caption_text: str | None = None):
    """Fig. 6: ROC of the softmax-entropy OOD score per method (first seed), pre T solid and
    post T dashed, from :func:`replicate.comparison.ood.roc_curves`."""
    if not len(curves):
        raise ValueError("curves is empty: no run holds logits of this OOD set")
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, m in enumerate(dict.fromkeys(curves.method)):
        g = curves[(curves.method == m) & (curves.seed == curves[curves.method == m].seed.min())]
        for scaled, ls in ((False, "-"), (True, "--")):
            c = g[g.temperature_scaled == scaled]
            ax.plot(c["fpr"], c["tpr"], ls=ls, color=colors[i % len(colors)],
                    label=f"{(labels or {}).get(m, m)} {'post' if scaled else 'pre'} T ({c['auroc'].iloc[0]:.1f})")
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    ax.set(xlabel="FPR", ylabel="TPR", xlim=(0, 1), ylim=(0, 1))
    ax.set_title(title or "ROC, entropy as OOD score (AUROC %)", pad=10)
    ax.set_aspect("equal")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.03, 1), borderaxespad=0)   # beside the curves
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig
