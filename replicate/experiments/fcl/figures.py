"""Figures of Liang et al. (Focal Calibration Loss) drawn from recorded runs; none trains.

- :func:`figure3` -- Fig. 3: test loss over the epochs, each curve divided by its value
  after the first epoch (:func:`.evidence.normalised_loss`).
- :func:`figure6` -- Fig. 6: NLL, ECE, AdaECE and classwise ECE before and after
  temperature scaling, and the test error, against FCL's lambda (:func:`.evidence.sweep_frame`).
- :func:`figure7` -- Fig. 7 (App. A.11): decision boundaries of focal loss and FCL on the
  two-dimensional set of :mod:`replicate.toy2d`.
- :func:`figure8` -- Fig. 8: test error over the epochs.
- :func:`figure9` -- Fig. 9: reliability diagrams with ECE and MCE.

The paper trains for 350 epochs; its epochs are mapped to the same fraction of a shorter
run (:func:`.evidence.paper_window`). The numbers the claims read are computed in
:mod:`.evidence`; this module only draws.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from ... import metrics
from ...plots import PAGE_WIDTH, add_caption, history, page_figure, reliability_diagram
from .evidence import FIG3_WINDOWS, FIG8_WINDOW, normalised_loss, paper_window


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
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _shade(ax, epochs: int, windows: Mapping[str, tuple]) -> None:
    for i, (name, (a, b)) in enumerate(windows.items()):
        first, last = paper_window(epochs, a, b)
        ax.axvspan(first - 0.5, last + 0.5, color=f"{0.93 - 0.05 * i}", zorder=0, lw=0)
        ax.text((first + last) / 2, 1.0, f"paper {a}-{b}", transform=ax.get_xaxis_transform(), ha="center",
                va="bottom", fontsize="x-small", color="0.35")


def figure3(runs: Mapping[str, object], caption_text: str | None = None):
    """Fig. 3: normalised test loss (:func:`normalised_loss`) of ``{label: Run}`` over the
    epochs, the paper's windows of Sec. 5.5.1 shaded. Returns the Figure."""
    f = normalised_loss(runs)
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 3.8))
    _lines(ax, f, "normalised", list(runs))
    _shade(ax, int(f.epoch.max()), FIG3_WINDOWS)
    ax.set(ylabel="test NLL / test NLL after epoch 1", xlabel="epoch")
    ax.legend(fontsize="small")
    fig.tight_layout()
    if caption_text:
        add_caption(fig, caption_text)
    return fig


FIG6_PANELS = (("nll", "NLL (x100)"), ("ece", "ECE (%)"), ("adaece", "AdaECE (%)"),
               ("classwise_ece", "classwise ECE (%)"), ("error", "test error (%)"))


def figure6(sweep: pd.DataFrame, gamma: float, caption_text: str | None = None):
    """Fig. 6: every metric of :data:`FIG6_PANELS` against lambda (``sweep`` from
    :func:`sweep_frame`), pre-T solid and post-T dashed, at FCL's ``gamma``."""
    fig, axes = page_figure(len(FIG6_PANELS), 2.6)
    for ax, (metric, title) in zip(axes, FIG6_PANELS):
        for scaled, style in ((False, "-o"), (True, "--s")):
            g = sweep[(sweep.metric == metric) & (sweep.temperature_scaled == scaled)]
            if metric == "error" and scaled:
                continue                       # TS does not change the predicted class
            ax.plot(g["lam"], g["mean"], style, ms=4, label="post T" if scaled else "pre T")
        ax.set(title=title, xlabel="λ")
    axes[0].legend(fontsize="x-small")
    fig.suptitle(f"FCL, γ = {gamma:g}", fontsize="medium")
    fig.tight_layout()
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
    fig, axes = plt.subplots(len(methods), 1, figsize=(PAGE_WIDTH, 4.0 * len(methods)), squeeze=False)
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
    ax.legend(fontsize="small")
    fig.tight_layout()
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
    if caption_text:
        add_caption(fig, caption_text)
    return fig
