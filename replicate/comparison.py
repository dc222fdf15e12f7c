"""Comparing training methods the way the papers' tables do, with the paper's numbers beside ours.

A *method* is a named loss with its parameters (``Method``); :data:`MUKHOTI_METHODS` lists
the eleven of Mukhoti et al. (2020), Sec. 5 and Appendix E, under the keys that
:mod:`replicate.paper_tables` uses for their tables. :func:`train_methods` trains (or loads)
each method through the run store; :func:`evaluate_runs` recomputes every table metric from
the stored validation and test logits, before and after temperature scaling, with ``T``
chosen on the validation set by the metric as the paper does (ECE for Tables 1/4/7 and for
the NLL and MCE tables 11/13, AdaECE for Tables 2/5/8); :func:`side_by_side` lays ours out
beside a paper table; :func:`mukhoti_verdicts` tests the paper's conclusions on our numbers.

All values in the returned frames are percentages (as the papers print them), except the
temperatures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import metrics, posthoc


@dataclass(frozen=True)
class Method:
    """A training method: a key (as in the paper tables), a label, a loss and its parameters."""

    key: str
    label: str
    loss: str
    loss_params: dict = field(default_factory=dict)


MUKHOTI_METHODS: dict[str, Method] = {m.key: m for m in (
    Method("cross_entropy", "Cross Entropy", "cross_entropy"),
    Method("brier", "Brier Loss", "brier"),
    Method("mmce", "MMCE", "mmce", {"lam": 2.0}),
    Method("ls005", "LS-0.05", "label_smoothing", {"smoothing": 0.05}),
    Method("fl1", "FL-1", "focal", {"gamma": 1.0}),
    Method("fl2", "FL-2", "focal", {"gamma": 2.0}),
    Method("fl3", "FL-3", "focal", {"gamma": 3.0}),
    Method("fls531", "FLS-531", "fls531"),
    Method("fls532", "FLS-532", "fls532"),
    Method("flsd53", "FLSD-53 (FLA-53)", "flsd53"),
    Method("flsd532", "FLSD-532 (FLA-532)", "flsd532"),
)}

#: Our network names -> the paper's row labels.
PAPER_MODEL_LABELS = {"resnet50": "ResNet 50", "resnet110": "ResNet 110",
                      "wide_resnet26_10": "Wide ResNet 26-10", "densenet121": "DenseNet 121",
                      "text_cnn": "Global Pooling CNN"}
PAPER_DATASET_LABELS = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "20newsgroups": "20 Newsgroups"}

#: metric -> (function of (probs, labels), metric used to choose T on validation)
_SELECT = {"ece": "ece", "adaece": "adaece", "classwise_ece": "ece", "mce": "ece", "nll": "ece",
           "error": "ece", "s99_fraction": "ece", "s99_accuracy": "ece"}
TABLE_METRICS = tuple(_SELECT)


def resolve_methods(keys, registry: dict[str, Method] = MUKHOTI_METHODS) -> list[Method]:
    """The methods named by ``keys`` (all of ``registry`` for None); unknown keys are refused."""
    if keys is None:
        return list(registry.values())
    if isinstance(keys, str):
        keys = [keys]
    unknown = [k for k in keys if k not in registry]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; allowed methods: {', '.join(registry)}")
    return [registry[k] for k in keys]


def configs(methods, dataset: str = "cifar10", model: str | None = None, profile: str = "cpu",
            seeds=(1,), options: dict | None = None) -> dict[tuple[str, int], "object"]:
    """One validated :class:`replicate.runs.RunConfig` per (method, seed), before any training."""
    from .runs import RunConfig

    if isinstance(seeds, int):
        seeds = (seeds,)
    if not seeds:
        raise ValueError("seeds must list at least one seed")
    out = {}
    for m in methods:
        for s in seeds:
            cfg = RunConfig(dataset=dataset, loss=m.loss, loss_params=dict(m.loss_params), model=model,
                            profile=profile, seed=int(s), options=dict(options or {}))
            cfg.resolve()  # validates names and values now, before anything trains
            out[(m.key, int(s))] = cfg
    return out


def train_methods(methods, dataset: str = "cifar10", model: str | None = None, profile: str = "cpu",
                  seeds=(1,), options: dict | None = None, store: str = "results", progress: str = "auto",
                  device=None, log=print) -> dict[tuple[str, int], "object"]:
    """Train or load every (method, seed) through the run store; returns ``{(key, seed): Run}``."""
    from .runs import get_or_train

    cfgs = configs(methods, dataset, model, profile, seeds, options)
    runs = {}
    for i, ((key, seed), cfg) in enumerate(cfgs.items(), 1):
        run = get_or_train(cfg, store=store, progress=progress, device=device)
        if log:
            log(f"[{i}/{len(cfgs)}] {key} seed {seed}: run {run.key} ({run.wall_time:.0f} s of training)")
        runs[(key, seed)] = run
    return runs


def _scores(probs: np.ndarray, labels: np.ndarray, logits: np.ndarray) -> dict:
    frac, acc = metrics.s99(probs, labels, validate=False)
    return {"ece": metrics.ece(probs, labels, validate=False),
            "adaece": metrics.adaptive_ece(probs, labels, validate=False),
            "classwise_ece": metrics.classwise_ece(probs, labels, validate=False),
            "mce": metrics.mce(probs, labels, validate=False),
            "nll": float(-np.mean(np.log(np.clip(probs[np.arange(len(labels)), labels], 1e-300, None)))),
            "error": metrics.error_rate(probs, labels, validate=False),
            "s99_fraction": frac, "s99_accuracy": acc}


def evaluate_run(run, n_bins: int = 15) -> pd.DataFrame:
    """Every table metric of one run, pre and post temperature scaling (long form, percent)."""
    val_z, val_y = run.logits("val")
    test_z, test_y = run.logits("test")
    pre = _scores(metrics.probs_from_logits(test_z), test_y, test_z)
    temps = {sel: posthoc.fit_temperature(val_z, val_y, method="grid", metric=sel, n_bins=n_bins).params["T"]
             for sel in sorted(set(_SELECT.values()))}
    post = {sel: _scores(posthoc.temperature_scale(test_z, T), test_y, test_z) for sel, T in temps.items()}
    rows = []
    for metric, sel in _SELECT.items():
        rows.append({"metric": metric, "temperature_scaled": False, "value": 100 * pre[metric], "T": math.nan})
        rows.append({"metric": metric, "temperature_scaled": True, "value": 100 * post[sel][metric],
                     "T": temps[sel]})
    return pd.DataFrame(rows)


def evaluate_runs(runs: dict, n_bins: int = 15) -> pd.DataFrame:
    """:func:`evaluate_run` for ``{(method, seed): Run}``; columns method, seed, metric, temperature_scaled, value, T."""
    frames = []
    for (key, seed), run in runs.items():
        f = evaluate_run(run, n_bins)
        f.insert(0, "seed", seed)
        f.insert(0, "method", key)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def summarise(ours: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds (std NaN with one seed), per method/metric/TS."""
    g = ours.groupby(["method", "metric", "temperature_scaled"], sort=False)
    out = g.agg(mean=("value", "mean"), std=("value", "std"), T=("T", "mean"), T_std=("T", "std"),
                n_seeds=("seed", "nunique")).reset_index()
    return out


def _fmt(mean: float, std: float = math.nan, T: float = math.nan, digits: int = 2) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    s = f"{mean:.{digits}f}"
    if std is not None and not math.isnan(std):
        s += f" ± {std:.{digits}f}"
    if T is not None and not math.isnan(T):
        s += f" ({T:.2f})"
    return s


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, metric: str, methods,
                 paper_dataset: str | None = None, paper_model: str | None = None,
                 temperature: bool = True) -> pd.DataFrame:
    """A table in the paper's layout: one row per method; for Pre T (and Post T) the paper's
    value, ours and ours minus the paper's. Post-T cells carry the optimal T in brackets.

    ``ours`` is :func:`evaluate_runs` output; ``paper`` a :func:`replicate.paper_tables.get`
    frame (or None for a metric the paper did not report), filtered to ``paper_dataset`` and
    ``paper_model``. Every column says whether it is the paper's number or ours.
    """
    summ = summarise(ours[ours.metric == metric])
    if paper is not None:
        paper = paper[(paper.metric == metric) & (paper.dataset == paper_dataset) & (paper.model == paper_model)]
    phases = [(False, "Pre T")] + ([(True, "Post T")] if temperature else [])
    table = {}
    for m in methods:
        row = {}
        for scaled, phase in phases:
            o = summ[(summ.method == m.key) & (summ.temperature_scaled == scaled)]
            om, osd, oT = (o["mean"].iloc[0], o["std"].iloc[0], o["T"].iloc[0]) if len(o) else (math.nan,) * 3
            pm, pT = math.nan, math.nan
            if paper is not None:
                p = paper[(paper.method == m.key) & (paper.temperature_scaled == scaled)]
                if len(p):
                    pm, pT = float(p["value"].iloc[0]), float(p["optimal_T"].iloc[0])
            row[(phase, "paper")] = _fmt(pm, T=pT if scaled else math.nan)
            row[(phase, "ours")] = _fmt(om, osd, oT if scaled else math.nan)
            row[(phase, "ours − paper")] = _fmt(om - pm) if not (math.isnan(om) or math.isnan(pm)) else "–"
        table[m.label] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "method"
    return frame


def _mean(summ: pd.DataFrame, method: str, metric: str, scaled: bool, col: str = "mean") -> float:
    r = summ[(summ.method == method) & (summ.metric == metric) & (summ.temperature_scaled == scaled)]
    return float(r[col].iloc[0]) if len(r) else math.nan


FOCAL_KEYS = ("fl1", "fl2", "fl3", "fls531", "fls532", "flsd53", "flsd532")


def mukhoti_verdicts(ours: pd.DataFrame, t_tolerance: float = 0.2) -> pd.DataFrame:
    """The paper's four conclusions tested on our numbers (each verdict computed, not typed).

    1. focal loss (FLSD-53) has a lower test ECE than cross-entropy before temperature scaling;
    2. the optimal temperature of the focal-loss models is near 1 (within ``t_tolerance``)
       while cross-entropy's is larger;
    3. FLSD-53 has the lowest pre-T ECE of the focal variants trained;
    4. after temperature scaling, FLSD-53 keeps more test samples at confidence >= 0.99
       (|S99|) than cross-entropy.
    """
    summ = summarise(ours)
    trained = set(summ.method)
    rows = []

    def add(claim, paper_says, ours_text, holds):
        verdict = "not tested (methods missing)" if holds is None else ("holds" if holds else "fails")
        rows.append({"claim": claim, "paper": paper_says, "ours": ours_text, "verdict": verdict})

    ce, fl = _mean(summ, "cross_entropy", "ece", False), _mean(summ, "flsd53", "ece", False)
    add("Focal loss lowers ECE against cross-entropy", "Tables 1, 4",
        f"ECE: cross-entropy {ce:.2f} %, FLSD-53 {fl:.2f} %",
        None if {"cross_entropy", "flsd53"} - trained else fl < ce)

    focal_T = {k: _mean(summ, k, "ece", True, "T") for k in FOCAL_KEYS if k in trained}
    ce_T = _mean(summ, "cross_entropy", "ece", True, "T")
    near = all(abs(t - 1) <= t_tolerance for t in focal_T.values())
    add(f"Optimal T of focal-loss models is near 1 (|T − 1| ≤ {t_tolerance}), cross-entropy's larger",
        "Sec. 6, Tables 1, 4", "T: " + ", ".join(f"{k} {t:.1f}" for k, t in focal_T.items()) + f"; cross-entropy {ce_T:.1f}",
        None if not focal_T or "cross_entropy" not in trained else bool(near and ce_T > max(focal_T.values())))

    focal_ece = {k: _mean(summ, k, "ece", False) for k in FOCAL_KEYS if k in trained}
    best = min(focal_ece, key=focal_ece.get) if focal_ece else None
    add("FLSD-53 is the best of the focal variants (lowest pre-T ECE)", "Sec. 6, Table 7",
        f"lowest: {best} ({focal_ece[best]:.2f} %)" if best else "–",
        None if "flsd53" not in trained or len(focal_ece) < 2 else best == "flsd53")

    s_ce, s_fl = _mean(summ, "cross_entropy", "s99_fraction", True), _mean(summ, "flsd53", "s99_fraction", True)
    add("Focal models keep more confident correct predictions after TS (larger |S99|)", "Table 6",
        f"|S99| post-T: cross-entropy {s_ce:.2f} %, FLSD-53 {s_fl:.2f} %",
        None if {"cross_entropy", "flsd53"} - trained else s_fl > s_ce)
    return pd.DataFrame(rows)
