"""The evidence the FCL chapter's claims are decided on, from the paper's printed tables or
from our runs, in one shape (:class:`Evidence`), so that one rule reads either.

- ``tables``: every table number over (data set, network) rows and settings, long form
  (``row, dataset_key, model_key, setting, method, metric, temperature_scaled, mean, T``;
  the paper's side in the full form of :func:`replicate.comparison.layouts.paper_long`):
  Tables 1-3, 6, 7 (ECE, error, smCE, AdaECE, classwise ECE; setting ""), Table 4 (AUROC,
  rows "CIFAR-10/SVHN, ..." and "CIFAR-10/CIFAR-10-C, ...") and Table 8 (App. A.15,
  method ``fcl``, settings "norm=l1" / "norm=l2").
- ``history``: per-epoch test NLL (normalised) and test error of Fig. 3's and Fig. 8's
  methods (ours only).
- ``sweep``: Fig. 6's metrics against lambda (ours only).
- ``reliability``: cross-entropy's reliability bins on the test set (Fig. 9; ours only).
- ``toy``: the two-dimensional study of Fig. 7 (:func:`replicate.toy2d.study`; ours only).

The paper prints the last four only as figures: its evidence has them as None, with the
reason, and a rule that needs them answers "not tested".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ... import plots
from ...comparison.layouts import paper_long, row_label
from ...plots import PAPER_EPOCHS
from . import plan as fcl

#: Metrics of Tables 1-3, 6, 7 and the extras we compute (MCE, NLL, the Lipschitz smCE).
TABLE_METRICS = ("ece", "smece", "smce", "adaece", "classwise_ece", "mce", "nll", "error")
#: The paper chooses T by validation ECE and reuses it for every metric (Sec. 5).
T_BY_ECE = {m: "ece" for m in TABLE_METRICS}
#: The paper's tables that hold method comparisons (Table 5 holds hyperparameters).
PAPER_TABLES = ("table1", "table2", "table3", "table4", "table6", "table7", "table8")
FIGURE_ONLY = "the paper shows this only in a figure and prints no numbers for it"
PAPER_LABEL = "paper: Liang et al., every printed row"
COLUMNS = ["row", "dataset_key", "model_key", "setting", "method", "metric", "temperature_scaled", "mean", "T"]
#: Our OOD sets (replicate.runs.ood) as the paper's Table 4 names its rows.
OOD_ROWS = {"cifar10c_gaussian5": "CIFAR-10/CIFAR-10-C", "svhn": "CIFAR-10/SVHN"}


@dataclass
class Evidence:
    """The numbers of one side (paper or ours); see the module docstring. ``missing`` maps a
    part to why it is absent; ``epochs`` is the length of our runs (None for the paper)."""

    label: str
    tables: pd.DataFrame
    history: pd.DataFrame | None = None
    sweep: pd.DataFrame | None = None
    reliability: pd.DataFrame | None = None
    toy: pd.DataFrame | None = None
    epochs: int | None = None
    missing: dict = field(default_factory=dict)
    #: our runs of each table row as the claims' noise tests read them (``{row: RunEvidence}``)
    runs: dict = field(default_factory=dict)

    def why(self, part: str) -> str:
        """Why ``part`` is absent (default: the paper shows it only as a figure)."""
        return self.missing.get(part, FIGURE_ONLY)


def paper_evidence() -> Evidence:
    """The paper's side: every row of its method tables; the figures are "not tested"."""
    return Evidence(PAPER_LABEL, paper_long(fcl.PAPER, PAPER_TABLES))


def _rows(summary: pd.DataFrame, dataset: str, dataset_key: str, model: str, setting: str = "") -> pd.DataFrame:
    f = summary.assign(row=row_label(dataset, f"{model} (ours)"), dataset_key=dataset_key, model_key=model,
                 setting=setting)
    return f[COLUMNS]


#: How the paper's tables name our data sets.
DISPLAY = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "tiny_imagenet": "Tiny-ImageNet",
           "20newsgroups": "20 Newsgroups"}


def _display(dataset_key: str) -> str:
    return DISPLAY.get(dataset_key, dataset_key)


def _auroc(runs: dict, model: str) -> tuple[pd.DataFrame, list]:
    """Our AUROC rows (%) from the records' entropy AUROC (T by validation ECE, as Table 4),
    and the runs that hold no logits of an OOD set."""
    rows, lacking = [], []
    for (key, seed), run in runs.items():
        rec = run.metrics.get("ood_auroc", {})
        if not rec:
            lacking.append(key)
        for name, vals in rec.items():
            for scaled in (False, True):
                rows.append({"row": row_label(OOD_ROWS.get(name, name), f"{model} (ours)"), "dataset_key": name,
                             "model_key": model, "setting": "", "method": key, "metric": "auroc",
                             "temperature_scaled": scaled, "value": 100 * vals["post" if scaled else "pre"],
                             "T": run.temperature if scaled else np.nan, "seed": seed})
    if not rows:
        return pd.DataFrame(columns=COLUMNS), lacking
    f = pd.DataFrame(rows).groupby([c for c in COLUMNS if c not in ("mean", "T")], sort=False, as_index=False)
    f = f.agg(mean=("value", "mean"), T=("T", "mean"))
    return f[COLUMNS], lacking


def _group_summary(runs: dict, rows: dict | None = None) -> pd.DataFrame:
    """The summary of a group's runs; ``rows`` (when given) gains the group's
    :class:`~replicate.comparison.noise.RunEvidence`, named by its table row."""
    from ...comparison import noise

    frame = cmp.evaluate_runs(runs, metrics=TABLE_METRICS, t_selected_by=T_BY_ECE)
    if rows is not None:
        run = next(iter(runs.values()))
        name = row_label(_display(run.resolved["dataset"]), f"{run.resolved['model']} (ours)")
        rows[name] = noise.RunEvidence(runs, frame, name)
    return cmp.summarise(frame)


def our_evidence(p: cmp.Plan, runs: dict, toy: pd.DataFrame | None = None) -> Evidence:
    """Our side from ``runs`` (``{group: {(key, seed): Run}}``, groups possibly missing) of
    plan ``p``; ``toy`` is :func:`replicate.toy2d.study`'s frame (None: not run)."""
    parts, missing, rows = [], {}, {}
    label = f"ours: {p.profile}"
    image = runs.get("image")
    if image:
        run = next(iter(image.values()))
        model, dkey = run.resolved["model"], run.resolved["dataset"]
        label = cmp.evidence_label(image)
        parts.append(_rows(_group_summary(image, rows), _display(dkey), dkey, model))
        auroc, lacking = _auroc(image, model)
        parts.append(auroc)
        if lacking:
            missing["ood"] = (f"the runs of {', '.join(cmp.short(k) for k in lacking)} hold no out-of-distribution "
                              f"logits (trained before runs recorded them)")
    else:
        missing["image"] = f"the chapter's {p.profile} image runs are not all in the run store"
        missing["ood"] = missing["image"]
    text = runs.get("text")
    if text:
        run = next(iter(text.values()))
        parts.append(_rows(_group_summary(text, rows), _display(run.resolved["dataset"]), run.resolved["dataset"],
                           run.resolved["model"]))
    norm = runs.get("norm")
    if norm:
        run = next(iter(norm.values()))
        s = cmp.summarise(cmp.evaluate_runs(norm, metrics=("ece", "error")))
        for key, setting in (("fcl", "norm=l2"), ("fcl_l1", "norm=l1")):
            parts.append(_rows(s[s.method == key].assign(method="fcl"), _display(run.resolved["dataset"]),
                               run.resolved["dataset"], run.resolved["model"], setting))
    else:
        missing["norm"] = f"the chapter's {p.profile} L1/L2 runs are not all in the run store"
    history = None
    hist = fcl.history_runs(p, runs)
    if runs.get("history") and "cross_entropy" in hist:
        nl = normalised_loss(hist)
        err = plots.history(hist, require=("test/error",))[["method", "epoch", "test/error"]]
        history = nl.merge(err.rename(columns={"test/error": "error"}), on=["method", "epoch"])
        history["error"] *= 100
    else:
        missing["history"] = f"the chapter's {p.profile} per-epoch runs are not all in the run store"
    sweep = sweep_summary(p, runs["lambda"]) if runs.get("lambda") else None
    if sweep is None:
        missing["sweep"] = f"the chapter's {p.profile} lambda-sweep runs are not all in the run store"
    reliability = None
    if image and ("cross_entropy", p.seeds[0]) in image:
        reliability = reliability_frame(image[("cross_entropy", p.seeds[0])])
    else:
        missing["reliability"] = "no cross-entropy run in the store"
    if toy is None:
        missing["toy"] = "the two-dimensional study was not run"
    epochs = next(iter(image.values())).resolved["train"]["epochs"] if image else None
    tables = pd.concat([f for f in parts if len(f)], ignore_index=True) if any(len(f) for f in parts) else \
        pd.DataFrame(columns=COLUMNS)
    return Evidence(label, tables, history, sweep, reliability, toy, epochs, missing, rows)


def sweep_summary(p: cmp.Plan, lambda_runs: dict) -> pd.DataFrame:
    """Fig. 6's numbers: :func:`sweep_frame` of the ``lambda`` group's runs (T by validation
    ECE, as every table of the paper)."""
    lams = {fcl.lambda_key(m.loss_params["lam"]): m.loss_params["lam"] for m in p.methods["lambda"]}
    ev = cmp.evaluate_runs(lambda_runs, metrics=SWEEP_METRICS, t_selected_by=T_BY_ECE)
    return sweep_frame(cmp.summarise(ev), lams)


def reliability_frame(run, n_bins: int = 15) -> pd.DataFrame:
    """The test-set reliability bins of ``run`` before TS: ``confidence, accuracy, count``
    of each non-empty bin of 15 equal-width bins."""
    from ... import metrics

    z, y = run.logits("test")
    rb = metrics.reliability_bins(metrics.probs_from_logits(z), y, n_bins=n_bins)
    f = pd.DataFrame({"confidence": np.asarray(rb.mean_confidence, dtype=float),
                      "accuracy": np.asarray(rb.accuracy, dtype=float), "count": np.asarray(rb.count)})
    return f[f["count"] > 0].reset_index(drop=True)


# ----------------------------------------------------------------------------- the numbers behind the figures
#: The paper's epoch windows named in Sec. 5.5.1 (Fig. 3) and Sec. 5.1.2 (Fig. 8), of 350.
FIG3_WINDOWS = {"initial": (0, 50), "middle": (50, 150)}


FIG8_WINDOW = (100, 300)


def paper_window(epochs: int, start: int, stop: int, paper_total: int = PAPER_EPOCHS) -> tuple[int, int]:
    """The 1-based epochs ``(first, last)`` of a run of ``epochs`` epochs that correspond to
    the paper's epochs ``start..stop`` of ``paper_total`` (same fractions; at least one epoch)."""
    if not 0 <= start < stop <= paper_total:
        raise ValueError(f"need 0 <= start < stop <= {paper_total}; got {start}, {stop}")
    first = max(1, int(round(start / paper_total * epochs)))
    last = max(first, min(epochs, int(round(stop / paper_total * epochs))))
    return first, last


def normalised_loss(runs: Mapping[str, object], column: str = "test/nll") -> pd.DataFrame:
    """Long frame ``method, epoch, value, normalised`` of ``column`` of each run's per-epoch
    records, ``normalised`` = value / value after the first epoch (Fig. 3's "normalised test
    loss"; the paper does not say which loss or which normalisation: the test NLL is the
    one loss recorded for every method and comparable across them)."""
    h = plots.history(runs, require=(column,))
    out = h[["method", "epoch", column]].rename(columns={column: "value"})
    first = out.sort_values("epoch").groupby("method", sort=False)["value"].transform("first")
    return out.assign(normalised=out["value"] / first).reset_index(drop=True)


def convergence_epochs(frame: pd.DataFrame, fraction: float = 0.9) -> dict:
    """``{method: first epoch at which the normalised loss has made fraction of its largest
    drop}`` (drop = 1 - normalised; the largest over the run)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1]; got {fraction!r}")
    out = {}
    for m, g in frame.sort_values("epoch").groupby("method", sort=False):
        drop = 1.0 - g["normalised"].to_numpy()
        reached = np.flatnonzero(drop >= fraction * drop.max() - 1e-12)
        out[m] = int(g["epoch"].to_numpy()[reached[0]])
    return out


def window_stats(frame: pd.DataFrame, first: int, last: int, value: str = "normalised") -> pd.DataFrame:
    """Per method over epochs ``first..last``: mean and standard deviation of ``value``,
    and the standard deviation of its epoch-to-epoch changes (``jitter``; NaN with fewer
    than two changes)."""
    w = frame[(frame.epoch >= first) & (frame.epoch <= last)].sort_values("epoch")
    rows = []
    for m, g in w.groupby("method", sort=False):
        v = g[value].to_numpy(dtype=np.float64)
        d = np.diff(v)
        rows.append({"method": m, "mean": v.mean(), "std": v.std(ddof=1) if v.size > 1 else np.nan,
                     "jitter": d.std(ddof=1) if d.size > 1 else np.nan, "n_epochs": v.size})
    return pd.DataFrame(rows)


def sweep_frame(summary: pd.DataFrame, lambdas: Mapping[str, float]) -> pd.DataFrame:
    """A :func:`replicate.comparison.summarise` frame of the lambda sweep with a column
    ``lam`` (``lambdas``: method key -> lambda), sorted by lambda."""
    f = summary[summary.method.isin(list(lambdas))].copy()
    f["lam"] = f["method"].map(lambdas)
    return f.sort_values(["lam", "metric", "temperature_scaled"]).reset_index(drop=True)


#: Fig. 6's metrics.
SWEEP_METRICS = ("nll", "ece", "adaece", "classwise_ece", "error")
