"""Spread bands cut at the quantity's range (replicate.plots.bands) and the figures that use
them: a mean ± sd band of a percentage never leaves 0-100, an error bar of a temperature never
goes below 0."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replicate.plots.bands import cut_text, sd_band, sd_errors


def test_the_band_is_mean_plus_minus_sd_where_it_fits_and_cut_where_it_does_not():
    mean, sd = np.array([0.5, 10.0, 99.0, 4.0]), np.array([2.0, 3.0, 2.5, np.nan])
    lo, hi = sd_band(mean, sd, 0.0, 100.0)
    np.testing.assert_array_equal(lo, [0.0, 7.0, 96.5, 4.0])          # a missing sd (one seed): no band
    np.testing.assert_array_equal(hi, [2.5, 13.0, 100.0, 4.0])
    lo, hi = sd_band(mean, sd)                                          # default: cut at 0 only
    assert hi[2] == 101.5 and lo[0] == 0.0
    with pytest.raises(ValueError, match="lo must be at most hi"):
        sd_band(mean, sd, 1.0, 0.0)


def test_error_bars_are_the_band_as_distances_from_the_mean():
    mean, sd = np.array([0.3, 2.0]), np.array([1.0, 0.5])
    err = sd_errors(mean, sd)
    assert err.shape == (2, 2) and (err >= 0).all()
    lo, hi = sd_band(mean, sd)
    np.testing.assert_allclose(mean - err[0], lo)
    np.testing.assert_allclose(mean + err[1], hi)
    assert mean[0] - err[0, 0] == 0.0                                  # cut at 0, not at -0.7


def test_figure8s_bars_stay_above_zero_and_the_caption_says_so():
    from replicate.experiments.fts import figures

    g = np.array([-0.5, 0.05, 0.5])
    # seed 2's temperatures far from seed 1's: sd larger than the mean at every gamma
    paths = pd.DataFrame([("fl1", s, x, 0.1 if s == 1 else 3.0) for s in (1, 2) for x in g],
                         columns=["method", "seed", "gamma", "T"])
    fig = figures.figure8(paths, caption_text="profile: test")
    lows = [seg[0][1] for coll in fig.axes[0].collections for seg in coll.get_segments()]
    assert lows and min(lows) == 0.0
    assert "cut at 0" in " ".join(t.get_text() for t in fig.texts)


def test_the_caption_says_where_the_band_was_cut():
    from replicate.comparison.stats import metric_range

    assert cut_text(*metric_range("ece")) == "cut at 0 and 100" and cut_text(*metric_range("T")) == "cut at 0"
    assert cut_text(-float("inf"), float("inf")) == "not cut"
