"""Damaged files of finished runs: one line naming the run, the file, what is wrong and the
fix in the committed store; moved aside and treated as missing in the writable cache.

A committed run (results/runs/) is copied into private stores and damaged the two ways a
reader meets: a half-written record.json and a truncated (or bit-flipped) logits.npz. Going
on past damaged runs (listings, claims, plans): tests/test_damaged_store.py."""
from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from replicate import config, runs
from replicate.cli.errors import is_user_error
from replicate.runs import records

REPO = Path(__file__).resolve().parent.parent
COMMITTED = sorted(p for p in (REPO / "results" / "runs").iterdir() if (p / "record.json").is_file())


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Private results and cache stores inside a fake git checkout ``tmp_path`` (so that
    the results store is ``results/runs`` relative to it, as in a clone)."""
    (tmp_path / ".git").mkdir()
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / ".cache"))
    monkeypatch.setattr(config, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(config, "checkout", lambda: tmp_path)
    return tmp_path


def _copy(store_name: str) -> Path:
    src = COMMITTED[0]
    dst = runs.store_dir(store_name) / src.name
    shutil.copytree(src, dst)
    return dst


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _one_line(err) -> str:
    text = str(err)
    assert "\n" not in text and is_user_error(err)
    return text


def test_a_truncated_committed_logits_file_stops_with_one_line_naming_run_file_and_fix(stores):
    run_dir = _copy("results")
    _truncate(run_dir / "logits.npz")
    run = runs.find(run_dir.name)                       # the record is fine: the run opens
    with pytest.raises(records.DamagedRunError) as err:
        run.logits("test")
    text = _one_line(err.value)
    assert text.startswith(f"run results/runs/{run_dir.name}: logits.npz is damaged (truncated or corrupt")
    assert f"`git checkout -- results/runs/{run_dir.name}`" in text and "delete" in text
    assert "BadZipFile" in text


def test_a_corrupt_member_of_logits_is_caught_by_its_checksum(stores):
    run_dir = _copy("results")
    data = bytearray((run_dir / "logits.npz").read_bytes())
    mid = len(data) // 3
    data[mid:mid + 64] = bytes(b ^ 0xFF for b in data[mid:mid + 64])
    (run_dir / "logits.npz").write_bytes(bytes(data))
    with pytest.raises(records.DamagedRunError, match="logits.npz is damaged"):
        records.check_logits(run_dir)


@pytest.mark.parametrize("damage, what", [
    (lambda p: _truncate(p), "not valid JSON, half-written"),
    (lambda p: p.write_text("[1, 2]"), "a JSON list"),
    (lambda p: p.write_text('{"key": "x"}'), "lacks config"),
])
def test_a_damaged_committed_record_stops_with_one_line(stores, damage, what):
    run_dir = _copy("results")
    damage(run_dir / "record.json")
    with pytest.raises(records.DamagedRunError) as err:
        runs.find(run_dir.name)
    text = _one_line(err.value)
    assert text.startswith(f"run results/runs/{run_dir.name}: record.json is damaged") and what in text
    assert f"git checkout -- results/runs/{run_dir.name}" in text


def test_a_record_of_another_run_is_damage(stores):
    run_dir = _copy("results")
    other = runs.store_dir("results") / "0000000000000000"
    run_dir.rename(other)
    with pytest.raises(records.DamagedRunError, match=f"holds the record of run {run_dir.name}"):
        runs.find("0000000000000000")


@pytest.mark.parametrize("name", ["record.json", "logits.npz"])
def test_a_damaged_cache_entry_is_moved_aside_with_a_warning_and_counts_as_missing(stores, name):
    run_dir = _copy("cache")
    key = run_dir.name
    _truncate(run_dir / name)
    with pytest.warns(UserWarning, match=rf"run \.cache/runs/{key}: {name} is damaged.*moved aside"):
        assert runs.find(key) is None
    assert not run_dir.exists()
    aside = list((runs.store_dir("cache") / records.DAMAGED_DIR).iterdir())
    assert len(aside) == 1 and aside[0].name.startswith(key) and (aside[0] / name).exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # nothing left to warn about
        assert runs.find(key) is None and runs.list_runs("cache").empty
        with pytest.raises(ValueError, match="no finished run"):
            runs.load(key)


def test_a_sound_cache_entry_is_read_and_listed(stores):
    run_dir = _copy("cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = runs.find(run_dir.name)
        assert run.store == "cache" and run.logits("val")[0].shape[0] > 0
        assert list(runs.list_runs("cache").key) == [run_dir.name]


def test_a_damaged_run_of_a_store_outside_the_checkout_says_restore_or_retrain(tmp_path, monkeypatch):
    """No `git checkout` for a store that git does not hold: restore the folder or train again."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.setattr(config, "checkout", lambda: tmp_path / "repo")
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    run_dir = _copy("results")
    _truncate(run_dir / "logits.npz")
    with pytest.raises(records.DamagedRunError) as err:
        records.check_logits(run_dir)
    text = _one_line(err.value)
    assert "git checkout" not in text
    assert text.startswith(f"run {run_dir}: logits.npz is damaged")
    assert f"restore {run_dir} from the copy it came from" in text and "delete it to train the run again" in text
    assert (err.value.key, err.value.file, err.value.path) == (run_dir.name, "logits.npz", run_dir)


def test_a_checkout_without_git_is_not_told_to_use_git(stores):
    """A folder holding _toc.yml but no .git (an unpacked source archive): restore, not git."""
    (stores / ".git").rmdir()
    run_dir = _copy("results")
    _truncate(run_dir / "record.json")
    with pytest.raises(records.DamagedRunError) as err:
        runs.find(run_dir.name)
    text = _one_line(err.value)
    assert "git checkout" not in text and f"restore {run_dir} from the copy it came from" in text
