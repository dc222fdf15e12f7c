"""Figures of the leaderboard (chapter ``exp_leaderboard``), drawn from its statistics; none trains.

- :func:`rank_figure` -- one panel per (metric, post-hoc setting): every method's rank (1 =
  best) by its mean over seeds, with the 95 % interval of the rank under the noise model
  (:func:`replicate.comparison.noise.rank_intervals`: seeds and test examples resampled) as a bar and
  the mean rank over the resamples.
- :func:`pairs_figure` -- the paired comparisons over seeds
  (:func:`.views.paired_matrix`) as two methods x methods maps: the mean
  difference (row minus column) marked where the paired t-test rejects equality, and the
  number of seeds the observed difference would need.
- :func:`agreement_figure` -- Kendall's tau between our ranking and each paper's, with its
  interval over the noise model's resamples.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...plots import PAGE_WIDTH, add_caption
from .views import matrix


def rank_figure(panels: Mapping[str, pd.DataFrame], labels: Mapping[str, str] | None = None, caption_text: str = "",
                level: float = 0.95):
    """``panels`` maps a panel title to a :func:`replicate.comparison.noise.rank_intervals` frame. Methods are sorted by
    their rank in the first panel; every panel uses that order, so a method's row can be
    followed across panels. Returns the figure."""
    if not panels:
        raise ValueError("panels must map at least one title to a rank frame")
    labels = dict(labels or {})
    first = next(iter(panels.values()))
    order = list(first.sort_values(["rank", "mean_rank"]).method)
    n = len(order)
    fig, axes = plt.subplots(1, len(panels), figsize=(PAGE_WIDTH, 0.3 * n + 1.8), sharey=True, squeeze=False,
                             layout="constrained")
    y = np.arange(n)
    for ax, (title, frame) in zip(axes[0], panels.items()):
        f = frame.set_index("method").reindex(order)
        ax.hlines(y, f["rank_low"], f["rank_high"], color="C0", lw=2.5, alpha=0.6,
                  label=f"{level:.0%} interval (noise model)")
        ax.plot(f["rank"], y, "o", color="C0", label="rank of the mean")
        ax.plot(f["mean_rank"], y, "|", color="k", ms=10, label="mean rank over the resamples")
        ax.set_title(title, fontsize="medium")
        ax.set_xlim(0.5, n + 0.5)
        ax.grid(axis="x", alpha=0.3)
    fig.supxlabel("rank (1 = best)", fontsize="medium")     # one label: a label per narrow panel ran into the next
    axes[0][0].set_yticks(y, [labels.get(m, m) for m in order])
    axes[0][0].invert_yaxis()
    handles, names = axes[0][0].get_legend_handles_labels()
    # above the panels, in a row of its own that the constrained layout keeps clear of their titles
    fig.legend(handles, names, loc="outside upper center", ncol=2, fontsize="small", frameon=False)
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def pairs_figure(pairs: pd.DataFrame, order=None, labels: Mapping[str, str] | None = None, metric_name: str = "",
                 caption_text: str = ""):
    """Left: mean difference row minus column over seeds (blue: the row method is lower),
    "*" where the paired t-test gives p < alpha, "**" where it survives Benjamini-Hochberg
    too. Right: seeds a paired t-test would need to detect the observed difference (80 %
    power at alpha); grey: more than the largest number searched, or no difference."""
    labels = dict(labels or {})
    diff = matrix(pairs, "diff", order)
    need = matrix(pairs, "seeds_needed", order)
    sig, sig_bh = matrix(pairs, "significant", order), matrix(pairs, "significant_bh", order)
    names = [labels.get(m, m) for m in diff.index]
    n = len(names)
    # one map above the other, each as wide as the page: a cell per pair, its labels readable
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 2 * (0.25 * n + 2.2)))
    lim = np.nanmax(np.abs(diff.to_numpy(dtype=float))) if n > 1 else 1.0
    lim = lim if math.isfinite(lim) and lim > 0 else 1.0
    im = a1.imshow(diff.to_numpy(dtype=float), cmap="RdBu_r", vmin=-lim, vmax=lim)
    fig.colorbar(im, ax=a1, shrink=0.7, label=f"mean difference{f' of {metric_name}' if metric_name else ''}")
    for i in range(n):
        for j in range(n):
            mark = "**" if sig_bh.iat[i, j] is True else ("*" if sig.iat[i, j] is True else "")
            if mark:
                a1.text(j, i, mark, ha="center", va="center", fontsize="small",
                        color="w" if abs(diff.iat[i, j]) > lim / 2 else "k")
    logs = np.log10(need.to_numpy(dtype=float))
    cmap = plt.get_cmap("viridis_r").with_extremes(bad="0.85")   # grey: no difference, or beyond the search
    im2 = a2.imshow(np.ma.masked_invalid(logs), cmap=cmap)
    mid = np.nanmean(logs) if np.isfinite(logs).any() else 0.0
    cb = fig.colorbar(im2, ax=a2, shrink=0.7, label="seeds needed (80 % power, log scale)")
    ticks = [t for t in (2, 3, 5, 10, 30, 100, 1000, 10000) if np.nanmin(logs, initial=np.inf) <= math.log10(t)
             <= np.nanmax(logs, initial=-np.inf)] if np.isfinite(logs).any() else []
    if ticks:
        cb.set_ticks([math.log10(t) for t in ticks], labels=[str(t) for t in ticks])
    for i in range(n):
        for j in range(n):
            v = need.iat[i, j]
            if i != j and isinstance(v, float) and math.isfinite(v) and v < 100:
                a2.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize="x-small",
                        color="w" if math.log10(v) > mid else "k")
    for ax, title in ((a1, "mean difference, row − column"), (a2, "seeds needed for that difference")):
        ax.set_xticks(range(n), names, rotation=90, fontsize="small")
        ax.set_yticks(range(n), names, fontsize="small")
        ax.set_title(title, fontsize="medium")
        ax.grid(False)
    fig.tight_layout()
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def agreement_figure(frame: pd.DataFrame, caption_text: str = ""):
    """Kendall's tau (point and interval over the noise model's resamples) of each row of ``frame`` (columns
    ``label``, ``tau``, ``low``, ``high``, ``n``), one line per comparison."""
    f = frame.reset_index(drop=True)
    import textwrap

    fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 0.5 * len(f) + 1.6))
    y = np.arange(len(f))
    ax.hlines(y, f["low"], f["high"], color="C1", lw=2.5, alpha=0.6, label="95 % interval (noise model)")
    ax.plot(f["tau"], y, "o", color="C1", label="tau")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_yticks(y, [textwrap.fill(f"{lab} (n={n})", 34) for lab, n in zip(f["label"], f["n"])],
                  fontsize="small")     # wrapped: long labels would squeeze the axes off the page
    ax.invert_yaxis()
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Kendall's tau-b, our ranking vs the paper's")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, fontsize="x-small", frameon=False)
    fig.tight_layout()
    if caption_text:
        add_caption(fig, caption_text)
    return fig
