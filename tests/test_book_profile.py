"""``make book`` shows each experiment chapter at the largest profile whose runs are all
committed (issue #13, item 6), decided from the store alone, before anything executes.

The store is a temporary REPLICATE_RESULTS holding fabricated finished-run records of a
tiny plan (two methods, no text runs) with a tiny logits file each: the selection reads only
whether each run's record and logits read back (a damaged run counts as missing), so nothing
is trained or evaluated.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from replicate import experiments, runner

CHAPTER = runner.SOURCE_DIR / "exp_focal_loss.md"
TINY = {"profile": "cpu", "dataset": "cifar10", "model": None, "seeds": [1], "methods": ["cross_entropy", "fl3"],
        "text_dataset": None, "device": "cpu"}


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "results"


def fabricate(results, profile, only=None):
    """Finished-run records (and two-example logits) for the tiny plan at ``profile``; returns their keys."""
    plan = experiments.chapter_plan("exp_focal_loss", **{k: v for k, v in TINY.items() if k != "profile"},
                                    profile=profile)
    keys = []
    for key, cfg in list(plan.configs().items())[:only]:
        path = results / "runs" / key
        path.mkdir(parents=True)
        record = {"format": 1, "key": key, "config": cfg.to_dict(), "resolved": cfg.resolve(),
                  "metrics": {s: {} for s in ("val", "test", "val_ts", "test_ts")}, "temperature": 1.0,
                  "history": [], "provenance": {}, "wall_time": 0.0}
        (path / "record.json").write_text(json.dumps(record))
        np.savez_compressed(path / "logits.npz", test_logits=np.zeros((2, 10), np.float16),
                            test_labels=np.zeros(2, np.int64))
        keys.append(key)
    return keys


def test_default_profile_when_no_larger_one_is_complete(results):
    shown, why = runner.showable_profile(CHAPTER, TINY)
    assert shown is None and "paper: 0/2 runs in results/" in why and "gpu: 0/2 runs in results/" in why
    fabricate(results, "gpu", only=1)
    assert runner.showable_profile(CHAPTER, TINY) == (None, "paper: 0/2 runs in results/; gpu: 1/2 runs in results/")


def test_largest_complete_profile_is_chosen(results):
    fabricate(results, "gpu")
    assert runner.showable_profile(CHAPTER, TINY) == ("gpu", "all 2 runs of profile gpu are in results/")
    fabricate(results, "paper", only=1)  # paper incomplete: gpu still
    assert runner.showable_profile(CHAPTER, TINY)[0] == "gpu"
    shutil.rmtree(results)
    fabricate(results, "gpu")
    fabricate(results, "paper")
    assert runner.showable_profile(CHAPTER, TINY) == ("paper", "all 2 runs of profile paper are in results/")


def test_chapters_that_train_nothing_and_plans_that_do_not_validate(results):
    assert runner.showable_profile(runner.SOURCE_DIR / "measuring_calibration.md", {"profile": "cpu"}) == \
        (None, "trains nothing")
    shown, why = runner.showable_profile(CHAPTER, {**TINY, "methods": ["no_such_method"]})
    assert shown is None and why.count("plan does not validate") == 2


def test_book_build_executes_each_chapter_at_its_chosen_profile(monkeypatch, tmp_path):
    calls, logs = {}, []
    monkeypatch.setattr(runner.book, "execute", lambda src, tgt, profile=None, **k: calls.__setitem__(src.stem, profile))
    monkeypatch.setattr(runner.book, "build_html", lambda base, **k: base / "index.html")
    def showable(src, defaults):
        return ("gpu", "all 22 runs") if src.stem == "exp_focal_loss" else (None, "trains nothing")

    monkeypatch.setattr(runner.book, "showable_profile", showable)
    monkeypatch.setenv(runner.BOOK_DIR_ENV, str(tmp_path))
    runner.build(log=logs.append)
    assert calls["exp_focal_loss"] == "gpu"
    assert {p for name, p in calls.items() if name != "exp_focal_loss"} == {None}
    assert "[replicate] exp_focal_loss: showing profile gpu (all 22 runs)" in logs
    runner.build(profile="cpu", log=logs.append)  # an explicit profile is used for every chapter
    assert set(calls.values()) == {"cpu"}


def test_pages_that_read_other_chapters_run_after_them(monkeypatch, tmp_path):
    """The claims ledger and the reproducibility page (metadata ``after_chapters``) execute
    after every other chapter, in book order otherwise."""
    order = []
    monkeypatch.setattr(runner.book, "execute", lambda src, tgt, profile=None, **k: order.append(src.stem))
    chapters = runner.toc_chapters()
    plan = [(ch, None, tmp_path / f"{ch.name}.ipynb") for ch in chapters]
    runner.execute_all(plan, workers=1, log=lambda *_: None)
    late = [ch.name for ch in chapters if runner.book.runs_after_chapters(ch.source)]
    assert set(late) == {"claims_ledger", "reproducibility"}
    assert order[-len(late):] == late and order[:-len(late)] == [c.name for c in chapters if c.name not in late]


def test_book_workers_come_from_the_environment_or_the_cores(monkeypatch):
    monkeypatch.setenv(runner.book.WORKERS_ENV, "3")
    assert runner.book.default_workers() == 3
    monkeypatch.setenv(runner.book.WORKERS_ENV, "two")
    with pytest.raises(ValueError, match="REPLICATE_BOOK_WORKERS must be a positive integer"):
        runner.book.default_workers()
    monkeypatch.delenv(runner.book.WORKERS_ENV)
    assert 1 <= runner.book.default_workers() <= 2


def test_the_longest_chapters_start_first(tmp_path):
    import json

    recorded = tmp_path / "exp_fts.ipynb"
    recorded.write_text(json.dumps({"metadata": {"replicate": {"wall_time_s": 234.2}}}))
    assert runner.book.expected_seconds(runner.SOURCE_DIR / "exp_fts.md", recorded) == 234.2
    none = tmp_path / "none.ipynb"                          # a fresh clone: the measured table
    assert runner.book.expected_seconds(runner.SOURCE_DIR / "exp_fcl.md", none) == runner.book.EXPECTED_SECONDS["exp_fcl"]
    assert runner.book.expected_seconds(runner.SOURCE_DIR / "new_exp.md", none) == 10.0   # not measured: by kind
    assert max(runner.book.EXPECTED_SECONDS, key=runner.book.EXPECTED_SECONDS.get) == "exp_fts"
    # every chapter of the book is in the table, and no chapter it lacks
    import replicate.runner.chapters as chapters
    from replicate import config
    names = {ch.name for ch in chapters.toc_chapters(config.repo_root())}
    assert set(runner.book.EXPECTED_SECONDS) == names - {ch for ch in names if runner.book.runs_after_chapters(
        runner.SOURCE_DIR / f"{ch}.md")}
