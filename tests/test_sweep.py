"""replicate sweep: the chapter's own plan, dry runs, a local process pool, Ctrl-C and
resume, and submitit jobs (its local executor: no Slurm needed) killed, requeued and
ending with the same result as an uninterrupted run.

Workers are separate processes, so they read real files: a small CIFAR-10 in the official
python-pickle format is generated in a temporary data directory.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import replicate as rp
from replicate import cli, runs, sweep
from replicate.runs import RunConfig
from needs import need
from test_data import write_cifar10

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """Private stores and a generated official-format CIFAR-10 (300 train, 60 test images)."""
    data = tmp_path / "data"
    write_cifar10(data, per_batch=60, n_test=60)
    for var, path in (("REPLICATE_DATA", data), ("REPLICATE_CACHE", tmp_path / "cache"),
                      ("REPLICATE_RESULTS", tmp_path / "results")):
        monkeypatch.setenv(var, str(path))
    monkeypatch.setenv("REPLICATE_OFFLINE", "1")
    runs.clear_data_cache()
    return tmp_path


_SLOW_EPOCHS = """
import os, time
if os.environ.get("TEST_EPOCH_PAUSE_S"):
    from replicate.training import checkpoint as _ckpt
    _save = _ckpt.atomic_save

    def atomic_save(obj, path):       # each epoch's checkpoint, after a pause
        time.sleep(float(os.environ["TEST_EPOCH_PAUSE_S"]))
        return _save(obj, path)

    _ckpt.atomic_save = atomic_save
"""


@pytest.fixture()
def paused_epochs(tmp_path, monkeypatch):
    """Every Python process started from here on (the sweep's workers, submitit's tasks) pauses
    before each epoch's checkpoint (a ``sitecustomize`` on ``PYTHONPATH``, this test's only):
    a signal sent once the first checkpoint exists lands while the run still trains, with a
    few epochs instead of a hundred racing ones. Returns a function that ends the pauses for
    processes started after it is called."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SLOW_EPOCHS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TEST_EPOCH_PAUSE_S", "0.5")
    return lambda: monkeypatch.delenv("TEST_EPOCH_PAUSE_S")


def tiny(loss="cross_entropy", epochs=1, **params):
    return RunConfig("cifar10", loss, params, profile="smoke", options={"epochs": epochs},
                     data_params={"val_size": 60})


# ----------------------------------------------------------------------------- planning
def test_dry_run_lists_the_chapters_own_runs_and_trains_nothing(env, capsys):
    assert cli.main(["sweep", "exp_focal_loss", "--profile", "smoke", "-p", "seeds", "[1, 2]", "--dry-run"]) == 0
    out = capsys.readouterr().out
    plan = rp.experiments.chapter_plan("exp_focal_loss", profile="smoke", seeds=[1, 2])
    assert all(key in out for key in plan.configs())
    assert "12 runs: 0 finished (skipped), 12 to train" in out
    assert not (env / "results").exists() and not (env / "cache" / "runs").exists()


@pytest.mark.parametrize("argv, message", [
    (["sweep", "exp_focal_loss", "-p", "epochs", "3"], "has no parameter 'epochs'"),
    (["sweep", "exp_focal_loss", "--profile", "laptop"], "unknown profile 'laptop'"),
    (["sweep", "theory_fts"], "trains nothing"),
    (["sweep", "exp_focal_loss", "--executor", "pbs"], "--executor must be one of local, slurm"),
    (["sweep", "exp_focal_loss", "--workers", "0"], "--workers must be a positive integer"),
])
def test_bad_input_is_one_line_before_any_work(env, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


# ----------------------------------------------------------------------------- local pool
def test_local_pool_trains_missing_runs_once_then_skips(env):
    cfgs = {c.key: c for c in (tiny(), tiny("focal", gamma=2.0), tiny("brier"))}
    s = sweep.run_local(cfgs, env / "logs", workers=2, device="cpu", quiet=True)
    assert s.counts()["trained"] == 3 and s.ok
    for key, cfg in cfgs.items():
        run = runs.find(cfg)
        assert run is not None and run.store == "cache"           # smoke runs never go to results/
        assert "finished:" in (env / "logs" / f"{key}.log").read_text()
    again = sweep.run_local(cfgs, env / "logs", workers=2, device="cpu", quiet=True)
    assert again.counts()["skipped"] == 3


def test_a_failing_run_is_reported_with_its_reason_and_the_others_finish(env, monkeypatch):
    bad = RunConfig("cifar10", "cross_entropy", profile="smoke", options={"epochs": 1},
                    data_params={"val_size": 100000})                 # more validation images than exist
    cfgs = {c.key: c for c in (tiny(), bad)}
    s = sweep.run_local(cfgs, env / "logs", workers=1, device="cpu", quiet=True)
    f = s.frame().set_index("key")
    assert f.loc[tiny().key, "status"] == "trained" and f.loc[bad.key, "status"] == "failed"
    assert f.loc[bad.key, "reason"] and not s.ok
    assert runs.find(bad) is None and not list((env / "cache" / "runs").glob(".tmp-*"))


_INTERRUPTIBLE = """
import sys
from pathlib import Path
from replicate import sweep
from replicate.runs import RunConfig
cfg = RunConfig("cifar10", "focal", {"gamma": 3.0}, profile="smoke", options={"epochs": 8},
                data_params={"val_size": 60})
s = sweep.run_local({cfg.key: cfg}, Path(sys.argv[1]), workers=1, device="cpu", quiet=True)
print("SUMMARY", s.line(), flush=True)
"""


def test_ctrl_c_stops_cleanly_and_a_rerun_resumes(env, paused_epochs):
    """SIGINT to the sweep's process group (what Ctrl-C sends) stops the worker mid-run: no
    finished record, the epoch checkpoint is kept, and the rerun resumes from it."""
    cfg = RunConfig("cifar10", "focal", {"gamma": 3.0}, profile="smoke", options={"epochs": 8},
                    data_params={"val_size": 60})
    # Ctrl-C's disposition is inherited: a library earlier in the test session may leave SIGINT
    # ignored in this process, and a child that starts with it ignored never sees Ctrl-C (as a
    # shell's background job does not); the sweep starts as from an interactive shell.
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTIBLE, str(env / "logs")], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ckpt = runs.checkpoint_path(cfg.key)
    deadline = time.time() + 120
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)    # 8 epochs, each paused 0.5 s: the signal lands before the last one
    assert ckpt.exists(), proc.communicate()[0]
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert "SUMMARY 1 stopped" in out, out
    assert runs.find(cfg) is None and ckpt.exists()
    paused_epochs()                                    # the rerun at full speed
    s = sweep.run_local({cfg.key: cfg}, env / "logs", workers=1, device="cpu", quiet=True)
    assert s.counts()["trained"] == 1
    assert runs.find(cfg).provenance["resumed_from_epoch"] >= 1


def test_the_defer_hook_keeps_a_run_and_every_run_after_it_from_starting(env):
    """``defer(key)``: a reason not to start the run, given in order before each start; the
    run and every one after it are reported ``deferred`` with that reason, nothing trains."""
    cfgs = {c.key: c for c in (tiny("cross_entropy"), tiny("brier"))}
    asked = []
    s = sweep.run_local(cfgs, env / "logs", workers=1, device="cpu", quiet=True,
                        defer=lambda key: asked.append(key) or "no time left")
    f = s.frame().set_index("key")
    assert asked == [next(iter(cfgs))]
    assert list(f.status) == ["deferred", "deferred"] and set(f.reason) == {"no time left"} and not s.ok
    assert all(runs.find(c) is None for c in cfgs.values())


def test_hard_stop_interrupts_what_still_trains_and_returns_in_time(env):
    """The GPU job's safety net (issue #20): a run still training at ``hard_stop`` (no
    epoch-boundary pause reached it: here no deadline at all) is interrupted, so the caller
    gets back within the grace and can pack before its time limit; the run is reported
    ``paused`` and writes no record, the one not started ``deferred``, and a worker that
    ignores SIGINT (inherited, as noted above) is killed."""
    from replicate.sweep.execute import STOP_GRACE

    endless = RunConfig("cifar10", "focal", {"gamma": 3.0}, profile="smoke", options={"epochs": 100000},
                        data_params={"val_size": 60})
    waiting = tiny("brier")
    cfgs = {endless.key: endless, waiting.key: waiting}
    stop = time.monotonic() + 10
    s = sweep.run_local(cfgs, env / "logs", workers=1, device="cpu", quiet=True, hard_stop=stop)
    assert time.monotonic() < stop + 2 * STOP_GRACE + 5
    f = s.frame().set_index("key")
    assert f.loc[endless.key, "status"] == "paused", f.loc[endless.key, "reason"]
    assert f.loc[endless.key, "reason"].startswith("stopped at the hard stop: resumes from its last finished epoch")
    assert f.loc[waiting.key, "status"] == "deferred" and not s.ok
    assert runs.find(endless) is None and runs.find(waiting) is None
    ckpt = runs.checkpoint_path(endless.key)        # rewritten after every (millisecond) epoch while it trains

    def stamp():
        return ckpt.stat().st_mtime_ns if ckpt.exists() else None

    before = stamp()
    time.sleep(1.0)
    assert stamp() == before                        # the worker is gone: no epoch ends any more


# ----------------------------------------------------------------------------- submitit
def test_submitit_job_killed_and_requeued_ends_with_the_uninterrupted_result(env, monkeypatch, paused_epochs):
    submitit = need("submitit", "submitit (the sweep extra)")
    # 8 epochs, each paused 0.5 s in the task (paused_epochs): polled every 10 ms, the signal
    # lands while the task trains, never in the run's final writes (a window this test is not
    # about); formerly 150 racing epochs of a few ms each
    cfg = tiny("focal", epochs=8, gamma=3.0)
    executor = submitit.AutoExecutor(folder=str(env / "submitit"), cluster="local")
    executor.update_parameters(timeout_min=10)
    job = executor.submit(sweep.TrainJob(), cfg.to_dict(), str(env / "logs" / "job.log"), "cpu", "auto")
    ckpt = runs.checkpoint_path(cfg.key)
    deadline = time.time() + 180
    while not ckpt.exists() and time.time() < deadline and not job.done():
        time.sleep(0.01)
    assert ckpt.exists() and not job.done(), "the job finished before it could be interrupted"
    # the pre-emption / time-out signal, sent to the task as Slurm does (submitit's local
    # controller then restarts the requeued task; LocalJob._interrupt would signal the controller)
    import psutil

    for task in psutil.Process(job._process.pid).children(recursive=True):
        task.send_signal(signal.SIGUSR2)
    row = job.result()
    assert row["status"] == "trained", (row, (env / "logs" / "job.log").read_text()[-3000:],
                                        [(p.name, p.read_text()[-2000:]) for p in (env / "submitit").glob("*_log.*")])
    resumed = runs.find(cfg)
    assert resumed.provenance["resumed_from_epoch"] >= 1
    # the same run, uninterrupted, in another store
    monkeypatch.setenv("REPLICATE_CACHE", str(env / "other-cache"))
    runs.clear_data_cache()
    fresh = runs.get_or_train(cfg, progress="none", device="cpu")
    assert fresh.provenance["resumed_from_epoch"] == 0
    assert np.array_equal(fresh.logits("test")[0], resumed.logits("test")[0])
    assert fresh.metrics == resumed.metrics and fresh.temperature == resumed.temperature


def test_submitit_array_through_the_sweep_api(env):
    need("submitit", "submitit (the sweep extra)")
    cfgs = {c.key: c for c in (tiny(), tiny("brier"))}
    s = sweep.run_submitit(cfgs, env / "logs", cluster="local", device="cpu", quiet=True, poll_s=0.5)
    assert s.counts()["trained"] == 2
    assert all(runs.find(c) is not None for c in cfgs.values())
    with pytest.raises(ValueError, match="unknown Slurm setting"):
        sweep.run_submitit(cfgs, env / "logs", cluster="local", queue="gpu")
