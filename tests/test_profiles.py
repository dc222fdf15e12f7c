"""Profiles: the four names, the paper protocol's numbers, valid settings, the printed table."""
from __future__ import annotations

import sys

import pytest

from replicate import profiles
from replicate.profiles import PROFILES, decayed_from, describe, get_profile, markdown


def test_the_four_profiles():
    assert list(PROFILES) == ["smoke", "cpu", "gpu", "paper"]
    with pytest.raises(ValueError, match="allowed profiles: smoke, cpu, gpu, paper"):
        get_profile("laptop")
    assert get_profile(PROFILES["cpu"]) is PROFILES["cpu"]


def test_paper_profile_is_the_protocol():
    """PROTOCOL.md "Training" and Mukhoti et al. (2020), Appendix D."""
    p = get_profile("paper")
    assert (p.optimizer, p.lr, p.momentum, p.weight_decay, p.batch_size, p.epochs) == ("sgd", 0.1, 0.9, 5e-4, 128, 350)
    assert (p.lr_decay, p.clip_grad_norm, p.select, p.augment, p.seeds) == (0.1, 2.0, "last", True, (1,))
    assert (p.n_train, p.n_val, p.n_test) == (None, None, None)
    # decays at 150 and 250; Mukhoti's loop steps the scheduler at epoch start: one epoch early
    assert p.lr_step_at_epoch_start
    assert decayed_from(p.milestones, 350, False) == (151, 251)
    assert decayed_from(p.milestones, 350, True) == (150, 250)
    t = p.settings("text")
    assert (t["optimizer"], t["lr"], t["epochs"], t["select"], t["model"]) == \
        ("adam", 1e-3, 50, "best_val_accuracy", "text_cnn")


def test_shortened_profiles_keep_the_schedule_shape():
    for name in ("smoke", "cpu", "gpu"):
        p = get_profile(name)
        assert p.milestones == get_profile("paper").milestones
        assert not p.lr_step_at_epoch_start
    assert get_profile("gpu").n_train is None and get_profile("gpu").epochs < 350
    assert get_profile("smoke").epochs == 1 and get_profile("smoke").n_train <= 1000


def test_every_profile_resolves_to_valid_training_settings():
    from replicate.training import TrainSettings

    fields = set(TrainSettings.__dataclass_fields__)
    for p in PROFILES.values():
        for kind in ("image", "text"):
            s = p.settings(kind)
            TrainSettings(**{k: v for k, v in s.items() if k in fields}).validate()
    with pytest.raises(ValueError, match="kind must be 'image' or 'text'"):
        PROFILES["cpu"].settings("audio")


def test_profile_models_exist():
    from replicate import models

    for p in PROFILES.values():
        assert p.model in models.MODELS and p.text_model in models.MODELS
        assert set(p.models) <= set(models.MODELS) and p.model in p.models


def test_describe_and_markdown():
    frame = describe()
    assert list(frame.columns) == ["meaning", "smoke", "cpu", "gpu", "paper"]
    assert frame.loc["epochs", "paper"] == "350" and frame.loc["decayed_from", "paper"] == "150, 250"
    assert frame.loc["lr", "cpu"] == "0.1"
    one = describe("cpu")
    assert list(one.columns) == ["meaning", "cpu"] and set(one.index) == set(profiles.MEANINGS)
    text = markdown("smoke", "paper")
    lines = text.splitlines()
    assert lines[0] == "| setting | meaning | smoke | paper |" and len(lines) == 2 + len(profiles.MEANINGS)
    assert all(line.count("|") == 5 for line in lines[2:])


def test_import_is_light():
    """The chapter runner validates profile names; importing profiles must not pull in torch."""
    import subprocess

    code = "import sys, replicate.profiles; print('torch' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parent.parent)).stdout
    assert out.split() == ["False", "False"]


def test_gpu_profile_schedule_and_numerics():
    """The gpu profile (issue #20): CIFAR ResNet-18, 30 epochs, the paper's schedule shape on
    whole epochs, bf16 for images and float32 for text. Its size against the measured
    throughput is tested with the GPU queue (tests/test_gpu_job.py)."""
    gpu = get_profile("gpu")
    assert (gpu.model, gpu.epochs, gpu.models[0]) == ("resnet18", 30, "resnet18")
    assert decayed_from(gpu.milestones, 30) == (14, 22)
    from replicate import losses

    fls = losses.get_loss("fls532")
    assert [fls.gamma_at(e, 30) for e in (8, 9, 21, 22)] == [5.0, 3.0, 3.0, 2.0]
    assert gpu.settings("image")["precision"] == "bf16" and gpu.settings("text")["precision"] == "float32"
    assert set(profiles.GPU_SIZING["validating_losses"]) <= set(losses.LOSSES)
