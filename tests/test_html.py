"""The HTML check (replicate.book.check) and the book's Sphinx extension (replicate.book.html).

The browser tests build a small site with one known fault of each kind next to clean
pages and assert that the check reports exactly those faults; they are skipped, with the
reason, where Playwright or Chromium is missing. The real book is checked in
tests/test_book.py, on the book that test builds.
"""
from __future__ import annotations

import json

import pytest
from PIL import Image

from replicate.book import check as htmlcheck, html as book_html

BROWSER = htmlcheck.unavailable_reason()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=f"HTML check cannot run: {BROWSER}")

MATHJAX = '<script defer src="{root}_static/mathjax/tex-mml-chtml.js"></script>'


def _page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A built-book-like folder: clean pages and one page per kind of fault."""
    root = tmp_path_factory.mktemp("site")
    book_html.copy_mathjax(root / "_static")
    (root / "_images").mkdir()
    Image.new("RGB", (4, 4), "red").save(root / "_images" / "dot.png")
    Image.new("RGB", (4, 4), "grey").save(root / "_static" / "minus.png")      # a theme icon
    (root / "sub").mkdir()
    pages = {
        "index.html": '<meta http-equiv="Refresh" content="0; url=sub/good.html" />',
        "sub/good.html": _page(
            '<h1 id="top">Good</h1><p>Inline <span class="math notranslate nohighlight">\\(x^2 + 1\\)</span>.</p>'
            '<div class="math notranslate nohighlight">\\[\\sum_k p_k = 1\\]</div>'
            '<pre>code may show \\( and $$ freely</pre><img src="../_images/dot.png" alt="A red square of four by four pixels">'
            '<a href="#top">up</a> <a href="other.html#sec">other</a> <a href="../_images/dot.png">file</a>'
            '<a href="https://example.org/">external links are not followed</a>',
            MATHJAX.format(root="../")),
        "sub/other.html": _page('<h2 id="sec">Section</h2><a href="good.html">back</a>'),
        "sub/no_mathjax.html": _page('<p>Raw <span class="math">\\(\\alpha\\)</span> and $$\\beta$$ text.</p>'),
        "sub/tex_error.html": _page('<p><span class="math">\\(\\frac{1}\\)</span></p>', MATHJAX.format(root="../")),
        "sub/links.html": _page('<a href="missing.html">a</a> <a href="other.html#nope">b</a> <a href="#nowhere">c</a>'),
        "sub/image.html": _page('<img src="../_images/missing.png" alt="A figure whose file is missing">'),
        "sub/script.html": _page("<script>console.error('bad thing'); throw new TypeError('boom');</script>"),
        "sub/network.html": _page("<p>CDN</p>", '<script src="https://cdn.invalid.example/x.js"></script>'),
        "sub/solutions.html": _page(  # folded as sphinx-togglebutton folds a dropdown, and open
            '<div class="solution dropdown admonition toggle-hidden" id="folded"><p class="admonition-title">'
            'Solution</p><section style="height: 0; visibility: hidden; opacity: 0">hidden</section></div>'
            '<div class="solution admonition" id="open"><p class="admonition-title">Solution</p>'
            '<section>the answer, in plain sight</section></div>'),
        "sub/tables.html": _page(  # a 600-px column: one table of each kind, good and bad
            '<article class="bd-article" style="width: 600px">'
            '<table id="cut"><tr><td>7 of 7 focal va...</td><td>complete</td></tr></table>'
            '<table><tr><td>a cell that ends in a full stop.</td></tr></table>'
            '<div style="overflow-x: auto"><table style="width: 1200px"><tr><td>boxed, wide</td></tr></table></div>'
            '<table style="width: 1100px"><tr><td>unboxed and wide</td></tr></table>'
            '<table style="border-collapse: collapse"><tr><td style="padding: 0">10.82</td>'
            '<td style="padding: 0">6.47</td></tr></table>'
            '<table><tr><td style="padding: 0 8px">4.35</td><td style="padding: 0 8px">1.35 (2.50)</td></tr></table>'
            '</article>'),
        "sub/sidepanel.html": _page(  # a 600-px column, a side panel from 700 px on, two full-width cells
            '<article class="bd-article" style="width: 600px; margin: 0">'
            '<div class="cell tag_full-width"><table style="width: 900px"><tr><td>under the panel</td></tr></table></div>'
            '<div class="cell tag_full-width"><div style="overflow-x: auto; width: 650px">'
            '<table style="width: 900px"><tr><td>scrolls in its box</td></tr></table></div></div>'
            '<table style="width: 500px"><tr><td>narrow</td></tr></table></article>'
            '<div class="bd-sidebar-secondary" style="position: fixed; left: 700px; top: 0; width: 200px">'
            '<p>On this page</p></div>'),
        "sub/tall.html": _page(  # two boxed wide tables; the box of the first is taller than the window
            '<article class="bd-article" style="width: 600px">'
            '<div style="overflow-x: auto"><table style="width: 1200px; height: 2000px"><tr><td>tall box</td>'
            '</tr></table></div>'
            '<div style="overflow: auto; max-height: 300px"><table style="width: 1200px; height: 2000px"><tr>'
            '<td>short box</td></tr></table></div></article>'),
        "sub/overlap.html": _page(
            '<article class="bd-article" style="position: relative; width: 600px; height: 400px">'
            '<p style="position: absolute; top: 0; left: 0; margin: 0">a label drawn here</p>'
            '<p style="position: absolute; top: 6px; left: 40px; margin: 0">a title drawn on it</p>'
            '<p style="position: absolute; top: 100px; left: 0; margin: 0">apart</p>'
            '<p style="position: absolute; top: 100px; left: 200px; margin: 0">from each other</p>'
            '<div style="position: absolute; top: 200px; left: 0; width: 100px; height: 20px; overflow: hidden">'
            '<span style="display: block; margin-top: 60px">clipped away</span></div>'
            '<p style="position: absolute; top: 262px; left: 0; margin: 0">under the clipped text</p>'
            '</article>'),
        "sub/alt.html": _page(
            '<article class="bd-article">'
            '<img src="../_images/dot.png">'
            '<img src="../_images/dot.png" alt="../_images/dot.png">'
            '<img src="../_images/dot.png" alt="&lt;Figure size 640x480 with 1 Axes&gt;">'
            '<img src="../_images/dot.png" alt="plot">'
            '<img src="../_images/dot.png" alt="">'
            '<img src="../_images/dot.png" alt="" role="presentation">'
            '<img src="../_static/minus.png" alt="-" class="toggler">'
            '<img src="../_images/dot.png" alt="Test ECE against the epoch, one line per loss">'
            '</article>'),
        "_static/ignored.html": _page('<a href="nowhere.html">support folders are not pages</a>'),
    }
    for rel, text in pages.items():
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def problems(site):
    if BROWSER is not None:
        pytest.skip(f"HTML check cannot run: {BROWSER}")
    return htmlcheck.check_book(site)


def _on(problems, page, kind=None):
    return [p for p in problems if p.page == page and (kind is None or p.kind == kind)]


# ------------------------------------------------------------------ no browser needed
def test_pages_of_lists_html_pages_outside_support_folders(site):
    assert htmlcheck.pages_of(site) == sorted(
        ["index.html", "sub/good.html", "sub/other.html", "sub/no_mathjax.html", "sub/tex_error.html",
         "sub/links.html", "sub/image.html", "sub/script.html", "sub/network.html", "sub/solutions.html",
         "sub/tables.html", "sub/sidepanel.html", "sub/tall.html", "sub/overlap.html", "sub/alt.html"])


def test_redirect_target_reads_a_meta_refresh_stub(site):
    assert htmlcheck._redirect_target(site / "index.html") == "sub/good.html"
    assert htmlcheck._redirect_target(site / "sub/other.html") is None


def test_find_chromium_honours_the_environment_variable(tmp_path, monkeypatch):
    fake = tmp_path / "my-chromium"
    fake.write_text("")
    monkeypatch.setenv(htmlcheck.CHROMIUM_ENV, str(fake))
    assert htmlcheck.find_chromium() == str(fake)
    monkeypatch.setenv(htmlcheck.CHROMIUM_ENV, str(tmp_path / "absent"))
    assert htmlcheck.find_chromium() is None
    assert "no Chromium found" in htmlcheck.unavailable_reason() or "playwright" in htmlcheck.unavailable_reason()


def test_check_book_refuses_a_folder_without_a_built_book(tmp_path):
    with pytest.raises(FileNotFoundError, match="make book"):
        htmlcheck.check_book(tmp_path)


def test_mathjax_copy_has_the_component_its_fonts_and_tex_extensions(site):
    mj = site / "_static" / "mathjax"
    assert (mj / book_html.COMPONENT).stat().st_size > 500_000
    assert (mj / "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff").is_file()
    assert (mj / "input/tex/extensions/boldsymbol.js").is_file()
    assert not (mj / "output/svg").exists()
    assert book_html.version().startswith("3.")
    assert json.loads((book_html.source_dir().parent / "package.json").read_text())["name"].startswith("mathjax")


def test_unique_scripts_drops_repeats_whatever_their_priority_or_empty_filename():
    from sphinx.builders.html._assets import _JavaScript

    body = 'const THEBE_JS_URL = "x"'
    scripts = [_JavaScript("a.js"), _JavaScript(None, body=body), _JavaScript("b.js", **{"async": "async"}),
               _JavaScript("", priority=501, body=body), _JavaScript("a.js"), _JavaScript("b.js")]
    kept = book_html.unique_scripts(scripts)
    assert [(js.filename, js.attributes) for js in kept] == [
        ("a.js", {}), (None, {"body": body}), ("b.js", {"async": "async"}), ("b.js", {})]


# ------------------------------------------------------------------------ browser
@needs_browser
def test_clean_pages_and_a_redirect_to_an_existing_page_pass(problems):
    for page in ("index.html", "sub/good.html", "sub/other.html"):
        assert _on(problems, page) == [], page


@needs_browser
def test_math_without_mathjax_is_reported_as_untypeset(problems):
    details = [p.detail for p in _on(problems, "sub/no_mathjax.html", "math")]
    assert any("math not typeset" in d and "alpha" in d for d in details), details
    assert any("TeX source left in the text" in d and "$$" in d for d in details), details


@needs_browser
def test_a_tex_error_is_reported(problems):
    assert [p.kind for p in _on(problems, "sub/tex_error.html")] == ["math-error"]


@needs_browser
def test_broken_links_and_anchors_are_reported(problems):
    details = sorted(p.detail for p in _on(problems, "sub/links.html", "link"))
    assert len(details) == 3, details
    assert any("/sub/missing.html (no such file)" in d for d in details)
    assert any("no id 'nope' in sub/other.html" in d for d in details)
    assert any("no id 'nowhere' in sub/links.html" in d for d in details)


@needs_browser
def test_a_missing_image_is_reported(problems):
    kinds = {p.kind for p in _on(problems, "sub/image.html")}
    assert kinds == {"image", "resource"}
    assert any("missing.png" in p.detail for p in _on(problems, "sub/image.html", "image"))


@needs_browser
def test_a_solution_shown_open_is_reported_and_a_folded_one_is_not(problems):
    got = _on(problems, "sub/solutions.html")
    assert [(p.kind, p.detail.rsplit(": ", 1)[-1]) for p in got] == [("solution", "open")]


@needs_browser
def test_a_cut_cell_an_unboxed_wide_table_and_crowded_numbers_are_reported(problems):
    got = {(p.kind, p.detail) for p in _on(problems, "sub/tables.html")}
    assert {k for k, _ in got} == {"truncated", "overflow", "crowded"}, got
    assert len(got) == 3, got
    assert any(k == "truncated" and "7 of 7 focal va..." in d for k, d in got)
    assert any(k == "overflow" and "1100 px wide in a 600-px column" in d and "unboxed" in d for k, d in got)
    assert any(k == "crowded" and "10.82 | 6.47" in d for k, d in got)


@needs_browser
def test_a_table_running_under_the_side_panel_is_reported_and_one_scrolling_in_its_box_is_not(problems):
    """Issue #32, item 2: at the check's 1280-px window, a full-width cell may use the window
    but not the strip under the side panel."""
    assert htmlcheck.VIEWPORT["width"] == 1280
    got = [p.detail for p in _on(problems, "sub/sidepanel.html")]
    assert len(got) == 1 and "900 px wide runs 208 px under the side panel" in got[0], got
    assert "under the panel" in got[0]


@needs_browser
def test_a_scroll_box_taller_than_the_window_is_reported_for_its_scroll_bar_out_of_reach(problems):
    got = [p.detail for p in _on(problems, "sub/tall.html")]
    assert len(got) == 1 and "its scroll bar lies below a 800-px window" in got[0] and "tall box" in got[0], got


@needs_browser
def test_overlapping_text_boxes_are_reported_and_clipped_or_separate_text_is_not(problems):
    got = [(p.kind, p.detail) for p in _on(problems, "sub/overlap.html")]
    assert [k for k, _ in got] == ["overlap"], got
    assert '"a label drawn here" and "a title drawn on it"' in got[0][1]


@needs_browser
def test_images_without_alt_text_that_describes_them_are_reported(problems):
    got = [p.detail for p in _on(problems, "sub/alt.html", "alt")]
    assert len(got) == 5, got
    assert sum("no alt text" in d for d in got) == 2
    assert sum("is a file name" in d for d in got) == 1
    assert sum("matplotlib's repr" in d for d in got) == 1
    assert sum("has 1 word(s)" in d for d in got) == 1
    assert [p.kind for p in _on(problems, "sub/alt.html")] == ["alt"] * 5


@needs_browser
def test_console_errors_and_uncaught_exceptions_are_reported(problems):
    details = [p.detail for p in _on(problems, "sub/script.html", "javascript")]
    assert any("bad thing" in d for d in details) and any("TypeError: boom" in d for d in details), details


@needs_browser
def test_requests_to_other_hosts_are_blocked_and_reported(problems):
    got = _on(problems, "sub/network.html", "network")
    assert len(got) == 1 and "cdn.invalid.example" in got[0].detail


def test_command_line_exit_codes(site, tmp_path, capsys, monkeypatch):
    """0 when clean, 1 with problems (each printed), 2 when the check cannot run; no browser needed."""
    found: list = []
    monkeypatch.setattr(htmlcheck, "unavailable_reason", lambda: None)
    monkeypatch.setattr(htmlcheck, "check_book", lambda html_dir, pages=None, log=None: list(found))
    assert htmlcheck.main([str(site), "--page", "sub/good.html", "--page", "sub/other.html"]) == 0
    assert "2 pages, 0 problem(s)" in capsys.readouterr().out
    found.append(htmlcheck.Problem("sub/image.html", "image", "image did not load: x.png"))
    assert htmlcheck.main([str(site)]) == 1
    out = capsys.readouterr().out
    assert "sub/image.html: [image] image did not load: x.png" in out and "15 pages, 1 problem(s)" in out
    monkeypatch.setattr(htmlcheck, "unavailable_reason", lambda: "no Chromium found")
    assert htmlcheck.main([str(site)]) == 2
    assert "cannot run: no Chromium found" in capsys.readouterr().err


def test_check_book_refuses_unknown_pages_before_starting_a_browser(site, monkeypatch):
    monkeypatch.setattr(htmlcheck, "unavailable_reason", lambda: None)
    with pytest.raises(ValueError, match="pages not in the book: nope.html"):
        htmlcheck.check_book(site, pages=["nope.html"])
