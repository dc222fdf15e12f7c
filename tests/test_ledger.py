"""The claims ledger's count tables split by evidence and its filterable table (in headless
Chromium: a click on a filter leaves exactly the matching rows; without JavaScript the whole
table shows)."""
from __future__ import annotations

import shutil

import pandas as pd
import pytest

from replicate import claims as cl
from replicate.book import check as htmlcheck
from replicate.claims import ledger

BROWSER = htmlcheck.unavailable_reason()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=f"no headless browser: {BROWSER}")


@pytest.fixture(scope="module")
def frame():
    """A small ledger: theory, the paper's tables and our runs at cpu and gpu, two papers."""
    th = cl.ClaimLog("mukhoti2020", "theory_focal_loss", "theory", "Claims")
    th.add("t1", "Prop. 2", "how", "r", True)
    th.add("t2", "Prop. 2", "how", "r", False)
    ex = cl.ClaimLog("mukhoti2020", "exp_focal_loss", "experiment", "Verdict")
    ex.add("e1", "Sec. 6", "how", "r", True, evidence="paper: Table 1")
    ex.add("e1", "Sec. 6", "how", "r", cl.inconclusive("~145 seeds"),
           evidence="ours: cpu, cifar10, tiny_cnn, seeds 1, 2, 3")
    ex.add("e2", "Sec. 6", "how", "r", False, evidence="ours: cpu, cifar10, tiny_cnn, seed 1")
    ex.add("e2", "Sec. 6", "how", "r", True, evidence="ours (AdaFocal Eq. 4): ours: gpu, cifar10, resnet50, seed 1")
    ex2 = cl.ClaimLog("tao2023", "exp_dual_focal", "experiment", list(cl.ledger.section_anchors("exp_dual_focal"))[1])
    ex2.add("d1", "Table 1", "how", "r", False, evidence="paper: Tao et al. (2023), Tables 1-13 as printed")
    return pd.concat([th.frame(), ex.frame(), ex2.frame()], ignore_index=True)


def test_evidence_types_read_the_profile_of_our_runs(frame):
    assert list(ledger.evidence_types(frame).astype(str)) == [
        "theory", "theory", "the paper's tables", "our runs (cpu)", "our runs (cpu)", "our runs (gpu)",
        "the paper's tables"]
    with pytest.raises(ValueError, match="must start with 'ours' or 'paper'"):
        ledger.evidence_type("experiment", "somewhere")
    with pytest.raises(ValueError, match="names profile 'huge'"):
        ledger.evidence_type("experiment", "ours: huge, cifar10")


def test_counts_by_evidence_add_up_to_the_plain_counts(frame):
    c = ledger.counts_by_evidence(frame)
    assert list(c.index) == ["theory", "the paper's tables", "our runs (cpu)", "our runs (gpu)", "all"]
    plain = cl.counts_frame(frame)
    assert (c.loc["all"] == plain.iloc[0]).all()
    assert c.loc["our runs (cpu)", "inconclusive"] == 1 and c.loc["our runs (cpu)", "fails"] == 1
    assert c.loc["the paper's tables", "total"] == 2
    per = ledger.counts_by_evidence(frame, by_paper=True)
    assert per["total"].sum() == len(frame) and ("Tao et al. (2023)", "the paper's tables") in per.index
    assert ledger.split_summary(frame).startswith("theory: 2 verdicts (1 holds, 1 fails); the paper's tables: 2")


def test_ledger_table_html_shows_every_row_links_each_section_and_hides_the_filters_without_script(frame):
    html = ledger.ledger_table(frame, caption="c").html
    body = html[html.index("<tbody>"):]
    assert body.count("<tr") == len(frame)
    assert '<form class="replicate-filters" data-table="claims-ledger-table" hidden>' in html
    assert 'data-filter-verdict="inconclusive"' in html and 'data-filter-evidence-type="our runs (gpu)"' in html
    assert 'href="exp_focal_loss.html#verdict"' in html
    assert '<option value="inconclusive">inconclusive (1)</option>' in html
    # the verdict options follow the vocabulary's order, the papers the registry's
    assert html.index('value="holds"') < html.index('value="fails"') < html.index('value="inconclusive"')


def test_sortable_table_refuses_bad_filters_and_links():
    from replicate.book.tables import sortable_table

    cells = pd.DataFrame({"a": ["x", "y"]})
    with pytest.raises(ValueError, match="filters must have the index of cells"):
        sortable_table(cells, filters=pd.DataFrame({"f": [1]}))
    with pytest.raises(ValueError, match="distinct names"):
        sortable_table(cells, filters=pd.DataFrame([[1, 2], [3, 4]], columns=["a b", "a-b"]))
    with pytest.raises(ValueError, match="links"):
        sortable_table(cells, links=pd.DataFrame({"b": ["u", "v"]}))


def _site(tmp_path, body: str):
    from replicate.book.tables import SCRIPTS, STATIC_DIR, STYLESHEETS

    shutil.copytree(STATIC_DIR, tmp_path / "_static")
    head = "".join(f'<script src="_static/{s}"></script>' for s in SCRIPTS) + \
        "".join(f'<link rel="stylesheet" href="_static/{c}">' for c in STYLESHEETS)
    (tmp_path / "index.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'>{head}</head>"
                                         f"<body>{body}</body></html>")


@needs_browser
def test_a_filter_clicked_in_chromium_leaves_the_matching_rows_and_sorting_keeps_them(frame, tmp_path):
    from playwright.sync_api import sync_playwright

    # a section with the table's own id before it, as a book page may have: the filter finds its table
    _site(tmp_path, '<section id="claims-ledger-table"><h1>Claims ledger</h1></section>'
          + ledger.ledger_table(frame).html)
    with htmlcheck._Server(tmp_path) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=htmlcheck.find_chromium(), headless=True,
                                     args=list(htmlcheck.LAUNCH_ARGS))
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.origin}/index.html")
        visible = lambda: page.eval_on_selector_all(                                     # noqa: E731
            "#claims-ledger-table tbody tr",
            "rows => rows.filter(r => r.offsetParent !== null).map(r => r.cells[1].textContent)")
        assert page.is_visible("form.replicate-filters") and len(visible()) == len(frame)
        page.select_option("select[data-filter=verdict]", "fails")
        assert sorted(visible()) == sorted(frame[frame.verdict == "fails"].claim)
        assert page.text_content(".replicate-filter-count") == f"3 of {len(frame)} rows"
        page.select_option("select[data-filter=evidence-type]", "our runs (cpu)")
        assert visible() == ["e2"]
        page.select_option("select[data-filter=verdict]", "")
        assert sorted(visible()) == ["e1", "e2"]
        page.click("#claims-ledger-table thead th:nth-child(2)")            # sort by claim: the filter stays
        page.wait_for_function("document.querySelector('#claims-ledger-table thead th[aria-sort]') !== null")
        page.wait_for_timeout(100)
        assert sorted(visible()) == ["e1", "e2"]
        page.click("form.replicate-filters button[type=reset]")
        page.wait_for_function(f"document.querySelector('.replicate-filter-count').textContent === "
                               f"'{len(frame)} of {len(frame)} rows'")
        assert len(visible()) == len(frame) and errors == []
        nojs = browser.new_context(java_script_enabled=False).new_page()
        nojs.goto(f"{server.origin}/index.html")
        assert not nojs.is_visible("form.replicate-filters")
        assert nojs.eval_on_selector_all("#claims-ledger-table tbody tr",
                                         "rows => rows.filter(r => r.offsetParent !== null).length") == len(frame)
        browser.close()


@needs_browser
def test_a_filtered_table_page_passes_the_html_check(tmp_path):
    from replicate.book.tables import sortable_table

    cells = pd.DataFrame({"method": list("abc"), "verdict": ["holds", "fails", "holds"]})
    _site(tmp_path, sortable_table(cells, filters=cells[["verdict"]], table_id="t").html)
    assert htmlcheck.check_book(tmp_path) == []


def test_the_slugs_the_ledger_links_to_are_ids_of_the_built_page(tmp_path, monkeypatch):
    """A chapter's headings (unicode, an apostrophe, punctuation, math, a repeat) built by
    Sphinx with MyST and replicate.book.html: every anchor ledger.link computes is an id of
    the HTML page (the ledger's raw-HTML links land on their sections)."""
    import re

    from sphinx.cmd.build import build_main

    from replicate import config

    text = ("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n---\n\n"
            "# Top\n\n## Prop. 2: the Lambert-W γ*\n\n## Where FLSD-53's thresholds come from\n\n"
            "## Lemma A.3, reconstructed\n\n## The $\\gamma$ gap\n\n### Claims\n\n## Claims\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "slugtest.md").write_text(text)
    monkeypatch.setattr(config, "repo_root", lambda: tmp_path)
    anchors = ledger.section_anchors.__wrapped__("slugtest")
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "replicate.book.html"]\nmyst_heading_anchors = 3\n'
                                 'myst_enable_extensions = ["dollarmath"]\n')
    (src / "index.md").write_text(text.split("---\n", 2)[2])
    assert build_main(["-q", "-b", "html", str(src), str(tmp_path / "out")]) == 0
    ids = set(re.findall(r'id="([^"]+)"', (tmp_path / "out" / "index.html").read_text()))
    assert "prop-2-the-lambert-w-γ" in anchors.values() and "the--gap" in anchors.values()
    assert set(anchors.values()) <= ids, set(anchors.values()) - ids
