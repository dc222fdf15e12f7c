"""Smoke execution of every chapter of ``_toc.yml``, a strict book build in a temporary
directory, and the HTML check of that build (headless Chromium, offline).

The chapters run on the session's data directory (``tests/conftest.py``): the real data
when ``REPLICATE_DATA`` points to it, else generated test data, which every chapter that
loads a data set must then name in its output.
"""
from __future__ import annotations

import json

import pytest

from replicate import htmlcheck, notebook_checks, runner
from replicate.data import GENERATED_LABEL, archives


def output_text(notebook: dict) -> str:
    """Every text output (streams, text/plain, text/html) of an executed notebook, joined."""
    parts = []
    for cell in notebook["cells"]:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            for mime in ("text/plain", "text/html"):
                parts.append("".join(out.get("data", {}).get(mime, "")))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def smoke_book(tmp_path_factory, data_directory):
    """Every chapter executed at the smoke profile and the book built, once for this module."""
    workdir = tmp_path_factory.mktemp("book")
    index = runner.build(profile="smoke", workdir=workdir, force=True)
    return workdir, index


@pytest.mark.slow
def test_every_chapter_executes_at_smoke_profile_and_the_book_builds(smoke_book, data_directory):
    workdir, index = smoke_book
    assert index.exists()
    generated = archives.is_generated(data_directory)
    for ch in runner.toc_chapters():
        executed = workdir / "book" / "chapters" / f"{ch.name}.ipynb"
        nb = json.loads(executed.read_text())
        meta = nb["metadata"]["replicate"]
        assert meta["profile"] == "smoke"
        assert (workdir / "_build" / "html" / "book" / "chapters" / f"{ch.name}.html").exists()
        source = ch.source.read_text()
        if "rp.data.load(" in source or "rp.comparison.data_name(" in source:
            assert (GENERATED_LABEL in output_text(nb)) == generated, ch.name


@pytest.mark.slow
def test_no_executed_chapter_shows_a_warning(smoke_book):
    """No output of any chapter writes to stderr or prints a ``...Warning:`` line; this
    includes the book's LegibilityWarning for a figure whose text reads below 8 pt at the
    page width (replicate.legibility, checked after every cell)."""
    workdir, _ = smoke_book
    found = {ch.name: notebook_checks.warnings_in(workdir / "book" / "chapters" / f"{ch.name}.ipynb")
             for ch in runner.toc_chapters()}
    found = {name: w for name, w in found.items() if w}
    assert not found, "\n".join(f"{name}: cell {cell}: {line}" for name, w in found.items() for cell, line in w)


@pytest.mark.slow
def test_exercises_are_numbered_from_one_in_every_chapter(smoke_book):
    """sphinx-exercise numbers across the book unless told otherwise; replicate.book_html
    renumbers per page, so each chapter's exercises read Exercise 1, 2, ... in order."""
    import re

    workdir, _ = smoke_book
    for ch in runner.toc_chapters():
        html = (workdir / "_build" / "html" / "book" / "chapters" / f"{ch.name}.html").read_text()
        numbers = [int(n) for n in re.findall(
            r'<div class="exercise admonition"[^>]*>\s*<p class="admonition-title"><span class="caption-number">'
            r"Exercise (\d+) </span>", html)]
        assert numbers == list(range(1, len(numbers) + 1)), (ch.name, numbers)
        assert numbers or ch.name == "reproducibility", ch.name


@pytest.mark.slow
def test_every_page_of_the_built_book_passes_the_html_check(smoke_book):
    """Math typeset with no network, internal links and anchors, images, no JavaScript
    error, no request leaving the machine; exercise solutions folded; no table cell cut
    short, no table wider than the column outside a scroll box, no numbers of neighbouring
    cells running together (see htmlcheck)."""
    reason = htmlcheck.unavailable_reason()
    if reason:
        pytest.skip(f"HTML check skipped: {reason}")
    workdir, _ = smoke_book
    problems = htmlcheck.check_book(workdir / "_build" / "html")
    assert not problems, "\n".join(map(str, problems))
