"""Our side of a comparison, and both sides laid out as a paper's tables.

:func:`evaluate_logits` recomputes the table metrics (:data:`METRICS`) from validation and
test logits, before and after temperature scaling. T is chosen on the validation set over
a grid (default the papers' 0.1..10.0) by the metric the paper cross-validates on
(:data:`T_SELECTED_BY`: ECE for the ECE, MCE and NLL tables, AdaECE for the AdaECE tables,
Mukhoti et al. Sec. 6; a chapter may pass its paper's own choice). Values are percentages
as the papers print them (NLL and Brier x100); temperatures are not.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import metrics, posthoc, smce
from ..book.scale import data_name
from ..papers import get_paper
from .paper import PaperReference, metric_tables


def _s99(which):
    def f(p, y, z):
        return metrics.s99(p, y, validate=False)[which]
    return f


#: metric -> (name for captions, score(probs, labels, logits) -> fraction). Scores are
#: multiplied by 100 in the tables.
METRICS = {
    "ece": ("ECE (%, 15 equal-width bins)", lambda p, y, z: metrics.ece(p, y, validate=False)),
    "adaece": ("AdaECE (%, 15 equal-mass bins)", lambda p, y, z: metrics.adaptive_ece(p, y, validate=False)),
    "classwise_ece": ("classwise ECE (%, 15 bins)", lambda p, y, z: metrics.classwise_ece(p, y, validate=False)),
    "mce": ("MCE (%, 15 equal-width bins)", lambda p, y, z: metrics.mce(p, y, validate=False)),
    "nll": ("NLL (x100)", lambda p, y, z: metrics.nll(z, y)),
    "error": ("test error (%)", lambda p, y, z: metrics.error_rate(p, y, validate=False)),
    "brier": ("Brier score (x100)", lambda p, y, z: metrics.brier(p, y, validate=False)),
    "smece": ("smooth ECE (%, Blasiok & Nakkiran)", lambda p, y, z: metrics.smooth_ece(p, y, validate=False)),
    "smce": ("smCE (%, Lipschitz, Blasiok et al.)", lambda p, y, z: smce.top_label_smce(p, y, validate=False)),
    "debiased_ece": ("debiased ECE (%, 15 equal-mass bins)",
                     lambda p, y, z: metrics.debiased_ece(p, y, validate=False)),
    "sweep_ece": ("ECE-sweep (%, equal-width)", lambda p, y, z: metrics.ece_sweep(p, y, validate=False)),
    "debiased_ece_30": ("debiased ECE (%, 30 equal-mass bins)",
                        lambda p, y, z: metrics.debiased_ece(p, y, n_bins=30, validate=False)),
    "sweep_ece_mass": ("ECE-sweep (%, equal-mass)",
                       lambda p, y, z: metrics.ece_sweep(p, y, binning="mass", validate=False)),
    "s99_fraction": ("|S99| (%)", _s99(0)),
    "s99_accuracy": ("accuracy on S99 (%)", _s99(1)),
}
METRIC_NAMES = {k: v[0] for k, v in METRICS.items()}
#: metric -> the metric that selects T on the validation set (Mukhoti et al.'s tables)
T_SELECTED_BY = {"ece": "ece", "adaece": "adaece", "classwise_ece": "ece", "mce": "ece", "nll": "ece",
                 "error": "ece", "s99_fraction": "ece", "s99_accuracy": "ece"}
TABLE_METRICS = tuple(T_SELECTED_BY)
SELECTORS = ("ece", "adaece", "nll")


def _check_metrics(names, t_selected_by: dict) -> tuple:
    names = tuple(names)
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}")
    bad = {m: s for m, s in t_selected_by.items() if s not in SELECTORS}
    if bad:
        raise ValueError(f"T can be selected by {', '.join(SELECTORS)}; got {bad}")
    return names


def _scores(logits: np.ndarray, labels: np.ndarray, names, T: float = 1.0) -> dict:
    probs = metrics.probs_from_logits(logits, temperature=T)
    z = np.asarray(logits, dtype=np.float64) / T
    return {m: METRICS[m][1](probs, labels, z) for m in names}


def evaluate_logits(val_logits, val_labels, test_logits, test_labels, n_bins: int = 15, metrics=TABLE_METRICS,
                    t_selected_by: dict | None = None, grid=None) -> pd.DataFrame:
    """Every metric of ``metrics`` on the test set, pre and post temperature scaling (long
    form, percent). Columns ``metric, temperature_scaled, value, T, T_selected_by``; post-T
    rows use the temperature of ``grid`` (default 0.1..10.0) minimising the validation
    value of ``t_selected_by[metric]`` (default :data:`T_SELECTED_BY`, ECE for metrics it
    does not name). ``n_bins`` is the bin count of that validation metric only: the test
    metrics are reported with the papers' 15 bins (call :func:`replicate.metrics.ece` with
    ``n_bins`` for another count)."""
    sel_by = {**T_SELECTED_BY, **(t_selected_by or {})}
    names = _check_metrics(metrics, sel_by)
    val_z, test_z = (np.asarray(z, dtype=np.float64) for z in (val_logits, test_logits))
    pre = _scores(test_z, test_labels, names)
    selectors = sorted({sel_by.get(m, "ece") for m in names})
    temps = {sel: posthoc.fit_temperature(val_z, val_labels, method="grid", metric=sel, n_bins=n_bins,
                                          grid=grid).params["T"] for sel in selectors}
    post = {sel: _scores(test_z, test_labels, [m for m in names if sel_by.get(m, "ece") == sel], T)
            for sel, T in temps.items()}
    rows = []
    for m in names:
        sel = sel_by.get(m, "ece")
        rows.append({"metric": m, "temperature_scaled": False, "value": 100 * pre[m], "T": math.nan,
                     "T_selected_by": ""})
        rows.append({"metric": m, "temperature_scaled": True, "value": 100 * post[sel][m], "T": temps[sel],
                     "T_selected_by": sel})
    return pd.DataFrame(rows)


def evaluate_runs(runs: dict, n_bins: int = 15, **kw) -> pd.DataFrame:
    """:func:`evaluate_logits` of every run of ``{(method, seed): Run}`` (keywords passed on;
    ``n_bins`` only changes how T is selected), with columns ``method`` and ``seed`` in front."""
    frames = []
    for (key, seed), run in runs.items():
        f = evaluate_logits(*run.logits("val"), *run.logits("test"), n_bins=n_bins, **kw)
        f.insert(0, "seed", seed)
        f.insert(0, "method", key)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def summarise(ours: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample standard deviation over seeds (NaN with one seed) per method, metric, TS."""
    g = ours.groupby(["method", "metric", "temperature_scaled"], sort=False)
    return g.agg(mean=("value", "mean"), std=("value", "std"), T=("T", "mean"), T_std=("T", "std"),
                 n_seeds=("seed", "nunique")).reset_index()


def _cell(summ: pd.DataFrame, method: str, metric: str, scaled: bool) -> dict:
    r = summ[(summ.method == method) & (summ.metric == metric) & (summ.temperature_scaled == scaled)]
    if not len(r):
        return {"mean": math.nan, "std": math.nan, "T": math.nan, "T_std": math.nan}
    return {k: float(r[k].iloc[0]) for k in ("mean", "std", "T", "T_std")}


def value(summary: pd.DataFrame, method: str, metric: str, temperature_scaled: bool = False,
          col: str = "mean") -> float:
    """One number (``col``: mean, std, T or T_std) of a :func:`summarise` or
    :func:`replicate.comparison.paper_values` frame; NaN when the frame does not hold it."""
    if col not in ("mean", "std", "T", "T_std"):
        raise ValueError(f"col must be one of mean, std, T, T_std; got {col!r}")
    return _cell(summary, method, metric, temperature_scaled)[col]


def quote(summary: pd.DataFrame, method: str, metric: str, temperature_scaled: bool = False, col: str = "mean",
          digits: int = 2) -> str:
    """:func:`value` as text for prose; "not available" when the frame does not hold it."""
    v = value(summary, method, metric, temperature_scaled, col)
    return "not available" if math.isnan(v) else f"{v:.{digits}f}"


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
    optimal T in brackets. ``ours`` is :func:`evaluate_runs` output, ``paper`` a
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
