"""Figures from recorded runs: each drawing is checked against the record it was drawn from.

The runs are synthetic records written by the real store (:func:`replicate.runs.write_record`)
from a constructed training result: a known per-epoch history (split summaries, weight
norms, gradient-norm histograms) and known logits. Nothing trains and no data is read.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from scipy.special import softmax  # noqa: E402

from replicate import metrics, plots, runs, training  # noqa: E402
from replicate.experiments.focal_loss import figures as tp  # noqa: E402
from replicate.training.diagnostics import GRAD_LOG10_EDGES  # noqa: E402

EPOCHS = 6
SPLIT_KEYS = ("nll", "nll_correct", "nll_incorrect", "entropy", "entropy_correct", "entropy_incorrect",
              "p_true", "p_true_correct", "p_true_incorrect", "confidence", "error", "ece")


@pytest.fixture(autouse=True)
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    yield tmp_path
    plt.close("all")


def _history(rng, per_split=True):
    rows = []
    for e in range(1, EPOCHS + 1):
        row = {"epoch": e, "lr": 0.1, "train_loss": 2.0 / e, "train_accuracy": 0.5,
               "fc_weight_norm": 1.0 + e * rng.random(), "seconds": 0.1}
        if per_split:
            for split in ("train", "val", "test"):
                row[split] = {k: float(rng.random()) for k in SPLIT_KEYS}
            counts = rng.integers(0, 50, len(GRAD_LOG10_EDGES) - 1)
            row["grad_norms"] = {"counts": counts.tolist(), "mean": 1.0, "median": 1.0}
        rows.append(row)
    return rows


def make_run(loss="cross_entropy", params=None, seed=0, per_split=True, n=120, k=4, test_logits=None, test_labels=None):
    """A finished run in the results store with a known history and known logits."""
    rng = np.random.default_rng(seed)
    logits = {}
    for split in ("val", "test"):
        z = rng.normal(size=(n, k)).astype(np.float32) * 3
        y = rng.integers(0, k, n)
        if split == "test" and test_logits is not None:
            z, y = test_logits.astype(np.float32), test_labels
        logits[split] = (torch.from_numpy(z), torch.from_numpy(np.asarray(y, dtype=np.int64)))
    result = training.TrainResult(model=None, history=_history(rng, per_split), logits=logits, selected_epoch=EPOCHS,
                                  device="cpu")
    cfg = runs.RunConfig("cifar10", loss, params or {}, profile="smoke", seed=seed,
                         options={"eval_every_epoch": per_split})
    return runs.write_record(cfg, result, store="results", logits_dtype="float32")


def test_scaled_epochs_keep_the_paper_fractions():
    assert tp.scaled_epochs(350) == tp.FIG2_EPOCHS
    assert tp.scaled_epochs(350, tp.FIG4_EPOCHS) == tp.FIG4_EPOCHS
    assert tp.scaled_epochs(20) == (6, 11, 17, 20)            # 100/350*20 = 5.7, 11.4, 17.1, 20
    assert tp.scaled_epochs(20, tp.FIG4_EPOCHS) == (1, 6, 11)   # 0.57 rounds to 1, kept >= 1
    assert tp.scaled_epochs(1) == (1,)                          # duplicates removed
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="epochs"):
            tp.scaled_epochs(bad)


def test_history_is_long_numeric_and_refuses_runs_without_per_epoch_records():
    a, b = make_run(seed=1), make_run("focal", {"gamma": 3.0}, seed=2)
    h = plots.history({"CE": a, "FL-3": b})
    assert list(h["method"].unique()) == ["CE", "FL-3"] and len(h) == 2 * EPOCHS
    np.testing.assert_allclose(h[h.method == "CE"]["test/nll"], [r["test"]["nll"] for r in a.history])
    bare = make_run(seed=3, per_split=False)
    with pytest.raises(ValueError, match="eval_every_epoch"):
        plots.history({"bare": bare})
    with pytest.raises(ValueError, match="non-empty"):
        plots.history({})


def test_figure1_draws_the_recorded_curves():
    run = make_run(seed=4)
    fig = tp.figure1(run, caption_text="profile: smoke")
    ax_train, ax_test, ax_err = fig.axes[:3]
    by_label = {ln.get_label(): ln for ln in ax_train.lines}
    train = [r["train"] for r in run.history]
    np.testing.assert_allclose(by_label["NLL incorrect"].get_ydata(), [t["nll_incorrect"] for t in train])
    np.testing.assert_allclose(by_label["entropy correct"].get_ydata(), [t["entropy_correct"] for t in train])
    by_label = {ln.get_label(): ln for ln in ax_test.lines}
    np.testing.assert_allclose(by_label["NLL"].get_ydata(), [r["test"]["nll"] for r in run.history])
    by_label = {ln.get_label(): ln for ln in ax_err.lines}
    np.testing.assert_allclose(by_label["test ECE"].get_ydata(), [100 * r["test"]["ece"] for r in run.history])
    np.testing.assert_allclose(by_label["train error"].get_xdata(), np.arange(1, EPOCHS + 1))
    assert any("profile: smoke" in t.get_text() for t in fig.texts)


def test_training_calibration_plots_accuracy_confidence_ece_and_marks_the_paper_epochs():
    run = make_run(seed=5)
    fig = tp.training_calibration(run)
    ax = fig.axes[0]
    curves = {ln.get_label(): ln.get_ydata() for ln in ax.lines if not ln.get_label().startswith("_")}
    np.testing.assert_allclose(curves["training accuracy"], [100 * (1 - r["train"]["error"]) for r in run.history])
    np.testing.assert_allclose(curves["mean confidence"], [100 * r["train"]["confidence"] for r in run.history])
    marks = sorted({ln.get_xdata()[0] for ln in ax.lines if ln.get_label().startswith("_")})
    assert tuple(marks) == tp.scaled_epochs(EPOCHS)


def test_figure3_has_eight_panels_one_line_per_method():
    a, b = make_run(seed=6), make_run("focal", {"gamma": 1.0}, seed=7)
    fig = tp.figure3({"CE": a, "FL-1": b})
    axes = fig.axes[:8]
    assert [ax.get_title()[:3] for ax in axes] == ["(a)", "(b)", "(c)", "(d)", "(e)", "(f)", "(g)", "(h)"]
    for ax in axes:
        assert len([ln for ln in ax.lines if len(ln.get_xdata()) == EPOCHS]) == 2
    ece = sorted(tuple(np.round(ln.get_ydata(), 9)) for ln in axes[6].lines if len(ln.get_xdata()) == EPOCHS)
    want = sorted(tuple(np.round([100 * r["test"]["ece"] for r in run.history], 9)) for run in (a, b))
    assert ece == want
    norms = sorted(tuple(np.round(ln.get_ydata(), 9)) for ln in axes[7].lines if len(ln.get_xdata()) == EPOCHS)
    assert norms == sorted(tuple(np.round([r["fc_weight_norm"] for r in run.history], 9)) for run in (a, b))


def test_gradient_histograms_are_the_recorded_counts_in_percent():
    a, b = make_run(seed=8), make_run("focal", {"gamma": 3.0}, seed=9)
    g = tp.grad_norm_frame({"CE": a, "FL-3": b}, (1, 3))
    for (label, run) in (("CE", a), ("FL-3", b)):
        for e in (1, 3):
            f = g[(g.method == label) & (g.epoch == e)]
            counts = np.asarray(run.history[e - 1]["grad_norms"]["counts"], float)
            np.testing.assert_allclose(f["count"], counts)
            np.testing.assert_allclose(f["percent"], 100 * counts / counts.sum())
            np.testing.assert_allclose(f["log10_lower"], GRAD_LOG10_EDGES[:-1])
    fig = tp.figure4({"CE": a, "FL-3": b}, (1, 3))
    stairs = [p for p in fig.axes[0].patches]
    assert len(stairs) == 2
    np.testing.assert_allclose(stairs[0].get_data().values, g[(g.method == "CE") & (g.epoch == 1)]["percent"])
    with pytest.raises(ValueError, match="epoch 99"):
        tp.grad_norm_frame({"CE": a}, (99,))


def test_reliability_over_training_draws_the_given_bins():
    rng = np.random.default_rng(0)
    bins = {}
    for e, sharp in ((1, 1.0), (5, 4.0)):
        p = softmax(sharp * rng.normal(size=(400, 5)), axis=1)
        y = rng.integers(0, 5, 400)
        rb = metrics.reliability_bins(p, y, n_bins=25)
        bins[e] = {"edges": rb.edges, "count": rb.count, "accuracy": rb.accuracy}
    fig = tp.reliability_over_training(bins)
    top, bottom = fig.axes[0], fig.axes[2]
    heights = np.array([r.get_height() for r in top.patches])
    np.testing.assert_allclose(heights, np.nan_to_num(np.where(bins[1]["count"] > 0, bins[1]["accuracy"], 0)))
    assert sum(r.get_height() for r in bottom.patches) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="len"):
        tp.reliability_over_training({1: {"edges": [0, 0.5, 1], "count": [1], "accuracy": [1.0]}})


def test_one_per_class_interleaves_classes_in_test_order():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 60)
    idx = np.sort(rng.choice(60, 30, replace=False))
    got = tp._one_per_class(idx, y)
    # reference: repeatedly take, in class order, the next unused sample of each class
    queues = {c: [i for i in idx if y[i] == c] for c in range(4)}
    want = []
    while any(queues.values()):
        for c in range(4):
            if queues[c]:
                want.append(queues[c].pop(0))
    assert got.tolist() == want


def test_qualitative_frame_picks_samples_all_models_agree_on_and_reports_confidences():
    rng = np.random.default_rng(11)
    n, k = 200, 4
    y = rng.integers(0, k, n)
    base = rng.normal(size=(n, k)) * 2
    ra = make_run(seed=12, test_logits=base, test_labels=y)
    other = base + rng.normal(size=(n, k))
    rb = make_run("focal", {"gamma": 3.0}, seed=13, test_logits=other, test_labels=y)
    f = tp.qualitative_frame({"A": ra, "B": rb}, n_correct=3, n_incorrect=2)
    za, zb = base.astype(np.float32), other.astype(np.float32)
    ok = (za.argmax(1) == y) & (zb.argmax(1) == y)
    bad = (za.argmax(1) != y) & (zb.argmax(1) != y)
    chosen_ok = f[f.group == "correct"]["sample"].unique()
    chosen_bad = f[f.group == "incorrect"]["sample"].unique()
    assert ok.sum() >= 3 and bad.sum() >= 2
    assert len(chosen_ok) == 3 and len(chosen_bad) == 2
    assert ok[chosen_ok].all() and bad[chosen_bad].all()
    for _, r in f.iterrows():
        z = za if r["method"] == "A" else zb
        run = ra if r["method"] == "A" else rb
        p = softmax(z[r["sample"]].astype(float))
        pt = softmax(z[r["sample"]].astype(float) / run.temperature)
        assert r["predicted"] == p.argmax() and r["label"] == y[r["sample"]]
        assert r["confidence"] == pytest.approx(p.max(), rel=1e-6)
        assert r["confidence_ts"] == pytest.approx(pt.max(), rel=1e-6)
    images = rng.integers(0, 255, size=(n, 3, 8, 8)).astype(np.uint8)
    fig = tp.qualitative_figure(f, images, [f"c{i}" for i in range(k)], caption_text="profile: smoke")
    assert len(fig.axes) == 2 * f["sample"].nunique()
    with pytest.raises(ValueError, match="n_correct"):
        tp.qualitative_frame({"A": ra}, n_correct=-1)


def test_qualitative_frame_refuses_runs_on_different_test_samples():
    ra = make_run(seed=14)
    rb = make_run("focal", {"gamma": 3.0}, seed=15)
    with pytest.raises(ValueError, match="other test samples"):
        tp.qualitative_frame({"A": ra, "B": rb})


def test_test_split_checks_the_stored_labels(monkeypatch):
    run = make_run(seed=16)
    y = run.logits("test")[1]

    class Splits:
        def __init__(self, labels):
            self.test = (torch.zeros(len(labels), 3, 8, 8, dtype=torch.uint8), torch.from_numpy(labels))
            self.info = "info"

    monkeypatch.setattr(runs, "build", lambda resolved: (Splits(y), None, None))
    x, labels, info = tp.test_split(run)
    assert np.array_equal(labels, y) and info == "info" and len(x) == len(y)
    monkeypatch.setattr(runs, "build", lambda resolved: (Splits(np.roll(y, 1)), None, None))
    with pytest.raises(ValueError, match="gives other test samples"):
        tp.test_split(run)


def test_figure2_reads_the_recorded_training_bins_at_the_paper_epochs():
    rng = np.random.default_rng(3)
    run = make_run()
    for row in run.history:                       # records as the engine writes them
        p = softmax(rng.normal(size=(200, 4)) * row["epoch"], axis=1)
        rb = metrics.reliability_bins(p, rng.integers(0, 4, 200), n_bins=25)
        row["train_reliability"] = {"edges": rb.edges.tolist(), "count": rb.count.tolist(),
                                    "accuracy": [None if np.isnan(a) else a for a in rb.accuracy],
                                    "confidence": rb.mean_confidence.tolist()}
    bins = tp.training_reliability_bins(run)
    assert tuple(bins) == tp.scaled_epochs(EPOCHS)
    fig = tp.figure2(run)
    assert len(fig.axes) == 2 * len(bins)
    last = max(bins)
    top = next(ax for ax in fig.axes if ax.get_title() == f"epoch {last}")    # the last epoch's diagram
    heights = np.array([r.get_height() for r in top.patches])
    acc = np.array([np.nan if a is None else a for a in bins[last]["accuracy"]], float)
    np.testing.assert_allclose(heights, np.where(np.array(bins[last]["count"]) > 0, np.nan_to_num(acc), 0))


def test_figure2_refuses_runs_without_training_bins():
    with pytest.raises(ValueError, match="eval_every_epoch"):
        tp.training_reliability_bins(make_run())


def test_appendix_f_is_not_drawn_from_another_data_copy(monkeypatch, tmp_path):
    """When the data found now gives other test samples than the run's (e.g. the official
    CIFAR-10 where the run used the JPEG copy), the figure logs why and draws nothing."""
    import replicate.experiments.focal_loss.figures as tp
    from replicate import runs as rruns

    class FakeRun:
        key = "abc"
        resolved = {"dataset": "cifar10"}
        data = {"name": "CIFAR-10 (JPEG q75)"}

        def logits(self, split):
            return np.zeros((4, 10), np.float32), np.array([0, 0, 1, 1])

    class Splits:
        test = (np.zeros((4, 3, 32, 32), np.uint8), np.array([1, 0, 1, 0]))
        info = type("I", (), {"display_name": "CIFAR-10", "classes": tuple("abcdefghij")})()

    monkeypatch.setattr(rruns, "build", lambda resolved: (Splits(), None, None))
    logged = []
    assert tp.appendix_f({"CE": FakeRun()}, log=logged.append) is None
    assert "trained on CIFAR-10 (JPEG q75)" in logged[0] and "(CIFAR-10)" in logged[0]
    with pytest.raises(tp.DataMismatch):
        tp.test_split(FakeRun())
