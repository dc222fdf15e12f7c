"""Reader-grade pages (issue #24): full table text, laid-out tables, legible figures, the
warning scan of executed chapters, exercises numbered per chapter, the scale box."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from replicate import metrics, plots  # noqa: E402
from replicate.book import scale as scale_box  # noqa: E402
from replicate.comparison import scale  # noqa: E402
from replicate.book import html as book_html, layout as html_layout, notebook_checks  # noqa: E402
from replicate.plots import legibility  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- tables
def test_use_style_shows_every_character_row_and_column_of_a_table():
    long_text = "7 of 7 focal variants below cross-entropy; and T within 0.25 of 1 for the TS temperature of focal loss"
    frame = pd.DataFrame({"evidence": [long_text] * 80, **{f"c{i}": range(80) for i in range(30)}})
    with pd.option_context("display.max_colwidth", 50, "display.max_rows", 60, "display.max_columns", 20):
        assert "..." in frame._repr_html_()          # pandas' defaults cut it
        plots.use_style()
        html = frame._repr_html_()
    plots.use_style()
    assert long_text in html and "..." not in html
    assert html.count("<tr") == 81 and "c29" in html


def test_mark_tables_classes_output_tables_and_their_long_cells_only():
    long_cell = "x" * (html_layout.LONG_CELL + 1)
    body = ('<div class="cell_output"><div class="output text_html"><table class="dataframe"><tr>'
            f'<th>{long_cell}</th><td>1.35 (2.50)</td><td>{"y" * html_layout.LONG_CELL}</td></tr></table></div></div>'
            '<table id="prose"><tr><td>' + long_cell + '</td></tr></table>')
    out = html_layout.mark_tables(body)
    assert out.count(html_layout.TABLE_CLASS) == 1 and 'class="dataframe replicate-output-table"' in out
    assert out.count(html_layout.LONG_CLASS) == 1                 # the 41-character header cell only
    assert f'<th class="{html_layout.LONG_CLASS}">{long_cell}</th>' in out
    assert '<table id="prose"><tr><td>' + long_cell in out          # a table outside outputs is left alone
    assert html_layout.mark_tables("<p>no table</p>") == "<p>no table</p>"


def test_the_table_style_sheet_is_shipped_and_pads_cells_and_wraps_long_ones():
    from replicate.book.tables import STATIC_DIR

    css = (STATIC_DIR / html_layout.STYLESHEET).read_text()
    assert f"table.{html_layout.TABLE_CLASS}" in css and f"td.{html_layout.LONG_CLASS}" in css
    assert "padding: 0.25em 0.6em" in css and "white-space: nowrap" in css and "overflow: auto" in css and "max-height: 80vh" in css


# ----------------------------------------------------------------------------- exercises
def test_exercises_are_numbered_from_one_in_each_document_in_document_order():
    numbers = {"a": {"exercise": {"a-x": (1,), "a-y": (2,), "a-z": (3,)}, "figure": {"f": (1,)}},
               "b": {"exercise": {"b-y": (5,), "b-x": (4,)}},
               "c": {"figure": {"g": (2,)}}}
    got = book_html.per_chapter_exercise_numbers(numbers)
    assert got["a"]["exercise"] == {"a-x": (1,), "a-y": (2,), "a-z": (3,)}
    assert got["b"]["exercise"] == {"b-x": (1,), "b-y": (2,)}
    assert got["a"]["figure"] == {"f": (1,)} and got["c"] == {"figure": {"g": (2,)}}


# ----------------------------------------------------------------------------- figures
def test_a_figure_within_the_column_reads_at_its_own_size():
    plots.use_style()
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_title("title", fontsize=10)
    assert legibility.page_scale(fig) == 1.0
    sizes = {t.text: t for t in legibility.drawn_texts(fig)}
    assert math.isclose(sizes["title"].points, 10) and math.isclose(sizes["title"].on_page, 10 * 100 / 96)
    assert legibility.figure_problem(fig) is None


def test_a_wide_figure_is_shrunk_to_the_column_and_its_labels_with_it():
    plots.use_style()
    fig, axes = plt.subplots(1, 4, figsize=(16, 3))
    for ax in axes:
        ax.set_xlabel("label", fontsize=10)
    width = legibility.image_width_px(fig)
    assert width > 1200
    factor = legibility.COLUMN_PX / width
    label = next(t for t in legibility.drawn_texts(fig) if t.text == "label")
    assert math.isclose(label.on_page, 10 * factor * 100 / 96, rel_tol=1e-9)
    problem = legibility.figure_problem(fig)
    assert problem.startswith(legibility.WARNING) and "16.0 x 3.0 in" in problem


def test_small_text_in_a_narrow_figure_is_reported_too():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    small = legibility.small_texts(fig)
    assert [t.text for t in small] == ["tiny"]


def test_check_open_figures_prints_one_line_per_figure_with_small_text(capsys):
    import io

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_title("fine", fontsize=10)
    fig2, ax2 = plt.subplots(figsize=(4, 3))
    ax2.text(0, 0, "tiny", fontsize=5)
    out = io.StringIO()
    assert legibility.check_open_figures(out) == 1
    assert out.getvalue().count(legibility.WARNING) == 1 and "'tiny'" in out.getvalue()


def test_install_puts_the_check_before_the_inline_backend_and_only_once():
    class Events:
        def __init__(self):
            self.callbacks = {"post_execute": [print]}

    class Shell:
        events = Events()

    shell = Shell()
    assert legibility.install(shell) and legibility.install(shell)
    assert shell.events.callbacks["post_execute"] == [legibility._after_cell, print]
    assert legibility.install(object()) is False


# ----------------------------------------------------------------------------- warnings
def test_warnings_in_finds_stderr_and_warning_lines_and_nothing_else():
    nb = {"cells": [
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": "fine\n"}]},
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stderr",
                                           "text": "x.py:1: UserWarning: Tight layout not applied.\n"}]},
        {"cell_type": "code", "outputs": [{"output_type": "execute_result",
                                           "data": {"text/plain": "LegibilityWarning: small"}}]},
        {"cell_type": "markdown", "source": "A warning about warnings: Warning is a word."},
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stderr", "text": "a log line\n"}]},
    ]}
    assert notebook_checks.warnings_in(nb) == [(1, "x.py:1: UserWarning: Tight layout not applied."),
                                               (2, "LegibilityWarning: small"), (4, "a log line")]


# ----------------------------------------------------------------------------- table words
def test_table_problems_flags_identifier_headers_long_decimals_nan_and_a_pandas_index():
    """Issue #32, item 1: pandas' own HTML of a raw frame shows every problem."""
    frame = pd.DataFrame({"temperature_scaled": [0.212, float("nan")], "ECE (%)": [1.5, 2.25]})
    found = notebook_checks.table_problems(frame.to_html(float_format="{:.6f}".format))
    assert any("pandas index" in f for f in found)
    assert any("'temperature_scaled' is a Python identifier" in f for f in found)
    assert any("'0.212000' has more than four decimals" in f for f in found)
    assert any("shows NaN" in f for f in found)
    styled = frame.style.hide(axis="index").format(precision=2, na_rep="–").to_html()
    assert [f for f in notebook_checks.table_problems(styled) if "identifier" not in f] == []


def test_table_problems_leaves_words_code_short_decimals_and_labelled_indexes_alone():
    ok = ("<table><thead><tr><th>method</th><th>ECE (%)</th><th><code>n_bins</code></th>"
          "<th>low/high</th></tr></thead><tbody><tr><td>FL-1</td><td>1.2345</td><td>15</td>"
          "<td>Nancy – none</td></tr></tbody></table>")
    assert notebook_checks.table_problems(ok) == []
    labelled = ("<table><thead><tr><th>seed</th><th>ECE (%)</th></tr></thead>"
                "<tbody><tr><th>0</th><td>1.2</td></tr><tr><th>1</th><td>1.3</td></tr></tbody></table>")
    assert notebook_checks.table_problems(labelled) == []
    assert notebook_checks.table_problems("<p>no table, 0.123456 NaN</p>") == []


def test_table_problems_in_reads_html_outputs_and_frames_printed_to_stdout():
    nb = {"cells": [
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout",
                                           "text": "     gamma  T\nfl1  0.212000  1.022000\n"}]},
        {"cell_type": "code", "outputs": [{"output_type": "execute_result", "data": {
            "text/html": "<table><thead><tr><th>sweep_ece_mass</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>",
            "text/plain": "x"}}]},
        {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": "ECE 1.23 %\n"}]},
    ]}
    found = notebook_checks.table_problems_in(nb)
    assert [i for i, _ in found] == [0, 1]
    assert "0.212000" in found[0][1] and "sweep_ece_mass" in found[1][1]


# ----------------------------------------------------------------------------- scale
def test_the_calibrated_twin_is_calibrated_and_its_ece_matches_the_clt_prediction():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 1.5, size=(2000, 10))
    probs = metrics.probs_from_logits(z)
    twin = scale.CalibratedTwin(probs)
    p, y = twin.sample_probs(2000, rng=1)
    assert p is twin.probs
    many = np.concatenate([twin.sample_probs(2000, rng=s)[1] == p.argmax(1) for s in range(40)])
    conf = np.tile(p.max(1), 40)
    assert abs(many.mean() - conf.mean()) < 0.01              # right as often as it is confident
    mean, sd = scale.calibrated_ece(probs, reps=60, rng=2)
    assert 0 < sd < mean
    assert mean == pytest.approx(scale.clt_floor(probs), rel=0.12)
    assert scale.calibrated_ece(probs[:500], reps=60, rng=2)[0] > mean       # fewer test images, higher floor


def test_the_twin_refuses_what_is_not_a_probability_matrix():
    with pytest.raises(ValueError, match="shape"):
        scale.CalibratedTwin(np.ones(3))
    with pytest.raises(ValueError, match="sum to 1"):
        scale.CalibratedTwin(np.ones((3, 2)))


class _Run:
    def __init__(self, profile="cpu", n_train=3000, epochs=20, augment=False, seed=1, error_rate=0.5, n=400,
                 kind="image", rng=0):
        g = np.random.default_rng(rng)
        self.config = type("C", (), {"profile": profile})()
        self.data = {"name": "20 Newsgroups (by date)"} if kind == "text" else {}
        self.resolved = {"kind": kind, "dataset": "20newsgroups" if kind == "text" else "cifar10", "model": "tiny_cnn", "model_params": {"width": 32},
                         "n_train": n_train, "n_val": 1000 if n_train else None, "data": {"val_size": 5000},
                         "train": {"epochs": epochs, "batch_size": 128, "augment": augment, "seed": seed,
                                   "precision": "float32"}}
        y = g.integers(0, 10, size=n)
        z = g.normal(0, 1, size=(n, 10))
        right = g.random(n) >= error_rate
        z[np.arange(n), y] += np.where(right, 20.0, -20.0)
        self._test = (z.astype(np.float32), y)

    def logits(self, split):
        return self._test


def test_describe_counts_steps_errors_and_the_papers_scale():
    runs = {("ce", 1): _Run(error_rate=0.5, rng=1), ("fl", 1): _Run(error_rate=0.3, rng=2),
            ("text", 1): _Run(kind="text")}
    s = scale.describe({"image": runs}, data_name="CIFAR-10 (JPEG q75)", reps=20)
    assert s.profile == "cpu" and s.n_runs == 2 and s.seeds == (1,)          # the text run is left out
    assert (s.n_train, s.n_val, s.n_test) == (3000, 1000, 400)
    assert s.steps == (20 * 24,) and not s.augment                            # ceil(3000 / 128) = 24 steps
    assert 25 < s.error[0] < 35 < 45 < s.error[1] < 55
    assert (s.paper_n_train, s.paper_epochs, s.paper_steps) == (45_000, 350, 350 * 352)
    full = scale.describe([_Run(profile="gpu", n_train=None, epochs=35, augment=True)], data_name="CIFAR-10",
                          reps=5)
    assert full.n_train == 45_000 and full.n_val == 5000 and full.steps == (35 * 352,) and full.augment


def test_describe_refuses_runs_of_two_profiles_or_no_image_run():
    with pytest.raises(ValueError, match="one profile"):
        scale.describe([_Run(), _Run(profile="smoke", n_train=1000)], data_name="x", reps=2)
    with pytest.raises(ValueError, match="image run"):
        scale.describe([_Run(kind="text")], data_name="x", reps=2)


def test_the_box_says_every_number_and_what_the_profile_can_decide():
    s = scale.describe([_Run()], data_name="CIFAR-10 (JPEG q75)", reps=20)
    box = scale_box.ScaleBox(s)
    md, html = box._repr_markdown_(), box._repr_html_()
    assert md.startswith(":::{admonition} The scale of these experiments: profile cpu") and md.rstrip().endswith(":::")
    for text in ("3,000 training images", "400 test images", "20 epochs", "480 SGD steps", "no augmentation",
                 "tiny_cnn (width=32)", f"{s.error[0]:.1f} %", f"ECE of {s.floor_text} %", "45,000 images",
                 "123,200 steps", "can decide", "cannot decide"):
        assert text in md, text
    assert scale_box.VERDICT_SCOPE["cpu"][0][:40] in md and "measuring_calibration.ipynb#" in md
    assert html.startswith('<div class="admonition important">') and "480 SGD steps" in html and "](" not in html
    gpu = scale_box.ScaleBox(scale.describe([_Run(profile="gpu", n_train=None, epochs=35, augment=True)],
                                        data_name="CIFAR-10", reps=5))._repr_markdown_()
    assert "profile gpu" in gpu and "augmented (random crop and flip)" in gpu
    assert scale_box.VERDICT_SCOPE["gpu"][0][:40] in gpu


def test_the_box_names_each_kind_of_rows_with_its_own_profile():
    """Issue #32, item 5: image rows at gpu and text rows at cpu, each said with its profile,
    data, network, epochs, seeds, runs and split sizes; the title names both profiles."""
    runs = {"image": {("ce", 1): _Run(profile="gpu", n_train=None, epochs=35, augment=True)},
            "text": {("ce", 1): _Run(profile="cpu", kind="text", n=300), ("fl", 2): _Run(kind="text", n=300, seed=2)}}
    s = scale.describe(runs, data_name="CIFAR-10", reps=2)
    image, text = s.rows
    assert (image.kind, image.profile, image.epochs, image.seeds, image.n_runs) == ("image", "gpu", (35,), (1,), 1)
    assert (image.n_train, image.n_val, image.n_test, image.data) == ((45_000,), (5000,), (400,), ("CIFAR-10",))
    assert (text.kind, text.profile, text.seeds, text.n_runs, text.n_test) == ("text", "cpu", (1, 2), 2, (300,))
    assert text.unit == "documents" and s.profiles == ("gpu", "cpu")
    md = scale_box.ScaleBox(s)._repr_markdown_()
    assert md.startswith(":::{admonition} The scale of these experiments: profiles gpu (image rows) and cpu (text rows)")
    assert ("image rows: profile gpu, CIFAR-10, tiny_cnn (width=32), 35 epochs, seed 1 (1 run), 45,000 training, "
            "5,000 validation and 400 test images") in md
    assert "text rows: profile cpu, 20 Newsgroups (by date), tiny_cnn (width=32), 20 epochs, seeds 1, 2 (2 runs)" in md
    assert "300 test documents" in md and "The text rows, at profile cpu, can decide" in md
    assert scale_box.setting_text(s) == "tiny_cnn (width=32) trained for 35 epochs on 45,000 CIFAR-10 images (profile gpu)"
    one = scale_box.ScaleBox(scale.describe([_Run()], data_name="x", reps=2))._repr_markdown_()
    assert "profiles" not in one and "at profile" not in one and "image rows: profile cpu" in one


def test_the_mukhoti_box_says_what_its_gpu_image_and_cpu_text_runs_are_from_the_store():
    """Issue #32, item 5: the Mukhoti chapter as the book shows it (image rows at gpu, text rows
    at cpu), its box against the chapter's plan: per kind of rows, the profile, seeds, epochs and
    network the plan's configurations resolve to, the test size of the profile, the runs
    planned. Skipped when the store lacks those runs."""
    import replicate as rp
    from replicate.experiments import focal_loss
    from replicate.profiles import get_profile

    p = focal_loss.plan.plan("gpu", device="cpu", text_profile="cpu")
    runs = rp.comparison.load_groups(p)
    if not runs or set(runs) != {"image", "text"}:
        pytest.skip("the run store lacks the Mukhoti chapter's gpu image runs or cpu text runs")
    rows = {r.kind: r for r in scale.describe(runs, reps=2).rows}
    assert set(rows) == {"image", "text"}
    for kind, configs in p.groups.items():
        resolved = [c.resolve() for c in configs.values()]
        r, prof = rows[kind], get_profile(p.profiles.get(kind, p.profile))
        assert r.profile == prof.name == {"image": "gpu", "text": "cpu"}[kind]
        assert r.seeds == tuple(sorted({c.seed for c in configs.values()})) and r.n_runs == len(configs)
        assert r.epochs == tuple(sorted({x["train"]["epochs"] for x in resolved}))
        assert {n.split(" (")[0] for n in r.networks} == {x["model"] for x in resolved}
        n_test = (prof.text if kind == "text" else {}).get("n_test", prof.n_test)
        assert r.n_test == ((n_test or 10_000),)
    assert rows["image"].networks[0].split(" (")[0] == rp.protocol.profile_network("gpu")
    md = rp.book.scale.rows_text(scale.describe(runs, reps=2).rows)
    assert "image rows: profile gpu" in md and "text rows: profile cpu, 20 Newsgroups" in md


def test_the_training_size_of_20_newsgroups_is_the_official_archive_s():
    """OFFICIAL_TRAIN's 20 Newsgroups entry counts the messages of the by-date training split
    of the official archive (a real data directory; skipped on generated data)."""
    import tarfile

    from replicate import config

    path = config.data_dir() / "20news-bydate.tar.gz"
    from replicate.data import archives
    if not path.exists() or archives.is_generated(config.data_dir()):
        pytest.skip("no official 20 Newsgroups archive in the data directory")
    with tarfile.open(path) as tf:
        n = sum(m.isfile() and m.name.split("/")[0] == "20news-bydate-train" for m in tf.getmembers())
    assert scale.OFFICIAL_TRAIN["20newsgroups"] == n


# ----------------------------------------------------------------------------- page notes
def test_augmentation_text_follows_the_profiles():
    from replicate import profiles
    from replicate.protocol import augmentation_text

    cpu = augmentation_text("cpu")
    assert "profile cpu" in cpu and ("never see a cropped" in cpu) == (not profiles.get_profile("cpu").augment)
    gpu = augmentation_text("gpu")
    assert ("train on cropped and flipped images" in gpu) == profiles.get_profile("gpu").augment
    on = [p.name for p in profiles.PROFILES.values() if p.augment]
    assert f"The profiles {', '.join(on)} augment" in cpu


class _HistoryRun:
    key = "k"
    resolved = {"n_train": 3000}

    def __init__(self, error, confidence, count):
        self.history = [{"epoch": 1}, {"epoch": 2, "train": {"error": error, "confidence": confidence, "ece": 0.1},
                                       "train_reliability": {"count": count, "edges": [0, 0.5, 0.96, 1.0]}}]


def test_training_confidence_reads_the_last_epoch_and_says_which_way():
    from replicate.experiments.focal_loss import views as page_notes

    under = page_notes.training_confidence(_HistoryRun(0.16, 0.66, [100, 2700, 200]))
    assert under["epoch"] == 2 and under["accuracy"] == pytest.approx(84) and under["confidence"] == pytest.approx(66)
    assert under["direction"] == "under-confident" and under["top_bin"] == pytest.approx(100 * 200 / 3000)
    assert under["top_bin_from"] == 0.96
    over = page_notes.training_confidence(_HistoryRun(0.30, 0.90, [0, 1, 9]))
    assert over["direction"] == "over-confident"
    bare = _HistoryRun(0.1, 0.5, [1])
    bare.history = [{"epoch": 1}]
    with pytest.raises(ValueError, match="eval_every_epoch"):
        page_notes.training_confidence(bare)


def test_grid_difference_finds_the_model_whose_ece_moves_most():
    from replicate.experiments.focal_loss import views as page_notes

    ours = pd.DataFrame([
        {"method": "ce", "seed": 1, "metric": "ece", "temperature_scaled": True, "value": 3.0, "T": 1.1},
        {"method": "fl", "seed": 1, "metric": "ece", "temperature_scaled": True, "value": 4.43, "T": 0.9},
        {"method": "fl", "seed": 1, "metric": "ece", "temperature_scaled": False, "value": 9.0, "T": float("nan")},
        {"method": "fl", "seed": 1, "metric": "nll", "temperature_scaled": True, "value": 150.0, "T": 0.9}])
    other = pd.DataFrame([
        {"method": "ce", "seed": 1, "posthoc": "ts", "select": "ece", "metric": "ece", "value": 3.0, "T": 1.1},
        {"method": "fl", "seed": 1, "posthoc": "ts", "select": "ece", "metric": "ece", "value": 1.99, "T": 1.05},
        {"method": "fl", "seed": 1, "posthoc": "fts", "select": "ece", "metric": "ece", "value": 0.5, "T": 1.0}])
    got = page_notes.grid_difference(ours, other, {"fl": "FLSD-532"})
    assert got["method"] == "FLSD-532" and got["n_models"] == 2 and got["n_other_T"] == 1
    assert (got["ece"], got["T"], got["ece_other"], got["T_other"]) == (4.43, 0.9, 1.99, 1.05)
    assert got["difference"] == pytest.approx(-2.44)


# ----------------------------------------------------------------------------- the authors' code
def test_every_behaviour_names_an_existing_option_or_why_it_has_none():
    from replicate import protocol
    from replicate.protocol import authors_code

    assert authors_code.check_options() == []
    topics = [b.topic for b in authors_code.behaviours()]
    assert len(topics) == len(set(topics))
    assert {r["topic"] for r in protocol.DEVIATIONS} - {"FCL protocol"} <= set(topics)   # one source
    assert sum(b.defect for b in authors_code.behaviours()) == len(authors_code.DEFECTS) >= 6
    for b in authors_code.behaviours():
        assert b.what and b.found and b.book and (b.option or b.why_not), b.topic


def test_check_options_catches_a_misnamed_option(monkeypatch):
    from replicate.protocol import authors_code

    bad = authors_code.Behaviour("x", "p", "w", "f", "b", option="replicate.posthoc.fit_focal_temperature:nope")
    none = authors_code.Behaviour("y", "p", "w", "f", "b")
    monkeypatch.setattr(authors_code, "DEFECTS", (*authors_code.DEFECTS, bad, none))
    assert authors_code.check_options() == ["replicate.posthoc.fit_focal_temperature:nope", "y: no option and no reason"]


def test_the_page_links_every_behaviour_to_an_existing_section():
    from replicate.protocol import authors_code

    md = authors_code.markdown()
    assert md.count("- *Shown in*: [") == len(authors_code.behaviours())
    assert "exp_fts.ipynb#the-authors-focal-link-and-its-overflow-guard" in md
    assert "PROTOCOL.md" not in md
    table = authors_code.frame(defects=True)
    assert len(table) == len(authors_code.DEFECTS) and "option that reproduces it" in table.columns


# ----------------------------------------------------------------------------- glossary
def _doctree(text: str):
    from docutils.core import publish_doctree

    return publish_doctree(text, settings_overrides={"report_level": 5})


def test_glossary_entries_and_first_use_links():
    from replicate.book import glossary

    from docutils import nodes

    # as Sphinx's glossary directive builds it: an item holds its term lines, then the definition
    names = [("ECE", "expected calibration error"), ("temperature scaling", "TS"), ("focal temperature scaling",)]
    gl, k = nodes.definition_list(), 0
    for group in names:
        terms = []
        for name in group:
            terms.append(nodes.term(name, name, ids=[f"term-{k}"]))
            k += 1
        gl += nodes.definition_list_item("", *terms, nodes.definition("", nodes.paragraph(text="...")))
    entries = glossary.entries_of(gl)
    assert [e.names for e in entries] == [("ECE", "expected calibration error"), ("temperature scaling", "TS"),
                                          ("focal temperature scaling",)]
    page = _doctree("Title\n=====\n\nThe AdaECE and classwise-ECE differ from the ECE; the ECE again.\n\n"
                    "Temperature scaling first, then focal temperature scaling and TS, ``ECE`` in code.\n")
    made = glossary.link_first_uses(page, entries, "../glossary.html")
    refs = [(r.astext(), r["refuri"]) for r in page.findall(lambda n: n.tagname == "reference")]
    assert made == 3 and refs == [("ECE", "../glossary.html#term-0"), ("Temperature scaling", "../glossary.html#term-2"),
                                  ("focal temperature scaling", "../glossary.html#term-4")]
    text = page.astext()
    assert "AdaECE and classwise-ECE differ from the ECE; the ECE again" in text   # nothing lost or doubled


def test_term_pattern_respects_case_and_word_edges():
    from replicate.book import glossary

    pattern, groups = glossary.term_pattern([glossary.Entry(("ECE",), "a"), glossary.Entry(("focal loss",), "b")])
    found = [m.group(0) for m in pattern.finditer("ece, AdaECE, ECE-sweep, |ECE|, Focal loss, focal losses, ECE.")]
    assert found == ["Focal loss", "ECE"]


def _glossary():
    from pathlib import Path

    from replicate.book import glossary

    text = (Path(__file__).resolve().parents[1] / "book" / "glossary.md").read_text()
    found = glossary.markdown_entries(text)
    entries = [glossary.Entry(names, str(i)) for i, (names, _) in enumerate(found)]
    return found, entries, glossary.term_pattern(entries)[0]


def test_glossary_markdown_entries_are_read_as_sphinx_reads_them():
    from replicate.book import glossary

    text = "x\n\n```{glossary}\nECE\nexpected calibration error\n  The error.\n  Binned.\n\nTS\n  Scaling.\n```\n"
    assert glossary.markdown_entries(text) == [(("ECE", "expected calibration error"), "The error. Binned."),
                                               (("TS",), "Scaling.")]
    found, _, _ = _glossary()
    assert len(found) > 60 and all(names and definition for names, definition in found)


def test_every_term_a_verdict_uses_has_a_glossary_entry():
    """Issue #32, item 5: the words of the claims' verdicts and their texts, derived from the code
    that writes them, each have an entry: every verdict of the vocabulary (its own entry or
    named in the entry "verdict"), every metric name the claims' texts use (the book's names and
    every chapter's own METRIC_LABELS), every network of every profile, and the noise model
    the rule text names."""
    import importlib

    from replicate import experiments
    from replicate.claims import vocabulary
    from replicate.comparison import noise
    from replicate.comparison.report import names
    from replicate.profiles import PROFILES

    found, _, pattern = _glossary()
    all_names = {n for names_, _ in found for n in names_}
    verdict_text = next(d for names_, d in found if "verdict" in names_)
    for v in vocabulary.VERDICTS:
        assert v in all_names or v in verdict_text, f"verdict {v!r} has no glossary entry"
    assert vocabulary.INCONCLUSIVE in all_names
    labels = set(names().metrics.values())
    for folder in experiments.CHAPTERS.values():
        for part in ("claims", "report"):
            module = importlib.import_module(f"replicate.experiments.{folder}.{part}")
            labels |= set(getattr(module, "METRIC_LABELS", {}).values())
    plain = {"test error", "accuracy", "T"}        # ordinary words, not terms of the book
    for label in sorted(labels - plain):
        assert pattern.search(label.split(" (")[0]), f"the claims' metric name {label!r} has no glossary entry"
    networks = {m for p in PROFILES.values() for m in (p.model, *p.models, p.text_model)}
    assert {"tiny_cnn", "resnet18", "resnet50", "text_cnn"} <= networks
    for net in sorted(networks):
        assert net in all_names, f"network {net!r} (a profile trains it) has no glossary entry"
    rule = noise.rule_text()
    used = {m.group(0) for m in pattern.finditer(rule)}
    assert "two-level bootstrap" in used and "inconclusive" in used, used


# ----------------------------------------------------------------------------- exercises that teach
def _solutions(path):
    import re

    text = path.read_text()
    return re.findall(r"```\{solution-start\} (\S+)\n(.*?)```\{solution-end\}", text, re.S)


#: Chapters whose solutions keep the former form (the answer last, "**Answer** (...)."): none.
ANSWER_LAST: set = set()


def test_every_solution_opens_with_its_answer_its_code_glues():
    """Issue #32, item 7: a solution states its answer first, in one sentence glued by its
    own code (``**Answer:** {glue:text}`KEY`.``), then the evidence."""
    import re

    from replicate import runner

    found = 0
    for chapter in runner.toc_chapters():
        for label, body in _solutions(chapter.source):
            found += 1
            lines = [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
            if chapter.name in ANSWER_LAST:
                m = re.fullmatch(r"\*\*Answer\*\* \(\{glue:text\}`(\w+)`\)\.", lines[-1])
                assert m, f"{chapter.name}, {label}: the solution ends with {lines[-1]!r}, not with its answer"
            else:
                first = lines[lines.index("```") + 1]        # after the directive's options
                m = re.fullmatch(r"\*\*Answer:\*\* \{glue:text\}`(\w+)`\.", first)
                assert m, f"{chapter.name}, {label}: the solution opens with {first!r}, not with its answer"
                assert sum("{glue:text}`" + m.group(1) + "`" in ln for ln in lines) == 1, (chapter.name, label)
            assert f'glue("{m.group(1)}", answer, display=False)' in body, f"{chapter.name}, {label}"
    assert found >= 40


def test_every_chapter_opens_with_objectives_and_prerequisites():
    import re

    from replicate import runner

    for chapter in runner.toc_chapters():
        text = chapter.source.read_text()
        head = text.split("```{code-cell}", 1)[0]
        box = re.search(r":::\{admonition\} Learning objectives and prerequisites\n(.*?)\n:::", head, re.S)
        assert box, f"{chapter.name}: no objectives box before the first code cell"
        items = [ln for ln in box.group(1).splitlines() if ln.startswith("- ")]
        assert 2 <= len(items) <= 4, f"{chapter.name}: {len(items)} objectives"
        assert "**Prerequisites**:" in box.group(1), chapter.name


def test_every_experiment_chapter_glues_its_scale_box_at_the_top():
    from replicate import runner

    for chapter in runner.toc_chapters():
        if not chapter.name.startswith("exp_"):
            continue
        text = chapter.source.read_text()
        head = text.split("```{code-cell}", 1)[0]
        assert "```{glue:md} scale_box\n:format: myst\n```" in head, chapter.name
        assert 'glue("scale_box", report["scale_box"], display=False)' in text, chapter.name   # the report's


def test_no_chapter_sends_readers_to_a_file_outside_the_book():
    from replicate import runner

    for chapter in runner.toc_chapters():
        assert "PROTOCOL.md" not in chapter.source.read_text(), chapter.name


# ----------------------------------------------------------------------------- Prop. 5 search
def test_near_tie_points_are_on_the_simplex_with_tied_tops_below_the_threshold():
    from replicate.theory.fts import prop5_search

    q = prop5_search.near_ties(5, 2000, gamma=1.0, rng=0)
    assert len(q) > 500
    assert np.allclose(q.sum(axis=1), 1.0) and (q > 0).all()
    s = np.sort(q, axis=1)[:, ::-1]
    assert (s[:, 0] < prop5_search.confidence_raising_threshold(1.0)).all()
    assert abs(prop5_search.confidence_raising_threshold(1.0) - np.exp(-1)) < 1e-12        # 1/e at gamma = 1
    assert (s[:, 0] - s[:, 1] <= 1e-2 + 1e-12).all()           # the runner-up sits within eps of the top


def test_the_targeted_search_finds_a_smaller_failing_k_than_uniform_points():
    import mpmath

    from replicate.theory.fts import prop5_search

    res = prop5_search.smallest_gain(range(3, 6), n=20_000, gamma=1.0, rng=0).set_index("classes")
    assert res.loc[3, "near-tie points"] > 0 and res.loc[3, "uniform points"] > 0
    assert res.loc[4, "near-tie points"] < 0 <= res.loc[4, "uniform points"]
    # the counterexample, evaluated from the map's formula in 50-digit arithmetic
    mpmath.mp.dps = 50
    q = [mpmath.mpf(v) for v in res.loc[4, "worst near-tie point"]]
    q = [v / sum(q) for v in q]
    w = [1 / ((1 - v) * (mpmath.log(v) / (1 - v) - 1 / v)) for v in q]   # 1 / f'(q), gamma = 1
    top = max(range(4), key=lambda i: q[i])
    assert w[top] / sum(w) - q[top] < 0


def test_every_chapter_applies_the_book_display():
    """use_style sets the table display (full cells) and the figure check: every chapter calls it."""
    from replicate import runner

    for chapter in runner.toc_chapters():
        assert "rp.plots.use_style()" in chapter.source.read_text(), chapter.name


def test_long_titles_wrap_instead_of_widening_the_image():
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    ax.plot([1, 2])
    ax.set_title("Figure F: closed-loop toy, A_train = 0.99, A_val = 0.90 (Eq. 4 with λ; profile smoke)")
    fig.suptitle("a suptitle that is much longer than the figure is wide, so that it would widen the image")
    assert legibility.image_width_px(fig) > legibility.COLUMN_PX
    assert legibility.wrap_figure_texts(fig) == 2
    assert legibility.image_width_px(fig) <= 6.0 * fig.dpi + 2 * legibility.PAD_INCHES * fig.dpi + 1


def test_every_behaviour_links_its_source_or_says_it_was_not_located():
    """Issue #32, item 4: every statement about the authors' code links the repository, the
    commit (40 hex digits) and the lines of the file where the behaviour lives, or says
    explicitly that the code was not located in a public repository."""
    import re

    from replicate.protocol import authors_code

    form = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/[^#\s]+#L\d+(-L\d+)?")
    assert authors_code.check_sources() == []
    for b in authors_code.behaviours():
        assert b.source or authors_code.NOT_LOCATED in b.source_note, b.topic
        for url in b.source:
            assert form.fullmatch(url), (b.topic, url)
    assert set(authors_code.SOURCES) <= {b.topic for b in authors_code.behaviours()}   # no stray topic
    md = authors_code.markdown()
    assert md.count("- *Source*: ") == len(authors_code.behaviours())
    assert md.count("](https://github.com/") == sum(len(b.source) for b in authors_code.behaviours())
    assert "source" in authors_code.frame().columns


def test_check_sources_catches_a_missing_or_malformed_source(monkeypatch):
    from replicate.protocol import authors_code

    bare = authors_code.Behaviour("x", "p", "w", "f", "b", why_not="n", source_note="read somewhere")
    moving = authors_code.Behaviour("y", "p", "w", "f", "b", why_not="n",
                                    source=("https://github.com/o/r/blob/main/f.py#L1-L2",))
    monkeypatch.setattr(authors_code, "DEFECTS", (*authors_code.DEFECTS, bare, moving))
    assert authors_code.check_sources() == ["x: no source and no note that it was not located",
                                            "y: https://github.com/o/r/blob/main/f.py#L1-L2"]
    assert authors_code.github("o/r", "a" * 40, "a b.py", 3) == f"https://github.com/o/r/blob/{'a' * 40}/a%20b.py#L3"


def test_the_profile_table_shows_setting_names_as_code_and_no_index():
    from replicate import profiles

    html = profiles.describe_table("smoke", "cpu").to_html()
    assert "<code>n_train</code>" in html
    assert notebook_checks.table_problems(html) == []
