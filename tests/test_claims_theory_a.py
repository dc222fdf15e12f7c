"""The claims of the focal-loss and AdaFocal theory chapters (Mukhoti et al. 2020, Ghosh et al. 2022).

Both builders run at the smoke profile through the registry; every row must carry a verdict
of the vocabulary and name a heading of its chapter. The verdicts the review found wrong,
and the checks it found missing, are asserted row by row (each number behind them is
checked against an independent computation in test_theory_focal_loss.py and
test_theory_adafocal.py).
"""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from replicate import claims as cl
from replicate.theory.adafocal import claims as ac
from replicate.theory.adafocal import figures as af
from replicate.theory.focal_loss import claims as fc
from replicate.theory.focal_loss import figures as ff
from replicate.theory.curve_shape import curve_shape, is_unimodal
from replicate.theory.focal_loss.gradient import focal_gradient_factor
from replicate.theory.report import TheoryReport, plain

matplotlib.use("Agg")
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MINE = {("mukhoti2020", "theory_focal_loss"): fc, ("ghosh2022", "theory_adafocal"): ac}


@pytest.fixture(scope="module")
def reports():
    return {"theory_focal_loss": fc.report("smoke"), "theory_adafocal": ac.report("smoke")}


def _headings(chapter: str) -> set[str]:
    text = (NOTEBOOKS / f"{chapter}.md").read_text()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # no code
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+)$", text, flags=re.M)}


def _row(rep, key):
    """The row whose verdict the report recorded as number v_<key> (rows are added in order)."""
    keys = [k[2:] for k in rep.numbers if k.startswith("v_")]
    return rep.log.rows[keys.index(key)]


# ----------------------------------------------------------------------------- the registry
def test_both_builders_are_registered_and_run_at_smoke(reports):
    mine = [s for s in cl.SOURCES if (s.paper, s.chapter) in MINE]
    assert {(s.paper, s.chapter) for s in mine} == set(MINE) and all(s.kind == "theory" for s in mine)
    for s in mine:
        log = cl.build(s, "smoke")  # checks paper, chapter and kind of the returned log
        assert len(log) == len(reports[s.chapter].log) >= 12
        assert set(log.frame().verdict) <= set(cl.VERDICTS)
        assert log.summary().startswith(f"{len(log)} claims: ")


@pytest.mark.parametrize("chapter", ["theory_focal_loss", "theory_adafocal"])
def test_every_row_names_a_heading_of_its_chapter(reports, chapter):
    rep, heads = reports[chapter], _headings(chapter)
    assert {r["section"] for r in rep.log.rows} <= heads
    assert set(rep.sections.values()) <= heads
    # every heading that decides claims shows them: the chapter calls rep.show(<key>) below it
    text = (NOTEBOOKS / f"{chapter}.md").read_text()
    assert all(f'rep.show("{key}")' in text for key in rep.sections)
    # every verdict the prose glues exists
    for key in set(re.findall(r"\{glue:text\}`(v_\w+)`", text)):
        assert key in rep.numbers


@pytest.mark.parametrize("chapter", ["theory_focal_loss", "theory_adafocal"])
def test_every_glued_number_is_produced(reports, chapter):
    text = (NOTEBOOKS / f"{chapter}.md").read_text()
    # exercise solutions glue their own answers from their own code (issue #24): not the report's
    text = re.sub(r"```\{solution-start\}.*?```\{solution-end\}", "", text, flags=re.S)
    prose = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    used = set(re.findall(r"\{glue:text\}`(\w+)", prose))
    assert used <= set(reports[chapter].numbers) | {"summary", "profile"}


def test_chapter_cells_are_short_and_narrow():
    for chapter in ("theory_focal_loss", "theory_adafocal"):
        text = (NOTEBOOKS / f"{chapter}.md").read_text()
        for cell in re.findall(r"```\{code-cell\} ipython3\n(.*?)```", text, flags=re.S):
            lines = cell.rstrip("\n").split("\n")
            assert len(lines) <= 12 and max(map(len, lines)) <= 100, cell


# ----------------------------------------------------------------------------- the fixes
def test_unimodality_is_read_past_flat_floating_point_steps(reports):
    # the old check: sign of the first difference on a grid starting at p = 1e-300
    pin = np.r_[1e-300, 1e-100, 1e-30, 1e-10, np.linspace(0, 1, 201)[1:-1], 1 - 1e-9]
    g = focal_gradient_factor(pin, 3.0)
    assert np.diff(g)[0] == 0  # g rounds to 1 there: the old check saw "not rising" ...
    assert is_unimodal(g)  # ... the flat-tolerant one reads rises, one maximum, falls
    row = _row(reports["theory_focal_loss"], "unimodal")
    assert row["verdict"] == "holds" and reports["theory_focal_loss"].numbers["n_flat"] > 0


def test_curve_shape_on_known_sequences():
    assert curve_shape([1, 1, 1, 2, 3, 3, 2, 0])["single_maximum"]
    assert not curve_shape([1, 2, 1, 2, 1])["single_maximum"] and curve_shape([1, 2, 1, 2, 1])["maxima"] == 2
    assert not curve_shape([3, 2, 1])["rises"] and curve_shape([3, 2, 1])["falls"]
    assert curve_shape([0, 0, 0])["steps"] == 0 and not curve_shape([0, 0, 0])["single_maximum"]
    # noise below `flat` is ignored, above it counts
    wobble = [1, 2, 3, 3 - 1e-15, 3, 2, 1]  # a dip of one ulp at the top
    assert not is_unimodal(wobble) and is_unimodal(wobble, flat=1e-12)
    with pytest.raises(ValueError, match="y must"):
        curve_shape([1.0])
    with pytest.raises(ValueError, match="flat"):
        curve_shape([1, 2], flat=-1)


def test_multiclass_over_confidence_is_beyond_the_paper(reports):
    row = _row(reports["theory_focal_loss"], "many")
    assert (row["verdict"], row["check"]) == ("beyond the paper", "holds")


@pytest.mark.parametrize("key, verdict", [
    ("w0", "fails"), ("exists", "holds with conditions"), ("schedule", "fails"),
    ("item2", "holds with conditions"), ("item3", "holds with conditions"), ("prop2", "holds with conditions"),
    ("eq7", "holds"), ("eq7_factor", "holds with conditions"), ("slope_reading", "depends on reading"),
    ("eq10", "holds"), ("blowup", "depends on reading"), ("ce90", "fails"), ("fl_lower", "holds"),
    ("all_params", "beyond the paper"), ("kl_lt1", "beyond the paper"),
])
def test_focal_verdicts(reports, key, verdict):
    assert _row(reports["theory_focal_loss"], key)["verdict"] == verdict


def test_focal_conditions_are_stated(reports):
    rep = reports["theory_focal_loss"]
    assert "p0 < 1/2" in _row(rep, "exists")["note"] and "p0 < 1/2" in _row(rep, "prop2")["note"]
    assert "γ > 2" in _row(rep, "eq7_factor")["note"]
    assert "slope itself: holds with conditions (γ ≤ 1)" in _row(rep, "slope_reading")["note"]
    assert "growing without bound: fails" in _row(rep, "blowup")["note"]


@pytest.mark.parametrize("key, verdict", [
    ("footnote", "holds with conditions"), ("not_always", "holds"), ("practice", "not tested"),
    ("settle", "holds with conditions"), ("code_switch", "beyond the paper"), ("bound", "holds"),
])
def test_adafocal_verdicts(reports, key, verdict):
    assert _row(reports["theory_adafocal"], key)["verdict"] == verdict


def test_footnote_row_says_for_which_gamma(reports):
    rep = reports["theory_adafocal"]
    row = _row(rep, "footnote")
    assert row["note"].startswith(f"γ ≥ {rep.numbers['gamma_thr025']:.2f}")
    assert rep.numbers["gamma_thr02"] == pytest.approx(1.996, abs=1e-3)  # mpmath: test_theory_focal_loss.py


def test_builders_refuse_unknown_profiles():
    for mod in (fc, ac):
        with pytest.raises(ValueError, match="profile must be one of"):
            mod.report("laptop")


# ----------------------------------------------------------------------------- report and figures
def test_theory_report_numbers_glue_and_show(monkeypatch, reports):
    rep = TheoryReport("smoke", cl.ClaimLog("ghosh2022", "theory_adafocal"), sections={"a": "A"})
    rep.put(x=np.float64(0.5), n=np.int64(3), s="w")
    assert rep.numbers == {"x": 0.5, "n": 3, "s": "w"} and type(rep.numbers["x"]) is float
    with pytest.raises(ValueError, match="already set"):
        rep.put(x=1.0)
    with pytest.raises(ValueError, match="scalar"):
        rep.put(arr=np.ones(2))
    assert rep.claim("k", "c", "w", "h", "r", cl.check(False)).verdict == "fails" and rep.numbers["v_k"] == "fails"
    assert plain({"a": [np.float32(1.5)], "b": np.array(2.0)}) == {"a": [1.5], "b": 2.0}
    glued = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda k, v, display: glued.setdefault(k, v))
    rep.glue()
    assert glued["summary"] == "1 claim: 1 fails" and glued["profile"] == "smoke" and glued["v_k"] == "fails"
    with pytest.raises(ValueError, match="section must be one of a"):
        rep.show("b")
    shown = reports["theory_adafocal"].show("loop").data
    assert list(shown.claim) == [_row(reports["theory_adafocal"], "settle")["claim"]]


def test_figures_draw_from_the_reports(reports):
    import matplotlib.pyplot as plt

    f, a = reports["theory_focal_loss"], reports["theory_adafocal"]
    figs = [ff.prop1_figure(f), ff.figure_4a(201), ff.lambert_figure(f), ff.schedule_figure(201), ff.figure_7(f),
            ff.many_classes_figure(f), ff.figure_5(f), ff.figure_6(f), af.figure_3a(a), af.push_figure(a),
            af.shrink_figure(a), af.dynamics_figure(a), af.closed_loop_figure(a)]
    assert [len(fig.axes) for fig in figs] == [1, 2, 2, 1, 1, 1, 2, 3, 1, 1, 2, 8, 1]
    assert len(figs[4].axes[0].lines) == len(f.data["fig7"]["q"])
    plt.close("all")


def test_figure_c_zooms_only_on_what_it_can_say_it_leaves_out():
    a = np.linspace(0.01, 0.99, 99)
    bump = {1: 0.05 * np.sin(np.pi * a / 0.3) * (a < 0.3) - 0.5 * (a >= 0.3) * (a - 0.3)}
    x_hi, reason = ff.many_classes_zoom(a, bump)
    assert x_hi == pytest.approx(0.4)                     # 1.25 x the last positive a (0.29), up to a 0.05 step
    assert "over-confident up to a = 0.290" in reason and "down to -0.34" in reason
    late = {1: bump[1], 2: np.where(a > 0.9, 0.01, -0.1)}  # positive again beyond the view: no zoom
    assert ff.many_classes_zoom(a, late) is None
    assert ff.many_classes_zoom(a, {1: -np.ones_like(a)}) is None   # never positive: nothing to zoom on
