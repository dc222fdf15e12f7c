"""Statistics of the leaderboard against independent oracles: statsmodels for t intervals and
power, brute-force pair counting for Kendall's tau, Monte Carlo for the power of the
sample size, and invariants of the bootstrap ranks."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from replicate.comparison import stats

from needs import oracle

# the oracle, imported by the tests that use it (the brute-force and bootstrap tests run without it)
sm_stats = oracle("statsmodels.stats.weightstats", "statsmodels")
sm_power = oracle("statsmodels.stats.power", "statsmodels")


def test_seed_interval_matches_statsmodels():
    v = [1.3, 2.1, 1.7, 2.6]
    got = stats.seed_interval(v, 0.9)
    lo, hi = sm_stats.DescrStatsW(np.array(v)).tconfint_mean(alpha=0.1)
    assert got["low"] == pytest.approx(lo) and got["high"] == pytest.approx(hi)
    assert got["sd"] == pytest.approx(np.std(v, ddof=1)) and got["n"] == 4
    one = stats.seed_interval([2.0])
    assert one["mean"] == 2.0 and math.isnan(one["sd"]) and math.isnan(one["low"])
    with pytest.raises(ValueError, match="level"):
        stats.seed_interval(v, 1.5)


def test_seed_interval_of_a_non_negative_quantity_near_zero_stays_non_negative():
    """Issue #32, item 5: three ECEs near 0 with a wide spread: the t interval (statsmodels)
    reaches below 0; cut to (0, 100) its lower end is 0, its upper end the t interval's, and
    ``cut`` says which end; the cut interval covers the true mean whenever the t one does."""
    v = [0.1, 0.2, 1.5]
    lo, hi = sm_stats.DescrStatsW(np.array(v)).tconfint_mean(alpha=0.05)
    assert lo < 0
    got = stats.seed_interval(v, 0.95, stats.metric_range("ece"))
    assert (got["low"], got["high"], got["cut"]) == (0.0, pytest.approx(hi), "low")
    near_top = stats.seed_interval([99.9, 99.5, 97.0], 0.95, stats.metric_range("auroc"))
    assert near_top["high"] == 100.0 and near_top["cut"] == "high"
    free = stats.seed_interval(v)              # no bounds: the plain t interval
    assert free["low"] == pytest.approx(lo) and free["cut"] == ""
    assert stats.seed_interval([2.0, 2.1, 2.2], 0.95, (0, 100))["cut"] == ""
    assert stats.metric_range("nll") == (0.0, math.inf) and stats.metric_range("mce") == (0.0, 100.0)
    rng = np.random.default_rng(0)     # coverage: the true mean 0.3 >= 0, so cutting never loses it
    for _ in range(200):
        x = np.abs(rng.normal(0.3, 0.5, size=3))
        t, c = stats.seed_interval(x), stats.seed_interval(x, 0.95, (0, 100))
        assert (t["low"] <= x.mean() <= t["high"]) == (c["low"] <= x.mean() <= c["high"])
        assert c["low"] >= 0
    with pytest.raises(ValueError, match="bounds"):
        stats.seed_interval(v, 0.95, (1.0, 0.0))


def test_paired_comparison_is_a_one_sample_t_test_of_the_differences():
    a, b = np.array([3.1, 2.7, 3.5, 2.9]), np.array([2.0, 2.2, 2.4, 2.5])
    got = stats.paired_comparison(a, b)
    d = a - b
    t = d.mean() / (d.std(ddof=1) / math.sqrt(d.size))
    p = sm_stats.DescrStatsW(d).ttest_mean(0.0)[1]
    assert got["t"] == pytest.approx(t) and got["p"] == pytest.approx(p)
    assert got["diff"] == pytest.approx(d.mean()) and got["low"] < got["diff"] < got["high"]
    assert "same seeds" in got["assumptions"] and "paired t-test" in got["test"]
    assert stats.paired_comparison([1.0], [2.0])["reason"] == "one seed: no test"
    assert "no spread" in stats.paired_comparison([2.0, 3.0], [1.0, 2.0])["reason"]
    with pytest.raises(ValueError, match="same seeds"):
        stats.paired_comparison([1, 2], [1, 2, 3])


@pytest.mark.parametrize("n, effect", [(3, 1.0), (5, 0.8), (12, 0.5), (40, 0.3)])
def test_power_matches_statsmodels(n, effect):
    want = sm_power.TTestPower().power(effect_size=effect, nobs=n, alpha=0.05, alternative="two-sided")
    assert stats.paired_power(n, effect) == pytest.approx(want, rel=1e-6)


def test_seeds_needed_is_the_smallest_n_with_enough_power_and_holds_by_simulation():
    n = stats.seeds_needed(0.5, 0.5)                     # effect size 1
    want = sm_power.TTestPower().solve_power(effect_size=1.0, alpha=0.05, power=0.8, alternative="two-sided")
    assert n == math.ceil(want)
    assert stats.paired_power(n, 1.0) >= 0.8 > stats.paired_power(n - 1, 1.0)
    rng = np.random.default_rng(0)
    d = rng.normal(0.5, 0.5, size=(20000, n))
    t = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    from scipy.stats import t as tdist
    rejected = np.mean(np.abs(t) > tdist.ppf(0.975, n - 1))
    assert rejected == pytest.approx(stats.paired_power(n, 1.0), abs=0.015)
    assert stats.seeds_needed(0.0, 1.0) is None and stats.seeds_needed(1.0, 0.0) == 2
    assert stats.seeds_needed(0.001, 10.0, max_n=50) is None
    with pytest.raises(ValueError, match="sd_diff"):
        stats.seeds_needed(1.0, -1.0)


def _tau_brute(a, b):
    conc = disc = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        s = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
        conc += s > 0
        disc += s < 0
    return (conc - disc) / (len(a) * (len(a) - 1) / 2)


def test_kendall_tau_counts_pairs_and_gives_an_interval():
    a, b = np.array([1, 2, 3, 4, 5, 6.0]), np.array([2, 1, 3, 4, 6, 5.0])
    got = stats.kendall_tau(a, b)
    assert got["tau"] == pytest.approx(_tau_brute(a, b))
    assert stats.kendall_tau(a, a)["tau"] == pytest.approx(1) and stats.kendall_tau(a, -a)["tau"] == pytest.approx(-1)
    reps = np.array([a, b, a[::-1]])
    with_ci = stats.kendall_tau(a, b, replicates=reps, level=0.5)
    assert -1 <= with_ci["low"] <= with_ci["high"] <= 1
    assert "only 2" in stats.kendall_tau([1, 2], [2, 1])["reason"]


def test_bootstrap_ranks_separate_a_clear_winner_and_blur_equals():
    rng = np.random.default_rng(1)
    per = {("best", s): rng.normal(1.0, 0.1, 500) for s in (1, 2, 3)}
    per.update({(m, s): rng.normal(5.0, 0.1, 500) for m in ("x", "y") for s in (1, 2, 3)})

    def score(method, seed, idx):
        return float(per[(method, seed)][idx].mean())

    r = stats.bootstrap_ranks((score, ["x", "best", "y"], [1, 2, 3], 500), n_boot=100)
    best = r.set_index("method").loc["best"]
    assert best["rank"] == 1 and best["rank_low"] == best["rank_high"] == 1
    xy = r.set_index("method").loc[["x", "y"]]
    assert (xy.rank_low == 2).all() and (xy.rank_high == 3).all()     # x and y cannot be told apart
    assert r.attrs["ranks"].shape == (100, 3)
    assert np.allclose(np.sort(r.attrs["ranks"], axis=1), [1, 2, 3])
