"""Statistics that say whether a difference between methods is real.

Used by the leaderboard (and any chapter with several seeds):

- :func:`seed_interval` -- mean, sample standard deviation and a t interval over seeds, cut
  to the range the quantity can take (:func:`metric_range`);
- :func:`paired_comparison` -- a paired t-test over seeds (the same seeds, hence the same
  initialisation and data order, for both methods) with its assumptions spelled out;
- :func:`seeds_needed` -- how many seeds a paired t-test needs to detect a difference of a
  given size with given power (noncentral t, exact);
- :func:`bootstrap_ranks` -- ranks of methods under a bootstrap that resamples test
  samples (the same resample for every method) and seeds, and intervals for each rank;
- :func:`kendall_tau` -- rank agreement between two orderings (tau-b), with a bootstrap
  interval when replicate orderings are given.

scipy provides the distributions; nothing here is specific to a paper.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as _st

from ..checks import positive_int

PAIRED_TEST_ASSUMPTIONS = (
    "paired t-test over seeds: both methods trained with the same seeds (same initialisation and data order), "
    "the per-seed differences independent and roughly normal; with few seeds the test has little power, and a "
    "p-value above 0.05 means 'not shown', not 'equal'")


def _vector(values, name: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be a non-empty sequence of finite numbers; got {values!r}")
    return v


def _level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1); got {level!r}")
    return float(level)


#: The range each metric of the tables can take (percent scales; NLL and Brier score x100):
#: a t interval of a metric's mean is cut to it (:func:`seed_interval`, ``bounds``).
METRIC_RANGE = {"error": (0.0, 100.0), "accuracy": (0.0, 100.0), "auroc": (0.0, 100.0), "nll": (0.0, math.inf),
                "brier": (0.0, 200.0), "T": (0.0, math.inf)}
#: The range of every other metric (the ECE family, MCE, smooth ECE: percent, never negative).
PERCENT_RANGE = (0.0, 100.0)


def metric_range(metric: str) -> tuple[float, float]:
    """The range ``metric`` can take (:data:`METRIC_RANGE`, else :data:`PERCENT_RANGE`)."""
    return METRIC_RANGE.get(metric, PERCENT_RANGE)


def seed_interval(values, level: float = 0.95, bounds: tuple[float, float] | None = None) -> dict:
    """``{"mean", "sd", "n", "low", "high", "cut"}``: the mean over seeds with a Student-t
    interval at ``level`` (``low``/``high`` NaN with one seed; ``sd`` the sample standard
    deviation). ``bounds`` (low, high): the range the quantity can take (e.g. ``(0, 100)`` for
    an ECE in percent, :func:`metric_range`); the t interval is cut to it, and ``cut`` names
    the ends that were cut ("" when none). A t interval is symmetric about the mean, so with
    few seeds that of a small non-negative quantity reaches below 0; the mean lies in the
    range, so the cut interval covers it whenever the t interval does (the same coverage).

    Example
    -------
    >>> r = seed_interval([0.2, 0.3, 1.4], bounds=(0, 100))
    >>> r["low"], r["cut"]
    (0.0, 'low')
    """
    v, level = _vector(values, "values"), _level(level)
    n, mean = v.size, float(v.mean())
    if n < 2:
        return {"mean": mean, "sd": math.nan, "n": n, "low": math.nan, "high": math.nan, "cut": ""}
    sd = float(v.std(ddof=1))
    half = _st.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    lo, hi = bounds if bounds is not None else (-math.inf, math.inf)
    if not lo <= hi:
        raise ValueError(f"bounds must be (low, high) with low <= high; got {bounds!r}")
    cut = " and ".join(end for end, out in (("low", low < lo), ("high", high > hi)) if out)
    return {"mean": mean, "sd": sd, "n": n, "low": max(low, lo), "high": min(high, hi), "cut": cut}


def paired_comparison(a, b, level: float = 0.95) -> dict:
    """Paired t-test of ``a - b`` over seeds (same order of seeds in both): mean difference,
    its t interval at ``level``, t statistic, two-sided p-value, number of seeds and the
    test's assumptions (:data:`PAIRED_TEST_ASSUMPTIONS`). With fewer than two seeds, or
    identical differences (sd 0), the test is undefined: NaN p-value and a reason."""
    a, b = _vector(a, "a"), _vector(b, "b")
    if a.size != b.size:
        raise ValueError(f"a and b must hold one value per seed, the same seeds; got {a.size} and {b.size}")
    d = a - b
    out = {"diff": float(d.mean()), "n": int(d.size), "test": "paired t-test (scipy.stats.ttest_rel)",
           "assumptions": PAIRED_TEST_ASSUMPTIONS, "t": math.nan, "p": math.nan, "low": math.nan,
           "high": math.nan, "reason": ""}
    if d.size < 2:
        out["reason"] = "one seed: no test"
        return out
    if np.all(d == d[0]):
        out["reason"] = "the same difference on every seed: no spread to test against"
        return out
    res = _st.ttest_rel(a, b)
    ci = seed_interval(d, level)
    out.update(t=float(res.statistic), p=float(res.pvalue), low=ci["low"], high=ci["high"])
    return out


def paired_power(n: int, effect: float, alpha: float = 0.05) -> float:
    """Power of a two-sided paired t-test with ``n`` pairs at standardised effect
    ``effect`` = mean difference / sd of the differences (noncentral t distribution)."""
    if n < 2:
        return math.nan
    df, crit = n - 1, _st.t.ppf(1 - alpha / 2, n - 1)
    nc = abs(effect) * math.sqrt(n)
    return float(_st.nct.sf(crit, df, nc) + _st.nct.cdf(-crit, df, nc))


def seeds_needed(diff: float, sd_diff: float, power: float = 0.8, alpha: float = 0.05, max_n: int = 10_000):
    """The smallest number of seeds with which a two-sided paired t-test at ``alpha`` detects
    a mean difference ``diff`` when the per-seed differences have standard deviation
    ``sd_diff``, with probability ``power``. None when ``diff`` is 0 or more than ``max_n``
    seeds would be needed; 2 when the spread is 0 (any test with 2 seeds sees it)."""
    for name, v in (("diff", diff), ("sd_diff", sd_diff)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number; got {v!r}")
    if sd_diff < 0:
        raise ValueError(f"sd_diff must be >= 0; got {sd_diff!r}")
    _level(power)
    if diff == 0:
        return None
    if sd_diff == 0:
        return 2
    effect = diff / sd_diff
    lo, hi = 1, 2                  # power grows with n: double until it is enough, then bisect
    while not paired_power(min(hi, max_n), effect, alpha) >= power:
        if hi >= max_n:
            return None
        lo, hi = hi, 2 * hi
    hi = min(hi, max_n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if paired_power(mid, effect, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def _rank(values: np.ndarray) -> np.ndarray:
    """Ranks 1..m of the columns of each row (lower value = better = rank 1; ties averaged)."""
    return np.apply_along_axis(_st.rankdata, -1, values)


def bootstrap_ranks(scores, n_boot: int = 200, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Ranks of methods with bootstrap intervals.

    ``scores`` is a callable ``score(method, seed, idx) -> float`` (the metric of one run on
    the test samples ``idx``, lower is better) together with the methods, seeds and test
    size as ``(score, methods, seeds, n_test)``. Each replicate resamples the test samples
    with replacement (the same indices for every method: they are scored on the same test
    set) and the seeds with replacement (the same seeds for every method), averages each
    method's score over the drawn seeds and ranks the methods. Returns one row per method:
    the rank of the point estimate (all samples, all seeds), the mean rank over replicates
    and the ``level`` interval of its rank, with the replicate ranks in ``attrs["ranks"]``
    (replicates x methods) for :func:`kendall_tau` intervals.
    """
    score, methods, seeds, n_test = scores
    methods, seeds = list(methods), list(seeds)
    positive_int("n_boot", n_boot)
    level = _level(level)
    rng = np.random.default_rng(seed)
    every = np.arange(n_test)
    point = np.array([np.mean([score(m, s, every) for s in seeds]) for m in methods])
    reps = np.empty((n_boot, len(methods)))
    for b in range(n_boot):
        idx = rng.integers(0, n_test, n_test)
        drawn = [seeds[i] for i in rng.integers(0, len(seeds), len(seeds))]
        reps[b] = [np.mean([score(m, s, idx) for s in drawn]) for m in methods]
    ranks = _rank(reps)
    lo, hi = np.quantile(ranks, [(1 - level) / 2, (1 + level) / 2], axis=0)
    out = pd.DataFrame({"method": methods, "score": point, "rank": _rank(point), "mean_rank": ranks.mean(0),
                        "rank_low": lo, "rank_high": hi})
    out.attrs["ranks"] = ranks
    out.attrs["level"] = level
    return out


def kendall_tau(a, b, replicates=None, level: float = 0.95) -> dict:
    """Kendall's tau-b between two orderings of the same items (values or ranks; lower =
    better in both), its p-value (scipy), and, when ``replicates`` (rows of bootstrap
    values for ``a``, e.g. ``bootstrap_ranks(...).attrs["ranks"]``) are given, the
    ``level`` interval of tau over them. Fewer than 3 items: NaN with a reason."""
    a, b = _vector(a, "a"), _vector(b, "b")
    if a.size != b.size:
        raise ValueError(f"a and b must rank the same items; got {a.size} and {b.size}")
    out = {"tau": math.nan, "p": math.nan, "n": int(a.size), "low": math.nan, "high": math.nan, "reason": ""}
    if a.size < 3:
        out["reason"] = f"only {a.size} shared methods"
        return out
    res = _st.kendalltau(a, b)
    out.update(tau=float(res.statistic), p=float(res.pvalue))
    if replicates is not None:
        taus = np.array([_st.kendalltau(r, b).statistic for r in np.asarray(replicates, dtype=np.float64)])
        taus = taus[np.isfinite(taus)]
        if taus.size:
            out["low"], out["high"] = (float(x) for x in np.quantile(taus, [(1 - level) / 2, (1 + level) / 2]))
    return out
