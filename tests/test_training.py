"""The training engine: schedule, loop semantics, diagnostics, divergence, checkpoints and resume.

Oracles: torch's own MultiStepLR for the schedule, a plain hand-written PyTorch loop for
the engine's steps, per-sample autograd for the gradient-norm shortcut, numpy/scipy for
the per-split summaries, and an uninterrupted run for every resumed one.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import special, stats

from replicate import data, losses, training
from replicate.training import checkpoint as ckpt
from replicate.training.engine import TrainingDiverged, TrainSettings

REPO = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models on a shared 2-core machine: one intra-op thread avoids oversubscription."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class TinyNet(torch.nn.Module):
    """conv-BN-ReLU-pool-linear: the smallest network with BatchNorm state, .features and .fc."""

    def __init__(self, num_classes: int = 4, width: int = 8, channels: int = 3, bn: bool = True):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, width, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(width) if bn else torch.nn.Identity()
        self.fc = torch.nn.Linear(width, num_classes)

    def features(self, x):
        return F.adaptive_avg_pool2d(F.relu(self.bn(self.conv(x))), 1).flatten(1)

    def forward(self, x):
        return self.fc(self.features(x))


def synthetic_splits(n_train=512, n_val=128, n_test=128, num_classes=4, size=16, seed=0, noise=60.0):
    """A learnable image data set: one random colour per class plus pixel noise, uint8."""
    g = torch.Generator().manual_seed(seed)
    templates = (torch.rand(num_classes, 3, 1, 1, generator=g) * 255).expand(num_classes, 3, size, size)

    def draw(n):
        y = torch.randint(0, num_classes, (n,), generator=g)
        x = templates[y] * 0.5 + 64 + noise * torch.randn(n, 3, size, size, generator=g)
        return x.clamp(0, 255).to(torch.uint8), y

    info = data.DatasetInfo(name="synthetic", display_name="synthetic templates", num_classes=num_classes,
                            classes=tuple(str(c) for c in range(num_classes)), kind="image",
                            mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25), image_size=size)
    return data.Splits(draw(n_train), draw(n_val), draw(n_test), info)


def make_model(seed=1, **kw):
    torch.manual_seed(seed)
    return TinyNet(**kw)


SMALL = dict(epochs=3, batch_size=64, lr=0.05, eval_batch_size=100)


def run(settings=None, loss=None, splits=None, model=None, **kw):
    settings = settings or TrainSettings(**SMALL)
    kw.setdefault("progress", "none")
    loss = loss or losses.get_loss("cross_entropy", reduction="sum")  # the papers' reduction, as the book's runs
    return training.train(model or make_model(), loss, splits or synthetic_splits(),
                          settings, device="cpu", **kw)


def params_equal(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


# ----------------------------------------------------------------------------- schedule
@pytest.mark.parametrize("epochs", [350, 20, 7, 3])
@pytest.mark.parametrize("at_start", [False, True])
def test_schedule_matches_torch_multistep(epochs, at_start):
    """Stepped after each epoch = MultiStepLR stepped after each epoch; Mukhoti's loop =
    MultiStepLR stepped at the start of each epoch (decays one epoch early)."""
    fracs = (150 / 350, 250 / 350)
    ms = training.milestone_epochs(fracs, epochs)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=ms, gamma=0.1)
    oracle = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "step() before optimizer.step()" is the point of the quirk
        for _ in range(epochs):
            if at_start:
                sched.step()
            oracle.append(opt.param_groups[0]["lr"])
            opt.step()
            if not at_start:
                sched.step()
    ours = [training.lr_at_epoch(e, lr=0.1, epochs=epochs, milestones=fracs, lr_step_at_epoch_start=at_start)
            for e in range(epochs)]
    np.testing.assert_allclose(ours, oracle, rtol=1e-12)


def test_paper_milestones_are_150_and_250():
    assert training.milestone_epochs((150 / 350, 250 / 350), 350) == [150, 250]
    lrs = [training.lr_at_epoch(e, lr=0.1, epochs=350, milestones=(150 / 350, 250 / 350)) for e in range(350)]
    # "0.1 for the first 150 epochs, 0.01 for the next 100 and 0.001 for the last 100" (Appendix D)
    assert np.allclose(lrs[:150], 0.1) and np.allclose(lrs[150:250], 0.01) and np.allclose(lrs[250:], 0.001)


def test_schedule_rejects_bad_milestones():
    with pytest.raises(ValueError, match="milestones"):
        training.milestone_epochs((0.7, 0.3), 10)
    with pytest.raises(ValueError, match="milestones"):
        training.milestone_epochs((1.5,), 10)


def test_optimizers():
    p = [torch.nn.Parameter(torch.zeros(2))]
    sgd = training.make_optimizer(p, optimizer="sgd", lr=0.1, momentum=0.9, weight_decay=5e-4)
    g = sgd.param_groups[0]
    assert isinstance(sgd, torch.optim.SGD) and (g["lr"], g["momentum"], g["weight_decay"], g["nesterov"]) == \
        (0.1, 0.9, 5e-4, False)
    assert isinstance(training.make_optimizer(p, optimizer="adam", lr=1e-3), torch.optim.Adam)
    with pytest.raises(ValueError, match="optimizer must be one of sgd, adam"):
        training.make_optimizer(p, optimizer="lbfgs")


# ----------------------------------------------------------------------------- the loop
def reference_loop(model, loss, splits, s: TrainSettings):
    """A plain PyTorch loop with the engine's documented generator seeding and torch's scheduler."""
    g_perm = torch.Generator().manual_seed(s.seed)
    g_aug = torch.Generator().manual_seed(s.seed + (1 << 32))
    opt = torch.optim.SGD(model.parameters(), lr=s.lr, momentum=s.momentum, weight_decay=s.weight_decay)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [max(1, round(f * s.epochs)) for f in s.milestones], 0.1)
    x, y = splits.train
    for _ in range(s.epochs):
        model.train()
        perm = torch.randperm(len(y), generator=g_perm)
        for i in range(0, len(y), s.batch_size):
            idx = perm[i:i + s.batch_size]
            xb = data.normalize(data.augment(x[idx], generator=g_aug), splits.info.mean, splits.info.std)
            value = loss(model(xb), y[idx])
            opt.zero_grad()
            value.backward()
            if s.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), s.clip_grad_norm)
            opt.step()
        sched.step()
    return model


def test_the_engine_refuses_an_unreduced_loss_and_stops_a_network_that_outputs_probabilities():
    from replicate.array_io import ProbabilitiesAsLogitsError

    with pytest.raises(ValueError, match=r"reduction must be one of \['sum', 'mean'\].*got 'none'"):
        run(loss=losses.get_loss("cross_entropy", reduction="none"))

    class SoftmaxNet(TinyNet):
        def forward(self, x):
            return torch.softmax(super().forward(x), dim=1)

    loss = losses.get_loss("cross_entropy", reduction="sum")
    with pytest.raises(ProbabilitiesAsLogitsError, match="logits looked like probabilities"):
        run(TrainSettings(**SMALL), loss=loss, model=SoftmaxNet())
    assert loss.deferred_checks is False  # restored after the steps


@pytest.mark.parametrize("clip", [2.0, None])
def test_engine_equals_plain_loop(clip):
    s = TrainSettings(epochs=3, batch_size=48, lr=0.2, clip_grad_norm=clip, milestones=(0.34, 0.67))
    splits = synthetic_splits(n_train=200)
    ours = run(s, splits=splits).model
    ref = reference_loop(make_model(), losses.get_loss("cross_entropy", reduction="sum"), splits, s)
    assert params_equal(ours, ref)


def test_clipping_changes_the_trajectory():
    s = dict(epochs=1, batch_size=64, lr=0.5)
    a = run(TrainSettings(**s, clip_grad_norm=0.01)).model
    b = run(TrainSettings(**s, clip_grad_norm=None)).model
    assert not params_equal(a, b)


def test_training_learns_and_history_is_complete():
    res = run(TrainSettings(epochs=4, batch_size=64, lr=0.05))
    h = res.history
    assert [r["epoch"] for r in h] == [1, 2, 3, 4]
    assert h[-1]["train_accuracy"] > 0.8 and h[-1]["train_loss"] < h[0]["train_loss"]
    lg, yy = res.logits["test"]
    assert lg.dtype == torch.float32 and lg.shape == (128, 4) and (lg.argmax(1) == yy).float().mean() > 0.8
    assert res.selected_epoch == 4
    assert h[-1]["fc_weight_norm"] == pytest.approx(float(torch.linalg.norm(res.model.fc.weight.detach())), rel=1e-6)


def test_train_loss_is_per_sample_mean_for_both_reductions():
    """Epoch loss = sum of per-sample losses / N whether the loss sums (CE) or means (Brier)."""
    s = TrainSettings(epochs=1, batch_size=64, lr=1e-12, momentum=0.0, weight_decay=0.0, augment=False)
    splits = synthetic_splits(n_train=256)
    for name in ("cross_entropy", "brier"):
        res = run(s, loss=losses.get_loss(name), splits=splits, model=make_model(bn=False))
        model = make_model(bn=False)  # lr ~ 0: every batch sees (numerically) the initial model
        with torch.no_grad():
            p = torch.softmax(model(data.normalize(splits.train[0], splits.info.mean, splits.info.std)), 1)
        if name == "cross_entropy":
            expected = float(-torch.log(p[torch.arange(256), splits.train[1]]).mean())
        else:
            expected = float(((p - F.one_hot(splits.train[1], 4)) ** 2).sum(1).mean())
        assert res.history[0]["train_loss"] == pytest.approx(expected, rel=1e-5)


def test_select_best_val_accuracy():
    s = TrainSettings(epochs=4, batch_size=64, lr=0.05, select="best_val_accuracy", optimizer="adam",
                      milestones=(), weight_decay=0.0)
    res = run(s)
    accs = [r["val_accuracy"] for r in res.history]
    assert res.selected_epoch == int(np.argmax(accs)) + 1
    lg, yy = res.logits["val"]
    assert float((lg.argmax(1) == yy).float().mean()) == pytest.approx(max(accs))


def test_bf16_autocast_runs_and_differs():
    a = run(TrainSettings(**{**SMALL, "epochs": 1}, precision="bf16"))
    b = run(TrainSettings(**{**SMALL, "epochs": 1}))
    assert torch.isfinite(a.logits["test"][0]).all()
    assert not torch.equal(a.logits["test"][0], b.logits["test"][0])


def test_test_split_uses_test_statistics():
    """A data set whose test set is normalised differently (the CIFAR-100 reference bug option)."""
    import dataclasses

    splits = synthetic_splits()
    res_ok = run(TrainSettings(**{**SMALL, "epochs": 1}), splits=splits)
    bug = dataclasses.replace(splits.info, test_mean=(0.1, 0.1, 0.1), test_std=(0.5, 0.5, 0.5))
    res_bug = run(TrainSettings(**{**SMALL, "epochs": 1}),
                  splits=data.Splits(splits.train, splits.val, splits.test, bug))
    assert torch.equal(res_ok.logits["val"][0], res_bug.logits["val"][0])
    assert not torch.equal(res_ok.logits["test"][0], res_bug.logits["test"][0])


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("field,value,match", [
    ("epochs", 0, "epochs must be an integer >= 1"), ("batch_size", 2.5, "batch_size"),
    ("lr", -1.0, r"lr must be a number in \(0, inf\)"), ("lr", "0.1", "lr must be a number"),
    ("momentum", 1.0, "momentum"), ("optimizer", "rmsprop", "sgd, adam"), ("augment", "yes", "True or False"),
    ("milestones", 0.5, "list of fractions"), ("betas", (0.9,), "betas"),
    ("weight_decay", float("nan"), "weight_decay"),
    ("select", "best", "last, best_val_accuracy"), ("precision", "fp16", "float32, bf16"),
    ("clip_grad_norm", 0.0, "clip_grad_norm"), ("milestones", (0.9, 0.1), "milestones"),
    ("seed", -1, "seed"), ("lr_decay", 0.0, "lr_decay"),
])
def test_bad_settings(field, value, match):
    with pytest.raises(ValueError, match=match):
        TrainSettings(**{field: value}).validate()


def test_device_selection():
    assert training.select_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert training.select_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="device"):
        training.select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            training.select_device("cuda")


# ----------------------------------------------------------------------------- divergence
class NaNAfter(losses.CrossEntropy):
    """Cross-entropy that turns NaN from the ``after``-th call on (an injected divergence)."""

    def __init__(self, after):
        super().__init__()
        self.after, self.calls = after, 0

    def _compute(self, logits, targets):
        self.calls += 1
        value = super()._compute(logits, targets)
        return value * float("nan") if self.calls > self.after else value


def test_nan_stops_the_run_with_a_clear_error(tmp_path):
    path = tmp_path / "c.pt"
    with pytest.raises(TrainingDiverged, match=r"non-finite training loss .* epoch 2/3"):
        run(loss=NaNAfter(after=9), checkpoint=path)  # 8 steps per epoch: NaN in epoch 2
    assert torch.load(path, weights_only=False)["epoch"] == 0  # the last good epoch's checkpoint stays


def test_real_divergence_is_caught():
    """A huge learning rate without clipping really blows up; the engine must stop, not record."""
    s = TrainSettings(epochs=3, batch_size=64, lr=1e12, clip_grad_norm=None, milestones=())
    with pytest.raises(TrainingDiverged):
        run(s)


class Exploding(losses.AdaFocal):
    """An AdaFocal whose update multiplies gamma by 1e4 per epoch (an unbounded update rule)."""

    def _new_gamma(self, gap, conf_mean, acc_mean):
        return self.gamma * 1e4


def test_exploding_adafocal_gamma_stops_the_run():
    loss = Exploding(variant="paper", gamma_max=1e12)
    with pytest.raises(TrainingDiverged, match=r"AdaFocal gamma exploded at epoch 2/3.*limit \|gamma\| <= 1e\+06"):
        run(TrainSettings(**SMALL), loss=loss)


def test_loss_state_errors_become_training_diverged():
    loss = losses.get_loss("adafocal")
    s = TrainSettings(**SMALL, gamma_limit=1e9)

    def poison(epoch, row):
        loss.gamma[3] = float("nan")

    with pytest.raises(TrainingDiverged, match="epoch 2/3"):
        run(s, loss=loss, on_epoch_end=poison)


# ----------------------------------------------------------------------------- adafocal
def test_adafocal_updates_from_eval_mode_validation_each_epoch():
    """After every epoch the loss's bins are the equal-mass edges (np.interp, 15 bins) of the
    end-of-epoch model's eval-mode validation confidences, and gamma follows Eq. 4 (paper variant)."""
    splits = synthetic_splits()
    seen = []
    loss = losses.get_loss("adafocal", variant="paper")
    model = make_model()

    def check(epoch, row):
        model.eval()
        with torch.no_grad():
            z = model(data.normalize(splits.val[0], splits.info.mean, splits.info.std)).double().numpy()
        p = special.softmax(z, axis=1)
        conf = p.max(1)
        edges = np.interp(np.linspace(0, len(conf), 16), np.arange(len(conf)), np.sort(conf))
        st = row["loss_state"]
        np.testing.assert_allclose(st["edges"], edges, rtol=1e-5, atol=1e-6)
        gap = np.asarray(st["confidence"], float) - np.asarray(st["accuracy"], float)
        expect = np.where(np.isnan(gap), st["gamma_before"],
                          np.minimum(20.0, np.asarray(st["gamma_before"]) * np.exp(np.nan_to_num(gap))))
        np.testing.assert_allclose(st["gamma"], expect, rtol=1e-9)
        seen.append(epoch)

    training.train(model, loss, splits, TrainSettings(**SMALL), device="cpu", progress="none", on_epoch_end=check)
    assert seen == [0, 1, 2]


# ----------------------------------------------------------------------------- diagnostics
def test_split_summary_against_scipy():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, (300, 5)).astype(np.float32)
    y = rng.integers(0, 5, 300)
    out = training.split_summary(torch.from_numpy(z), torch.from_numpy(y))
    p = special.softmax(z.astype(np.float64), axis=1)
    nll = -np.log(p[np.arange(300), y])
    ent = stats.entropy(p, axis=1)
    wrong = p.argmax(1) != y
    assert out["nll"] == pytest.approx(nll.mean(), rel=1e-5)
    assert out["nll_incorrect"] == pytest.approx(nll[wrong].mean(), rel=1e-5)
    assert out["entropy_correct"] == pytest.approx(ent[~wrong].mean(), rel=1e-5)
    assert out["p_true_incorrect"] == pytest.approx(p[np.arange(300), y][wrong].mean(), rel=1e-5)
    assert out["error"] == pytest.approx(wrong.mean())
    # equal-width 15-bin ECE, written out independently
    conf, hit = p.max(1), ~wrong
    bins = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    ece = sum(abs(conf[bins == b].mean() - hit[bins == b].mean()) * (bins == b).mean()
              for b in range(15) if (bins == b).any())
    assert out["ece"] == pytest.approx(ece, rel=1e-6)


@pytest.mark.parametrize("name", ["cross_entropy", "brier", "focal"])
def test_last_layer_grad_norms_against_per_sample_autograd(name):
    splits = synthetic_splits(n_train=40)
    model = make_model().eval()
    loss = losses.get_loss(name)
    ours = training.last_layer_grad_norms(model, loss, *splits.train, splits.info, batch_size=16)
    x = data.normalize(splits.train[0], splits.info.mean, splits.info.std)
    for i in range(40):
        model.zero_grad()
        value = loss(model(x[i:i + 1]), splits.train[1][i:i + 1])
        value.backward()
        assert float(ours[i]) == pytest.approx(float(model.fc.weight.grad.norm()), rel=1e-4, abs=1e-9)


def test_eval_every_epoch_records_everything():
    res = run(TrainSettings(**{**SMALL, "epochs": 2}, eval_every_epoch=True))
    row = res.history[-1]
    for split in ("train", "val", "test"):
        assert {"nll", "entropy", "error", "ece", "nll_incorrect"} <= set(row[split])
    assert sum(row["grad_norms"]["counts"]) == 512
    lg, yy = res.logits["test"]
    assert row["test"]["error"] == pytest.approx(float((lg.argmax(1) != yy).float().mean()))
    splits = synthetic_splits()  # train metrics: the final model, un-augmented, in eval mode
    train_logits = training.predict(res.model, splits.train[0], splits.info, split="train")
    assert row["train"]["nll"] == pytest.approx(float(F.cross_entropy(train_logits, splits.train[1])), rel=1e-5)


# ----------------------------------------------------------------------------- checkpoints and resume
def test_atomic_save_never_leaves_a_torn_file(tmp_path, monkeypatch):
    path = tmp_path / "c.pt"
    ckpt.atomic_save({"v": 1}, path)

    def boom(*a, **k):
        raise KeyboardInterrupt  # killed between writing the temporary file and the rename

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        ckpt.atomic_save({"v": 2}, path)
    monkeypatch.undo()
    assert torch.load(path)["v"] == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["c.pt"]


def test_interrupted_run_resumes_bit_identically(tmp_path):
    s = TrainSettings(epochs=4, batch_size=64, lr=0.05, milestones=(0.5,))
    loss = lambda: losses.get_loss("adafocal")  # noqa: E731 - stateful loss: its buffers must resume too
    full = run(s, loss=loss(), deterministic=True)

    class Kill(Exception):
        pass

    def kill_after_2(epoch, row):
        if epoch == 1:
            raise Kill

    path = tmp_path / "c.pt"
    with pytest.raises(Kill):
        run(s, loss=loss(), checkpoint=path, deterministic=True, on_epoch_end=kill_after_2)
    resumed = run(s, loss=loss(), checkpoint=path, deterministic=True)
    assert resumed.resumed_from == 2
    assert params_equal(full.model, resumed.model)
    assert torch.equal(full.logits["test"][0], resumed.logits["test"][0])
    strip = lambda h: [{k: v for k, v in r.items() if k != "seconds"} for r in h]  # noqa: E731
    assert strip(full.history) == strip(resumed.history)


def test_checkpoint_of_another_run_is_refused(tmp_path):
    path = tmp_path / "c.pt"
    run(TrainSettings(**{**SMALL, "epochs": 1}), checkpoint=path, key="a")
    with pytest.raises(ValueError, match="belongs to another run"):
        run(TrainSettings(**{**SMALL, "epochs": 1}), checkpoint=path, key="b")


KILL_SCRIPT = textwrap.dedent("""
    import sys, torch
    torch.set_num_threads(1)
    sys.path.insert(0, {tests!r})
    from test_training import run, TrainSettings
    from replicate import losses
    run(TrainSettings(epochs=8, batch_size=64, lr=0.05), loss=losses.get_loss("flsd53"),
        checkpoint={path!r}, deterministic=True)
""")


def test_sigkilled_process_resumes_to_the_same_result(tmp_path):
    """A real SIGKILL at an arbitrary moment after the first checkpoint: resuming in another
    process finishes bit-identically to an uninterrupted run."""
    path = tmp_path / "c.pt"
    script = tmp_path / "job.py"
    script.write_text(KILL_SCRIPT.format(tests=str(REPO / "tests"), path=str(path)))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script)], env=env, cwd=REPO)
    deadline = time.time() + 120
    while not path.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the job finished before it could be killed"
    done = torch.load(path, weights_only=False)["epoch"] + 1
    assert 1 <= done < 8
    s = TrainSettings(epochs=8, batch_size=64, lr=0.05)
    resumed = run(s, loss=losses.get_loss("flsd53"), checkpoint=path, deterministic=True)
    full = run(s, loss=losses.get_loss("flsd53"), deterministic=True)
    assert resumed.resumed_from == done
    assert params_equal(full.model, resumed.model)
    assert torch.equal(full.logits["val"][0], resumed.logits["val"][0])


# ----------------------------------------------------------------------------- progress
def test_progress_modes(capsys):
    run(TrainSettings(**{**SMALL, "epochs": 2}), progress="log", label="demo")
    out = capsys.readouterr().out
    assert "[demo] epoch 1/2" in out and "[demo] epoch 2/2" in out and "loss" in out and "acc" in out
    run(TrainSettings(**{**SMALL, "epochs": 1}), progress="bar")
    assert "1/1" in capsys.readouterr().err
    assert not training.in_notebook()
    with pytest.raises(ValueError, match="progress must be one of auto, bar, log, none"):
        run(progress="fancy")


def test_global_rng_untouched():
    model = make_model()
    torch.manual_seed(123)
    before = torch.get_rng_state()
    training.train(model, losses.get_loss("cross_entropy"), synthetic_splits(), TrainSettings(**SMALL),
                   device="cpu", progress="none")
    assert torch.equal(before, torch.get_rng_state())


def test_train_reliability_matches_direct_binning():
    """Figure 2 statistics: 25 equal-width bins of the top-1 training confidence, by hand."""
    import numpy as np
    import torch

    from replicate.training.diagnostics import train_reliability

    g = torch.Generator().manual_seed(0)
    logits = 3 * torch.randn(500, 10, generator=g)
    labels = torch.randint(0, 10, (500,), generator=g)
    out = train_reliability(logits, labels)
    p = torch.softmax(logits.double(), 1)
    conf, pred = p.max(1)
    idx = np.clip(np.ceil(conf.numpy() * 25).astype(int) - 1, 0, 24)   # (lower, upper] bins
    assert out["count"] == np.bincount(idx, minlength=25).tolist()
    hit = (pred == labels).numpy()
    for b in range(25):
        if out["count"][b]:
            assert out["accuracy"][b] == pytest.approx(hit[idx == b].mean())
            assert out["confidence"][b] == pytest.approx(conf.numpy()[idx == b].mean())
        else:
            assert np.isnan(out["accuracy"][b])
    assert out["edges"] == pytest.approx(np.linspace(0, 1, 26).tolist())
