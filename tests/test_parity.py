"""Parity with the calibration libraries people already use (issue #23, item 5).

The same inputs go through this package and through torch-uncertainty or netcal (both in the
``test`` extra only), and the results must agree:

* **Focal loss, fixed gamma** = torch-uncertainty's ``FocalLoss`` (no class weights): both
  are ``-(1 - p_y)^gamma log p_y`` per sample, values and gradients equal to float64
  round-off, for each reduction. Since issue #31 the *default reductions* agree (both the
  batch mean, as ``torch.nn``); the papers' code sums, which the book passes explicitly
  (:func:`replicate.losses.paper_reduction`). One difference by design: at a saturated
  softmax (``p_y = 1`` in floating point) ours clamps ``1 - p_y`` at 1e-20, so the gradient
  stays finite for ``gamma < 1`` where torch-uncertainty's is NaN (shown in a test that
  only documents it; the value is the same).
* **Temperature scaling** (NLL-fitted T, Guo et al. 2017) = torch-uncertainty's
  ``TemperatureScaler`` (LBFGS on the cross-entropy) and netcal's ``TemperatureScaling``
  (scipy on the NLL; its ``temperature`` attribute is the inverse temperature, the weight of
  the logits): our continuous fit (the default) within 1e-2 of each, our grid fit (the
  papers' grid, step 0.1) within one grid step, and netcal's calibrated probabilities equal
  to ``softmax(z / T)`` at its T. On cases with a finite optimum (T strictly inside the
  search bounds, where the NLL's derivative vanishes) the continuous fit equals netcal's
  MLE to a relative 1e-4, from logits and from probabilities (``is_probs=True``).
* **ECE** (top-label, equal-width bins) = netcal's ``ECE`` for several bin counts, on
  continuous confidences (the two put a confidence exactly on a bin edge in different bins),
  and = torchmetrics' ``MulticlassCalibrationError`` (``tests/test_metrics.py``).
* **Smooth ECE** = relplot's ``smECE``: ``tests/test_metrics.py::test_smooth_ece_matches_relplot``.
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import torch

from replicate import losses, metrics, posthoc

from needs import oracle

# the oracles, each imported by the test that uses it
tu_losses = oracle("torch_uncertainty.losses", "torch-uncertainty")
tu_calibration = oracle("torch_uncertainty.post_processing", "torch-uncertainty")
netcal_metrics = oracle("netcal.metrics", "netcal")
netcal_scaling = oracle("netcal.scaling", "netcal")


def miscalibrated(n=4000, k=10, t_true=1.7, seed=0):
    """Logits whose labels are drawn from ``softmax(z / t_true)``: the NLL-optimal T is near ``t_true``."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3.0
    p = metrics.probs_from_logits(z, t_true)
    y = (p.cumsum(1) > rng.random((n, 1))).argmax(1)
    return z, y


@pytest.mark.parametrize("gamma", [0.0, 0.5, 1.0, 2.0, 3.0, 5.0])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_focal_loss_equals_torch_uncertainty_focal_loss(gamma, reduction):
    g = torch.Generator().manual_seed(int(10 * gamma))
    z = (3 * torch.randn(64, 10, generator=g, dtype=torch.float64)).requires_grad_()
    y = torch.randint(0, 10, (64,), generator=g)
    ours = losses.Focal(gamma=gamma, reduction=reduction)(z, y)
    (d_ours,) = torch.autograd.grad(ours, z)
    theirs = tu_losses.FocalLoss(gamma=gamma, reduction=reduction)(z, y)
    (d_theirs,) = torch.autograd.grad(theirs, z)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    torch.testing.assert_close(d_ours, d_theirs, rtol=1e-10, atol=1e-14)


def test_the_default_reductions_agree_and_the_papers_sum_is_n_times_the_mean():
    z, y = torch.randn(32, 5, dtype=torch.float64), torch.randint(0, 5, (32,))
    ours, theirs = losses.get_loss("focal", gamma=3.0)(z, y), tu_losses.FocalLoss(gamma=3.0)(z, y)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    papers = losses.get_loss("focal", gamma=3.0, reduction=losses.paper_reduction("focal"))(z, y)
    assert papers.item() == pytest.approx(32 * theirs.item(), rel=1e-12)
    per_sample = losses.get_loss("focal", gamma=3.0, reduction="none")(z, y)
    torch.testing.assert_close(per_sample, tu_losses.FocalLoss(gamma=3.0, reduction="none")(z, y), rtol=1e-12, atol=0)


def test_at_a_saturated_softmax_the_values_agree_and_only_our_gradient_is_finite():
    z = torch.tensor([[60.0, 0.0, -5.0], [0.3, 0.2, 0.1]], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0, 1])
    ours, theirs = losses.Focal(gamma=0.5, reduction="sum")(z, y), tu_losses.FocalLoss(gamma=0.5, reduction="sum")(z, y)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    assert torch.isfinite(torch.autograd.grad(ours, z)[0]).all()
    assert not torch.isfinite(torch.autograd.grad(theirs, z)[0]).all()  # documents theirs (may change)


def torch_uncertainty_temperature(z, y) -> float:
    scaler = tu_calibration.TemperatureScaler(model=None)
    data = torch.utils.data.TensorDataset(torch.tensor(z, dtype=torch.float32), torch.tensor(y))
    logging.getLogger().setLevel(logging.ERROR)  # "model is None. Fitting ... on the dataloader's data directly."
    try:
        scaler.fit(torch.utils.data.DataLoader(data, batch_size=1000), progress=False)
    finally:
        logging.getLogger().setLevel(logging.WARNING)
    return float(scaler.temperature[0].detach())


def netcal_temperature(z, y):
    ts = netcal_scaling.TemperatureScaling(method="mle", detection=False, use_cuda=False)
    probs = metrics.probs_from_logits(z)
    ts.fit(probs, y, tensorboard=False)
    return 1.0 / float(np.ravel(ts.temperature)[0]), ts.transform(probs)


@pytest.mark.parametrize("t_true", [0.6, 1.0, 1.7, 3.0])
def test_temperature_scaling_agrees_with_torch_uncertainty_and_netcal(t_true):
    z, y = miscalibrated(t_true=t_true, seed=int(10 * t_true))
    continuous = posthoc.fit_temperature(z, y).params["T"]
    grid = posthoc.fit_temperature(z, y, method="grid", metric="nll").params["T"]
    step = float(np.diff(posthoc.TS_GRID)[0])
    t_tu = torch_uncertainty_temperature(z, y)
    t_nc, calibrated = netcal_temperature(z, y)
    for theirs in (t_tu, t_nc):
        assert continuous == pytest.approx(theirs, abs=1e-2)
        assert abs(grid - theirs) <= step + 1e-9
    np.testing.assert_allclose(calibrated, posthoc.temperature_scale(z, t_nc), atol=1e-6)


@pytest.mark.parametrize("t_true", [0.6, 1.7, 3.0])
def test_continuous_temperature_fit_equals_netcal_where_the_optimum_is_finite(t_true):
    z, y = miscalibrated(t_true=t_true, seed=int(10 * t_true))
    with warnings.catch_warnings():
        warnings.simplefilter("error", posthoc.SearchLimitWarning)  # the optimum is inside the bounds
        cal = posthoc.fit_temperature(z, y)
        from_probs = posthoc.fit_temperature(metrics.probs_from_logits(z), y, is_probs=True)
    lo, hi = posthoc.TS_BOUNDS
    assert lo * 1.01 < cal.T < hi / 1.01 and cal.metric == "nll"
    # a finite optimum: the derivative of the NLL in 1/T vanishes there
    p = metrics.probs_from_logits(z, cal.T)
    assert abs(np.mean((p * z).sum(1) - z[np.arange(len(y)), y])) < 1e-6 * np.abs(z).mean()
    t_nc, _ = netcal_temperature(z, y)
    assert cal.T == pytest.approx(t_nc, rel=1e-4)
    assert from_probs.T == pytest.approx(t_nc, rel=1e-4)


@pytest.mark.parametrize("n_bins", [5, 10, 15, 20])
def test_ece_equals_netcal_ece(n_bins):
    rng = np.random.default_rng(n_bins)
    probs = rng.dirichlet(np.full(10, 0.3), size=3000)
    y = np.where(rng.random(3000) < 0.7, probs.argmax(1), rng.integers(0, 10, 3000))
    theirs = netcal_metrics.ECE(bins=n_bins).measure(probs, y)
    assert metrics.ece(probs, y, n_bins=n_bins) == pytest.approx(float(theirs), abs=1e-12)
