"""Figures of Liang et al. (Focal Calibration Loss) drawn from recorded runs; none trains.

- :func:`figure3` -- Fig. 3: test loss over the epochs, each curve divided by its value
  after the first epoch (:func:`normalised_loss`).
- :func:`figure6` -- Fig. 6: NLL, ECE, AdaECE and classwise ECE before and after
  temperature scaling, and the test error, against FCL's lambda (the report's ``sweep``).
- :func:`figure7` -- Fig. 7 (App. A.11): decision boundaries of focal loss and FCL on the
  two-dimensional set of :mod:`replicate.toy2d`.
- :func:`figure8` -- Fig. 8: test error over the epochs.
- :func:`figure9` -- Fig. 9: reliability diagrams with ECE and MCE.

The paper trains for 350 epochs; its epochs are mapped to the same fraction of a shorter
run (:func:`paper_window`). The curves' helpers (:func:`normalised_loss`,
:func:`convergence_epochs`, :func:`window_stats`) serve the figures and :mod:`.report`, which
computes the numbers the claims read; this module only draws.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from ... import metrics
from ... import plots
from ...plots import (PAGE_WIDTH, PAPER_EPOCHS, add_caption, history,
                      page_figure, place_legend, reliability_diagram, settle_legends)

#: The paper's epoch windows named in Sec. 5.5.1 (Fig. 3) and Sec. 5.1.2 (Fig. 8), of 350.
FIG3_WINDOWS = {"initial": (0, 50), "middle": (50, 150)}
FIG8_WINDOW = (100, 300)


def paper_window(epochs: int, start: int, stop: int, paper_total: int = PAPER_EPOCHS) -> tuple[int, int]:
    """The 1-based epochs ``(first, last)`` of a run of ``epochs`` epochs that correspond to
    the paper's epochs ``start..stop`` of ``paper_total`` (same fractions; at least one epoch)."""
    if not 0 <= start < stop <= paper_total:
        raise ValueError(f"need 0 <= start < stop <= {paper_total}; got {start}, {stop}")
    first = max(1, int(round(start / paper_total * epochs)))
    last = max(first, min(epochs, int(round(stop / paper_total * epochs))))
    return first, last


def normalised_loss(runs: Mapping[str, object], column: str = "test/nll") -> pd.DataFrame:
    """Long frame ``method, epoch, value, normalised`` of ``column`` of each run's per-epoch
    records, ``normalised`` = value / value after the first epoch (Fig. 3's "normalised test
    loss"; the paper does not say which loss or which normalisation: the test NLL is the
    one loss recorded for every method and comparable across them)."""
    h = plots.history(runs, require=(column,))
    out = h[["method", "epoch", column]].rename(columns={column: "value"})
    first = out.sort_values("epoch").groupby("method", sort=False)["value"].transform("first")
    return out.assign(normalised=out["value"] / first).reset_index(drop=True)


def convergence_epochs(frame: pd.DataFrame, fraction: float = 0.9) -> dict:
    """``{method: first epoch at which the normalised loss has made fraction of its largest
    drop}`` (drop = 1 - normalised; the largest over the run)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1]; got {fraction!r}")
    out = {}
    for m, g in frame.sort_values("epoch").groupby("method", sort=False):
        drop = 1.0 - g["normalised"].to_numpy()
        reached = np.flatnonzero(drop >= fraction * drop.max() - 1e-12)
        out[m] = int(g["epoch"].to_numpy()[reached[0]])
    return out


def window_stats(frame: pd.DataFrame, first: int, last: int, value: str = "normalised") -> pd.DataFrame:
    """Per method over epochs ``first..last``: mean and standard deviation of ``value``,
    and the standard deviation of its epoch-to-epoch changes (``jitter``; NaN with fewer
    than two changes)."""
    w = frame[(frame.epoch >= first) & (frame.epoch <= last)].sort_values("epoch")
    rows = []
    for m, g in w.groupby("method", sort=False):
        v = g[value].to_numpy(dtype=np.float64)
        d = np.diff(v)
        rows.append({"method": m, "mean": v.mean(), "std": v.std(ddof=1) if v.size > 1 else np.nan,
                     "jitter": d.std(ddof=1) if d.size > 1 else np.nan, "n_epochs": v.size})
    return pd.DataFrame(rows)


#: One colour per method across the figures (labels as ``Method.short`` prints them).
METHOD_ORDER = ("Cross Entropy", "FL-3", "FLSD-53", "DFL", "FCL")


def palette(labels) -> dict:
    """``{label: colour}``: the methods of :data:`METHOD_ORDER` keep their colour in every
    figure, other labels take the colours left."""
    colours = sns.color_palette("colorblind", len(METHOD_ORDER) + len(labels))
    out = {m: colours[i] for i, m in enumerate(METHOD_ORDER)}
    rest = iter(colours[len(METHOD_ORDER):])
    return {lab: out[lab] if lab in out else next(rest) for lab in labels}


def _lines(ax, frame, y, labels) -> None:
    sns.lineplot(data=frame, x="epoch", y=y, hue="method", hue_order=list(labels), palette=palette(labels),
                 marker="o", markersize=4, ax=ax)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _shade(ax, epochs: int, windows: Mapping[str, tuple]) -> None:
    for i, (name, (a, b)) in enumerate(windows.items()):
        first, last = paper_window(epochs, a, b)
        ax.axvspan(first - 0.5, last + 0.5, color=f"{0.93 - 0.05 * i}", zorder=0, lw=0)
        # one row per window: narrow windows (few epochs) would put their labels on each other
        ax.text((first + last) / 2, 1.01 + 0.08 * i, f"paper {a}-{b}", transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize="x-small", color="0.35")


def figure3(runs: Mapping[str, object], caption_text: str | None = None):
    """Fig. 3: normalised test loss (:func:`normalised_loss`) of ``{label: Run}`` over the
    epochs, the paper's windows of Sec. 5.5.1 shaded. Returns the Figure."""
    f = normalised_loss(runs)
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 3.8))
    _lines(ax, f, "normalised", list(runs))
    _shade(ax, int(f.epoch.max()), FIG3_WINDOWS)
    ax.set(ylabel="test NLL / test NLL after epoch 1", xlabel="epoch")
    place_legend(ax, fontsize="small")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


FIG6_PANELS = (("nll", "NLL (x100)"), ("ece", "ECE (%)"), ("adaece", "AdaECE (%)"),
               ("classwise_ece", "classwise ECE (%)"), ("error", "test error (%)"))


def figure6(sweep: pd.DataFrame, gamma: float, caption_text: str | None = None):
    """Fig. 6: every metric of :data:`FIG6_PANELS` against lambda (``sweep``: the report's
    section of that name), pre-T solid and post-T dashed, at FCL's ``gamma``."""
    fig, axes = page_figure(len(FIG6_PANELS), 2.6)
    for ax, (metric, title) in zip(axes, FIG6_PANELS):
        for scaled, style in ((False, "-o"), (True, "--s")):
            g = sweep[(sweep.metric == metric) & (sweep.temperature_scaled == scaled)]
            if metric == "error" and scaled:
                continue                       # TS does not change the predicted class
            ax.plot(g["lam"], g["mean"], style, ms=4, label="post T" if scaled else "pre T")
        ax.set(title=title, xlabel="λ")
    place_legend(axes[0], fontsize="x-small")
    fig.suptitle(f"FCL, γ = {gamma:g}", fontsize="medium")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def figure7(grids: Mapping[tuple, tuple], study: pd.DataFrame, seed: int, caption_text: str | None = None):
    """Fig. 7: ``p(class 1 | x)`` of focal loss and FCL over the plane for ``seed`` (from
    :func:`replicate.toy2d.study`), the 0.5 boundary in black, the training points on top;
    each title gives that seed's test error, ECE and boundary length."""
    methods = [m for m in ("FL", "FCL") if (m, seed) in grids]
    if not methods:
        raise ValueError(f"grids hold no run of seed {seed}")
    fig, axes = plt.subplots(len(methods), 1, figsize=(PAGE_WIDTH, 4.0 * len(methods)), squeeze=False,
                             layout="constrained")
    for ax, m in zip(axes[:, 0], methods):
        xs, ys, p, x, y = grids[(m, seed)]
        cs = ax.contourf(xs, ys, p, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.8)
        ax.contour(xs, ys, p, levels=[0.5], colors="k", linewidths=1.5)
        ax.scatter(x[:, 0], x[:, 1], c=y, cmap="RdBu_r", edgecolors="k", linewidths=0.3, s=10)
        r = study[(study.method == m) & (study.seed == seed)].iloc[0]
        ax.set(xlim=(xs[0], xs[-1]), ylim=(ys[0], ys[-1]))
        ax.set_title(f"{m}\ntest error {r.error:.1f}%, ECE {r.ece:.1f}%, boundary length {r.boundary_length:.2f}",
                     fontsize="small")
    fig.colorbar(cs, ax=axes[:, 0].tolist(), label="p(class 1)", shrink=0.9)
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def figure8(runs: Mapping[str, object], caption_text: str | None = None):
    """Fig. 8: test error (%) of ``{label: Run}`` over the epochs, the paper's epochs
    100-300 (of 350) shaded."""
    h = history(runs, require=("test/error",))
    h["test/error"] = 100 * h["test/error"]
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 3.8))
    _lines(ax, h, "test/error", list(runs))
    _shade(ax, int(h.epoch.max()), {"Fig. 8": FIG8_WINDOW})
    ax.set(ylabel="test error (%)", xlabel="epoch")
    place_legend(ax, fontsize="small")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def figure9(panels: Mapping[str, tuple], n_bins: int = 15, caption_text: str | None = None):
    """Fig. 9: a reliability diagram per ``{label: (probs, labels)}`` (test set, before
    temperature scaling), titled with its ECE and MCE (15 equal-width bins)."""
    if not panels:
        raise ValueError("panels must hold at least one (probs, labels) pair")
    fig, axes = page_figure(len(panels), 3.6)
    for ax, (name, (p, y)) in zip(axes, panels.items()):
        reliability_diagram(p, y, n_bins=n_bins, ax=ax, show_counts=False)
        ax.set_title(f"{name}\nECE {100 * metrics.ece(p, y, n_bins):.2f}%, MCE {100 * metrics.mce(p, y, n_bins):.2f}%",
                     fontsize="small")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig
