"""The conventions a PyTorch user expects, over the public API (issue #31, items 1 and 2).

* Every function that takes scores and returns per-sample arrays returns them in the
  container of its input: numpy in, numpy out; tensor in, tensor out (same device), with
  the same values either way. Functions that summarise (a metric's float, a fitted
  :class:`replicate.posthoc.Calibrator`, reliability bins, a loss's per-epoch state) return
  the same summary for either input.
* Probabilities passed where logits are expected (every entry in [0, 1], rows summing to 1
  within 1e-6) raise a one-line ValueError naming what to do, or are accepted with
  ``is_probs=True`` where a function offers it.
* Every loss reduces by ``"mean"`` by default; ``"sum"`` and ``"none"`` are the others.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from replicate import losses, metrics, posthoc, smce
from replicate.array_io import PROBS_ATOL, ProbabilitiesAsLogitsError, looks_like_probs
from replicate.posthoc import fts


def _scores(n=64, k=5, seed=0):
    rng = np.random.default_rng(seed)
    z = 2.0 * rng.normal(size=(n, k))
    return z, rng.integers(0, k, n)


Z, Y = _scores()
P = metrics.probs_from_logits(Z)

#: Public functions that take logits and return per-sample arrays (numpy-native).
ARRAY_FUNCTIONS = {
    "metrics.probs_from_logits": lambda z: metrics.probs_from_logits(z, temperature=1.3),
    "posthoc.temperature_scale": lambda z: posthoc.temperature_scale(z, 1.7),
    "Calibrator(temperature)": lambda z: posthoc.Calibrator("temperature", {"T": 1.7}, "nll", 0.0)(z),
    "Calibrator(focal_temperature)": lambda z: posthoc.Calibrator("focal_temperature", {"T": 1.2, "gamma": 0.5},
                                                                  "nll", 0.0)(z),
    "posthoc.fts.fts_log_probs": lambda z: fts.fts_log_probs(z, 1.2, 0.5),
    "posthoc.fts.fts_probs": lambda z: fts.fts_probs(z, 1.2, 0.5),
    "posthoc.fts.authors_focal_link": lambda z: fts.authors_focal_link(z, 1.2, 0.5),
}

#: Public torch functions of the losses that take scores (torch-native).
_CONF = np.random.default_rng(1).uniform(0.3, 1.0, 40)
_EDGES = np.array([0.0, 0.5, 0.7, 1.0])
TORCH_FUNCTIONS = {
    "losses.focal_per_sample": (lambda s: losses.focal_per_sample(s, 2.0), np.log(_CONF)),
    "losses.dual_term": (lambda s: losses.dual_term(s, s[:, 0]), P),
    "losses.mmce_weighted": (lambda s: losses.mmce_weighted(s, Y), Z),
    "losses.equal_mass_edges": (lambda s: losses.equal_mass_edges(s, 4), _CONF),
    "losses.assign_bins": (lambda s: losses.assign_bins(s, _EDGES), _CONF),
    "losses.bin_statistics": (lambda s: losses.bin_statistics(s, s > 0.6, _EDGES), _CONF),
    "losses.adafocal_gamma_update": (lambda s: losses.adafocal_gamma_update(s, s - 0.5), _CONF),
}

#: Public metrics that take probabilities and summarise them as one number.
SCALAR_METRICS = {
    "ece": metrics.ece, "adaptive_ece": metrics.adaptive_ece, "classwise_ece": metrics.classwise_ece,
    "mce": metrics.mce, "rms_calibration_error": metrics.rms_calibration_error,
    "debiased_ece": metrics.debiased_ece, "ece_sweep": metrics.ece_sweep, "brier": metrics.brier,
    "root_brier_score": metrics.root_brier_score, "error_rate": metrics.error_rate, "s99": metrics.s99,
    "smooth_ece": metrics.smooth_ece, "top_label_smce": smce.top_label_smce,
}


def _as_numpy(v):
    return v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v


@pytest.mark.parametrize("name", list(ARRAY_FUNCTIONS))
def test_numpy_in_numpy_out_tensor_in_tensor_out(name):
    f = ARRAY_FUNCTIONS[name]
    z32 = torch.from_numpy(Z).float()
    from_tensor, from_numpy = f(z32), f(z32.numpy().astype(np.float64))   # the same numbers, two containers
    from_tensor, from_numpy = ((x if isinstance(x, tuple) else (x,)) for x in (from_tensor, from_numpy))
    assert len(from_tensor) == len(from_numpy)
    for a, b in zip(from_numpy, from_tensor):
        assert isinstance(a, np.ndarray) and isinstance(b, torch.Tensor), name
        assert b.device == z32.device and a.shape == tuple(b.shape)
        np.testing.assert_array_equal(b.numpy(), a)
    from_list = f(Z.tolist())
    assert isinstance(from_list[0] if isinstance(from_list, tuple) else from_list, np.ndarray)


@pytest.mark.parametrize("name", list(TORCH_FUNCTIONS))
def test_loss_helpers_take_numpy_and_give_numpy(name):
    f, scores = TORCH_FUNCTIONS[name]
    from_numpy, from_tensor = f(scores), f(torch.from_numpy(scores))
    pairs = zip(from_numpy, from_tensor) if isinstance(from_numpy, tuple) else [(from_numpy, from_tensor)]
    for a, b in pairs:
        assert isinstance(a, np.ndarray) and isinstance(b, torch.Tensor), name
        np.testing.assert_array_equal(a, b.numpy())


@pytest.mark.parametrize("name", losses.available_losses())
def test_every_loss_defaults_to_the_mean_and_takes_numpy(name):
    z, y = torch.from_numpy(Z), torch.from_numpy(Y)
    loss = losses.get_loss(name)
    assert loss.reduction == "mean"
    values = {r: losses.get_loss(name, reduction=r)(z, y) for r in ("mean", "sum", "none")}
    assert values["none"].shape == (len(Y),) and values["mean"].shape == values["sum"].shape == ()
    torch.testing.assert_close(values["mean"], values["none"].mean(), rtol=1e-12, atol=0)
    torch.testing.assert_close(values["sum"], values["none"].sum(), rtol=1e-12, atol=0)
    torch.testing.assert_close(loss(z, y), values["mean"], rtol=0, atol=0)
    got = loss(Z, Y)  # numpy in, numpy out (no autograd)
    assert isinstance(got, np.ndarray) and got.shape == () and got == pytest.approx(values["mean"].item(), rel=1e-12)
    per = losses.get_loss(name, reduction="none")(Z, Y)
    assert isinstance(per, np.ndarray) and per.shape == (len(Y),)
    with pytest.raises(ValueError, match=r"parameter 'reduction' must be one of \['mean', 'sum', 'none'\]"):
        losses.get_loss(name, reduction="batchmean")


@pytest.mark.parametrize("name", ["adafocal", "adadual_focal", "calfocal"])
def test_update_from_validation_takes_numpy_and_tensors_alike(name):
    a, b = losses.get_loss(name), losses.get_loss(name)
    from_numpy = a.update_from_validation(Z, Y)                       # was: AttributeError 'dim'
    from_tensor = b.update_from_validation(torch.from_numpy(Z), torch.from_numpy(Y))
    assert from_numpy.keys() == from_tensor.keys()
    for k in from_numpy:
        np.testing.assert_array_equal(from_numpy[k], from_tensor[k])
    assert torch.equal(a.gamma, b.gamma)
    with pytest.raises(ValueError, match="val_logits look like probabilities"):
        a.update_from_validation(P, Y)


@pytest.mark.parametrize("name", list(SCALAR_METRICS))
def test_scalar_metrics_give_the_same_float_for_numpy_and_tensors(name):
    f = SCALAR_METRICS[name]
    a, b = f(P, Y), f(torch.from_numpy(P), torch.from_numpy(Y))
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))  # s99: two numbers
    assert all(type(v) is float for v in (*a, *b)) and a == b
    from_logits = f(Z, Y, is_probs=False)
    assert (from_logits if isinstance(from_logits, tuple) else (from_logits,)) == pytest.approx(a, rel=1e-12,
                                                                                                abs=1e-15)
    with pytest.raises(ValueError, match="probs look like probabilities|logits look like probabilities"):
        f(P, Y, is_probs=False)


def test_looks_like_probs_is_the_documented_rule():
    assert looks_like_probs(P) and looks_like_probs(torch.from_numpy(P).float())
    off = P.copy()
    off[0] *= 1 + 3 * PROBS_ATOL                                      # one row off by more than 1e-6
    assert not looks_like_probs(off) and not looks_like_probs(Z) and not looks_like_probs(np.log(P))
    neg = P.copy()
    neg[0, 0] = -1e-9
    assert not looks_like_probs(neg)
    assert not looks_like_probs(P[:, :1]) and not looks_like_probs(P[0])   # (N, 1) and 1-d are not scores rows


#: Every public function that expects logits, called with probabilities.
EXPECT_LOGITS = {
    "metrics.probs_from_logits": lambda s: metrics.probs_from_logits(s),
    "metrics.nll": lambda s: metrics.nll(s, Y),
    "metrics.evaluate": lambda s: metrics.evaluate(s, Y),
    "metrics.ece(is_probs=False)": lambda s: metrics.ece(s, Y, is_probs=False),
    "metrics.ood_auroc(is_probs=False)": lambda s: metrics.ood_auroc(s, s, is_probs=False),
    "posthoc.fit_temperature": lambda s: posthoc.fit_temperature(s, Y),
    "posthoc.fit_temperature(grid)": lambda s: posthoc.fit_temperature(s, Y, method="grid", metric="ece"),
    "posthoc.temperature_curve": lambda s: posthoc.temperature_curve(s, Y),
    "posthoc.temperature_scale": lambda s: posthoc.temperature_scale(s, 2.0),
    "posthoc.fit_focal_temperature": lambda s: posthoc.fit_focal_temperature(s, Y),
    "Calibrator": lambda s: posthoc.Calibrator("temperature", {"T": 2.0}, "nll", 0.0)(s),
    "posthoc.fts.fts_probs": lambda s: fts.fts_probs(s, 1.0, 0.5),
    "posthoc.fts.authors_focal_link": lambda s: fts.authors_focal_link(s, 1.0, 0.5),
    **{f"loss {n}": (lambda n: lambda s: losses.get_loss(n)(s, Y))(n) for n in losses.available_losses()},
}


@pytest.mark.filterwarnings("ignore::replicate.posthoc.SearchLimitWarning")  # random labels: T runs to a limit
@pytest.mark.parametrize("name", list(EXPECT_LOGITS))
@pytest.mark.parametrize("container", ["numpy", "tensor"])
def test_probabilities_where_logits_are_expected_raise_one_line(name, container):
    scores = P if container == "numpy" else torch.from_numpy(P)
    with pytest.raises(ProbabilitiesAsLogitsError, match="look like probabilities") as err:
        EXPECT_LOGITS[name](scores)
    assert "\n" not in str(err.value) and isinstance(err.value, ValueError)
    EXPECT_LOGITS[name](Z)  # logits pass


def test_inside_the_training_steps_the_loss_counts_on_the_device_and_check_finite_raises():
    loss = losses.get_loss("focal")
    loss.deferred_checks = True                        # as replicate.training.train sets it
    p = torch.from_numpy(P).requires_grad_(True)
    loss(p, torch.from_numpy(Y)).backward()            # no host value read: counted only
    with pytest.raises(ProbabilitiesAsLogitsError, match="in 1 call\\(s\\) since the last check"):
        loss.check_finite()
    assert loss.check_finite()                         # the counter starts again
