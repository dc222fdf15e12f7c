"""Synthetic predictors: closed forms against quadrature, mpmath and Monte Carlo."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from replicate import synthetic as syn

MODELS = [syn.BetaModel(), syn.BetaModel(a=2.0, b=2.0, alpha=0.6, n_classes=2),
          syn.BetaModel(a=0.7, b=3.0, alpha=2.5, n_classes=100), syn.BetaModel(alpha=1.0)]


def _quad(model, fn):
    """E[fn(h(c), c)] by quadrature with an independent parametrisation on c."""
    lo = 1.0 / model.n_classes
    dens = stats.beta(model.a, model.b, loc=lo, scale=1 - lo).pdf

    def h(c):
        return lo + (1 - lo) * ((c - lo) / (1 - lo)) ** model.alpha

    val, _ = integrate.quad(lambda c: fn(h(c), c) * dens(c), lo, 1.0, limit=400,
                            epsabs=1e-12, epsrel=1e-10)
    return val


@pytest.mark.parametrize("model", MODELS)
def test_beta_model_closed_forms_match_quadrature(model):
    assert model.true_ece() == pytest.approx(_quad(model, lambda h, c: abs(h - c)), abs=1e-9)
    rms = math.sqrt(_quad(model, lambda h, c: (h - c) ** 2))
    assert model.true_rmsce() == pytest.approx(rms, abs=1e-9)
    assert model.accuracy() == pytest.approx(_quad(model, lambda h, c: h), abs=1e-9)
    assert model.mean_confidence() == pytest.approx(_quad(model, lambda h, c: c), abs=1e-9)


def test_beta_model_ece_matches_mpmath_high_precision():
    m = syn.BetaModel(a=3.3, b=1.7, alpha=1.9, n_classes=10)
    mp.mp.dps = 40
    a, b, al, lo = mp.mpf("3.3"), mp.mpf("1.7"), mp.mpf("1.9"), mp.mpf(1) / 10
    norm = mp.beta(a, b)
    val = mp.quad(lambda u: (1 - lo) * abs(u ** al - u) * u ** (a - 1) * (1 - u) ** (b - 1) / norm, [0, 1])
    assert abs(m.true_ece() - float(val)) < 1e-13


@pytest.mark.parametrize("model", MODELS[:3])
def test_true_mce_is_the_sup_of_the_gap(model):
    c = np.linspace(model.lo, 1.0, 2_000_001)
    gap = np.abs(model.calibration_function(c) - c).max()
    assert model.true_mce() == pytest.approx(gap, rel=1e-9, abs=1e-12)


def test_calibrated_model_has_zero_error():
    m = syn.BetaModel(alpha=1.0)
    assert m.true_ece() == 0.0 and m.true_mce() == 0.0 and m.true_rmsce() == pytest.approx(0.0, abs=1e-7)


def test_sampled_confidence_and_correctness_follow_the_model():
    m = syn.BetaModel()
    c, y = m.sample(200_000, rng=3)
    assert c.dtype == np.float64 and y.dtype == bool
    ks = stats.kstest(c, stats.beta(m.a, m.b, loc=m.lo, scale=1 - m.lo).cdf)
    assert ks.pvalue > 1e-3
    se = math.sqrt(m.accuracy() * (1 - m.accuracy()) / len(y))
    assert abs(y.mean() - m.accuracy()) < 5 * se
    # a plug-in of the known h on the sample converges to the closed-form ECE
    gap = np.abs(m.calibration_function(c) - c)
    assert abs(gap.mean() - m.true_ece()) < 5 * gap.std() / math.sqrt(len(gap))
    # conditional accuracy in a narrow confidence window equals h there
    sel = (c > 0.80) & (c < 0.82)
    p = m.calibration_function(0.81)
    assert abs(y[sel].mean() - p) < 5 * math.sqrt(p * (1 - p) / sel.sum()) + 0.01


def test_sampling_is_reproducible_with_a_seed():
    m = syn.BetaModel()
    a = m.sample_probs(100, rng=np.random.default_rng(7))
    b = m.sample_probs(100, rng=7)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("k", [2, 3, 10, 100])
def test_sample_probs_are_valid_vectors_with_the_model_top_label(k):
    m = syn.BetaModel(n_classes=k)
    probs, labels = m.sample_probs(50_000, rng=11, concentration=0.3)
    assert probs.shape == (50_000, k) and labels.shape == (50_000,)
    assert np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-12)
    top = np.sort(probs, axis=1)
    assert np.all(top[:, -1] > top[:, -2])           # the top-1 entry is unique
    conf = probs.max(1)
    ks = stats.kstest(conf, stats.beta(m.a, m.b, loc=m.lo, scale=1 - m.lo).cdf)
    assert ks.pvalue > 1e-3
    correct = probs.argmax(1) == labels
    se = math.sqrt(m.accuracy() * (1 - m.accuracy()) / len(labels))
    assert abs(correct.mean() - m.accuracy()) < 5 * se
    assert labels.min() >= 0 and labels.max() < k


def test_wrong_labels_follow_the_non_top_probabilities():
    m = syn.BetaModel(n_classes=3, alpha=3.0)
    probs, labels = m.sample_probs(200_000, rng=5)
    wrong = probs.argmax(1) != labels
    # among wrong predictions, the runner-up class is chosen with probability p2 / (p2 + p3)
    srt = np.argsort(probs, axis=1)
    second, third = srt[:, 1], srt[:, 0]
    p2 = np.take_along_axis(probs, second[:, None], 1)[:, 0]
    p3 = np.take_along_axis(probs, third[:, None], 1)[:, 0]
    expected = (p2 / (p2 + p3))[wrong].mean()
    observed = (labels[wrong] == second[wrong]).mean()
    assert abs(observed - expected) < 5 * math.sqrt(0.25 / wrong.sum())


def test_logit_model_binary_quadrature_matches_monte_carlo():
    m = syn.LogitModel(n_classes=2, beta=2.2, scale=1.5)
    exact, err = m.true_ece()
    assert err == 0.0
    z = np.random.default_rng(0).normal(0, 1.5, size=(400_000, 2))
    d = special.softmax(2.2 * z, 1).max(1) - special.softmax(z, 1).max(1)
    assert abs(exact - d.mean()) < 5 * d.std() / math.sqrt(len(d))
    acc, _ = m.true_accuracy()
    assert abs(acc - special.softmax(z, 1).max(1).mean()) < 5 * 0.5 / math.sqrt(len(d))


def test_logit_model_labels_follow_softmax_of_true_logits():
    m = syn.LogitModel(n_classes=4, beta=1.7, scale=2.0)
    s = m.sample(200_000, rng=1)
    np.testing.assert_allclose(s.true_probs, special.softmax(s.logits / 1.7, 1), atol=1e-12)
    onehot = np.eye(4)[s.labels]
    resid = (onehot - s.true_probs).mean(0)
    assert np.all(np.abs(resid) < 5 * 0.5 / math.sqrt(len(s.labels)))
    acc, se = m.true_accuracy(n_mc=200_000, rng=2)
    correct = (s.logits.argmax(1) == s.labels).mean()
    assert abs(correct - acc) < 5 * math.sqrt(acc * (1 - acc) / len(s.labels)) + 5 * se


def test_logit_model_nll_optimal_temperature_is_beta():
    m = syn.LogitModel(n_classes=10, beta=2.5, scale=3.0)
    s = m.sample(100_000, rng=4)

    def nll(t):
        z = s.logits / t
        return float(np.mean(special.logsumexp(z, 1) - z[np.arange(len(z)), s.labels]))

    res = optimize.minimize_scalar(nll, bounds=(0.5, 10), method="bounded", options={"xatol": 1e-6})
    assert res.x == pytest.approx(2.5, rel=0.03)


@pytest.mark.parametrize("kwargs", [dict(a=0), dict(b=-1), dict(alpha=float("nan")), dict(n_classes=1),
                                    dict(n_classes=2.5)])
def test_beta_model_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        syn.BetaModel(**kwargs)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="beta"):
        syn.LogitModel(beta=0)
    with pytest.raises(ValueError, match="n must be"):
        syn.BetaModel().sample(0)
    with pytest.raises(ValueError, match="rng"):
        syn.BetaModel().sample(3, rng="seed")
    with pytest.raises(ValueError, match="confidence"):
        syn.BetaModel(n_classes=10).calibration_function(0.05)


def _ece_literal(conf, hit, n_bins):
    """sum_b |sum_{i in b} (hit_i - c_i)| / n with bins (b/n_bins, (b+1)/n_bins] (test's own code)."""
    b = np.clip(np.ceil(conf * n_bins).astype(int) - 1, 0, n_bins - 1)
    return np.abs(np.bincount(b, weights=hit - conf, minlength=n_bins)).sum() / len(conf)


@pytest.mark.parametrize("alpha,n,n_bins", [(1.6, 400, 15), (1.0, 400, 15), (1.0, 2000, 50)])
def test_clt_expectation_of_binned_ece_matches_monte_carlo(alpha, n, n_bins):
    m = syn.BetaModel(alpha=alpha)
    g = np.random.default_rng(21)
    est = np.array([_ece_literal(*m.sample(n, g), n_bins) for _ in range(1500)])
    se = est.std(ddof=1) / math.sqrt(len(est))
    assert abs(m.expected_binned_ece(n, n_bins) - est.mean()) < 4 * se + 0.02 * est.mean()


def test_clt_expectation_for_a_calibrated_model_scales_as_one_over_root_n():
    m = syn.BetaModel(alpha=1.0)
    assert m.expected_binned_ece(4000) == pytest.approx(m.expected_binned_ece(1000) / 2, rel=1e-9)
    # and it converges to the true ECE for a miscalibrated model
    assert syn.BetaModel().expected_binned_ece(10**9) == pytest.approx(syn.BetaModel().true_ece(), rel=1e-4)


def test_estimator_study_feeds_every_estimator_the_same_samples():
    m = syn.BetaModel(n_classes=4)
    est = {"acc": lambda p, y: float((p.argmax(1) == y).mean()),
           "err": lambda p, y: float((p.argmax(1) != y).mean())}
    df = syn.estimator_study(m, est, sizes=[50, 200], reps=30, rng=3)
    assert list(df.columns) == ["n", "rep", "estimator", "estimate"] and len(df) == 2 * 30 * 2
    wide = df.pivot_table(index=["n", "rep"], columns="estimator", values="estimate")
    np.testing.assert_allclose(wide["acc"] + wide["err"], 1.0)
    acc = df[(df.estimator == "acc") & (df.n == 200)].estimate
    assert abs(acc.mean() - m.accuracy()) < 5 * math.sqrt(0.25 / (200 * 30))
    again = syn.estimator_study(m, est, sizes=[50, 200], reps=30, rng=3)
    np.testing.assert_array_equal(again.estimate.to_numpy(), df.estimate.to_numpy())


def test_estimator_study_with_bin_counts():
    m = syn.BetaModel()
    def ece(p, y, n_bins):
        return _ece_literal(p.max(1), p.argmax(1) == y, n_bins)

    df = syn.estimator_study(m, {"ece": ece}, sizes=[300], reps=2, rng=0, n_bins=[5, 15])
    assert list(df.columns) == ["n", "rep", "n_bins", "estimator", "estimate"]
    assert sorted(df.n_bins.unique()) == [5, 15] and len(df) == 4
    with pytest.raises(ValueError, match="estimators"):
        syn.estimator_study(m, {}, sizes=[10], reps=1)


def test_default_logit_model_quoted_in_the_chapter():
    """The chapter's LogitModel(): true ECE = mean confidence - accuracy (beta > 1), T* = beta."""
    m = syn.LogitModel()
    assert (m.n_classes, m.beta, m.scale) == (10, 1.8, 4.0)
    true_ece, se = m.true_ece(rng=5)
    s = m.sample(200_000, rng=12)
    p = special.softmax(s.logits, 1)
    d = p.max(1) - (p.argmax(1) == s.labels)          # plug-in with sampled labels
    assert abs(d.mean() - true_ece) < 5 * d.std() / math.sqrt(len(d)) + 5 * se
    z = s.logits[:40_000]
    y = s.labels[:40_000]

    def nll(t):
        zt = z / t
        return float(np.mean(special.logsumexp(zt, 1) - zt[np.arange(len(y)), y]))

    t_star = optimize.minimize_scalar(nll, bounds=(0.5, 5), method="bounded").x
    assert t_star == pytest.approx(1.8, rel=0.03)
