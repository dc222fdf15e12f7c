"""The shared argument checks."""
import numpy as np
import pytest

from replicate.checks import positive_int


def test_positive_int_accepts_python_and_numpy_integers():
    assert positive_int("n", 3) == 3 and positive_int("n", np.int64(7)) == 7


@pytest.mark.parametrize("bad", [0, -2, 2.0, True, "3", None])
def test_positive_int_rejects_and_names_the_parameter(bad):
    with pytest.raises(ValueError, match=r"n_bins must be a positive integer, got"):
        positive_int("n_bins", bad)
