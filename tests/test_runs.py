"""Runs: stable keys, validation before data loading, the stores, atomic records, resume, CLI,
and one training smoke per loss (tiny CNN, ~1,000 images, 1 epoch).

The data loader is replaced by a generated CIFAR-shaped data set (no files are read);
everything else - models, losses, metrics, temperature scaling - is the real code.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from replicate import cli, data, losses, runs, training
from replicate.profiles import get_profile
from replicate.runs import RunConfig
from generated_data import generated_splits

REPO = Path(__file__).resolve().parent.parent
LOADS = []


def fake_load(name, data_dir=None, split="reference", val_size=None, split_seed=1, **options):
    """A learnable 10-class 3x32x32 uint8 data set (colour per class plus noise)."""
    LOADS.append(name)
    return generated_splits(name)


@pytest.fixture(autouse=True)
def stores(tmp_path, monkeypatch):
    """Private cache and results folders, generated data, one torch thread."""
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(data, "load", fake_load)
    runs.clear_data_cache()
    runs.ood._SVHN.clear()
    LOADS.clear()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield tmp_path
    torch.set_num_threads(threads)


def smoke(loss="cross_entropy", params=None, **kw):
    return RunConfig("cifar10", loss, params or {}, profile="smoke", **kw)


def ece_numpy(logits, labels, n_bins=15):
    """Equal-width ECE with (lower, upper] bins, written out independently of replicate.metrics."""
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    conf, hit = p.max(1), p.argmax(1) == labels
    b = np.clip(np.ceil(conf * n_bins).astype(int) - 1, 0, n_bins - 1)
    return sum(abs(conf[b == k].mean() - hit[b == k].mean()) * (b == k).mean() for k in range(n_bins) if (b == k).any())


# ----------------------------------------------------------------------------- keys
def test_key_ignores_spelling_and_explicit_defaults():
    base = RunConfig("cifar10", "focal", {"gamma": 3})
    same = [RunConfig("cifar10", "focal", {"gamma": 3.0}),
            RunConfig("cifar10", "focal", {"gamma": 3, "reduction": "sum"}),
            RunConfig("cifar10", "focal", {"gamma": 3}, model=get_profile("cpu").model),
            RunConfig("cifar10", "focal", {"gamma": 3}, options={"lr": 0.1, "milestones": [150 / 350, 250 / 350]}),
            RunConfig("cifar10", "focal", {"gamma": 3}, data_params={"val_size": 5000, "split_seed": 1})]
    assert all(c.key == base.key for c in same)
    different = [RunConfig("cifar10", "focal", {"gamma": 2}), RunConfig("cifar10", "focal", {"gamma": 3}, seed=2),
                 RunConfig("cifar10", "focal", {"gamma": 3}, options={"epochs": 9}),
                 RunConfig("cifar10", "focal", {"gamma": 3}, options={"lr_step_at_epoch_start": True}),
                 RunConfig("cifar10", "focal", {"gamma": 3}, profile="gpu"),
                 RunConfig("cifar10", "cross_entropy")]
    assert len({c.key for c in different} | {base.key}) == len(different) + 1


def test_key_is_sha256_of_the_canonical_resolved_config():
    cfg = RunConfig("cifar10", "adafocal")
    text = runs.canonical_json(cfg.resolve())
    assert cfg.key == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def test_key_is_the_same_in_another_process():
    cfg = RunConfig("cifar10", "dual_focal", {"gamma": 5}, seed=3)
    code = ("from replicate.runs import RunConfig; "
            "print(RunConfig('cifar10', 'dual_focal', {'gamma': 5.0}, seed=3).key)")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                         check=True, timeout=120).stdout.strip()
    assert out == cfg.key


def test_text_data_take_mukhotis_text_protocol():
    r = RunConfig("20newsgroups", profile="paper").resolve()
    assert (r["kind"], r["model"]) == ("text", "text_cnn")
    t = r["train"]
    assert (t["optimizer"], t["lr"], t["epochs"], t["select"], t["augment"]) == ("adam", 1e-3, 50, "best_val_accuracy",
                                                                                 False)


def test_paper_profile_resolves_to_the_protocol():
    t = RunConfig("cifar10", profile="paper").resolve()["train"]
    assert (t["optimizer"], t["lr"], t["momentum"], t["weight_decay"], t["batch_size"], t["epochs"]) == \
        ("sgd", 0.1, 0.9, 5e-4, 128, 350)
    assert training.milestone_epochs(t["milestones"], t["epochs"]) == [150, 250]
    assert t["clip_grad_norm"] == 2.0 and t["select"] == "last" and t["seed"] == 1


# ----------------------------------------------------------------------------- validation
BAD = [
    (dict(dataset="cifar11"), "allowed datasets: cifar10"),
    (dict(loss="focall"), "unknown loss 'focall'"),
    (dict(loss="focal", loss_params={"gama": 3}), "unknown parameter"),
    (dict(loss="focal", loss_params={"gamma": -1}), "'gamma'"),
    (dict(model="resnet9"), "allowed models: .*resnet8"),
    (dict(model="tiny_cnn", model_params={"depth": 3}), "unknown model_params"),
    (dict(profile="laptop"), "allowed profiles: smoke, cpu, gpu, paper"),
    (dict(options={"epoch": 3}), "allowed options: .*epochs"),
    (dict(options={"lr": -1.0}), "lr must be a number in"),
    (dict(options={"milestones": "late"}), "milestones"),
    (dict(options={"n_train": 0}), "n_train must be a positive integer"),
    (dict(loss_params=[("gamma", 3)]), "loss_params must be a dict"),
    (dict(options={"precision": "fp16"}), "float32, bf16"),
    (dict(seed=-1), "seed must be a non-negative integer"),
    (dict(split="random"), "allowed splits: reference"),
    (dict(data_params={"foo": 1}), "unknown data_params"),
]


@pytest.mark.parametrize("changes,match", BAD)
def test_bad_configuration_fails_before_any_data_is_loaded(changes, match):
    fields = dict(dataset="cifar10", loss="cross_entropy", profile="smoke")
    fields.update(changes)
    with pytest.raises(ValueError, match=match):
        runs.get_or_train(RunConfig(**fields), progress="none")
    assert LOADS == []


@pytest.mark.parametrize("kw,match", [({"device": "tpu"}, "device"), ({"store": "s3"}, "auto, results, cache"),
                                      ({"progress": "fancy"}, "progress")])
def test_bad_call_arguments_fail_before_loading(kw, match):
    with pytest.raises(ValueError, match=match):
        runs.get_or_train(smoke(), **kw)
    assert LOADS == []


# ----------------------------------------------------------------------------- records
def test_get_or_train_record_and_reload(monkeypatch):
    cfg = smoke("focal", {"gamma": 3}, options={"epochs": 2})
    run = runs.get_or_train(cfg, progress="none")
    assert run.path == runs.store_dir("cache") / cfg.key and run.store == "cache"
    assert set(p.name for p in run.path.iterdir()) == {"record.json", "logits.npz"}
    assert not runs.checkpoint_path(cfg.key).exists()  # deleted once the run is finished
    assert len(run.history) == 2 and run.config == cfg and run.resolved == cfg.resolve()
    # metrics and T recomputed from the stored logits, independently
    vz, vy = run.logits("val")
    tz, ty = run.logits("test")
    assert tz.shape == (500, 10) and vz.shape == (500, 10)
    grid = np.round(np.arange(1, 101) * 0.1, 10)
    scores = np.array([ece_numpy(vz.astype(np.float64) / t, vy) for t in grid])
    assert run.temperature == pytest.approx(grid[np.flatnonzero(scores <= scores.min() + 1e-12)[0]])
    for split, (z, y) in (("val", (vz, vy)), ("test", (tz, ty))):
        assert run.metrics[split]["ece"] == pytest.approx(ece_numpy(z.astype(np.float64), y), abs=1e-9)
        assert run.metrics[f"{split}_ts"]["ece"] == pytest.approx(ece_numpy(z / run.temperature, y), abs=1e-6)
        assert run.metrics[split]["error"] == pytest.approx(np.mean(z.argmax(1) != y))
    prov = run.provenance
    assert {"commit", "package_hash", "versions", "device"} <= set(prov) and prov["deterministic"] is False
    assert run.wall_time > 0
    # a second call loads the record and trains nothing
    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("trained a finished run"))
    again = runs.get_or_train(cfg, progress="none")
    assert again.key == run.key and again.metrics == run.metrics
    assert runs.load(cfg.key[:6]).key == cfg.key
    frame = runs.list_runs()
    assert list(frame["key"]) == [cfg.key] and frame["loss"][0] == "focal(gamma=3)"
    assert {"epoch", "train_loss", "lr"} <= set(run.history_frame().columns)


def test_data_loaded_once_for_several_runs():
    runs.get_or_train(smoke("focal", {"gamma": 1}), progress="none")
    runs.get_or_train(smoke("focal", {"gamma": 2}), progress="none")
    runs.get_or_train(smoke("focal", {"gamma": 2}, data_params={"val_size": 100}), progress="none")
    assert [n for n in LOADS if n != "svhn"] == ["cifar10", "cifar10"]  # a different val_size is other data
    assert LOADS.count("svhn") <= 1                                       # the OOD set is looked for once


def test_results_store_is_read_first_and_promotion_copies(monkeypatch):
    cfg = smoke()
    cached = runs.get_or_train(cfg, progress="none")
    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("promotion must not retrain"))
    promoted = runs.get_or_train(cfg, store="results", progress="none")
    assert promoted.store == "results" and runs.find(cfg).store == "results"
    assert np.array_equal(promoted.logits("test")[0], cached.logits("test")[0])
    assert set(runs.list_runs()["store"]) == {"results", "cache"}


def test_results_store_writes_float16_logits():
    run = runs.get_or_train(smoke("brier"), store="results", progress="none")
    with np.load(run.path / "logits.npz") as f:
        assert f["test_logits"].dtype == np.float16 and f["test_labels"].dtype == np.int64
    assert run.record["logits_dtype"] == "float16"
    z, y = run.logits("test")  # the record's metrics are those of the stored (rounded) logits
    assert run.metrics["test"]["ece"] == pytest.approx(ece_numpy(z.astype(np.float64), y), abs=1e-9)


def test_half_written_runs_are_never_read_as_finished(monkeypatch):
    cfg = smoke()
    base = runs.store_dir("cache")
    (base / f".tmp-{cfg.key}-dead").mkdir(parents=True)
    (base / f".tmp-{cfg.key}-dead" / "record.json").write_text("{}")
    (base / cfg.key).mkdir()  # a folder without record.json (e.g. copied by hand, half-way)
    assert runs.find(cfg) is None and runs.list_runs().empty

    def fail(*a, **k):
        raise OSError("disk full")

    (base / cfg.key).rmdir()
    real = np.savez_compressed
    monkeypatch.setattr(np, "savez_compressed", fail)
    with pytest.raises(OSError, match="disk full"):
        runs.get_or_train(cfg, progress="none")
    assert runs.find(cfg) is None
    assert sorted(p.name for p in base.iterdir()) == [f".tmp-{cfg.key}-dead"]  # no new leftovers
    monkeypatch.setattr(np, "savez_compressed", real)
    assert runs.get_or_train(cfg, progress="none").key == cfg.key


def test_killed_run_resumes_to_the_uninterrupted_result(monkeypatch, tmp_path):
    cfg = smoke("adafocal", options={"epochs": 3})
    real_train = training.train

    class Killed(Exception):
        pass

    def killed_after_first_epoch(*a, **k):
        def on_epoch_end(epoch, row):
            if epoch == 0:
                raise Killed
        return real_train(*a, **k, on_epoch_end=on_epoch_end)

    monkeypatch.setattr(training, "train", killed_after_first_epoch)
    with pytest.raises(Killed):
        runs.get_or_train(cfg, progress="none", deterministic=True)
    assert runs.checkpoint_path(cfg.key).exists() and runs.find(cfg) is None
    monkeypatch.setattr(training, "train", real_train)
    resumed = runs.get_or_train(cfg, progress="none", deterministic=True)
    assert resumed.provenance["resumed_from_epoch"] == 1
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "other-cache"))
    fresh = runs.get_or_train(cfg, progress="none", deterministic=True)
    assert fresh.provenance["resumed_from_epoch"] == 0
    assert np.array_equal(fresh.logits("test")[0], resumed.logits("test")[0])
    assert fresh.metrics == resumed.metrics and fresh.temperature == resumed.temperature


# ----------------------------------------------------------------------------- one smoke per loss
@pytest.mark.parametrize("name", losses.available_losses())
def test_training_smoke_per_loss(name):
    run = runs.get_or_train(smoke(name), progress="none")
    assert run.resolved["model"] == "tiny_cnn" and run.resolved["n_train"] == 1000
    assert len(run.history) == 1 and np.isfinite(run.history[0]["train_loss"])
    z, y = run.logits("test")
    assert np.isfinite(z).all() and len(y) == 500
    assert 0.1 <= run.temperature <= 10.0
    for key in ("val", "test", "val_ts", "test_ts"):
        assert all(np.isfinite(v) for v in run.metrics[key].values())
    assert run.metrics["test_ts"]["error"] == run.metrics["test"]["error"]  # TS never changes the argmax
    if losses.LOSSES[name].needs_validation:
        assert len(run.history[0]["loss_state"]["gamma"]) == 15


# ----------------------------------------------------------------------------- CLI
def test_cli_train_ls_show(capsys):
    rc = cli.main(["train", "cifar10", "default", "focal", "--param", "gamma=3", "--profile", "smoke",
                   "--epochs", "1", "--progress", "none"])
    out = capsys.readouterr().out
    key = RunConfig("cifar10", "focal", {"gamma": 3}, profile="smoke", options={"epochs": 1}).key
    assert rc == 0 and key in out and "temperature T" in out
    assert cli.main(["runs", "ls"]) == 0
    assert key in capsys.readouterr().out
    assert cli.main(["runs", "show", key[:5]]) == 0
    assert "test_ts" in capsys.readouterr().out
    assert cli.main(["runs", "show", key, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["key"] == key


def test_cli_reports_bad_configuration(capsys):
    rc = cli.main(["train", "cifar10", "default", "focal", "--param", "gama=3", "--profile", "smoke"])
    assert rc == 2 and "unknown parameter" in capsys.readouterr().err
    rc = cli.main(["train", "cifar10", "resnet9", "focal", "--profile", "smoke"])
    assert rc == 2 and "allowed models" in capsys.readouterr().err
    assert cli.main(["runs", "show", "ffffffff"]) == 2
    assert LOADS == []


def test_parse_assignment():
    from replicate.cli.runs import parse_assignment

    assert parse_assignment("gamma=3") == ("gamma", 3)
    assert parse_assignment("milestones=(0.5, 0.75)") == ("milestones", (0.5, 0.75))
    assert parse_assignment("variant=paper") == ("variant", "paper")
    assert parse_assignment("clip_grad_norm=None") == ("clip_grad_norm", None)
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_assignment("gamma")


def test_numpy_values_in_a_configuration():
    a = RunConfig("cifar10", "focal", {"gamma": np.float32(3.0)}, options={"epochs": np.int64(4)}, seed=np.int64(2))
    b = RunConfig("cifar10", "focal", {"gamma": 3}, options={"epochs": 4}, seed=2)
    assert a.key == b.key and a.to_dict() == b.to_dict()
    with pytest.raises(ValueError, match="allowed options"):
        RunConfig("cifar10", options={"eval_batch_size": 10}).resolve()  # execution-only: not an option


def test_cli_reports_divergence(capsys):
    rc = cli.main(["train", "cifar10", "default", "cross_entropy", "--profile", "smoke", "--progress", "none",
                   "--option", "lr=1e12", "--option", "clip_grad_norm=None"])
    err = capsys.readouterr().err
    assert rc == 1 and "training diverged" in err and "not recorded" in err
    assert runs.list_runs().empty


def test_auto_store_keeps_smoke_runs_out_of_results():
    run = runs.get_or_train(smoke("cross_entropy"), store="auto", progress="none")
    assert run.store == "cache"
    assert runs.find(smoke("cross_entropy")).store == "cache"


def test_image_runs_record_ood_logits_of_their_own_test_images_with_noise():
    """CIFAR runs store logits on their test images with CIFAR-10-C Gaussian noise (severity
    5, scale 0.10, seed 0); the entropy AUROC in the record is recomputed independently
    (Mann-Whitney with ranks from scipy) from those logits."""
    from scipy.stats import mannwhitneyu

    from replicate.data.corruptions import gaussian_noise

    run = runs.get_or_train(smoke(), progress="none")
    assert "cifar10c_gaussian5" in run.ood_sets and "severity 5" in run.ood_sets["cifar10c_gaussian5"]
    tz, ty = run.logits("test")
    oz, oy = run.logits("ood:cifar10c_gaussian5")
    assert oz.shape == tz.shape and (oy == ty).all()
    # the OOD images are the run's test images with the published noise: recompute their logits
    splits = generated_splits("cifar10").subset(None, None, 500, seed=0)
    noisy = torch.from_numpy(gaussian_noise(splits.test[0].numpy(), 5, seed=0))
    assert (splits.test[1].numpy() == ty).all()
    assert abs(float(noisy.float().mean()) - float(splits.test[0].float().mean())) < 20     # same images, noisier

    def entropy(z, T=1.0):
        p = np.exp(z / T - (z / T).max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        return -(p * np.log(np.clip(p, 1e-300, None))).sum(1)

    for phase, T in (("pre", 1.0), ("post", run.temperature)):
        want = mannwhitneyu(entropy(oz.astype(np.float64), T), entropy(tz.astype(np.float64), T)).statistic
        want /= len(oz) * len(tz)
        assert run.metrics["ood_auroc"]["cifar10c_gaussian5"][phase] == pytest.approx(want, abs=1e-9)
    with pytest.raises(ValueError, match="split must be one of val, test, ood:"):
        run.logits("ood:imagenet")


def test_a_run_records_the_data_copy_it_was_trained_on(monkeypatch):
    run = runs.get_or_train(smoke(), progress="none")
    assert run.data["name"] == "generated" and run.data["how"] == "recorded"
    assert runs.Run(run.path).data["name"] == "generated"                # read back from record.json
    # a record from before the data copy was stored: CIFAR-10's copy is told from the label order
    del run.provenance["data"]
    y = run.logits("test")[1]
    expected = "CIFAR-10 (JPEG q75)" if np.all(np.diff(y) >= 0) else "CIFAR-10"
    assert run.data["name"] == expected and "inferred" in run.data["how"]


def test_committed_cifar_runs_are_the_jpeg_copy_and_say_so():
    """Every committed CIFAR-10 run was trained on the offline JPEG copy (the only copy this
    project's machines have); recorded or inferred, the run says so."""
    store = REPO / "results" / "runs"
    if not store.exists():
        pytest.skip("no committed runs")
    found = [runs.Run(p) for p in store.iterdir() if (p / "record.json").exists()]
    cifar = [r for r in found if r.resolved["dataset"] == "cifar10"]
    assert cifar and all(r.data["name"] == "CIFAR-10 (JPEG q75)" for r in cifar)
