"""Metrics recomputed on resamples of the test examples (vectorised over resamples), the
paired bootstrap of a difference between two models, and the interval of one table cell
(:func:`interval`, :func:`table_intervals`)."""
from __future__ import annotations

import numpy as np
from scipy import sparse

from ... import binning as _b
from .. import board, stats
from .rule import MIN_SEEDS, N_BOOT, _count

#: Metrics the paired bootstrap recomputes vectorised (others: one call per resample).
VECTORISED = ("ece", "mce", "classwise_ece", "error", "nll", "brier")
N_BINS = 15


# ----------------------------------------------------------------------------- metrics per resample
def metrics_allowed() -> tuple:
    """The metrics a comparison may use: the leaderboard's (:data:`board.BOARD_METRICS`) and
    every probability-based metric of the chapters' tables (:data:`replicate.comparison.METRICS`)."""
    from ..evaluation import METRICS

    return tuple(dict.fromkeys([*board.BOARD_METRICS, *(m for m in METRICS if m != "nll")]))


def check_metric(metric: str) -> str:
    allowed = metrics_allowed()
    if metric not in allowed:
        raise ValueError(f"metric must be one of {', '.join(allowed)}; got {metric!r}")
    return metric


def metric_label(metric: str) -> str:
    from ..evaluation import METRIC_NAMES

    return board.BOARD_METRICS[metric][0] if metric in board.BOARD_METRICS else METRIC_NAMES[metric].split(" (")[0]


def score(cal: board.Calibrated, metric: str, idx=None) -> float:
    """``metric`` (percent) of ``cal`` on the test samples ``idx`` (default all):
    :func:`board.score` for the leaderboard's metrics, else the chapters' table metric on
    the probabilities."""
    if metric in board.BOARD_METRICS:
        return board.score(cal, metric, idx)
    from ..evaluation import METRICS

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


def _cells(cells: dict, method: str) -> list:
    runs = [(s, c) for (m, s), c in cells.items() if m == method]
    if not runs:
        have = sorted({m for m, _ in cells})
        raise ValueError(f"method {method!r} has no run in cells; methods: {', '.join(have)}")
    return runs


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



def bootstrap_statistic(groups: dict, statistic, metric: str = "ece", n_boot: int = N_BOOT, seed: int = 0,
                        level: float = 0.95) -> dict:
    """The paired bootstrap over the test examples of any ``statistic`` of several runs'
    ``metric``: ``groups`` maps a name to a list of :class:`~replicate.comparison.board.Calibrated`
    runs (one per seed, averaged), all on one test set; each resample draws the same test
    indices for every run; ``statistic({name: values})`` maps the per-group values (numpy
    arrays, one entry per resample) to the statistic. Returns ``estimate`` (on all examples),
    ``low``/``high`` (percentile interval at ``level``), ``sd`` and ``n_test``. Used for claims
    such as "TS changes FCL's ECE less than FLSD-53's" (a difference of differences)."""
    if not isinstance(groups, dict) or not groups or any(not list(g) for g in groups.values()):
        raise ValueError("groups must be a non-empty dict name -> non-empty list of runs")
    check_metric(metric)
    n_boot, level = _count("n_boot", n_boot, 2), stats._level(level)
    n = _same_test_set([c for g in groups.values() for c in g])
    idx = _draws(n, n_boot, seed)
    every = np.arange(n)[None, :]
    point = statistic({k: np.mean([resampled(c, metric, every) for c in g], axis=0) for k, g in groups.items()})
    reps = np.asarray(statistic({k: np.mean([resampled(c, metric, idx) for c in g], axis=0)
                                 for k, g in groups.items()}), dtype=np.float64)
    lo, hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    return {"estimate": float(np.asarray(point).ravel()[0]), "low": float(lo), "high": float(hi),
            "sd": float(reps.std(ddof=1)), "n_test": n}


def cell_intervals(runs: dict, frame, metrics=("ece",), **kw) -> dict:
    """``{metric: {(method, scaled): interval}}`` for a chapter's side-by-side tables
    (:func:`replicate.comparison.styled_table`'s ``intervals``): :func:`table_intervals` of
    the runs ``{(method, seed): Run}`` with the T of ``frame`` (the
    :func:`replicate.comparison.evaluate_runs` frame the table shows), pre-T only for the
    test error (its table has no post-T column)."""
    from .evidence import of_runs

    ev = of_runs(runs, frame)
    return {m: table_intervals(ev, m, temperature=m != "error", **kw) for m in metrics}
