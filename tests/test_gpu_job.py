"""The GPU job rehearsed on the CPU (issue #20, item 1): the global queue's order, two
trainings at once, the time budget, resume after a kill, pack and unpack - the real code
at the smoke profile on the session's generated data, so GPU time is never spent on a bug.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicate import cli, experiments, runs, sweep
from replicate.runs import RunConfig
from replicate.gpu_loan import deadline, device_chapter, job, queue, travel

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def stores(tmp_path, monkeypatch):
    """Private run stores; the session's data directory (generated, or the real one)."""
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    runs.clear_data_cache()
    return tmp_path


def items(*specs, epochs=1):
    """Queue items of smoke runs: ``(loss, params)`` pairs, in this priority order."""
    out = []
    for i, (loss, params) in enumerate(specs):
        cfg = RunConfig("cifar10", loss, params, profile="smoke", options={"epochs": epochs})
        out.append(queue.Item("b", "test", "image", f"m{i}", 1, cfg))
    return out


# ----------------------------------------------------------------------------- the queue
def test_queue_holds_every_planned_run_once_in_step_order():
    q = queue.build("smoke")
    order = "".join(queue.STEPS)
    assert [order.index(it.step) for it in q] == sorted(order.index(it.step) for it in q)
    assert len({it.key for it in q}) == len(q)
    first = q[0]
    assert (first.step, first.chapter, first.method, first.seed) == ("a", "exp_leaderboard", "cross_entropy", 1)
    planned = set()
    for chapter in experiments.CHAPTERS:
        planned |= set(sweep.sweep_plan(chapter, {}, "smoke")[2].configs())
    assert planned == {it.key for it in q}
    # a run planned by several chapters sits at its earliest step
    b_keys = set(sweep.sweep_plan("exp_focal_loss", {}, "smoke")[2].configs())
    assert all(it.step in "abd" for it in q if it.key in b_keys)
    assert [it.key for it in queue.build("smoke", "ca")] == [it.key for it in q if it.step in "ac"]


@pytest.mark.parametrize("args, step", [
    (("exp_leaderboard", "image", "cross_entropy", 1, "cifar10"), "a"),
    (("exp_leaderboard", "image", "cross_entropy", 2, "cifar10"), "e"),
    (("exp_focal_loss", "image", "fl3", 1, "cifar10"), "b"),
    (("exp_focal_loss", "text", "fl3", 1, "20newsgroups"), "d"),
    (("exp_adafocal", "image", "adafocal_code", 1, "cifar10"), "c"),
    (("exp_fcl", "history", "fcl", 1, "cifar10"), "c"),
    (("exp_adafocal", "bins", "adafocal_b5", 1, "cifar10"), "f"),
    (("exp_fts", "image", "fl5", 2, "cifar10"), "f"),
])
def test_step_of(args, step):
    assert queue.step_of(*args) == step


@pytest.mark.parametrize("bad", ["", "ax", "aa", 3])
def test_bad_steps_are_one_line(bad):
    with pytest.raises(ValueError, match="steps must be distinct letters of abcdef"):
        queue.check_steps(bad)


def test_gpu_profile_fits_about_two_loans_and_its_pilot_is_committed():
    """Issue #20, item 4: one seed of every CIFAR-10 method of steps a-c in about two
    15-minute loans (three at most) at the measured throughput; the cross-entropy pilot
    of the profile is a committed run."""
    abc = queue.build("gpu", "abc")
    assert 25 <= len(abc) <= 40
    assert queue.sizing(abc, mps=True)["loans"] <= 2
    assert queue.sizing(abc, mps=False)["loans"] <= 3
    assert queue.sizing(abc, mps=True, images_per_second_mps=20_000)["loans"] > 2    # the arithmetic is live
    with pytest.raises(ValueError, match="unknown sizing assumption"):
        queue.sizing(abc, speed=2)
    pilot = abc[0]
    assert pilot.step == "a" and pilot.config.loss == "cross_entropy"
    run = runs.find(pilot.config)
    assert run is not None and run.store == "results" and run.resolved["model"] == "resnet18"


# ----------------------------------------------------------------------------- the runner
def test_runner_starts_in_priority_order_and_defers_what_would_not_fit(stores):
    its = items(("cross_entropy", {}), ("focal", {"gamma": 2.0}), ("brier", {}), ("focal", {"gamma": 3.0}))
    configs = {it.key: it.config for it in its}
    cost = {its[0].key: 0.0, its[1].key: 0.0, its[2].key: 1e6, its[3].key: 0.0}
    admission = deadline.Admission(time.monotonic() + 600, cost.__getitem__)
    s = sweep.run_local(configs, stores / "logs", 2, "cpu", quiet=True, per_gpu=2, deadline=admission.deadline,
                        defer=admission.defer, on_row=admission.finished)
    frame = s.frame().set_index("key")
    assert list(frame.status[[it.key for it in its]]) == ["trained", "trained", "deferred", "deferred"]  # not skipped over
    assert set(frame.reason[[its[2].key, its[3].key]]) == {deadline.NOT_STARTED}
    assert not s.ok
    with pytest.raises(ValueError, match="per_gpu must be a positive integer"):
        sweep.run_local(configs, stores / "logs", 1, "cpu", per_gpu=0)


def test_the_budget_gives_the_runner_its_deadline_and_hard_stop_and_admits_what_still_fits():
    """The deadline is the budget less the packing reserve, the hard stop comes after it; the
    chapter's seconds are reserved only while enough training is left; a run is admitted
    while its estimate, scaled by how long the finished runs really took, fits."""
    b = deadline.Budget(540, start=1000.0)
    assert (b.deadline, b.hard_stop) == (1000 + 540 - deadline.PACK_RESERVE, b.deadline + deadline.HARD_STOP_AFTER)
    assert not deadline.Budget(300, start=0.0).reserve(240, keep=60) and b.reserve(240, keep=60)
    assert b.deadline == 1000 + 540 - deadline.PACK_RESERVE - 240
    for bad in (True, "540", deadline.PACK_RESERVE + 5):
        with pytest.raises(ValueError, match="budget must be a number of seconds"):
            deadline.Budget(bad)
    now = [0.0]
    a = deadline.Admission(100.0, {"a": 10.0, "b": 10.0, "c": 10.0, "d": 0.0}.__getitem__, clock=lambda: now[0])
    assert a.defer("a") is None and a.defer("b") is None
    now[0] = 40.0
    a.finished({"key": "a", "status": "trained"})       # 40 s for 10 estimated: ratio 4
    a.finished({"key": "b", "status": "paused"})        # no ratio from a run that did not finish
    assert a.ratios == [4.0]
    assert a.defer("c") is None                         # 40 + 4 x 10 = 80 fits
    now[0] = 70.0
    assert a.defer("c") == deadline.NOT_STARTED         # 70 + 40 does not
    assert a.defer("d") is None                         # no estimate: starts


def test_core_sets_split_the_cores():
    assert sweep.execute.core_sets(2, range(16)) == [list(range(8)), list(range(8, 16))]
    assert sweep.execute.core_sets(3, range(4)) == [[0, 1], [2], [3]]
    assert sweep.execute.core_sets(3, [0, 1]) == [[0], [1], [0]]


# ----------------------------------------------------------------------------- the job
_KILLED_JOB = """
import sys
from pathlib import Path
from replicate.gpu_loan import job
from test_gpu_job import items
its = items(("focal", {"gamma": 3.0}), ("cross_entropy", {}), epochs=int(sys.argv[2]))
job.run(Path(sys.argv[1]), profile="smoke", budget=600, workers=2, device="cpu", items=its)
"""


def test_job_killed_then_resumed_packs_runs_that_unpack_into_results(stores, monkeypatch):
    epochs = 30
    its = items(("focal", {"gamma": 3.0}), ("cross_entropy", {}), epochs=epochs)
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'tests'}{os.pathsep}{REPO}"}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_JOB, str(stores / "out1"), str(epochs)], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    ckpt = runs.checkpoint_path(its[0].key)
    limit = time.time() + 240
    while not ckpt.exists() and time.time() < limit and proc.poll() is None:
        time.sleep(0.2)
    assert ckpt.exists(), proc.communicate()[0]
    os.killpg(proc.pid, signal.SIGKILL)                       # the machine's command is cut off
    proc.wait(timeout=60)
    assert runs.find(its[0].config) is None

    lines = []
    status = job.run(stores / "out2", profile="smoke", budget=600, workers=2, device="cpu", items=its,
                     echo=lines.append)
    assert status == job.DONE, "\n".join(lines)
    first = runs.find(its[0].config)
    assert first is not None and first.provenance["resumed_from_epoch"] >= 1
    assert runs.find(its[1].config) is not None
    log = (stores / "out2" / "gpu-job.log").read_text()
    assert "device cpu" in log and "2 trainings at once" in log and "pack: 2 runs" in log
    archives = sorted((stores / "out2").glob("gpu-runs*.tar.gz"))
    assert [p.name for p in archives] == ["gpu-runs.tar.gz"]
    assert len(list((stores / "out2").iterdir())) <= 8

    monkeypatch.setenv("REPLICATE_RESULTS", str(stores / "elsewhere"))
    assert cli.main(["runs", "unpack", *map(str, archives)]) == 0
    for it in its:
        back = runs.load(it.key, store="results")
        record = json.loads((back.path / "record.json").read_text())
        assert record["key"] == it.key and record["logits_dtype"] == "float16"   # compact, as results/ keeps them


def test_job_out_of_budget_defers_and_says_call_again(stores):
    its = items(("cross_entropy", {}), ("brier", {}))
    lines = []
    status = job.run(stores / "out", profile="smoke", budget=deadline.PACK_RESERVE + 6, workers=1, device="cpu",
                     items=its, echo=lines.append)
    text = "\n".join(lines)
    assert status == job.MORE, text
    assert "call again" in text and "deferred" in text


@pytest.mark.parametrize("kw, message", [
    ({"budget": 10}, "budget must be a number of seconds"),
    ({"workers": 0}, "workers must be a positive integer"),
    ({"mps": "yes"}, "mps must be one of auto, on, off"),
    ({"steps": "xyz"}, "steps must be distinct letters"),
    ({"profile": "laptop"}, "unknown profile 'laptop'"),
])
def test_bad_job_input_fails_before_any_work(stores, kw, message):
    with pytest.raises(ValueError, match=message):
        job.run(stores / "out", device="cpu", **kw)
    assert not (stores / "out").exists()


def test_cli_lists_the_queue_with_its_device_time(capsys):
    assert cli.main(["gpu-job", "--list", "--profile", "smoke", "--steps", "ab"]) == 0
    out = capsys.readouterr().out
    assert "step a (cross-entropy pilot" in out and "step b (" in out and "loans)" in out


def test_stale_runs_are_the_committed_runs_no_chapter_plans_and_never_the_pilot(stores, monkeypatch):
    """runs prune's list (issue #25): a committed run of a profile that no chapter plans is
    stale; a planned one is not; the gpu profile's pilot runs are kept as evidence."""
    import shutil

    from replicate import protocol

    monkeypatch.setenv("REPLICATE_RESULTS", str(REPO / "results"))
    assert queue.stale("cpu") == []                         # the committed cpu runs are all planned
    assert not set(protocol.gpu_pilot()["key"]) & set(queue.stale("gpu"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(stores / "results"))
    planned = queue.build("smoke", "a")[0].config
    orphan = RunConfig("cifar10", "focal", {"gamma": 4.5}, profile="smoke", options={"epochs": 1})
    for cfg in (planned, orphan):
        run = runs.get_or_train(cfg, store="cache", progress="none", device="cpu")
        shutil.copytree(run.path, stores / "results" / "runs" / run.key)
    assert queue.stale("smoke") == [orphan.key]
    assert cli.main(["runs", "prune", "--profile", "smoke"]) == 0
    assert runs.find(orphan) is None or runs.find(orphan).store == "cache"
    assert (stores / "results" / "runs" / planned.key).exists()


def test_travel_hides_other_profiles_logits_for_the_call_and_restores_them(tmp_path):
    import json
    import subprocess

    from replicate.gpu_loan import travel

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    for key, profile in (("a1", "cpu"), ("b2", "gpu"), ("c3", "smoke")):
        run = tmp_path / "results" / "runs" / key
        run.mkdir(parents=True)
        (run / "record.json").write_text(json.dumps({"config": {"profile": profile}}))
        (run / "logits.npz").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("/.gpu-carry/\n")          # as in the repository
    git("add", "-A")
    git("commit", "-qm", "runs")
    fresh = tmp_path / "results" / "runs" / "d4"          # trained, not committed yet
    fresh.mkdir()
    (fresh / "record.json").write_text(json.dumps({"config": {"profile": "cpu"}}))
    (fresh / "logits.npz").write_bytes(b"z" * 100)

    def travelling():   # what the device tool sends: tracked plus untracked-not-ignored files
        return set(git("ls-files", "--cached", "--others", "--exclude-standard").split())

    before = travelling()
    hidden = travel.hide(tmp_path)
    assert sorted(hidden) == ["results/runs/a1/logits.npz", "results/runs/c3/logits.npz", "results/runs/d4/logits.npz"]
    assert travelling() == before - set(hidden)
    assert "results/runs/b2/logits.npz" in travelling() and "results/runs/a1/record.json" in travelling()
    assert all((tmp_path / p).is_file() for p in hidden)           # the files themselves are untouched
    assert travel.hide(tmp_path) == hidden and travel.hidden(tmp_path) == hidden   # idempotent
    assert travel.restore(tmp_path) == 3
    assert travelling() == before and git("status", "--porcelain") == "?? results/runs/d4/\n"
    assert travel.restore(tmp_path) == 0 and travel.hidden(tmp_path) == []
    # --with-chapter keeps the chapter's runs by key; another choice restores, then hides anew
    assert sorted(travel.hide(tmp_path, keep=(), keep_keys=["a1"])) == [
        "results/runs/b2/logits.npz", "results/runs/c3/logits.npz", "results/runs/d4/logits.npz"]
    assert "results/runs/a1/logits.npz" in travelling() and "results/runs/b2/logits.npz" not in travelling()
    assert sorted(travel.hide(tmp_path, keep=())) == sorted(
        f"results/runs/{k}/logits.npz" for k in ("a1", "b2", "c3", "d4"))
    assert travel.restore(tmp_path) == 4 and travelling() == before
    (tmp_path / "code.py").write_text("x = 2\n")
    git("add", "code.py")                                            # staged work: hiding refuses, changes nothing
    with pytest.raises(RuntimeError, match="staged changes"):
        travel.hide(tmp_path)
    assert travelling() == before


def test_stage_copies_exactly_what_travels_and_the_check_measures_it(tmp_path):
    """`gpu-job --stage DIR` (make gpu-job-twin) must give the rehearsal the machine's view:
    tracked and untracked-not-ignored files plus .gpu-carry/, byte for byte, without the
    logits hide() keeps off and without ignored files; the size it reports is the check's."""
    import json
    import subprocess

    from replicate.gpu_loan import travel

    root = tmp_path / "checkout"
    root.mkdir()

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (root / ".gitignore").write_text("/.gpu-carry/\n.cache/\n")
    run = root / "results" / "runs" / "a1"
    run.mkdir(parents=True)
    (run / "record.json").write_text(json.dumps({"config": {"profile": "cpu"}}))
    (run / "logits.npz").write_bytes(b"L" * 3000)
    (root / "pkg").mkdir()
    (root / "pkg" / "code.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-qm", "c")
    (root / "notes.md").write_text("untracked, not ignored\n")                 # travels
    (root / ".cache").mkdir()
    (root / ".cache" / "big.bin").write_bytes(b"c" * 5000)                      # ignored: stays
    (root / ".gpu-carry" / "data").mkdir(parents=True)
    (root / ".gpu-carry" / "data" / "archive.tar.gz").write_bytes(bytes(range(256)) * 8)   # carried
    assert travel.hide(root, keep=()) == ["results/runs/a1/logits.npz"]

    dest = tmp_path / "staged"
    size = travel.stage(root, dest)
    got = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    tree = set(git("ls-files", "--cached", "--others", "--exclude-standard").split())
    carried = {p.relative_to(root).as_posix() for p in (root / ".gpu-carry").rglob("*") if p.is_file()}
    assert got == tree | carried
    assert "notes.md" in got and ".gpu-carry/data/archive.tar.gz" in got
    assert "results/runs/a1/logits.npz" not in got and ".cache/big.bin" not in got
    assert all((dest / r).read_bytes() == (root / r).read_bytes() for r in got)
    assert size == pytest.approx(sum((root / r).stat().st_size for r in got) / 2**20)
    assert size == pytest.approx(travel.mib(travel.files(root)))
    assert travel.mib(travel.files(root, carry=None)) < size                    # the tree alone
    with pytest.raises(ValueError, match="already exists"):
        travel.stage(root, dest)                                                # never mixes two stages
    with pytest.raises(ValueError, match="inside the checkout"):
        travel.stage(root, root / "sub")
    assert not (root / "sub").exists()
    assert travel.restore(root) == 1


def test_carry_keeps_only_this_calls_archives(tmp_path):
    """What a rehearsal unpacked into .gpu-carry/data (a 20news-bydate/ folder, decoded
    arrays) and a data set that does not fit this time must not travel."""
    from replicate.gpu_loan import travel

    data = tmp_path / "data"
    (data / "20news-bydate" / "20news-bydate-train").mkdir(parents=True)
    (data / "20news-bydate" / "20news-bydate-train" / "1").write_text("doc")
    for name in ("cifar10-jpeg.tar.gz", "cifar10-jpeg.npz", "20news-bydate.tar.gz"):
        (data / name).write_bytes(b"x")
    assert sorted(travel.prune_carry(data, {"cifar10-jpeg.tar.gz"})) == [
        "20news-bydate.tar.gz", "20news-bydate/", "cifar10-jpeg.npz"]
    assert [p.name for p in data.iterdir()] == ["cifar10-jpeg.tar.gz"]
    assert travel.prune_carry(data, {"cifar10-jpeg.tar.gz"}) == []
    assert travel.prune_carry(tmp_path / "absent", set()) == []


def test_image_twin_holds_only_the_gpu_images_packages():
    """benchmarks/image_twin.txt (make gpu-job-twin) rehearses on the image's packages alone:
    anything else there (jupytext, papermill, gensim) would hide a missing wheel."""
    import re

    from replicate.gpu_loan import wheels

    wl = wheels.read_list()
    lines = [ln.split("#")[0].strip() for ln in (REPO / "benchmarks" / "image_twin.txt").read_text().splitlines()]
    pins = dict(re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", ln).groups() for ln in lines if ln)
    names = {wheels.normalize(n) for n in pins}
    assert names <= wl.image, names - wl.image
    assert not names & {p.name for p in wl.pins}
    assert pins["torch"] == "2.11.0" and pins["numpy"].startswith("2.5.")   # KINDS.md's pip list


def test_job_leaves_runs_whose_data_is_not_carried_and_refuses_only_when_none_can_train(tmp_path, monkeypatch):
    """The 20 Newsgroups archive (or gensim) missing on the GPU machine must not cost the loan:
    its runs wait, one log line says why; only when no run's data is at hand does the job
    stop, in one line."""
    import shutil

    from replicate import config

    data, source = tmp_path / "data", config.data_dir() / "cifar-10-batches-py"
    if not source.is_dir():
        pytest.skip("the session's data directory has no decoded CIFAR-10 folder to copy")
    shutil.copytree(source, data / "cifar-10-batches-py")
    monkeypatch.setenv("REPLICATE_DATA", str(data))
    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    image = items(("cross_entropy", {}))
    text = [queue.Item("d", "test", "text", "m9", 1, RunConfig("20newsgroups", "cross_entropy", {}, profile="smoke"))]
    lines = []
    assert job.trainable(image + text, lines.append) == image
    assert len(lines) == 1 and lines[0].startswith("data: left for a later loan: 20 Newsgroups: expected")
    with pytest.raises(FileNotFoundError, match="^replicate gpu-job: 1 data set missing"):
        job.trainable(text, lines.append)


def test_travel_carries_data_sets_in_queue_order_while_the_whole_fits():
    """The 20 Newsgroups archive and gensim's wheel do not fit beside the CIFAR-10 archive:
    a loan carries the first data set of the queue, and the other one waits with its size
    and the command that prepares a loan of its runs alone; a tier shared by two data sets
    counts once."""
    sizes = {"cifar10": (18.5, {}), "20newsgroups": (13.8, {"text": 26.6})}
    alone = {"20newsgroups": "make gpu-job-check GPU_JOB_ARGS='--steps d'"}
    carried, left = travel.choose_data(["cifar10", "20newsgroups"], 12.0, sizes, alone=alone)
    assert carried == ["cifar10"] and list(left) == ["20newsgroups"]
    assert left["20newsgroups"].startswith("does not fit beside cifar10: 70.9 MiB of 64 MiB with its archive "
                                           "(13.8 MiB) and text wheels (26.6 MiB)")
    assert left["20newsgroups"].endswith("`make gpu-job-check GPU_JOB_ARGS='--steps d'`")
    # text first (queue step d once a-c are finished): CIFAR-10 waits
    assert travel.choose_data(["20newsgroups", "cifar10"], 12.0, sizes)[0] == ["20newsgroups"]
    assert travel.choose_data(["20newsgroups"], 12.0, sizes) == (["20newsgroups"], {})
    # what fits exactly travels; a data set after one that did not fit may still fit
    small = {"a": (30.0, {"t": 10.0}), "b": (40.0, {}), "c": (2.0, {"t": 10.0})}
    assert travel.choose_data(["a", "b", "c"], 12.0, small, limit_mib=54.0) == (["a", "c"], {
        "b": "does not fit beside a: 92.0 MiB of 54 MiB with its archive (40.0 MiB)"})
    assert travel.choose_data(["b"], 30.0, small)[1]["b"] == \
        "does not fit: 70.0 MiB of 64 MiB with its archive (40.0 MiB)"


def test_wheel_tier_sizes_count_the_pinned_wheels_present(tmp_path):
    from replicate.gpu_loan import wheels

    folder = tmp_path / "wheels"
    probe, other = tiny_wheel(folder, "probe", "1.0"), tiny_wheel(folder, "stray", "2.0")
    wl = wheels.WheelList((wheels.Pin("probe", "1.0", "text"), wheels.Pin("absent", "1.0", "job")), {}, frozenset())
    assert wheels.tier_sizes(folder, wl) == pytest.approx({"text": probe.stat().st_size / 2**20})
    assert other.exists()


def test_text_data_is_prepared_once_per_data_options_so_workers_read_the_vectors(tmp_path, monkeypatch):
    """prepare_data trains word2vec once for each distinct set of the text runs' data
    options; a worker's later load (a fresh process: nothing in memory) reads the cached
    vectors instead of training again."""
    from replicate.data import embeddings
    from replicate.runs.build import load_data
    from test_text_embeddings import write_news

    (tmp_path / "data").mkdir()
    write_news(tmp_path / "data" / "20news-bydate.tar.gz")
    for var, sub in (("REPLICATE_DATA", "data"), ("REPLICATE_CACHE", "cache"), ("REPLICATE_RESULTS", "results")):
        monkeypatch.setenv(var, str(tmp_path / sub))
    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    runs.clear_data_cache()
    calls = []
    real = embeddings.word2vec_matrix
    monkeypatch.setattr(embeddings, "word2vec_matrix", lambda *a, **k: calls.append(1) or real(*a, **k))

    def text_item(loss, **data):
        cfg = RunConfig("20newsgroups", loss, {}, profile="smoke",
                        data_params={"val_size": 1, "max_len": 4, "embed_dim": 6, **data})
        return queue.Item("d", "test", "text", loss, 1, cfg)

    todo = [text_item("cross_entropy"), text_item("focal"), text_item("cross_entropy", split_seed=7)]
    lines = []
    job.prepare_data(todo, lines.append)
    assert len(calls) == 2 and lines == [lines[0]] and "2 set(s) of data options" in lines[0]
    for it in todo:
        runs.clear_data_cache()
        load_data(it.config.resolve())
    assert len(calls) == 2


# ----------------------------------------------------------------------------- wheels and the chapter (item 6)
def tiny_wheel(folder: Path, name: str = "gpujob_probe", version: str = "1.0", requires=()) -> Path:
    """A pure-Python wheel made on the spot: ``name`` with ``VALUE = 42``."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": "VALUE = 42\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                 + "".join(f"Requires-Dist: {r}\n" for r in requires),
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, text in files.items():
            zf.writestr(arc, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{arc},,\n" for arc in files) + f"{info}/RECORD,,\n")
    return path


def test_wheel_list_pins_the_lock_and_leaves_nothing_to_chance():
    """benchmarks/gpu_wheels.txt: the versions of requirements.lock, one of each, none of
    them on the GPU image or left out; the job's tier reads the chapters' sources."""
    import re

    from replicate.gpu_loan import wheels

    wl = wheels.read_list()
    lock = {wheels.normalize(m.group(1)): m.group(2)
            for m in re.finditer(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", (REPO / "requirements.lock").read_text(), re.M)}
    pins = {p.name: p for p in wl.pins}
    assert {p.tier for p in wl.pins} == set(wheels.TIERS)
    assert {"jupytext", "nbformat"} <= {p.name for p in wl.wanted(("job",))}
    assert {"papermill", "ipykernel", "myst-nb"} <= {p.name for p in wl.wanted(("chapter",))}
    assert {"gensim", "smart-open"} <= {p.name for p in wl.wanted(("text",))}   # word2vec for 20 Newsgroups
    assert all(lock[n] == p.version for n, p in pins.items() if n in lock), \
        {n: (p.version, lock[n]) for n, p in pins.items() if n in lock and lock[n] != p.version}
    assert not set(pins) & wl.image and not set(pins) & set(wl.left_out)
    assert {"torch", "numpy", "pandas", "pyyaml", "markdown-it-py"} <= wl.image
    with pytest.raises(ValueError, match="wheel tiers must be among"):
        wl.wanted(("book",))


def test_wheels_install_once_activate_and_report_unmet_requirements(tmp_path, monkeypatch):
    from replicate.gpu_loan import wheels

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "elsewhere")
    folder = tmp_path / "wheels"
    tiny_wheel(folder, requires=["numpy>=1", "no-such-dist-xyz>=2", "colorama; sys_platform == 'win32'",
                                 "sphinx>=5", "pytest-gpujob-probe; extra == 'test'"])
    wl = wheels.WheelList((), {"sphinx": "not imported"}, frozenset({"numpy"}))
    gaps = wheels.unmet(folder, wl)
    assert gaps["missing"] == [("gpujob-probe", "no-such-dist-xyz>=2")]      # markers and extras of the machine
    assert gaps["image"] == {"numpy": ["gpujob-probe"]} and gaps["left_out"] == {"sphinx": ["gpujob-probe"]}
    probe = folder / "gpujob_probe-1.0-py3-none-any.whl"
    other = tmp_path / "other" / "gpujob_other-1.0-cp27-cp27mu-manylinux1_x86_64.whl"
    other.parent.mkdir()
    other.write_bytes(probe.read_bytes())
    assert wheels.lacking(folder) == ([probe], []) and wheels.lacking(other.parent) == ([], [other])
    target = tmp_path / "site"
    first = wheels.install(folder, target)
    assert first["installed"] and first["wheels"] == 1 and (target / "gpujob_probe" / "__init__.py").is_file()
    assert wheels.install(folder, target)["installed"] is False            # the same set: nothing to do
    wheels.activate(target)
    assert os.environ["PYTHONPATH"] == f"{target}{os.pathsep}elsewhere"
    import gpujob_probe

    assert gpujob_probe.VALUE == 42
    assert wheels.lacking(folder) == ([], [])                                # installed here now
    assert wheels.check_installed(folder, wl) == ["gpujob-probe needs no-such-dist-xyz>=2: not installed"]
    assert wheels.install(tmp_path / "none", target) == {"wheels": 0, "seconds": 0.0, "installed": False}


def _no_jupyter_python(tmp_path) -> str:
    """A Python without site-packages: the GPU image's python3 as far as Jupyter goes."""
    fake = tmp_path / "python-bare"
    fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    fake.chmod(0o755)
    return str(fake)


def test_chapter_step_is_skipped_with_one_line_per_reason(stores, tmp_path):
    """Issue #20, item 6: no chapter runs finished, no Jupyter stack: the job says both, in
    one line each, and executes nothing; without a chapter nothing of it happens."""
    lines = []
    status = job.run(stores / "out", profile="smoke", budget=600, workers=1, device="cpu", items=[],
                     echo=lines.append, chapter="exp_focal_loss", wheel_dir=stores / "no-wheels",
                     python=_no_jupyter_python(tmp_path))
    assert status == job.DONE
    skipped = [line for line in lines if line.startswith("chapter: ")]
    assert len(skipped) == 2, lines
    assert "skipped: no wheels:" in skipped[0] and "cannot import jupytext, nbformat, papermill" in skipped[0]
    assert "skipped: runs incomplete: 6 of the 6 runs of exp_focal_loss at smoke are not finished" in skipped[1]
    assert "would train them" in skipped[1]
    assert "wheels: none carried" in "\n".join(lines)
    assert not list((stores / "out").glob("*.ipynb"))
    lines.clear()
    job.run(stores / "out", profile="smoke", budget=600, workers=1, device="cpu", items=[], echo=lines.append)
    assert not [line for line in lines if line.startswith("chapter")]


def test_job_trains_the_chapter_runs_then_executes_the_chapter_on_them(stores, tmp_path, monkeypatch):
    """The real path at the smoke profile: the job trains the chapter's runs (2 processes),
    packs them, installs the carried wheels (here one tiny wheel, the local Python has the
    Jupyter stack) and executes the chapter by papermill into the output folder, training
    nothing there; a later call does not execute it again; too little time skips it."""
    import json as _json

    from replicate.sweep.plan import sweep_plan

    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    _, _, plan = sweep_plan("exp_focal_loss", {}, "smoke")
    its = [queue.Item(queue.step_of("exp_focal_loss", g, m, s, cfg.dataset), "exp_focal_loss", g, m, s, cfg)
           for g, cfgs in plan.groups.items() for (m, s), cfg in cfgs.items()]
    wheel_dir = tmp_path / "wheels"
    tiny_wheel(wheel_dir)
    lines = []
    status = job.run(stores / "out", profile="smoke", budget=600, workers=2, device="cpu", items=its,
                     echo=lines.append, chapter="exp_focal_loss", wheel_dir=wheel_dir, python=sys.executable)
    text = "\n".join(lines)
    assert status == job.DONE, text
    assert "wheels: 1 carried" in text and "installed into" in text
    assert "pack: 6 runs" in text
    done = [line for line in lines if line.startswith("chapter: exp_focal_loss executed at smoke")]
    assert done and "its 6 runs loaded, 0 trained: exp_focal_loss-smoke.ipynb" in done[0], text
    notebook = stores / "out" / "exp_focal_loss-smoke.ipynb"
    meta = _json.loads(notebook.read_text())["metadata"]["replicate"]
    assert meta["profile"] == "smoke" and meta["chapter"] == "exp_focal_loss"
    assert len(list((stores / "out").iterdir())) <= 8
    lines.clear()
    assert device_chapter.chapter_step(stores / "out2", lines.append, chapter="exp_focal_loss", profile="smoke") == "skipped"
    assert "done: an earlier call on this machine executed it" in lines[0]
    device_chapter._chapter_marker().unlink()
    lines.clear()
    assert device_chapter.chapter_step(stores / "out2", lines.append, chapter="exp_focal_loss", profile="smoke",
                            seconds_left=60) == "skipped"
    assert len(lines) == 1 and "skipped: not enough time: 55 s left" in lines[0]
