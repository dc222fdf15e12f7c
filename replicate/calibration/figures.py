"""The figures of the chapter *Measuring calibration* (studies of :mod:`replicate.calibration.study`).

Each function draws from a finished study (nothing is sampled here) and returns the
matplotlib ``Figure``; ``caption_text`` (from :func:`replicate.plots.caption`) goes underneath.

- :func:`reliability_and_histogram` -- a reliability diagram beside the confidence
  histogram, with the true calibration curve of a synthetic predictor;
- :func:`size_figure` -- the L1 and L2 estimators against the test-set size, each panel
  with the true value it aims at;

Every figure fits the book's column (:data:`replicate.plots.PAGE_WIDTH`): panels side by
side only where both read at 8 pt on the page, else one above the other.
- :func:`bias_figure` -- binned estimators against the test-set size with the central-limit
  prediction of the 15-bin ECE (:meth:`replicate.synthetic.BetaModel.expected_binned_ece`);
- :func:`bins_figure` -- ECE and AdaECE against the number of bins, one line per test-set
  size, with the central-limit prediction of the ECE dashed.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .. import plots
from ..synthetic import BetaModel
from .study import BINS, L1, L2, true_errors

__all__ = ["reliability_and_histogram", "size_figure", "bias_figure", "bins_figure"]


def _check_study(study: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in study.columns]
    if missing:
        raise ValueError(f"study has no column(s) {missing}; columns are {list(study.columns)}")


def reliability_and_histogram(probs, labels, true_curve=None, caption_text: str | None = None):
    """:func:`replicate.plots.reliability_diagram` (with ``true_curve``) beside
    :func:`replicate.plots.confidence_histogram`."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(plots.PAGE_WIDTH, 3.5))
    plots.reliability_diagram(probs, labels, ax=ax1, title="reliability diagram", true_curve=true_curve)
    plots.confidence_histogram(probs, labels, ax=ax2, title="confidence histogram")
    ax2.set_box_aspect(1)
    plots.settle_legends(fig)               # the square box moved the bars under the legend
    if caption_text:
        plots.add_caption(fig, caption_text)
    return fig


def size_figure(study: pd.DataFrame, model: BetaModel, caption_text: str | None = None):
    """Left: the estimators of :data:`~replicate.calibration.study.L1` against the test-set size
    with the model's true ECE; right: those of :data:`~replicate.calibration.study.L2` with
    its true RMS error. Mean over repetitions, band one standard deviation."""
    _check_study(study, ("n", "estimator", "estimate"))
    truth = true_errors(model)
    fig, axes = plots.page_figure(2, 3.6, max_cols=1)
    panels = [(L1, truth["ECE"], "L1 estimators vs the true ECE"),
              (L2, truth["RMSCE"], "L2 estimators vs the true RMS error")]
    for ax, (names, true_value, title) in zip(axes, panels):
        plots.estimator_plot(study[study.estimator.isin(names)], true_value=true_value, ax=ax, title=title)
        ax.set(xlabel="test-set size N", ylabel="estimate")
    fig.tight_layout()
    if caption_text:
        plots.add_caption(fig, caption_text)
    return fig


def bias_figure(study: pd.DataFrame, model: BetaModel, title: str | None = None,
                caption_text: str | None = None):
    """Every estimator of ``study`` against the test-set size with the model's true ECE (black)
    and the central-limit prediction of the 15-bin equal-width ECE (dashed)."""
    _check_study(study, ("n", "estimator", "estimate"))
    ax = plots.estimator_plot(study, true_value=model.true_ece(), title=title)
    ns = sorted(int(n) for n in study.n.unique())
    ax.plot(ns, [model.expected_binned_ece(n) for n in ns], "k--", lw=1, label="CLT prediction for ECE")
    plots.place_legend(ax, fontsize="x-small")
    ax.set(xlabel="test-set size N", ylabel="estimate")
    if caption_text:
        plots.add_caption(ax.figure, caption_text)
    return ax.figure


def bins_figure(study: pd.DataFrame, model: BetaModel, caption_text: str | None = None):
    """One panel per estimator of :data:`~replicate.calibration.study.BINS`: the estimate
    against the number of bins, one line per test-set size, the true ECE in black; the left
    panel adds the central-limit prediction of the equal-width ECE (dashed) for each size."""
    _check_study(study, ("n", "n_bins", "estimator", "estimate"))
    frame = study.assign(N="N = " + study.n.astype(str))
    fig, axes = plots.page_figure(2, 3.6, max_cols=1, sharey=True)
    for ax, name in zip(axes, BINS):
        plots.estimator_plot(frame[frame.estimator == name], x="n_bins", hue="N",
                             true_value=model.true_ece(), ax=ax, title=name)
        ax.set(xlabel="number of bins M", ylabel="estimate")
    bins = sorted(int(b) for b in study.n_bins.unique())
    for n in sorted(int(n) for n in study.n.unique()):
        axes[0].plot(bins, [model.expected_binned_ece(n, b) for b in bins], "k--", lw=1)
    fig.tight_layout()
    if caption_text:
        plots.add_caption(fig, caption_text)
    return fig
