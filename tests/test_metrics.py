"""replicate.metrics against independent oracles: torchmetrics, Kumar et al.'s
`uncertainty-calibration` (module `calibration`), pycalib, relplot, scikit-learn, scipy,
brute-force loops written from the definitions, and hand-computed tiny cases."""
from __future__ import annotations


import numpy as np
import pytest
import torch
from scipy.special import softmax
from scipy.stats import entropy

import replicate.metrics as M
from replicate import binning as B

from needs import oracle

# the oracles, each imported by the test that uses it (hand-computed tests run without them)
cal = oracle("calibration", "uncertainty-calibration")
pycalib_metrics = oracle("pycalib.metrics", "pycalib")
relplot = oracle("relplot", "relplot")
tm = oracle("torchmetrics.functional.classification", "torchmetrics")
skm = oracle("sklearn.metrics", "scikit-learn")


# ----------------------------------------------------------------------------- fixtures
def _random(n, k, seed, scale=2.5, miscal=1.6):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    p = softmax(z, axis=1)
    q = softmax(z / miscal, axis=1)  # labels drawn from a softer model: over-confidence
    y = (q.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return p, y


def _edges_fixture():
    """Confidences exactly on the edges of 8 and 4 equal-width bins (dyadic, exact)."""
    c = np.array([0.5, 0.625, 0.75, 0.875, 0.5, 0.75, 0.625, 0.875, 0.5625, 0.9375])
    p = np.stack([c, 1 - c], axis=1)
    p = np.concatenate([p, np.full((3, 2), 0.5)])  # conf 0.5 from a tie: argmax picks class 0
    y = np.array([0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1])
    return p, y


def _float32_ones():
    """float32 softmax with rows whose confidence is exactly 1.0 and entries exactly 0."""
    rng = np.random.default_rng(3)
    z = torch.from_numpy(rng.normal(size=(200, 5)) * 4).float()
    z[:40, 0] += 200.0  # exp(-200) underflows in float32: confidence 1.0, others 0.0
    p = torch.softmax(z, dim=1).numpy()
    y = rng.integers(0, 5, 200)
    y[:30] = 0
    return p, y


def _ties():
    """Four distinct rows repeated: every equal-mass split falls inside a tie."""
    rows = np.array([[0.6, 0.3, 0.1], [0.8, 0.1, 0.1], [0.45, 0.35, 0.2], [0.95, 0.03, 0.02]])
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 4, 101)
    return rows[idx], rng.integers(0, 3, 101)


def _empty_bins():
    rng = np.random.default_rng(5)
    c = rng.uniform(0.9, 0.999, 150)
    p = np.stack([c, 1 - c], axis=1)
    return p, (rng.random(150) > c).astype(int)


def _one():
    return np.array([[0.2, 0.7, 0.1]]), np.array([1])


FIXTURES = {
    "k10": _random(400, 10, 0), "k2": _random(300, 2, 1), "k100": _random(1500, 100, 2),
    "edges": _edges_fixture(), "float32_ones": _float32_ones(), "ties": _ties(),
    "empty_bins": _empty_bins(), "one": _one(),
}
NO_ONE = [k for k in FIXTURES if k != "float32_ones"]  # torchmetrics puts conf 1.0 in bin n+1
RANDOM = ["k10", "k2", "k100", "empty_bins"]  # nothing within 1e-8 of an edge (pycalib)


def _top(p, y):
    p = np.asarray(p, dtype=np.float64)
    return p.max(axis=1), (p.argmax(axis=1) == y).astype(float)


def _tm(p, y, n_bins, norm):
    t = torch.from_numpy(np.asarray(p, dtype=np.float64))
    return float(tm.multiclass_calibration_error(t, torch.from_numpy(y), p.shape[1],
                                                 n_bins=n_bins, norm=norm))


def _kumar(p, y, n_bins, power, debias, scheme):
    conf, hit = _top(p, y)
    return float(cal.lower_bound_scaling_ce(conf, hit.astype(int), p=power, debias=debias,
                                            num_bins=n_bins, binning_scheme=scheme,
                                            mode="top-label"))


# ----------------------------------------------------------------------------- binned, top label
@pytest.mark.parametrize("name", list(FIXTURES))
@pytest.mark.parametrize("n_bins", [15, 8])
def test_ece_matches_kumar_width_and_mass(name, n_bins):
    p, y = FIXTURES[name]
    p64 = p.astype(np.float64)
    assert M.ece(p, y, n_bins) == pytest.approx(float(cal.get_ece(p64, y, num_bins=n_bins)),
                                                abs=1e-12)
    em = float(cal.get_ece_em(p64, y, num_bins=n_bins))
    assert M.ece(p, y, n_bins, binning="mass") == pytest.approx(em, abs=1e-12)
    assert M.adaptive_ece(p, y, n_bins) == pytest.approx(em, abs=1e-12)


@pytest.mark.parametrize("name", NO_ONE)
@pytest.mark.parametrize("n_bins", [15, 8, 4])
def test_left_closed_matches_torchmetrics(name, n_bins):
    p, y = FIXTURES[name]
    kw = dict(closed="left")
    # torchmetrics accumulates in float32 whatever the input dtype
    assert M.ece(p, y, n_bins, **kw) == pytest.approx(_tm(p, y, n_bins, "l1"), abs=1e-6)
    assert M.mce(p, y, n_bins, **kw) == pytest.approx(_tm(p, y, n_bins, "max"), abs=1e-6)
    assert M.rms_calibration_error(p, y, n_bins, **kw) == pytest.approx(
        _tm(p, y, n_bins, "l2"), abs=1e-6)


@pytest.mark.parametrize("name", list(FIXTURES))
def test_right_closed_mce_rms_match_pycalib_and_kumar(name):
    p, y = FIXTURES[name]
    p64 = p.astype(np.float64)
    # pycalib: (lower, upper], 0 in the first bin; bins of 1/8 are exact in binary
    assert M.mce(p, y, 8) == pytest.approx(float(pycalib_metrics.conf_MCE(y, p64, bins=8)),
                                           abs=1e-12)
    assert M.ece(p, y, 8) == pytest.approx(float(pycalib_metrics.conf_ECE(y, p64, bins=8)),
                                           abs=1e-12)
    for n in (15, 8):
        want = _kumar(p, y, n, 2, False, cal.get_equal_prob_bins)
        assert M.rms_calibration_error(p, y, n) == pytest.approx(want, abs=1e-12)
        want = _kumar(p, y, n, 2, False, cal.get_equal_bins)
        assert M.rms_calibration_error(p, y, n, binning="mass") == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("name", list(FIXTURES))
@pytest.mark.parametrize("binning,scheme", [("mass", "get_equal_bins"),
                                            ("width", "get_equal_prob_bins")])
def test_debiased_matches_kumar(name, binning, scheme):
    p, y = FIXTURES[name]
    want = _kumar(p, y, 15, 2, True, getattr(cal, scheme))
    assert M.debiased_ece(p, y, 15, binning=binning) == pytest.approx(want, abs=1e-12)


def test_hand_computed_tiny_case():
    # confidences 0.9 (hit), 0.8 (miss), 0.7 (hit), 0.6 (hit); 5 bins of width 0.2
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    y = np.array([0, 0, 1, 0])
    # bins: (0.4,0.6]={0.6 hit}, (0.6,0.8]={0.8 miss, 0.7 hit}, (0.8,1]={0.9 hit}
    want = (abs(1 - 0.6) + abs(1 - 1.5) + abs(1 - 0.9)) / 4
    assert M.ece(p, y, 5) == pytest.approx(want, abs=1e-15)
    assert M.mce(p, y, 5) == pytest.approx(0.4, abs=1e-15)
    assert M.rms_calibration_error(p, y, 5) == pytest.approx(
        np.sqrt((0.4 ** 2 + 2 * 0.25 ** 2 + 0.1 ** 2) / 4), abs=1e-15)
    # closed="left": 0.6 moves to [0.6, 0.8) with 0.7; 0.8 moves to [0.8, 1] with 0.9
    want_left = (abs(2 - 1.3) + abs(1 - 1.7)) / 4
    assert M.ece(p, y, 5, closed="left") == pytest.approx(want_left, abs=1e-15)
    assert M.error_rate(p, y) == 0.25


def test_edge_rules_and_every_sample_in_one_bin():
    p, y = FIXTURES["edges"]
    conf = p.max(axis=1)
    for closed in ("right", "left"):
        r = M.reliability_bins(p, y, 8, closed=closed)
        e = r.edges
        inside = np.zeros((conf.size, 8), bool)
        for b in range(8):
            if closed == "right":
                inside[:, b] = (conf > e[b]) & (conf <= e[b + 1]) | ((b == 0) & (conf == 0))
            else:
                inside[:, b] = (conf >= e[b]) & (conf < e[b + 1]) | ((b == 7) & (conf == 1))
        assert (inside.sum(axis=1) == 1).all()
        np.testing.assert_array_equal(r.count, inside.sum(axis=0))
        full = r.count > 0
        assert np.isnan(r.gap[~full]).all() and np.isnan(r.accuracy[~full]).all()
        hits = (p.argmax(1) == y).astype(float)
        np.testing.assert_allclose(r.accuracy[full], (hits @ inside)[full] / r.count[full],
                                   atol=1e-15)
        np.testing.assert_allclose(r.gap, r.accuracy - r.mean_confidence)
    f = M.reliability_bins(p, y, 8).to_frame()
    assert list(f.columns) == ["lower", "upper", "count", "mean_confidence", "accuracy", "gap"]
    assert f["count"].sum() == len(y)
    # 0.5 is on an edge: (0.375, 0.5] by default, [0.5, 0.625) with closed="left"
    assert M.reliability_bins(p, y, 8).count[3] == 5
    assert M.reliability_bins(p, y, 8, closed="left").count[4] == 6  # and 0.5625


def test_zero_and_one_land_in_end_bins():
    x = np.array([0.0, 1.0, 0.5])
    for closed in ("right", "left"):
        for uniform in (True, False):
            b = B.bin_index(x, B.width_edges(4), closed, uniform=uniform)
            assert b[0] == 0 and b[1] == 3
    assert B.bin_index(x, B.width_edges(4), "right")[2] == 1
    assert B.bin_index(x, B.width_edges(4), "left")[2] == 2


def test_uniform_fast_path_equals_searchsorted_on_edges():
    rng = np.random.default_rng(9)
    for n in (1, 3, 7, 10, 15, 16, 100):
        e = B.width_edges(n)
        near = np.concatenate([e, np.nextafter(e, 2), np.nextafter(e, -1),
                               e.astype(np.float32).astype(np.float64), rng.random(2000)])
        x = np.clip(near, 0, 1)
        for closed in ("right", "left"):
            for edges in (e, B.paper_width_edges(n)):
                np.testing.assert_array_equal(B.bin_index(x, edges, closed, uniform=True),
                                              B.bin_index(x, edges, closed))


def test_mass_edges_match_kumar_equal_bins():
    for name in ("k10", "ties", "one", "empty_bins"):
        conf = _top(*FIXTURES[name])[0]
        for n in (15, 4):
            mine = B.mass_edges(conf, n)
            assert mine.size == n + 1 and mine[0] == 0 and mine[-1] == 1
            assert np.all(np.diff(mine) >= 0)
            np.testing.assert_array_equal(np.unique(mine[1:]), cal.get_equal_bins(list(conf), n))


# ----------------------------------------------------------------------------- classwise
@pytest.mark.parametrize("name", list(FIXTURES))
def test_classwise_matches_kumar_marginal(name):
    p, y = FIXTURES[name]
    want = float(cal.get_ece(p.astype(np.float64), y, num_bins=15, mode="marginal"))
    assert M.classwise_ece(p, y, 15) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("name", RANDOM)
def test_classwise_left_matches_pycalib(name):
    p, y = FIXTURES[name]
    onehot = np.eye(p.shape[1])[y]
    want = float(pycalib_metrics.classwise_ECE(onehot, p.astype(np.float64), bins=15))
    assert M.classwise_ece(p, y, 15, closed="left") == pytest.approx(want, abs=1e-12)


# ----------------------------------------------------------------------------- paper_compat
def _ref_paper_bins_loop(conf32: torch.Tensor, hits: torch.Tensor, lowers, uppers) -> float:
    """Bin-by-bin loop in torch, the released code's semantics: in bin iff
    conf > lower and conf <= upper, comparisons at the tensor's dtype, weight |B|/N."""
    total = 0.0
    for lo, hi in zip(lowers, uppers):
        m = conf32.gt(float(lo)) & conf32.le(float(hi))
        frac = m.double().mean().item()
        if frac > 0:
            total += abs(conf32[m].double().mean().item() - hits[m].double().mean().item()) * frac
    return total


def _paper_fixture():
    rng = np.random.default_rng(11)
    z = torch.from_numpy(rng.normal(size=(600, 10)) * 3).float()
    z[:60, 3] += 150.0  # float32 probabilities exactly 0 (and confidences exactly 1)
    z[60:120] = z[60]  # 60 tied rows
    p = torch.softmax(z, dim=1)
    y = torch.from_numpy(rng.integers(0, 8, 600))  # classes 8 and 9 never appear as labels
    y[:50] = 3
    return p, y


def test_paper_compat_adaece_matches_bin_loop():
    p, y = _paper_fixture()
    conf, pred = p.max(dim=1)
    hits = pred.eq(y)
    n = conf.numel()
    e = np.interp(np.linspace(0, n, 16), np.arange(n), np.sort(conf.numpy()))
    want = _ref_paper_bins_loop(conf, hits, e[:-1], e[1:])
    assert M.adaptive_ece(p, y, 15, paper_compat=True) == pytest.approx(want, abs=1e-6)
    assert M.adaptive_ece(p.double(), y, 15, paper_compat=True) == pytest.approx(
        _ref_paper_bins_loop(conf.double(), hits, e[:-1], e[1:]), abs=1e-12)
    assert M.adaptive_ece(p, y, 15, paper_compat=True) != pytest.approx(
        M.adaptive_ece(p, y, 15), abs=1e-4)


def test_paper_compat_adaece_hand_case_drops_minimum():
    # conf 0.6 0.7 0.8 0.9, 2 bins: edges interp([0, 2, 4]) = [0.6, 0.8, 0.9]
    # (0.6, 0.8] = {0.7 hit, 0.8 miss}, (0.8, 0.9] = {0.9 hit}; 0.6 is dropped
    c = np.array([0.6, 0.7, 0.8, 0.9])
    p, y = np.stack([c, 1 - c], 1), np.array([0, 0, 1, 0])
    want = (abs(1 - 1.5) + abs(1 - 0.9)) / 4
    assert M.adaptive_ece(p, y, 2, paper_compat=True) == pytest.approx(want, abs=1e-15)
    # default: mass edges [0, 0.75, 1]: {0.6 hit, 0.7 hit}, {0.8 miss, 0.9 hit}
    assert M.adaptive_ece(p, y, 2) == pytest.approx((abs(2 - 1.3) + abs(1 - 1.7)) / 4)


def test_paper_compat_classwise_matches_class_loop():
    p, y = _paper_fixture()
    e = torch.linspace(0, 1, 16)
    per_class = [_ref_paper_bins_loop(p[:, k], y.eq(k), e[:-1], e[1:])
                 for k in range(int(y.max()) + 1)]
    want = float(np.mean(per_class))
    assert M.classwise_ece(p, y, 15, paper_compat=True) == pytest.approx(want, abs=1e-6)
    assert (p == 0).any()  # the dropped zeros are exercised
    assert M.classwise_ece(p, y, 15) != pytest.approx(want, abs=1e-4)


# ----------------------------------------------------------------------------- smooth ECE
@pytest.mark.parametrize("name", ["k10", "k2", "k100", "ties", "empty_bins", "float32_ones"])
def test_smooth_ece_matches_relplot(name):
    p, y = FIXTURES[name]
    conf, hit = _top(p, y)
    assert M.smooth_ece(p, y) == pytest.approx(float(relplot.smECE(conf, hit)), abs=1e-6)
    want = float(relplot.metrics.smECE_sigma(conf, hit, 0.05))
    assert M.smooth_ece(p, y, sigma=0.05) == pytest.approx(want, abs=1e-6)


def test_smooth_ece_small_bandwidth_branch():
    # near-calibrated sample: the fixed point needs a small sigma (many bisection steps)
    rng = np.random.default_rng(12)
    c = rng.uniform(0.5, 1, 3000)
    p, y = np.stack([c, 1 - c], 1), (rng.random(3000) > c).astype(int)
    conf, hit = _top(p, y)
    assert M.smooth_ece(p, y) == pytest.approx(float(relplot.smECE(conf, hit)), abs=1e-6)


# ----------------------------------------------------------------------------- sweep
def _ref_sweep(conf, hit, binning, p=1.0):
    """Roelofs et al. (2022) by the letter: explicit bins per b, stop at the first
    non-monotone b; width bins (lower, upper] with 0 in bin 0; mass bins by rank."""
    n = conf.size
    order = np.argsort(conf, kind="stable")

    def assign(b):
        if binning == "mass":
            out = np.empty(n, int)
            out[order] = [r * b // n for r in range(n)]
            return out
        return np.array([max(0, next(j for j in range(b) if c <= (j + 1) / b or j == b - 1))
                         for c in conf])

    def stats(b):
        idx = assign(b)
        rows = [(np.sum(idx == j), hit[idx == j].mean(), conf[idx == j].mean())
                for j in range(b) if np.any(idx == j)]
        return rows

    chosen = 1
    for b in range(2, n):
        accs = [a for _, a, _ in stats(b)]
        if any(accs[i + 1] < accs[i] for i in range(len(accs) - 1)):
            break
        chosen = b
    err = sum(m * abs(a - c) ** p for m, a, c in stats(chosen)) / n
    return err ** (1 / p), chosen


@pytest.mark.parametrize("name", ["k10", "k2", "ties", "edges", "one", "float32_ones"])
@pytest.mark.parametrize("binning", ["width", "mass"])
def test_ece_sweep_matches_definition(name, binning):
    p, y = FIXTURES[name]
    p, y = p[:150], y[:150]
    conf, hit = _top(p, y)
    for power in (1, 2):
        want, nb = _ref_sweep(conf, hit, binning, power)
        got, got_nb = M.ece_sweep(p, y, binning, p=power, return_n_bins=True)
        assert got_nb == nb
        assert got == pytest.approx(want, abs=1e-12)


def test_ece_sweep_separable_uses_n_minus_one_bins():
    c = np.linspace(0.55, 0.95, 40)
    p, y = np.stack([c, 1 - c], 1), (c < 0.75).astype(int)  # hits exactly when conf >= 0.75
    err, nb = M.ece_sweep(p, y, "mass", return_n_bins=True)
    assert nb == 39


# ----------------------------------------------------------------------------- proper scores etc.
@pytest.mark.parametrize("k", [2, 10, 100])
def test_nll_brier_error_match_sklearn(k):
    rng = np.random.default_rng(k)
    z = rng.normal(size=(500, k)) * 3
    y = rng.integers(0, k, 500)
    p = softmax(z, axis=1)
    assert M.nll(z, y) == pytest.approx(skm.log_loss(y, p, labels=range(k)), rel=1e-12)
    ce = torch.nn.functional.cross_entropy(torch.from_numpy(z), torch.from_numpy(y)).item()
    assert M.nll(torch.from_numpy(z).float(), y) == pytest.approx(ce, rel=1e-6)
    want = sum(skm.brier_score_loss((y == j).astype(int), p[:, j]) for j in range(k))
    assert M.brier(p, y) == pytest.approx(want, rel=1e-12)
    assert M.error_rate(p, y) == pytest.approx(1 - skm.accuracy_score(y, p.argmax(1)))


def test_nll_extreme_logits_stay_finite():
    z = np.array([[1000.0, -1000.0, 0.0], [0.0, 0.0, 0.0]])
    assert M.nll(z, np.array([1, 2])) == pytest.approx((2000.0 + np.log(3)) / 2)
    np.testing.assert_allclose(M.probs_from_logits(z * 50, temperature=2.0),
                               softmax(z * 25, axis=1), atol=1e-15)


def test_ood_auroc_matches_sklearn_with_ties():
    p_in, _ = _random(300, 10, 20, scale=4)
    p_out, _ = _random(200, 10, 21, scale=1)
    p_out[:20] = p_in[:20]  # identical rows: tied entropies across the two sets
    h = np.concatenate([entropy(p_in, axis=1), entropy(p_out, axis=1)])
    lab = np.r_[np.zeros(300), np.ones(200)]
    assert M.ood_auroc(p_in, p_out) == pytest.approx(skm.roc_auc_score(lab, h), abs=1e-12)


def test_s99_hand_case():
    c = np.array([0.999, 0.99, 0.98999, 0.995, 0.6])
    p = np.stack([c, 1 - c], 1)
    y = np.array([0, 1, 0, 0, 0])  # in S99: 0.999 hit, 0.99 miss, 0.995 hit
    frac, acc = M.s99(p, y)
    assert frac == pytest.approx(3 / 5) and acc == pytest.approx(2 / 3)
    frac, acc = M.s99(p[[4]], y[[4]])
    assert frac == 0.0 and np.isnan(acc)


# ----------------------------------------------------------------------------- API behaviour
def test_torch_inputs_logits_and_float32_agree():
    p, y = FIXTURES["k10"]
    pt, yt = torch.from_numpy(p), torch.from_numpy(y)
    for f in (M.ece, M.adaptive_ece, M.classwise_ece, M.mce, M.brier, M.smooth_ece):
        assert f(pt, yt) == f(p, y)
    z = np.log(p) + 0.3
    assert M.ece(z, y, is_probs=False) == pytest.approx(M.ece(p, y), abs=1e-12)
    assert M.ece(p.astype(np.float32), y) == pytest.approx(M.ece(p, y), abs=1e-6)


def test_evaluate_agrees_with_oracles():
    rng = np.random.default_rng(30)
    z = rng.normal(size=(10_000, 100)).astype(np.float32) * 3
    y = rng.integers(0, 100, 10_000)
    out = M.evaluate(z, y)
    p = M.probs_from_logits(z)
    assert set(out) == {"error", "nll", "ece", "adaece", "classwise_ece", "mce", "brier"}
    assert out["error"] == pytest.approx(1 - skm.accuracy_score(y, p.argmax(1)))
    assert out["nll"] == pytest.approx(skm.log_loss(y, p, labels=range(100)), rel=1e-9)
    assert out["ece"] == pytest.approx(float(cal.get_ece(p, y, num_bins=15)), abs=1e-12)
    assert out["adaece"] == pytest.approx(float(cal.get_ece_em(p, y, num_bins=15)), abs=1e-12)
    assert out["classwise_ece"] == pytest.approx(M.classwise_ece(p, y), abs=1e-12)
    assert out["mce"] == pytest.approx(M.mce(p, y), abs=1e-12)
    assert out["brier"] == pytest.approx(skm.brier_score_loss(y, p, labels=range(100)), rel=1e-9)


@pytest.mark.parametrize("call,match", [
    (lambda: M.ece(np.full((3, 2), 0.5), np.array([0, 1])), "labels must have shape"),
    (lambda: M.ece(np.full((3, 2), 0.5), np.array([0, 1, 2])), r"labels must be integers in \[0, 2\)"),
    (lambda: M.ece(np.full((3, 2), 0.5), np.array([0, -1, 1])), r"\[0, 2\)"),
    (lambda: M.ece(np.full((3, 2), 0.5), np.array([0.0, 1.0, 1.0])), "labels must be integers"),
    (lambda: M.ece(np.full((3, 2), 0.6), np.array([0, 1, 1])), "sum to 1"),
    (lambda: M.ece(np.array([[np.nan, 1.0]]), np.array([0])), "NaN"),
    (lambda: M.ece(np.array([[1.5, -0.5]]), np.array([0])), r"in \[0, 1\]"),
    (lambda: M.ece(np.array([0.5, 0.5]), np.array([0])), r"probs must have shape \(N, K\)"),
    (lambda: M.ece(np.ones((2, 1)), np.array([0, 0])), "K >= 2"),
    (lambda: M.ece(np.full((2, 2), 0.5), np.array([0, 1]), n_bins=0), "n_bins must be"),
    (lambda: M.ece(np.full((2, 2), 0.5), np.array([0, 1]), binning="quantile"),
     "binning must be one of 'width', 'mass'"),
    (lambda: M.ece(np.full((2, 2), 0.5), np.array([0, 1]), closed="both"),
     "closed must be one of 'right', 'left'"),
    (lambda: M.nll(np.array([[np.inf, 0.0]]), np.array([0])), "logits must be finite"),
    (lambda: M.probs_from_logits(np.zeros((2, 2)), temperature=0), "temperature"),
    (lambda: M.s99(np.full((2, 2), 0.5), np.array([0, 1]), threshold=1.5), "threshold"),
    (lambda: M.ood_auroc(np.full((2, 2), 0.5), np.full((2, 3), 1 / 3)), "same number of classes"),
    (lambda: M.ece_sweep(np.full((2, 2), 0.5), np.array([0, 1]), p=0.5), "p must be"),
])
def test_bad_input_gives_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_validate_false_skips_probability_checks_only():
    p = np.full((3, 2), 0.6)
    M.ece(p, np.array([0, 1, 1]), validate=False)
    with pytest.raises(ValueError, match="labels"):
        M.ece(p, np.array([0, 1, 2]), validate=False)


def test_large_read_only_input_warns_nothing():
    # from 2**22 entries the checks run through torch, which warns on read-only numpy arrays
    p = np.full((1 << 21, 2), 0.5, dtype=np.float32)
    p[::2] = [0.75, 0.25]
    p.flags.writeable = False
    y = np.zeros(1 << 21, dtype=np.int64)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # half the samples at conf 0.75 (all hits), half at 0.5 (all hits): ECE = 0.375
        assert M.ece(p, y) == pytest.approx(0.375, abs=1e-12)
        p2 = p.copy()
        assert M.ece(p2, y) == pytest.approx(0.375, abs=1e-12)
    with pytest.raises(ValueError, match="sum to 1"):
        bad = p.copy()
        bad[-1] = [0.9, 0.9]
        M.ece(bad, y)
