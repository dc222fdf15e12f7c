"""Figures of post-hoc calibration on trained models: FTS Fig. 8 (the temperature chosen for
each gamma_ev) and the validation curves of the intended focal map against the authors'
focal link (:mod:`replicate.posthoc.fts`).

Both draw from frames, never from runs, so they are tested on constructed numbers:
:func:`figure8` from :func:`replicate.comparison.optimal_temperatures`, :func:`link_curves`
from the search tables of :func:`replicate.comparison.fts_search`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...plots import add_caption, place_legend

FIG8_COLUMNS = ("method", "seed", "gamma", "T")
SEARCH_COLUMNS = ("gamma", "T", "overflowed")


def _check(frame: pd.DataFrame, columns, name: str) -> None:
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise ValueError(f"{name} must be a non-empty DataFrame with columns {', '.join(columns)}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it needs {', '.join(columns)}")


def fig8_lines(paths: pd.DataFrame, y: str = "T") -> pd.DataFrame:
    """Per method: the mean and sd over seeds of ``y`` ("T" or "inverse_T") at each gamma_ev,
    and the least-squares line through the means (``slope``, ``intercept``, ``r2``)."""
    _check(paths, FIG8_COLUMNS, "paths")
    if y not in ("T", "inverse_T"):
        raise ValueError(f"y must be 'T' or 'inverse_T'; got {y!r}")
    vals = paths.assign(v=paths["T"] if y == "T" else 1 / paths["T"])
    rows = []
    for m, g in vals.groupby("method", sort=False):
        s = g.groupby("gamma")["v"].agg(["mean", "std"]).reset_index()
        if len(s) >= 2:
            slope, icpt = np.polyfit(s["gamma"], s["mean"], 1)
            fit = slope * s["gamma"] + icpt
            ss = float(((s["mean"] - s["mean"].mean()) ** 2).sum())
            r2 = 1 - float(((s["mean"] - fit) ** 2).sum()) / ss if ss > 0 else 1.0
        else:
            slope = icpt = r2 = np.nan
        for r in s.itertuples():
            rows.append((m, r.gamma, r.mean, r.std, slope, icpt, r2))
    return pd.DataFrame(rows, columns=["method", "gamma", "mean", "std", "slope", "intercept", "r2"])


def figure8(paths: pd.DataFrame, labels: dict | None = None, caption_text: str = "", y: str = "T"):
    """FTS Fig. 8: the temperature chosen by validation ECE for each gamma_ev, one line per
    trained model (mean ± sd over seeds, the bars cut to a temperature's range - a temperature
    and its inverse are positive, :func:`replicate.comparison.stats.metric_range`,
    :func:`replicate.plots.bands.sd_errors`), with its least-squares line and R² in the
    legend; the caption says so when a bar is drawn."""
    import matplotlib.pyplot as plt

    from ...comparison.stats import metric_range
    from ...plots.bands import cut_text, sd_errors

    lines = fig8_lines(paths, y)
    labels = labels or {}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, (m, g) in enumerate(lines.groupby("method", sort=False)):
        color = f"C{i}"
        ax.errorbar(g["gamma"], g["mean"], yerr=sd_errors(g["mean"], g["std"], *metric_range("T")), marker="o", ms=4,
                    lw=0, elinewidth=1,
                    color=color, label=f"{labels.get(m, m)} (R² {g['r2'].iloc[0]:.2f})")
        xs = np.linspace(g["gamma"].min(), g["gamma"].max(), 50)
        ax.plot(xs, g["slope"].iloc[0] * xs + g["intercept"].iloc[0], ls="--", lw=1, color=color)
    ax.set_xlabel(r"$\gamma_{ev}$")
    ax.set_ylabel("optimal T" if y == "T" else "1 / optimal T")
    ax.set_title(r"Temperature chosen by validation ECE for each $\gamma_{ev}$")
    place_legend(ax, fontsize="small", frameon=False)
    if caption_text:
        bars = f" Bars: mean ± one sd over seeds, {cut_text(*metric_range('T'))}." if lines["std"].notna().any() else ""
        add_caption(fig, caption_text + bars)
    return fig


def link_curves(searches: dict, gamma: float, metrics=("nll", "adaece"), caption_text: str = ""):
    """Validation score against T at one ``gamma`` for each search table of
    ``{label: search}`` (e.g. the intended map and the authors' link), one panel per metric,
    and the share of validation rows the authors' guard rewrote."""

    if not isinstance(searches, dict) or not searches:
        raise ValueError("searches must be a non-empty dict label -> search table")
    for label, s in searches.items():
        _check(s, (*SEARCH_COLUMNS, *metrics), f"searches[{label!r}]")
        if not np.isclose(s["gamma"], gamma).any():
            raise ValueError(f"searches[{label!r}] has no gamma {gamma!r}; it has {sorted(set(s['gamma']))}")
    names = {"nll": "validation log-loss", "adaece": "validation equal-mass ECE", "ece": "validation ECE"}
    from ...plots import page_figure

    fig, axes = page_figure(len(metrics) + 1, 2.9)
    for i, (label, s) in enumerate(searches.items()):
        part = s[np.isclose(s["gamma"], gamma)].sort_values("T")
        for ax, m in zip(axes, metrics):
            v = part[m].where(np.isfinite(part[m]))
            ax.plot(part["T"], v, color=f"C{i}", label=label)
            k = int(np.nanargmin(v.to_numpy())) if v.notna().any() else None
            if k is not None:
                ax.plot(part["T"].iloc[k], v.iloc[k], "o", color=f"C{i}")
        n = part["overflowed"].max() if part["overflowed"].max() > 0 else 0
        axes[-1].plot(part["T"], part["overflowed"], color=f"C{i}", label=label if n else f"{label} (none)")
    for ax, m in zip(axes, metrics):
        ax.set_xlabel("T")
        ax.set_ylabel(names.get(m, m))
        ax.set_xscale("log")
    axes[-1].set_xlabel("T")
    axes[-1].set_ylabel("validation rows rewritten by the guard")
    axes[-1].set_xscale("log")
    place_legend(axes[0], fontsize="small", frameon=False)
    fig.suptitle(rf"$\gamma_{{ev}}$ = {gamma:g}: the minimum of each curve is the chosen T", fontsize="medium")
    if caption_text:
        add_caption(fig, caption_text)
    fig.tight_layout()
    return fig
