"""Smoke execution of every chapter of ``_toc.yml``, a strict book build in a temporary
directory, and the HTML check of that build (headless Chromium, offline)."""
from __future__ import annotations

import json

import pytest

from replicate import htmlcheck, runner


@pytest.fixture(scope="module")
def smoke_book(tmp_path_factory):
    """Every chapter executed at the smoke profile and the book built, once for this module."""
    workdir = tmp_path_factory.mktemp("book")
    index = runner.build(profile="smoke", workdir=workdir, force=True)
    return workdir, index


@pytest.mark.slow
def test_every_chapter_executes_at_smoke_profile_and_the_book_builds(smoke_book):
    workdir, index = smoke_book
    assert index.exists()
    for ch in runner.toc_chapters():
        executed = workdir / "book" / "chapters" / f"{ch.name}.ipynb"
        meta = json.loads(executed.read_text())["metadata"]["replicate"]
        assert meta["profile"] == "smoke"
        assert (workdir / "_build" / "html" / "book" / "chapters" / f"{ch.name}.html").exists()


@pytest.mark.slow
def test_every_page_of_the_built_book_passes_the_html_check(smoke_book):
    """Math typeset with no network, internal links and anchors, images, no JavaScript
    error, no request leaving the machine; exercise solutions folded (see htmlcheck)."""
    reason = htmlcheck.unavailable_reason()
    if reason:
        pytest.skip(f"HTML check skipped: {reason}")
    workdir, _ = smoke_book
    problems = htmlcheck.check_book(workdir / "_build" / "html")
    assert not problems, "\n".join(map(str, problems))
