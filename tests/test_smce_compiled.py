"""The exact smCE's dynamic programme on arrays (``replicate.smce._dp_rings``, compiled by
numba when installed) against the deque version it restates: the same number to the last bit,
on random predictions, ties, predictions at 0 and 1, and one distinct value."""
from __future__ import annotations

import numpy as np
import pytest

from replicate import smce


def _cases(count=400, seed=1):
    rng = np.random.default_rng(seed)
    for t in range(count):
        n = int(rng.integers(1, 400))
        f = rng.uniform(size=n) if t % 3 else np.round(rng.uniform(size=n), 1)       # ties
        y = (rng.uniform(size=n) < (f if t % 2 else 1 - f)).astype(float)             # calibrated or reversed
        if t % 7 == 0:
            f[: n // 2] = 0.0
        if t % 11 == 0:
            f[-(n // 3):] = 1.0
        yield smce._support(f, y)
    yield smce._support(np.full(5, 0.4), np.array([1.0, 0, 0, 1, 1]))                 # one distinct value


def test_the_ring_version_is_the_deque_version_bit_for_bit():
    for v, r in _cases(150):
        assert smce._dp_rings(v, r) == smce._dynamic_programme(v, r)


def test_the_compiled_version_is_the_deque_version_bit_for_bit():
    numba = pytest.importorskip("numba")
    compiled = numba.njit(smce._dp_rings)
    for v, r in _cases():
        assert compiled(v, r) == smce._dynamic_programme(v, r)
    assert smce._solver() is not smce._dynamic_programme                              # and it is the one used
