"""Temperature scaling and focal temperature scaling against brute force and closed forms."""
from __future__ import annotations


import warnings

import numpy as np
import pytest
from scipy import special

from replicate import metrics, posthoc, synthetic


def _data(n=3000, k=10, beta=2.0, scale=3.0, seed=0):
    s = synthetic.LogitModel(n_classes=k, beta=beta, scale=scale).sample(n, rng=seed)
    return s.logits, s.labels


def _ece_loop(conf, correct, n_bins=15):
    """Literal ECE: bins (lower, upper] from i/n_bins (0 in the first), weighted by mass (test's own code)."""
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        m = (conf > lo) & (conf <= hi) if b else (conf >= lo) & (conf <= hi)
        if m.any():
            total += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return total


def _nll(z, y, t):
    zt = z / t
    return float(np.mean(special.logsumexp(zt, 1) - zt[np.arange(len(y)), y]))


def _focal_eq1(q, gamma):
    """Komisarenko & Kull Eq. (1), typed out directly: p_j proportional to 1 / f'(q_j)."""
    fprime = (1 - q) ** gamma * (gamma * np.log(q) / (1 - q) - 1 / q)
    w = 1 / fprime
    return w / w.sum(1, keepdims=True)


def test_temperature_scale_is_softmax_of_scaled_logits():
    z, _ = _data(50)
    for t in (0.3, 1.0, 2.7):
        p = posthoc.temperature_scale(z, t)
        assert p.dtype == np.float64
        np.testing.assert_allclose(p, special.softmax(z / t, axis=1), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "warm", None])
def test_invalid_temperature_is_rejected(bad):
    z, _ = _data(5)
    with pytest.raises(ValueError, match="T must be a finite number > 0"):
        posthoc.temperature_scale(z, bad)


def test_fast_curve_matches_metrics_module_and_a_literal_loop():
    z, y = _data(2000, k=10)
    grid = [0.3, 0.9, 1.7, 2.0, 4.4]
    curve = posthoc.temperature_curve(z, y, grid=grid, metrics=("ece", "nll", "adaece"))
    for t, e, nl, ada in curve[["T", "ece", "nll", "adaece"]].itertuples(index=False):
        p = special.softmax(z / t, axis=1)
        assert e == pytest.approx(metrics.ece(p, y), abs=1e-13)
        assert e == pytest.approx(_ece_loop(p.max(1), (p.argmax(1) == y).astype(float)), abs=1e-13)
        assert nl == pytest.approx(metrics.nll(z / t, y), rel=1e-12)
        assert nl == pytest.approx(_nll(z, y, t), rel=1e-12)
        assert ada == pytest.approx(metrics.adaptive_ece(p, y), abs=1e-13)


def _on_edges(seed=0):
    """Logits whose top-1 confidences sit exactly on bin edges at every temperature: rows of
    3, 5 and 15 tied classes (the rest far below) have confidence 1/3, 1/5 and 1/15 - the
    edges 5/15, 3/15 and 1/15 of 15 bins - and 2 tied give 1/2, an edge of 2, 4 and 10 bins."""
    rng = np.random.default_rng(seed)
    blocks = []
    for n_tied in (2, 3, 5, 15):
        z = np.full((12, 15), -1e4)
        z[:, :n_tied] = rng.normal()
        blocks.append(z)
    z = np.concatenate([*blocks, 3 * rng.normal(size=(60, 15))])
    return z, rng.integers(0, 3, len(z))


@pytest.mark.parametrize("n_bins", [2, 4, 5, 10, 15, 30])
def test_fast_curve_bins_confidences_on_edges_as_the_metrics_module(n_bins):
    z, y = _on_edges()
    grid = [0.1, 0.5, 1.0, 2.3, 10.0]
    curve = posthoc.temperature_curve(z, y, grid=grid, n_bins=n_bins, metrics=("ece",))
    for t, e in curve.itertuples(index=False):
        p = metrics.probs_from_logits(z, t)
        conf = p.max(1)
        assert np.isin(conf, np.arange(n_bins + 1) / n_bins).sum() >= 12  # some sit exactly on an edge
        assert e == pytest.approx(metrics.ece(p, y, n_bins=n_bins), abs=1e-15)
        assert e == pytest.approx(_ece_loop(conf, (p.argmax(1) == y).astype(float), n_bins), abs=1e-13)


def test_a_fit_at_the_end_of_its_search_warns_naming_the_limit():
    # every prediction right and confident: the NLL keeps falling as T -> 0, no finite optimum
    z = np.tile([[4.0, 0.0, -1.0]], (30, 1))
    y = np.zeros(30, dtype=int)
    with pytest.warns(posthoc.SearchLimitWarning, match=r"search limit T = 0\.01 \(bounds = \(0\.01, 100\)\)"):
        assert posthoc.fit_temperature(z, y).T == pytest.approx(0.01, rel=1e-6)
    with pytest.warns(posthoc.SearchLimitWarning, match=r"T = 0\.5 \(bounds = \(0\.5, 2\)\)"):
        posthoc.fit_temperature(z, y, bounds=(0.5, 2.0))
    with pytest.warns(posthoc.SearchLimitWarning, match=r"validation nll is smallest at T = 0\.1, the smallest"):
        posthoc.fit_temperature(z, y, method="grid", metric="nll")
    with pytest.warns(posthoc.SearchLimitWarning, match=r"fit_focal_temperature: .* T = 0\.05, the smallest"):
        posthoc.fit_focal_temperature(z, y, gammas=[0.0, 1.0])
    # an optimum inside the range: no warning
    zz, yy = _data(2000, k=10, beta=1.6, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", posthoc.SearchLimitWarning)
        posthoc.fit_temperature(zz, yy)
        posthoc.fit_temperature(zz, yy, method="grid", metric="ece")


def test_probabilities_are_refused_as_logits_and_scaled_with_is_probs():
    z, y = _data(500, k=5)
    p = metrics.probs_from_logits(z)
    for call in (lambda x, **kw: posthoc.fit_temperature(x, y, **kw),
                 lambda x, **kw: posthoc.fit_temperature(x, y, method="grid", **kw),
                 lambda x, **kw: posthoc.temperature_curve(x, y, **kw),
                 lambda x, **kw: posthoc.temperature_scale(x, 1.5, **kw),
                 lambda x, **kw: posthoc.fit_focal_temperature(x, y, **kw),
                 lambda x, **kw: posthoc.Calibrator("temperature", {"T": 1.5}, "nll", 0.0)(x, **kw)):
        with pytest.raises(ValueError, match="logits look like probabilities .*; pass is_probs=True") as err:
            call(p)
        assert "\n" not in str(err.value)
        call(p, is_probs=True)  # accepted when said
    # is_probs scales log p: the same fit and the same map as from the logits
    assert posthoc.fit_temperature(p, y, is_probs=True).T == pytest.approx(posthoc.fit_temperature(z, y).T, rel=1e-9)
    np.testing.assert_allclose(posthoc.temperature_scale(p, 1.7, is_probs=True), posthoc.temperature_scale(z, 1.7),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="probs must be probabilities"):
        posthoc.fit_temperature(z, y, is_probs=True)


@pytest.mark.parametrize("metric", ["ece", "nll", "adaece"])
def test_grid_search_equals_the_reference_loop(metric):
    """Mukhoti et al.'s loop: T = 0.1 .. 10.0, update only on a strict improvement."""
    z, y = _data(1500, k=10, beta=2.3)
    cal = posthoc.fit_temperature(z, y, method="grid", metric=metric)
    score = {"ece": lambda t: _ece_loop(*(lambda p: (p.max(1), (p.argmax(1) == y).astype(float)))(
                 special.softmax(z / t, axis=1))),
             "nll": lambda t: _nll(z, y, t),
             "adaece": lambda t: metrics.adaptive_ece(special.softmax(z / t, axis=1), y)}[metric]
    best, t_opt = np.inf, None
    for i in range(1, 101):
        t = i / 10
        s = score(t)
        if s < best - 1e-12:
            best, t_opt = s, t
    assert cal.name == "temperature" and cal.metric == metric
    assert cal.T == pytest.approx(t_opt)
    assert cal.score == pytest.approx(best, abs=1e-12)
    assert len(cal.search) == 100 and cal.search["T"].iloc[0] == pytest.approx(0.1)


def test_ties_keep_the_smaller_temperature():
    # every prediction correct and saturated: ECE is exactly 0 at every T of the grid
    z = np.tile([[1000.0, 0.0, -5.0]], (40, 1))
    y = np.zeros(40, dtype=int)
    with pytest.warns(posthoc.SearchLimitWarning, match=r"T = 0\.1, the smallest temperature of the grid"):
        cal = posthoc.fit_temperature(z, y, method="grid", metric="ece")
    assert (cal.search["ece"] == 0).all() and cal.T == pytest.approx(0.1)
    with pytest.warns(posthoc.SearchLimitWarning, match=r"T = 1, the smallest .* grid \(1 \.\. 3\)"):
        cal = posthoc.fit_temperature(z, y, method="grid", metric="ece", grid=[3.0, 1.0, 2.0])
    assert cal.T == 1.0


def test_continuous_nll_fit_is_the_global_minimiser():
    z, y = _data(2000, k=10, beta=1.6, seed=3)
    cal = posthoc.fit_temperature(z, y)  # the default: Guo et al.'s continuous NLL fit
    assert cal.metric == "nll" and cal.search is None
    assert cal.T == posthoc.fit_temperature(z, y, method="nll").T
    fine = np.linspace(1.0, 2.5, 601)
    brute = fine[np.argmin([_nll(z, y, t) for t in fine])]
    assert cal.T == pytest.approx(brute, abs=2e-3)
    # first-order condition in beta = 1/T: mean_i (E_{softmax(beta z_i)}[z_i] - z_{i, y_i}) = 0
    p = special.softmax(z / cal.T, axis=1)
    grad = np.mean((p * z).sum(1) - z[np.arange(len(y)), y])
    assert abs(grad) < 1e-6 * np.abs(z).mean()
    assert cal.score == pytest.approx(_nll(z, y, cal.T), rel=1e-12)


def test_temperature_recovers_the_true_temperature_of_the_logit_model():
    z, y = _data(40_000, k=10, beta=2.5, seed=9)
    assert posthoc.fit_temperature(z, y, method="nll").T == pytest.approx(2.5, rel=0.03)
    assert posthoc.fit_temperature(z, y, method="grid", metric="nll").T == pytest.approx(2.5, abs=0.1)
    assert posthoc.fit_temperature(z, y, method="grid", metric="ece").T == pytest.approx(2.5, abs=0.3)


def test_focal_calibrator_applies_eq1_after_temperature():
    z, _ = _data(200, k=5, scale=1.0)
    cal = posthoc.Calibrator("focal_temperature", {"T": 1.4, "gamma": 0.75}, "nll", 0.0)
    expected = _focal_eq1(special.softmax(z / 1.4, axis=1), 0.75)
    np.testing.assert_allclose(cal(z), expected, rtol=1e-9)
    cal = posthoc.Calibrator("focal_temperature", {"T": 0.8, "gamma": -0.5}, "nll", 0.0)
    np.testing.assert_allclose(cal(z), _focal_eq1(special.softmax(z / 0.8, axis=1), -0.5), rtol=1e-9)


@pytest.mark.parametrize("metric", ["nll", "adaece"])
def test_focal_grid_search_equals_brute_force(metric):
    # moderate logits and T >= 0.8 keep 1 - q above 1e-7, where the naive Eq. (1) is accurate
    z, y = _data(1500, k=6, beta=1.5, scale=1.0, seed=2)
    gammas, temps = [-0.25, 0.5, 2.0], np.round(np.arange(8, 31) * 0.1, 10)
    cal = posthoc.fit_focal_temperature(z, y, gammas=gammas, temperatures=temps, metric=metric)
    best, arg = np.inf, None
    for g in gammas:
        for t in temps:
            p = _focal_eq1(special.softmax(z / t, axis=1), g)
            s = (-np.mean(np.log(p[np.arange(len(y)), y])) if metric == "nll"
                 else metrics.adaptive_ece(p, y))
            if s < best - 1e-12:
                best, arg = s, (g, t)
    assert (cal.gamma, cal.T) == pytest.approx(arg)
    assert cal.score == pytest.approx(best, rel=1e-7)
    assert len(cal.search) == len(gammas) * len(temps)


def test_focal_with_gamma_zero_reduces_to_temperature_scaling():
    z, y = _data(1500, k=10, beta=1.7, seed=5)
    grid = np.round(np.arange(1, 41) * 0.1, 10)
    fts = posthoc.fit_focal_temperature(z, y, gammas=[0.0], temperatures=grid, metric="nll")
    ts = posthoc.fit_temperature(z, y, method="grid", metric="nll", grid=grid)
    assert fts.T == ts.T and fts.score == pytest.approx(ts.score, rel=1e-10)


def test_default_grids_are_the_protocol_grids():
    np.testing.assert_allclose(posthoc.TS_GRID, np.arange(1, 101) / 10)
    np.testing.assert_allclose(posthoc.FTS_T_GRID, np.arange(1, 101) / 20)
    assert posthoc.FTS_GAMMAS == (-0.5, -0.25, 0.05, 0.25, 0.37, 0.5, 0.75, 1.0, 5.0)


def test_bad_arguments_raise_clear_errors():
    z, y = _data(30)
    with pytest.raises(ValueError, match="method"):
        posthoc.fit_temperature(z, y, method="lbfgs")
    with pytest.raises(ValueError, match="metric"):
        posthoc.fit_temperature(z, y, metric="brier")
    with pytest.raises(ValueError, match="metric must be 'nll'"):
        posthoc.fit_temperature(z, y, method="nll", metric="ece")
    with pytest.raises(ValueError, match="grid"):
        posthoc.fit_temperature(z, y, method="grid", grid=[1.0, -2.0])
    with pytest.raises(ValueError, match="grid"):
        posthoc.fit_temperature(z, y, method="grid", grid=[])
    with pytest.raises(ValueError, match="n_bins"):
        posthoc.fit_temperature(z, y, method="grid", n_bins=0)
    with pytest.raises(ValueError, match="grid applies only with method='grid'"):
        posthoc.fit_temperature(z, y, grid=posthoc.TS_GRID)
    with pytest.raises(ValueError, match="paper_compat applies only"):
        posthoc.fit_temperature(z, y, paper_compat=True)
    with pytest.raises(ValueError, match="bounds applies only with method='nll'"):
        posthoc.fit_temperature(z, y, method="grid", bounds=(0.5, 2.0))
    for bad in [(2.0, 1.0), (0.0, 1.0), (1.0,), "wide", (1.0, float("inf"))]:
        with pytest.raises(ValueError, match="bounds must be two finite temperatures"):
            posthoc.fit_temperature(z, y, bounds=bad)
    with pytest.raises(ValueError, match="is_probs must be True or False"):
        posthoc.fit_temperature(z, y, is_probs="yes")
    with pytest.raises(ValueError, match="gamma"):
        posthoc.fit_focal_temperature(z, y, gammas=[0.5, -1.0])
    with pytest.raises(ValueError, match="gamma"):
        posthoc.fit_focal_temperature(z, y, gammas=[float("nan")])
    with pytest.raises(ValueError, match="temperatures"):
        posthoc.fit_focal_temperature(z, y, temperatures=[0.0, 1.0])
    with pytest.raises(ValueError, match="metric"):
        posthoc.fit_focal_temperature(z, y, metric="brier")
    with pytest.raises(ValueError, match="labels"):
        posthoc.fit_temperature(z, np.full(len(z), 99))
    with pytest.raises(ValueError, match="logits"):
        posthoc.fit_temperature(z[:, :1], y)
    with pytest.raises(ValueError, match="gamma"):
        posthoc.Calibrator("focal_temperature", {"T": 1.0, "gamma": -2.0}, "nll", 0.0)
    with pytest.raises(ValueError, match="T must be"):
        posthoc.Calibrator("temperature", {"T": 0.0}, "ece", 0.0)
