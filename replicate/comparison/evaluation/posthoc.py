"""Post-hoc calibration of any run, evaluated the way Komisarenko & Kull (2024) do: no
calibration, temperature scaling (TS) and focal temperature scaling (FTS), each fitted on
the validation logits by a named metric over a named temperature grid, then scored on the
test logits. Every experiment chapter and the leaderboard use it for their "+ FTS" columns.

- :func:`posthoc_logits` / :func:`evaluate_posthoc`: one row per (setting, selection metric,
  test metric) with the chosen ``T`` and ``gamma``, for a pair of logit sets / for every run
  of ``{(method, seed): Run}``. ``posthoc`` settings: ``"none"`` (softmax of the logits),
  ``"ts"`` (``T`` on the grid), ``"fts"`` (``(gamma_ev, T)`` on ``gammas`` x the grid).
- :func:`summarise_posthoc`: mean and sample standard deviation over seeds, the mean ``T``
  and the ``gamma_ev`` chosen most often.
- drawn in :mod:`replicate.comparison.side_by_side.posthoc`: :func:`~replicate.comparison.paper_posthoc`,
  a paper's printed post-hoc table (the FTS paper's Table 1) in the same layout, and
  :func:`~replicate.comparison.posthoc_table` both side by side in the paper's layout;
  :func:`~replicate.comparison.fts_column`: "before / TS / + FTS" for one metric, for any
  chapter's runs.

Grids (:data:`GRIDS`): ``"code"`` 0.05..5.00 step 0.05 (the FTS authors' code, the book's page "The authors' code"),
``"paper"`` 0.01..5.00 step 0.01 (FTS Sec. 5.1), ``"ts"`` 0.1..10.0 (Mukhoti et al.), or
any array. Units as the FTS paper prints them: accuracy and ECEs in percent, log-loss in
nats (not x100, unlike :data:`replicate.comparison.METRICS`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import metrics as _m
from ... import posthoc
from ...posthoc.fts import authors_focal_link, check_clamp, fts_log_probs

POSTHOC = ("none", "ts", "fts")
SELECTORS = ("nll", "adaece", "ece")
GRIDS = {"code": posthoc.FTS_T_GRID, "paper": posthoc.PAPER_T_GRID, "ts": posthoc.TS_GRID}
GRID_NAMES = {"code": "T = 0.05..5.00 step 0.05 (the FTS authors' code)",
              "paper": "T = 0.01..5.00 step 0.01 (the FTS paper's text, Sec. 5.1)",
              "ts": "T = 0.1..10.0 step 0.1 (Mukhoti et al.'s grid)"}
#: metric -> (name for captions, scale of the printed value)
POSTHOC_METRICS = {"accuracy": ("accuracy (%)", 100.0), "nll": ("log-loss (nats)", 1.0),
                   "adaece": ("equal-mass ECE (%, 15 bins)", 100.0), "ece": ("ECE (%, 15 equal-width bins)", 100.0)}
SELECT_NAMES = {"nll": "log-loss", "adaece": "equal-mass ECE", "ece": "equal-width ECE", "": "–"}
COLUMNS = ["posthoc", "select", "link", "metric", "value", "T", "gamma", "overflowed"]
_SEARCHES: dict = {}          # (run key, fit settings) -> {metric: Calibrator}: a run is fitted once per session


def resolve_grid(grid) -> tuple[np.ndarray, str]:
    """``(temperatures, description)`` of a grid name of :data:`GRIDS` or an array of temperatures."""
    if isinstance(grid, str):
        if grid not in GRIDS:
            raise ValueError(f"grid must be one of {', '.join(GRIDS)} or an array of temperatures; got {grid!r}")
        return GRIDS[grid], GRID_NAMES[grid]
    temps = posthoc._check_grid(grid, "grid")
    return temps, f"T in {{{', '.join(f'{t:g}' for t in temps[:4])}{', ...' if len(temps) > 4 else ''}}}"


def _choices(name, values, allowed) -> tuple:
    values = (values,) if isinstance(values, str) else tuple(values)
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise ValueError(f"{name} must name one or more of {', '.join(allowed)}; got {values!r}")
    return values


def _test_scores(p: np.ndarray, logp_y: np.ndarray, y: np.ndarray, names, n_bins: int) -> dict:
    out = {}
    for m in names:
        if m == "accuracy":
            v = float(np.mean(p.argmax(axis=1) == y))
        elif m == "nll":
            v = float(-np.mean(logp_y))
        elif m == "adaece":
            v = _m.adaptive_ece(p, y, n_bins=n_bins, validate=False)
        else:
            v = _m.ece(p, y, n_bins=n_bins, validate=False)
        out[m] = POSTHOC_METRICS[m][1] * v
    return out


def _fts_fits(zv, yv, select, temps, gammas, link, clamp, n_bins, paper_compat, key=None) -> dict:
    """FTS fits for ``select`` (log-loss and equal-mass ECE are always scored, so that one grid
    pass serves the tables, Fig. 8 and the link comparison); when the run's ``key`` is given,
    cached by its validation logits and labels for the session and on disk (:func:`_stored`),
    so that every chapter showing the same run's FTS column fits it once, even when two
    chapters executed side by side ask at the same time, and runs whose validation logits are
    identical (AdaFocal's two update rules at cpu, issue #30 item 4) are fitted once."""
    if key is not None:
        from ..noise.store import digest

        key = digest(np.asarray(zv, dtype=np.float64), np.asarray(yv, dtype=np.int64))   # as the fit reads them
    sig = (key, temps.tobytes(), tuple(gammas) if gammas is not None else None, link, clamp, n_bins, paper_compat)
    cached = _SEARCHES.get(sig, {}) if key is not None else {}
    if not set(select) <= set(cached):
        wanted = tuple(dict.fromkeys(("nll", "adaece", *cached, *select)))

        def fit():
            return posthoc.fit_focal_temperatures(zv, yv, gammas, temps, wanted, n_bins, paper_compat, link, clamp,
                                                  warn=False)
        cached = _stored(sig, fit) if key is not None else fit()
        if not set(select) <= set(cached):       # kept with fewer scores than asked: all of them, here
            cached = fit()
    if key is not None:
        _SEARCHES[sig] = cached
    return cached


def _stored(sig, fit):
    """The FTS fits of ``sig`` kept on disk (:mod:`replicate.claims.cache`, keyed by the run,
    the search and the package's code): read back, or ``fit()`` computed by one process under
    a lock while any other that asks waits for it (:func:`replicate.claims.cache.shared`)."""
    from ...claims import cache

    path = cache.folder() / f"fits-{cache.code_version()}" / f"{cache.name('fts', sig)}.pkl"
    return cache.shared(path, fit)


def posthoc_logits(val_logits, val_labels, test_logits, test_labels, posthoc_settings=POSTHOC,
                   select=("nll", "adaece"), metrics=("accuracy", "nll", "adaece"), grid="code", gammas=None,
                   link: str = "intended", clamp=None, n_bins: int = 15, paper_compat: bool = False,
                   _key=None) -> pd.DataFrame:
    """Test metrics after each post-hoc setting, one row per ``(posthoc, select, metric)``:
    columns :data:`COLUMNS`. ``T`` and ``gamma`` are chosen on the validation logits by
    ``select`` (each of :data:`SELECTORS`) over ``grid`` (:func:`resolve_grid`) and
    ``gammas`` (default the paper's :data:`replicate.posthoc.FTS_GAMMAS`); ``"none"`` has
    ``select`` "" and ``T`` 1. ``link``/``clamp``: the focal map
    (:func:`replicate.posthoc.fit_focal_temperature`); ``overflowed`` counts the test rows
    the authors' guard rewrote (``link="authors"``; 0 otherwise)."""
    settings = _choices("posthoc_settings", posthoc_settings, POSTHOC)
    select = _choices("select", select, SELECTORS)
    names = _choices("metrics", metrics, tuple(POSTHOC_METRICS))
    temps, _ = resolve_grid(grid)
    if link not in ("intended", "authors"):
        raise ValueError(f"link must be one of intended, authors; got {link!r}")
    clamp = check_clamp(clamp)
    zv, zt = posthoc._check_logits(val_logits), posthoc._check_logits(test_logits)
    yv, yt = posthoc._check_labels(val_labels, zv), posthoc._check_labels(test_labels, zt)
    rows, idx = [], np.arange(len(yt))

    def add(setting, sel, p, logp_y, T, g, over=0):
        for m, v in _test_scores(p, logp_y, yt, names, n_bins).items():
            rows.append((setting, sel, link, m, v, T, g, over))

    if "none" in settings:
        lp = _m._log_softmax(zt)
        add("none", "", np.exp(lp), lp[idx, yt], 1.0, math.nan)
    if "ts" in settings:
        for sel in select:
            T = posthoc.fit_temperature(zv, yv, method="grid", metric=sel, grid=temps, n_bins=n_bins,
                                        paper_compat=paper_compat, warn=False).T
            lp = _m._log_softmax(zt / T)
            add("ts", sel, np.exp(lp), lp[idx, yt], T, math.nan)
    if "fts" in settings:
        fits = _fts_fits(zv, yv, select, temps, gammas, link, clamp, n_bins, paper_compat, _key)
        for sel in select:
            T, g = fits[sel].T, fits[sel].gamma
            if link == "intended":
                lp = fts_log_probs(zt, T, g, clamp)
                add("fts", sel, np.exp(lp), lp[idx, yt], T, g)
            else:
                p, bad = authors_focal_link(zt, T, g)
                with np.errstate(divide="ignore"):
                    add("fts", sel, p, np.log(p[idx, yt]), T, g, int(bad.sum()))
    return pd.DataFrame(rows, columns=COLUMNS)


def evaluate_posthoc(runs: dict, log=None, **kw) -> pd.DataFrame:
    """:func:`posthoc_logits` of every run of ``{(method, seed): Run}`` (keywords passed on),
    with ``method`` and ``seed`` in front. FTS fits are kept for the session (a run is
    fitted once per setting). ``log(message)`` reports each run."""
    frames = []
    for i, ((key, seed), run) in enumerate(runs.items(), 1):
        f = posthoc_logits(*run.logits("val"), *run.logits("test"), _key=run.key, **kw)
        f.insert(0, "seed", seed)
        f.insert(0, "method", key)
        frames.append(f)
        if log:
            log(f"[{i}/{len(runs)}] post-hoc calibration of {key} seed {seed} ({kw.get('link', 'intended')} map)")
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["method", "seed", *COLUMNS])


def fts_search(run, select: str = "adaece", grid="code", gammas=None, link: str = "intended", clamp=None,
               n_bins: int = 15, paper_compat: bool = False) -> pd.DataFrame:
    """The whole validation search of a run's FTS fit (``gamma, T``, the score, ``overflowed``),
    from the same session cache as :func:`evaluate_posthoc`."""
    select = _choices("select", select, SELECTORS)
    temps, _ = resolve_grid(grid)
    zv, yv = run.logits("val")
    return _fts_fits(zv, yv, select, temps, gammas, link, check_clamp(clamp), n_bins, paper_compat,
                     run.key)[select[0]].search


def optimal_temperatures(runs: dict, select: str = "adaece", **kw) -> pd.DataFrame:
    """For each run and each ``gamma_ev``, the ``T`` of the grid with the lowest validation
    ``select`` (ties: the smaller T): ``method, seed, gamma, T, score`` (FTS Fig. 8)."""
    rows = []
    for (key, seed), run in runs.items():
        s = fts_search(run, select, **kw)
        for g, part in s.groupby("gamma", sort=False):
            k = posthoc._first_min(part[select].to_numpy())
            rows.append((key, seed, float(g), float(part["T"].iloc[k]), float(part[select].iloc[k])))
    return pd.DataFrame(rows, columns=["method", "seed", "gamma", "T", "score"])


def _mode(values) -> float:
    v = pd.Series(values).dropna()
    return math.nan if v.empty else float(v.value_counts().sort_index().idxmax())


def summarise_posthoc(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample standard deviation over seeds per ``method, posthoc, select, link,
    metric``; ``T`` and ``T_std`` over seeds; ``gamma`` the value chosen most often (ties:
    the smallest) and ``gammas`` every seed's choice; ``n_seeds``."""
    keys = ["method", "posthoc", "select", "link", "metric"]
    g = frame.groupby(keys, sort=False)
    out = g.agg(mean=("value", "mean"), std=("value", "std"), T=("T", "mean"), T_std=("T", "std"),
                n_seeds=("seed", "nunique")).reset_index()
    out["gamma"] = g["gamma"].agg(_mode).to_numpy()
    out["gammas"] = g["gamma"].agg(lambda s: ", ".join(f"{v:g}" for v in s.dropna())).to_numpy()
    return out


def cell(summary: pd.DataFrame, method: str, posthoc_setting: str, select: str, metric: str,
         col: str = "mean", link: str | None = None) -> float:
    """One number of a :func:`summarise_posthoc` or :func:`replicate.comparison.paper_posthoc` frame
    (NaN when absent)."""
    r = summary[(summary["method"] == method) & (summary["posthoc"] == posthoc_setting) & (summary["select"] == select)
                & (summary["metric"] == metric)]
    if link is not None and "link" in r:
        r = r[r["link"] == link]
    return float(r[col].iloc[0]) if len(r) and col in r and pd.notna(r[col].iloc[0]) else math.nan
