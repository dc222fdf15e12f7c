"""The studies and figures of the chapter *Measuring calibration* against independent computations:
quadrature for the true errors, torchmetrics / sklearn / scipy for the estimates and fits,
plain loops over hand-made study frames for the quoted means."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from scipy import integrate, optimize, special, stats  # noqa: E402

from replicate.calibration import figures as cf  # noqa: E402
from replicate.calibration import study as cs  # noqa: E402
from replicate import synthetic  # noqa: E402

from needs import oracle  # noqa: E402

# the oracles, each imported by the test that uses it
tm = oracle("torchmetrics.functional.classification", "torchmetrics")
skm = oracle("sklearn.metrics", "scikit-learn")

GRID = np.round(np.arange(1, 101) * 0.1, 10)   # the papers' temperature grid, written out again


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _tm_ce(probs, labels, norm):
    """torchmetrics' top-label calibration error with 15 equal-width bins (it bins in float32,
    hence the tolerance of 1e-6 on fractions where it is used)."""
    p = torch.as_tensor(probs, dtype=torch.float64)
    return float(tm.multiclass_calibration_error(p, torch.as_tensor(labels), num_classes=p.shape[1],
                                                 n_bins=15, norm=norm))


def _quad(model, fn):
    """E[fn(h(c), c)] by quadrature over c, with h written out from the model's definition."""
    lo = 1.0 / model.n_classes
    dens = stats.beta(model.a, model.b, loc=lo, scale=1 - lo).pdf

    def h(c):
        return lo + (1 - lo) * ((c - lo) / (1 - lo)) ** model.alpha

    return integrate.quad(lambda c: fn(h(c), c) * dens(c), lo, 1.0, limit=400, epsabs=1e-12)[0]


def _by_hand_means(frame, keys):
    """Mean estimate per key tuple by a plain loop."""
    sums, counts = {}, {}
    for row in frame.itertuples(index=False):
        k = tuple(getattr(row, c) for c in keys)
        sums[k] = sums.get(k, 0.0) + row.estimate
        counts[k] = counts.get(k, 0) + 1
    return {k: sums[k] / counts[k] for k in sums}


def _fake_study(estimators, ns, reps, n_bins=None, seed=0):
    """A long-form study frame with random estimates (the layout of synthetic.estimator_study)."""
    g = np.random.default_rng(seed)
    rows = []
    for n in ns:
        for r in range(reps):
            for name in estimators:
                if n_bins is None:
                    rows.append({"n": n, "rep": r, "estimator": name, "estimate": g.random()})
                else:
                    rows += [{"n": n, "rep": r, "n_bins": b, "estimator": name, "estimate": g.random()}
                             for b in n_bins]
    return pd.DataFrame(rows)


def _ece_by_hand(conf, correct, n_bins=15):
    """Equal-width ECE with bins (lower, upper], written as a loop."""
    total = 0.0
    for b in range(n_bins):
        m = (conf > b / n_bins) & (conf <= (b + 1) / n_bins)
        if b == 0:
            m |= conf == 0
        if m.any():
            total += m.sum() / len(conf) * abs(correct[m].mean() - conf[m].mean())
    return total


def _fits_by_hand(z, y):
    """(T by grid ECE, T by grid NLL, T by continuous NLL) with scipy and loops."""
    pred_ok = z.argmax(1) == y
    eces, nlls = [], []
    for t in GRID:
        logp = special.log_softmax(z / t, axis=1)
        eces.append(_ece_by_hand(np.exp(logp).max(1), pred_ok))
        nlls.append(-logp[np.arange(len(y)), y].mean())
    eces, nlls = np.array(eces), np.array(nlls)
    first = lambda s: GRID[np.flatnonzero(s <= s.min() * (1 + 1e-12))[0]]  # noqa: E731
    res = optimize.minimize_scalar(
        lambda s: -special.log_softmax(z / np.exp(s), axis=1)[np.arange(len(y)), y].mean(),
        bounds=(np.log(1e-2), np.log(1e2)), method="bounded", options={"xatol": 1e-10})
    return first(eces), first(nlls), float(np.exp(res.x))


# ----------------------------------------------------------------------------- sizes, truths
def test_sizes_of_every_profile_and_a_bad_profile():
    for profile in ("smoke", "cpu", "gpu", "paper"):
        s = cs.sizes(profile)
        assert s["refits"] == max(s["reps"], 12) and min(s["ns"]) < max(s["ns"])
        assert s["ns"] == sorted(s["ns"]) and s["bins"] == sorted(s["bins"])
    assert cs.sizes("paper")["reps"] == 100 and cs.sizes("smoke")["reps"] == 4
    s = cs.sizes("cpu")
    s["reps"] = 0                                   # a copy: the table is untouched
    assert cs.SIZES["cpu"]["reps"] == 25
    with pytest.raises(ValueError, match="profile must be one of smoke, cpu, gpu, paper; got 'huge'"):
        cs.sizes("huge")


def test_true_errors_and_targets_match_quadrature():
    model = synthetic.BetaModel(a=2.5, b=2.0, alpha=1.9, n_classes=4)
    truth = cs.true_errors(model)
    assert truth["ECE"] == pytest.approx(_quad(model, lambda h, c: abs(h - c)), rel=1e-7)
    assert truth["RMSCE"] == pytest.approx(np.sqrt(_quad(model, lambda h, c: (h - c) ** 2)), rel=1e-7)
    c = np.linspace(0.25, 1, 200_001)
    assert truth["MCE"] == pytest.approx(np.abs(model.calibration_function(c) - c).max(), rel=1e-6)
    target = cs.targets(model)
    assert set(target) == set(cs.L1) | set(cs.L2) | set(cs.OTHER)
    assert all(target[k] == truth["ECE"] for k in cs.L1) and all(target[k] == truth["RMSCE"] for k in cs.L2)
    assert target["MCE (15 equal-width)"] == truth["MCE"] and np.isnan(target["classwise-ECE"])


def test_estimate_table_against_torchmetrics_and_a_classwise_loop():
    model = synthetic.BetaModel()
    probs, labels = model.sample_probs(3000, rng=11)
    table = cs.estimate_table(model, probs, labels).set_index("estimator")
    assert list(table.index) == [*cs.L1, *cs.L2, *cs.OTHER]
    est = table["estimate (%)"]
    assert est["ECE (15 equal-width)"] == pytest.approx(100 * _tm_ce(probs, labels, "l1"), abs=1e-4)
    assert est["RMSCE (15 equal-width)"] == pytest.approx(100 * _tm_ce(probs, labels, "l2"), abs=1e-4)
    assert est["MCE (15 equal-width)"] == pytest.approx(100 * _tm_ce(probs, labels, "max"), abs=1e-4)
    classwise = np.mean([_ece_by_hand(probs[:, k], labels == k) for k in range(probs.shape[1])])
    assert est["classwise-ECE"] == pytest.approx(100 * classwise, abs=1e-9)
    true = table["true value (%)"]
    assert true["ECE sweep"] == pytest.approx(100 * _quad(model, lambda h, c: abs(h - c)), rel=1e-7)
    assert np.isnan(true["classwise-ECE"])


# ----------------------------------------------------------------------------- quoted numbers
def test_model_numbers_from_the_definition():
    model = synthetic.BetaModel(a=3.0, b=2.0, alpha=1.3, n_classes=5)
    nums = cs.model_numbers(model)
    assert (nums["beta_a"], nums["beta_b"], nums["beta_alpha"], nums["beta_k"]) == (3.0, 2.0, 1.3, 5)
    assert nums["true_acc"] == pytest.approx(100 * _quad(model, lambda h, c: h), rel=1e-8)
    assert nums["true_conf"] == pytest.approx(100 * _quad(model, lambda h, c: c), rel=1e-8)
    assert nums["true_ece"] == pytest.approx(100 * _quad(model, lambda h, c: abs(h - c)), rel=1e-7)
    assert all(isinstance(v, (int, float)) for v in nums.values())


def test_size_and_calibrated_numbers_are_the_means_of_the_study():
    model = synthetic.BetaModel()
    study = _fake_study(cs.L1 | cs.L2, ns=[300, 100, 3000], reps=3)
    means = _by_hand_means(study, ("estimator", "n"))
    nums = cs.size_numbers(study, model)
    assert (nums["n_lo"], nums["n_hi"], nums["reps"]) == (100, 3000, 3)
    for key, name in cs.SHORT_NAMES.items():
        assert nums[f"{key}_lo"] == pytest.approx(100 * means[(name, 100)], rel=1e-12)
        assert nums[f"{key}_hi"] == pytest.approx(100 * means[(name, 3000)], rel=1e-12)
    assert nums["pred_lo"] == pytest.approx(100 * model.expected_binned_ece(100))
    cal = cs.calibrated_numbers(study, model)
    assert cal["cal_ece_lo"] == pytest.approx(100 * means[("ECE (15 equal-width)", 100)], rel=1e-12)
    assert cal["cal_ece_hi"] == pytest.approx(100 * means[("ECE (15 equal-width)", 3000)], rel=1e-12)
    table = cs.mean_estimates(study)
    assert table.loc["ECE sweep", 300] == pytest.approx(means[("ECE sweep", 300)], rel=1e-12)
    with pytest.raises(ValueError, match="no column"):
        cs.mean_estimates(study.drop(columns="n"))


def test_calibrated_numbers_predict_the_bias_of_a_calibrated_predictor():
    """The CLT prediction the chapter quotes lies within Monte Carlo error of a direct simulation."""
    model = synthetic.BetaModel(alpha=1.0)
    study = synthetic.estimator_study(model, cs.BINNED_L1, [300, 3000], reps=40, rng=5)
    nums = cs.calibrated_numbers(study, model)
    for n, key in ((300, "lo"), (3000, "hi")):
        sims = study[(study.n == n) & (study.estimator == "ECE (15 equal-width)")].estimate
        se = 100 * sims.std() / np.sqrt(len(sims))
        assert nums[f"cal_ece_{key}"] == pytest.approx(nums[f"cal_pred_{key}"], abs=4 * se + 0.1)


def test_bins_numbers_are_the_means_at_the_smallest_size():
    study = _fake_study(cs.BINS, ns=[3000, 300], reps=4, n_bins=[15, 5, 50])
    means = _by_hand_means(study, ("estimator", "n", "n_bins"))
    nums = cs.bins_numbers(study)
    assert (nums["nb_lo"], nums["nb_hi"], nums["bins_n"]) == (5, 50, 300)
    assert nums["bins_ece_lo"] == pytest.approx(100 * means[("ECE (equal-width)", 300, 5)], rel=1e-12)
    assert nums["bins_ece_hi"] == pytest.approx(100 * means[("ECE (equal-width)", 300, 50)], rel=1e-12)
    assert nums["bins_ada_hi"] == pytest.approx(100 * means[("AdaECE (equal-mass)", 300, 50)], rel=1e-12)


# ----------------------------------------------------------------------------- temperature
def test_fit_temperatures_match_brute_force_fits():
    model = synthetic.LogitModel()
    val = model.sample(1500, rng=2)
    fits = cs.fit_temperatures(val)
    t_ece, t_nll, t_cont = _fits_by_hand(val.logits, val.labels)
    assert fits["ece"].T == pytest.approx(t_ece) and fits["nll"].T == pytest.approx(t_nll)
    assert fits["continuous"].T == pytest.approx(t_cont, rel=1e-6)


def test_before_after_panels_are_the_softmax_at_one_and_at_the_fitted_temperature():
    model = synthetic.LogitModel()
    sample = model.sample(400, rng=3)
    fit = cs.fit_temperatures(sample)["ece"]
    panels = cs.before_after(sample, fit)
    (k1, (p1, y1)), (k2, (p2, y2)) = panels.items()
    assert k1 == "before: T = 1" and k2 == f"after: T = {fit.T:.1f}"
    np.testing.assert_allclose(p1, special.softmax(sample.logits, axis=1), rtol=1e-12)
    np.testing.assert_allclose(p2, special.softmax(sample.logits / fit.T, axis=1), rtol=1e-12)
    assert (y1 == sample.labels).all() and (y2 == sample.labels).all()


def test_temperature_numbers_against_torchmetrics_and_sklearn():
    model = synthetic.LogitModel()
    val, test = model.sample(1000, rng=4), model.sample(2000, rng=5)
    fits = cs.fit_temperatures(val)
    nums = cs.temperature_numbers(model, fits, val, test, rng=6)
    t = fits["ece"].T
    p0, p1 = special.softmax(test.logits, 1), special.softmax(test.logits / t, 1)
    assert (nums["ts_n_val"], nums["ts_n_test"], nums["ts_beta"], nums["T_ece"]) == (1000, 2000, 1.8, t)
    ok = test.logits.argmax(1) == test.labels
    assert nums["ece_before"] == pytest.approx(100 * _ece_by_hand(p0.max(1), ok), rel=1e-10)
    assert nums["ece_after"] == pytest.approx(100 * _ece_by_hand(p1.max(1), ok), rel=1e-10)
    assert nums["nll_before"] == pytest.approx(skm.log_loss(test.labels, p0, labels=range(10)), rel=1e-9)
    assert nums["nll_after"] == pytest.approx(skm.log_loss(test.labels, p1, labels=range(10)), rel=1e-9)
    acc = 100 * skm.accuracy_score(test.labels, test.logits.argmax(1))
    assert nums["acc_before"] == pytest.approx(acc) and nums["acc_after"] == pytest.approx(acc)
    z = np.random.default_rng(99).normal(0, model.scale, size=(200_000, 10))   # independent Monte Carlo
    gap = special.softmax(model.beta * z, 1).max(1) - special.softmax(z, 1).max(1)
    assert nums["true_ece_logit"] == pytest.approx(100 * gap.mean(), abs=100 * 6 * gap.std() / np.sqrt(len(z)))


def test_temperature_refits_are_fits_on_consecutive_samples_of_one_generator():
    model = synthetic.LogitModel()
    refits = cs.temperature_refits(model, 600, 3, rng=7)
    assert list(refits.columns) == ["T by validation ECE (grid)", "T by validation NLL (continuous)"]
    g = np.random.default_rng(7)
    for row in refits.itertuples(index=False):
        v = model.sample(600, g)
        t_ece, _, t_cont = _fits_by_hand(v.logits, v.labels)
        assert row[0] == pytest.approx(t_ece) and row[1] == pytest.approx(t_cont, rel=1e-6)
    nums = cs.refit_numbers(refits)
    assert nums["n_refits"] == 3
    assert nums["sd_T_ece"] == pytest.approx(np.std(refits.iloc[:, 0].to_numpy(), ddof=1))
    assert nums["sd_T_nll"] == pytest.approx(np.std(refits.iloc[:, 1].to_numpy(), ddof=1))
    with pytest.raises(ValueError, match="reps"):
        cs.temperature_refits(model, 600, 0)


def test_glue_passes_plain_numbers(monkeypatch):
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    cs.glue({"a": np.float64(0.25), "b": 3, "c": "text"})
    assert calls == [("a", 0.25, False), ("b", 3, False), ("c", "text", False)]
    assert type(calls[0][1]) is float


# ----------------------------------------------------------------------------- figures
def _mean_lines(ax, n_points):
    return sorted(tuple(np.round(line.get_ydata(), 12)) for line in ax.lines
                  if len(line.get_ydata()) == n_points and line.get_linestyle() != "--")


def test_reliability_and_histogram_draw_the_true_curve_and_the_histogram():
    model = synthetic.BetaModel()
    probs, labels = model.sample_probs(800, rng=1)
    fig = cf.reliability_and_histogram(probs, labels, model.calibration_function, caption_text="profile: x")
    ax1, ax2 = fig.axes
    line = [ln for ln in ax1.lines if ln.get_label() == "true h(c)"][0]
    u = (line.get_xdata() - 0.1) / 0.9
    np.testing.assert_allclose(line.get_ydata(), 0.1 + 0.9 * u ** 1.6, rtol=1e-12)
    assert sum(p.get_height() for p in ax2.patches) == pytest.approx(100)
    assert any(t.get_text() == "profile: x" for t in fig.texts)


def test_size_figure_draws_the_means_and_each_panels_true_value():
    model = synthetic.BetaModel()
    study = _fake_study(cs.L1 | cs.L2, ns=[100, 1000, 3000], reps=3)
    fig = cf.size_figure(study, model)
    means = _by_hand_means(study, ("estimator", "n"))
    for ax, names, true_value in ((fig.axes[0], cs.L1, _quad(model, lambda h, c: abs(h - c))),
                                  (fig.axes[1], cs.L2, np.sqrt(_quad(model, lambda h, c: (h - c) ** 2)))):
        expected = sorted(tuple(np.round([means[(k, n)] for n in (100, 1000, 3000)], 12)) for k in names)
        assert _mean_lines(ax, 3) == expected
        assert any(np.allclose(ln.get_ydata(), true_value, rtol=1e-7) for ln in ax.lines)


def test_bias_figure_draws_the_clt_prediction_and_zero_for_a_calibrated_model():
    model = synthetic.BetaModel(alpha=1.0)
    study = _fake_study(cs.BINNED_L1, ns=[1000, 100], reps=2)
    fig = cf.bias_figure(study, model, title="t")
    ax = fig.axes[0]
    dashed = [ln for ln in ax.lines if ln.get_linestyle() == "--" and ln.get_label().startswith("CLT")][0]
    np.testing.assert_array_equal(dashed.get_xdata(), [100, 1000])
    np.testing.assert_allclose(dashed.get_ydata(), [model.expected_binned_ece(n) for n in (100, 1000)])
    assert any(np.allclose(ln.get_ydata(), 0.0) and len(ln.get_ydata()) == 2 for ln in ax.lines)
    assert ax.get_title() == "t"


def test_bins_figure_draws_one_clt_line_per_size_on_the_ece_panel():
    model = synthetic.BetaModel()
    study = _fake_study(cs.BINS, ns=[300, 3000], reps=2, n_bins=[5, 15, 50])
    fig = cf.bins_figure(study, model)
    left, right = fig.axes[:2]
    dashed = [ln for ln in left.lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 2 and not [ln for ln in right.lines if ln.get_linestyle() == "--"]
    for line, n in zip(dashed, (300, 3000)):
        np.testing.assert_allclose(line.get_ydata(), [model.expected_binned_ece(n, b) for b in (5, 15, 50)])
    means = _by_hand_means(study, ("estimator", "n", "n_bins"))
    expected = sorted(tuple(np.round([means[("AdaECE (equal-mass)", n, b)] for b in (5, 15, 50)], 12))
                      for n in (300, 3000))
    assert _mean_lines(right, 3) == expected
    assert "N" not in study.columns                # the study passed in is left as it was
    with pytest.raises(ValueError, match="n_bins"):
        cf.bins_figure(study.drop(columns="n_bins"), model)
