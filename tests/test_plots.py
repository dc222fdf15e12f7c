"""Figures draw what they claim: bar heights, gaps, counts and lines against direct computations."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from replicate import plots, synthetic  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _sample(n=3000, seed=0, alpha=1.8):
    return synthetic.BetaModel(alpha=alpha, n_classes=10).sample_probs(n, rng=seed)


def _bins_by_hand(probs, labels, n_bins=15):
    conf, hit = probs.max(1), probs.argmax(1) == labels
    rows = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        m = (conf > lo) & (conf <= hi)
        if m.any():
            rows.append((lo, hi - lo, hit[m].mean(), conf[m].mean(), int(m.sum())))
    return rows


def test_use_style_sets_the_book_look():
    plots.use_style()
    assert plt.rcParams["figure.figsize"] == [6.4, 4.0]
    assert plt.rcParams["axes.grid"]


def test_reliability_diagram_bars_gaps_and_counts_match_a_direct_binning():
    probs, labels = _sample()
    _, ax = plt.subplots()
    out = plots.reliability_diagram(probs, labels, ax=ax, title="t")
    assert out is ax and ax.get_title() == "t"
    rows = _bins_by_hand(probs, labels)
    acc_bars, gap_bars = ax.containers[0], ax.containers[1]
    assert len(acc_bars) == len(rows) == len(gap_bars)
    for bar, gap, (lo, w, acc, conf, _) in zip(acc_bars, gap_bars, rows):
        assert bar.get_x() == pytest.approx(lo) and bar.get_width() == pytest.approx(w)
        assert bar.get_height() == pytest.approx(acc, abs=1e-12)
        assert gap.get_y() == pytest.approx(min(acc, conf), abs=1e-12)
        assert gap.get_height() == pytest.approx(abs(acc - conf), abs=1e-12)
    counts = sorted(int(t.get_text()) for t in ax.texts)
    assert counts == sorted(r[4] for r in rows)
    ece = sum(n / len(labels) * abs(a - c) for _, _, a, c, n in rows)
    assert ax.get_legend().get_title().get_text() == f"ECE = {100 * ece:.2f}%"
    assert "15 equal-width bins" in ax.get_xlabel()


def test_reliability_diagram_mass_bins_hold_equal_counts():
    probs, labels = _sample(1500)
    ax = plots.reliability_diagram(probs, labels, binning="mass", n_bins=10, show_counts=False)
    widths = [b.get_width() for b in ax.containers[0]]
    assert len(widths) == 10 and sum(widths) == pytest.approx(1.0)
    assert not ax.texts
    assert "AdaECE" in ax.get_legend().get_title().get_text()


def test_confidence_histogram_marks_accuracy_and_mean_confidence():
    probs, labels = _sample()
    ax = plots.confidence_histogram(probs, labels, n_bins=20)
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == pytest.approx(100.0)
    conf = probs.max(1)
    expected = np.histogram(conf, bins=np.linspace(0, 1, 21))[0] / len(conf) * 100
    np.testing.assert_allclose(heights, expected, atol=1e-9)
    xs = sorted(line.get_xdata()[0] for line in ax.lines)
    assert xs == pytest.approx(sorted([(probs.argmax(1) == labels).mean(), conf.mean()]))


def test_reliability_grid_has_one_column_per_model_and_a_caption():
    a, b = _sample(800, 1), _sample(800, 2, alpha=1.0)
    cap = plots.caption(profile="smoke", dataset="synthetic", seed=1)
    fig = plots.reliability_grid({"A": a, "B": b}, caption_text=cap)
    assert len(fig.axes) == 4
    assert [ax.get_title() for ax in fig.axes[:2]] == ["A", "B"]
    assert any(t.get_text() == cap for t in fig.texts)
    fig = plots.reliability_grid({"A": a}, histograms=False)
    assert len(fig.axes) == 1


def test_caption_lists_what_produced_the_figure():
    assert plots.caption(profile="cpu", dataset="CIFAR-10", seed=3, n_test=500) == \
        "profile: cpu | data: CIFAR-10 | seed: 3 | n test: 500"
    assert plots.caption(profile="cpu") == "profile: cpu"
    with pytest.raises(ValueError, match="caption"):
        plots.caption()


def test_temperature_curve_plot_draws_each_metric_and_the_marks():
    curve = pd.DataFrame({"T": [0.5, 1.0, 2.0], "ece": [0.3, 0.1, 0.2], "nll": [2.0, 1.0, 1.5]})
    ax = plots.temperature_curve_plot(curve, chosen={"ECE": 1.0}, true_T=1.2)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), curve["ece"])
    twin = [a for a in ax.figure.axes if a is not ax][0]
    np.testing.assert_allclose(twin.lines[0].get_ydata(), curve["nll"])
    vlines = [line.get_xdata()[0] for line in ax.lines[1:]]
    assert vlines == [1.0, 1.2]
    with pytest.raises(ValueError, match="column 'T'"):
        plots.temperature_curve_plot(curve.drop(columns="T"))


def test_estimator_plot_draws_mean_lines_and_the_true_value():
    df = pd.DataFrame({"n": [100, 100, 1000, 1000], "estimate": [0.2, 0.4, 0.1, 0.3],
                       "estimator": ["ECE"] * 4})
    ax = plots.estimator_plot(df, true_value=0.15)
    mean_line = ax.lines[0]
    np.testing.assert_allclose(mean_line.get_ydata(), [0.3, 0.2])
    assert any(np.allclose(line.get_ydata(), 0.15) for line in ax.lines[1:])
    with pytest.raises(ValueError, match="no column"):
        plots.estimator_plot(df, hue="bins")


def test_bad_arguments_raise_clear_errors():
    probs, labels = _sample(50)
    with pytest.raises(ValueError, match="binning"):
        plots.reliability_diagram(probs, labels, binning="quantile")
    with pytest.raises(ValueError, match="labels"):
        plots.confidence_histogram(probs, labels[:-1])
    with pytest.raises(ValueError, match="n_bins"):
        plots.confidence_histogram(probs, labels, n_bins=0)
    with pytest.raises(ValueError, match="panels"):
        plots.reliability_grid({})


def test_reliability_diagram_draws_the_true_calibration_curve():
    m = synthetic.BetaModel()
    probs, labels = m.sample_probs(500, rng=4)
    ax = plots.reliability_diagram(probs, labels, true_curve=m.calibration_function)
    line = [ln for ln in ax.lines if ln.get_label() == "true h(c)"][0]
    x, y = line.get_xdata(), line.get_ydata()
    assert x.min() == pytest.approx(probs.max(1).min()) and x.max() == pytest.approx(probs.max(1).max())
    u = (x - 0.1) / 0.9
    np.testing.assert_allclose(y, 0.1 + 0.9 * u ** 1.6, rtol=1e-12)


def test_caption_goes_below_the_axis_labels():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x label")
    text = plots.add_caption(fig, "profile: smoke")
    r = fig.canvas.get_renderer()
    assert text.get_window_extent(r).y1 <= ax.xaxis.label.get_window_extent(r).y0 + 1e-6


def test_class_examples_show_the_first_image_of_each_class():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(40, 3, 8, 8), dtype=np.uint8)
    y = rng.permutation(np.arange(40) % 4)
    names = ["a", "b", "c", "d"]
    fig = plots.class_examples(x, y, names, title="examples")
    first = {}
    for i, label in enumerate(y):                      # the first index of each class, by a loop
        first.setdefault(int(label), i)
    assert [ax.get_title() for ax in fig.axes] == names
    for k, ax in enumerate(fig.axes):
        np.testing.assert_array_equal(ax.images[0].get_array(), x[first[k]].transpose(1, 2, 0))
    assert fig._suptitle.get_text() == "examples"
    grey = plots.class_examples(x[:, :1], y, names)
    np.testing.assert_array_equal(grey.axes[0].images[0].get_array(), x[first[0], 0])
    with pytest.raises(ValueError, match=r"missing \[4\]"):
        plots.class_examples(x, y, names + ["e"])
    with pytest.raises(ValueError, match="images must have shape"):
        plots.class_examples(x[0], y, names)


def test_metric_panels_draw_each_methods_values():
    frame = pd.DataFrame({"epoch": [1, 2, 3] * 2, "method": ["x"] * 3 + ["y"] * 3,
                          "loss": [3.0, 2.0, 1.5, 2.5, 2.2, 2.0], "ece": [0.1, 0.2, 0.3, 0.3, 0.2, 0.1]})
    fig = plots.metric_panels(frame, {"loss": "training loss", "ece": "ECE"}, caption_text="profile: smoke")
    assert [ax.get_title() for ax in fig.axes] == ["training loss", "ECE"]
    for ax, col in zip(fig.axes, ("loss", "ece")):
        drawn = sorted(tuple(line.get_ydata()) for line in ax.lines if len(line.get_ydata()) == 3)
        assert drawn == sorted(tuple(frame[frame.method == m][col]) for m in ("x", "y"))
    assert fig.axes[0].get_legend() is None and fig.axes[1].get_legend() is not None
    assert any(t.get_text() == "profile: smoke" for t in fig.texts)
    with pytest.raises(ValueError, match="no column 'nll'"):
        plots.metric_panels(frame, {"nll": "NLL"})
