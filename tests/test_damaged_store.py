"""A damaged run does not stop the rest (issue #31, item 8).

A temporary results store outside the checkout holds copies of the committed runs of one
chapter's plan (exp_fts at cpu: 27 runs), two of them damaged: one with a truncated
logits.npz, one with a half-written record.json. ``replicate runs ls``, ``replicate claims``,
the chapter's plan and the book's check list both damaged files at once, one line each with
the fix for a store outside the checkout (restore or train again, not git), and go on with
the other runs; a claim whose evidence needs a damaged run is "not tested: run <key> damaged".
"""
from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import replicate as rp
from replicate import cli, runs
from replicate.cli.errors import is_user_error
from replicate.runs import damage, records

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "results" / "runs"


@pytest.fixture
def store(tmp_path, monkeypatch):
    """``(keys, logits_key, record_key)``: the fts plan's runs copied into a private results
    store, the 4th with its logits truncated and the 8th with its record half-written."""
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_REPORT_CACHE", "0")
    damage.forget()
    keys = list(rp.experiments.fts.plan.plan("cpu", device="cpu").configs())
    assert len(keys) > 10 and all((COMMITTED / k / "record.json").is_file() for k in keys)
    for k in keys:
        shutil.copytree(COMMITTED / k, runs.store_dir("results") / k)
    a, b = keys[3], keys[7]
    for key, name in ((a, "logits.npz"), (b, "record.json")):
        f = runs.store_dir("results") / key / name
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2])
    yield keys, a, b
    damage.forget()


def _restore_line(line: str, key: str, name: str) -> None:
    """``line`` is the one-line report of run ``key``'s damaged file ``name`` in a store
    outside the checkout: the folder, the file, and restore-or-retrain (no git)."""
    folder = runs.store_dir("results") / key
    assert "\n" not in line
    assert f"run {folder}: {name} is damaged (" in line
    assert f"restore {folder} from the copy it came from" in line and "delete it to train the run again" in line
    assert "git checkout" not in line


def test_check_store_lists_every_damaged_file_at_once(store):
    keys, a, b = store
    found = runs.check_store("results")
    assert [(e.key, e.file) for e in found] == sorted([(a, "logits.npz"), (b, "record.json")])
    for err in found:
        assert is_user_error(err)
        _restore_line(str(err), err.key, err.file)
    assert {e.key for e in damage.seen()} == {a, b}


def test_runs_ls_lists_the_other_runs_and_then_each_damaged_file(store):
    keys, a, b = store
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(["runs", "ls", "--store", "results"])
    assert rc == 1
    listed = {k for k in keys if k in out.getvalue()}
    assert listed == set(keys) - {a, b}                  # every sound run listed, the damaged ones not
    lines = err.getvalue().splitlines()
    assert lines[0] == "replicate: 2 damaged runs left out:" and len(lines) == 3
    by_key = {k: next(ln for ln in lines if k in ln) for k in (a, b)}
    _restore_line(by_key[a], a, "logits.npz")
    _restore_line(by_key[b], b, "record.json")


def test_the_plan_counts_damaged_runs_as_missing_and_training_names_both(store):
    keys, a, b = store
    p = rp.experiments.fts.plan.plan("cpu", device="cpu")
    assert rp.comparison.load(p) is None
    assert set(p.missing("results")) == {a, b}
    assert not p.frame().set_index("key").loc[[a, b], "finished"].any()
    why = rp.comparison.chapter.not_in_store("cpu", p)
    assert f"run {a} damaged (logits.npz" in why and f"run {b} damaged (record.json" in why
    with pytest.raises(records.DamagedRunError) as err:      # the others load; both damaged named, none trained over
        rp.comparison.train(p, progress="none", log=None)
    text = str(err.value)
    assert text.startswith("2 finished runs are damaged")
    assert [ln.strip().split(":")[0] for ln in text.splitlines()[1:]] == \
        [f"run {runs.store_dir('results') / k}" for k in (a, b)]
    assert (runs.store_dir("results") / a / "logits.npz").stat().st_size > 0   # still the damaged copy


def test_claims_on_a_damaged_run_are_not_tested_and_the_ledger_goes_on(store):
    keys, a, b = store
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(["claims", "--paper", "komisarenko2024", "--kind", "experiment", "--profile", "cpu",
                       "--format", "csv", "--workers", "1", "--quiet"])
    assert rc == 1
    import pandas as pd

    frame = pd.read_csv(io.StringIO(out.getvalue()))
    fts = frame[frame.chapter == "exp_fts"]
    ours, paper = fts[fts.evidence.str.startswith("ours")], fts[fts.evidence.str.startswith("paper")]
    assert len(ours) and (ours.verdict == "not tested").all()
    assert ours.note.str.contains(f"run {a} damaged").all() and ours.note.str.contains(f"run {b} damaged").all()
    assert (paper.verdict != "not tested").any()          # the paper's side is decided as always
    assert (frame.chapter == "exp_leaderboard").any()     # and the other source of the paper is built
    lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("replicate: run ")]
    assert len(lines) == 2
    _restore_line(next(ln for ln in lines if a in ln), a, "logits.npz")
    _restore_line(next(ln for ln in lines if b in ln), b, "record.json")


def test_the_book_lists_every_damaged_run_before_executing(store):
    keys, a, b = store
    logged = []
    found = rp.runner.book.report_damaged(log=logged.append)
    assert {e.key for e in found} == {a, b}
    assert logged[0].startswith("[replicate] 2 damaged runs in the stores")
    assert sum(a in m for m in logged) == 1 and sum(b in m for m in logged) == 1


def test_a_group_left_out_for_a_damaged_run_is_its_own_not_tested_side(monkeypatch):
    """A chapter that shows its other groups (load_groups) says which rows were left out and why."""
    from replicate.claims.evidence import Missing

    damage.forget()
    p = rp.experiments.focal_loss.plan.plan("cpu", device="cpu")
    text_key = next(iter(p.group("text").values())).key
    damage.note(records.damaged(runs.store_dir("results") / text_key, "logits.npz", "truncated"))
    try:
        sides = rp.comparison.chapter.damaged_sides(p, {"image": {("fl3", 1): object()}}, ("image", "text"))
        assert len(sides) == 1 and isinstance(sides[0], Missing)
        assert sides[0].label() == f"ours: {p.profile_of('text')} (text rows)"
        assert sides[0].reason.startswith(f"run {text_key} damaged (logits.npz")
        assert rp.comparison.chapter.damaged_sides(p, {}, ("image", "text")) == []      # whole side missing instead
        assert rp.comparison.chapter.damaged_sides(p, {"image": {1: 1}, "text": {1: 1}}) == []
    finally:
        damage.forget()


@pytest.mark.parametrize("call", [lambda: runs.find("0" * 16, on_damage="ignore"),
                                  lambda: runs.list_runs(on_damage="warn"),
                                  lambda: runs.check_store("everything")])
def test_a_bad_argument_names_the_parameter_and_the_allowed_values(call):
    with pytest.raises(ValueError) as err:
        call()
    text = str(err.value)
    assert "\n" not in text
    assert ("on_damage must be one of raise, skip" in text) or ("store must be one of all, results, cache" in text)
