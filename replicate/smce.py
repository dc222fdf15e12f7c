"""The smooth calibration error smCE of Blasiok, Gopalan, Hu & Nakkiran (2023), as FCL's
Def. 2.2 states it, computed exactly by a linear programme.

For a predictor ``f`` with values in [0, 1] and labels ``y`` in {0, 1},

    smCE(f) = sup_w E[w(f) (y - f)],   w: [0, 1] -> [-1, 1] 1-Lipschitz.

Only the values of ``w`` at the distinct predictions ``v_1 < ... < v_n`` matter, and values
there extend to a 1-Lipschitz function on [0, 1] iff ``|w_{i+1} - w_i| <= v_{i+1} - v_i``
(extend piecewise linearly, constant outside). With ``r_i`` the mass-weighted residual
``sum_{f(x) = v_i} (y - f) / N`` the supremum is the linear programme

    max  r . w   s.t.  -1 <= w_i <= 1,  |w_{i+1} - w_i| <= v_{i+1} - v_i.

We solve it exactly by dynamic programming over the sorted predictions (the best value
given ``w_i`` is concave and piecewise linear in ``w_i``; :func:`_dynamic_programme`),
linear in the number of distinct predictions in practice, where a general LP solver takes
seconds for 10,000 test samples. The same programme on arrays (:func:`_dp_rings`) is compiled
by numba when it is installed (the ``fast`` extra, part of ``book``): the same operations in
the same order, so the same number to the last bit (``tests/test_smce_compiled.py``), 50 to 250
times faster than the deques in Python (``benchmarks/smce.py``), which the noise model's 200 resamples per run
need (without numba the deques run); ``tests/test_exp_fcl.py`` checks it against scipy's HiGHS solving the LP
above and against the LP of :mod:`replicate.theory.fcl.postprocessing`. No library ships this
functional:
``relplot`` (Blasiok & Nakkiran's package, which the FCL paper cites) computes the kernel
smooth ECE instead (:func:`replicate.metrics.smooth_ece`), a different measure that agrees
with smCE only up to constant factors. The FCL paper does not say which of the two its
smCE table reports (``replicate.paper_tables`` liang2024 ``metric_notes``).

Multiclass predictions are reduced to the top label, as every table of the papers does:
``f`` = the confidence ``max_k p_k``, ``y`` = whether the prediction is correct.
"""
from __future__ import annotations

import functools

import numpy as np

from . import binning as _b
from .metrics._inputs import _probs

__all__ = ["smooth_calibration_error", "top_label_smce"]


def _support(f: np.ndarray, y: np.ndarray):
    """Distinct predictions (sorted) and the residual mass ``sum (y - f) / N`` at each."""
    vals, inv = np.unique(f, return_inverse=True)
    r = np.bincount(inv, weights=y - f, minlength=vals.size) / f.size
    return vals, r


def _dynamic_programme(v: np.ndarray, r: np.ndarray) -> float:
    """``max r . w`` over ``w_i`` in [-1, 1] with ``|w_{i+1} - w_i| <= v_{i+1} - v_i``, exactly.

    ``V_i(w)``, the best value of the first ``i`` terms given ``w_i = w``, is concave and
    piecewise linear on [-1, 1] (the "slope trick"). It is held around its argmax ``u``: the
    value ``top = V_i(u)``, the slopes ``s_left >= 0 >= s_right`` next to ``u``, and the
    breakpoints on either side as (position, drop in slope) in two deques with lazy offsets.
    The step to ``i + 1`` first takes the maximum over the window ``|u' - w| <= d``: the part
    left of the argmax moves left by ``d``, the part right of it right by ``d``, a flat piece
    opens between (breakpoints leaving [-1, 1] are dropped); then it adds ``r_{i+1} w`` and
    walks the argmax to where the slope changes sign.
    """
    from collections import deque

    left, right = deque(), deque()            # positions stored minus the offset; nearest to u at the inner end
    off_l = off_r = 0.0
    u = 1.0 if r[0] > 0 else -1.0
    top, s_left, s_right = abs(float(r[0])), float(r[0]), float(r[0])
    for d, ri in zip(np.diff(v), r[1:]):
        d, ri = float(d), float(ri)
        # window maximum: left part moves left, right part moves right, flat piece of width 2d at u
        off_l, off_r = off_l - d, off_r + d
        if s_left > 0 and u > -1.0:
            left.append((u - d - off_l, s_left))
        if s_right < 0 and u < 1.0:
            right.appendleft((u + d - off_r, -s_right))
        while left and left[0][0] + off_l <= -1.0:
            left.popleft()
        while right and right[-1][0] + off_r >= 1.0:
            right.pop()
        s_left = s_right = 0.0
        # + r w, then walk to the new argmax
        top += ri * u
        s_left, s_right = s_left + ri, s_right + ri
        while s_right > 0 and u < 1.0:
            p = right[0][0] + off_r if right else 1.0
            top += s_right * (p - u)
            if s_left > s_right:
                left.append((u - off_l, s_left - s_right))
            u, s_left = p, s_right
            if right:
                s_right -= right.popleft()[1]
        while s_left < 0 and u > -1.0:
            p = left[-1][0] + off_l if left else -1.0
            top -= s_left * (u - p)
            if s_left > s_right:
                right.appendleft((u - off_r, s_left - s_right))
            u, s_right = p, s_left
            if left:
                s_left += left.pop()[1]
    return top


def _dp_rings(v, r):
    """:func:`_dynamic_programme` with each deque held in a ring of two arrays (positions,
    slope drops) indexed by a head and a tail: every arithmetic operation of the deque version,
    in the same order. At most ``4 n`` breakpoints are ever alive (each step opens two and each
    walk ends with at most one more), so rings of ``4 n + 8`` never overrun. Written for numba
    (:func:`_solver`); plain Python runs it too, slowly."""
    n = v.shape[0]
    cap = 8
    while cap < 4 * n + 8:
        cap *= 2
    mask = cap - 1
    lpos, lslo = np.empty(cap), np.empty(cap)        # left deque [lh, lt)
    rpos, rslo = np.empty(cap), np.empty(cap)        # right deque [rh, rt)
    lh = lt = rh = rt = 0
    off_l = off_r = 0.0
    u = 1.0 if r[0] > 0 else -1.0
    top, s_left, s_right = abs(r[0]), r[0], r[0]
    for i in range(1, n):
        d = v[i] - v[i - 1]
        ri = r[i]
        off_l, off_r = off_l - d, off_r + d
        if s_left > 0 and u > -1.0:
            lpos[lt & mask] = u - d - off_l
            lslo[lt & mask] = s_left
            lt += 1
        if s_right < 0 and u < 1.0:
            rh -= 1
            rpos[rh & mask] = u + d - off_r
            rslo[rh & mask] = -s_right
        while lt > lh and lpos[lh & mask] + off_l <= -1.0:
            lh += 1
        while rt > rh and rpos[(rt - 1) & mask] + off_r >= 1.0:
            rt -= 1
        s_left = s_right = 0.0
        top += ri * u
        s_left, s_right = s_left + ri, s_right + ri
        while s_right > 0 and u < 1.0:
            p = rpos[rh & mask] + off_r if rt > rh else 1.0
            top += s_right * (p - u)
            if s_left > s_right:
                lpos[lt & mask] = u - off_l
                lslo[lt & mask] = s_left - s_right
                lt += 1
            u, s_left = p, s_right
            if rt > rh:
                s_right -= rslo[rh & mask]
                rh += 1
        while s_left < 0 and u > -1.0:
            p = lpos[(lt - 1) & mask] + off_l if lt > lh else -1.0
            top -= s_left * (u - p)
            if s_left > s_right:
                rh -= 1
                rpos[rh & mask] = u - off_r
                rslo[rh & mask] = s_left - s_right
            u, s_right = p, s_left
            if lt > lh:
                lt -= 1
                s_left += lslo[lt & mask]
    return top


@functools.cache
def _solver():
    """:func:`_dp_rings` compiled by numba (cached on disk by numba), or :func:`_dynamic_programme`
    when numba is not installed; decided once per process."""
    try:
        import numba
    except ImportError:
        return _dynamic_programme
    return numba.njit(cache=True, nogil=True)(_dp_rings)


def smooth_calibration_error(f, y) -> float:
    """``smCE(f)`` of binary predictions ``f`` in [0, 1] against labels ``y`` in {0, 1}
    (label means in [0, 1] are accepted), exact (module docstring)."""
    f = np.asarray(f, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if f.size == 0 or f.shape != y.shape:
        raise ValueError(f"f and y must be non-empty and of equal length; got {f.shape} and {y.shape}")
    if not np.all((f >= 0) & (f <= 1)):
        raise ValueError("f must hold predictions in [0, 1] (no NaN)")
    if not np.all((y >= 0) & (y <= 1)):
        raise ValueError("y must hold labels in {0, 1} (or label means in [0, 1])")
    v, r = _support(f, y)
    return max(0.0, float(_solver()(v, r)))


def top_label_smce(probs, labels, *, is_probs: bool = True, validate: bool = True) -> float:
    """smCE of the top-label confidence against correctness (a fraction; the book prints
    percent). ``is_probs=False``: ``probs`` holds logits (softmax in float64)."""
    p = _b.as_probs(probs, "probs", validate) if is_probs else _probs(probs, where='smce')
    y = _b.as_labels(labels, p.shape[0], p.shape[1])
    conf, pred = _b.top_label(p)
    return smooth_calibration_error(conf, (pred == y).astype(np.float64))
