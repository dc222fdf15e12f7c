"""The noise model of our runs (replicate.comparison.noise): the vectorised resamples equal the plain
loop on fixed draws (ties on bin edges included), temperatures chosen again equal
posthoc.fit_temperature, the two-level bootstrap on constructed cases whose answer is known,
identical runs, and one verdict on committed runs recomputed with plain numpy."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from replicate import metrics, posthoc
from replicate.claims.claim import Claim, claims_log
from replicate.claims.evidence import Cell, Names
from replicate.claims.tests import Difference, Lowest, near_one
from replicate.comparison.noise import RowRuns, RunsEvidence, rank_intervals, resampling, scores, temperatures
from replicate.comparison.noise.runs import calibrate


class FakeRun:
    """A stored run's interface: key, logits(split), ood_sets."""

    made = 0

    def __init__(self, test, val, ood=None, labels=None, val_labels=None):
        self._z = {"test": np.asarray(test, np.float32), "val": np.asarray(val, np.float32)}
        self._y = {"test": labels, "val": val_labels}
        self._ood = {} if ood is None else {"cifar10c_gaussian5": np.asarray(ood, np.float32)}
        FakeRun.made += 1                              # two configurations: two keys, even for equal logits
        self.key = hashlib.sha1(self._z["test"].tobytes() + str(FakeRun.made).encode()).hexdigest()[:16]

    @property
    def ood_sets(self):
        return {k: "" for k in self._ood}

    def logits(self, split="test"):
        if split.startswith("ood:"):
            return self._ood[split[4:]], self._y["test"]
        return self._z[split], self._y[split]


def _tied(n=400, k=5, seed=0):
    """Logits whose softmax puts confidences exactly on equal-width bin edges (rows with all
    logits tied: confidence 1/k = 0.2, an edge of 15 bins) beside ordinary rows."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    z[: n // 4] = 0.0                                  # confidence exactly 0.2 = 3/15
    y = rng.integers(0, k, n)
    return z, y


def _scored(z, y, ood=None):
    lp = metrics._log_softmax(np.asarray(z, np.float64))
    od = {} if ood is None else {"cifar10c_gaussian5": np.exp(metrics._log_softmax(np.asarray(ood, np.float64)))}
    return scores.Scored(np.exp(lp), np.asarray(y), lp[np.arange(len(y)), y], od)


def test_weights_are_draws_with_replacement_and_deterministic():
    w = resampling.weights(50, 30, 3)
    assert w.shape == (30, 50) and (w.sum(axis=1) == 50).all()
    assert np.array_equal(w, resampling.weights(50, 30, 3))
    assert not np.array_equal(w, resampling.weights(50, 30, 3, "val"))
    assert sorted(resampling.indices(w[0])) == list(resampling.indices(w[0]))
    with pytest.raises(ValueError, match="n_boot must be an integer"):
        resampling.weights(10, 0)


@pytest.mark.parametrize("metric", scores.VECTORISED)
def test_vectorised_metric_equals_the_plain_loop_with_ties_on_bin_edges(metric):
    z, y = _tied()
    ood = np.random.default_rng(1).normal(size=z.shape)
    ood[:50] = z[:50]                                   # entropy ties between in and out
    s = _scored(z, y, ood)
    w = resampling.weights(len(y), 25, 7)
    ood_set = "cifar10c_gaussian5" if metric == "auroc" else ""
    fast = scores.replicated(s, metric, w, ood_set)
    slow = scores.plain(s, metric, w[:len(fast)], ood_set)          # smooth ECE: the first N_BOOT_SLOW rows
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-9)


def test_points_equal_the_metric_functions_on_every_example():
    z, y = _tied(seed=3)
    s = _scored(z, y)
    p = s.probs
    assert scores.point(s, "ece") == pytest.approx(100 * metrics.ece(p, y))
    assert scores.point(s, "classwise_ece") == pytest.approx(100 * metrics.classwise_ece(p, y))
    assert scores.point(s, "mce") == pytest.approx(100 * metrics.mce(p, y))
    assert scores.point(s, "nll") == pytest.approx(100 * metrics.nll(z, y))
    assert scores.point(s, "brier") == pytest.approx(100 * metrics.brier(p, y))
    assert scores.point(s, "adaece") == pytest.approx(100 * metrics.adaptive_ece(p, y))


def test_slow_metrics_use_the_first_rows_of_the_same_draws():
    z, y = _tied(n=200, seed=4)
    s = _scored(z, y)
    w = resampling.weights(200, 300, 0)
    got = scores.replicated(s, "sweep_ece", w)
    assert got.shape == (resampling.N_BOOT_SLOW,)
    np.testing.assert_allclose(got[:5], scores.plain(s, "sweep_ece", w[:5]))
    assert scores.replicated(s, "adaece", w).shape == (resampling.N_BOOT_SLOW,)  # at once, bins move


@pytest.mark.parametrize("selector", ["ece", "nll", "adaece"])
def test_temperatures_chosen_again_equal_fit_temperature(selector):
    rng = np.random.default_rng(5)
    z = rng.normal(size=(300, 4)) * 3
    z[:60, :3], z[:60, 3] = 0.0, -1e4                   # 3 tied classes: confidence 1/3 = 5/15, a bin edge
    y = np.where(rng.random(300) < 0.7, z.argmax(1), rng.integers(0, 4, 300))
    ones = np.ones((1, 300))
    assert temperatures.replicated(z, y, ones, selector)[0] == temperatures.chosen(z, y, selector)
    if selector != "adaece":
        w = resampling.weights(300, 12, 1, "val")
        loop = [posthoc.fit_temperature(z[i], y[i], method="grid", metric=selector).params["T"]
                for i in map(resampling.indices, w)]
        np.testing.assert_array_equal(temperatures.replicated(z, y, w, selector), loop)


def test_over_seeds_averages_the_drawn_seeds_of_each_resample():
    per_seed = np.arange(12, dtype=float).reshape(3, 4)
    got = resampling.over_seeds(per_seed, seed=2)
    draws = resampling.seed_draws(3, 4, 2)
    np.testing.assert_allclose(got, [per_seed[draws[b], b].mean() for b in range(4)])
    np.testing.assert_allclose(resampling.over_seeds(per_seed[:1]), per_seed[0])


# ----------------------------------------------------------------------------- constructed cases
def _calibrated_draws(n, k, rng, sharp=2.0):
    """Logits and labels drawn from the model's own softmax: a calibrated model."""
    z = rng.normal(size=(n, k)) * sharp
    p = np.exp(metrics._log_softmax(z))
    y = (p.cumsum(1) > rng.random((n, 1))).argmax(1)
    return z, y


def _row(pairs, labels, val, val_labels, name="toy, net"):
    runs = {(m, "", s): FakeRun(z, zv, labels=labels, val_labels=val_labels)
            for (m, s), (z, zv) in pairs.items()}
    return RowRuns(name, "toy", "net", runs)


def _verdict(ev, test):
    return claims_log("p", "c", [Claim("c", "w", test)], [ev], "Verdict").frame().iloc[0]


def test_a_difference_far_outside_the_noise_holds_and_one_inside_it_is_inconclusive():
    rng = np.random.default_rng(0)
    n, k = 4000, 5
    z, y = _calibrated_draws(n, k, rng)
    zv, yv = _calibrated_draws(500, k, rng)
    over = 4.0 * z                                     # the same model, sharpened: strongly over-confident
    near = z + rng.normal(scale=0.02, size=z.shape)    # a hair away from the calibrated model
    ev = RunsEvidence([_row({("cal", 1): (z, zv), ("over", 1): (over, zv), ("near", 1): (near, zv)}, y, zv, yv)],
                      "toy", n_boot=400)
    assert _verdict(ev, Difference(Cell("cal"), Cell("over"), "<")).verdict == "holds"
    assert _verdict(ev, Difference(Cell("cal"), Cell("near"), "<")).verdict == "inconclusive"
    assert _verdict(ev, Difference(Cell("over"), Cell("cal"), "<")).verdict == "fails"


def test_a_seed_effect_on_a_fixed_test_set_is_not_hidden():
    """Seed 1 of A is far better than B's, seeds 2 and 3 far worse: each seed's own test-set
    interval excludes 0, but the seeds disagree, so the two-level interval must straddle 0."""
    rng = np.random.default_rng(1)
    n, k = 3000, 4
    z, y = _calibrated_draws(n, k, rng)
    zv, yv = _calibrated_draws(300, k, rng)
    pairs = {("b", s): (2.0 * z, zv) for s in (1, 2, 3)}
    pairs[("a", 1)] = (z, zv)                          # calibrated: ECE far below B's
    pairs[("a", 2)] = pairs[("a", 3)] = (4.0 * z, zv)  # sharper than B: ECE far above
    ev = RunsEvidence([_row(pairs, y, zv, yv)], "toy", n_boot=400)
    per = ev.per_seed("toy, net")
    one = {s: _verdict(e, Difference(Cell("a"), Cell("b"), "<")).verdict for s, e in per.items()}
    assert one == {1: "holds", 2: "fails", 3: "fails"}
    row = _verdict(ev, Difference(Cell("a"), Cell("b"), "<"))
    assert row.verdict in ("inconclusive", "fails")
    d = ev.draws("toy, net", Cell("a"))
    lo, hi = np.quantile(d.reps, [0.025, 0.975])
    seed_means = [scores.point(calibrate(ev.row("toy, net").runs[("a", "", s)], "none"), "ece") for s in (1, 2, 3)]
    assert lo <= min(seed_means) + 1e-9 or hi >= max(seed_means) - 1e-9   # the seeds' spread is inside the draws
    assert "3 seeds resampled" in row.noise


def test_one_seed_reduces_to_the_paired_bootstrap_over_test_examples():
    rng = np.random.default_rng(2)
    z, y = _calibrated_draws(1500, 3, rng)
    zv, yv = _calibrated_draws(200, 3, rng)
    ev = RunsEvidence([_row({("a", 1): (z, zv), ("b", 1): (3 * z, zv)}, y, zv, yv)], "toy", n_boot=300)
    w = resampling.weights(1500, 300, 0)
    sa, sb = (calibrate(ev.row("toy, net").runs[(m, "", 1)], "none") for m in "ab")
    paired = scores.plain(sa, "ece", w) - scores.plain(sb, "ece", w)
    from replicate.claims.evidence import combine
    point, reps, noise, _ = combine(ev, "toy, net", (Cell("a"), Cell("b")), lambda a, b: a - b)
    np.testing.assert_allclose(reps, paired, atol=1e-9)
    assert "one seed" in noise


def test_identical_runs_are_the_same_model_not_a_comparison():
    rng = np.random.default_rng(3)
    z, y = _calibrated_draws(500, 3, rng)
    zv, yv = _calibrated_draws(100, 3, rng)
    ev = RunsEvidence([_row({("a", 1): (z, zv), ("twin", 1): (z, zv), ("c", 1): (2 * z, zv)}, y, zv, yv)], "toy",
                      Names({"a": "A", "twin": "A-code"}), n_boot=50)
    row = _verdict(ev, Difference(Cell("a"), Cell("twin"), "<"))
    assert row.verdict == "not tested" and "same model at this profile" in row.note and "A-code" in row.note
    assert _verdict(ev, Lowest(Cell("a"), [Cell("twin"), Cell("c")])).verdict == "not tested"


def test_rank_intervals_agree_with_lowest():
    rng = np.random.default_rng(4)
    z, y = _calibrated_draws(2000, 4, rng)
    zv, yv = _calibrated_draws(200, 4, rng)
    ev = RunsEvidence([_row({("a", 1): (z, zv), ("b", 1): (2 * z, zv), ("c", 1): (3 * z, zv)}, y, zv, yv)], "toy",
                      n_boot=300)
    r = rank_intervals(ev, "toy, net", [Cell("a"), Cell("b"), Cell("c")])
    assert list(r["rank"]) == [1, 2, 3] and r.rank_high.iloc[0] == 1
    assert _verdict(ev, Lowest(Cell("a"), [Cell("b"), Cell("c")])).verdict == "holds"


def test_temperature_claims_resample_the_validation_set():
    rng = np.random.default_rng(5)
    z, y = _calibrated_draws(800, 4, rng)
    zv, yv = _calibrated_draws(2000, 4, rng)
    ev = RunsEvidence([_row({("cal", 1): (z, zv), ("over", 1): (3 * z, 3 * zv)}, y, zv, yv)], "toy", n_boot=200)
    assert _verdict(ev, near_one(Cell("cal", "T", "ts"))).verdict == "holds"
    row = _verdict(ev, near_one(Cell("over", "T", "ts")))
    assert row.verdict == "fails" and "validation examples" in row.noise


# ----------------------------------------------------------------------------- an outsider's recomputation
def _numpy_ece(z, y, idx):
    """ECE (15 equal-width bins, (lower, upper]) in plain numpy, on the examples ``idx``."""
    z = z[idx].astype(np.float64)
    e = np.exp(z - z.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    conf, hit = p.max(1), (p.argmax(1) == y[idx])
    b = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    return 100 * sum(abs(hit[b == j].sum() - conf[b == j].sum()) for j in range(15)) / len(idx)


def test_a_committed_verdict_survives_a_plain_numpy_recomputation():
    """FLSD-53 against cross-entropy, pre-T ECE, our committed cpu runs (CIFAR-10, tiny_cnn,
    seeds 1-3): the package's interval equals the same two-level bootstrap written in plain
    numpy over the same draws (the first 40 resamples)."""
    from replicate import runs as R

    found = {(m, s): R.find(R.RunConfig("cifar10", m, profile="cpu", seed=s))
             for m in ("flsd53", "cross_entropy") for s in (1, 2, 3)}
    if any(r is None for r in found.values()):
        pytest.skip("the committed cpu runs of FLSD-53 and cross-entropy are not in the store")
    ev = RunsEvidence([RowRuns("cifar10, tiny_cnn", "cifar10", "tiny_cnn",
                               {(m, "", s): r for (m, s), r in found.items()})], "cpu", n_boot=40)
    from replicate.claims.evidence import combine
    point, reps, _, _ = combine(ev, "cifar10, tiny_cnn", (Cell("flsd53"), Cell("cross_entropy")), lambda a, b: a - b)
    z = {k: r.logits("test")[0] for k, r in found.items()}
    y = found[("flsd53", 1)].logits("test")[1]
    w = resampling.weights(len(y), 40, 0)
    draws = resampling.seed_draws(3, 40, 0)
    mine = []
    for b in range(40):
        idx = np.repeat(np.arange(len(y)), w[b].astype(int))
        seeds = [1 + i for i in draws[b]]
        mine.append(np.mean([_numpy_ece(z[("flsd53", s)], y, idx) for s in seeds])
                    - np.mean([_numpy_ece(z[("cross_entropy", s)], y, idx) for s in seeds]))
    every = np.arange(len(y))
    assert point == pytest.approx(np.mean([_numpy_ece(z[("flsd53", s)], y, every) for s in (1, 2, 3)])
                                  - np.mean([_numpy_ece(z[("cross_entropy", s)], y, every) for s in (1, 2, 3)]))
    np.testing.assert_allclose(reps, mine, atol=1e-9)


def test_one_seed_interval_agrees_with_scipy_bootstrap():
    """scipy.stats.bootstrap, paired (one index sample), percentile method, on the ECE
    difference of two models: the same interval as the noise model's up to Monte Carlo
    error (2,000 resamples each, different draws)."""
    import scipy.stats as sst

    from replicate.claims.evidence import combine

    rng = np.random.default_rng(6)
    z, y = _calibrated_draws(2000, 4, rng)
    zv, yv = _calibrated_draws(100, 4, rng)
    ev = RunsEvidence([_row({("a", 1): (z, zv), ("b", 1): (1.6 * z, zv)}, y, zv, yv)], "toy", n_boot=2000)
    point, reps, _, _ = combine(ev, "toy, net", (Cell("a"), Cell("b")), lambda a, b: a - b)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    pa, pb = (np.exp(metrics._log_softmax(np.asarray(zz, np.float32).astype(np.float64))) for zz in (z, 1.6 * z))

    def diff(i):
        i = np.asarray(i, dtype=int)
        return 100 * (metrics.ece(pa[i], y[i]) - metrics.ece(pb[i], y[i]))

    ref = sst.bootstrap((np.arange(len(y)),), diff, vectorized=False, paired=True, method="percentile",
                        n_resamples=2000, random_state=np.random.default_rng(1)).confidence_interval
    width = hi - lo
    assert abs(ref.low - lo) < 0.15 * width and abs(ref.high - hi) < 0.15 * width


def test_width_sums_are_the_reliability_bins_on_every_resample():
    z, y = _tied(seed=7)
    p = np.exp(metrics._log_softmax(z))
    w = resampling.weights(len(y), 6, 2)
    count, sc, sh = scores.width_sums(p, y, w)
    for b in range(6):
        i = resampling.indices(w[b])
        rb = metrics.reliability_bins(p[i], y[i])
        np.testing.assert_array_equal(count[b], rb.count)
        filled = rb.count > 0
        np.testing.assert_allclose(sc[b][filled] / count[b][filled], rb.mean_confidence[filled], rtol=1e-12)
        np.testing.assert_allclose(sh[b][filled] / count[b][filled], rb.accuracy[filled], rtol=1e-12)
