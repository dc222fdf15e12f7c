"""Issue #32, item 6: figures that teach. replicate.plots.lint finds texts drawn over each
other, legends over data and axes not sized to the data; replicate.plots.alt_text writes a
figure's alt text from what it draws and carries it, in the PNG, to the page's <img alt>.
Every chapter runs both after each cell (replicate.plots.legibility.install), so the smoke
execution of the book (tests/test_book.py) fails on a figure lint warning."""
from __future__ import annotations

import base64
import functools
import io
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from replicate import plots  # noqa: E402
from replicate.plots import alt_text, lint  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    plots.use_style()
    yield
    plt.close("all")


def _stacked(layout=None):
    fig, (a, b) = plt.subplots(2, 1, figsize=(5, 3.2), layout=layout)
    for ax, title in ((a, "upper panel"), (b, "a long title of the lower panel")):
        ax.plot([0, 1, 2], [0, 1, 4])
        ax.set_title(title)
        ax.set_xlabel("an x label long enough to meet the title below")
    return fig


def test_a_label_under_the_title_of_the_panel_below_is_found_and_a_laid_out_figure_is_clean():
    found = lint.overlapping_texts(_stacked())
    assert any(f.startswith("panel 1") and "x tick label" in f and "panel 2" in f and "title" in f for f in found), found
    assert lint.overlapping_texts(_stacked("constrained")) == []


def test_each_text_box_is_the_drawn_extent_of_its_text():
    fig = _stacked("constrained")
    boxes = {label: box for label, _, box in lint.text_boxes(fig)}
    title = next(b for lab, b in boxes.items() if "title 'upper panel'" in lab)
    # the title sits above its axes and is as wide as its text drawn alone
    renderer = lint._drawn(fig)
    assert title.y0 >= fig.axes[0].bbox.y1 - 1
    assert abs(title.width - fig.axes[0].title.get_window_extent(renderer).width) < 1e-6


def test_a_legend_over_lines_or_markers_is_found_and_one_beside_them_is_not():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 2], label="rising")
    ax.plot([0, 2], [2, 0], label="falling")
    ax.legend(loc="center")
    assert lint.legends_over_data(fig) == ["panel 1: the legend covers line 'rising', line 'falling'"]
    ax.get_legend().remove()
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))       # outside the axes
    assert lint.legends_over_data(fig) == []
    fig, ax = plt.subplots()
    ax.scatter([0.5], [0.5], label="one point")
    ax.scatter([0.0, 1.0], [0.0, 1.0], label="corners")
    ax.set_xlim(-0.1, 1.1), ax.set_ylim(-0.1, 1.1)
    ax.legend(loc="center")
    assert lint.legends_over_data(fig) == ["panel 1: the legend covers markers 'one point'"]


def test_a_reference_line_drawn_in_axes_coordinates_does_not_count_as_data():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 0.2], label="data low")
    ax.axhline(0.9, label="reference")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert lint.legends_over_data(fig) == []


def test_axes_not_sized_to_the_data_are_found_unless_their_limits_are_kept_for_a_reason():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0, 1, 2])
    ax.set_xlim(-10, 10)
    assert lint.limit_problems(fig) == ["panel 1: the data fill 10 % of the x axis ([0, 2] of [-10, 10])"]
    lint.keep_limits(ax, "symmetric about 0 on purpose", axis="x")
    assert lint.limit_problems(fig) == []
    fig, ax = plt.subplots()
    ax.plot(np.arange(10.0), np.arange(10.0))
    ax.set_ylim(0, 5)
    assert lint.limit_problems(fig) == ["panel 1: 4 plotted point(s) lie outside the y limits [0, 5]"]
    with pytest.raises(ValueError, match="reason"):
        lint.keep_limits(ax, " ")


def test_a_log_axis_is_judged_in_decades():
    fig, ax = plt.subplots()
    ax.plot([1, 10, 100, 1000], [1, 2, 3, 4])
    ax.set_xscale("log")
    ax.set_xlim(1e-5, 1e4)                          # the data fill 3 of 9 decades
    assert lint.limit_problems(fig) == ["panel 1: the data fill 33 % of the x axis ([0, 3] of [-5, 4], log10)"]
    ax.set_xlim(0.5, 2000)
    assert lint.limit_problems(fig) == []


def test_the_lint_warning_is_one_line_per_finding_of_each_open_figure():
    plt.close("all")
    _stacked("constrained")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_ylim(-10, 10)
    out = io.StringIO()
    assert lint.check_open_figures(out) == 1
    assert out.getvalue().splitlines() == [f"{lint.WARNING}: panel 1: the data fill 5 % of the y axis "
                                           "([0, 1] of [-10, 10])"]


# ----------------------------------------------------------------------------- alt text
def test_the_alt_text_says_what_each_panel_plots_against_what_with_its_legend():
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3))
    fig.suptitle("Training of two losses (profile smoke)")
    for name in ("cross-entropy", "focal γ = 3"):
        a.plot(range(5), np.arange(5.0) ** 0.5, label=name)
    a.set(title="test ECE", xlabel="epoch", ylabel="ECE (%)")
    a.legend()
    b.bar(["a", "b"], [1, 2])
    b.set(ylabel="count", yscale="log")
    text = alt_text.describe(fig)
    assert text.startswith("Figure: Training of two losses (profile smoke), 2 panels.")
    assert "Panel 1, test ECE: ECE (%) against epoch; 2 lines; legend: cross-entropy, focal γ = 3." in text
    assert "Panel 2, count (log scale) against position; 2 bars." in text
    alt_text.set_alt_text(fig, "  Two  panels:  my own words. ")
    assert alt_text.describe(fig) == "Two panels: my own words."


def test_the_png_carries_the_alt_text_and_the_book_makes_it_the_images_alt(tmp_path):
    from docutils import nodes

    from replicate.book.html import alt_from_images

    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 0, 1])
    ax.set(xlabel="p", ylabel="loss")
    (tmp_path / "img.png").write_bytes(alt_text.png(fig))
    assert alt_text.read_png_description(tmp_path / "img.png") == alt_text.describe(fig) == \
        "Figure. Loss against p; 1 line."
    doc = nodes.section()
    doc += nodes.image(uri="img.png", candidates={"*": "img.png"})
    doc += nodes.image(uri="img.png", alt="an alt text of its own", candidates={"*": "img.png"})
    doc += nodes.image(uri="gone.png", candidates={"*": "gone.png"})
    assert alt_from_images(doc, tmp_path, "index") == 1
    assert [n.get("alt") for n in doc.findall(nodes.image)] == [
        "Figure. Loss against p; 1 line.", "an alt text of its own", None]
    assert alt_text.read_png_description(tmp_path / "gone.png") is None


def test_the_kernels_png_printer_keeps_its_options_and_adds_the_alt_text():
    from IPython.core.formatters import DisplayFormatter
    from IPython.core.pylabtools import print_figure
    from matplotlib.figure import Figure

    formatter = DisplayFormatter()
    png = formatter.formatters["image/png"]
    png.for_type(Figure, functools.partial(print_figure, fmt="png", base64=True, bbox_inches="tight", dpi=50))
    shell = SimpleNamespace(display_formatter=formatter)
    assert alt_text.install(shell) and alt_text.install(shell)       # twice: wrapped once
    fig, ax = plt.subplots(figsize=(4, 2))
    ax.plot([0, 1, 2], [0, 1, 0])
    ax.set(xlabel="x", ylabel="y", title="a tent")
    data, _ = formatter.format(fig)
    im = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    assert im.text["Description"] == "Figure. A tent: y against x; 1 line."
    assert im.size[0] < 4 * 50 + 20                                 # dpi=50 kept


def test_a_histogram_legend_gets_headroom_instead_of_covering_bars():
    rng = np.random.default_rng(0)
    conf = np.concatenate([rng.uniform(0.12, 0.3, 400), rng.uniform(0.9, 1.0, 200)])   # ten classes
    probs = np.column_stack([conf, np.repeat(((1 - conf) / 9)[:, None], 9, axis=1)])
    ax = plots.confidence_histogram(probs, (rng.uniform(size=600) > conf).astype(int))
    assert lint.legend_covers(ax) == [] and lint.figure_findings(ax.figure) == []
    top = max(p.get_height() for p in ax.patches)
    assert ax.get_ylim()[1] > 1.2 * top                  # raised: the tall bars at the left sat under it
    ax.set_ylim(0, 1.05 * top)
    assert lint.legend_covers(ax) != []


def test_place_legend_keeps_a_legend_off_the_data_inside_with_headroom_or_under_the_axes():
    # room above the lines: the legend stays inside at its best place
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 0.1], label="low")
    ax.set_ylim(0, 1)
    leg = plots.place_legend(ax)
    assert lint.legend_covers(ax) == [] and leg.get_bbox_to_anchor().y0 >= ax.bbox.y0
    # eight lines filling the axes: no place inside is free, so the legend goes under the axes
    fig, ax = plt.subplots()
    x = np.linspace(0, 1, 50)
    for k in range(8):
        ax.plot(x, np.sin(6 * x + k) + k / 4, label=f"line {k}")
    ax.set_xlabel("x")
    plots.place_legend(ax)
    renderer = lint._drawn(fig)
    box = ax.get_legend().get_window_extent(renderer)
    assert lint.legend_covers(ax, renderer) == []
    assert box.y1 <= ax.xaxis.label.get_window_extent(renderer).y0 + 1      # under the x label
    assert lint.overlapping_texts(fig, renderer) == []


def test_a_reliability_grid_settles_its_legends_after_its_layout_and_passes_the_lint():
    """Bars on both sides of the diagonal leave no free place inside for the legends: after the
    grid's layout they go under their axes, the figure grows, and nothing overlaps."""
    rng = np.random.default_rng(0)
    panels = {}
    for name in "abc":
        conf = np.concatenate([rng.uniform(0.12, 0.3, 300), rng.uniform(0.6, 1, 600)])
        probs = np.column_stack([conf, np.repeat(((1 - conf) / 9)[:, None], 9, axis=1)])
        panels[name] = (probs, (rng.uniform(size=900) > conf ** 2).astype(int))
    fig = plots.reliability_grid(panels, caption_text="profile: test")
    assert lint.figure_findings(fig) == []
    renderer = lint._drawn(fig)
    hist = fig.axes[2]                                                     # the first histogram
    assert hist.get_legend().get_window_extent(renderer).y1 <= hist.bbox.y0
    assert fig.get_figheight() > 2 * (3.4 + 1.8)                          # grown for the legends
