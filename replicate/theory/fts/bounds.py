"""Focal calibration versus temperature scaling (Komisarenko & Kull 2024, Sec. 3.2-3.3).

Binary case in logit space. With ``q = sigmoid(s)`` and ``h(q) = -q log q / (1-q)``
(increasing from 0 to 1), the binary focal calibration map of Prop. 2 is exactly

    logit FC(s) = (gamma + 1) s - C(s),   C(s) = log(1 + gamma h(sigmoid(s))) - log(1 + gamma h(sigmoid(-s))),

which follows from ``w(q) = q (1-q)^(-gamma) / (1 + gamma h(q))`` (see :mod:`.calibration_map`). ``C`` is
odd, ``C(s) -> log(1+gamma)`` as ``s -> inf`` and ``C'(0) = gamma (2 log 2 - 1) / (1 + gamma log 2)``.
Prop. 3 bounds ``C(s)/s`` between 0 and ``log(gamma+1)/2`` for ``s > 0``; a temperature map
``sigmoid(s/T)`` has logit ``s/T``, so the bounds are ``T = 1/(gamma+1)`` (steep) and
``T = 1/(gamma + 1 - log(gamma+1)/2)`` (flat). Everything in logit space is free of the
saturation of probabilities at 1, which is why float64 suffices here; :func:`prop3_check`
re-evaluates the printed inequalities in mpmath.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import softmax

from ... import checks
from .calibration_map import focal_calibration_map

__all__ = [
    "binary_logit_correction", "focal_calibration_logit", "slope_correction_at_zero",
    "tightest_temperature_bounds", "paper_grid_temperature_bounds", "prop3_check", "prop3_logit_check",
    "logit_grid", "canonical_logits", "closest_temperature", "temperature_fits", "linear_fit",
]


def _h_of_logit(s):
    """``h(sigmoid(s))`` computed from logs (no 1 - q cancellation)."""
    logq = -np.logaddexp(0.0, -s)
    logc = -np.logaddexp(0.0, s)
    c = np.exp(logc)
    return np.where(c > 0, -np.exp(logq) * logq / np.where(c > 0, c, 1.0), 1.0)


def binary_logit_correction(s, gamma):
    """``C(s) = (gamma+1) s - logit FC(s)`` for the binary focal calibration map (Prop. 2)."""
    g = checks.gamma(gamma, lo=-1.0, strict=True)
    s = np.asarray(s, dtype=np.float64)
    return np.log1p(g * _h_of_logit(s)) - np.log1p(g * _h_of_logit(-s))


def focal_calibration_logit(s, gamma):
    """Logit of the binary focal calibration map applied to ``sigmoid(s)`` (Prop. 3's FC)."""
    g = checks.gamma(gamma, lo=-1.0, strict=True)
    return (g + 1.0) * np.asarray(s, dtype=np.float64) - binary_logit_correction(s, g)


def slope_correction_at_zero(gamma) -> float:
    """``C'(0) = gamma (2 log 2 - 1) / (1 + gamma log 2)``: ``logit FC(s) ~ (gamma+1-C'(0)) s`` near 0."""
    g = checks.gamma(gamma, lo=-1.0, strict=True)
    return g * (2.0 * math.log(2.0) - 1.0) / (1.0 + g * math.log(2.0))


def tightest_temperature_bounds(gamma, *, s_max: float = 20.0, n: int = 20001):
    """Tightest temperature bounds of FC over logits in ``(-s_max, s_max)``, exactly.

    Returns ``(T_steep, T_flat)``: the largest ``T`` with ``sigmoid(s/T)`` above FC for
    ``s > 0`` (below for ``s < 0``) and the smallest ``T`` with it below, computed as
    ``1/(gamma + 1 - min C(s)/s)`` and ``1/(gamma + 1 - sup C(s)/s)`` on a grid of ``n``
    logits in (0, s_max] together with the limit ``C'(0)``.
    """
    g = checks.gamma(gamma)
    s = np.linspace(0.0, s_max, n)[1:]
    ratio = binary_logit_correction(s, g) / s
    c0 = slope_correction_at_zero(g)
    return 1.0 / (g + 1.0 - min(ratio.min(), c0)), 1.0 / (g + 1.0 - max(ratio.max(), c0))


def paper_grid_temperature_bounds(gamma, *, s_max: float = 20.0, s_step: float = 1e-3,
                                  t_step: float = 1e-3, dtype=np.float64):
    """The paper's experimental search (Sec. 3.2), emulated in probability space.

    Logits ``s`` on ``(-s_max, s_max)`` with step ``s_step``; temperatures on
    ``t_step, 2 t_step, ...``; a temperature map bounds FC when ``sigmoid(s/T) >= FC(s)``
    for all ``s >= 0`` and ``<=`` for ``s < 0`` (steep side), or the reverse (flat side),
    with both sides evaluated in ``dtype`` (so probabilities saturate at 1 as in plain
    floating point). Returns ``(largest steep T, smallest flat T)``, found by bisection on
    the temperature grid (the bounding property is monotone in ``T``).
    """
    g = checks.gamma(gamma)
    k = int(round(s_max / s_step))
    s = (np.arange(-k + 1, k) * s_step).astype(dtype)
    fc = focal_calibration_map(np.stack([1 / (1 + np.exp(s.astype(np.float64))),
                                         1 / (1 + np.exp(-s.astype(np.float64)))], -1), g)
    fc = fc[:, 1].astype(dtype)
    pos = s >= 0

    def ts(i):
        with np.errstate(over="ignore"):
            return (1 / (1 + np.exp(-s / dtype(i * t_step)))).astype(dtype)

    def steep_ok(i):
        t = ts(i)
        return bool(np.all(t[pos] >= fc[pos]) and np.all(t[~pos] <= fc[~pos]))

    def flat_ok(i):
        t = ts(i)
        return bool(np.all(t[pos] <= fc[pos]) and np.all(t[~pos] >= fc[~pos]))

    def boundary(ok, lo, hi):
        # ok(lo) differs from ok(hi); return the last index where ok(lo) still holds.
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ok(mid) == ok(lo) else (lo, mid)
        return lo, hi

    n_t = int(round(2.0 / t_step))
    steep = boundary(steep_ok, 1, n_t)[0]
    flat = boundary(flat_ok, 1, n_t)[1]
    return steep * t_step, flat * t_step


def prop3_check(gamma, s_values, *, dps: int | None = None):
    """Prop. 3 in mpmath: which reading of the printed inequality holds.

    ``dps`` (decimal digits) defaults to ``30 + (gamma+1) max|s| / log(10)``, enough that
    ``1 - sigmoid((gamma+1) s)`` is still resolved at the largest logit.

    Readings, for ``s != 0`` (at ``s = 0`` all maps equal 1/2, so the printed strict
    inequality for ``s >= 0`` cannot hold there):

    - ``"as_printed"``: exponents ``-s/(gamma+1)`` and ``-s/(gamma+1-log(gamma+1)/2)``,
      ``A > FC > B`` for ``s < 0`` and ``A < FC < B`` for ``s > 0``;
    - ``"temperatures_printed_order"``: the stated temperatures, ``sigmoid(s/T)``, i.e.
      exponents ``-(gamma+1) s`` and ``-(gamma+1-log(gamma+1)/2) s``, same order;
    - ``"temperatures_reversed"``: the stated temperatures with both inequalities reversed.

    Returns ``{reading: (violations, first violating s or None, (A, FC, B) there)}``.
    """
    import mpmath as mp

    g = checks.gamma(gamma)
    s_values = np.asarray(s_values, dtype=np.float64).ravel()
    if dps is None:
        dps = 30 + int((g + 1.0) * float(np.abs(s_values).max(initial=0.0)) / math.log(10.0))
    with mp.workdps(dps):
        gm = mp.mpf(g)
        k_steep = gm + 1
        k_flat = gm + 1 - mp.log(gm + 1) / 2

        def w(q):
            return q / ((1 - q) ** gm * (1 - gm * q * mp.log(q) / (1 - q)))

        def sig(x):
            return 1 / (1 + mp.exp(-x))

        out = {}
        rows = []
        for sv in s_values:
            if sv == 0.0:
                continue
            s = mp.mpf(float(sv))
            q = sig(s)
            fc = w(q) / (w(q) + w(1 - q))
            rows.append((float(sv), s, fc))
        readings = {
            "as_printed": (lambda s: sig(s / k_steep), lambda s: sig(s / k_flat), False),
            "temperatures_printed_order": (lambda s: sig(k_steep * s),
                                           lambda s: sig(k_flat * s), False),
            "temperatures_reversed": (lambda s: sig(k_steep * s), lambda s: sig(k_flat * s), True),
        }
        for name, (fa, fb, rev) in readings.items():
            bad, first = 0, (None, None)
            for sv, s, fc in rows:
                a, b = fa(s), fb(s)
                holds = (a > fc > b) if (sv < 0) != rev else (a < fc < b)
                if not holds:
                    bad += 1
                    if first[0] is None:
                        first = (sv, (float(a), float(fc), float(b)))
            out[name] = (bad, first[0], first[1])
    return out


def prop3_logit_check(gammas, s_values) -> dict:
    """Prop. 3 on a dense grid of gamma and logits, in logit space (float64).

    Sigmoid is increasing, so each printed inequality between probabilities is the same
    inequality between logits: ``logit FC(s) = (gamma+1) s - C(s)`` (exact, see
    :func:`binary_logit_correction`) against ``s / k`` (the exponent as printed) or ``k s``
    (the stated temperatures ``T = 1/k``), ``k`` in ``{gamma+1, gamma+1-log(gamma+1)/2}``.
    Returns the number of (gamma, s != 0) points violating each reading (as in
    :func:`prop3_check`) and, for the corrected reading, the smallest margins
    ``C(s)/s`` and ``log(gamma+1)/2 - C(s)/s`` over ``s > 0`` (both must be positive; ``C``
    is odd, so ``s < 0`` mirrors them).
    """
    g = np.asarray(gammas, dtype=np.float64)[:, None]
    s = np.asarray(s_values, dtype=np.float64)
    s = s[s != 0][None, :]
    if np.any(g <= 0):
        raise ValueError("gammas must be > 0 for prop3_logit_check")
    k_steep, k_flat = g + 1.0, g + 1.0 - np.log1p(g) / 2.0
    c = np.log1p(g * _h_of_logit(s)) - np.log1p(g * _h_of_logit(-s))
    fc = (g + 1.0) * s - c
    neg = s < 0

    def count(a, b, reverse=False):
        lower = neg != reverse                      # where the printed order reads a > FC > b
        holds = np.where(lower, (a > fc) & (fc > b), (a < fc) & (fc < b))
        return int((~holds).sum())

    ratio = c / s
    pos = np.broadcast_to(s > 0, ratio.shape)
    return {"points": int(fc.size),
            "as_printed": count(s / k_steep, s / k_flat),
            "temperatures_printed_order": count(k_steep * s, k_flat * s),
            "temperatures_reversed": count(k_steep * s, k_flat * s, reverse=True),
            "margin_low": float(ratio[pos].min()),
            "margin_high": float((np.broadcast_to(np.log1p(g) / 2.0, ratio.shape) - ratio)[pos].min())}


def logit_grid(n_classes: int, step: float, lim: float = 5.0):
    """Logit vectors with the last logit 0 and the others on ``[-lim, lim]`` with ``step``."""
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    ax = np.arange(-lim, lim + step / 2, step)
    mesh = np.meshgrid(*([ax] * (n_classes - 1)), indexing="ij")
    return np.stack([m.ravel() for m in mesh] + [np.zeros(mesh[0].size)], axis=-1)


def canonical_logits(logits):
    """One row per class of logit vectors equal up to a permutation and a common shift
    (sorted, maximum 0): the focal map and temperature scaling commute with both."""
    z = np.asarray(logits, dtype=np.float64)
    return np.unique(np.sort(z - z.max(-1, keepdims=True), axis=-1), axis=0)


def closest_temperature(gamma, logits, *, canonical: bool = False):
    """Temperature whose map is closest to focal calibration in the max-norm (Sec. 3.2/3.3).

    Minimises ``max |FC(softmax(z)) - softmax(z / T)|`` over the logit vectors ``z``
    (rows of ``logits``) and classes: a 10-point scan over ``1/T`` in
    [min(1, gamma + 1) / 2, max(1, gamma + 1) + 1/2] (the focal map's logit slopes lie
    between 1 and gamma + 1),
    then a bounded scalar refinement between the neighbours of the best scan point. The
    refinement runs on the rows that are worst near the scan optimum and is repeated with
    more rows until the maximum over *all* rows at the result equals the subset's, so the
    answer is that of the full grid. Logit vectors that are equal up to a permutation and a
    common shift give the same deviation and are evaluated once (:func:`canonical_logits`;
    ``canonical=True`` says ``logits`` already are). Returns ``(T, max deviation)``.
    """
    g = checks.gamma(gamma, lo=-1.0, strict=True)
    z = np.asarray(logits, dtype=np.float64)
    z = z if canonical else canonical_logits(z)
    fc = focal_calibration_map(softmax(z, axis=-1), g)

    def rowdev(k, rows=slice(None)):
        e = np.exp(k * z[rows])
        return np.abs(fc[rows] - e / e.sum(-1, keepdims=True)).max(-1)

    ks = np.linspace(min(1.0, g + 1.0) / 2, max(1.0, g + 1.0) + 0.5, 10)
    scan = [rowdev(k) for k in ks]
    i = int(np.argmin([d.max() for d in scan]))
    lo, hi = ks[max(i - 1, 0)], ks[min(i + 1, len(ks) - 1)]
    n_keep = min(len(z), 512)
    worst = np.max([scan[j] for j in {max(i - 1, 0), i, min(i + 1, len(ks) - 1)}], axis=0)
    rows = np.argsort(worst)[-n_keep:]
    while True:
        r = minimize_scalar(lambda k: float(rowdev(k, rows).max()), bounds=(lo, hi),
                            method="bounded", options={"xatol": 1e-7})
        full = rowdev(float(r.x))
        if full.max() <= r.fun or len(rows) == len(z):
            return 1.0 / float(r.x), float(full.max())
        rows = np.union1d(rows, np.argsort(full)[-n_keep:])


def temperature_fits(gammas, logits):
    """:func:`closest_temperature` for each gamma: arrays ``(T, max deviation)``."""
    z = canonical_logits(logits)
    res = np.array([closest_temperature(g, z, canonical=True) for g in np.asarray(gammas, float)])
    return res[:, 0], res[:, 1]


def linear_fit(gammas, inv_t):
    """Least-squares line ``1/T ~ slope gamma + intercept``; returns slope, intercept, max residual."""
    x, y = np.asarray(gammas, float), np.asarray(inv_t, float)
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept), float(np.abs(slope * x + intercept - y).max())
