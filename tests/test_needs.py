"""The paper texts' one lookup and the switch that turns a missing text or oracle into a
failure (issue #31, item 9; ``tests/needs.py``)."""
from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.outcomes import Failed, Skipped

import needs
from replicate import config
from replicate import paper_tables as pt


def test_the_texts_are_looked_for_in_the_env_else_the_data_else_beside_the_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv(pt.PAPERS_ENV, str(tmp_path / "texts"))
    assert pt.papers_dirs() == [(tmp_path / "texts").resolve()] and pt.papers_dir() == (tmp_path / "texts").resolve()
    monkeypatch.delenv(pt.PAPERS_ENV)
    monkeypatch.setenv(config.DATA_ENV, str(tmp_path / "data"))
    assert pt.papers_dirs() == [(tmp_path / "data" / "papers").resolve()]        # the package names no shared folder
    assert pt.source_path("mukhoti2020") == pt.papers_dir() / "focal-loss-mukhoti-2020.txt"
    assert needs.BESIDE == (config.checkout().parent / "shared" / "papers").resolve()
    if (needs.BESIDE / "focal-loss-mukhoti-2020.txt").is_file():                  # the tests' last place
        assert needs.paper_text("mukhoti2020") == (needs.BESIDE / "focal-loss-mukhoti-2020.txt").read_text().splitlines()
    (tmp_path / "data" / "papers").mkdir(parents=True)
    (tmp_path / "data" / "papers" / "focal-loss-mukhoti-2020.txt").write_text("the data's copy\n")
    assert pt.papers_dir() == (tmp_path / "data" / "papers").resolve()
    assert needs.paper_text("mukhoti2020") == ["the data's copy"]                 # the data's copy wins


@pytest.mark.parametrize("value, strict", [("", False), ("0", False), ("1", True)])
def test_a_missing_text_or_oracle_skips_and_fails_under_the_switch(tmp_path, monkeypatch, value, strict):
    monkeypatch.setenv(needs.STRICT_ENV, value)
    monkeypatch.setenv(pt.PAPERS_ENV, str(tmp_path))                            # an empty folder
    outcome = Failed if strict else Skipped
    with pytest.raises(outcome, match=r"focal-loss-mukhoti-2020\.txt not found in .*set REPLICATE_PAPERS"):
        needs.paper_text("mukhoti2020")
    absent = needs.oracle("no_such_oracle_module", "no-such-distribution")      # nothing imported yet
    with pytest.raises(outcome, match="no_such_oracle_module is not importable.*install no-such-distribution"):
        absent.anything
    with pytest.raises(AttributeError):
        absent.__test__                                                         # pytest's collection: no import
    assert needs.oracle("json", "python").dumps([1]) == "[1]"


def test_ci_sets_the_switch():
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert f"export {needs.STRICT_ENV}=1" in ci
