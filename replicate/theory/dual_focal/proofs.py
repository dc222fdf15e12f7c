"""The printed steps of Tao et al.'s proofs (2023, App. A for Theorem 1, App. B for Lemma 1),
each against its derivation by sympy.

Notation of the appendices: ``b = 1 - v + C``, ``phi(v) = b^g - g b^(g-1) v log v``
(``i != j``), ``h(v) = v / phi(v)`` (Eq. 14), ``u(v) = b^2 + 2 g v b + g v^2 log v`` (Eq. 19)
and ``s(v) = 2(v - 1 - C) + g v log v - (1 + C) log v`` (Eq. 25-26). For every printed
expression :func:`appendix_checks` derives the same quantity symbolically (a derivative, a
limit or a value) and compares the two at random points ``(v, gamma, C)`` with 50
significant digits: a difference that is not identically zero shows there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import sympy as sp

__all__ = ["Step", "STEPS", "appendix_checks", "as_function"]

v, g, C = sp.symbols("v gamma C", positive=True)
_b = 1 - v + C
_PHI = _b ** g - g * _b ** (g - 1) * v * sp.log(v)
_H_J = v / (1 - g * v * sp.log(v))                          # Eq. 14, i = j
_U = _b ** 2 + 2 * g * v * _b + g * v ** 2 * sp.log(v)      # Eq. 19
_S = 2 * (v - 1 - C) + g * v * sp.log(v) - (1 + C) * sp.log(v)
_DU = sp.diff(_U, v)


@dataclass(frozen=True)
class Step:
    """One printed expression: ``printed`` should equal ``derived``; ``correction`` is the
    expression this module derives when they differ (stated, and checked the same way)."""

    key: str
    where: str
    statement: str
    printed: sp.Expr
    derived: sp.Expr
    correction: sp.Expr | None = None
    correction_text: str = ""


STEPS = (
    Step("eq16", "App. A, Eq. 16", "dh/dv = (1 + γv) / (1 − γ v log v)² for the class j",
         (1 + g * v) / (1 - g * v * sp.log(v)) ** 2, sp.diff(_H_J, v)),
    Step("eq17", "App. A, Eq. 17", "dh/dv = [b^γ + 2γv b^(γ−1) − (γ−1)γ v² b^(γ−2) log v] / φ² for i ≠ j",
         (_b ** g + 2 * g * v * _b ** (g - 1) - (g - 1) * g * v ** 2 * _b ** (g - 2) * sp.log(v)) / _PHI ** 2,
         sp.diff(v / _PHI, v)),
    Step("eq18", "App. A, Eq. 18", "the numerator t(v) = b^(γ−2) [b² + 2γvb − γ²v² log v + γv² log v]",
         _b ** (g - 2) * (_b ** 2 + 2 * g * v * _b - g ** 2 * v ** 2 * sp.log(v) + g * v ** 2 * sp.log(v)),
         _b ** g + 2 * g * v * _b ** (g - 1) - (g - 1) * g * v ** 2 * _b ** (g - 2) * sp.log(v)),
    Step("eq20", "App. A, Eq. 20", "du/dv = 2v − 2 − 2C + 2γ + 2γC − 3γv + 2γ v log v",
         2 * v - 2 - 2 * C + 2 * g + 2 * g * C - 3 * g * v + 2 * g * v * sp.log(v), _DU),
    Step("eq21_v0", "App. A, Eq. 21", "du/dv at v = 0 equals 2(γ − 1) + 2C(γ − 1)",
         2 * (g - 1) + 2 * C * (g - 1), sp.limit(_DU, v, 0, "+")),
    Step("eq21_v1", "App. A, Eq. 21", "du/dv at v = 1 equals −γ",
         -g + 0 * v, _DU.subs(v, 1), -g - 2 * C * (1 - g), "du/dv at v = 1 is −γ − 2C(1 − γ)"),
    Step("eq21_d2", "App. A, Eq. 21", "d²u/dv² = 2 − γ + 2γ log v",
         2 - g + 2 * g * sp.log(v), sp.diff(_U, v, 2)),
    Step("eq21_d3", "App. A, Eq. 21", "d³u/dv³ = 2γ / v", 2 * g / v, sp.diff(_U, v, 3)),
    Step("eq14_j", "App. A, Eq. 14 vs Lemma 1", "h(v) = v / (1 − γ v log v) for the class j, "
         "i.e. φ(v_j) = 1 − γ v log v, agrees with φ(v_j) = 1 (Lemma 1, Sec. 4.2)",
         _H_J, v + 0 * g),
    Step("eq24_25", "App. B, Eqs. 24-25", "dφ/dv = γ b^(γ−2) [−2b + (γ−1) v log v − b log v] "
         "= γ b^(γ−2) s(v)",
         g * _b ** (g - 2) * (-2 * _b + (g - 1) * v * sp.log(v) - _b * sp.log(v)), sp.diff(_PHI, v)),
    Step("eq26", "App. B, Eq. 26", "ds/dv = 2 + γ log v + γ − (1+C)/v, d²s/dv² = γ/v + (1+C)/v², "
         "s(1) = −2C, ds/dv(1) = 1 + γ − C",
         sp.Matrix([2 + g * sp.log(v) + g - (1 + C) / v, g / v + (1 + C) / v ** 2, -2 * C + 0 * v,
                    1 + g - C + 0 * v]),
         sp.Matrix([sp.diff(_S, v), sp.diff(_S, v, 2), _S.subs(v, 1), sp.diff(_S, v).subs(v, 1)])),
)


def _points(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return [{v: sp.Rational(int(a), 1000), g: sp.Rational(int(b), 100), C: sp.Rational(int(c), 1000)}
            for a, b, c in zip(rng.integers(1, 1000, n), rng.integers(5, 500, n), rng.integers(0, 900, n))]


def _largest_gap(a, b, points) -> float:
    gaps = []
    for p in points:
        d = sp.N((a - b).subs(p), 50)
        gaps.append(max(abs(float(x)) for x in (d if isinstance(d, sp.MatrixBase) else [d])))
    return max(gaps)


def appendix_checks(*, n_points: int = 8, seed: int = 0) -> pd.DataFrame:
    """Every printed step of :data:`STEPS` against sympy, at ``n_points`` random points
    ``v`` in (0, 1), ``gamma`` in (0.05, 5), ``C`` in [0, 0.9). Columns: the step, the
    largest ``|printed - derived|``, whether they agree (below ``1e-30``), and, where a
    correction is stated, its largest gap and whether it agrees."""
    pts = _points(int(n_points), seed)
    rows = []
    for s in STEPS:
        gap = _largest_gap(s.printed, s.derived, pts)
        row = {"key": s.key, "where": s.where, "statement": s.statement, "largest gap": gap,
               "agrees": gap < 1e-30, "correction": s.correction_text, "correction gap": float("nan"),
               "correction agrees": False}
        if s.correction is not None:
            row["correction gap"] = _largest_gap(s.correction, s.derived, pts)
            row["correction agrees"] = row["correction gap"] < 1e-30
        rows.append(row)
    return pd.DataFrame(rows)


def as_function(key: str, which: str = "correction"):
    """The ``printed``, ``derived`` or ``correction`` expression of step ``key`` as a NumPy
    function of ``(v, gamma, C)``."""
    step = {s.key: s for s in STEPS}.get(key)
    if step is None:
        raise ValueError(f"key must be one of {', '.join(s.key for s in STEPS)}; got {key!r}")
    if which not in ("printed", "derived", "correction") or getattr(step, which) is None:
        raise ValueError(f"which must be 'printed', 'derived' or (where stated) 'correction'; got {which!r}")
    return sp.lambdify((v, g, C), getattr(step, which), "numpy")
