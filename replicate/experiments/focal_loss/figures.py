"""Figures of Mukhoti et al. (2020) drawn from recorded runs' histories and logits.

Every function reads finished runs (:class:`replicate.runs.Run`); none trains.

- :func:`figure1` -- Fig. 1: train/test NLL and softmax entropy of correctly and
  incorrectly classified samples, train/test error and test ECE over the epochs.
- :func:`training_calibration` -- what the recorded histories say about Fig. 2: training-set
  accuracy, mean confidence and ECE over the epochs, with the paper's four points marked;
  :func:`reliability_over_training` draws Fig. 2 itself from per-epoch training-set bins.
- :func:`figure3` -- Fig. 3 (a-h): test NLL (all / correct / incorrect), entropy of the
  misclassified samples, mean ``p_true`` of correct / incorrect samples, test ECE and the
  last layer's weight norm, one line per method.
- :func:`figure4` -- Fig. 4 (b-d): histograms of the per-sample last-layer gradient norms
  over the training set at three points of training.
- :func:`qualitative_frame` / :func:`qualitative_figure` -- Appendix F (Fig. 8): test
  images with each model's predicted label and confidence before and after temperature
  scaling.

Runs feeding Figures 1, 3 and 4 must be trained with ``options={"eval_every_epoch": True}``.
"""
from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ... import metrics
from ...checks import positive_int
from ...plots import (PAGE_WIDTH, PAPER_EPOCHS, add_caption, history,
                      integer_epochs, page_figure, place_legend, settle_legends)
from ...plots.lint import keep_limits

#: The paper's epochs (of 350) for Fig. 2 and Fig. 4 (b-d).
FIG2_EPOCHS = (100, 200, 300, 350)
FIG4_EPOCHS = (10, 100, 200)


def scaled_epochs(epochs: int, paper_epochs=FIG2_EPOCHS, paper_total: int = PAPER_EPOCHS) -> tuple[int, ...]:
    """The paper's epochs mapped to a run of ``epochs`` epochs at the same fraction of the
    schedule (1-based, at least 1, duplicates removed): ``round(e / paper_total * epochs)``."""
    epochs = positive_int("epochs", epochs)
    out = (max(1, min(epochs, int(round(e / paper_total * epochs)))) for e in paper_epochs)
    return tuple(dict.fromkeys(out))


def _lines(ax, frame, cols: Mapping[str, str], title: str, ylabel: str = "", styles=("-", "--", ":")):
    for (col, label), ls in zip(cols.items(), styles * 3):
        ax.plot(frame["epoch"], frame[col], ls=ls, marker="o", ms=3, label=label)
    ax.set(title=title, xlabel="epoch", ylabel=ylabel)
    place_legend(ax, fontsize="x-small")


def figure1(run, caption_text: str | None = None):
    """Mukhoti et al., Fig. 1 for one (cross-entropy) run: (a) training NLL and entropy,
    (b) test NLL and entropy, each for all, correctly and incorrectly classified samples;
    (c) train and test error and test ECE (percent). Returns the Figure."""
    h = history({"run": run}, require=("train/nll", "test/nll", "train/error", "test/ece"))
    fig, axes = page_figure(3, 2.8, max_cols=1)
    for ax, split, tag in ((axes[0], "train", "(a) training set"), (axes[1], "test", "(b) test set")):
        _lines(ax, h, {f"{split}/nll": "NLL", f"{split}/nll_correct": "NLL correct",
                       f"{split}/nll_incorrect": "NLL incorrect"}, tag, "nats")
        for col, label in ((f"{split}/entropy_correct", "entropy correct"),
                           (f"{split}/entropy_incorrect", "entropy incorrect")):
            ax.plot(h["epoch"], h[col], ls="-.", marker="s", ms=3, label=label)
        place_legend(ax, fontsize="x-small")
    pct = h.assign(**{c: 100 * h[c] for c in ("train/error", "test/error", "test/ece")})
    _lines(axes[2], pct, {"train/error": "train error", "test/error": "test error", "test/ece": "test ECE"},
           "(c) error and ECE", "%")
    integer_epochs(axes)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def training_calibration(run, paper_epochs=FIG2_EPOCHS, caption_text: str | None = None):
    """Training-set accuracy, mean top-1 confidence and ECE (percent, eval mode, no
    augmentation) over the epochs, the paper's Fig. 2 epochs marked at the same fraction
    of our schedule. Returns the Figure."""
    h = history({"run": run}, require=("train/error", "train/confidence", "train/ece"))
    marks = scaled_epochs(int(h["epoch"].max()), paper_epochs)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(h["epoch"], 100 * (1 - h["train/error"]), marker="o", ms=3, label="training accuracy")
    ax.plot(h["epoch"], 100 * h["train/confidence"], marker="o", ms=3, ls="--", label="mean confidence")
    ax.plot(h["epoch"], 100 * h["train/ece"], marker="o", ms=3, ls=":", label="training ECE")
    for e, pe in zip(marks, paper_epochs):
        ax.axvline(e, color="0.6", lw=0.8)
        ax.text(e, ax.get_ylim()[1], f" ≙ {pe}", fontsize="x-small", va="top", color="0.4")
    ax.set(xlabel="epoch", ylabel="%", title="training set: accuracy, confidence and ECE")
    place_legend(ax, fontsize="x-small", loc="center right")
    integer_epochs(ax)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def reliability_over_training(bins: Mapping[int, dict], caption_text: str | None = None):
    """Fig. 2: per epoch, a reliability diagram (top) and the percentage of samples per
    bin (bottom). ``bins`` maps an epoch to ``{"edges", "count", "accuracy"}`` (as in
    :func:`replicate.metrics.reliability_bins`; the paper uses 25 equal-width bins)."""
    if not isinstance(bins, Mapping) or not bins:
        raise ValueError("bins must be a non-empty mapping epoch -> {'edges', 'count', 'accuracy'}")
    cols = min(len(bins), 2)             # two epochs to a row of the page
    groups = -(-len(bins) // cols)
    fig, axes = plt.subplots(2 * groups, cols, figsize=(PAGE_WIDTH, 4.6 * groups), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2] * groups})
    for j in range(len(bins), groups * cols):
        axes[2 * (j // cols), j % cols].remove()
        axes[2 * (j // cols) + 1, j % cols].remove()
    for j, (epoch, b) in enumerate(bins.items()):
        edges, count = np.asarray(b["edges"], float), np.asarray(b["count"], float)
        acc = np.nan_to_num(np.asarray(b["accuracy"], float))
        if not (len(edges) == len(count) + 1 == len(acc) + 1) or count.sum() <= 0:
            raise ValueError(f"epoch {epoch}: need len(edges) == len(count) + 1 == len(accuracy) + 1 "
                             f"and at least one sample")
        width = np.diff(edges)
        top, bottom = axes[2 * (j // cols), j % cols], axes[2 * (j // cols) + 1, j % cols]
        top.bar(edges[:-1], np.where(count > 0, acc, 0), width=width, align="edge", edgecolor="white")
        top.plot([0, 1], [0, 1], ls="--", color="0.35", lw=1)
        top.set(xlim=(0, 1), ylim=(0, 1), title=f"epoch {epoch}", xlabel="confidence",
                ylabel="accuracy" if j % cols == 0 else "")
        bottom.bar(edges[:-1], 100 * count / count.sum(), width=width, align="edge", edgecolor="white")
        bottom.set(xlim=(0, 1), xlabel="confidence", ylabel="% of samples" if j % cols == 0 else "")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


FIG3_PANELS = (("test/nll", "(a) test NLL"), ("test/nll_correct", "(b) test NLL, correct"),
               ("test/nll_incorrect", "(c) test NLL, incorrect"), ("test/entropy_incorrect", "(d) entropy, incorrect"),
               ("test/p_true_correct", "(e) p_true, correct"), ("test/p_true_incorrect", "(f) p_true, incorrect"),
               ("test/ece", "(g) test ECE (%)"), ("fc_weight_norm", "(h) last-layer weight norm"))


def figure3(runs: Mapping[str, object], caption_text: str | None = None):
    """Mukhoti et al., Fig. 3 (a-h) for ``{label: Run}`` (cross-entropy and focal γ = 1, 2, 3
    in the paper), one line per run. Returns the Figure."""
    h = history(runs, require=tuple(c for c, _ in FIG3_PANELS))
    h["test/ece"] = 100 * h["test/ece"]
    fig, axes = page_figure(len(FIG3_PANELS), 2.4)
    for ax, (col, title) in zip(axes, FIG3_PANELS):
        sns.lineplot(data=h, x="epoch", y=col, hue="method", marker="o", markersize=4, ax=ax,
                     legend=ax is axes[0])
        ax.set(title=title, ylabel="")
    place_legend(axes[0], fontsize="x-small")
    integer_epochs(axes)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def grad_norm_frame(runs: Mapping[str, object], epochs) -> pd.DataFrame:
    """Long frame of the recorded last-layer gradient-norm histograms: ``method, epoch,
    log10_lower, log10_upper, count, percent`` for each requested epoch (1-based)."""
    from ...training.diagnostics import GRAD_LOG10_EDGES

    rows = []
    for label, run in runs.items():
        by_epoch = {int(r["epoch"]): r for r in run.history}
        for e in epochs:
            if e not in by_epoch or "grad_norms" not in by_epoch[e]:
                raise ValueError(f"run {label!r} ({run.key}) has no gradient-norm histogram at epoch {e}; "
                                 f"train it with options={{'eval_every_epoch': True}}")
            g = by_epoch[e]["grad_norms"]
            edges = np.asarray(g.get("log10_edges", GRAD_LOG10_EDGES), float)
            counts = np.asarray(g["counts"], float)
            if len(edges) != len(counts) + 1:
                raise ValueError(f"run {label!r}, epoch {e}: {len(counts)} counts but {len(edges)} edges")
            rows.append(pd.DataFrame({"method": label, "epoch": e, "log10_lower": edges[:-1],
                                      "log10_upper": edges[1:], "count": counts,
                                      "percent": 100 * counts / max(counts.sum(), 1)}))
    return pd.concat(rows, ignore_index=True)


def figure4(runs: Mapping[str, object], epochs, caption_text: str | None = None):
    """Mukhoti et al., Fig. 4 (b-d): histograms (percent of training samples) of
    ``log10 ||dL_i/dW||`` for the last linear layer at each of ``epochs``, one step line
    per run. Returns the Figure."""
    g = grad_norm_frame(runs, epochs)
    used = g[g["count"] > 0]
    lo, hi = used["log10_lower"].min(), used["log10_upper"].max()
    fig, axes = page_figure(len(epochs), 2.9, sharey=True)
    for ax, e, tag in zip(axes, epochs, "bcdefgh"):
        for label in runs:
            f = g[(g.method == label) & (g.epoch == e)]
            ax.stairs(f["percent"].to_numpy(), np.r_[f["log10_lower"].to_numpy(), f["log10_upper"].iloc[-1]],
                      label=label, lw=1.6)
        ax.set(xlim=(lo, hi), title=f"({tag}) epoch {e}", xlabel="log10 gradient norm (last layer)",
               ylabel="% of training samples" if axes.index(ax) % 2 == 0 else "")
        keep_limits(ax, "the bins that hold training samples (the empty bins outside are left out)", axis="x")
        keep_limits(ax, "one y scale for every epoch's histogram (shared)", axis="y")
        place_legend(ax, fontsize="x-small")
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def _one_per_class(idx: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``idx`` reordered so that classes alternate: the first sample of each class (in class
    order), then the second of each class, ...; within a class, test-set order."""
    cls = y[idx]
    order = np.argsort(cls, kind="stable")
    rank = np.empty(len(idx), dtype=np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(cls[order])) + 1]
    rank[order] = np.arange(len(idx)) - np.repeat(starts, np.diff(np.r_[starts, len(idx)]))
    return idx[np.lexsort((cls, rank))]


def qualitative_frame(runs: Mapping[str, object], n_correct: int = 4, n_incorrect: int = 4) -> pd.DataFrame:
    """Appendix F's numbers: ``n_correct`` test samples that every run of ``{label: Run}``
    classifies correctly and ``n_incorrect`` that every run gets wrong, chosen without
    looking at the confidences: the first such sample of each class in turn (class order,
    then test-set order), so that the images show different classes. Per sample and run:
    the predicted class and its confidence before and after the run's temperature scaling
    (``run.temperature``, chosen by validation ECE). Columns ``sample, label, group,
    method, predicted, confidence, confidence_ts, T``."""
    for name, n in (("n_correct", n_correct), ("n_incorrect", n_incorrect)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {n!r}")
    preds, y = {}, None
    for label, run in runs.items():
        z, labels = run.logits("test")
        if y is not None and not np.array_equal(labels, y):
            raise ValueError(f"run {label!r} was evaluated on other test samples than the first run")
        y = labels
        p, pt = metrics.probs_from_logits(z), metrics.probs_from_logits(z, temperature=run.temperature)
        preds[label] = (p.argmax(1), p.max(1), pt.max(1), run.temperature)
    if y is None:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    hits = np.stack([pred == y for pred, *_ in preds.values()])
    chosen = [("correct", i) for i in _one_per_class(np.flatnonzero(hits.all(0)), y)[:n_correct]] + \
             [("incorrect", i) for i in _one_per_class(np.flatnonzero((~hits).all(0)), y)[:n_incorrect]]
    rows = [{"sample": int(i), "label": int(y[i]), "group": grp, "method": label, "predicted": int(pred[i]),
             "confidence": float(c[i]), "confidence_ts": float(ct[i]), "T": T}
            for grp, i in chosen for label, (pred, c, ct, T) in preds.items()]
    return pd.DataFrame(rows, columns=["sample", "label", "group", "method", "predicted", "confidence",
                                       "confidence_ts", "T"])


class DataMismatch(ValueError):
    """The data found now is not the copy a run was trained on (its images cannot be shown)."""


def test_split(run):
    """``(images, labels, info)`` of the test samples ``run`` was evaluated on, rebuilt from
    its resolved configuration (same data subset); the labels are checked against the
    run's stored test labels (:class:`DataMismatch` when they differ, e.g. the official
    CIFAR-10 was found where the run was trained on the offline JPEG copy)."""
    from ...runs import build

    splits, _, _ = build(run.resolved)
    x, y = splits.test
    stored = run.logits("test")[1]
    if not np.array_equal(np.asarray(y), stored):
        trained = run.data.get("name", "unknown")
        raise DataMismatch(f"run {run.key} was trained on {trained}; the data found now ({getattr(splits.info, 'display_name', 'unknown')}) "
                           f"gives other test samples, so its test images cannot be shown")
    return x, np.asarray(y), splits.info


def appendix_f(runs: Mapping[str, object], caption_text: str | None = None, log=print):
    """:func:`qualitative_frame` and :func:`qualitative_figure` for ``runs`` (label -> Run),
    with the images of the first run's test set; when the data found is not the copy the
    runs were trained on, logs why and draws nothing (returns None)."""
    first = next(iter(runs.values()))
    try:
        images, _, info = test_split(first)
    except DataMismatch as err:
        log(f"Appendix F not drawn: {err}")
        return None
    return qualitative_figure(qualitative_frame(runs), images, info.classes, caption_text=caption_text)


def qualitative_figure(frame: pd.DataFrame, images, classes, caption_text: str | None = None):
    """Appendix F (Fig. 8) from :func:`qualitative_frame`: each chosen test image with its
    true class, and under it one pair of bars per model - confidence before (solid) and
    after temperature scaling (light) - labelled with the predicted class.

    ``images``: the test images (N x C x H x W uint8 or float in [0, 1]) indexed by
    ``frame.sample``; ``classes``: class names."""
    samples = list(dict.fromkeys(frame["sample"]))
    if not samples:
        raise ValueError("frame holds no samples (no test sample met the selection)")
    methods = list(dict.fromkeys(frame["method"]))
    cols = min(len(samples), 3)          # three images to a row of the page
    groups = -(-len(samples) // cols)
    fig, axes = plt.subplots(2 * groups, cols, figsize=(PAGE_WIDTH, groups * (1.9 + 0.7 * len(methods))),
                             squeeze=False, gridspec_kw={"height_ratios": [1.9, 0.7 * len(methods)] * groups})
    for j in range(len(samples), groups * cols):
        axes[2 * (j // cols), j % cols].remove()
        axes[2 * (j // cols) + 1, j % cols].remove()
    axes = {(r, j): axes[2 * (j // cols) + r, j % cols] for j in range(len(samples)) for r in (0, 1)}
    colors = sns.color_palette("colorblind", len(methods))
    for j, s in enumerate(samples):
        f = frame[frame["sample"] == s].set_index("method").loc[methods]
        img = np.asarray(images[s], dtype=float)
        img = img / 255.0 if img.max() > 1 else img
        axes[0, j].imshow(np.transpose(img, (1, 2, 0)) if img.shape[0] in (1, 3) else img)
        axes[0, j].set_title(f"{f['group'].iloc[0]}\ntrue: {classes[int(f['label'].iloc[0])]}", fontsize=9)
        axes[0, j].axis("off")
        ax, ypos = axes[1, j], np.arange(len(methods))
        ax.barh(ypos - 0.2, f["confidence"], height=0.38, color=colors)
        ax.barh(ypos + 0.2, f["confidence_ts"], height=0.38, color=colors, alpha=0.4)
        for k, (pred, c, ct) in enumerate(zip(f["predicted"], f["confidence"], f["confidence_ts"])):
            for yk, v, text, solid in ((k - 0.2, c, f"{classes[int(pred)]} {c:.2f}", True),
                                       (k + 0.2, ct, f"after TS {ct:.2f}", False)):
                # inside the bar only where the text fits in it (8-pt characters are ~0.067 in
                # wide; a bar panel is about 0.75 of its column of the page)
                inside = v - 0.03 >= 1.3 * len(text) * 0.067 / (0.75 * PAGE_WIDTH / cols)
                ax.text(v - 0.02 if inside else v + 0.02, yk, text, va="center", ha="right" if inside else "left",
                        fontsize=8, color="white" if inside and solid else "0.15")
        ax.set(xlim=(0, 1), yticks=ypos, yticklabels=methods if j % cols == 0 else [])
        keep_limits(ax, "a confidence is a probability: the whole of [0, 1]", axis="x")
        ax.invert_yaxis()
        ax.tick_params(labelsize=8)
    fig.tight_layout()
    settle_legends(fig, fig.tight_layout)   # the layout may have moved data under a legend
    if caption_text:
        add_caption(fig, caption_text)
    return fig


def training_reliability_bins(run, epochs=None) -> dict:
    """The recorded training-set reliability statistics of ``run`` at ``epochs`` (default: the
    paper's Figure-2 epochs 100/200/300/350 mapped onto the run's schedule), ``{epoch: bins}``.

    Raises ValueError when the run was trained without them (they are recorded with the
    option ``eval_every_epoch``)."""
    rows = {row["epoch"]: row for row in run.history}
    epochs = scaled_epochs(len(rows)) if epochs is None else tuple(epochs)
    missing = [e for e in epochs if "train_reliability" not in rows.get(e, {})]
    if missing:
        raise ValueError(f"run {run.key} has no training-set reliability statistics at epochs {missing}; "
                         "they are recorded with the option eval_every_epoch")
    return {e: rows[e]["train_reliability"] for e in epochs}


def figure2(run, caption_text: str | None = None):
    """Mukhoti et al., Fig. 2: training-set reliability diagrams (25 bins) and bin occupancy
    at the paper's four epochs, mapped onto the run's schedule."""
    return reliability_over_training(training_reliability_bins(run), caption_text=caption_text)
