"""Issue #32, item 2: wide and long sortable tables (the claims ledger, the leaderboard) scroll
in a box of their own inside the column, with the header row and first column sticky, a
scroll bar in reach, and a filter form with a text search box above them."""
from __future__ import annotations

import shutil

import pandas as pd
import pytest

from replicate.book import check as htmlcheck
from replicate.book.tables import SCRIPTS, STATIC_DIR, STYLESHEETS, sortable_table

BROWSER = htmlcheck.unavailable_reason()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=f"HTML check cannot run: {BROWSER}")

N = 120


def _frame():
    return pd.DataFrame({
        "paper": [f"Paper {i % 3}" for i in range(N)],
        "where": [f"Sec. {i}" for i in range(N)],
        "claim": [f"claim {i}: focal loss lowers the test ECE of network {i} " + "x" * (i % 7) for i in range(N)],
        "evidence": ["our runs, profile cpu, seeds 0-2, CIFAR-10, ResNet-18, every row of Table 1"] * N,
        "verdict": ["holds" if i % 4 else "fails" for i in range(N)],
        "note": ["a note that is long enough to wrap over two lines of the column at least"] * N})


def _table():
    f = _frame()
    return sortable_table(f, caption="c", text_columns=tuple(f.columns), filters=f[["paper", "verdict"]],
                          wrap=True, table_id="ledger")


def test_columns_first_puts_the_named_columns_first_and_keeps_the_rest_and_the_filters():
    table = _table().columns_first("claim", "evidence", "verdict")
    assert list(table.frame.columns) == ["claim", "evidence", "verdict", "paper", "where", "note"]
    head = table.html[table.html.index("<thead>"):table.html.index("</thead>")]
    assert [head.index(f">{c}<") for c in table.frame.columns] == sorted(head.index(f">{c}<") for c in table.frame.columns)
    assert 'data-filter-verdict="fails"' in table.html and "data-search" in table.html
    with pytest.raises(ValueError, match="not columns"):
        table.columns_first("nope")


def _site(tmp_path, body):
    shutil.copytree(STATIC_DIR, tmp_path / "_static")
    head = "".join(f'<script src="_static/{s}"></script>' for s in SCRIPTS) + \
        "".join(f'<link rel="stylesheet" href="_static/{c}">' for c in STYLESHEETS)
    # the book's desktop layout at 1280 px: a 752-px article from 256 px, the side panel from 1008 px
    (tmp_path / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'>{head}</head><body style='margin: 0'>"
        "<article class='bd-article' style='margin-left: 256px; width: 720px; padding: 0 16px'>"
        f"<h1>Ledger</h1>{body}</article>"
        "<div class='bd-sidebar-secondary' style='position: fixed; top: 0; left: 1008px; width: 272px'>"
        "<p>Contents</p></div></body></html>")


@needs_browser
def test_a_wide_long_filtered_table_passes_the_check_scrolls_in_its_box_and_searches(tmp_path):
    from playwright.sync_api import sync_playwright

    _site(tmp_path, _table().columns_first("claim", "evidence", "verdict").html)
    assert htmlcheck.check_book(tmp_path) == []
    with htmlcheck._Server(tmp_path) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=htmlcheck.find_chromium(), headless=True,
                                     args=list(htmlcheck.LAUNCH_ARGS))
        page = browser.new_page(viewport=htmlcheck.VIEWPORT)
        page.goto(f"{server.origin}/index.html")
        box = page.eval_on_selector("#ledger", "t => { const r = t.getBoundingClientRect(); return "
                                    "{right: r.right, height: r.height, sw: t.scrollWidth, cw: t.clientWidth}; }")
        assert box["right"] <= 1008 and box["sw"] > box["cw"]          # scrolls sideways, left of the panel
        assert box["height"] <= 0.8 * htmlcheck.VIEWPORT["height"] + 1   # its scroll bar within one window
        form_bottom = page.eval_on_selector("form.replicate-filters", "f => f.getBoundingClientRect().bottom")
        assert form_bottom <= page.eval_on_selector("#ledger", "t => t.getBoundingClientRect().top")
        # scrolled sideways and down, the first column and the header row stay in view
        page.eval_on_selector("#ledger", "t => { t.scrollLeft = 300; t.scrollTop = 400; }")
        page.wait_for_timeout(50)
        first = page.eval_on_selector("#ledger tbody tr:nth-child(20) td:first-child",
                                      "c => c.getBoundingClientRect().left")
        head = page.eval_on_selector("#ledger thead th:nth-child(2)", "c => c.getBoundingClientRect().top")
        table = page.eval_on_selector("#ledger", "t => t.getBoundingClientRect()")
        assert abs(first - table["left"]) < 1 and abs(head - table["top"]) < 1
        visible = lambda: page.eval_on_selector_all(                                     # noqa: E731
            "#ledger tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.cells[0].textContent)")
        frame = _frame()
        text = frame.astype(str).agg("".join, axis=1).str.lower()         # a row's text, as the browser joins it
        holding = lambda query: frame.claim[[all(w in t for w in query.lower().split()) for t in text]]  # noqa: E731
        page.fill("input[data-search]", "11: ECE ")                       # every word, any case
        assert visible() == list(holding("11: ECE")) == [frame.claim[11], frame.claim[111]]
        page.select_option("select[data-filter=verdict]", "fails")
        assert visible() == []                                            # claim 11 holds
        page.fill("input[data-search]", "network 1")
        fails = holding("network 1")[frame.verdict == "fails"]
        assert visible() == list(fails) and len(fails) > 5
        assert page.text_content(".replicate-filter-count") == f"{len(visible())} of {N} rows"
        browser.close()


@needs_browser
def test_the_check_reports_the_same_table_without_its_box(tmp_path):
    html = _table().html.replace("max-height:80vh;", "").replace("overflow:auto;", "")
    _site(tmp_path, html)
    kinds = {p.kind for p in htmlcheck.check_book(tmp_path)}
    assert "overflow" in kinds


def _output_table_site(tmp_path, stylesheet: bool):
    from replicate.book.layout import STYLESHEET, mark_tables

    rows = "".join(f"<tr><td>method {i}</td>" + "".join(f"<td>{i * j / 7:.2f}</td>" for j in range(14)) + "</tr>"
                   for i in range(150))
    head = "<thead><tr><th>method</th>" + "".join(f"<th>metric number {j}</th>" for j in range(14)) + "</tr></thead>"
    body = mark_tables(f'<div class="cell_output"><div class="output text_html"><table>{head}<tbody>{rows}</tbody>'
                       "</table></div></div>")
    if stylesheet:
        shutil.copytree(STATIC_DIR, tmp_path / "_static")
    link = f'<link rel="stylesheet" href="_static/{STYLESHEET}">' if stylesheet else ""
    (tmp_path / "index.html").write_text(
        f"<!doctype html><html><head><meta charset='utf-8'>{link}</head><body style='margin: 0'>"
        "<div class='bd-content'><article class='bd-article' style='margin-left: 256px; width: 720px'>"
        f"{body}</article></div><div class='bd-sidebar-secondary' style='position: fixed; top: 0; left: 1008px; "
        "width: 272px'><p>Contents</p></div></body></html>")


@needs_browser
@pytest.mark.parametrize("stylesheet", [True, False])
def test_a_wide_long_output_table_scrolls_in_a_box_of_one_window_only_with_the_books_style(tmp_path, stylesheet):
    """The book's tables.css gives a cell output's box overflow and a height of at most 80 % of
    the window; without it the same table runs under the side panel."""
    _output_table_site(tmp_path, stylesheet)
    problems = htmlcheck.check_book(tmp_path)
    if stylesheet:
        assert problems == []
    else:
        assert [p.kind for p in problems] == ["overflow"] and "under the side panel" in problems[0].detail
