"""The noise model's faster paths equal what they replaced bit for bit (a verdict's interval is
read from these numbers), and the kept draws are what was computed: the equal-mass bin sums a
block of resamples at a time, the sparse products over the examples in order, the resampled
metrics kept per scored test set (replicate.comparison.noise.store) and the disk entries
several processes share (replicate.claims.cache.shared)."""
from __future__ import annotations

import multiprocessing
import time

import numpy as np
import pytest
from scipy import sparse

from replicate import metrics
from replicate.claims import cache
from replicate.comparison.noise import resampling, scores, store


def _scored(n, k=10, seed=0, decimals=None):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3
    if decimals is not None:                              # ties: equal confidences, confidences on bin edges
        z = np.round(z, decimals)
        z[: n // 5] = 0.0
    lp = metrics._log_softmax(z)
    return scores.Scored(np.exp(lp), rng.integers(0, k, n), lp[np.arange(n), rng.integers(0, k, n)])


def _reference_mass_sums(s, w, n_bins=15):
    """The equal-mass bin sums as they were computed before: every row at once, the running
    sums padded with a zero column."""
    conf, hit = s.top()
    o = np.argsort(conf, kind="stable")
    srt, w = conf[o], np.asarray(w, dtype=np.float64)[:, o]
    b, n = w.shape
    cw = np.cumsum(w, axis=1)
    sizes = np.full(n_bins, n // n_bins)
    sizes[: n % n_bins] += 1
    cut = np.cumsum(sizes)[:-1]
    rows = np.arange(b)[:, None] * (n + 1.0)

    def at(k):
        pos = np.searchsorted((cw + rows).ravel(), (k[None] + rows).ravel(), "right").reshape(b, -1)
        return srt[pos - np.arange(b)[:, None] * n]
    inner = (at(cut - 1) + at(cut)) / 2.0
    q = np.stack([np.searchsorted(srt, e, "right") for e in inner])

    def pad(x):
        return np.concatenate([np.zeros((b, 1)), np.cumsum(x, axis=1)], axis=1)
    bounds = np.concatenate([np.zeros((b, 1), dtype=np.intp), q, np.full((b, 1), n)], axis=1)
    return tuple(np.diff(np.take_along_axis(pad(x), bounds, 1), axis=1) for x in (w, w * srt, w * hit[o]))


@pytest.mark.parametrize("n, decimals", [(3000, None), (3000, 1), (45, 2), (31, None)])
@pytest.mark.parametrize("n_bins", [15, 30])
def test_mass_sums_equal_the_reference_bit_for_bit(n, decimals, n_bins):
    s = _scored(n, decimals=decimals)
    for w in (resampling.weights(n, 300, 0, "test"), resampling.weights(n, 300, 0, "test")[:7], np.ones((1, n))):
        got, want = scores._mass_sums(s, w, n_bins), _reference_mass_sums(s, w, n_bins)
        for g, x in zip(got, want):
            np.testing.assert_array_equal(g, x)


@pytest.mark.parametrize("metric", ["ece", "mce", "classwise_ece"])
def test_sparse_products_equal_the_row_ordered_product_bit_for_bit(metric):
    s = _scored(2000, decimals=1)
    w = resampling.weights(2000, 200, 0, "test")
    t = s.terms(metric)
    want = np.asarray(t.T.tocsr() @ np.ascontiguousarray(w.T)).T        # the product as it was computed
    np.testing.assert_array_equal(resampling.matmul(w, t), want)
    np.testing.assert_array_equal(resampling.matmul(w, sparse.coo_matrix(t)), want)
    np.testing.assert_array_equal(resampling.totals(w), w.sum(axis=1))


def test_the_store_returns_what_was_computed_and_tells_runs_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    store._MEMO.clear()
    a, b = _scored(500, seed=1), _scored(500, seed=2)
    w = resampling.weights(500, 100, 0, "test")
    for metric in ("ece", "adaece", "nll"):
        got = store.replicated(a, metric, w)
        np.testing.assert_array_equal(got, scores.replicated(a, metric, w))
        got[:] = -1.0                                                      # a copy: the kept one is untouched
        np.testing.assert_array_equal(store.replicated(a, metric, w), scores.replicated(a, metric, w))
        np.testing.assert_array_equal(store.replicated(b, metric, w), scores.replicated(b, metric, w))
    assert len(list((tmp_path / "reports").glob("draws-*/*.pkl"))) == 6
    store._MEMO.clear()                                                    # another process: read from disk
    np.testing.assert_array_equal(store.replicated(b, "ece", w), scores.replicated(b, "ece", w))
    some = np.ones((2, 500))                                               # not a weight matrix: not kept
    np.testing.assert_array_equal(store.replicated(a, "ece", some), scores.replicated(a, "ece", some))
    assert len(list((tmp_path / "reports").glob("draws-*/*.pkl"))) == 6


def _slow_build(path, log):
    def build():
        with open(log, "a") as fh:
            fh.write("built\n")
        time.sleep(0.5)
        return {"value": 42}
    return cache.shared(path, build)


def test_a_shared_entry_is_computed_once_while_another_process_waits(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    path, log = tmp_path / "reports" / "x-1" / "entry.pkl", tmp_path / "log"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.starmap(_slow_build, [(path, log), (path, log)])
    assert got == [{"value": 42}, {"value": 42}]
    assert log.read_text() == "built\n"
    assert cache.shared(path, lambda: {"value": 0}) == {"value": 42}        # read back, not built
    path.write_bytes(b"not a pickle")                                      # unreadable: built again
    assert cache.shared(path, lambda: {"value": 7}) == {"value": 7}


def test_a_shared_entry_is_built_by_the_waiter_after_the_timeout(tmp_path, monkeypatch):
    import fcntl

    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    path = tmp_path / "reports" / "y-1" / "entry.pkl"
    path.parent.mkdir(parents=True)
    with open(path.with_name(path.name + ".lock"), "a+") as held:          # another process holds the lock
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cache.shared(path, lambda: 3, wait=0.1) == 3
    monkeypatch.setenv(cache.CACHE_ENV, "0")
    assert cache.shared(path, lambda: 4) == 4                              # the cache off: computed anew


@pytest.mark.parametrize("metric", ["sweep_ece", "sweep_ece_mass"])
@pytest.mark.parametrize("decimals", [None, 1])
def test_sweeps_from_the_sorted_whole_set_equal_each_resample_sorted_bit_for_bit(metric, decimals):
    s = _scored(1500, decimals=decimals)
    w = resampling.weights(1500, 60, 0, "test")
    want = np.array([100 * scores.SLOW[metric](s.probs[i], s.labels[i]) for i in map(resampling.indices, w)])
    np.testing.assert_array_equal(scores.replicated(s, metric, w), want)


def _reference_mass_ece(conf, hit, w, n_bins=15):
    """The FTS chapter's resampled equal-mass ECE as it was computed (every row at once)."""
    b, n = w.shape
    total = int(round(w[0].sum()))
    sizes = np.full(n_bins, total // n_bins)
    sizes[: total % n_bins] += 1
    cut = np.cumsum(sizes)[:-1]
    order = np.argsort(conf, kind="stable")
    cs, hs, ws = conf[order], hit[order], w[:, order]
    off, base = np.arange(b)[:, None] * (total + 1), np.arange(b)[:, None] * n
    flat = (np.cumsum(ws, axis=1) + off).ravel()

    def at(pos):
        return cs[np.searchsorted(flat, (pos[None, :] + off).ravel(), "right").reshape(b, -1) - base]
    inner = (at(cut - 1) + at(cut)) / 2.0
    bounds = np.searchsorted(cs, inner.ravel(), "right").reshape(b, -1)
    edges = np.concatenate([np.zeros((b, 1), dtype=np.intp), bounds, np.full((b, 1), n)], axis=1)
    sc = np.concatenate([np.zeros((b, 1)), np.cumsum(ws * cs, axis=1)], axis=1)
    sh = np.concatenate([np.zeros((b, 1)), np.cumsum(ws * hs, axis=1)], axis=1)
    gap = np.diff(np.take_along_axis(sh, edges, 1), axis=1) - np.diff(np.take_along_axis(sc, edges, 1), axis=1)
    return np.abs(gap).sum(axis=1) / total


@pytest.mark.parametrize("decimals", [None, 1])
def test_the_fts_chapters_resampled_equal_mass_ece_equals_the_reference_bit_for_bit(decimals):
    from replicate.experiments.fts.report import _mass_ece

    s = _scored(2500, decimals=decimals)
    conf, hit = s.top()
    w = resampling.weights(2500, 120, 0, "val")
    for rows in (w, w[[3, 7, 50]], np.ones((1, 2500))):
        np.testing.assert_array_equal(_mass_ece(conf, hit, rows), _reference_mass_ece(conf, hit, rows))


def test_the_temperature_store_returns_the_fit_and_keys_what_it_reads(tmp_path, monkeypatch):
    from replicate import posthoc

    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    store._MEMO.clear()
    rng = np.random.default_rng(3)
    z, y = (rng.normal(size=(400, 5)) * 3).astype(np.float32), rng.integers(0, 5, 400)
    for sel in ("ece", "nll", "adaece"):
        want = posthoc.fit_temperature(z, y, method="grid", metric=sel, warn=False).params["T"]
        assert store.temperature(z, y, sel) == want
        assert store.temperature(z.astype(np.float64), y, sel) == want            # the same float64 logits
    assert store.temperature(z, y, "ece", n_bins=5) == posthoc.fit_temperature(z, y, method="grid", metric="ece", n_bins=5, warn=False).T
    grid = np.array([0.5, 1.0, 2.0])
    assert store.temperature(z, y, "ece", grid) == posthoc.fit_temperature(z, y, method="grid", metric="ece", grid=grid, warn=False).T
    store._MEMO.clear()
    assert store.temperature(z, y, "nll") == posthoc.fit_temperature(z, y, method="grid", metric="nll", warn=False).T
    with pytest.raises(ValueError, match="labels must be integers"):
        store.temperature(z, y.astype(float), "ece")


def test_the_focal_temperature_store_fits_identical_logits_once(tmp_path, monkeypatch):
    from replicate import posthoc

    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path))
    monkeypatch.setenv(cache.CACHE_ENV, "1")
    store._MEMO.clear()
    rng = np.random.default_rng(4)
    z, y = rng.normal(size=(300, 4)) * 3, rng.integers(0, 4, 300)
    calls = []
    real = posthoc.fit_focal_temperature
    monkeypatch.setattr(posthoc, "fit_focal_temperature", lambda *a, **k: calls.append(1) or real(*a, **k))
    want = real(z, y, metric="ece", temperatures=posthoc.TS_GRID, warn=False)
    assert store.focal_temperature(z, y, "ece") == (float(want.T), float(want.gamma))
    assert store.focal_temperature(z.copy(), y.copy(), "ece") == (float(want.T), float(want.gamma))   # the same logits
    assert len(calls) == 1
    store._MEMO.clear()                                   # another process: read from disk, not fitted
    assert store.focal_temperature(z, y, "ece") == (float(want.T), float(want.gamma))
    assert len(calls) == 1
    z2 = z.copy()
    z2[0, 0] += 1.0                                       # other logits: fitted anew
    store.focal_temperature(z2, y, "ece")
    store.focal_temperature(z, y, "nll")                  # another selector: fitted anew
    assert len(calls) == 3
    with pytest.raises(ValueError, match="labels must be integers"):
        store.focal_temperature(z, y.astype(float), "ece")


def test_a_weight_matrix_is_recognised_after_more_were_made_than_the_cache_holds():
    """``resampling._key`` by identity: a matrix still in use is recognised however many others
    the process made since (formerly it called ``weights`` for each known key, which pushed the
    newer matrices out of its cache, so they were no longer recognised and not kept); its first
    rows, or a copy, are not whole matrices."""
    w = resampling.weights(300, 10, 0, "test")
    others = [resampling.weights(300 + i, 10, 0, "test") for i in range(1, 40)]
    assert resampling._key(w) == (300, 10, 0, "test")
    assert resampling._key(others[-1]) == (339, 10, 0, "test")
    assert resampling._key(w[:5]) is None and resampling._key(w.copy()) is None


@pytest.mark.parametrize("n, k, per_row", [(3000, 30, 2), (1200, 60, 6), (500, 15, 1)])
def test_compiled_sparse_product_gives_scipys_sums_bit_for_bit(monkeypatch, n, k, per_row):
    """The compiled product of a whole weight matrix (its multiplicities as bytes) with sparse
    per-example terms against scipy's product of the float64 matrix: equal to the last bit,
    with negative, tiny and large terms, examples with no term and columns with none."""
    pytest.importorskip("numba")
    from scipy import sparse

    rng = np.random.default_rng(n)
    w = resampling.weights(n, 300, seed=5, stream=f"compiled-{n}")
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, k - 1, rows.size)                     # the last column stays empty
    vals = rng.normal(size=rows.size) * np.exp(rng.uniform(-30, 30, rows.size))
    vals[rng.random(rows.size) < 0.1] = 0.0
    keep = rng.random(rows.size) < 0.9                           # some examples have no term
    terms = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n, k))
    assert resampling._compiled() is not None and resampling._counts(n, 300, 5, f"compiled-{n}") is not None
    got = resampling.matmul(w, terms)
    monkeypatch.setattr(resampling, "_compiled", lambda: None)   # scipy's product of the float64 copy
    want = resampling.matmul(w, terms)
    assert got.shape == want.shape == (300, k)
    assert np.array_equal(got, want)
    assert np.array_equal(want, np.asarray(terms.T @ np.ascontiguousarray(w.T)).T)


def test_counts_over_a_byte_fall_back_to_the_float64_product(monkeypatch):
    """A resample drawing one example more than 255 times has no byte copy: the product reads
    the float64 matrix and gives the same numbers."""
    from scipy import sparse

    big = np.zeros((2, 300))
    big[0, 0], big[1, 1:] = 300.0, 1.0
    monkeypatch.setattr(resampling, "weights", lambda n, n_boot, seed, stream: big)
    resampling._counts.cache_clear()
    try:
        assert resampling._counts(300, 2, 0, "x") is None
    finally:
        resampling._counts.cache_clear()
    terms = sparse.csr_matrix(np.arange(600.0).reshape(300, 2))
    assert np.array_equal(resampling.matmul(big, terms), big @ terms.toarray())
