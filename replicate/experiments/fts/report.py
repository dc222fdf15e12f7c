"""Everything the FTS chapter (``exp_fts``) computes from its plan and runs, once, as the
sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``fits``
    TS and FTS of every run of the chapter's configurations the store holds (every seed),
    parameters chosen by validation log-loss and by validation equal-mass ECE over the
    chapter's T grid, and each run's optimal T for every gamma_ev (Fig. 8) - the expensive
    grid search, done once (:func:`fits`);
``evaluation``
    the shown runs' post-hoc summary, the layout of Table 1 (:func:`replicate.comparison.summarise_posthoc`);
``claims``
    the claims' verdicts on both sides (:func:`decide`): the paper's Table 1, all three data
    sets, and our runs (every stored seed) within the noise model of :mod:`replicate.comparison.noise`;
``intervals``
    the 95 % interval of each of our Table 1 cells by the same noise model;
``links``, ``grids``, ``clamp``, ``demo``, ``scale_box``
    the authors' focal link beside the intended map, FTS on two T grids, the effect of the
    authors' probability clamp, the guard on a confident synthetic model, the page's box.

FTS on the other experiment chapters' runs is a report of its own, keyed by their runs
(:func:`other_chapters`). :func:`claims` is the builder the claims registry finds: it reads
only the sections its claims need (``fits``, ``claims``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Draws, Exact, Missing
from ...comparison import chapter
from ...comparison import report as rpt
from ...comparison.noise.runs import noise_text
from .claims import BY, FOCAL, definitions, names, r2, temperature
from .plan import CHAPTER, GAMMA_TR, PAPER, SECTION, check_grid, plan

#: What the paper's side is.
PAPER_SOURCE = "Komisarenko & Kull (2024), Table 1 (CIFAR-100, CIFAR-10, TinyImageNet; ResNet-50), every printed row"
#: Why the paper's side has no number for a quantity it does not print.
ABSENT = {
    "fig8": "Fig. 8 prints no numbers (the paper's text only says 'close to linear')",
    "cross": "the paper prints the ECE with the parameters chosen by validation ECE and the log-loss chosen by "
             "validation log-loss only, not the other selection's",
    "fl2": "Table 1 prints no focal loss with gamma_tr 2 (Sec. 5.1 trains it)",
    "fl5": "Table 1 prints no focal loss with gamma_tr 5 (Sec. 5.1 trains it)",
}
#: Table 1's metrics and the selection whose numbers fill each (accuracy: either).
TABLE_SELECT = {"accuracy": "adaece", "nll": "nll", "adaece": "adaece"}


# ----------------------------------------------------------------------------- the paper's side
def paper_side() -> Exact:
    """Table 1, all three data sets, as evidence without noise: each cell under its post-hoc
    method and selection (setting ``by log-loss`` / ``by ECE``; the accuracy, printed once per
    method, under both; the log-loss, printed in nats, in the book's unit, nats x100, as the
    noise model scores ours), the printed TS temperatures as the ``T`` quantities of
    :func:`.claims.temperature`, and why Fig. 8 and the other selection's cells are absent."""
    from ...comparison.layouts import paper_long, paper_rows

    printed = paper_long(PAPER, ["table1_accuracy", "table1_nll", "table1_adaece"]).setting.unique()
    long = paper_rows(PAPER, settings=tuple(printed))
    rows, named = [], {}
    for r in long.itertuples(index=False):
        s = dict(kv.split("=") for kv in r.setting.split(","))
        for by in ([s["select"]] if "select" in s else list(BY)):
            rows.append((r.row, r.dataset_key, r.model_key, r.method, r.metric, s["posthoc"], BY[by],
                         float(r.mean) * (100 if r.metric == "nll" else 1)))
        if s["posthoc"] == "ts" and s.get("select") == r.metric and math.isfinite(r.T):
            named[(r.row, temperature(r.method, r.metric).key)] = float(r.T)
    frame = pd.DataFrame(rows, columns=["row", "dataset", "model", "method", "metric", "post", "setting", "value"])
    absent = {r2(k, w).key: ABSENT["fig8"] for k in FOCAL for w in ("T", "inverse_T")}
    absent.update({BY["nll"]: ABSENT["cross"], BY["adaece"]: ABSENT["cross"], "fl2": ABSENT["fl2"],
                   "fl5": ABSENT["fl5"]})
    return Exact(frame, PAPER_SOURCE, names(), named, absent)


# ----------------------------------------------------------------------------- our side
def _of(frame: pd.DataFrame, runs: dict) -> np.ndarray:
    """The lines of ``frame`` (columns ``method``, ``seed``) whose run is in ``runs``."""
    return np.array([(m, s) in runs for m, s in zip(frame["method"], frame["seed"])], dtype=bool)


def fits(runs: dict, grid: str = "code", log=None) -> dict:
    """The grid searches of ``runs`` (``{(method, seed): Run}``), done once: ``long``, TS and
    FTS chosen by validation log-loss and equal-mass ECE, scored on the test set
    (:func:`replicate.comparison.evaluate_posthoc`), and ``paths`` ``{selection: frame}``, each
    run's optimal T for every gamma_ev (:func:`replicate.comparison.optimal_temperatures`,
    read from the same searches)."""
    long = cmp.evaluate_posthoc(runs, grid=grid, log=log)
    return {"long": long, "paths": {by: cmp.optimal_temperatures(runs, by, grid=grid) for by in BY}}


def scored(run, post: str, T: float, gamma: float):
    """``run``'s test probabilities after TS (``T``) or FTS (``T``, ``gamma``, the intended
    map) as the noise model reads them (:class:`replicate.comparison.noise.Scored`)."""
    from ... import metrics as _m
    from ...comparison.noise import Scored
    from ...posthoc.fts import fts_log_probs

    z, y = run.logits("test")
    z, y = np.asarray(z, dtype=np.float64), np.asarray(y, dtype=np.int64)
    lp = fts_log_probs(z, T, gamma) if post == "fts" else _m._log_softmax(z / T)
    return Scored(np.exp(lp), y, lp[np.arange(len(y)), y], {}, float(T), float(gamma) if post == "fts" else math.nan)


def _mass_ece(conf: np.ndarray, hit: np.ndarray, w: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """Equal-mass ECE (:func:`replicate.metrics.adaptive_ece`) of one confidence vector on each
    resample (row) of the weights ``w``: the bins' sums of
    :func:`replicate.comparison.noise.scores.mass_sums` (the examples sorted by confidence
    once, each resample's edges read from its cumulative weights), over the resample size."""
    from ...comparison.noise.scores import mass_sums

    _, sc, sh = mass_sums(conf, hit, w, n_bins)
    return np.abs(sh - sc).sum(axis=1) / int(round(w[0].sum()))


def t_by_adaece(val_logits, val_labels, w: np.ndarray, grid, n_bins: int = 15) -> np.ndarray:
    """The TS temperature chosen by validation equal-mass ECE (:func:`replicate.posthoc.fit_temperature`,
    ``metric="adaece"``) on each resample (row) of the weights ``w``: the first T within a
    relative 1e-12 of the resample's minimum, as :func:`replicate.comparison.noise.temperatures.replicated`
    finds it by refitting one resample at a time (the tests check both agree).

    Vectorised (:func:`_mass_ece`), and only where a T can win: a resample's ECE at T is at
    least ``|accuracy - mean confidence|`` (the bins' gaps sum to the total gap), a bound that
    costs one matrix product for every T and resample; the ECE is computed near the
    full-data choice first, then at every T whose bound does not exceed a resample's best."""
    from ...comparison.noise.temperatures import _first_min
    from ...posthoc.fts_grid import class_sum

    z = np.asarray(val_logits, dtype=np.float64)
    y = np.asarray(val_labels, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    grid = np.asarray(cmp.resolve_grid(grid)[0] if isinstance(grid, str) else grid, dtype=np.float64)
    hit = (z.argmax(axis=1) == y).astype(np.float64)
    confs = np.empty((len(grid), len(y)))
    zc = np.ascontiguousarray(z.T)                         # class-major: the same row sums, faster
    for j, t in enumerate(grid):
        zt = zc / t
        zt -= zt.max(axis=0)
        confs[j] = 1.0 / class_sum(np.exp(zt))
    total = w.sum(axis=1, keepdims=True)
    bound = np.abs(w @ hit[:, None] - w @ confs.T) / total         # (resamples, T)
    ece = np.full((w.shape[0], len(grid)), np.inf)
    first = int(_first_min(np.stack([_mass_ece(c, hit, np.ones((1, len(y))), n_bins) for c in confs]).T)[0])
    todo = {j: np.arange(w.shape[0]) for j in range(max(0, first - 2), min(len(grid), first + 3))}
    while todo:
        for j, rows in todo.items():
            ece[rows, j] = _mass_ece(confs[j], hit, w[rows], n_bins)
        best = ece.min(axis=1, keepdims=True)
        need = ~np.isfinite(ece) & (bound <= best * (1 + 1e-6) + 1e-12)
        todo = {j: np.flatnonzero(need[:, j]) for j in np.flatnonzero(need.any(axis=0))}
    return grid[_first_min(ece)]


def named(wide: dict, row: str, frames: dict, grid: str) -> dict:
    """The chapter's :class:`~replicate.claims.evidence.Named` quantities of the focal models,
    each computed when first read: the TS temperature chosen by each criterion (mean over the
    seeds; resampled as the noise model resamples a temperature: seeds, then the validation
    examples, T chosen again on each) and Fig. 8's R² (no resampling: see its noise text)."""
    from ...comparison.noise import resampling
    from ...comparison.noise import temperatures as _t
    from .figures import fig8_lines

    long, paths = frames["long"], frames["paths"]
    ts = long[(long.posthoc == "ts") & (long.metric == "accuracy")]
    out = {}
    for k in (k for k in FOCAL if any(m == k for m, _ in wide)):
        seeds = sorted(s for m, s in wide if m == k)
        used = ((row, names().method(k), tuple(seeds)),)
        for by in BY:
            def draws(k=k, by=by, seeds=seeds, used=used):
                val = [wide[(k, s)].logits("val") for s in seeds]
                w = resampling.weights(len(val[0][1]), resampling.N_BOOT, 0, "val")[:resampling.N_BOOT_SLOW]
                per = np.stack([_t.replicated(z, y, w, "nll", grid=cmp.resolve_grid(grid)[0]) if by == "nll"
                                else t_by_adaece(z, y, w, grid) for z, y in val])
                point = float(ts[(ts.method == k) & (ts["select"] == by) & ts.seed.isin(seeds)]["T"].mean())
                what = f"the {len(val[0][1]):,} validation examples, T chosen again by validation " \
                       f"{'log-loss' if by == 'nll' else 'equal-mass ECE'} on each"
                return Draws(point, resampling.over_seeds(per, 0), noise_text(len(seeds), per.shape[1], what), used)
            out[temperature(k, by).key] = draws
        mine = paths["adaece"][(paths["adaece"].method == k) & paths["adaece"].seed.isin(seeds)]
        for what in ("T", "inverse_T"):
            def line(mine=mine, what=what, used=used):
                fit = fig8_lines(mine, what)["r2"].iloc[0]
                return Draws(float(fit), None, f"R² of the least-squares line through the mean over the {len(used[0][2])} "
                             f"seed(s) of the T chosen for each gamma_ev: not resampled (each resample would repeat "
                             f"every run's FTS grid search), decided on its value", used)
            out[r2(k, what).key] = line
    return _Lazy(out)


class _Lazy(dict):
    """``{key: build()}`` read as ``{key: value}``, each value built when first read
    (:class:`replicate.comparison.noise.RowRuns` reads ``named`` with ``get``)."""

    def get(self, key, default=None):
        if key not in self:
            return default
        v = super().__getitem__(key)
        if callable(v):
            v = v()
            self[key] = v
        return v

    __getitem__ = get


def ours(runs: dict, frames: dict, grid: str, source: str):
    """Our side: one row of :class:`replicate.comparison.noise.RunsEvidence` holding every run of
    ``runs`` (``{(method, seed): Run}``) under the settings ``by log-loss`` and ``by ECE``,
    each with its own TS and FTS calibration (the parameters of ``frames["long"]``, the
    chapter's fits) and the chapter's named quantities (:func:`named`)."""
    from ...comparison.noise import RowRuns, RunsEvidence

    chosen = frames["long"][frames["long"].posthoc.isin(["ts", "fts"])]
    chosen = chosen[_of(chosen, runs)]
    chosen = chosen.drop_duplicates(["method", "seed", "posthoc", "select"])
    first = next(iter(runs.values()))
    name = f"{first.resolved['dataset']}, {first.resolved['model']}"
    cal = {(r.method, BY[r.select], int(r.seed), r.posthoc): scored(runs[(r.method, r.seed)], r.posthoc, r.T, r.gamma)
           for r in chosen.itertuples(index=False)}
    row = RowRuns(name, first.resolved["dataset"], first.resolved["model"],
                  {(m, BY[by], s): run for (m, s), run in runs.items() for by in BY},
                  named=named(runs, name, frames, grid), scored=cal)
    return RunsEvidence([row], source, names())


def decide(p: cmp.Plan, runs: dict | None, frames: dict | None = None, grid: str = "code", ev=None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`.claims.definitions` on our runs
    (every seed the store holds of the chapter's configurations; ``frames`` their
    :func:`fits`; or why they are missing) and on the paper's Table 1."""
    if ev is None and runs:
        wide = rpt.with_store_seeds(runs["image"], p.group("image"))
        ev = ours(wide, frames if frames is not None else fits(wide, grid), grid, p.profile)
    ev = ev or Missing("ours", p.profile, chapter.not_in_store(p.profile, p))
    return claims_log(PAPER, CHAPTER, definitions(), [ev, paper_side()], SECTION, names())


def intervals(ev, methods) -> dict:
    """``{(method, post, metric): {"low", "high", "how"}}``: the 95 % interval of each of our
    Table 1 cells (log-loss in nats) under the noise model, from ``ev`` (:func:`ours` of the
    shown runs)."""
    from ...claims.evidence import Cell

    row, out = ev.rows()[0].name, {}
    for m in methods:
        for post in ("ts", "fts"):
            for metric, by in TABLE_SELECT.items():
                d = ev.draws(row, Cell(m.key, metric, post, BY[by]))
                if isinstance(d, str):
                    continue
                scale = 100.0 if metric == "nll" else 1.0
                lo, hi = np.quantile(d.reps, [0.025, 0.975]) / scale
                out[(m.key, post, metric)] = {"low": float(lo), "high": float(hi), "how": "95 % interval: " + d.noise}
    return out


# ----------------------------------------------------------------------------- the authors' link, grids, clamp
def pair_changes(runs: dict, paths: dict, grid: str = "code") -> pd.DataFrame:
    """Per (method, seed, gamma_ev, selection): the T the intended map (``paths``, from
    :func:`fits`) and the authors' link choose on the validation set, whether they differ,
    whether the authors' T is the grid's smallest, and the validation rows its guard
    rewrote at that T."""
    temps, _ = cmp.resolve_grid(grid)
    frames = []
    for sel in BY:
        a = paths[sel][_of(paths[sel], runs)]
        b = cmp.optimal_temperatures(runs, sel, grid=grid, link="authors")
        m = a.merge(b, on=["method", "seed", "gamma"], suffixes=("_intended", "_authors"))
        over = []
        for r in m.itertuples():
            s = cmp.fts_search(runs[(r.method, r.seed)], sel, grid=grid, link="authors")
            hit = s[np.isclose(s["gamma"], r.gamma) & np.isclose(s["T"], r.T_authors)]
            over.append(float(hit["overflowed"].iloc[0]) if len(hit) else math.nan)
        frames.append(m.assign(select=sel, overflowed=over))
    out = pd.concat(frames, ignore_index=True)
    out["differs"] = ~np.isclose(out["T_intended"], out["T_authors"])
    out["at_grid_min"] = np.isclose(out["T_authors"], temps.min())
    return out[["method", "seed", "gamma", "select", "T_intended", "T_authors", "differs", "at_grid_min",
                "overflowed"]]


def links(runs: dict, frames: dict, grid: str = "code", log=None) -> dict:
    """FTS of ``runs`` with the authors' link beside the intended map (from ``frames``, the
    chapter's :func:`fits`): ``frame`` (:func:`replicate.comparison.evaluate_posthoc` layout,
    column ``link``), ``pairs`` (:func:`pair_changes`) and ``searches`` (one run's validation
    search under each map, for the figure)."""
    kw = dict(grid=grid, select=tuple(BY), metrics=tuple(TABLE_SELECT))
    theirs = cmp.evaluate_posthoc(runs, posthoc_settings=("fts",), link="authors", log=log, **kw)
    long = frames["long"]
    mine = long[long.posthoc.isin(["ts", "fts"]).to_numpy() & _of(long, runs)]
    demo = next(iter(runs.values()))
    searches = {link: cmp.fts_search(demo, "adaece", grid=grid, link=link) for link in ("intended", "authors")}
    return {"frame": pd.concat([mine, theirs], ignore_index=True), "pairs": pair_changes(runs, frames["paths"], grid),
            "searches": searches, "demo_key": next(iter(runs))}


def grids(runs: dict, grid_names=("code", "paper"), log=None) -> dict:
    """``{grid: summary}``: FTS of ``runs`` on each temperature grid
    (:func:`replicate.comparison.summarise_posthoc`)."""
    return {g: cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, posthoc_settings=("fts",), grid=g, log=log))
            for g in grid_names}


def clamp_effect(logit_sets: dict, gammas=None, T: float = 1.0, clamp: float | None = None) -> pd.DataFrame:
    """Per gamma_ev (rows) and set of logits (columns, ``{label: (N, C) logits}``): the largest
    change of any probability when ``q`` is clipped to ``[clamp, 1 - clamp]`` (the authors'
    clamp by default) before the focal map, at temperature ``T``."""
    from ...posthoc import FTS_GAMMAS
    from ...posthoc.fts import AUTHORS_CLAMP, fts_log_probs

    clamp = AUTHORS_CLAMP if clamp is None else clamp
    out = {}
    for label, z in logit_sets.items():
        out[label] = {g: float(np.abs(np.exp(fts_log_probs(z, T, g, clamp)) - np.exp(fts_log_probs(z, T, g))).max())
                      for g in (FTS_GAMMAS if gammas is None else gammas)}
    frame = pd.DataFrame(out)
    frame.index.name = "gamma_ev"
    return frame


def confident_logits(scale: float = 14.0, beta: float = 1.6, n: int = 15000, seed: int = 0):
    """Synthetic logits of a confident 10-class model (:class:`replicate.synthetic.LogitModel`:
    true logits N(0, ``scale``²), reported ``beta`` times sharper, like a cross-entropy network
    needing T = ``beta``) and their labels."""
    from ...synthetic import LogitModel

    s = LogitModel(n_classes=10, beta=beta, scale=scale).sample(n, rng=seed)
    return s.logits, s.labels


def confident_demo(scale: float = 14.0, beta: float = 1.6, n_val: int = 5000, n_test: int = 10000, seed: int = 0,
                   grid: str = "code") -> tuple[pd.DataFrame, float]:
    """FTS of both maps on :func:`confident_logits` split ``n_val`` / ``n_test`` as CIFAR-10's
    validation and test sets (the layout of :func:`replicate.comparison.posthoc_logits`,
    long), and the model's test accuracy (%)."""
    z, y = confident_logits(scale, beta, n_val + n_test, seed)
    val, test = (z[:n_val], y[:n_val]), (z[n_val:], y[n_val:])
    f = pd.concat([cmp.posthoc_logits(*val, *test, posthoc_settings=("fts",), grid=grid, link=link)
                   for link in ("intended", "authors")], ignore_index=True)
    return f, 100 * float(np.mean(test[0].argmax(1) == test[1]))


# ----------------------------------------------------------------------------- the report
def report(p: cmp.Plan, runs: dict, grid: str = "code", log=None) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{"image": {(method, seed): Run}}``)
    over the T grid ``grid``."""
    from ...book.scale import ScaleBox
    from ...comparison import scale

    grid = check_grid(grid)
    shown = runs["image"]
    wide = rpt.with_store_seeds(shown, p.group("image"))
    held: dict = {}

    def evidence(r, which):
        if which not in held:
            held[which] = ours(wide if which == "wide" else shown, r["fits"], grid, p.profile)
        return held[which]

    def one(long):
        return long[_of(long, shown)]

    sections = {
        "fits": lambda r: fits(wide, grid, log),
        "evaluation": lambda r: cmp.summarise_posthoc(one(r["fits"]["long"])),
        "claims": lambda r: decide(p, runs, ev=evidence(r, "wide"), grid=grid),
        "intervals": lambda r: intervals(evidence(r, "wide" if set(wide) == set(shown) else "shown"),
                                         p.methods["image"]),
        "paths": lambda r: one(r["fits"]["paths"]["adaece"])[lambda f: f.method.isin(list(GAMMA_TR))],
        "links": lambda r: links(shown, r["fits"], grid, log),
        "grids": lambda r: grids({k: v for k, v in shown.items() if k[1] == p.seeds[0]}, log=log),
        "clamp": lambda r: clamp_effect({"our runs": np.concatenate([x.logits("test")[0] for x in shown.values()]),
                                         "synthetic confident model": confident_logits()[0][5000:]}),
        "demo": lambda r: confident_demo(grid=grid),
        "scale_box": lambda r: ScaleBox(scale.describe(shown)),
    }
    return rpt.Report(CHAPTER, p.profile, rpt.keys_of(wide), sections, extra=f"grid={grid}")


def other_chapters(profile: str, grid: str = "code") -> list:
    """FTS on every other experiment chapter's runs at ``profile`` (read from the store, never
    trained; a group with a missing run is left out): ``[(title, caption, frame)]`` of
    :func:`replicate.comparison.fts_column` (equal-mass ECE, chosen by validation equal-mass
    ECE), a report of its own keyed by those runs."""
    from .. import CHAPTERS, chapter_plan

    found = {}
    for ch in CHAPTERS:
        if ch == CHAPTER:
            continue
        q = chapter_plan(ch, profile=profile)
        for g in q.groups:
            got = cmp.load(q, g)
            if got:
                found[(ch, g)] = (got[g], q.methods[g])

    def build(r):
        out = []
        for (ch, g), (runs, methods) in found.items():
            src = cmp.describe_runs(runs, cmp.data_name(next(iter(runs.values()))))
            col = cmp.fts_column(runs, methods, metric="adaece", select="adaece", grid=grid)
            out.append((f"{ch} ({g})", cmp.fts_caption("adaece", "adaece", grid, src), col))
        return out
    keys = rpt.keys_of({f"{ch}/{g}": runs for (ch, g), (runs, _) in found.items()})
    return rpt.Report(f"{CHAPTER}-others", profile, keys, {"tables": build}, extra=f"grid={grid}")["tables"]


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained), decided on both sides."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p)
    return decide(p, None) if runs is None else report(p, runs).claims
