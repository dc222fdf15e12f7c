"""Is a difference between two methods real? Every pair of methods compared over seeds.

:func:`paired_matrix` runs :func:`replicate.comparison.stats.paired_comparison` (a paired
t-test over seeds, :data:`replicate.comparison.stats.PAIRED_TEST_ASSUMPTIONS`) on every pair
of methods of a seeds x methods table, adds the Benjamini-Hochberg adjusted p-value over all
the pairs (``scipy.stats.false_discovery_control``: with m pairs tested at 5 %, about 5 % of
m would come out "significant" by chance alone) and the number of seeds a paired t-test
would need to detect the observed mean difference, given the observed spread of the per-seed
differences, with 80 % power at the 5 % level (:func:`replicate.comparison.stats.seeds_needed`).
:func:`matrix` lays one column of it out as a methods x methods table.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats as _st

from . import stats

COLUMNS = ["a", "b", "diff", "sd_diff", "low", "high", "t", "p", "p_bh", "significant", "significant_bh",
           "seeds_needed", "n", "reason"]


def paired_matrix(values: pd.DataFrame, alpha: float = 0.05, power: float = 0.8, level: float = 0.95,
                  max_seeds: int = 10_000) -> pd.DataFrame:
    """Every pair ``(a, b)`` of the columns (methods) of ``values`` (rows: seeds; every
    method must have every seed): mean difference ``a - b`` over seeds, the standard
    deviation of the per-seed differences, its t interval at ``level``, the paired t-test's
    ``t`` and ``p``, ``p_bh`` (Benjamini-Hochberg over the pairs with a p-value),
    ``significant`` (p < alpha) and ``significant_bh`` (p_bh < alpha), and ``seeds_needed``:
    the smallest number of seeds with which the test would detect a mean difference this
    large with probability ``power`` (NaN: more than ``max_seeds``, or no difference). One
    row per unordered pair, in column order."""
    if not isinstance(values, pd.DataFrame) or values.shape[1] < 2:
        raise ValueError("values must be a seeds x methods DataFrame with at least two methods")
    if values.isna().any().any():
        raise ValueError(f"values must hold every method at every seed; missing: "
                         f"{[c for c in values.columns if values[c].isna().any()]}")
    rows = []
    for a, b in itertools.combinations(values.columns, 2):
        r = stats.paired_comparison(values[a].to_numpy(), values[b].to_numpy(), level)
        d = values[a].to_numpy() - values[b].to_numpy()
        sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
        need = stats.seeds_needed(r["diff"], sd, power, alpha, max_seeds) if math.isfinite(sd) else None
        rows.append({"a": a, "b": b, "diff": r["diff"], "sd_diff": sd, "low": r["low"], "high": r["high"],
                     "t": r["t"], "p": r["p"], "n": r["n"], "reason": r["reason"],
                     "seeds_needed": math.nan if need is None else float(need)})
    out = pd.DataFrame(rows)
    tested = out["p"].notna()
    out["p_bh"] = math.nan
    if tested.any():
        out.loc[tested, "p_bh"] = _st.false_discovery_control(out.loc[tested, "p"].to_numpy(), method="bh")
    out["significant"] = out["p"] < alpha
    out["significant_bh"] = out["p_bh"] < alpha
    out.attrs.update(alpha=alpha, power=power, test=stats.PAIRED_TEST_ASSUMPTIONS, n_seeds=len(values))
    return out[COLUMNS]


def matrix(pairs: pd.DataFrame, column: str = "diff", order=None) -> pd.DataFrame:
    """One column of :func:`paired_matrix` as a square methods x methods table: cell (a, b)
    holds the value for ``a - b`` (``diff`` and ``t`` change sign across the diagonal; the other
    columns, e.g. ``p`` or ``seeds_needed``, are symmetric); the diagonal is NaN. ``order``:
    the methods' order."""
    if column not in pairs.columns:
        raise ValueError(f"column must be one of {', '.join(pairs.columns)}; got {column!r}")
    methods = list(order) if order is not None else list(dict.fromkeys([*pairs.a, *pairs.b]))
    out = pd.DataFrame(np.nan, index=methods, columns=methods, dtype=object if pairs[column].dtype == bool
                       else float)
    antisymmetric = column in ("diff", "t")
    for r in pairs.itertuples(index=False):
        v = getattr(r, column)
        if r.a in out.index and r.b in out.index:
            out.loc[r.a, r.b] = v
            out.loc[r.b, r.a] = -v if antisymmetric and isinstance(v, float) else v
    return out


def summary(pairs: pd.DataFrame) -> dict:
    """Counts for the prose: pairs, pairs tested, significant at alpha (raw and after
    Benjamini-Hochberg), and the median of ``seeds_needed`` over the pairs not significant
    at alpha (NaN when none), with how many of those would need more than the largest value."""
    tested = pairs[pairs.p.notna()]
    not_sig = tested[~tested.significant]
    need = not_sig.seeds_needed.dropna()
    return {"pairs": int(len(pairs)), "tested": int(len(tested)), "significant": int(tested.significant.sum()),
            "significant_bh": int(tested.significant_bh.sum()),
            "median_seeds_needed": float(need.median()) if len(need) else math.nan,
            "beyond_max": int(not_sig.seeds_needed.isna().sum())}
