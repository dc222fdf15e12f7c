"""Both sides laid out as a paper's tables: ours (:mod:`replicate.comparison.evaluation`)
beside the paper's printed numbers, with the difference, captions and hover intervals.
"""
from __future__ import annotations

import math

import pandas as pd

from ..scale import data_name
from ...papers import get_paper
from ..evaluation.tables import METRIC_NAMES, METRICS, T_SELECTED_BY, _cell, summarise
from ..paper import PaperReference, metric_tables


def _fmt(mean: float, std: float = math.nan, T: float = math.nan, T_std: float = math.nan, digits: int = 2) -> str:
    if math.isnan(mean):
        return "–"
    s = f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if not math.isnan(std) else "")
    if not math.isnan(T):
        s += f" ({T:.2f}" + (f" ± {T_std:.2f}" if not math.isnan(T_std) and T_std > 0 else "") + ")"
    return s


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, metric: str, methods,
                 temperature: bool = True) -> pd.DataFrame:
    """One paper table beside ours: a row per method; for "Pre T" (and "Post T") the paper's
    value, ours (mean ± std over seeds) and ours minus the paper's; post-T cells carry the
    optimal T in brackets. ``ours`` is :func:`replicate.comparison.evaluate_runs` output, ``paper`` a
    :func:`replicate.comparison.paper_values` frame (None or empty: every paper cell "–").
    Each method is compared with the printed method ``Method.compared_with``."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    ours_s = summarise(ours[ours.metric == metric])
    paper_s = paper if paper is not None else pd.DataFrame(columns=["method", "metric", "temperature_scaled"])
    table = {}
    for m in methods:
        row = {}
        for scaled, phase in [(False, "Pre T")] + ([(True, "Post T")] if temperature else []):
            o, p = _cell(ours_s, m.key, metric, scaled), _cell(paper_s, m.compared_with, metric, scaled)
            t = (lambda c: (c["T"], c["T_std"])) if scaled else (lambda c: (math.nan, math.nan))
            row[(phase, "paper")] = _fmt(p["mean"], math.nan, *t(p))
            row[(phase, "ours")] = _fmt(o["mean"], o["std"], *t(o))
            row[(phase, "ours − paper")] = _fmt(o["mean"] - p["mean"])
        table[m.label] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "method"
    return frame


def s99_side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, methods) -> pd.DataFrame:
    """Mukhoti et al.'s Table 6 layout: |S99| (% of the test set with confidence >= 0.99)
    and the accuracy on S99, pre and post temperature scaling, paper beside ours."""
    parts = {}
    for phase in ("Pre T", "Post T"):
        for metric, name in (("s99_fraction", "|S99| %"), ("s99_accuracy", "accuracy on S99 %")):
            parts[(phase, name)] = side_by_side(ours, paper, metric, methods)[phase]
    return pd.concat(parts, axis=1)


def describe_runs(runs: dict, data_name: str) -> str:
    """Where our numbers come from, for captions: profile, data (``data_name``, e.g. the
    loaded data set's display name), network, schedule and seeds of ``{(key, seed): Run}``."""
    if not runs:
        raise ValueError("runs must hold at least one run")
    run = next(iter(runs.values()))
    r, epochs = run.resolved, run.resolved["train"]["epochs"]
    params = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                       for k, v in r["model_params"].items())
    seeds = sorted({s for _, s in runs})
    n = f"{r['n_train']:,} training samples" if r["n_train"] else "all training samples"
    return (f"ours: profile {run.config.profile} | data: {data_name} | model: {r['model']}"
            f"{f' ({params})' if params else ''} | {epochs} epoch{'s' if epochs != 1 else ''}, {n} | "
            f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}")


def evidence_label(runs: dict) -> str:
    """A short label of our runs for claims tables (no data loaded): "ours: cpu, cifar10,
    tiny_cnn, seeds 1, 2"."""
    run = next(iter(runs.values()))
    seeds = sorted({s for _, s in runs})
    return (f"ours: {run.config.profile}, {run.resolved['dataset']}, {run.resolved['model']}, "
            f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}")


def table_caption(metric: str, ref: PaperReference, ours: str, selected_by: str | None = None,
                  grid: str = "the grid 0.1..10.0") -> str:
    """Caption of a side-by-side table: the metric, how T was chosen, and both sources."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    tables = [t.replace("table", "") for t in metric_tables(ref.paper).get(metric, ())]
    name = get_paper(ref.paper).short
    if not ref.found:
        where = f"paper: {ref.note}"
    elif tables:
        where = f"paper: {name} Table{'s' if len(tables) > 1 else ''} {', '.join(tables)}, {ref.note}"
    else:
        where = f"paper: not reported by {name}"
    sel = {"ece": "ECE", "adaece": "AdaECE", "nll": "NLL"}[selected_by or T_SELECTED_BY.get(metric, "ece")]
    ts = ("temperature scaling does not change the predicted class" if metric == "error" else
          f"Post T: T chosen on the validation set by {sel} over {grid}, shown in brackets")
    return f"{METRIC_NAMES[metric]}; {ts}. {where}. {ours}."


def interval_tips(frame: pd.DataFrame, methods, intervals: dict, digits: int = 2) -> pd.DataFrame:
    """Tooltips for a :func:`side_by_side` frame: in each "ours" cell whose method has an
    interval in ``intervals`` (``{(method key, temperature scaled): {"low", "high", "how"}}``,
    :func:`replicate.comparison.noise.table_intervals`), "[low, high] (how)"; elsewhere empty."""
    tips = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for m in methods:
        for scaled, phase in ((False, "Pre T"), (True, "Post T")):
            iv = intervals.get((m.key, scaled))
            if iv is None or (phase, "ours") not in frame.columns or m.label not in frame.index:
                continue
            if math.isfinite(iv["low"]):
                tips.loc[m.label, (phase, "ours")] = (f"[{iv['low']:.{digits}f}, {iv['high']:.{digits}f}] "
                                                      f"({iv['how']})")
    return tips


def styled_table(ours: pd.DataFrame, paper: pd.DataFrame | None, metric: str, methods, ref: PaperReference,
                 source: str, intervals: dict | None = None, **caption_kw):
    """:func:`side_by_side` (or :func:`s99_side_by_side` for ``metric="s99"``) as a pandas
    Styler captioned by :func:`table_caption`, ready to display in a chapter. ``intervals``
    (:func:`replicate.comparison.noise.table_intervals` of the same metric) puts each of our
    cells' interval in a tooltip (:func:`interval_tips`) and says so in the caption."""
    if metric == "s99":
        frame = s99_side_by_side(ours, paper, methods)
        cap = table_caption("s99_fraction", ref, source, **caption_kw).replace(
            METRIC_NAMES["s99_fraction"], "|S99| (% of test samples with confidence >= 0.99) and accuracy on S99 (%)")
    else:
        frame = side_by_side(ours, paper, metric, methods, temperature=metric != "error")
        cap = table_caption(metric, ref, source, **caption_kw)
    if intervals:
        cap += " Hover over one of our cells for its interval (the noise of the runs)."
    styler = frame.style.set_caption(cap).set_table_styles(
        [{"selector": "caption", "props": "caption-side: bottom; font-size: small; text-align: left;"}])
    if intervals and metric != "s99":
        styler = styler.set_tooltips(interval_tips(frame, methods, intervals))
    return styler
