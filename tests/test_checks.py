"""The shared argument checks."""
import math

import numpy as np
import pytest

from replicate import checks
from replicate.checks import positive_int


def test_positive_int_accepts_python_and_numpy_integers():
    assert positive_int("n", 3) == 3 and positive_int("n", np.int64(7)) == 7
    assert positive_int("epochs", 2, lo=2) == 2


@pytest.mark.parametrize("bad", [0, -2, 2.0, True, "3", None])
def test_positive_int_rejects_and_names_the_parameter(bad):
    with pytest.raises(ValueError, match=r"n_bins must be a positive integer, got"):
        positive_int("n_bins", bad)


def test_positive_int_with_a_lower_bound_says_it():
    with pytest.raises(ValueError, match=r"n_classes must be an integer >= 2, got 1"):
        positive_int("n_classes", 1, lo=2)


def test_gamma_bounds_default_strict_and_fts():
    assert checks.gamma(0) == 0.0 and checks.gamma(np.float32(2.5)) == 2.5
    assert checks.gamma(-0.5, lo=-1.0, strict=True) == -0.5          # FTS: gamma > -1
    for bad, kw in [(-0.1, {}), (0.0, {"strict": True}), (-1.0, {"lo": -1.0, "strict": True}),
                    (math.inf, {}), (math.nan, {}), ("x", {}), (None, {})]:
        with pytest.raises(ValueError, match="^gamma must be"):
            checks.gamma(bad, **kw)
    with pytest.raises(ValueError, match=r"g0 must be a finite real number > 0 \(why\), got 0"):
        checks.gamma(0, name="g0", strict=True, why=" (why)")


def test_gammas_checks_every_value_and_returns_float64():
    g = checks.gammas([0, 1, 2])
    assert g.dtype == np.float64 and g.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"gamma must be finite and > 0"):
        checks.gammas([1.0, 0.0], strict=True)
    with pytest.raises(ValueError, match="gamma must be"):
        checks.gammas([1.0, np.nan])


def test_probabilities_and_simplex():
    assert checks.probabilities([0, 0.5, 1], "p").tolist() == [0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match=r"q must hold probabilities in \[0, 1\]"):
        checks.probabilities([0.5, 1.2], "q")
    eta = checks.simplex([[0.25, 0.75], [1.0, 0.0]])
    assert eta.shape == (2, 2)
    with pytest.raises(ValueError, match="eta must have the classes on the last axis"):
        checks.simplex([1.0])
    with pytest.raises(ValueError, match="q must sum to 1"):
        checks.simplex([0.2, 0.2], "q")
    assert checks.simplex([0.2, 0.2], "q", normalised=False).sum() == pytest.approx(0.4)
    with pytest.raises(ValueError, match="probabilities"):
        checks.simplex([0.5, np.nan], normalised=False)
