"""The GPU-machine workflow on the CPU (issue #13, item 3): training within a time budget
across commands that are cut off, packing finished runs into archives that travel, and
unpacking them - bitwise - into results/, refusing partial or corrupt archives.

Data are generated (test_runs.fake_load); everything else is the real code.
"""
from __future__ import annotations

import gzip
import io
import json
import tarfile
import types

import numpy as np
import pytest

from replicate import cli, runs, training
from replicate.runs import RunConfig, archive, session
from test_runs import smoke, stores  # noqa: F401 - the autouse fixture: private stores, generated data


def finished(*losses_, store="results", **kw):
    return [runs.get_or_train(smoke(name, **kw), store=store, progress="none") for name in losses_]


def files_of(run):
    return {n: (run.path / n).read_bytes() for n in archive.RUN_FILES}


def use_new_results(monkeypatch, tmp_path, name):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / name))


# ----------------------------------------------------------------------------- pack / unpack
def test_pack_unpack_round_trips_bitwise(tmp_path, monkeypatch):
    a, b = finished("cross_entropy", "focal")
    before = {r.key: files_of(r) for r in (a, b)}
    paths = runs.pack([a.key, b.key[:6]], tmp_path / "out" / "pack")
    assert [p.name for p in paths] == ["pack.tar.gz"]
    use_new_results(monkeypatch, tmp_path, "elsewhere")
    out = runs.unpack(paths)
    assert sorted(out["written"]) == sorted(before) and out["unchanged"] == []
    for key, files in before.items():
        run = runs.load(key, store="results")
        assert files_of(run) == files and run.key == run.config.key == key
    again = runs.unpack(paths)  # identical runs already there: nothing written
    assert again == {"written": [], "unchanged": list(again["unchanged"])} and len(again["unchanged"]) == 2


def test_pack_splits_into_parts_and_unpack_wants_all_of_them(tmp_path, monkeypatch):
    rs = finished("cross_entropy", "focal", "brier")
    size = max(sum(len(b) for b in files_of(r).values()) for r in rs)
    paths = runs.pack([r.key for r in rs], tmp_path / "set", max_bytes=size + archive._HEADROOM + 4096)
    assert len(paths) == 3 and paths[0].name == "set-part1of3.tar.gz"
    use_new_results(monkeypatch, tmp_path, "elsewhere")
    with pytest.raises(ValueError, match=r"parts \[3\] of 3 are missing"):
        runs.unpack(paths[:2])
    assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").rglob("record.json"))
    assert len(runs.unpack(paths)["written"]) == 3
    with pytest.raises(ValueError, match="alone takes"):
        runs.pack([rs[0].key], tmp_path / "tiny", max_bytes=archive._HEADROOM + 10)


def _rewrite(src, dst, edit):
    """Copy archive ``src`` to ``dst`` with ``edit(members: dict) -> dict`` applied."""
    with tarfile.open(src, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar}
    members = edit(members)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dst.write_bytes(buf.getvalue())
    return dst


def test_unpack_refuses_partial_and_corrupt_archives_before_writing(tmp_path, monkeypatch):
    (a,) = finished("cross_entropy")
    (path,) = runs.pack([a.key], tmp_path / "good")
    raw = path.read_bytes()
    manifest = lambda m: json.loads(m["MANIFEST.json"])  # noqa: E731
    rec = f"runs/{a.key}/record.json"
    logits = f"runs/{a.key}/logits.npz"

    def set_manifest(m, edit):
        man = manifest(m)
        edit(man)
        m["MANIFEST.json"] = json.dumps(man).encode()
        return m

    def reseed(m):  # a record whose configuration no longer hashes to its key
        r = json.loads(m[rec])
        r["config"]["seed"] = 7
        m[rec] = json.dumps(r).encode()
        return set_manifest(m, lambda man: man["runs"][a.key]["record.json"].update(
            sha256=archive._sha256(m[rec]), bytes=len(m[rec])))

    def write(name, data):
        (tmp_path / name).write_bytes(data)
        return tmp_path / name

    bad = {
        "truncated": (lambda: write("t.tar.gz", raw[: len(raw) // 2]), "truncated or corrupt"),
        "not gzip": (lambda: write("n.tar.gz", b"hello"), "truncated or corrupt"),
        "no manifest": (lambda: _rewrite(path, tmp_path / "m.tar.gz", lambda m: {k: v for k, v in m.items()
                                                                                 if k != "MANIFEST.json"}),
                        "no MANIFEST.json"),
        "missing member": (lambda: _rewrite(path, tmp_path / "x.tar.gz", lambda m: {k: v for k, v in m.items()
                                                                                    if k != logits}),
                           "members missing"),
        "extra member": (lambda: _rewrite(path, tmp_path / "e.tar.gz", lambda m: {**m, "runs/evil.sh": b"rm"}),
                         "not in the manifest"),
        "altered logits": (lambda: _rewrite(path, tmp_path / "a.tar.gz",
                                            lambda m: {**m, logits: m[logits][:-1] + b"x"}),
                           "does not match its checksum"),
        "other package": (lambda: _rewrite(path, tmp_path / "r.tar.gz", reseed), "another version of the package"),
        "format": (lambda: _rewrite(path, tmp_path / "f.tar.gz",
                                    lambda m: set_manifest(m, lambda man: man.update(format="other/9"))),
                   "is not 'replicate-runs/1'"),
    }
    use_new_results(monkeypatch, tmp_path, "elsewhere")
    for what, (make, message) in bad.items():
        p = make()
        with pytest.raises(ValueError, match=message) as err:
            runs.unpack([p])
        assert "\n" not in str(err.value), what
        assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").rglob("record.json")), what


def test_unpack_refuses_a_different_run_under_the_same_key_unless_replace(tmp_path, monkeypatch):
    (a,) = finished("cross_entropy")
    (path,) = runs.pack([a.key], tmp_path / "p")
    use_new_results(monkeypatch, tmp_path, "elsewhere")
    runs.unpack([path])
    target = runs.load(a.key, store="results").path / "record.json"
    record = json.loads(target.read_text())
    record["wall_time"] += 1.0  # the same configuration trained again (another GPU run)
    target.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="already in results with different contents"):
        runs.unpack([path])
    assert json.loads(target.read_text())["wall_time"] == record["wall_time"]
    assert runs.unpack([path], replace=True)["written"] == [a.key]
    assert files_of(runs.load(a.key, store="results")) == files_of(a)


def test_cli_pack_and_unpack(tmp_path, monkeypatch, capsys):
    (a,) = finished("cross_entropy")
    assert cli.main(["runs", "pack", a.key, "--output", str(tmp_path / "c")]) == 0
    assert "replicate runs unpack c.tar.gz" in capsys.readouterr().out
    use_new_results(monkeypatch, tmp_path, "elsewhere")
    assert cli.main(["runs", "unpack", str(tmp_path / "c.tar.gz")]) == 0
    assert "1 runs written" in capsys.readouterr().out
    (tmp_path / "bad.tar.gz").write_bytes(gzip.compress(b"not a tar"))
    assert cli.main(["runs", "unpack", str(tmp_path / "bad.tar.gz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a complete runs archive" in err
    assert cli.main(["runs", "pack", "--output", str(tmp_path / "none")]) == 2
    assert "nothing to pack" in capsys.readouterr().err


# ----------------------------------------------------------------------------- time budget
def fake_clock(monkeypatch, start=1000.0):
    """A monotonic clock for the engine and the session that moves only when told to."""
    import time as real

    now = [start]
    fake = types.SimpleNamespace(monotonic=lambda: now[0], perf_counter=real.perf_counter, time=real.time,
                                 sleep=real.sleep)
    monkeypatch.setattr(training.engine, "time", fake)
    monkeypatch.setattr(session, "time", fake)
    return now


def advance_after_each_epoch(monkeypatch, now, seconds):
    real_train = training.train

    def train(*a, **k):
        def tick(epoch, row):
            now[0] += seconds
        return real_train(*a, **k, on_epoch_end=tick)

    monkeypatch.setattr(training, "train", train)
    return real_train


def test_train_within_pauses_at_the_budget_and_resumes_to_the_same_runs(tmp_path, monkeypatch):
    cfgs = {(m, 1): smoke(m, options={"epochs": 3}) for m in ("cross_entropy", "adafocal")}
    now = fake_clock(monkeypatch)
    real_train = advance_after_each_epoch(monkeypatch, now, 100.0)  # every epoch "takes" 100 s
    first = runs.train_within(cfgs, 150.0, store="results", progress="none", deterministic=True, log=None)
    # run 1: after two epochs the clock reads 200 s > 150 s -> epoch 3 does not start; run 2 not started
    assert not first.complete and first.paused == cfgs[("cross_entropy", 1)].key
    assert first.paused_at == "after epoch 2/3" and first.not_started == [cfgs[("adafocal", 1)].key]
    assert runs.checkpoint_path(first.paused).exists()
    second = runs.train_within(cfgs, 1000.0, store="results", progress="none", deterministic=True, log=None)
    assert second.complete and second.trained == [c.key for c in cfgs.values()]
    resumed = runs.find(cfgs[("cross_entropy", 1)])
    assert resumed.provenance["resumed_from_epoch"] == 2 and resumed.provenance["engine"] == "eager"
    monkeypatch.setattr(training, "train", real_train)
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "uninterrupted"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache2"))
    straight = runs.get_or_train(cfgs[("cross_entropy", 1)], store="results", progress="none", deterministic=True)
    assert np.array_equal(straight.logits("test")[0], resumed.logits("test")[0])
    assert straight.metrics == resumed.metrics


def test_cli_train_plan_exit_status_and_plan_listing(capsys, monkeypatch):
    now = fake_clock(monkeypatch)
    advance_after_each_epoch(monkeypatch, now, 100.0)
    args = ["exp_focal_loss", "--profile", "smoke", "-p", "methods", "['cross_entropy', 'fl3']",
            "-p", "text_dataset", "None", "-p", "device", "cpu"]
    assert cli.main(["runs", "train-plan", *args, "--progress", "none", "--time-budget", "50"]) == 3
    out = capsys.readouterr().out  # run 1 (one epoch) ends at 100 s > 50 s: run 2 is not started
    assert "1/2 runs finished" in out and "(not started)" in out and "run the same command again" in out
    assert cli.main(["runs", "train-plan", *args, "--progress", "none"]) == 0
    assert "2/2 runs finished" in capsys.readouterr().out
    assert cli.main(["runs", "plan", *args]) == 0
    assert "2/2 distinct runs finished" in capsys.readouterr().out
    assert cli.main(["runs", "train-plan", "exp_focal_loss", "-p", "methods", "['nope']"]) == 2
    assert "unknown method" in capsys.readouterr().err


def test_engine_is_recorded_and_not_part_of_the_key():
    cfg = smoke("cross_entropy")
    run = runs.get_or_train(cfg, progress="none", engine="static")
    assert run.provenance["engine"] == "static" and run.key == cfg.key
    assert "engine" not in run.resolved["train"] and "memory_format" not in run.resolved["train"]
    with pytest.raises(ValueError, match="engine must be one of"):
        runs.get_or_train(smoke("focal"), engine="turbo")
    with pytest.raises(ValueError, match="allowed options"):
        RunConfig("cifar10", options={"engine": "graph"}).resolve()
