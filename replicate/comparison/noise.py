"""Do our runs resolve a comparison? ``holds``, ``fails`` or ``inconclusive`` for a claim on our runs.

A comparative claim ("A has a lower ECE than B", "A is the best of N", "the optimal T is
close to 1") is decided on our runs by one rule, whatever the chapter:

1. the quantity the claim is about gets an interval at level ``1 - alpha`` (95 %) that
   holds the runs' noise:

   - a difference ``a - b`` between two methods, with at least :data:`MIN_SEEDS` seeds:
     the paired t interval over seeds (:func:`replicate.comparison.stats.paired_comparison`,
     the test the leaderboard uses; both methods trained with the same seeds);
   - with fewer seeds: a **paired bootstrap over the test examples**
     (:func:`paired_bootstrap`): each resample draws ``n`` test indices with replacement,
     the same indices for both methods (and for every seed: they share one test set), the
     metric is recomputed on the resample (ECE: the samples re-binned and the bins
     re-summed, vectorised over resamples), and the percentile interval of ``a - b`` is
     taken. It holds the noise of the finite test set, not the noise of training (another
     seed trains another model): with one seed nothing can measure that;
   - "best of N": the bootstrap rank intervals of the leaderboard
     (:func:`replicate.comparison.board.rank_intervals`: test examples, and seeds when
     there are several, resampled with the same draws for every method);
   - "close to a value" for a temperature: the t interval of the mean optimal T over seeds,
     or with fewer seeds a bootstrap over the *validation* examples with T chosen again
     on each resample (:func:`temperature_bootstrap`, vectorised over the T grid).

2. ``holds`` when the whole interval lies on the side the claim states (the runs resolve
   the claimed direction); ``fails`` when it lies wholly on the contrary side (the runs
   resolve the contrary; two identical models, difference exactly 0, are not "lower");
   ``inconclusive`` otherwise, with what would decide it: the seeds a paired t-test would
   need (:func:`replicate.comparison.stats.seeds_needed`, 80 % power at the 5 % level) or,
   with the bootstrap, about how many test examples would (:func:`test_size_needed`).

Every function refuses bad input with a one-line error before any resampling. The
decision itself is :func:`decide` (a difference) and :func:`decide_within` (a value in a
range); :func:`compare`, :func:`best_of` and :func:`temperature_near` compute the interval
from the runs and call them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy import stats as _st

from .. import binning as _b
from ..claims import FAILS, HOLDS, INCONCLUSIVE, Outcome, inconclusive
from . import board, stats

#: With this many seeds or more a difference is tested across seeds; with fewer, over test examples.
MIN_SEEDS = 3
ALPHA, POWER = 0.05, 0.8
N_BOOT = 1000
#: Metrics the paired bootstrap recomputes vectorised (others: one call per resample).
VECTORISED = ("ece", "mce", "classwise_ece", "error", "nll", "brier")
CLAIMED = ("lower", "higher")
N_BINS = 15


# ----------------------------------------------------------------------------- checks
def _alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def _count(name: str, v, least: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
        raise ValueError(f"{name} must be an integer >= {least}; got {v!r}")
    return int(v)


def _claimed(claimed: str) -> str:
    if claimed not in CLAIMED:
        raise ValueError(f"claimed must be one of {', '.join(CLAIMED)}; got {claimed!r}")
    return claimed


def _finite(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or math.isnan(v):
        raise ValueError(f"{name} must be a number; got {v!r}")
    return float(v)


# ----------------------------------------------------------------------------- the rule
def decide(low: float, high: float, claimed: str, needs: str) -> Outcome:
    """The verdict on a claimed difference ``a - b`` from its interval ``[low, high]``:
    ``claimed="lower"`` (a < b) holds when ``high < 0`` and fails when ``low >= 0``;
    ``"higher"`` holds when ``low > 0`` and fails when ``high <= 0``; anything else is
    ``inconclusive`` with ``needs`` (what would decide it) as its note."""
    low, high, claimed = _finite("low", low), _finite("high", high), _claimed(claimed)
    if low > high:
        raise ValueError(f"low must be <= high; got [{low}, {high}]")
    if claimed == "higher":
        low, high = -high, -low
    if high < 0:
        return Outcome(HOLDS)
    if low >= 0:
        return Outcome(FAILS)
    return inconclusive(needs)


def decide_within(low: float, high: float, lo: float, hi: float, needs: str) -> Outcome:
    """The verdict on "the value lies in ``[lo, hi]``" from its interval ``[low, high]``:
    holds when the interval lies inside the range, fails when it lies wholly outside,
    ``inconclusive`` (``needs``) when it straddles an end."""
    low, high, lo, hi = (_finite(n, v) for n, v in (("low", low), ("high", high), ("lo", lo), ("hi", hi)))
    if low > high or lo > hi:
        raise ValueError(f"intervals must have low <= high; got [{low}, {high}] and range [{lo}, {hi}]")
    if lo <= low and high <= hi:
        return Outcome(HOLDS)
    if high < lo or low > hi:
        return Outcome(FAILS)
    return inconclusive(needs)


def test_size_needed(diff: float, sd: float, n_test: int, alpha: float = ALPHA, power: float = POWER):
    """About how many test examples a paired bootstrap would need to resolve a difference
    ``diff`` whose bootstrap standard deviation is ``sd`` at ``n_test`` examples, with
    probability ``power`` at level ``alpha``, assuming the standard deviation shrinks as
    ``1/sqrt(n)`` (the normal approximation: ``n (z_{1-alpha/2} + z_power)^2 sd^2 / diff^2``).
    None when ``diff`` is 0 (no size resolves it); rounded up to 100."""
    diff, sd = _finite("diff", diff), _finite("sd", sd)
    n_test, alpha = _count("n_test", n_test), _alpha(alpha)
    if sd < 0:
        raise ValueError(f"sd must be >= 0; got {sd!r}")
    if diff == 0:
        return None
    z = _st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(_alpha(power))
    need = n_test * (z * sd / abs(diff)) ** 2
    return int(max(100, math.ceil(need / 100) * 100))


# ----------------------------------------------------------------------------- metrics per resample
def metrics_allowed() -> tuple:
    """The metrics a comparison may use: the leaderboard's (:data:`board.BOARD_METRICS`) and
    every probability-based metric of the chapters' tables (:data:`replicate.comparison.METRICS`)."""
    from .tables import METRICS

    return tuple(dict.fromkeys([*board.BOARD_METRICS, *(m for m in METRICS if m != "nll")]))


def check_metric(metric: str) -> str:
    allowed = metrics_allowed()
    if metric not in allowed:
        raise ValueError(f"metric must be one of {', '.join(allowed)}; got {metric!r}")
    return metric


def metric_label(metric: str) -> str:
    from .tables import METRIC_NAMES

    return board.BOARD_METRICS[metric][0] if metric in board.BOARD_METRICS else METRIC_NAMES[metric].split(" (")[0]


def score(cal: board.Calibrated, metric: str, idx=None) -> float:
    """``metric`` (percent) of ``cal`` on the test samples ``idx`` (default all):
    :func:`board.score` for the leaderboard's metrics, else the chapters' table metric on
    the probabilities."""
    if metric in board.BOARD_METRICS:
        return board.score(cal, metric, idx)
    from .tables import METRICS

    check_metric(metric)
    p, y = (cal.probs, cal.labels) if idx is None else (cal.probs[idx], cal.labels[idx])
    return 100 * METRICS[metric][1](p, y, None)


def _draws(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` x ``n`` test indices drawn with replacement (one row per resample)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _multiplicity(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each example is drawn in each resample: ``(rows, n)`` float counts."""
    rows = idx.shape[0]
    flat = (idx + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


def _binned(cal: board.Calibrated, metric: str):
    """``(R, C, per, kind)``: a sparse ``n x cols`` matrix of each example's signed residual
    in its bin (hit - confidence), its 0/1 bin membership ``C`` (MCE only), and the
    normaliser; ``counts @ R`` gives the resample's per-bin residual sums."""
    p, y = cal.probs, cal.labels
    n = len(y)
    edges = _b.width_edges(N_BINS)
    if metric == "classwise_ece":
        k = p.shape[1]
        b = _b.bin_index(p, edges, "right", uniform=True)                   # (n, K)
        cols = (b + N_BINS * np.arange(k)[None, :]).ravel()
        vals = ((y[:, None] == np.arange(k)[None, :]).astype(np.float64) - p).ravel()
        rows = np.repeat(np.arange(n), k)
        return sparse.csr_matrix((vals, (rows, cols)), shape=(n, k * N_BINS)), None, k
    conf, pred = _b.top_label(p)
    b = _b.bin_index(conf, edges, "right", uniform=True)
    r = (pred == y).astype(np.float64) - conf
    R = sparse.csr_matrix((r, (np.arange(n), b)), shape=(n, N_BINS))
    C = sparse.csr_matrix((np.ones(n), (np.arange(n), b)), shape=(n, N_BINS)) if metric == "mce" else None
    return R, C, 1


def _per_example(cal: board.Calibrated, metric: str) -> np.ndarray:
    """The per-example loss whose mean is ``metric`` (error, NLL, Brier), as a fraction."""
    p, y = cal.probs, cal.labels
    if metric == "error":
        return (_b.top_label(p)[1] != y).astype(np.float64)
    if metric == "nll":
        return -np.asarray(cal.logp_y, dtype=np.float64)
    q = np.asarray(p, dtype=np.float64).copy()
    q[np.arange(len(y)), y] -= 1.0
    return np.einsum("ij,ij->i", q, q)


def resampled(cal: board.Calibrated, metric: str, idx: np.ndarray) -> np.ndarray:
    """``metric`` (percent, as :func:`score`) of ``cal`` on each resample of test indices
    (rows of ``idx``). The metrics of :data:`VECTORISED` are computed for all resamples at
    once from the multiplicity of each example (a resample holds example i ``w_i`` times:
    its bin sums are ``w @ residuals``); any other metric of :func:`metrics_allowed` calls
    :func:`score` per resample."""
    check_metric(metric)
    idx = np.asarray(idx)
    if idx.ndim != 2 or idx.shape[1] != cal.n:
        raise ValueError(f"idx must be a (resamples, {cal.n}) array of test indices; got shape {idx.shape}")
    if metric not in VECTORISED:
        return np.array([score(cal, metric, row) for row in idx])
    n, out = cal.n, np.empty(idx.shape[0])
    if metric in ("error", "nll", "brier"):
        loss = _per_example(cal, metric)
        for a in range(0, idx.shape[0], 256):
            out[a:a + 256] = _multiplicity(idx[a:a + 256], n) @ loss / n
        return 100 * out
    R, C, per = _binned(cal, metric)
    Rt, Ct = R.T.tocsr(), (C.T.tocsr() if C is not None else None)
    for a in range(0, idx.shape[0], 256):
        W = _multiplicity(idx[a:a + 256], n).T                                # (n, rows)
        S = np.abs((Rt @ W).T)                                                # (rows, cols)
        if metric == "mce":
            cnt = (Ct @ W).T
            with np.errstate(invalid="ignore", divide="ignore"):
                out[a:a + 256] = np.nanmax(np.where(cnt > 0, S / cnt, np.nan), axis=1)
        else:
            out[a:a + 256] = S.sum(axis=1) / (n * per)
    return 100 * out


def _same_test_set(cals) -> int:
    sizes = {c.n for c in cals}
    if len(sizes) != 1:
        raise ValueError(f"every run must be evaluated on the same test set; got test sizes {sorted(sizes)}")
    labels = cals[0].labels
    if any(not np.array_equal(c.labels, labels) for c in cals[1:]):
        raise ValueError("every run must be evaluated on the same test set; their test labels differ")
    return sizes.pop()


def paired_bootstrap(a, b, metric: str = "ece", n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> dict:
    """Paired bootstrap over the test examples of ``mean(metric of a) - mean(metric of b)``.

    ``a`` and ``b`` are :class:`replicate.comparison.board.Calibrated` runs (one each, or
    one per seed, the same seeds in the same order), all on the same test set. Each of
    ``n_boot`` resamples draws ``n`` test indices with replacement, the same indices for
    every run; each run's metric is recomputed on them (:func:`resampled`) and averaged
    over seeds. Returns ``diff`` (on all examples), ``low``/``high`` (percentile interval at
    ``level``), ``sd`` (of the resampled differences), ``n_test``, ``n_boot`` and the
    resampled differences ``replicates``."""
    a = [a] if isinstance(a, board.Calibrated) else list(a)
    b = [b] if isinstance(b, board.Calibrated) else list(b)
    if not a or len(a) != len(b):
        raise ValueError(f"a and b must hold one run per seed, the same seeds; got {len(a)} and {len(b)}")
    check_metric(metric)
    n_boot, level = _count("n_boot", n_boot, 2), stats._level(level)
    n = _same_test_set(a + b)
    idx = _draws(n, n_boot, seed)
    every = np.arange(n)[None, :]
    point = np.mean([resampled(c, metric, every)[0] for c in a]) - np.mean([resampled(c, metric, every)[0] for c in b])
    reps = np.mean([resampled(c, metric, idx) for c in a], axis=0) - np.mean([resampled(c, metric, idx) for c in b],
                                                                            axis=0)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return {"diff": float(point), "low": float(lo), "high": float(hi), "sd": float(reps.std(ddof=1)), "n_test": n,
            "n_boot": n_boot, "replicates": reps}


# ----------------------------------------------------------------------------- comparisons on runs
@dataclass(frozen=True)
class Resolution:
    """A claim's quantity on our runs with its interval and the verdict :func:`decide` gives.

    ``estimate`` is the difference ``a - b`` (or the rank, or the temperature), ``low`` /
    ``high`` its interval, ``test`` how the interval was made, ``needs`` what would decide
    the claim (empty when it is decided) and ``outcome`` the verdict (``holds``, ``fails``
    or ``inconclusive`` with ``needs`` as its note). ``text`` is the row's result."""

    estimate: float
    low: float
    high: float
    test: str
    needs: str
    outcome: Outcome
    text: str
    details: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def verdict(self) -> str:
        return self.outcome.verdict


def _cells(cells: dict, method: str) -> list:
    runs = [(s, c) for (m, s), c in cells.items() if m == method]
    if not runs:
        have = sorted({m for m, _ in cells})
        raise ValueError(f"method {method!r} has no run in cells; methods: {', '.join(have)}")
    return runs


def _paired(cells: dict, a: str, b: str):
    ra, rb = dict(_cells(cells, a)), dict(_cells(cells, b))
    if set(ra) != set(rb):
        raise ValueError(f"{a!r} and {b!r} must have runs at the same seeds; got {sorted(ra)} and {sorted(rb)}")
    seeds = sorted(ra)
    return seeds, [ra[s] for s in seeds], [rb[s] for s in seeds]


def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def compare(cells: dict, a: str, b: str, metric: str = "ece", claimed: str = "lower", alpha: float = ALPHA,
            power: float = POWER, min_seeds: int = MIN_SEEDS, n_boot: int = N_BOOT, seed: int = 0,
            labels: dict | None = None) -> Resolution:
    """Is ``metric`` of method ``a`` ``claimed`` ("lower" or "higher") than that of ``b``, as
    far as our runs can tell? ``cells`` maps ``(method, seed)`` to a
    :class:`replicate.comparison.board.Calibrated` run (:func:`calibrated`). With
    ``min_seeds`` seeds or more: the paired t-test over seeds (its interval at ``1 -
    alpha``); with fewer: :func:`paired_bootstrap` over the test examples (``n_boot``
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
            level: float = 0.95, labels: dict | None = None, **compare_kw) -> Resolution:
    """Is ``method`` the best of ``among`` (default every method of ``cells``) by ``metric``
    (lowest; highest for the AUROC), as far as our runs can tell? Decided on the bootstrap
    rank intervals of :func:`replicate.comparison.board.rank_intervals` (test examples and
    seeds resampled, the same draws for every method, ``n_boot`` resamples): ``holds`` when
    ``method``'s rank interval at ``level`` is [1, 1], ``fails`` when it excludes rank 1,
    ``inconclusive`` otherwise; the row says how ``method`` compares with its closest rival
    (:func:`compare`, keywords ``compare_kw``) and what would resolve that difference."""
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
    rival = others.sort_values("score", ascending=not better).iloc[0].method
    pair = compare(cells, method, rival, metric, "higher" if better else "lower", labels=labels, seed=seed,
                   **compare_kw)
    needs = pair.needs or f"closest rival {(labels or {}).get(rival, rival)}: {pair.verdict} on its own"
    lo, hi = float(row.rank_low), float(row.rank_high)
    if hi <= 1:
        outcome = Outcome(HOLDS)
    elif lo > 1:
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


# ----------------------------------------------------------------------------- temperatures
def _temperature_rows(val_logits, val_labels, grid: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The grid temperature chosen by validation ECE (15 equal-width bins, first minimum
    within a relative 1e-12, as :func:`replicate.posthoc.fit_temperature`) on each resample
    of validation indices (rows of ``idx``), vectorised over the grid and the resamples."""
    from .. import posthoc

    z = np.asarray(val_logits, dtype=np.float64)
    y = np.asarray(val_labels, dtype=np.int64)
    n, nt = len(y), len(grid)
    conf, _ = posthoc._top_conf_and_nll(z, y, grid)                          # (nT, n)
    correct = (z.argmax(axis=1) == y).astype(np.float64)
    edges = np.arange(N_BINS + 1, dtype=np.float64) / N_BINS
    b = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, N_BINS - 1)   # as posthoc._width_ece_rows
    cols = (b + N_BINS * np.arange(nt)[:, None]).ravel()
    rows = np.tile(np.arange(n), nt)
    R = sparse.csr_matrix(((correct[None, :] - conf).ravel(), (rows, cols)), shape=(n, nt * N_BINS)).T.tocsr()
    out = np.empty(idx.shape[0])
    for a in range(0, idx.shape[0], 128):
        W = _multiplicity(idx[a:a + 128], n).T
        ece = np.abs((R @ W).T).reshape(-1, nt, N_BINS).sum(axis=2) / n        # (rows, nT)
        best = ece.min(axis=1, keepdims=True)
        tol = posthoc._TIE_RTOL * np.maximum(1.0, np.abs(best))
        out[a:a + 128] = grid[np.argmax(ece <= best + tol, axis=1)]
    return out


def temperature_bootstrap(val, n_boot: int = 200, seed: int = 0, level: float = 0.95, grid=None) -> dict:
    """The optimal temperature (grid ``grid``, default the papers' 0.1..10.0, chosen by
    validation ECE) with a bootstrap interval over the validation examples: each resample
    draws the validation indices with replacement and chooses T again. ``val`` is a
    ``(logits, labels)`` pair, or a list of them (one per seed, the same validation set):
    the estimate is then the mean T over seeds, each resample using the same indices for
    every seed. Returns ``T``, ``low``, ``high``, ``n_val``, ``n_boot``, ``replicates``."""
    from .. import posthoc

    pairs = [val] if isinstance(val, tuple) else list(val)
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError("val must be a (logits, labels) pair or a list of them, one per seed")
    n_boot, level = _count("n_boot", n_boot, 2), stats._level(level)
    sizes = {len(p[1]) for p in pairs}
    if len(sizes) != 1:
        raise ValueError(f"every seed must use the same validation set; got sizes {sorted(sizes)}")
    grid = np.asarray(posthoc.TS_GRID if grid is None else grid, dtype=np.float64)
    n = sizes.pop()
    idx = _draws(n, n_boot, seed)
    point = float(np.mean([_temperature_rows(z, y, grid, np.arange(n)[None, :])[0] for z, y in pairs]))
    reps = np.mean([_temperature_rows(z, y, grid, idx) for z, y in pairs], axis=0)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return {"T": point, "low": float(lo), "high": float(hi), "n_val": n, "n_boot": n_boot, "replicates": reps}


def temperature_near(temperatures, lo: float, hi: float, val=None, alpha: float = ALPHA,
                     min_seeds: int = MIN_SEEDS, n_boot: int = 200, seed: int = 0, what: str = "T") -> Resolution:
    """Is the optimal temperature in ``[lo, hi]`` (e.g. "close to 1": ``[0.9, 1.1]``), as far
    as our runs can tell? ``temperatures``: the T chosen on each seed's validation set. With
    ``min_seeds`` seeds or more, the t interval of their mean at ``1 - alpha``; with fewer,
    :func:`temperature_bootstrap` over ``val`` (the runs' validation logits and labels,
    required then). Decided by :func:`decide_within`."""
    alpha = _alpha(alpha)
    ts = np.asarray(temperatures, dtype=np.float64).ravel()
    if ts.size == 0 or not np.all(np.isfinite(ts)):
        raise ValueError(f"temperatures must be a non-empty sequence of finite numbers; got {temperatures!r}")
    lo, hi = _finite("lo", lo), _finite("hi", hi)
    if ts.size >= _count("min_seeds", min_seeds, 2):
        ci = stats.seed_interval(ts, 1 - alpha)
        est = ci["mean"]
        low, high = (ci["low"], ci["high"]) if math.isfinite(ci["low"]) else (est, est)
        test = f"t interval over {ts.size} seeds, {100 * (1 - alpha):g} %"
        half = (high - low) / 2
        margin = min(abs(est - lo), abs(hi - est))
        need = (math.ceil(ts.size * (half / margin) ** 2) + 1) if margin > 0 and half > 0 else None
        needs = (f"~{need} seeds to narrow the interval to the nearest end of [{lo:g}, {hi:g}]" if need else
                 f"the estimate sits on an end of [{lo:g}, {hi:g}]")
    else:
        if val is None:
            raise ValueError(f"val (the runs' validation logits and labels) is needed with fewer than {min_seeds} "
                             f"seeds: the interval is a bootstrap over the validation examples")
        r = temperature_bootstrap(val, n_boot, seed, 1 - alpha)
        est, low, high = r["T"], r["low"], r["high"]
        test = (f"bootstrap over {r['n_val']:,} validation examples, T chosen again on each of {n_boot} "
                f"resamples, {100 * (1 - alpha):g} %")
        needs = f"a larger validation set (we have {r['n_val']:,}) or seeds: T ranges over [{low:g}, {high:g}]"
    outcome = decide_within(low, high, lo, hi, needs)
    text = f"{what} = {est:.2f} [{low:.2f}, {high:.2f}] ({test}); claimed range [{lo:g}, {hi:g}]"
    return Resolution(est, low, high, test, needs if outcome.verdict == INCONCLUSIVE else "", outcome, text)


def interval(cells: dict, method: str, metric: str = "ece", level: float = 0.95, min_seeds: int = MIN_SEEDS,
             n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """The ``level`` interval of ``method``'s ``metric`` on our runs, for a table cell:
    with ``min_seeds`` seeds or more the Student-t interval of the mean over seeds
    (:func:`stats.seed_interval`); with fewer, the percentile interval of the mean over
    seeds under a bootstrap of the test examples (the same resamples for every seed).
    Returns ``mean``, ``low``, ``high`` and ``how`` (a few words for a tooltip)."""
    check_metric(metric)
    level = stats._level(level)
    runs = [c for _, c in sorted(_cells(cells, method), key=lambda sc: sc[0])]
    if len(runs) >= _count("min_seeds", min_seeds, 2):
        ci = stats.seed_interval([score(c, metric) for c in runs], level)
        return {"mean": ci["mean"], "low": ci["low"], "high": ci["high"],
                "how": f"{100 * level:g} % t interval over {len(runs)} seeds"}
    n = _same_test_set(runs)
    idx = _draws(n, _count("n_boot", n_boot, 2), seed)
    reps = np.mean([resampled(c, metric, idx) for c in runs], axis=0)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return {"mean": float(np.mean([score(c, metric) for c in runs])), "low": float(lo), "high": float(hi),
            "how": f"{100 * level:g} % bootstrap interval over {n:,} test examples"
                   + (f", {len(runs)} seeds" if len(runs) > 1 else "")}


def table_intervals(evidence: "RunEvidence", metric: str = "ece", methods=None, temperature: bool = True,
                    **kw) -> dict:
    """``{(method, scaled): interval}`` (:func:`interval`) of every method of ``evidence``
    (or of ``methods``), pre-T and, with ``temperature``, post-T (the T of the evidence's
    frame): what :func:`replicate.comparison.styled_table` shows on hover."""
    keys = list(dict.fromkeys(m for m, _ in evidence.runs)) if methods is None else list(methods)
    out = {}
    for scaled in (False, True) if temperature else (False,):
        cells = evidence.cells(scaled, metric)
        for m in keys:
            if any(k[0] == m for k in cells):
                out[(m, scaled)] = interval(cells, m, metric, **kw)
    return out


def temperature_compare(ta, tb, claimed: str = "higher", val_a=None, val_b=None, alpha: float = ALPHA,
                        power: float = POWER, min_seeds: int = MIN_SEEDS, n_boot: int = 200, seed: int = 0,
                        what: str = "T(a) − T(b)") -> Resolution:
    """Is the optimal temperature of one model ``claimed`` ("higher" or "lower") than
    another's? ``ta``, ``tb``: the T chosen on each seed's validation set (the same seeds,
    in order). With ``min_seeds`` seeds or more, the paired t-test over seeds; with fewer, a
    paired bootstrap over the validation examples (``val_a``, ``val_b``: each seed's
    ``(logits, labels)``, one validation set: the same resampled indices for both models, T
    chosen again by validation ECE on each resample). Decided by :func:`decide`."""
    alpha, claimed = _alpha(alpha), _claimed(claimed)
    ta, tb = (np.asarray(t, dtype=np.float64).ravel() for t in (ta, tb))
    if ta.size == 0 or ta.size != tb.size or not np.all(np.isfinite(np.r_[ta, tb])):
        raise ValueError(f"ta and tb must hold one finite T per seed, the same seeds; got {ta.size} and {tb.size}")
    if ta.size >= _count("min_seeds", min_seeds, 2):
        r = stats.paired_comparison(ta, tb, 1 - alpha)
        d = ta - tb
        low, high = (r["low"], r["high"]) if math.isfinite(r["low"]) else (float(d.mean()), float(d.mean()))
        need = stats.seeds_needed(r["diff"], float(d.std(ddof=1)), power, alpha)
        test = f"paired t-test over {ta.size} seeds, {100 * (1 - alpha):g} % interval"
        needs = f"~{need} seeds to resolve a difference this size" if need else "no difference to resolve"
        est = r["diff"]
    else:
        if val_a is None or val_b is None:
            raise ValueError(f"val_a and val_b (each seed's validation logits and labels) are needed with fewer than "
                             f"{min_seeds} seeds: the interval is a bootstrap over the validation examples")
        from .. import posthoc

        pa = [val_a] if isinstance(val_a, tuple) else list(val_a)
        pb = [val_b] if isinstance(val_b, tuple) else list(val_b)
        if len(pa) != len(pb) or len(pa) != ta.size:
            raise ValueError("val_a and val_b must hold one (logits, labels) pair per seed")
        if any(not np.array_equal(np.asarray(x[1]), np.asarray(pa[0][1])) for x in pa + pb):
            raise ValueError("both models must be validated on the same validation set (their labels differ)")
        n_boot = _count("n_boot", n_boot, 2)
        n = len(pa[0][1])
        idx = _draws(n, n_boot, seed)
        grid = np.asarray(posthoc.TS_GRID)
        reps = (np.mean([_temperature_rows(z, y, grid, idx) for z, y in pa], axis=0)
                - np.mean([_temperature_rows(z, y, grid, idx) for z, y in pb], axis=0))
        low, high = (float(x) for x in np.quantile(reps, [alpha / 2, 1 - alpha / 2]))
        est = float(ta.mean() - tb.mean())
        test = (f"paired bootstrap over {n:,} validation examples (T chosen again on each of {n_boot} resamples), "
                f"{100 * (1 - alpha):g} % interval")
        needs = f"a larger validation set (we have {n:,}) or seeds"
    outcome = decide(low, high, claimed, needs)
    text = f"{what} = {est:.2f} [{low:.2f}, {high:.2f}] ({test})"
    return Resolution(est, low, high, test, needs if outcome.verdict == INCONCLUSIVE else "", outcome, text)


# ----------------------------------------------------------------------------- runs -> cells
def calibrated(runs: dict, temperatures: dict | None = None) -> dict:
    """``{(method, seed): Calibrated}`` of ``{(method, seed): Run}``: the test softmax of
    each run's logits divided by ``temperatures[(method, seed)]`` (default 1: no
    temperature scaling). Pass the temperatures a chapter's table used (e.g. from
    :func:`replicate.comparison.evaluate_runs`, rows ``temperature_scaled``) so that the
    verdict is on the numbers the table shows."""
    from .. import metrics as _m

    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
    temperatures = temperatures or {}
    unknown = [k for k in temperatures if k not in runs]
    if unknown:
        raise ValueError(f"temperatures names runs that are not in runs: {unknown}")
    out = {}
    for key, run in runs.items():
        z, y = run.logits("test")
        T = float(temperatures.get(key, 1.0))
        if not math.isfinite(T) or T <= 0:
            raise ValueError(f"temperatures[{key!r}] must be a finite number > 0; got {T!r}")
        lp = _m._log_softmax(np.asarray(z, dtype=np.float64) / T)
        y = np.asarray(y, dtype=np.int64)
        out[key] = board.Calibrated("ts" if key in temperatures else "none", np.exp(lp), y,
                                    lp[np.arange(len(y)), y], None, T, math.nan)
    return out


def temperatures_of(frame, metric: str = "ece") -> dict:
    """``{(method, seed): T}`` of the temperature-scaled rows of ``metric`` in a
    :func:`replicate.comparison.evaluate_runs` frame (the T its post-T numbers used)."""
    rows = frame[(frame.metric == metric) & frame.temperature_scaled.astype(bool)]
    if rows.empty:
        raise ValueError(f"frame has no temperature-scaled rows of metric {metric!r}")
    return {(r.method, r.seed): float(r.T) for r in rows.itertuples(index=False)}


# ----------------------------------------------------------------------------- claims on runs
class RunEvidence:
    """A chapter's runs ``{(method, seed): Run}`` as the evidence a claim's noise test reads:
    :meth:`cells` gives the calibrated test probabilities before (``scaled=False``) or after
    temperature scaling with the T of ``frame`` (a :func:`replicate.comparison.evaluate_runs`
    frame: the T the chapter's table used for ``metric``), computed once per setting."""

    def __init__(self, runs: dict, frame=None):
        if not isinstance(runs, dict) or not runs:
            raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
        self.runs, self.frame, self._cells = runs, frame, {}

    def cells(self, scaled: bool = False, metric: str = "ece") -> dict:
        key = (bool(scaled), metric if scaled else "")
        if key not in self._cells:
            if not scaled:
                self._cells[key] = calibrated(self.runs)
            elif self.frame is None:
                raise ValueError("post-T comparisons need frame (the evaluate_runs frame whose T the table used)")
            else:
                self._cells[key] = calibrated(self.runs, temperatures_of(self.frame, metric))
        return self._cells[key]

    def temperatures(self, method: str, metric: str = "ece") -> list:
        """The T of ``method`` at each seed (from ``frame``), in seed order."""
        if self.frame is None:
            raise ValueError("temperatures need frame (the evaluate_runs frame)")
        ts = temperatures_of(self.frame, metric)
        return [ts[k] for k in sorted(k for k in ts if k[0] == method)]

    def val(self, method: str) -> list:
        """``[(val logits, val labels)]`` of ``method`` at each seed, in seed order."""
        return [self.runs[k].logits("val") for k in sorted(k for k in self.runs if k[0] == method)]


def lower(a: str, b: str, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``a`` has a lower ``metric`` than ``b`` (post-T when ``scaled``);
    ``kw`` go to :func:`compare`. Returns ``test(evidence: RunEvidence) -> Resolution``."""
    return lambda ev: compare(ev.cells(scaled, metric), a, b, metric, "lower", **kw)


def higher(a: str, b: str, metric: str = "ece", scaled: bool = False, **kw):
    """As :func:`lower`, claiming ``a``'s ``metric`` is higher than ``b``'s."""
    return lambda ev: compare(ev.cells(scaled, metric), a, b, metric, "higher", **kw)


def best(method: str, among=None, metric: str = "ece", scaled: bool = False, **kw):
    """A claim's noise test: ``method`` is the best of ``among`` by ``metric`` (:func:`best_of`)."""
    return lambda ev: best_of(ev.cells(scaled, metric), method, metric, among, **kw)


def near(method: str, lo: float, hi: float, metric: str = "ece", **kw):
    """A claim's noise test: ``method``'s optimal T (chosen by validation ``metric``, as in
    the chapter's frame) lies in ``[lo, hi]`` (:func:`temperature_near`)."""
    def test(ev) -> Resolution:
        ts = ev.temperatures(method, metric)
        if metric != "ece" and len(ts) < kw.get("min_seeds", MIN_SEEDS):
            raise ValueError(f"metric must be 'ece' with fewer than {MIN_SEEDS} seeds (the bootstrap chooses T "
                             f"again by validation ECE); got {metric!r}")
        return temperature_near(ts, lo, hi, val=ev.val(method) if len(ts) < kw.get("min_seeds", MIN_SEEDS)
                                else None, what=f"T of {method}", **kw)
    return test


def t_higher(a: str, b: str, metric: str = "ece", **kw):
    """A claim's noise test: ``a``'s optimal T is higher than ``b``'s (:func:`temperature_compare`)."""
    def test(ev) -> Resolution:
        ta, tb = ev.temperatures(a, metric), ev.temperatures(b, metric)
        few = len(ta) < kw.get("min_seeds", MIN_SEEDS)
        if few and metric != "ece":
            raise ValueError(f"metric must be 'ece' with fewer than {MIN_SEEDS} seeds (the bootstrap chooses T "
                             f"again by validation ECE); got {metric!r}")
        return temperature_compare(ta, tb, "higher", ev.val(a) if few else None, ev.val(b) if few else None,
                                   what=f"T({a}) − T({b})", **kw)
    return test


def all_of(*tests):
    """A claim made of several comparisons that must all hold: ``holds`` when every one
    holds, ``fails`` when any fails, else ``inconclusive`` (with each undecided part's needs)."""
    if not tests:
        raise ValueError("all_of needs at least one test")

    def test(ev) -> Resolution:
        parts = [t(ev) for t in tests]
        verdicts = [p.verdict for p in parts]
        if all(v == HOLDS for v in verdicts):
            outcome = Outcome(HOLDS)
        elif FAILS in verdicts:
            outcome = Outcome(FAILS)
        else:
            outcome = inconclusive("; ".join(p.needs for p in parts if p.needs))
        return Resolution(math.nan, math.nan, math.nan, "; ".join(dict.fromkeys(p.test for p in parts)),
                          outcome.note if outcome.verdict == INCONCLUSIVE else "", outcome,
                          " | ".join(p.text for p in parts), {"parts": parts})
    return test
