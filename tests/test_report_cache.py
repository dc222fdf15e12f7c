"""The disk cache of computed results (replicate.claims.cache, comparison.report.Report):
computed once, read back by another call, keyed by what they depend on, pruned, off when
asked."""
from __future__ import annotations

import pytest

from replicate.claims import cache
from replicate.comparison.report import Report


@pytest.fixture
def on(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    return tmp_path


def test_a_section_is_computed_once_and_read_back_by_another_report(on):
    calls = []

    def section(name):
        def build(r):
            calls.append(name)
            return {"value": len(calls)}
        return build

    a = Report("exp_x", "cpu", ["k1", "k2"], {"s": section("s"), "t": section("t")})
    assert a["s"] == {"value": 1} and a["s"] == {"value": 1} and calls == ["s"]
    b = Report("exp_x", "cpu", ["k2", "k1"], {"s": section("s"), "t": section("t")})   # same keys, any order
    assert b["s"] == {"value": 1} and calls == ["s"]
    c = Report("exp_x", "cpu", ["k1", "k3"], {"s": section("s")})                       # other runs: anew
    assert c["s"] == {"value": 2}
    with pytest.raises(KeyError, match="no section 'u'"):
        a["u"]


def test_sections_read_each_other_and_the_cache_can_be_off(on, monkeypatch):
    r = Report("exp_y", "cpu", ["k"], {"a": lambda r: 2, "b": lambda r: r["a"] * 10})
    assert r["b"] == 20
    monkeypatch.setenv(cache.CACHE_ENV, "0")
    n = []
    off = Report("exp_y", "cpu", ["k"], {"a": lambda r: n.append(1) or 3})
    assert off["a"] == 3 and n == [1] and not list((on / "reports").glob("exp_y-cpu-*/a.pkl"))[1:]


def test_a_chapter_keeps_its_most_recent_reports_only(on):
    for i in range(cache.KEEP + 2):
        Report("exp_z", "cpu", [f"k{i}"], {"s": lambda r: 1})["s"]
    assert len(list((on / "reports").glob("exp_z-cpu-*"))) == cache.KEEP


def test_an_unreadable_entry_is_computed_again(on):
    r = Report("exp_w", "cpu", ["k"], {"s": lambda r: 5})
    assert r["s"] == 5
    path = next((on / "reports").glob("exp_w-cpu-*/s.pkl"))
    path.write_bytes(b"not a pickle")
    assert Report("exp_w", "cpu", ["k"], {"s": lambda r: 6})["s"] == 6


def test_a_value_that_cannot_be_pickled_is_returned_not_kept(on):
    assert Report("exp_v", "cpu", ["k"], {"s": lambda r: (lambda: 1)})["s"]() == 1
    assert not list((on / "reports").glob("exp_v-cpu-*/s.pkl"))
