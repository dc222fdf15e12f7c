"""The numbers the Dual Focal Loss claims are tested on, for both sides.

:class:`Evidence` holds one side: ``tables`` in the long form of
:mod:`replicate.comparison.layouts` (one line per number, labelled with the paper's table it
belongs to or stands beside), ``figures`` (the numbers behind Figs. 2 and 4, ours only) and
``missing`` (run groups that are not available, with the reason). :func:`paper_evidence` is
the paper's Tables 1-13 as printed; :func:`our_evidence` recomputes every table from the
stored logits of a plan's runs:

- temperatures by validation ECE over the grid 0.1..10.0 for every metric (the DFL tables'
  "calculated temperature on best ECE");
- RBS (Table 11) by :func:`replicate.metrics.root_brier_score` (not multiplied by 100);
- AUROC (Table 9) of the softmax entropy on the OOD sets each run recorded, pre and post
  its temperature;
- Table 12 = the image runs' means with the standard error over seeds.

The numbers behind the figures are computed here too, and :mod:`.figures` only draws them:
Fig. 2's reliability bins (:func:`reliability_frame`), Fig. 3's intervals over seeds
(:func:`interval_frame`), Fig. 4's ECE over the epochs (:func:`ece_over_epochs`, with its
learning-rate phases :func:`lr_phases`), maximum logits and dual probabilities
(:func:`max_logit_frame`, :func:`dual_prob_frame`, :func:`box_stats`), and the ROC curves of
Table 9 (:func:`roc_frame`).
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ... import metrics
from ...checks import positive_int
from ...comparison import layouts
from . import plan as dfl

PAPER_LABEL = "paper: Tao et al. (2023), Tables 1-13 as printed"
PAPER_TABLES = ("table1", "table2", "table3", "table4", "table5", "table6", "table7", "table8", "table9",
                "table10", "table10_kde", "table11", "table12", "table13")
MAIN_METRICS = ("ece", "adaece", "classwise_ece", "mce", "nll", "error")
#: our metric -> the paper table it stands beside (Tables 1, 2, 5-8 and 11)
MAIN_TABLES = {"ece": "table1", "error": "table2", "adaece": "table5", "classwise_ece": "table6", "mce": "table7",
               "nll": "table8", "rbs": "table11"}
#: Table 12's cells: ECE, ECE(T), AdaECE, classwise ECE
TABLE12 = (("ece", False), ("ece", True), ("adaece", False), ("classwise_ece", False))
#: every table of the DFL paper reports post-T numbers at the temperature chosen by validation ECE
T_SELECTED_BY = {"adaece": "ece", "classwise_ece": "ece", "mce": "ece", "nll": "ece", "error": "ece"}
OOD_SETTINGS = {"cifar10c_gaussian5": "ood=CIFAR-10-C", "svhn": "ood=SVHN"}


@dataclass
class Evidence:
    """One side of the claims: ``kind`` "paper" or "ours", the numbers in long form, the
    figures' numbers (``{"fig2": ..., "fig4a": ..., "fig4b": ..., "fig4c": ...}``),
    ``{group: reason}`` for run groups that are not available, and ``raw``: the per-seed
    :func:`evaluate` frames of the image and text groups (for tables and Fig. 3)."""

    kind: str
    tables: pd.DataFrame
    figures: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    profile: str = ""
    raw: dict = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _paper_tables() -> pd.DataFrame:
    return layouts.paper_long(dfl.PAPER, PAPER_TABLES)


def paper_evidence() -> Evidence:
    """The paper's Tables 1-13 as printed, in long form."""
    return Evidence("paper", _paper_tables().copy())


def our_label(p: cmp.Plan, runs: dict | None = None) -> str:
    """"ours: cpu, cifar10, tiny_cnn, seeds 1, 2, 3" from the plan (no run needed)."""
    cfg = next(iter(p.image.values())).resolve()
    return (f"ours: {p.profile}, {cfg['dataset']}, {cfg['model']}, seed{'s' if len(p.seeds) > 1 else ''} "
            f"{', '.join(map(str, p.seeds))}")


def evaluate(runs: dict, metric_names=MAIN_METRICS) -> pd.DataFrame:
    """:func:`replicate.comparison.evaluate_runs` with every temperature chosen by ECE."""
    return cmp.evaluate_runs(runs, metrics=metric_names, t_selected_by=T_SELECTED_BY)


def rbs_frame(runs: dict) -> pd.DataFrame:
    """RBS of every run's test logits (no temperature scaling, as in Table 11), in
    :func:`replicate.comparison.evaluate_runs`' layout (value not multiplied by 100)."""
    rows = [{"method": k, "seed": s, "metric": "rbs", "temperature_scaled": False,
             "value": metrics.root_brier_score(r.logits("test")[0], r.logits("test")[1], is_probs=False),
             "T": np.nan, "T_selected_by": ""} for (k, s), r in runs.items()]
    return pd.DataFrame(rows)


def ood_frame(runs: dict) -> pd.DataFrame:
    """Entropy AUROC (%) of every run on each OOD set it recorded, pre and post its
    validation-ECE temperature, with the paper's ``setting`` (Table 9)."""
    rows = []
    for (k, s), r in runs.items():
        z_in = r.logits("test")[0]
        for name, setting in OOD_SETTINGS.items():
            if name not in r.ood_sets:
                continue
            z_out = r.logits(f"ood:{name}")[0]
            for scaled, T in ((False, 1.0), (True, r.temperature)):
                auroc = metrics.ood_auroc(metrics.probs_from_logits(z_in, T), metrics.probs_from_logits(z_out, T),
                                          validate=False)
                rows.append({"method": k, "seed": s, "setting": setting, "metric": "auroc",
                             "temperature_scaled": scaled, "value": 100 * auroc, "T": T if scaled else np.nan,
                             "T_selected_by": "ece" if scaled else ""})
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "metric", "temperature_scaled", "value", "T",
                                       "T_selected_by"])


def _reason(p: cmp.Plan, group: str) -> str:
    if group not in p.groups:
        why = "text_dataset=None" if group == "text" else "ablations=False"
        return f"the {group} runs are not planned ({why})"
    return (f"the chapter's {p.profile} runs of group {group!r} are not all in the run store (execute the chapter "
            f"at profile {p.profile})")


def _where(group_runs: dict) -> tuple[str, str, str]:
    r = next(iter(group_runs.values())).resolved
    return f"ours: {r['dataset']}, {r['model']}", r["dataset"], r["model"]


def _main(runs: dict, raw: dict) -> list[pd.DataFrame]:
    row, d, m = _where(runs)
    raw["image"] = evaluate(runs)
    s = cmp.summarise(pd.concat([raw["image"], rbs_frame(runs)], ignore_index=True))
    out = [layouts.summary_long(s, t, row, d, m, metrics=[k]) for k, t in MAIN_TABLES.items()]
    cells = pd.concat([s[(s.metric == k) & (s.temperature_scaled == sc)] for k, sc in TABLE12])
    out.append(layouts.summary_long(cells, "table12", row, d, m))
    ood = ood_frame(runs)
    for setting in OOD_SETTINGS.values():
        f = ood[ood.setting == setting].drop(columns="setting")
        if len(f):
            out.append(layouts.summary_long(cmp.summarise(f), "table9", row, d, m, setting=setting))
    return out


def _dual_logit(runs: dict, smoke: bool) -> list[pd.DataFrame]:
    row, d, m = _where(runs)
    s = cmp.summarise(evaluate(runs, ("ece", "adaece")))
    s = s[~s.temperature_scaled]
    out = []
    for reading, name in dfl.READINGS.items():
        setting = {"flsd53": dfl.FL_ROW, "dual_focal": dfl.DFL_ROW,
                   **{meth.key: sett for meth, sett, rd in dfl.dual_logit_methods(smoke) if rd == reading}}
        f = s[s.method.isin(tuple(setting))]
        if f.method.nunique() > 2:
            out.append(layouts.summary_long(f, "table4", row, d, m, setting=setting,
                                            rename={k: name for k in setting}))
    return out


def _gamma(runs: dict) -> pd.DataFrame:
    row, d, m = _where(runs)
    s = cmp.summarise(evaluate(runs, ("ece", "adaece", "classwise_ece", "error")))
    acc = s[s.metric == "error"].assign(metric="accuracy", mean=lambda f: 100 - f["mean"])
    s = pd.concat([s[s.metric != "error"], acc[~acc.temperature_scaled]], ignore_index=True)
    gammas = {k: f"gamma={r.config.loss_params['gamma']:g}" for (k, _), r in runs.items()}
    return layouts.summary_long(s, "table13", row, d, m, setting=gammas, rename={k: "dual_focal" for k in gammas})


def _figures(p: cmp.Plan, runs: dict) -> dict:
    seed = p.seeds[0]
    image = runs["image"]
    first = {k: image[(k, seed)] for k in dfl.FIG2_METHODS if (k, seed) in image}
    out = {"fig2": reliability_frame(first)}
    trio = {k: first[k] for k in dfl.HISTORY_METHODS if k in first}
    out["fig4b"], out["fig4c"] = max_logit_frame(trio), dual_prob_frame(trio)
    hist = runs.get("history")
    if hist is not None and (("cross_entropy", seed) in image):
        curves = {"cross_entropy": image[("cross_entropy", seed)],
                  **{k: hist[(k, seed)] for k in dfl.HISTORY_METHODS if (k, seed) in hist}}
        out["fig4a"] = ece_over_epochs(curves)
    return out


def our_evidence(p: cmp.Plan, runs: dict) -> Evidence:
    """Our side for the plan ``p`` and its runs ``{group: {(key, seed): Run}}`` (groups that
    are absent are ``missing``, with the reason)."""
    frames, figures, raw = [], {}, {}
    missing = {g: _reason(p, g) for g in ("image", "history", "table3", "dual_logit", "gamma", "text")
               if g not in runs}
    if "image" in runs:
        frames += _main(runs["image"], raw)
        figures = _figures(p, runs)
    if "table3" in runs:
        row, d, m = _where(runs["table3"])
        s = cmp.summarise(evaluate(runs["table3"], ("ece",)))
        frames.append(layouts.summary_long(s, "table3", row, d, m, rename=dfl.TABLE3_RENAME))
    if "dual_logit" in runs:
        frames += _dual_logit(runs["dual_logit"], p.profile == "smoke")
    if "gamma" in runs:
        frames.append(_gamma(runs["gamma"]))
    if "text" in runs:
        row, d, m = _where(runs["text"])
        raw["text"] = evaluate(runs["text"])
        s = cmp.summarise(raw["text"])
        # the paper's text row is in Tables 1 and 2 only
        frames += [layouts.summary_long(s, MAIN_TABLES[k], row, d, m, metrics=[k]) for k in ("ece", "error")]
    tables = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=layouts.LONG)
    return Evidence("ours", tables, figures, missing, p.profile, raw)


def run_costs(runs: dict) -> pd.DataFrame:
    """What each run cost when it was trained: ``group, method, seed, key, store, seconds``
    (the record's wall time: data, training and evaluation) of ``{group: {(key, seed): Run}}``;
    a run shared by two groups is listed under the first."""
    rows, seen = [], set()
    for g, group in runs.items():
        for (k, s), r in group.items():
            if r.key not in seen:
                seen.add(r.key)
                rows.append({"group": g, "method": k, "seed": s, "key": r.key, "store": r.store,
                             "seconds": r.wall_time})
    return pd.DataFrame(rows, columns=["group", "method", "seed", "key", "store", "seconds"])


def rbs_bounds(paper: Evidence | None = None) -> pd.DataFrame:
    """Can Table 11's printed RBS values belong to the models of Table 2? Per (row, method)
    with both numbers: the printed RBS, the printed error, the smallest RBS a model with
    that error can have (:func:`replicate.metrics.root_brier_lower_bound`, ``sqrt(e / 2)``)
    and the smallest Brier score (``e / 2``), and whether the printed value respects each."""
    t = (paper or paper_evidence()).tables
    rbs = t[(t.table == "table11") & (t.metric == "rbs")].set_index(["row", "method"])["mean"]
    err = t[(t.table == "table2") & (t.metric == "error")].set_index(["row", "method"])["mean"]
    both = rbs.to_frame("printed").join(err.to_frame("error_pct"), how="inner").dropna().reset_index()
    both["rbs_at_least"] = [metrics.root_brier_lower_bound(e / 100) for e in both["error_pct"]]
    both["brier_at_least"] = both["error_pct"] / 200
    both["fits_rbs"] = both["printed"] >= both["rbs_at_least"]
    both["fits_brier"] = both["printed"] >= both["brier_at_least"]
    return both


#: What the chapter cannot replicate offline, the paper's tables it concerns, and why.
NOT_REPLICATED = (
    ("CIFAR-100 rows", "Tables 1-3, 5-8, 11", "CIFAR-100 is not in the offline data directory; dataset='cifar100' "
     "runs the chapter on it once its files are there (replicate.data loads them)"),
    ("Tiny-ImageNet row", "Tables 1, 2, 5-8", "Tiny-ImageNet is not in the offline data directory; "
     "dataset='tiny_imagenet' runs the chapter on it once its files are there"),
    ("SVHN as OOD set", "Table 9", "SVHN is not in the offline data directory; runs record SVHN logits "
     "automatically when its files are present at training time"),
    ("the paper's four networks at cpu", "Tables 1-13", "the cpu profile trains tiny_cnn on 3,000 images for 20 "
     "epochs; the gpu and paper profiles (model=resnet50, resnet110, wide_resnet26_10, densenet121) plan the "
     "papers' networks and schedules"),
    ("KDE-XE comparison", "Table 10", "KDE-XE (Popordanoska et al. 2022) and its training setting (ResNet-110sd, "
     "DenseNet-40) are not implemented here"),
    ("GloVe embeddings for 20 Newsgroups", "Tables 1, 2", "GloVe is not available offline; the text network's "
     "frozen embeddings are word2vec vectors trained on the training documents (GloVe is used when its file "
     "glove.6B.100d.txt is in the data directory)"),
)


def not_replicated() -> pd.DataFrame:
    """:data:`NOT_REPLICATED` as a table."""
    return pd.DataFrame(NOT_REPLICATED, columns=["what", "paper tables", "why"])


# ----------------------------------------------------------------------------- the numbers behind the figures
#: Fig. 4a's smoothing factor ("Exponential Moving Average with smoothing factor equals to 0.5").
SMOOTHING = 0.5


def _runs(runs) -> Mapping:
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    return runs


def ema(values, smoothing: float = SMOOTHING) -> np.ndarray:
    """Exponential moving average ``s_0 = x_0``, ``s_t = smoothing s_{t-1} + (1 - smoothing) x_t``."""
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must be a number in [0, 1); got {smoothing!r}")
    x = np.asarray(values, dtype=np.float64)
    out = np.empty_like(x)
    for i, v in enumerate(x):
        out[i] = v if i == 0 else smoothing * out[i - 1] + (1 - smoothing) * v
    return out


def ece_over_epochs(runs, smoothing: float = SMOOTHING) -> pd.DataFrame:
    """Test ECE (%) after every epoch of ``{label: Run}`` (runs trained with
    ``eval_every_epoch``): columns ``method, epoch, lr, ece, ece_ema``."""
    from ...plots import history

    h = history(_runs(runs), require=("test/ece", "lr"))
    frames = []
    for label in runs:
        f = h[h.method == label].sort_values("epoch")
        frames.append(pd.DataFrame({"method": label, "epoch": f["epoch"].astype(int), "lr": f["lr"],
                                    "ece": 100 * f["test/ece"], "ece_ema": ema(100 * f["test/ece"], smoothing)}))
    return pd.concat(frames, ignore_index=True)


def lr_phases(curves: pd.DataFrame) -> pd.Series:
    """The learning-rate phase (0, 1, 2, ...) of each line of :func:`ece_over_epochs`: a new
    phase starts where a method's learning rate changes."""
    method, lr = curves["method"].to_numpy(), curves["lr"].to_numpy(dtype=np.float64)
    out = np.zeros(len(curves), dtype=int)
    for m in dict.fromkeys(method):
        at = np.flatnonzero(method == m)
        out[at] = np.r_[0, np.cumsum(~np.isclose(lr[at][1:], lr[at][:-1]))]
    return pd.Series(out, index=curves.index)


def dual_probabilities(logits, labels) -> np.ndarray:
    """``q_j`` of each sample: the largest softmax probability strictly below the probability
    of the true class, 0 when there is none (Tao et al. 2023, Eq. 3)."""
    p = metrics.probs_from_logits(logits)
    y = np.asarray(labels).astype(int)
    if y.shape != (p.shape[0],):
        raise ValueError(f"labels must have shape ({p.shape[0]},); got {y.shape}")
    pt = p[np.arange(y.size), y]
    return np.where(p < pt[:, None], p, 0.0).max(axis=1)


def max_logit_frame(runs) -> pd.DataFrame:
    """The largest logit of every test sample (Fig. 4b): columns ``method, max_logit``."""
    return pd.concat([pd.DataFrame({"method": k, "max_logit": r.logits("test")[0].astype(np.float64).max(axis=1)})
                      for k, r in _runs(runs).items()], ignore_index=True)


def dual_prob_frame(runs) -> pd.DataFrame:
    """``q_j`` of every test sample (Fig. 4c): columns ``method, q_j``."""
    return pd.concat([pd.DataFrame({"method": k, "q_j": dual_probabilities(*r.logits("test"))})
                      for k, r in _runs(runs).items()], ignore_index=True)


def box_stats(frame: pd.DataFrame, col: str) -> pd.DataFrame:
    """Per method the numbers a boxplot draws (matplotlib's rule): quartiles, median, IQR and
    the whiskers at the furthest sample within 1.5 IQR of the box."""
    rows = []
    for m, v in frame.groupby("method", sort=False)[col]:
        x = np.sort(v.to_numpy(dtype=np.float64))
        q1, med, q3 = np.percentile(x, [25, 50, 75])
        iqr = q3 - q1
        rows.append({"method": m, "q1": q1, "median": med, "q3": q3, "iqr": iqr,
                     "whisker_low": x[x >= q1 - 1.5 * iqr].min(), "whisker_high": x[x <= q3 + 1.5 * iqr].max()})
    return pd.DataFrame(rows)


def reliability_frame(runs, n_bins: int = 15) -> pd.DataFrame:
    """Test-set reliability bins before temperature scaling (Fig. 2) of ``{label: Run}``:
    columns ``method, bin, lower, upper, count, mean_confidence, accuracy, gap``
    (``gap = accuracy - confidence``, :func:`replicate.metrics.reliability_bins`)."""
    n_bins = positive_int("n_bins", n_bins)
    frames = []
    for k, r in _runs(runs).items():
        z, y = r.logits("test")
        f = metrics.reliability_bins(metrics.probs_from_logits(z), y, n_bins=n_bins).to_frame()
        frames.append(f.assign(method=k, bin=np.arange(n_bins)))
    return pd.concat(frames, ignore_index=True)[["method", "bin", "lower", "upper", "count", "mean_confidence",
                                                 "accuracy", "gap"]]


def interval_frame(ours: pd.DataFrame, metrics_=("ece", "adaece", "classwise_ece"), level: float = 0.95,
                   scaled: bool = False) -> pd.DataFrame:
    """Mean over seeds with a Student-t interval at ``level``
    (:func:`replicate.comparison.stats.seed_interval`) of each method and metric of an
    :func:`replicate.comparison.evaluate_runs` frame (Fig. 3): ``method, metric, mean, sd,
    n, low, high`` (interval NaN with one seed)."""
    from ...comparison.stats import seed_interval

    f = ours[ours.metric.isin(tuple(metrics_)) & (ours.temperature_scaled == scaled)]
    rows = [{"method": m, "metric": k, **seed_interval(g["value"], level)}
            for (m, k), g in f.groupby(["method", "metric"], sort=False)]
    return pd.DataFrame(rows, columns=["method", "metric", "mean", "sd", "n", "low", "high"])


def entropy(logits, T: float = 1.0) -> np.ndarray:
    """Softmax entropy (nats) of each row of ``logits / T``: the OOD score."""
    from scipy.special import entr

    return entr(metrics.probs_from_logits(logits, temperature=T)).sum(axis=1)


def roc_frame(runs, ood_set: str = "cifar10c_gaussian5") -> pd.DataFrame:
    """ROC curves of the entropy score (OOD = positive) of every run of ``{label: Run}`` that
    holds ``ood_set``, pre and post temperature scaling (the run's T): ``method,
    temperature_scaled, fpr, tpr, auroc`` (sklearn's ``roc_curve``; AUROC in %)."""
    from sklearn.metrics import roc_auc_score, roc_curve

    frames = []
    for k, r in _runs(runs).items():
        if ood_set not in r.ood_sets:
            continue
        z_in, z_out = r.logits("test")[0], r.logits(f"ood:{ood_set}")[0]
        y = np.r_[np.zeros(len(z_in)), np.ones(len(z_out))]
        for scaled, T in ((False, 1.0), (True, r.temperature)):
            s = np.r_[entropy(z_in, T), entropy(z_out, T)]
            fpr, tpr, _ = roc_curve(y, s)
            frames.append(pd.DataFrame({"method": k, "temperature_scaled": scaled, "fpr": fpr, "tpr": tpr,
                                        "auroc": 100 * roc_auc_score(y, s)}))
    cols = ["method", "temperature_scaled", "fpr", "tpr", "auroc"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def run_rows(runs: dict, ours: Evidence) -> dict:
    """Our runs of each table row (the image group over its seeds, the text group) as the
    claims' noise tests read them: ``{row name: RunEvidence}`` with the frames of
    ``ours.raw`` (their temperatures by validation ECE)."""
    from ...comparison import noise

    rows = {}
    for group in ("image", "text"):
        if group in runs and group in ours.raw:
            row = _where(runs[group])[0].removeprefix("ours: ")
            rows[row] = noise.RunEvidence(runs[group], ours.raw[group], row)
    return rows
