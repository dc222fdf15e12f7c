"""Claims about optimal temperatures on our runs: "T is close to 1" (:func:`temperature_near`)
and "A needs a larger T than B" (:func:`temperature_compare`), by seeds or by a bootstrap over
the validation examples that chooses T again on each resample (:func:`temperature_bootstrap`)."""
from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from ...claims import INCONCLUSIVE
from .. import stats
from .resampling import N_BINS, _draws, _multiplicity
from .rule import ALPHA, MIN_SEEDS, POWER, Resolution, _alpha, _claimed, _count, _finite, decide, decide_within


def _temperature_rows(val_logits, val_labels, grid: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The grid temperature chosen by validation ECE (15 equal-width bins, first minimum
    within a relative 1e-12, as :func:`replicate.posthoc.fit_temperature`) on each resample
    of validation indices (rows of ``idx``), vectorised over the grid and the resamples."""
    from ... import posthoc

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
    from ... import posthoc

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
        from ... import posthoc

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


