"""The FTS maps against independent computations: Eq. (1) typed out, mpmath at 60 digits, the
authors' focal link on hand-computed examples, and the grid scores against a brute-force loop."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import special

from replicate import metrics, posthoc, synthetic
from replicate.posthoc import fts as posthoc_fts
from replicate.posthoc import fts_grid
from replicate.theory.fts.calibration_map import focal_calibration_map


def _data(n=400, k=6, scale=1.0, seed=0):
    s = synthetic.LogitModel(n_classes=k, beta=1.5, scale=scale).sample(n, rng=seed)
    return s.logits, s.labels


def _eq1(q, gamma):
    """Komisarenko & Kull Eq. (1) typed out: p_j proportional to 1 / f'(q_j)."""
    fprime = (1 - q) ** gamma * (gamma * np.log(q) / (1 - q) - 1 / q)
    w = 1 / fprime
    return w / w.sum(-1, keepdims=True)


def _eq1_mpmath(z, T, gamma):
    """Eq. (1) after temperature scaling, at 60 significant digits (1 - q from the other classes)."""
    mpmath.mp.dps = 60
    z = [mpmath.mpf(float(v)) / mpmath.mpf(T) for v in z]
    e = [mpmath.exp(v - max(z)) for v in z]
    s = sum(e)
    w = []
    for i, ei in enumerate(e):
        q, c = ei / s, (s - ei) / s
        fp = c ** gamma * (gamma * mpmath.log(q) / c - 1 / q)
        w.append(1 / fp)
    return [float(mpmath.log(wi / sum(w))) for wi in w]


@pytest.mark.parametrize("gamma", [-0.5, -0.25, 0.05, 0.37, 1.0, 5.0])
def test_intended_map_equals_eq1_and_the_theory_module(gamma):
    z, _ = _data(300, scale=1.0)
    for T in (0.7, 1.0, 2.3):
        lp = posthoc_fts.fts_log_probs(z, T, gamma)
        q = special.softmax(z / T, axis=1)
        np.testing.assert_allclose(np.exp(lp), _eq1(q, gamma), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(np.exp(lp), focal_calibration_map(q, gamma), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("gamma", [-0.5, 0.05, 1.0, 5.0])
def test_intended_map_is_exact_where_the_top_probability_rounds_to_one(gamma):
    # q_top = 1 - O(e^-80) in float64: Eq. (1) typed out is 0/0 there; the log-space map agrees
    # with 60-digit arithmetic, and no log-probability is -inf
    z = np.array([[40.0, 0.0, -3.0, 1.0], [3.0, 2.9, -1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    for T in (0.5, 1.0):
        lp = posthoc_fts.fts_log_probs(z, T, gamma)
        assert np.isfinite(lp).all()
        for row, got in zip(z, lp):
            np.testing.assert_allclose(got, _eq1_mpmath(row, T, gamma), rtol=1e-9, atol=1e-12)


def test_gamma_zero_is_temperature_scaling_and_the_argmax_never_changes():
    z, _ = _data(500, k=10, scale=3.0)
    z = np.round(z, 1)                                        # ties between logits, as in float16 logits
    np.testing.assert_allclose(posthoc_fts.fts_log_probs(z, 1.3, 0.0), special.log_softmax(z / 1.3, axis=1),
                               rtol=1e-12, atol=1e-12)
    for g in posthoc.FTS_GAMMAS:
        assert (posthoc_fts.fts_log_probs(z, 0.9, g).argmax(1) == z.argmax(1)).all(), g


def test_clamp_clips_q_before_eq1():
    z = np.array([[30.0, 0.0, -2.0], [1.0, 0.5, 0.0]])
    for g in (-0.5, 1.0):
        q = np.clip(special.softmax(z, axis=1), 1e-12, 1 - 1e-12)
        np.testing.assert_allclose(np.exp(posthoc_fts.fts_log_probs(z, 1.0, g, clamp=1e-12)), _eq1(q, g),
                                   rtol=1e-9)
    # the clamp matters only where a probability is outside [1e-12, 1 - 1e-12] (row 0)
    d = np.abs(np.exp(posthoc_fts.fts_log_probs(z, 1.0, -0.5, clamp=1e-12)) - np.exp(posthoc_fts.fts_log_probs(
        z, 1.0, -0.5)))
    assert d[0].max() > 1e-9 and d[1].max() < 1e-12


def test_authors_link_on_a_hand_computed_example():
    # row 0: softmax top is exactly 1 in float32 (e^-20 < 2^-24), so Eq. (1) is 0/0 = NaN there;
    # rows 1 and 2 predict classes 2 and 0: the predicted classes of the set are {0, 2}
    z = np.array([[20.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [2.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    hi, lo = np.float32(1 - 1e-5), np.float32(1e-5 / 4)
    p, bad = posthoc_fts.authors_focal_link(z, 1.0, 1.0)
    assert bad.tolist() == [True, False, False]
    assert p[0].tolist() == [hi, lo, hi, lo]                 # every predicted class of the set, not row 0's own
    q = special.softmax(z[1:].astype(np.float64), axis=1)
    np.testing.assert_allclose(p[1:], _eq1(q, 1.0), rtol=1e-5)
    p_row, _ = posthoc_fts.authors_focal_link(z, 1.0, 1.0, guard="row")
    assert p_row[0].tolist() == [hi, lo, lo, lo]             # the guard as meant
    p_none, _ = posthoc_fts.authors_focal_link(z, 1.0, 1.0, guard="none")
    assert np.isnan(p_none[0]).all()
    # in float64 the top probability is 1 - 6e-9 < 1 - 1e-12: nothing overflows, the clip does nothing
    p64, bad64 = posthoc_fts.authors_focal_link(z, 1.0, 1.0, dtype="float64")
    assert not bad64.any()
    np.testing.assert_allclose(p64, _eq1(special.softmax(z.astype(np.float64), axis=1), 1.0), rtol=1e-9)


def test_authors_link_gives_an_overflowed_row_almost_no_log_loss_whatever_its_label():
    z = np.array([[20.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    search = fts_grid.grid_scores(z.astype(np.float64), np.array([1, 1, 2]), [1.0], np.array([1.0]),
                                     ("nll",), link="authors", clamp=posthoc_fts.AUTHORS_CLAMP)
    p, _ = posthoc_fts.authors_focal_link(z, 1.0, 1.0)
    # row 0 is labelled 1, which it gives probability ~2e-9 under Eq. (1); the guard gives it 1 - 1e-5
    want = -np.mean(np.log(p[[0, 1, 2], [1, 1, 2]].astype(np.float64)))
    assert p[0, 1] == np.float32(1 - 1e-5)
    assert search["nll"].iloc[0] == pytest.approx(want, rel=1e-12) and search["overflowed"].iloc[0] == 1


def _on_edges(seed=5):
    """Logits of :func:`_data` plus rows of 3, 5 and 15 tied classes (the rest far below): at
    every (gamma, T) their confidence is exactly 1/3, 1/5 or 1/15, edges of the 15 bins."""
    z, y = _data(200, k=15, scale=4.0, seed=seed)
    tied = np.full((36, 15), -1e4)
    for i, n in enumerate((3, 5, 15)):
        tied[12 * i:12 * (i + 1), :n] = 0.0
    return np.concatenate([z, tied]), np.concatenate([y, np.arange(36) % 3])


@pytest.mark.parametrize("link, edges", [("intended", False), ("authors", False), ("intended", True)])
def test_grid_scores_equal_a_brute_force_loop(link, edges):
    z, y = _on_edges() if edges else _data(400, k=5, scale=4.0, seed=3)
    gammas, temps = [-0.25, 0.5, 5.0], np.array([0.05, 0.3, 1.0, 1.7])
    if edges:
        gammas = [0.0, *gammas]
    s = fts_grid.grid_scores(z, y, gammas, temps, ("nll", "adaece", "ece"), link=link,
                                clamp=posthoc_fts.AUTHORS_CLAMP if link == "authors" else None)
    for r in s.itertuples():
        if link == "intended":
            lp = posthoc_fts.fts_log_probs(z, r.T, r.gamma)
            p, lpy = np.exp(lp), lp[np.arange(len(y)), y]
        else:
            p, bad = posthoc_fts.authors_focal_link(z, r.T, r.gamma)
            with np.errstate(divide="ignore"):
                lpy = np.log(p[np.arange(len(y)), y])
            assert r.overflowed == bad.sum()
        assert r.nll == pytest.approx(-lpy.mean(), rel=1e-10) or (np.isinf(r.nll) and np.isinf(lpy).any())
        assert r.adaece == pytest.approx(metrics.adaptive_ece(p, y, validate=False), abs=1e-12)
        assert r.ece == pytest.approx(metrics.ece(p, y, validate=False), abs=1e-12)
        if edges:
            assert np.isin(p.max(1), np.arange(16) / 15).sum() >= 36  # the tied rows sit on edges


def test_authors_link_guard_fires_at_small_temperatures_only_in_float32():
    z, y = _data(300, k=10, scale=4.0, seed=4)
    s = fts_grid.grid_scores(z, y, [1.0], np.array([0.05, 5.0]), ("nll",), link="authors",
                                clamp=posthoc_fts.AUTHORS_CLAMP)
    assert s["overflowed"].iloc[0] > 0 and s["overflowed"].iloc[1] == 0


def test_fit_with_the_authors_link_and_bad_arguments():
    z, y = _data(200)
    cal = posthoc.fit_focal_temperature(z, y, metric="nll", link="authors", temperatures=[0.05, 0.5, 1.0, 2.0])
    assert cal.params["link"] == "authors" and cal.params["clamp"] == posthoc_fts.AUTHORS_CLAMP
    np.testing.assert_allclose(cal(z), posthoc_fts.authors_focal_link(z, cal.T, cal.gamma)[0])
    both = posthoc.fit_focal_temperatures(z, y, temperatures=[0.5, 1.0, 2.0], metrics=("nll", "adaece"))
    assert both["nll"].search is both["adaece"].search
    assert both["nll"].params == posthoc.fit_focal_temperature(z, y, temperatures=[0.5, 1.0, 2.0],
                                                               metric="nll").params
    with pytest.raises(ValueError, match="link must be one of"):
        posthoc.fit_focal_temperature(z, y, link="buggy")
    with pytest.raises(ValueError, match="clamp must be"):
        posthoc.fit_focal_temperature(z, y, clamp=0.7)
    with pytest.raises(ValueError, match="clamp must be None or 1e-12"):
        posthoc.fit_focal_temperature(z, y, link="authors", clamp=1e-6)
    with pytest.raises(ValueError, match="guard must be one of"):
        posthoc_fts.authors_focal_link(z, 1.0, 1.0, guard="all")
    with pytest.raises(ValueError, match="dtype must be"):
        posthoc_fts.authors_focal_link(z, 1.0, 1.0, dtype="float16")
    with pytest.raises(ValueError, match="T must be"):
        posthoc_fts.fts_log_probs(z, 0.0, 1.0)
    with pytest.raises(ValueError, match="gamma"):
        posthoc_fts.fts_log_probs(z, 1.0, -1.0)
    np.testing.assert_allclose(posthoc_fts.PAPER_T_GRID, np.arange(1, 501) / 100)
