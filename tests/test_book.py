"""Smoke execution of every chapter of ``_toc.yml`` and a strict book build, in a temporary directory."""
from __future__ import annotations

import json

import pytest

from replicate import runner


@pytest.mark.slow
def test_every_chapter_executes_at_smoke_profile_and_the_book_builds(tmp_path):
    index = runner.build(profile="smoke", workdir=tmp_path, force=True)
    assert index.exists()
    for ch in runner.toc_chapters():
        executed = tmp_path / "book" / "chapters" / f"{ch.name}.ipynb"
        meta = json.loads(executed.read_text())["metadata"]["replicate"]
        assert meta["profile"] == "smoke"
        assert (tmp_path / "_build" / "html" / "book" / "chapters" / f"{ch.name}.html").exists()
