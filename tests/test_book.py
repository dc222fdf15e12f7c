"""Smoke execution of every chapter of ``_toc.yml`` and a strict book build, in a temporary directory.

The chapters run on the session's data directory (``tests/conftest.py``): the real data
when ``REPLICATE_DATA`` points to it, else generated test data, which every chapter that
loads a data set must then name in its output.
"""
from __future__ import annotations

import json

import pytest

from replicate import runner
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


@pytest.mark.slow
def test_every_chapter_executes_at_smoke_profile_and_the_book_builds(tmp_path, data_directory):
    index = runner.build(profile="smoke", workdir=tmp_path, force=True)
    assert index.exists()
    generated = archives.is_generated(data_directory)
    for ch in runner.toc_chapters():
        executed = tmp_path / "book" / "chapters" / f"{ch.name}.ipynb"
        nb = json.loads(executed.read_text())
        meta = nb["metadata"]["replicate"]
        assert meta["profile"] == "smoke"
        assert (tmp_path / "_build" / "html" / "book" / "chapters" / f"{ch.name}.html").exists()
        source = ch.source.read_text()
        if "rp.data.load(" in source or "rp.comparison.data_name(" in source:
            assert (GENERATED_LABEL in output_text(nb)) == generated, ch.name
