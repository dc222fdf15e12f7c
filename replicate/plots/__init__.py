"""Figures: one seaborn-based style for every chapter, reliability diagrams, histograms.

- :func:`use_style` -- the book's look; call once per chapter.
- :func:`reliability_diagram` -- accuracy per confidence bin against the diagonal, with the
  gap to the bin's mean confidence shaded and the bin counts written on the bars
  (the figure of Guo et al. {cite}`guo2017calibration`, Fig. 1, bottom row).
- :func:`confidence_histogram` -- distribution of the top-1 confidence with the accuracy
  and the mean confidence marked (Guo et al., Fig. 1, top row).
- :func:`reliability_grid` -- several models side by side (diagram over histogram).
- :func:`temperature_curve_plot` -- validation metrics against the temperature, with the
  chosen temperatures marked.
- :func:`estimator_plot` -- an estimator's value against the sample size (one line per
  estimator or bin count) with the true value drawn as a horizontal line.
- :func:`class_examples` -- the first image of each class in one row.
- :func:`metric_panels` -- one panel per metric of a long-form frame (e.g. per-epoch
  histories), one line per method.
- :func:`history` -- the per-epoch records of several runs as one long frame (what every
  figure over training reads); :func:`integer_epochs` puts whole epochs on the x axes.
- :func:`place_legend` -- a legend that covers no data: inside where it can, with headroom, or
  under the axes (:mod:`replicate.plots.legends`, with :func:`legend_below`, a figure legend under the panels).
- :func:`caption` / :func:`add_caption` -- the standard "what produced this figure" label.
- :func:`page_figure` -- ``n`` panels laid out in rows that fit the book's column
  (:data:`PAGE_WIDTH`), so that every label reads at 8 pt or more on the page
  (:mod:`replicate.plots.legibility` checks it after every cell of a chapter).

Every function returns matplotlib objects and draws into ``ax`` when one is given.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg") if matplotlib.get_backend().lower() in {"", "tkagg"} else None

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402

from ..checks import positive_int  # noqa: E402
from .legends import (legend_below, legend_clear_of_data, legend_under, place_legend,  # noqa: E402,F401
                      settle_legends)

PALETTE = "colorblind"
_BINNINGS = ("width", "mass")
#: Widest figure (inches at the book's 100 dpi) that the page shows at its own size: the
#: output column (:data:`replicate.plots.legibility.COLUMN_PX`) less the padding of a tight bbox.
PAGE_WIDTH = 6.6
#: The smallest font size (points) a figure function draws with.
MIN_FONT = 8.0


#: pandas display options of every chapter (:func:`use_style`): a table shows every row,
#: column and character of its cells (pandas' defaults cut cells at 50 characters and
#: tables at 60 rows with "..."); the book lays long cells out (see :mod:`replicate.book.html`).
TABLE_OPTIONS = {"display.max_colwidth": None, "display.max_rows": None, "display.min_rows": None,
                 "display.max_columns": None, "display.width": None, "styler.render.max_rows": None,
                 "styler.render.max_columns": None}


def use_style() -> None:
    """Apply the book's figure style (seaborn ``whitegrid``, colour-blind palette) and
    table display (:data:`TABLE_OPTIONS`), and, in a notebook kernel, check after each cell
    that every open figure's text reads at 8 pt or more at the book's page width
    (:func:`replicate.plots.legibility.install`)."""
    import pandas as pd

    from . import legibility

    sns.set_theme(style="whitegrid", palette=PALETTE, context="notebook")
    plt.rcParams.update({"figure.figsize": (6.4, 4.0), "figure.dpi": 100,
                         "savefig.bbox": "tight", "axes.titlesize": "medium"})
    for key, value in TABLE_OPTIONS.items():
        pd.set_option(key, value)
    legibility.install()


def _colors():
    return sns.color_palette(PALETTE)


def caption(profile: str | None = None, dataset: str | None = None, seed=None, **extra) -> str:
    """The standard label saying what produced a figure, e.g.
    ``"profile: cpu | data: synthetic logit model | seed: 0"``.

    Keyword arguments that are ``None`` are left out; extra keywords are appended in order
    with underscores shown as spaces.
    """
    items = [("profile", profile), ("data", dataset), ("seed", seed), *extra.items()]
    parts = [f"{k.replace('_', ' ')}: {v}" for k, v in items if v is not None]
    if not parts:
        raise ValueError("caption needs at least one of profile, dataset, seed or another keyword")
    return " | ".join(parts)


def add_caption(fig, text: str, fontsize: str = "small"):
    """Write ``text`` (usually from :func:`caption`) under everything drawn in ``fig``
    (tick labels and axis labels included), wrapped to the figure's width (a long caption
    would otherwise widen the image and shrink every label on the page); returns the Text."""
    try:
        bottom = fig.get_tightbbox(fig.canvas.get_renderer()).y0 / fig.get_figheight()
    except AttributeError:                   # a canvas without a renderer (no pyplot backend)
        bottom = 0.0
    return fig.text(0.5, min(bottom, 0.0) - 0.01, text, ha="center", va="top", fontsize=fontsize,
                    color="0.3", wrap=True)


def page_figure(n: int, panel_height: float = 2.8, max_cols: int = 2, width: float = PAGE_WIDTH,
                **subplots_kw):
    """A figure of ``n`` panels in rows of at most ``max_cols``, ``width`` inches wide (the
    page's column, :data:`PAGE_WIDTH`) and ``panel_height`` inches per row; returns
    ``(fig, axes)`` with ``axes`` a list of the ``n`` Axes in reading order (unused slots of
    the last row removed). Keywords go to :func:`matplotlib.pyplot.subplots`."""
    n, max_cols = positive_int("n", n), positive_int("max_cols", max_cols)
    cols = min(n, max_cols)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width, panel_height * rows), squeeze=False, **subplots_kw)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.remove()
    return fig, flat[:n]


def _check_binning(binning: str) -> str:
    if binning not in _BINNINGS:
        raise ValueError(f"binning must be one of {list(_BINNINGS)}, got {binning!r}")
    return binning


def _top1(probs, labels):
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"probs must have shape (n_samples, n_classes) with n_classes >= 2, got {p.shape}")
    y = np.asarray(labels)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},), got {y.shape}")
    return p.max(axis=1), p.argmax(axis=1) == y


def reliability_diagram(probs, labels, n_bins: int = 15, binning: str = "width", ax=None,
                        title: str | None = None, show_counts: bool = True, show_ece: bool = True,
                        true_curve=None):
    """Reliability diagram of top-1 predictions; returns the Axes.

    Bars: accuracy of each bin (from :func:`replicate.metrics.reliability_bins`, intervals
    ``(lower, upper]``), drawn over the bin's span (equal-mass bins have unequal widths).
    Shaded: the gap between accuracy and the bin's mean confidence (red above the bar
    means over-confidence). Empty bins draw nothing. ``show_counts`` writes each bin's
    number of samples at its foot (bins narrower than 0.04 stay unlabelled); ``show_ece``
    puts the ECE of the same bins (the bin-mass-weighted mean absolute gap) in the legend.
    ``true_curve``, a function ``c -> P(correct | confidence c)`` known for synthetic
    predictors, is drawn as a black line over the range of the observed confidences.
    """
    from .. import metrics

    _check_binning(binning)
    rb = metrics.reliability_bins(probs, labels, n_bins=n_bins, binning=binning)
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4.2))
    col = _colors()
    edges = np.asarray(rb.edges, dtype=np.float64)
    count = np.asarray(rb.count)
    acc = np.asarray(rb.accuracy, dtype=np.float64)
    conf = np.asarray(rb.mean_confidence, dtype=np.float64)
    full = count > 0
    left, width = edges[:-1][full], np.diff(edges)[full]
    ax.bar(left, acc[full], width=width, align="edge", color=col[0], edgecolor="white",
           linewidth=0.6, label="accuracy")
    lo, hi = np.minimum(acc[full], conf[full]), np.maximum(acc[full], conf[full])
    ax.bar(left, hi - lo, bottom=lo, width=width, align="edge", color=col[3], alpha=0.35,
           edgecolor=col[3], hatch="//", linewidth=0.6, label="gap")
    ax.plot([0, 1], [0, 1], ls="--", color="0.35", lw=1, label="ideal")
    if true_curve is not None:
        conf_all = np.asarray(probs, dtype=np.float64).max(axis=1)
        c = np.linspace(conf_all.min(), conf_all.max(), 200)
        ax.plot(c, true_curve(c), color="black", lw=1.5, label="true h(c)")
    if show_counts:
        for x, w, n in zip(left, width, count[full]):
            if w >= 0.04:                      # narrower bins would overprint each other
                ax.text(x + w / 2, 0.015, f"{int(n)}", rotation=90, ha="center", va="bottom",
                        fontsize=MIN_FONT, color="white")
    legend_title = f"{'ECE' if binning == 'width' else 'AdaECE'} = {100 * rb.ece:.2f}%" if show_ece else None
    kind = "equal-width" if binning == "width" else "equal-mass"
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=f"confidence ({n_bins} {kind} bins)", ylabel="accuracy")
    ax.set_aspect("equal")
    ax.legend(loc="best", fontsize="x-small", title=legend_title, title_fontsize="x-small",
              frameon=True, framealpha=0.92, alignment="left", labelspacing=0.3, handlelength=1.5)
    if title:
        ax.set_title(title)
    return ax


def confidence_histogram(probs, labels, ax=None, n_bins: int = 20, title: str | None = None):
    """Histogram of top-1 confidences (percent of samples) with accuracy and mean confidence marked."""
    conf, correct = _top1(probs, labels)
    n_bins = positive_int("n_bins", n_bins)
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 2.6))
    col = _colors()
    ax.hist(conf, bins=np.linspace(0, 1, n_bins + 1), weights=np.full(len(conf), 100.0 / len(conf)),
            color=col[0], edgecolor="white", linewidth=0.6)
    ax.axvline(correct.mean(), color=col[2], lw=2, ls="-", label=f"accuracy {100 * correct.mean():.1f}%")
    ax.axvline(conf.mean(), color=col[3], lw=2, ls="--", label=f"mean confidence {100 * conf.mean():.1f}%")
    ax.set(xlim=(0, 1), xlabel="confidence (top-1 probability)", ylabel="% of samples")
    if title:
        ax.set_title(title)
    place_legend(ax, loc="upper left", fontsize="x-small")
    return ax


def reliability_grid(panels: Mapping[str, tuple], n_bins: int = 15, binning: str = "width",
                     histograms: bool = True, suptitle: str | None = None, caption_text: str | None = None):
    """One column per ``name -> (probs, labels)`` entry, two columns to a row of the page:
    reliability diagram over a histogram.

    Returns the Figure; ``caption_text`` (e.g. from :func:`caption`) goes underneath.
    """
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError("panels must be a non-empty mapping name -> (probs, labels)")
    n = len(panels)
    cols = min(n, 2)
    groups = -(-n // cols)
    per = 2 if histograms else 1
    fig, axes = plt.subplots(per * groups, cols, figsize=(PAGE_WIDTH, (3.4 + 1.8 * (per - 1)) * groups),
                             squeeze=False, gridspec_kw={"height_ratios": ([2, 1] if histograms else [1]) * groups})
    for j, (name, (probs, labels)) in enumerate(panels.items()):
        g, c = divmod(j, cols)
        reliability_diagram(probs, labels, n_bins=n_bins, binning=binning, ax=axes[per * g, c], title=name)
        if histograms:
            confidence_histogram(probs, labels, ax=axes[per * g + 1, c])
            axes[per * g + 1, c].set_aspect("auto")
    for j in range(n, groups * cols):
        g, c = divmod(j, cols)
        for r in range(per):
            axes[per * g + r, c].remove()
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)       # the layout moved the data: no legend may cover it
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def temperature_curve_plot(curve, chosen: Mapping[str, float] | None = None, true_T: float | None = None,
                           ax=None, title: str | None = None):
    """Plot every metric column of ``curve`` (column ``T`` plus metrics, e.g. from
    :func:`replicate.posthoc.temperature_curve`) against ``T``.

    The first metric uses the left axis, a second one a twin right axis. ``chosen`` maps
    a label to a temperature to mark (dotted); ``true_T`` draws a solid black line.
    Returns the (left) Axes.
    """
    cols = [c for c in curve.columns if c != "T"]
    if "T" not in curve.columns or not 1 <= len(cols) <= 2:
        raise ValueError("curve must have a column 'T' and one or two metric columns")
    if ax is None:
        _, ax = plt.subplots()
    col = _colors()
    axes = [ax, ax.twinx()] if len(cols) == 2 else [ax]
    handles = []
    for a, c, color in zip(axes, cols, col):
        (h,) = a.plot(curve["T"], curve[c], color=color, lw=2, label=f"validation {c.upper()}")
        a.set_ylabel(f"validation {c.upper()}", color=color)
        handles.append(h)
    if len(axes) == 2:
        axes[1].grid(False)
    for (label, t), color in zip((chosen or {}).items(), col[2:]):
        handles.append(ax.axvline(t, color=color, ls=":", lw=2, label=f"{label}: T = {t:.2f}"))
    if true_T is not None:
        handles.append(ax.axvline(true_T, color="black", lw=1, label=f"true T = {true_T:g}"))
    ax.set_xlabel("temperature T")
    place_legend(ax, handles=handles, fontsize="x-small", loc="best", framealpha=0.92)
    if title:
        ax.set_title(title)
    return ax


def estimator_plot(frame, x: str = "n", y: str = "estimate", hue: str = "estimator",
                   true_value: float | None = None, ax=None, title: str | None = None,
                   logx: bool = True, errorbar=("sd", 1)):
    """Mean (and spread over repetitions) of ``y`` against ``x``, one line per ``hue``.

    ``frame`` is long-form (one row per repetition); ``true_value`` draws the population
    value as a black horizontal line. Returns the Axes.
    """
    for c in (x, y, hue):
        if c not in frame.columns:
            raise ValueError(f"frame has no column {c!r}; columns are {list(frame.columns)}")
    if ax is None:
        _, ax = plt.subplots()
    sns.lineplot(data=frame, x=x, y=y, hue=hue, marker="o", errorbar=errorbar, ax=ax)
    if true_value is not None:
        ax.axhline(true_value, color="black", lw=1.2, label="true value")
        place_legend(ax, fontsize="x-small")
    if logx:
        ax.set_xscale("log")
        ax.set_xticks(sorted(frame[x].unique()))
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if title:
        ax.set_title(title)
    return ax


def class_examples(images, labels, class_names, title: str | None = None):
    """The first image (lowest index) of each class of ``class_names``, in class order, five
    to a row, titled by class. ``images``: N x C x H x W (uint8, or floats in [0, 1]; numpy or a CPU
    tensor), C = 3 or 1; ``labels``: N class indices. Returns the Figure."""
    x, y = np.asarray(images), np.asarray(labels)
    if x.ndim != 4 or x.shape[1] not in (1, 3) or y.shape != (x.shape[0],):
        raise ValueError(f"images must have shape (N, 3 or 1, H, W) and labels shape (N,); got "
                         f"{x.shape} and {y.shape}")
    missing = [k for k in range(len(class_names)) if not (y == k).any()]
    if missing or not len(class_names):
        raise ValueError(f"labels must hold an example of every class of class_names; missing {missing}")
    first = [int(np.flatnonzero(y == k)[0]) for k in range(len(class_names))]
    cols = min(len(first), 5)                 # five to a row: each image and its title readable on the page
    rows = -(-len(first) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PAGE_WIDTH * cols / 5, 1.55 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, i in zip(axes.flat, first):
        img = np.transpose(x[i], (1, 2, 0))
        ax.imshow(img[..., 0] if img.shape[-1] == 1 else img, cmap="gray" if img.shape[-1] == 1 else None)
        ax.set_title(class_names[int(y[i])], fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def metric_panels(frame, panels: Mapping[str, str], x: str = "epoch", hue: str = "method",
                  caption_text: str | None = None):
    """One panel per ``column -> title`` of ``panels`` (two to a row of the page):
    ``column`` against ``x`` from the long-form ``frame``, one line (with markers) per value
    of ``hue``; the legend sits in the last panel. Returns the Figure; ``caption_text`` goes
    underneath."""
    if not isinstance(panels, Mapping) or not panels:
        raise ValueError("panels must be a non-empty mapping column -> title")
    for c in (x, hue, *panels):
        if c not in frame.columns:
            raise ValueError(f"frame has no column {c!r}; columns are {list(frame.columns)}")
    fig, axes = page_figure(len(panels), 2.8)
    for ax, (col, title) in zip(axes, panels.items()):
        last = ax is axes[-1]
        sns.lineplot(data=frame, x=x, y=col, hue=hue, marker="o", ax=ax, legend=last)
        ax.set_title(title)
        ax.set_ylabel("")
        if last:
            place_legend(ax, fontsize="x-small")
    fig.tight_layout()
    if caption_text:
        add_caption(fig, caption_text)
    return fig


# ----------------------------------------------------------------------------- over training
#: The length of the papers' CIFAR schedule (epochs), onto which their figures' epochs are read.
PAPER_EPOCHS = 350


def history(runs: Mapping[str, object], require=("test/nll",)):
    """Per-epoch records of ``{label: Run}`` as one long frame with a ``method`` column.

    ``require`` lists columns every run must have; a run trained without
    ``eval_every_epoch`` lacks the per-split columns and is refused with a ValueError
    naming it and the option.
    """
    import pandas as pd

    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    frames = []
    for label, run in runs.items():
        f = run.history_frame()
        missing = [c for c in require if c not in f.columns]
        if missing:
            raise ValueError(f"run {label!r} ({run.key}) has no per-epoch {', '.join(missing)}; train it with "
                             f"options={{'eval_every_epoch': True}}")
        frames.append(f.apply(pd.to_numeric, errors="coerce").assign(method=label))
    return pd.concat(frames, ignore_index=True)


def integer_epochs(axes) -> None:
    """Whole epochs only on the x axis of every axes of ``axes``."""
    for ax in np.ravel(axes):
        # min_n_ticks=1: one epoch gets one tick (else the locator falls back to 0.945, 0.960, ...)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, min_n_ticks=1))
