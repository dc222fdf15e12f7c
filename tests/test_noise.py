"""Verdicts on our runs that respect their noise (replicate.comparison.noise).

Oracles: the vectorised resampled metrics against the package's own metric functions on
the resampled arrays (a brute-force loop over the same draws); the paired bootstrap's
interval against scipy.stats.bootstrap (paired, percentile) within Monte Carlo error; the
vectorised temperature bootstrap against replicate.posthoc.fit_temperature on each
resample; the rule on constructed models whose calibration is known by construction (a
calibrated model, P(correct | confidence c) = c, against one that reports c + 0.2)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sst

from generated_data import shifted_model_probs

from replicate import posthoc
from replicate.comparison import board, noise, stats
from replicate.comparison.evaluation import METRICS

K = 4


def model(y: np.ndarray, rng, shift: float = 0.0) -> board.Calibrated:
    """A model on labels ``y`` (:func:`generated_data.shifted_model_probs`: calibrated at
    shift 0, over-confident by about ``shift`` above it)."""
    p = shifted_model_probs(y, rng, shift, K)
    return board.Calibrated("none", p, y, np.log(p[np.arange(len(y)), y]), None, 1.0, math.nan)


@pytest.fixture(scope="module")
def labels():
    return np.random.default_rng(0).integers(0, K, 3000)


def cells_of(y, shifts: dict, seeds=(1,), start=0) -> dict:
    out = {}
    for i, (m, shift) in enumerate(shifts.items()):
        for s in seeds:
            out[(m, s)] = model(y, np.random.default_rng(1000 * start + 100 * i + s), shift)
    return out


# ----------------------------------------------------------------------------- resampled metrics
@pytest.mark.parametrize("metric", ["ece", "mce", "classwise_ece", "error", "nll", "brier", "adaece"])
def test_resampled_metric_equals_the_metric_recomputed_on_each_resample(labels, metric):
    cal = model(labels, np.random.default_rng(5), 0.1)
    idx = noise._draws(cal.n, 12, seed=3)
    fast = noise.resampled(cal, metric, idx)
    for row, v in zip(idx, fast):
        p, y = cal.probs[row], cal.labels[row]
        slow = -100 * np.mean(cal.logp_y[row]) if metric == "nll" else 100 * METRICS[metric][1](p, y, None)
        assert v == pytest.approx(slow, rel=1e-10, abs=1e-12)
    everything = noise.resampled(cal, metric, np.arange(cal.n)[None, :])[0]
    assert everything == pytest.approx(board.score(cal, metric), rel=1e-10)


def test_resampled_refuses_bad_indices_and_metrics(labels):
    cal = model(labels, np.random.default_rng(5))
    with pytest.raises(ValueError, match="idx must be"):
        noise.resampled(cal, "ece", np.zeros((2, 5), dtype=int))
    with pytest.raises(ValueError, match="metric must be one of"):
        noise.resampled(cal, "accuracy", np.zeros((2, cal.n), dtype=int))


def test_paired_bootstrap_uses_the_same_draws_for_both_models_and_matches_a_loop(labels):
    a, b = model(labels, np.random.default_rng(1)), model(labels, np.random.default_rng(2), 0.1)
    r = noise.paired_bootstrap(a, b, "ece", n_boot=50, seed=7)
    idx = noise._draws(a.n, 50, seed=7)
    loop = [100 * (METRICS["ece"][1](a.probs[i], labels[i], None) - METRICS["ece"][1](b.probs[i], labels[i], None))
            for i in idx]
    np.testing.assert_allclose(r["replicates"], loop, rtol=1e-9)
    assert r["diff"] == pytest.approx(board.score(a, "ece") - board.score(b, "ece"))
    assert np.quantile(loop, 0.025) == pytest.approx(r["low"]) and np.quantile(loop, 0.975) == pytest.approx(r["high"])


def test_paired_bootstrap_interval_agrees_with_scipy_bootstrap(labels):
    """scipy.stats.bootstrap, paired (one index sample), percentile method: the same
    interval up to Monte Carlo error (both with 2,000 resamples, different draws)."""
    a, b = model(labels, np.random.default_rng(3)), model(labels, np.random.default_rng(4), 0.03)
    ours = noise.paired_bootstrap(a, b, "ece", n_boot=2000, seed=0)
    ece = METRICS["ece"][1]

    def diff(i):
        i = np.asarray(i, dtype=int)
        return 100 * (ece(a.probs[i], labels[i], None) - ece(b.probs[i], labels[i], None))

    ref = sst.bootstrap((np.arange(a.n),), diff, vectorized=False, paired=True, method="percentile",
                        n_resamples=2000, random_state=np.random.default_rng(1)).confidence_interval
    width = ours["high"] - ours["low"]
    assert abs(ref.low - ours["low"]) < 0.15 * width and abs(ref.high - ours["high"]) < 0.15 * width


def test_paired_bootstrap_refuses_unpaired_or_different_test_sets(labels):
    a, b = model(labels, np.random.default_rng(1)), model(labels, np.random.default_rng(2))
    with pytest.raises(ValueError, match="one run per seed"):
        noise.paired_bootstrap([a, a], [b], "ece")
    other = model(labels[::-1].copy(), np.random.default_rng(2))
    with pytest.raises(ValueError, match="same test set"):
        noise.paired_bootstrap(a, other, "ece")
    with pytest.raises(ValueError, match="n_boot"):
        noise.paired_bootstrap(a, b, "ece", n_boot=1)


# ----------------------------------------------------------------------------- the rule
def test_decide_on_constructed_intervals():
    assert noise.decide(-2, -0.5, "lower", "x").verdict == "holds"
    assert noise.decide(0.5, 2, "lower", "x").verdict == "fails"
    o = noise.decide(-1, 1, "lower", "~40 seeds")
    assert (o.verdict, o.note) == ("inconclusive", "~40 seeds")
    assert noise.decide(0.5, 2, "higher", "x").verdict == "holds"
    assert noise.decide(-2, -0.5, "higher", "x").verdict == "fails"
    assert noise.decide(0, 0, "lower", "x").verdict == "fails"          # identical models are not "lower"
    assert noise.decide_within(0.95, 1.05, 0.9, 1.1, "x").verdict == "holds"
    assert noise.decide_within(1.2, 1.5, 0.9, 1.1, "x").verdict == "fails"
    assert noise.decide_within(1.0, 1.3, 0.9, 1.1, "x").verdict == "inconclusive"
    with pytest.raises(ValueError, match="claimed must be one of"):
        noise.decide(-1, 1, "smaller", "x")
    with pytest.raises(ValueError, match="low must be <= high"):
        noise.decide(1, -1, "lower", "x")
    with pytest.raises(ValueError, match="needs"):
        noise.decide(-1, 1, "lower", "")


def test_test_size_needed_is_the_normal_approximation():
    z = sst.norm.ppf(0.975) + sst.norm.ppf(0.8)
    assert noise.test_size_needed(0.1, 0.1, 1000) == math.ceil(1000 * z ** 2 / 100) * 100
    assert noise.test_size_needed(0.0, 0.1, 1000) is None
    assert noise.test_size_needed(1.0, 0.01, 1000) == 100


@pytest.mark.parametrize("seeds", [(1,), (1, 2, 3)])
def test_clear_win_clear_loss_and_a_tie_in_noise(labels, seeds):
    """Calibrated vs over-confident by 0.15: a clear win one way, a clear loss the other;
    two calibrated models (independent draws): a tie, inconclusive, with what would decide it."""
    cells = cells_of(labels, {"good": 0.0, "bad": 0.15, "twin": 0.0}, seeds)
    win = noise.compare(cells, "good", "bad", "ece", "lower", n_boot=300)
    loss = noise.compare(cells, "bad", "good", "ece", "lower", n_boot=300)
    tie = noise.compare(cells, "good", "twin", "ece", "lower", n_boot=300)
    assert (win.verdict, loss.verdict, tie.verdict) == ("holds", "fails", "inconclusive")
    assert win.high < 0 < loss.low and tie.low < 0 < tie.high
    assert win.needs == "" and tie.outcome.note == tie.needs
    if len(seeds) >= noise.MIN_SEEDS:
        assert "paired t-test over 3 seeds" in win.test and "seeds to resolve" in tie.needs
        va = [board.score(cells[("good", s)], "ece") for s in seeds]
        vb = [board.score(cells[("twin", s)], "ece") for s in seeds]
        ref = stats.paired_comparison(va, vb)
        assert (tie.low, tie.high) == pytest.approx((ref["low"], ref["high"]))
        d = np.subtract(va, vb)
        need = stats.seeds_needed(ref["diff"], float(d.std(ddof=1)))
        assert (f"~{need} seeds" in tie.needs) if need else "10,000 seeds" in tie.needs
    else:
        assert "paired bootstrap over 3,000 test examples" in win.test and "test examples to resolve" in tie.needs
    assert f"{win.estimate:.2f}" in win.text and "good − bad" in win.text


def test_higher_is_claimed_for_the_auroc_direction(labels):
    cells = cells_of(labels, {"good": 0.0, "bad": 0.15})
    assert noise.compare(cells, "bad", "good", "ece", "higher", n_boot=200).verdict == "holds"


def test_compare_refuses_bad_input_before_resampling(labels):
    cells = cells_of(labels, {"a": 0.0, "b": 0.1})
    with pytest.raises(ValueError, match="claimed must be one of"):
        noise.compare(cells, "a", "b", claimed="better")
    with pytest.raises(ValueError, match="method 'c' has no run"):
        noise.compare(cells, "a", "c")
    with pytest.raises(ValueError, match="alpha"):
        noise.compare(cells, "a", "b", alpha=5)
    uneven = {**cells, ("a", 2): cells[("a", 1)]}
    with pytest.raises(ValueError, match="same seeds"):
        noise.compare(uneven, "a", "b")


# ----------------------------------------------------------------------------- best of N
def test_best_of_uses_the_rank_intervals(labels):
    cells = cells_of(labels, {"best": 0.0, "mid": 0.12, "worst": 0.25})
    assert noise.best_of(cells, "best", "ece", n_boot=100).verdict == "holds"
    r = noise.best_of(cells, "worst", "ece", n_boot=100)
    assert r.verdict == "fails" and r.low > 1
    tied = cells_of(labels, {"a": 0.0, "b": 0.0, "worst": 0.25}, start=1)
    t = noise.best_of(tied, "a", "ece", n_boot=100)
    assert t.verdict == "inconclusive" and t.low == 1 < t.high and "test examples" in t.needs
    ref = board.rank_intervals({(m, s, "none"): c for (m, s), c in tied.items()}, "ece", "none", 100, 0)
    assert (t.low, t.high) == tuple(ref.set_index("method").loc["a", ["rank_low", "rank_high"]])
    with pytest.raises(ValueError, match="must be one of the methods compared"):
        noise.best_of(cells, "other", "ece")


# ----------------------------------------------------------------------------- temperatures
def test_temperature_bootstrap_refits_t_on_each_resample_like_fit_temperature():
    rng = np.random.default_rng(2)
    n = 600
    y = rng.integers(0, K, n)
    z = rng.normal(size=(n, K)) * 2
    z[np.arange(n), y] += 1.5
    idx = noise._draws(n, 8, seed=4)
    fast = noise._temperature_rows(z, y, posthoc.TS_GRID, idx)
    slow = [posthoc.fit_temperature(z[i], y[i], method="grid", metric="ece").T for i in idx]
    np.testing.assert_allclose(fast, slow)
    r = noise.temperature_bootstrap((z, y), n_boot=40, seed=1)
    assert r["T"] == pytest.approx(posthoc.fit_temperature(z, y, method="grid", metric="ece").T)
    assert r["low"] <= r["T"] <= r["high"]


def test_temperature_near_with_seeds_and_with_one_seed():
    near = noise.temperature_near([0.98, 1.02, 1.0], 0.9, 1.1)
    assert near.verdict == "holds" and "3 seeds" in near.test
    far = noise.temperature_near([2.0, 2.1, 1.9], 0.9, 1.1)
    assert far.verdict == "fails"
    unsure = noise.temperature_near([0.8, 1.1, 1.3], 0.9, 1.1)
    assert unsure.verdict == "inconclusive" and "seeds" in unsure.needs
    with pytest.raises(ValueError, match="val"):
        noise.temperature_near([1.0], 0.9, 1.1)
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, 400)
    z = rng.normal(size=(400, K))
    z[np.arange(400), y] += 2.0
    one = noise.temperature_near([1.0], 0.05, 10.0, val=(z, y), n_boot=30)
    assert one.verdict == "holds" and "validation examples" in one.test


# ----------------------------------------------------------------------------- runs -> cells
class _Run:
    def __init__(self, z, y):
        self._z, self._y = z, y

    def logits(self, split="test"):
        return self._z, self._y


def test_calibrated_reads_test_logits_at_the_given_temperature():
    rng = np.random.default_rng(1)
    z, y = rng.normal(size=(200, K)).astype(np.float32), rng.integers(0, K, 200)
    runs = {("a", 1): _Run(z, y), ("b", 1): _Run(z * 2, y)}
    cells = noise.calibrated(runs, {("b", 1): 2.0})
    np.testing.assert_allclose(cells[("a", 1)].probs, cells[("b", 1)].probs, rtol=1e-6)
    assert cells[("b", 1)].T == 2.0 and cells[("a", 1)].T == 1.0
    from replicate import metrics
    assert board.score(cells[("a", 1)], "ece") == pytest.approx(100 * metrics.ece(metrics.probs_from_logits(z), y))
    with pytest.raises(ValueError, match="temperatures"):
        noise.calibrated(runs, {("c", 1): 1.0})
    with pytest.raises(ValueError, match="finite number > 0"):
        noise.calibrated(runs, {("a", 1): 0.0})


# ----------------------------------------------------------------------------- wired into Claim / log_claims
def test_log_claims_decides_a_claim_with_a_noise_test_on_our_runs_only(labels):
    """The same claim: on the paper's numbers by its rule; on our runs (passed as runs) by
    its noise test, with the interval and what would decide it in the row."""
    import pandas as pd

    from replicate import claims as cl
    from replicate import comparison as cmp

    cells = cells_of(labels, {"good": 0.0, "bad": 0.15, "twin": 0.0})
    runs = {k: _Run(np.log(c.probs).astype(np.float32), c.labels) for k, c in cells.items()}
    summ = pd.DataFrame({"method": ["good", "bad", "twin"], "metric": "ece", "temperature_scaled": False,
                         "mean": [board.score(cells[(m, 1)], "ece") for m in ("good", "bad", "twin")],
                         "std": np.nan, "T": np.nan, "T_std": np.nan, "n_seeds": 1})
    paper = summ.assign(mean=[1.0, 2.0, 1.5])

    def rule(a, b):
        def r(s):
            text, ok = cmp.below(s, a, b, "ece")
            return text, ok
        return r

    claims = (cmp.Claim("good below bad", "Sec. 1", rule("good", "bad"), "pre-T ECE", cmp.noise.lower("good", "bad")),
              cmp.Claim("good below twin", "Sec. 1", rule("good", "twin"), "pre-T ECE",
                        cmp.noise.lower("good", "twin", n_boot=300)),
              cmp.Claim("twin below good, no test", "Sec. 1", rule("twin", "good"), "pre-T ECE"))
    log = cmp.log_claims(cl.ClaimLog("mukhoti2020", "exp_focal_loss", kind="experiment", section="s"), claims,
                         {"paper": paper, "ours": summ}, runs={"ours": runs})
    f = log.frame().set_index(["claim", "evidence"])
    assert f.loc[("good below bad", "ours"), "verdict"] == "holds"
    row = f.loc[("good below twin", "ours")]
    assert row.verdict == "inconclusive" and "test examples to resolve" in row.note
    assert "paired bootstrap" in row.how and "good − twin" in row.result
    assert f.loc[("good below twin", "paper"), "verdict"] == "holds"       # the printed numbers: the rule
    assert f.loc[("twin below good, no test", "ours"), "verdict"] in ("holds", "fails")
    with pytest.raises(ValueError, match="not in summaries"):
        cmp.log_claims(cl.ClaimLog("mukhoti2020", "exp_focal_loss", kind="experiment"), claims, {"ours": summ},
                       runs={"other": runs})


def test_temperature_compare_with_seeds_and_over_validation_examples():
    assert noise.temperature_compare([2.0, 2.2, 2.1], [1.0, 1.1, 1.0], "higher").verdict == "holds"
    assert noise.temperature_compare([1.0, 1.1, 1.0], [2.0, 2.2, 2.1], "higher").verdict == "fails"
    r = noise.temperature_compare([1.0, 1.3, 0.9], [1.1, 1.0, 1.2], "higher")
    assert r.verdict == "inconclusive" and "seeds" in r.needs
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, 800)
    z = rng.normal(size=(800, K))
    z[np.arange(800), y] += 2.0
    sharp, soft = (z * 3, y), (z / 3, y)                 # over- vs under-confident logits of the same model
    t_sharp = posthoc.fit_temperature(*sharp, method="grid", metric="ece").T
    t_soft = posthoc.fit_temperature(*soft, method="grid", metric="ece").T
    one = noise.temperature_compare([t_sharp], [t_soft], "higher", sharp, soft, n_boot=40)
    assert t_sharp > t_soft and one.verdict == "holds" and "validation examples" in one.test
    same = noise.temperature_compare([t_sharp], [t_sharp], "higher", sharp, sharp, n_boot=20)
    assert same.verdict == "fails" and same.low == same.high == 0      # one model is not hotter than itself
    with pytest.raises(ValueError, match="val_a and val_b"):
        noise.temperature_compare([1.0], [1.0])


def test_compare_accepts_the_tables_metrics_beyond_the_leaderboards(labels):
    cells = cells_of(labels, {"good": 0.0, "bad": 0.15})
    r = noise.compare(cells, "good", "bad", "debiased_ece", n_boot=50)
    assert r.verdict == "holds" and r.text.startswith("debiased ECE: good − bad")
    with pytest.raises(ValueError, match="metric must be one of"):
        noise.compare(cells, "good", "bad", "accuracy")


# ----------------------------------------------------------------------------- intervals in tables
def test_interval_of_one_seed_is_the_bootstrap_percentile_and_of_three_the_t_interval(labels):
    one = cells_of(labels, {"m": 0.1})
    iv = noise.interval(one, "m", "ece", n_boot=60, seed=2)
    reps = [100 * METRICS["ece"][1](one[("m", 1)].probs[i], labels[i], None) for i in noise._draws(len(labels), 60, 2)]
    assert (iv["low"], iv["high"]) == pytest.approx(tuple(np.quantile(reps, [0.025, 0.975])))
    assert iv["low"] < iv["mean"] < iv["high"] and "bootstrap" in iv["how"]
    three = cells_of(labels, {"m": 0.1}, seeds=(1, 2, 3))
    iv3 = noise.interval(three, "m", "ece")
    ref = stats.seed_interval([board.score(three[("m", s)], "ece") for s in (1, 2, 3)])
    assert (iv3["low"], iv3["high"]) == pytest.approx((ref["low"], ref["high"])) and "3 seeds" in iv3["how"]


def test_styled_table_shows_our_intervals_on_hover(labels):
    import pandas as pd

    from replicate import comparison as cmp

    cells = cells_of(labels, {"cross_entropy": 0.15, "flsd53": 0.0})
    runs = {k: _Run(np.log(c.probs).astype(np.float32), c.labels) for k, c in cells.items()}
    frame = pd.DataFrame([{"method": m, "seed": 1, "metric": "ece", "temperature_scaled": sc,
                           "value": board.score(cells[(m, 1)], "ece"), "T": 1.0 if sc else np.nan, "T_selected_by": ""}
                          for m in ("cross_entropy", "flsd53") for sc in (False, True)])
    ev = noise.RunEvidence(runs, frame)
    ivs = noise.table_intervals(ev, "ece", n_boot=50)
    assert set(ivs) == {(m, s) for m in ("cross_entropy", "flsd53") for s in (False, True)}
    methods = cmp.resolve_methods(["cross_entropy", "flsd53"])
    ref = cmp.PaperReference("CIFAR-10", "ResNet 50", True, "x")
    html = cmp.styled_table(frame, None, "ece", methods, ref, "ours", intervals=ivs).to_html()
    iv = ivs[("flsd53", False)]
    assert f"[{iv['low']:.2f}, {iv['high']:.2f}] (95 % bootstrap interval over 3,000 test examples)" in html
    assert "Hover over one of our cells" in html
    plain = cmp.styled_table(frame, None, "ece", methods, ref, "ours").to_html()
    assert "bootstrap interval" not in plain
