"""The class-major FTS grid scores (replicate.posthoc.fts_grid) equal the row-major computation
they replace, bit for bit: the fit takes the first minimum, so a score that moved in its last
digit could move a chosen (gamma_ev, T) and the ledger with it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replicate import binning as _b
from replicate.posthoc import FTS_GAMMAS, FTS_T_GRID, TS_GRID
from replicate.posthoc import fts as posthoc_fts
from replicate.posthoc import fts_grid

GAMMAS = [*FTS_GAMMAS, 0.0, -0.9]


# ----------------------------------------------------------------------------- the reference
def _reference_top_of_map(parts, gamma, rows, y):
    """(log p_y, argmax p, max p) of the map on the (T, N, C) layout of fts._parts, with
    numpy's row reductions: the computation the class-major one replaced."""
    logq, logc, h = parts
    buf = logq.copy() if gamma == 0.0 else logq - np.log1p(h * gamma)
    if gamma != 0.0:
        buf -= gamma * logc
    pred = buf.argmax(axis=2)
    mx = np.take_along_axis(buf, pred[..., None], axis=2)
    wy = buf[:, rows, y] - mx[..., 0]
    buf -= mx
    np.exp(buf, out=buf)
    total = buf.sum(axis=2)
    return wy - np.log(total), pred, 1.0 / total


def _reference_binned(conf, hit, kind, n_bins):
    out = np.empty(conf.shape[0])
    for i, (c, h) in enumerate(zip(conf, hit)):
        if kind == "ece":
            idx = _b.bin_index(c, _b.width_edges(n_bins), "right", uniform=True)
        else:
            idx = _b.bin_index(c, _b.mass_edges(c, n_bins), "right")
        _, sc, sh = _b.bin_sums(idx, n_bins, c, h)
        out[i] = float(np.abs(sh - sc).sum() / c.size)
    return out


def reference_grid_scores(z, y, gammas, temps, metrics, clamp=None, n_bins=15, step=2):
    """The intended map's grid scores one row-major block of ``step`` temperatures at a time."""
    top, rows = z.argmax(axis=1), np.arange(len(y))
    cols = {(g, m): [] for g in gammas for m in metrics}
    for a in range(0, len(temps), step):
        parts = posthoc_fts._parts(z, top, temps[a:a + step], clamp)
        for g in gammas:
            lpy, pred, conf = _reference_top_of_map(parts, g, rows, y)
            hit = pred == y[None, :]
            for m in metrics:
                cols[(g, m)].append(-lpy.mean(axis=1) if m == "nll" else _reference_binned(conf, hit, m, n_bins))
    return pd.DataFrame({"gamma": np.repeat(np.asarray(gammas, dtype=np.float64), len(temps)),
                         "T": np.tile(temps, len(gammas)),
                         **{m: np.concatenate([np.concatenate(cols[(g, m)]) for g in gammas]) for m in metrics}})


def _logits(kind, rng):
    if kind == "ties":                        # tied top logits, whole rows tied
        z = rng.normal(size=(300, 5)) * 4
        z[:50, 1] = z[:50, 0]
        z[50:80] = z[50:80, :1]
        return z
    if kind == "float16":                     # stored logits: ties everywhere
        return (rng.normal(size=(400, 10)) * 3).astype(np.float16).astype(np.float64)
    if kind == "huge":                        # q rounds to 1, others underflow
        return rng.normal(size=(300, 10)) * 300
    n_classes = {"two": 2, "hundred": 100, "two hundred": 200}[kind]
    return rng.normal(size=(max(60, 6000 // n_classes), n_classes)) * 5


@pytest.mark.parametrize("kind", ["ties", "float16", "huge", "two", "hundred", "two hundred"])
@pytest.mark.parametrize("clamp", [None, posthoc_fts.AUTHORS_CLAMP])
def test_grid_scores_equal_the_row_major_computation_bit_for_bit(kind, clamp):
    rng = np.random.default_rng(len(kind))
    z = _logits(kind, rng)
    y = rng.integers(0, z.shape[1], size=len(z))
    temps = np.concatenate([FTS_T_GRID[:3], TS_GRID[9:12], [5.0]])
    got = fts_grid.grid_scores(z, y, GAMMAS, temps, ("nll", "adaece", "ece"), clamp=clamp)
    want = reference_grid_scores(z, y, GAMMAS, temps, ("nll", "adaece", "ece"), clamp=clamp)
    for col in want.columns:
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)
    assert (got["overflowed"] == 0).all()


def test_grid_scores_equal_the_reference_on_a_long_grid_in_blocks():
    rng = np.random.default_rng(5)
    z = (rng.normal(size=(2000, 10)) * 4).astype(np.float16).astype(np.float64)
    y = rng.integers(0, 10, size=len(z))
    got = fts_grid.grid_scores(z, y, list(FTS_GAMMAS), TS_GRID[::7], ("ece", "nll"))
    want = reference_grid_scores(z, y, list(FTS_GAMMAS), TS_GRID[::7], ("ece", "nll"), step=3)
    for col in want.columns:
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)


@pytest.mark.parametrize("chunk, scored", [(1, 1), (1 << 11, 1 << 12), (1 << 13, 1 << 11), (1 << 24, 1 << 24)])
def test_the_block_sizes_change_no_score(monkeypatch, chunk, scored):
    """Maps computed one temperature at a time or all at once, scored one temperature at a
    time or all at once (and partial last blocks): the same bits."""
    rng = np.random.default_rng(6)
    z = (rng.normal(size=(257, 7)) * 4).astype(np.float16).astype(np.float64)
    tied = np.full((21, 7), -1e4)                          # 1, 3 or 7 classes tied: confidence 1/1, 1/3, 1/7
    for i, k in enumerate((1, 3, 7)):                      # at T = 1 (1/3 = 5/15 sits on a bin edge)
        tied[7 * i:7 * (i + 1), :k] = 0.0
    z = np.concatenate([z, tied])
    y = rng.integers(0, 7, size=len(z))
    temps = np.union1d(TS_GRID[::9], [1.0])
    want = reference_grid_scores(z, y, GAMMAS, temps, ("nll", "adaece", "ece"), step=len(temps))
    monkeypatch.setattr(fts_grid, "_CHUNK", chunk)
    monkeypatch.setattr(fts_grid, "_SCORED", scored)
    got = fts_grid.grid_scores(z, y, GAMMAS, temps, ("nll", "adaece", "ece"))
    for col in want.columns:
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)


@pytest.mark.parametrize("clamp", [None, posthoc_fts.AUTHORS_CLAMP])
def test_the_authors_link_scores_equal_one_pair_at_a_time_bit_for_bit(clamp):
    """The grid computes the authors' softmax once per T for all gammas and bins their float32
    confidences as float64 numbers, all temperatures at once; one (gamma, T) at a time through
    authors_focal_link and the row-by-row binning gives the same bits (overflowed rows included)."""
    rng = np.random.default_rng(9)
    z = rng.normal(size=(400, 10)) * 30                  # large logits: the guard fires at small T
    z[:40, 1] = z[:40, 0]                                # and ties
    z[40:55] = -1e4
    z[40:45, :3] = z[45:50, :5] = z[50:55, :1] = 0.0     # 3, 5 or 1 classes tied: confidences on bin edges
    y = rng.integers(0, 10, size=len(z))
    temps = np.array([0.05, 0.1, 0.5, 1.0, 2.5])
    got = fts_grid.grid_scores(z, y, list(FTS_GAMMAS), temps, ("nll", "adaece", "ece"), link="authors",
                               clamp=clamp)
    assert got["overflowed"].sum() > 0
    rows = np.arange(len(y))
    for r in got.itertuples():
        p, bad = posthoc_fts._authors_block(z, np.array([r.T]), r.gamma, np.float32, clamp, "broadcast")
        p, bad = p[0], bad[0]
        with np.errstate(divide="ignore"):
            nll = -np.log(p[rows, y].astype(np.float64)).mean()
        conf, hit = p.max(axis=1).astype(np.float64)[None], (p.argmax(axis=1) == y)[None]
        # the log-loss: to rounding (the grid's mean runs over a strided column of a block of
        # temperatures, a sequential sum, where a single row's is numpy's pairwise one)
        assert r.nll == pytest.approx(nll, rel=1e-12, abs=0) or (np.isinf(nll) and np.isinf(r.nll)), (r.gamma, r.T)
        want = {"overflowed": bad.sum(),
                **{m: fts_grid._binned_rows(conf, hit, m, 15, False, np.float32)[0] for m in ("adaece", "ece")}}
        for m, v in want.items():
            assert getattr(r, m) == v, (m, r.gamma, r.T)


@pytest.mark.parametrize("n_classes", [1, 2, 3, 7, 8, 9, 10, 16, 17, 100, 128, 129, 200, 1000])
def test_class_sum_is_numpys_row_sum(n_classes):
    rng = np.random.default_rng(n_classes)
    x = np.exp(rng.normal(size=(3, 50, n_classes)) * 4)
    x[0, 0] = 0.0
    np.testing.assert_array_equal(fts_grid.class_sum(np.ascontiguousarray(np.moveaxis(x, -1, 0))), x.sum(axis=-1))


def test_a_tie_in_the_map_keeps_the_first_class_as_argmax_does():
    z = np.array([[1.0, 3.0, 3.0, 0.0], [3.0, 3.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    y = np.array([2, 1, 3])
    got = fts_grid.grid_scores(z, y, [0.5, -0.5], np.array([0.5, 1.0]), ("nll", "ece"))
    want = reference_grid_scores(z, y, [0.5, -0.5], np.array([0.5, 1.0]), ("nll", "ece"))
    for col in want.columns:
        np.testing.assert_array_equal(got[col].to_numpy(), want[col].to_numpy(), err_msg=col)


def _reference_top_conf_and_nll(z, y, temps):
    """Temperature scaling's top-1 confidence and log-loss with numpy's row sums (as it was)."""
    zs = z - z.max(axis=1, keepdims=True)
    zy = zs[np.arange(len(zs)), y]
    conf, nll = np.empty((len(temps), len(zs))), np.empty(len(temps))
    for i, t in enumerate(temps):
        s = np.exp(zs * (1.0 / t)).sum(axis=1)
        conf[i], nll[i] = 1.0 / s, np.mean(np.log(s) - zy / t)
    return conf, nll


@pytest.mark.parametrize("kind", ["ties", "float16", "huge", "two", "hundred", "two hundred"])
def test_temperature_scaling_scores_equal_the_row_major_computation_bit_for_bit(kind):
    from replicate.comparison.noise import temperatures
    from replicate.posthoc import _top_conf_and_nll

    rng = np.random.default_rng(7)
    z = _logits(kind, rng)
    y = rng.integers(0, z.shape[1], size=len(z))
    conf, nll = _top_conf_and_nll(z, y, TS_GRID[::9])
    want_conf, want_nll = _reference_top_conf_and_nll(z, y, TS_GRID[::9])
    np.testing.assert_array_equal(conf, want_conf)
    np.testing.assert_array_equal(nll, want_nll)
    zs = z - z.max(axis=1, keepdims=True)
    c2, n2 = temperatures._per_temperature(z, y, TS_GRID[::9])
    for i, t in enumerate(TS_GRID[::9]):
        s = np.exp(zs / t).sum(axis=1)
        np.testing.assert_array_equal(c2[i], 1.0 / s)
        np.testing.assert_array_equal(n2[i], np.log(s) - zs[np.arange(len(y)), y] / t)
