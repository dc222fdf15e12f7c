"""The fast training step (issue #13) on the CPU: everything but the CUDA-graph capture itself.

Oracles: the eager loop (the ``static`` engine runs the graph engine's code - static
buffers, index gather, augmentation draws into buffers, in-place accumulators, capture
bookkeeping - without capturing, and must give bit-identical runs on the CPU), plain
Python loops transcribing the reference code's branches (FLSD, DFL, MMCE), an
uninterrupted run for every paused or resumed one, and tensor identity (``data_ptr``) for
the loss state a captured graph reads. ``benchmarks/gpu_check.py`` checks the capture on
a GPU.

What differs between the engines, and why it does not change a bit on the CPU: the static
engine gathers a batch with ``index_select`` on an index buffer (the eager loop indexes
with the permutation slice: the same elements), draws the augmentation offsets into
buffers with ``out=`` (the same generator calls in the same order), and zeroes the
gradients of the last, smaller batch in place instead of freeing them (``0 + g == g``).
Under bf16 or channels-last the numbers change by rounding only (tests below).
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

from replicate import losses, training
from replicate.training import steps
from replicate.training.engine import TrainSettings
from test_training import make_model, params_equal, run, synthetic_splits

NAMES = losses.available_losses()
STATEFUL = ("adafocal", "adadual_focal", "calfocal", "fls531", "fls532")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def splits():
    # 200 training images at batch 48: four full batches and a last one of 8 per epoch
    return synthetic_splits(n_train=200, n_val=64, n_test=64)


def settings(engine, **kw):
    return TrainSettings(**{"epochs": 3, "batch_size": 48, "lr": 0.05, "milestones": (0.34, 0.67),
                            "engine": engine, **kw})


def strip(history):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in history]


# ----------------------------------------------------------------------------- fast step = eager
@pytest.mark.parametrize("name", NAMES)
def test_static_engine_equals_eager_for_every_loss(name, splits):
    """Three epochs (two lr changes, so two re-captures; augmentation; a last smaller batch;
    the losses' epoch hooks and validation updates): bit-identical weights, loss curves,
    loss state and logits."""
    eager = run(settings("eager"), loss=losses.get_loss(name), splits=splits)
    fast_loss = losses.get_loss(name)
    fast = run(settings("static"), loss=fast_loss, splits=splits)
    assert (eager.engine, fast.engine) == ("eager", "static")
    assert params_equal(eager.model, fast.model)
    assert strip(eager.history) == strip(fast.history)
    assert torch.equal(eager.logits["test"][0], fast.logits["test"][0])


@pytest.mark.parametrize("name", ["cross_entropy", "adafocal"])
def test_static_engine_equals_eager_under_bf16(name, splits):
    """bf16 autocast (the gpu profile's precision) goes through the same code in both engines."""
    eager = run(settings("eager", precision="bf16"), loss=losses.get_loss(name), splits=splits)
    fast = run(settings("static", precision="bf16"), loss=losses.get_loss(name), splits=splits)
    assert params_equal(eager.model, fast.model) and strip(eager.history) == strip(fast.history)


def test_bf16_logits_come_from_a_float32_head(splits):
    """Under bf16 the trunk runs in autocast but the logits are float32 products of the fc
    layer, not bf16-rounded (they take values bf16 cannot represent)."""
    model = make_model()
    xb = training.diagnostics.prepare(splits.val[0][:32], splits.info)
    z = training.diagnostics.forward_logits(model, xb, torch.device("cpu"), "bf16")
    assert z.dtype == torch.float32
    assert not torch.equal(z, z.bfloat16().float())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = model.features(xb)
    assert torch.equal(z, model.fc(h.float()))


def test_capture_bookkeeping(splits):
    """Warm-up steps before the first capture, one capture per learning rate, the last
    smaller batch outside the graph, and the epoch sums in fixed buffers."""
    s = settings("static", epochs=4)  # lr 0.05, 0.005, 0.005, 0.0005: three distinct rates
    model = make_model()
    loss = losses.get_loss("cross_entropy")
    opt = training.make_optimizer(model.parameters(), lr=s.lr)
    x, y = splits.train
    g = torch.Generator().manual_seed(0)
    st = steps.EpochSteps(model, loss, opt, x, y, splits.info, s, g, torch.device("cpu"), engine="static")
    sums = (st.acc_loss.data_ptr(), st.acc_correct.data_ptr())
    buffers = (st.idx.data_ptr(), *(t.data_ptr() for t in st.draws))
    lrs = [training.lr_at_epoch(e, lr=s.lr, epochs=4, milestones=s.milestones) for e in range(4)]
    for lr in lrs:
        training.schedule.set_lr(opt, lr)
        loss_sum, correct, batches = st.run(torch.randperm(200, generator=g), lr)
        assert batches == 5 and 0 <= int(correct) <= 200 and math.isfinite(float(loss_sum))
    assert st.warm == steps.WARMUP_STEPS and st.captures == len(set(lrs)) == 3 and st.graph_lr == lrs[-1]
    assert (st.acc_loss.data_ptr(), st.acc_correct.data_ptr()) == sums
    assert (st.idx.data_ptr(), *(t.data_ptr() for t in st.draws)) == buffers


def test_engine_choice(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    ce = losses.get_loss("cross_entropy")
    assert steps.choose_engine("auto", cpu, optimizer="sgd", loss=ce)[0] == "eager"
    engine, why = steps.choose_engine("auto", cuda, optimizer="sgd", loss=ce)
    assert engine == ("graph" if steps.GRAPH_VERIFIED_ON_GPU else "static") and "gpu_check" in why or engine == "graph"
    monkeypatch.setattr(steps, "GRAPH_VERIFIED_ON_GPU", True)             # once the GPU check has passed
    assert steps.choose_engine("auto", cuda, optimizer="sgd", loss=ce)[0] == "graph"
    assert steps.choose_engine("static", cpu, optimizer="adam", loss=ce)[0] == "static"
    engine, why = steps.choose_engine("graph", cuda, optimizer="adam", loss=ce)
    assert engine == "eager" and "adam" in why

    class Unsafe(losses.CrossEntropy):
        graph_safe = False
        graph_unsafe_reason = "reads a Python number from the batch"

    engine, why = steps.choose_engine("auto", cuda, optimizer="sgd", loss=Unsafe())
    assert engine == "eager" and "reads a Python number" in why
    with pytest.raises(ValueError, match="engine 'graph' needs a CUDA device"):
        steps.choose_engine("graph", cpu, optimizer="sgd", loss=ce)
    with pytest.raises(ValueError, match="engine must be one of auto, eager, static, graph"):
        TrainSettings(engine="fast").validate()
    with pytest.raises(ValueError, match="memory_format must be one of"):
        TrainSettings(memory_format="nhwc").validate()
    assert steps.choose_memory_format("auto", cuda, "bf16", "image") == "channels_last"
    assert steps.choose_memory_format("auto", cuda, "float32", "image") == "contiguous"
    assert steps.choose_memory_format("auto", cpu, "bf16", "image") == "contiguous"


def test_channels_last_changes_only_rounding(splits):
    """The memory format is an execution choice: the same convolutions in another memory
    order, so after an epoch the weights agree with the NCHW run to rounding (~1e-5 here)."""
    a = run(settings("eager", epochs=1), splits=splits)
    b = run(settings("static", epochs=1, memory_format="channels_last"), splits=splits)
    assert b.memory_format == "channels_last"
    assert b.model.conv.weight.is_contiguous(memory_format=torch.channels_last)
    for (k, va), vb in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.allclose(va.float(), vb.float(), rtol=1e-3, atol=5e-5), k


# ----------------------------------------------------------------------------- graph-safe loss state
def _buffer_ptrs(loss):
    return {k: v.data_ptr() for k, v in loss.named_buffers()}


@pytest.mark.parametrize("name", STATEFUL)
def test_loss_state_is_updated_in_place(name, splits):
    """A captured graph reads the loss's buffers at fixed addresses: every epoch hook, every
    validation update and a resume must change their values, never their storage."""
    loss = losses.get_loss(name)
    ptrs = _buffer_ptrs(loss)
    seen, values = [], []

    def record(epoch, row):
        seen.append(_buffer_ptrs(loss))
        values.append({k: v.clone() for k, v in loss.named_buffers()})

    run(settings("static", epochs=4), loss=loss, splits=splits, on_epoch_end=record)
    assert all(p == ptrs for p in seen)
    key = "gamma" if name not in ("fls531", "fls532") else "current_gamma"
    assert len({tuple(v[key].reshape(-1).tolist()) for v in values}) > 1, "the state never changed"
    before = _buffer_ptrs(loss)
    loss.load_state_dict(losses.get_loss(name).state_dict())
    loss.to("cpu")
    assert _buffer_ptrs(loss) == before


# ----------------------------------------------------------------------------- branch-free = reference branches
def _flsd_reference(p_true, thresholds, gammas):
    """Mukhoti's ``focal_loss_adaptive_gamma``: a Python if/else per sample."""
    out = []
    for p in p_true:
        g = gammas[-1]
        for t, gam in zip(thresholds, gammas):
            if p < t:
                g = gam
                break
        out.append(-(1 - p) ** g * math.log(p))
    return out


@pytest.mark.parametrize("name,th,gs", [("flsd53", (0.2,), (5, 3)), ("flsd532", (0.2, 0.5), (5, 3, 2))])
def test_flsd_branch_free_equals_per_sample_branches(name, th, gs):
    g = torch.Generator().manual_seed(0)
    z = torch.randn(400, 6, generator=g, dtype=torch.float64) * 2
    y = torch.randint(0, 6, (400,), generator=g)
    p = torch.softmax(z, 1)[torch.arange(400), y]
    got = losses.get_loss(name).per_sample(z, y)
    assert np.allclose(got.numpy(), _flsd_reference(p.tolist(), th, gs), rtol=1e-10)
    # exactly at the thresholds (the reference's strict '<')
    for t in th:
        zt = torch.log(torch.tensor([[t, 1 - t]], dtype=torch.float64))
        pt = torch.softmax(zt, 1)[0, 0].item()
        assert math.isclose(losses.get_loss(name).per_sample(zt, torch.tensor([0])).item(),
                            _flsd_reference([pt], th, gs)[0], rel_tol=1e-12)


def _dual_reference(probs, y):
    """DFL's ``p_j``: the largest probability strictly below ``p_y`` (0 if none), by a loop."""
    out = []
    for row, t in zip(probs.tolist(), y.tolist()):
        below = [q for q in row if q < row[t]]
        out.append(max(below) if below else 0.0)
    return out


def test_dual_term_branch_free_equals_a_loop():
    g = torch.Generator().manual_seed(1)
    z = torch.randint(-3, 4, (300, 5), generator=g).double()  # integer logits: many ties
    y = torch.randint(0, 5, (300,), generator=g)
    probs = torch.softmax(z, 1)
    d = losses.dual_term(probs, probs[torch.arange(300), y])
    assert np.allclose(d.numpy(), _dual_reference(probs, y), rtol=0, atol=0)


def _mmce_reference(z, y, bandwidth=0.4):
    """Mukhoti's weighted MMCE with its branches: 0 without correct or without incorrect
    samples, else the pair sums over explicit loops (the "reference" normalisation)."""
    p = torch.softmax(z, 1)
    conf, pred = p.max(1)
    conf, correct = conf.tolist(), (pred == y).tolist()
    c = [r for r, ok in zip(conf, correct) if ok]
    i = [r for r, ok in zip(conf, correct) if not ok]
    if not c or not i:
        return 0.0
    k = lambda a, b: math.exp(-abs(a - b) / bandwidth)  # noqa: E731
    m, n = len(c), len(i)
    cc = sum((1 - a) * (1 - b) * k(a, b) for a in c for b in c) / m**2
    ii = sum(a * b * k(a, b) for a in i for b in i) / n**2
    ci = sum((1 - a) * b * k(a, b) for a in c for b in i) / (m * n)
    return math.sqrt(max(cc / (m * m + 1e-5) + ii / (n * n + 1e-5) - 2 * ci / (m * n + 1e-5), 0) + 1e-10)


@pytest.mark.parametrize("case", ["mixed", "all_correct", "all_wrong"])
def test_mmce_branch_free_equals_the_branching_reference(case):
    g = torch.Generator().manual_seed(2)
    z = torch.randn(40, 4, generator=g, dtype=torch.float64) * 2
    pred = z.argmax(1)
    y = {"mixed": torch.randint(0, 4, (40,), generator=g), "all_correct": pred, "all_wrong": (pred + 1) % 4}[case]
    got = losses.mmce_weighted(z, y).item()
    assert math.isclose(got, _mmce_reference(z, y), rel_tol=1e-10, abs_tol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_loss_step_reads_no_host_value(name, monkeypatch):
    """A CPU stand-in for the GPU host-sync test: forward and backward of every loss (in its
    epoch state) never turn a tensor into a Python value (item, bool, float, int, tolist,
    numpy) - the operations that would synchronise a GPU or fail a CUDA-graph capture."""
    g = torch.Generator().manual_seed(3)
    z = torch.randn(64, 10, generator=g)
    y = torch.randint(0, 10, (64,), generator=g)
    loss = losses.get_loss(name)
    assert loss.graph_safe and not loss.graph_unsafe_reason
    if loss.needs_validation:
        loss.update_from_validation(z * 2, y)
    loss.on_epoch_start(3, 10)
    loss.deferred_checks = True  # as replicate.training.train sets it during its steps
    zz = z.clone().requires_grad_(True)

    def forbidden(*a, **k):
        raise AssertionError("host value read inside a training step")

    for attr in ("item", "__bool__", "__float__", "__int__", "tolist", "numpy"):
        monkeypatch.setattr(torch.Tensor, attr, forbidden)
    loss(zz, y).backward()
    monkeypatch.undo()
    assert torch.isfinite(zz.grad).all()


# ----------------------------------------------------------------------------- pause and resume
def test_deadline_pauses_cleanly_and_the_run_resumes_to_the_same_result(tmp_path, splits):
    s = settings("static", epochs=4)
    full = run(s, loss=losses.get_loss("adafocal"), splits=splits, deterministic=True)
    path = tmp_path / "c.pt"

    def slow_first_epoch(epoch, row):
        if epoch == 0:
            time.sleep(0.3)

    with pytest.raises(training.TrainingPaused, match="paused before epoch 2/4") as err:
        run(s, loss=losses.get_loss("adafocal"), splits=splits, checkpoint=path, deterministic=True,
            on_epoch_end=slow_first_epoch, deadline=time.monotonic() + 0.15)
    assert (err.value.epochs_done, err.value.epochs) == (1, 4)
    # resumed by the eager engine: the engine is not part of the checkpoint's identity
    resumed = run(settings("eager", epochs=4), loss=losses.get_loss("adafocal"), splits=splits, checkpoint=path,
                  deterministic=True)
    assert resumed.resumed_from == 1
    assert params_equal(full.model, resumed.model) and strip(full.history) == strip(resumed.history)


def test_deadline_before_any_epoch_and_bad_deadline(splits):
    with pytest.raises(training.TrainingPaused, match="no checkpoint was kept"):
        run(settings("eager"), splits=splits, deadline=time.monotonic() - 1)
    with pytest.raises(ValueError, match="deadline"):
        run(settings("eager"), splits=splits, deadline="soon")


# ----------------------------------------------------------------------------- the GPU scripts on the CPU
def _script(name):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gpu_check_smoke_passes_and_catches_a_stale_gamma(monkeypatch, capsys, tmp_path):
    check = _script("gpu_check")
    args = ["--smoke", "--losses", "fls531,adafocal", "--epochs", "3", "--steps", "2"]
    assert check.main([*args, "--json", str(tmp_path / "c.json")]) == 0
    assert "all 2 losses passed" in capsys.readouterr().out
    # a graph that kept reading a stale FLS gamma would be caught: simulate it in the static engine
    real = steps.EpochSteps._replay

    def stale(self):
        if hasattr(self.loss, "current_gamma"):
            keep = self.loss.current_gamma.clone()
            self.loss.current_gamma.fill_(5.0)
            real(self)
            self.loss.current_gamma.copy_(keep)
        else:
            real(self)

    monkeypatch.setattr(steps.EpochSteps, "_replay", stale)
    assert check.main(args) == 1
    assert "FAILED: 1 of 2 losses: fls531" in capsys.readouterr().err


def test_train_speed_smoke_prints_the_table(capsys):
    speed = _script("train_speed")
    assert speed.main(["--smoke", "--modes", "reference,eager,fastest", "--epochs", "2"]) == 0
    out = capsys.readouterr().out
    assert "s/epoch" in out and "x ref" in out and "torch" in out
    for mode in ("reference", "eager", "fastest"):
        assert f"\n{mode}" in out


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU to capture a CUDA graph")
@pytest.mark.parametrize("name", ["cross_entropy", "fls531", "adafocal", "mmce", "dual_focal"])
def test_graph_engine_equals_eager_on_cuda(name, splits):
    """The capture itself (GPU only): graph and eager runs agree (deterministic algorithms)."""
    def go(engine):
        return training.train(make_model(), losses.get_loss(name), splits, settings(engine, epochs=4), device="cuda",
                              deterministic=True, progress="none")

    eager, graph = go("eager"), go("graph")
    assert graph.engine == "graph"
    a, b = [r["train_loss"] for r in eager.history], [r["train_loss"] for r in graph.history]
    assert np.allclose(a, b, rtol=1e-5, atol=0)
    for (k, va), vb in zip(eager.model.state_dict().items(), graph.model.state_dict().values()):
        assert torch.allclose(va.float(), vb.float(), rtol=1e-4, atol=1e-6), k
