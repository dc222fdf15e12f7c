"""The claims of the Dual Focal Loss, FCL and FTS theory chapters through the registry.

Every registered builder runs at the smoke profile and returns rows in the book's verdict
vocabulary whose sections are headings of the chapter that shows them; the verdicts the
review corrected are pinned to their computed reasons.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from replicate import claims as cl

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("tao2023", "liang2024", "komisarenko2024")


def _headings(chapter: str) -> set[str]:
    text = (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)           # headings outside code cells
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+)$", text, flags=re.M)}


@pytest.fixture(scope="module")
def logs():
    return {s.paper: cl.build(s, "smoke") for p in PAPERS for s in cl.sources(paper=p, kind="theory")}


def test_each_paper_has_one_theory_source():
    assert [len(cl.sources(paper=p, kind="theory")) for p in PAPERS] == [1, 1, 1]


@pytest.mark.parametrize("paper", PAPERS)
def test_rows_use_the_vocabulary_and_link_to_headings(logs, paper):
    log = logs[paper]
    f = log.frame()
    assert len(f) >= 10 and list(f.columns) == cl.COLUMNS
    assert set(f["verdict"]) <= set(cl.VERDICTS)
    assert (f["paper"] == paper).all() and (f["kind"] == "theory").all()
    missing = set(f["section"]) - _headings(log.chapter)
    assert not missing, f"sections that are not headings of {log.chapter}: {missing}"
    for _, r in f.iterrows():                                   # every qualified verdict says why
        if r["verdict"] in ("holds with conditions", "misprinted", "depends on reading", "not tested"):
            assert r["note"]
    assert sum(log.counts().values()) == len(f)


@pytest.mark.parametrize("paper", PAPERS)
def test_builders_refuse_unknown_profiles(paper):
    src = cl.sources(paper=paper, kind="theory")[0]
    with pytest.raises(ValueError, match="profile"):
        src.load()(profile="laptop")


def _row(log, text):
    f = log.frame()
    hit = f[f["claim"].str.contains(text, regex=False)]
    assert len(hit) == 1, f"{text!r} matches {len(hit)} rows"
    return hit.iloc[0]


def test_dual_focal_fixes(logs):
    log = logs["tao2023"]
    eq9 = _row(log, "η_i = (q*_i/φ(q*_i))")
    assert eq9["verdict"] == "fails"                              # no corrected formula of that form
    binary = _row(log, "(K = 2)")
    assert binary["verdict"] == "depends on reading"
    assert "Eq. 3 literally: fails" in binary["note"] and "tie-free infimum: holds" in binary["note"]
    three = _row(log, "(K = 3)")
    assert three["verdict"] == "fails" and "tie-free infimum: fails" in three["note"]
    du1 = _row(log, "du/dv at v = 1")
    assert du1["verdict"] == "misprinted" and "−γ − 2C(1 − γ)" in du1["note"]
    assert _row(log, "du/dv at v = 0")["verdict"] == "holds"
    assert _row(log, "d³u/dv³")["verdict"] == "holds" and _row(log, "d²u/dv²")["verdict"] == "holds"
    assert _row(log, "η-OC (FL, C = 0)")["verdict"] == "holds"
    assert _row(log, "η-OC (DFL, tie-free reading)")["verdict"] == "holds"


def test_fcl_fixes(logs):
    log = logs["liang2024"]
    assert _row(log, "strictly proper, binary")["verdict"] == "holds"
    assert _row(log, "strictly proper, multiclass")["verdict"] == "holds"
    assert _row(log, "multiple minimisers")["verdict"] == "fails"
    assert _row(log, "proper but not strictly proper")["verdict"] == "fails"
    assert _row(log, "FCL is strictly proper for λ > 0")["verdict"] == "fails"
    gap = _row(log, "a small post-processing gap")
    assert gap["verdict"] == "depends on reading"
    assert "as worded): fails" in gap["note"] and "as cited): holds" in gap["note"]
    char = _row(log, "zero exactly when")
    assert (char["verdict"], char["check"]) == ("beyond the paper", "holds")
    assert _row(log, "for any predictor f")["verdict"] == "fails"


def test_fts_fixes(logs):
    log = logs["komisarenko2024"]
    p3 = _row(log, "as the printed inequality orders them")
    assert p3["verdict"] == "misprinted" and "corrected:" in p3["note"]
    assert re.search(r"\d+ γ in \(0, 10\]", p3["how"])           # a dense gamma grid
    p5 = _row(log, "raises the top probability")
    assert p5["verdict"] == "fails" and "(0.33, 0.329, 0.328, 0.013)" in p5["how"]
    for text in ("0.95γ + 0.85", "0.206 and 0.218", "0.76 (γ = 0.5)", "0.64γ + 0.91", "0.47γ + 0.85"):
        assert "tolerance" in _row(log, text)["how"]              # every fit states its tolerance
    assert "differs" not in set(log.frame()["verdict"])


# ------------------------------------------------------------- the chapters are thin
CHAPTERS = {"theory_dual_focal": "dual_focal.claims", "theory_fcl": "fcl.claims", "theory_fts": "fts.claims"}


@pytest.fixture(scope="module")
def reports():
    import importlib

    return {ch: importlib.import_module(f"replicate.theory.{m}").report("smoke") for ch, m in CHAPTERS.items()}


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_glued_number_and_verdict_is_produced(reports, chapter):
    rep = reports[chapter]
    text = (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    code = "".join(re.findall(r"```\{code-cell\}.*?```", text, flags=re.S))
    prose = re.sub(r"```\{code-cell\}.*?```", "", text, flags=re.S)
    glued_in_code = set(re.findall(r'glue\("(\w+)"', code))
    assert set(re.findall(r"\{glue:text\}`(\w+)", prose)) <= set(rep.numbers) | {"summary", "profile"} | glued_in_code
    # every section that decides claims shows them below its prose
    assert set(rep.sections.values()) <= _headings(chapter)
    assert all(f'rep.show("{key}")' in code for key in rep.sections)


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_chapter_cells_are_short_and_narrow(chapter):
    text = (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    for cell in re.findall(r"```\{code-cell\} ipython3\n(.*?)```", text, flags=re.S):
        lines = cell.rstrip("\n").split("\n")
        assert len(lines) <= 12 and max(map(len, lines)) <= 100, cell
