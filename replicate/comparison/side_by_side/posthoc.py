"""Post-hoc calibration tables: a paper's printed TS/FTS table in our layout, both side by
side in the paper's layout, and the "+ FTS" column any chapter can add to its tables.

The layout of :func:`replicate.comparison.summarise_posthoc`: one row per ``method,
posthoc, select, link, metric`` with ``mean, std, T, T_std, gamma, gammas, n_seeds``.
"""
from __future__ import annotations

import math

import pandas as pd

from ..evaluation.posthoc import (GRID_NAMES, POSTHOC_METRICS, SELECT_NAMES, cell, evaluate_posthoc, resolve_grid,
                                 summarise_posthoc)
from ..methods import Method

SUMMARY_COLUMNS = ["dataset", "model", "method", "posthoc", "select", "link", "metric", "mean", "std", "T", "T_std",
                   "gamma", "gammas", "n_seeds", "note"]
#: the paper's column name of each metric (FTS Table 1)
HEADINGS = {"accuracy": "Accuracy", "nll": "Log-loss", "adaece": "ECE (equal-mass)", "ece": "ECE (equal-width)"}


def _setting(text: str) -> dict:
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def paper_posthoc(paper: str = "komisarenko2024", dataset: str | None = None, model: str | None = None
                  ) -> pd.DataFrame:
    """The paper's printed post-hoc numbers (rows whose ``setting`` names ``posthoc=``), in
    the layout of :func:`replicate.comparison.summarise_posthoc` plus ``dataset``, ``model``
    and ``note`` (columns :data:`SUMMARY_COLUMNS`), filtered to the printed ``dataset`` /
    ``model`` labels when given. Printed once per post-hoc method, accuracy is listed under
    each selection metric of the table (the paper: selection does not change it); the
    printed gamma_ev of an FTS row is set on every selection (the paper prints one)."""
    from ... import paper_tables

    info = paper_tables.paper_info(paper)
    tables = [t for ts in info.get("metric_tables", {}).values() for t in ts]
    frames = [paper_tables.get(paper, t) for t in dict.fromkeys(tables)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    df = df[df["setting"].str.contains("posthoc=")] if len(df) else df
    if not len(df):
        raise ValueError(f"paper {paper!r} prints no post-hoc (posthoc=...) table")
    if dataset is not None:
        df = df[df["dataset"] == dataset]
    if model is not None:
        df = df[df["model"] == model]
    selects = sorted({_setting(s).get("select", "") for s in df["setting"]} - {""})
    gam = {}
    for t in info.get("parameter_tables", {}).get("gamma_ev", ()):
        g = paper_tables.get(paper, t)
        gam.update({(r.dataset, r.model, r.method): r.value for r in g.itertuples()})
    rows = []
    for r in df.itertuples():
        s = _setting(r.setting)
        for sel in ([s["select"]] if "select" in s else selects):
            g = gam.get((r.dataset, r.model, r.method), math.nan) if s["posthoc"] == "fts" else math.nan
            rows.append((r.dataset, r.model, r.method, s["posthoc"], sel, "", r.metric, r.value, r.spread,
                         r.optimal_T, math.nan, g, "" if math.isnan(g) else f"{g:g}", 0, r.note))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _fmt(mean, std=math.nan, T=math.nan, digits=2) -> str:
    if math.isnan(mean):
        return "–"
    s = f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if not math.isnan(std) else "")
    return s + (f" ({T:.2f})" if not math.isnan(T) else "")


#: the selection metric whose numbers fill each metric's column (FTS Table 1: log-loss chosen
#: by log-loss, ECE by ECE; accuracy does not depend on it for the intended map)
TABLE_SELECT = {"accuracy": "adaece", "nll": "nll", "adaece": "adaece", "ece": "ece"}


#: the two rows of a method in Table 1: (setting, row name)
SETTINGS = (("ts", "TS"), ("fts", "+ FTS"))


def _table_cells(methods, metrics):
    """The cells of the Table 1 layout in order: ``(method, setting, row name, metric,
    selection metric, heading, digits)`` (shared by :func:`posthoc_table` and :func:`posthoc_tips`)."""
    for m in methods:
        for setting, name in SETTINGS:
            for metric in metrics:
                yield m, setting, name, metric, TABLE_SELECT[metric], HEADINGS[metric], 1 if metric == "accuracy" else 2


def posthoc_table(ours: pd.DataFrame, paper: pd.DataFrame | None, methods, metrics=("accuracy", "nll", "adaece"),
                  link: str = "intended") -> pd.DataFrame:
    """The FTS paper's Table 1 layout, paper beside ours: two rows per method (TS, and
    "+ FTS"), per metric the paper's cell and ours (mean ± sd over seeds, the mean optimal
    T in brackets; a metric's numbers use the selection of :data:`TABLE_SELECT`), and the
    chosen gamma_ev (paper; ours by log-loss and by ECE: the most frequent over seeds, every
    seed's in brackets when they differ). ``ours``: :func:`summarise_posthoc`; ``paper``:
    :func:`paper_posthoc` for one data set (None: "–")."""
    paper = paper if paper is not None else pd.DataFrame(columns=SUMMARY_COLUMNS)
    out = {}
    for m, setting, name, metric, sel, head, digits in _table_cells(methods, metrics):
        row = out.setdefault((m.label, name), {})

        def t(f, key, **k):
            return cell(f, key, setting, sel, metric, "T", **k) if metric != "accuracy" else math.nan

        row[(head, "paper")] = _fmt(cell(paper, m.compared_with, setting, sel, metric),
                                    cell(paper, m.compared_with, setting, sel, metric, "std"),
                                    t(paper, m.compared_with), digits)
        row[(head, "ours")] = _fmt(cell(ours, m.key, setting, sel, metric, link=link),
                                   cell(ours, m.key, setting, sel, metric, "std", link=link),
                                   t(ours, m.key, link=link), digits)
        if setting == "fts" and metric == metrics[-1]:     # the chosen gamma_ev, after the metrics
            row[("γ_ev", "paper")] = _fmt(cell(paper, m.compared_with, "fts", "adaece", metrics[-1], "gamma"))
            for by in ("nll", "adaece"):
                r = ours[(ours["method"] == m.key) & (ours["posthoc"] == "fts") & (ours["select"] == by)
                         & (ours["link"] == link)]
                g = cell(ours, m.key, "fts", by, metrics[-1], "gamma", link=link)
                every = r["gammas"].iloc[0] if len(r) else ""
                text = "–" if math.isnan(g) else f"{g:g}" + (f" ({every})" if len(set(every.split(", "))) > 1
                                                             else "")
                row[("γ_ev", f"ours: {SELECT_NAMES[by]}")] = text
    frame = pd.DataFrame(out).T.fillna("")
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.names = ["model", "post-hoc"]
    return frame


def fts_column(runs: dict, methods, metric: str = "ece", select: str = "ece", grid="code", **kw) -> pd.DataFrame:
    """"+ FTS" for any chapter's runs ``{(method, seed): Run}``: per method, ``metric`` on the
    test set before calibration, after TS and after FTS (mean ± sd over seeds), both fitted
    by validation ``select`` over the same ``grid`` (chosen T, and gamma_ev, in brackets),
    and FTS minus TS. Keywords go to :func:`replicate.comparison.posthoc_logits`."""
    if metric not in POSTHOC_METRICS:
        raise ValueError(f"metric must be one of {', '.join(POSTHOC_METRICS)}; got {metric!r}")
    summ = summarise_posthoc(evaluate_posthoc(runs, select=select, metrics=(metric,), grid=grid, **kw))
    rows = {}
    for m in methods:
        if not isinstance(m, Method):
            raise ValueError(f"methods must be replicate.comparison.Method objects; got {m!r}")
        if not (summ["method"] == m.key).any():
            continue
        c = {s: {k: cell(summ, m.key, s, "" if s == "none" else select, metric, k)
                 for k in ("mean", "std", "T", "gamma")} for s in ("none", "ts", "fts")}
        fts = _fmt(c["fts"]["mean"], cell(summ, m.key, "fts", select, metric, "std"))
        rows[m.label] = {"before": _fmt(c["none"]["mean"], c["none"]["std"]),
                         "TS": _fmt(c["ts"]["mean"], c["ts"]["std"], c["ts"]["T"]),
                         "+ FTS": f"{fts} (γ_ev {c['fts']['gamma']:g}, T {c['fts']['T']:.2f})",
                         "FTS − TS": _fmt(c["fts"]["mean"] - c["ts"]["mean"])}
    frame = pd.DataFrame(rows).T
    frame.index.name = "method"
    return frame


def fts_caption(metric: str, select: str, grid, source: str) -> str:
    """Caption of an :func:`fts_column` table: what was fitted, on which grid, and the runs."""
    _, grid_text = resolve_grid(grid)
    return (f"{POSTHOC_METRICS[metric][0]} on the test set: before calibration, after temperature scaling (TS) "
            f"and after focal temperature scaling (FTS, Komisarenko & Kull 2024), both chosen by validation "
            f"{SELECT_NAMES[select]} over {grid_text} (FTS: gamma_ev in -0.5, -0.25, 0.05, 0.25, 0.37, 0.5, "
            f"0.75, 1, 5); mean ± sd over seeds, T (and the gamma_ev chosen most often) in brackets. {source}.")


def posthoc_tips(table: pd.DataFrame, ours: pd.DataFrame, methods, metrics=("accuracy", "nll", "adaece"),
                 link: str = "intended") -> pd.DataFrame:
    """Hover texts for :func:`posthoc_table`'s ``table`` (same shape): each of our cells gets
    the 95 % Student-t interval of its mean over the seeds, mean ± t(0.975, n-1) sd / sqrt(n),
    cut to the range the metric can take (an NLL or AdaECE never below 0:
    :func:`replicate.comparison.stats.seed_interval`, saying so where it is cut)
    ("[low, high] (95 % interval over n seeds)"); other cells, and cells of one seed, none.
    ``ours``: the :func:`summarise_posthoc` frame the table shows."""
    from scipy import stats

    from ..stats import metric_range

    tips = pd.DataFrame("", index=table.index, columns=table.columns)
    for m, setting, name, metric, sel, head, digits in _table_cells(methods, metrics):
        mean, sd = (cell(ours, m.key, setting, sel, metric, col, link=link) for col in ("mean", "std"))
        n = cell(ours, m.key, setting, sel, metric, "n_seeds", link=link)
        if math.isnan(mean) or math.isnan(sd) or math.isnan(n) or n < 2:
            continue
        half = stats.t.ppf(0.975, int(n) - 1) * sd / math.sqrt(n)
        lo, hi = metric_range(metric)
        low, high = max(mean - half, lo), min(mean + half, hi)
        cut = [f"{b:g}" for b, out in ((lo, mean - half < lo), (hi, mean + half > hi)) if out]
        tips.loc[(m.label, name), (head, "ours")] = (
            f"[{low:.{digits}f}, {high:.{digits}f}] (95 % interval over {int(n)} seeds"
            + (f"; cut at {' and '.join(cut)}, the metric's range" if cut else "") + ")")
    return tips


def styled(frame: pd.DataFrame, caption: str, precision: int | None = None):
    """A table as a pandas Styler with ``caption`` below it (as
    :func:`replicate.comparison.styled_table`); numbers shown with ``precision`` decimals when given."""
    style = frame.style if precision is None else frame.style.format(precision=precision)
    return style.set_caption(caption).set_table_styles(
        [{"selector": "caption", "props": "caption-side: bottom; font-size: small; text-align: left;"}])


__all__ = ["paper_posthoc", "posthoc_table", "posthoc_tips", "fts_column", "fts_caption", "styled", "TABLE_SELECT", "HEADINGS",
           "SUMMARY_COLUMNS", "GRID_NAMES"]
