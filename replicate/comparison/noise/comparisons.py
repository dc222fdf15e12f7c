"""Comparisons of methods on our runs: is ``a`` lower (higher) than ``b`` (:func:`compare`),
is ``method`` the best of N (:func:`best_of`), as far as the runs' noise lets them tell."""
from __future__ import annotations

import math

import numpy as np

from ...claims import FAILS, HOLDS, INCONCLUSIVE, Outcome, inconclusive
from .. import board, stats
from .resampling import VECTORISED, _cells, check_metric, metric_label, paired_bootstrap, score
from .rule import (ALPHA, MIN_SEEDS, N_BOOT, N_BOOT_SLOW, POWER, Resolution, _alpha, _claimed, _count, decide,
                   test_size_needed)


def _paired(cells: dict, a: str, b: str):
    ra, rb = dict(_cells(cells, a)), dict(_cells(cells, b))
    if set(ra) != set(rb):
        raise ValueError(f"{a!r} and {b!r} must have runs at the same seeds; got {sorted(ra)} and {sorted(rb)}")
    seeds = sorted(ra)
    return seeds, [ra[s] for s in seeds], [rb[s] for s in seeds]


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def compare(cells: dict, a: str, b: str, metric: str = "ece", claimed: str = "lower", alpha: float = ALPHA,
            power: float = POWER, min_seeds: int = MIN_SEEDS, n_boot: int | None = None, seed: int = 0,
            labels: dict | None = None) -> Resolution:
    """Is ``metric`` of method ``a`` ``claimed`` ("lower" or "higher") than that of ``b``, as
    far as our runs can tell? ``cells`` maps ``(method, seed)`` to a
    :class:`replicate.comparison.board.Calibrated` run (:func:`calibrated`). With
    ``min_seeds`` seeds or more: the paired t-test over seeds (its interval at ``1 -
    alpha``); with fewer: :func:`paired_bootstrap` over the test examples (``n_boot``
    resamples; default :data:`N_BOOT` for the metrics recomputed vectorised, :data:`N_BOOT_SLOW`
    for the others, which are recomputed one resample at a time (smCE, AUROC, debiased ECE);
    resamples, seeded by ``seed``). The verdict is :func:`decide`'s; an undecided row
    says the seeds (:func:`stats.seeds_needed`) or test examples
    (:func:`test_size_needed`) that would resolve the observed difference with ``power``."""
    alpha, claimed = _alpha(alpha), _claimed(claimed)
    check_metric(metric)
    min_seeds = _count("min_seeds", min_seeds, 2)
    seeds, ca, cb = _paired(cells, a, b)
    name = (labels or {}).get
    la, lb = name(a, a), name(b, b)
    label = metric_label(metric)
    if len(seeds) >= min_seeds:
        va = np.array([score(c, metric) for c in ca])
        vb = np.array([score(c, metric) for c in cb])
        r = stats.paired_comparison(va, vb, 1 - alpha)
        d = va - vb
        sd = float(d.std(ddof=1))
        low, high = (r["low"], r["high"]) if math.isfinite(r["low"]) else (float(d.mean()), float(d.mean()))
        test = f"paired t-test over {len(seeds)} seeds, {100 * (1 - alpha):g} % interval"
        need = stats.seeds_needed(r["diff"], sd, power, alpha)
        needs = (f"~{need} seeds to resolve a difference this size" if need else
                 "no difference to resolve (more than 10,000 seeds would be needed)")
        p = f", p = {r['p']:.2g}" if math.isfinite(r["p"]) else ""
        details = {**r, "sd_diff": sd, "seeds_needed": need}
    else:
        if n_boot is None:
            n_boot = N_BOOT if metric in VECTORISED else N_BOOT_SLOW
        r = paired_bootstrap(ca, cb, metric, n_boot, seed, 1 - alpha)
        low, high = r["low"], r["high"]
        test = (f"paired bootstrap over {r['n_test']:,} test examples ({n_boot:,} resamples, the same for both), "
                f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}, {100 * (1 - alpha):g} % interval")
        need = test_size_needed(r["diff"], r["sd"], r["n_test"], alpha, power)
        needs = (f"~{need:,} test examples to resolve a difference this size (we have {r['n_test']:,}), or seeds "
                 f"to measure the training noise" if need else "no difference to resolve")
        p = ""
        details = {k: v for k, v in r.items() if k != "replicates"}
    outcome = decide(low, high, claimed, needs)
    text = (f"{label}: {la} − {lb} = {_fmt(r['diff'])} [{_fmt(low)}, {_fmt(high)}]{p} ({test})")
    return Resolution(r["diff"], low, high, test, needs if outcome.verdict == INCONCLUSIVE else "", outcome, text,
                      details)


def best_of(cells: dict, method: str, metric: str = "ece", among=None, n_boot: int = 200, seed: int = 0,
            level: float = 0.95, labels: dict | None = None, top: int = 1, **compare_kw) -> Resolution:
    """Is ``method`` the best of ``among`` (default every method of ``cells``) by ``metric``
    (lowest; highest for the AUROC), as far as our runs can tell? Decided on the bootstrap
    rank intervals of :func:`replicate.comparison.board.rank_intervals` (test examples and
    seeds resampled, the same draws for every method, ``n_boot`` resamples): ``holds`` when
    ``method``'s rank interval at ``level`` is [1, 1], ``fails`` when it excludes rank 1,
    ``inconclusive`` otherwise; the row says how ``method`` compares with its closest rival
    (:func:`compare`, keywords ``compare_kw``) and what would resolve that difference. With
    ``top`` = k the claim is "among the k best": ``holds`` when the interval lies within
    [1, k], ``fails`` when it lies wholly beyond k."""
    top = _count("top", top)
    board.check_metric(metric)
    methods = list(dict.fromkeys(m for m, _ in cells)) if among is None else list(dict.fromkeys(among))
    if method not in methods:
        raise ValueError(f"method {method!r} must be one of the methods compared: {', '.join(methods)}")
    if len(methods) < 2:
        raise ValueError(f"among must name at least two methods; got {methods}")
    sub = {(m, s, "none"): c for (m, s), c in cells.items() if m in methods}
    missing = [m for m in methods if not any(k[0] == m for k in sub)]
    if missing:
        raise ValueError(f"methods {missing} have no run in cells")
    ranks = board.rank_intervals(sub, metric, "none", n_boot=n_boot, seed=seed, level=level)
    row = ranks.set_index("method").loc[method]
    others = ranks[ranks.method != method]
    better = metric in board.HIGHER_IS_BETTER
    rival = others.sort_values("score", ascending=not better).iloc[min(top, len(others)) - 1].method
    pair = compare(cells, method, rival, metric, "higher" if better else "lower", labels=labels, seed=seed,
                   **compare_kw)
    needs = pair.needs or f"closest rival {(labels or {}).get(rival, rival)}: {pair.verdict} on its own"
    lo, hi = float(row.rank_low), float(row.rank_high)
    if hi <= top:
        outcome = Outcome(HOLDS)
    elif lo > top:
        outcome = Outcome(FAILS)
    else:
        outcome = inconclusive(needs)
    label = board.BOARD_METRICS[metric][0]
    name = (labels or {}).get
    text = (f"{label}: {name(method, method)} rank {row['rank']:g} of {len(methods)}, {100 * level:g} % bootstrap "
            f"rank interval [{lo:g}, {hi:g}] ({n_boot} resamples); closest: {pair.text}")
    return Resolution(float(row["rank"]), lo, hi, f"bootstrap rank interval, {n_boot} resamples",
                      needs if outcome.verdict == INCONCLUSIVE else "", outcome, text,
                      {"ranks": ranks, "rival": rival, "pair": pair})


