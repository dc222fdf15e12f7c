"""The kept two-moons study (replicate.toy2d.stored_study): what is read back is what was
trained, it is trained once, its key follows its settings, a damaged file says so, and the
committed cpu study is what training gives now."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replicate import toy2d
from replicate.experiments.fcl import plan as fcl_plan

TINY = {"seeds": (0, 1), "epochs": 20, "n_train": 60, "n_test": 120, "grid_size": 11}


def test_a_saved_study_reads_back_as_trained(tmp_path):
    fresh = toy2d.study(**TINY, keep_test=True)
    path = toy2d.save_study(tmp_path / "s.npz", fresh, **TINY)
    frame, grids, tests = toy2d.load_study(path, keep_test=True)
    pd.testing.assert_frame_equal(frame, fresh[0])
    assert list(grids) == list(fresh[1]) and list(tests) == list(fresh[2])
    for k, (xs, ys, p, x, y) in grids.items():
        fx, fy, fp, fxt, fyt = fresh[1][k]
        assert np.array_equal(xs, fx) and np.array_equal(ys, fy)          # the grid, rebuilt from the settings
        assert np.array_equal(x, fxt) and np.array_equal(y, fyt)
        assert p.dtype == np.float32 and np.allclose(p, fp, rtol=0, atol=6e-8)   # float32 rounding only
        assert np.array_equal(tests[k][0], fresh[2][k][0]) and np.array_equal(tests[k][1], fresh[2][k][1])
    assert len(toy2d.load_study(path)) == 2


def test_trained_once_then_read_from_its_store(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    calls = []
    real = toy2d.study
    monkeypatch.setattr(toy2d, "study", lambda **kw: calls.append(kw) or real(**kw))
    first = toy2d.stored_study("cache", keep_test=True, **TINY)
    again = toy2d.stored_study("cache", keep_test=True, **TINY)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first[0], again[0])
    assert [p.name for p in (tmp_path / "cache" / "toy2d").iterdir()] == [f"{toy2d.study_key(**TINY)}.npz"]
    assert not (tmp_path / "results").exists()
    toy2d.stored_study("results", **TINY)                     # the other store: trained there
    assert len(calls) == 2 and (tmp_path / "results" / "toy2d" / f"{toy2d.study_key(**TINY)}.npz").exists()
    with pytest.raises(ValueError, match="store must be one of results, cache; got 'disk'"):
        toy2d.stored_study("disk", **TINY)


def test_the_chapter_keeps_its_smoke_study_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    frame, _ = fcl_plan.toy_study("smoke")
    assert list(frame.seed.unique()) == list(fcl_plan.TOY["smoke"]["seeds"])
    assert (tmp_path / "cache" / "toy2d").is_dir() and not (tmp_path / "results").exists()


def test_the_key_follows_every_setting_and_refuses_unknown_ones():
    base = toy2d.study_key(**TINY)
    assert toy2d.study_key(**{**TINY, "seeds": [0, 1]}) == base
    assert toy2d.study_key(**{**TINY, "epochs": 21}) != base
    assert toy2d.study_key(**{**TINY, "lam": 1.5}) == base             # the default, named
    assert toy2d.study_key(**{**TINY, "lam": 2}) != base
    assert toy2d.study_key(gamma=10) == toy2d.study_key(gamma=10.0) == toy2d.study_key()
    with pytest.raises(ValueError, match="settings must be among seeds, gamma, .*; got lambda"):
        toy2d.study_key(**{**TINY, "lambda": 1.0})


def test_a_damaged_file_names_itself_and_the_fix(tmp_path):
    bad = tmp_path / "toy2d" / "x.npz"
    bad.parent.mkdir()
    bad.write_bytes(b"PK\x03\x04 not a whole archive")
    with pytest.raises(ValueError, match=r"x\.npz: unreadable two-moons study .*delete the file"):
        toy2d.load_study(bad)


def test_the_committed_cpu_study_is_what_training_gives_now():
    """The committed study (the book's cpu profile) against seed 0 trained again here: the
    same settings, the same code. Tolerances leave room for another CPU's arithmetic only."""
    from replicate import config

    settings = {**fcl_plan.TOY["default"]}
    path = config.repo_root() / "results" / toy2d.STUDY_DIR / f"{toy2d.study_key(**settings)}.npz"
    assert path.exists(), f"{path} is missing: the cpu two-moons study is committed (fcl plan.toy_study('cpu'))"
    frame, _, tests = toy2d.load_study(path, keep_test=True)
    again, _, tests_again = toy2d.study(**{**settings, "seeds": (0,)}, keep_test=True)
    kept = frame[frame.seed == 0].reset_index(drop=True)
    assert list(kept.method) == list(again.method) == ["FL", "FCL"]
    for col, tol in (("error", 0.05), ("ece", 0.05), ("uncertain_share", 0.05)):   # percent
        assert np.allclose(kept[col], again[col], rtol=0, atol=tol), col
    assert np.allclose(kept["nll"], again["nll"], rtol=1e-4)
    assert np.allclose(kept["boundary_length"], again["boundary_length"], rtol=1e-3)
    for k, (p, y) in tests_again.items():
        assert np.array_equal(tests[k][1], y) and np.abs(tests[k][0] - p).max() < 1e-4
