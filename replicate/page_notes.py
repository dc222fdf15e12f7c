"""Sentences the pages glue where our runs differ from the paper's picture (issue #24, item 4).

Each function reads runs or tables a chapter already has and returns the numbers and the
words of one sentence, so that the page says what its figure or table shows - never a
statement typed by hand that a rebuild at another profile could make false.

- :func:`augmentation_text` -- which profiles augment the training images, and whether the
  chapter's profile does (the protocol chapter);
- :func:`training_confidence` -- a run's training accuracy, mean confidence and training ECE
  after its last epoch, and whether it is over- or under-confident on its own training set
  (the paper's Figure 2 shows over-confidence; Mukhoti chapter);
- :func:`grid_difference` -- why one model's post-temperature-scaling ECE differs between two
  tables: each table chose T on its own grid (Mukhoti chapter, its ECE table and its "+ FTS"
  table).
"""
from __future__ import annotations

import pandas as pd

from .profiles import PROFILES, get_profile

__all__ = ["augmentation_text", "training_confidence", "grid_difference"]


def augmentation_text(profile: str) -> str:
    """One sentence: the profiles that augment (random crop and flip) as the reference code
    does, and whether ``profile`` does."""
    prof = get_profile(profile)
    on = [p.name for p in PROFILES.values() if p.augment]
    off = [p.name for p in PROFILES.values() if not p.augment]
    both = (f"The profiles {', '.join(on)} augment as the reference code does"
            + (f"; {', '.join(off)} {'does' if len(off) == 1 else 'do'} not" if off else ""))
    here = ("so this chapter's runs (profile {p}) train on cropped and flipped images" if prof.augment else
            "so this chapter's runs (profile {p}) never see a cropped or flipped image (the profile's "
            "setting augment is off)").format(p=prof.name)
    return f"{both}, {here}."


def training_confidence(run) -> dict:
    """The last recorded epoch of ``run`` (recorded with ``eval_every_epoch``) on its training
    set: ``epoch``, ``n_train``, ``accuracy``, ``confidence`` and ``ece`` (percent; eval mode,
    no augmentation), ``top_bin`` (percent of training images in the highest of the recorded
    training-reliability bins, with ``top_bin_from``, its lower edge) and ``direction``
    ("under-confident" when the mean confidence is below the accuracy, else "over-confident")."""
    rows = [r for r in run.history if isinstance(r.get("train"), dict) and "confidence" in r["train"]]
    if not rows:
        raise ValueError(f"run {run.key} has no per-epoch training-set metrics (trained without eval_every_epoch)")
    last = rows[-1]
    t = last["train"]
    acc, conf = 100 * (1 - float(t["error"])), 100 * float(t["confidence"])
    out = {"epoch": int(last["epoch"]), "n_train": run.resolved.get("n_train"), "accuracy": acc,
           "confidence": conf, "ece": 100 * float(t["ece"]),
           "direction": "under-confident" if conf < acc else "over-confident"}
    bins = last.get("train_reliability")
    if bins:
        count = [float(c) for c in bins["count"]]
        out["top_bin"] = 100 * count[-1] / sum(count)
        out["top_bin_from"] = float(bins["edges"][-2])
    return out


def grid_difference(ours: pd.DataFrame, other: pd.DataFrame, labels: dict | None = None) -> dict:
    """Post-TS ECE of the same models in two evaluations that chose T on different grids.

    ``ours``: a :func:`replicate.comparison.evaluate_runs` frame (rows ``metric == "ece"``,
    ``temperature_scaled``); ``other``: a :func:`replicate.comparison.evaluate_posthoc` frame
    with ``posthoc == "ts"``, ``select == "ece"``, ``metric == "ece"``. Returns
    ``n_models``, ``n_other_T`` (models whose chosen T differs) and, for the model whose ECE
    moves most, ``method`` (its label from ``labels``), ``seed``, ``ece``/``T`` in ``ours``,
    ``ece_other``/``T_other`` and ``difference`` (points of ECE)."""
    a = ours[(ours["metric"] == "ece") & ours["temperature_scaled"].astype(bool)][["method", "seed", "value", "T"]]
    b = other[(other["posthoc"] == "ts") & (other["select"] == "ece") & (other["metric"] == "ece")]
    b = b[["method", "seed", "value", "T"]].rename(columns={"value": "value_other", "T": "T_other"})
    m = a.merge(b, on=["method", "seed"])
    if m.empty:
        raise ValueError("the two frames share no (method, seed) with a post-TS ECE")
    m["difference"] = m["value_other"] - m["value"]
    worst = m.loc[m["difference"].abs().idxmax()]
    return {"n_models": len(m), "n_other_T": int((~m["T"].sub(m["T_other"]).abs().lt(1e-9)).sum()),
            "method": (labels or {}).get(worst["method"], worst["method"]), "seed": int(worst["seed"]),
            "ece": float(worst["value"]), "T": float(worst["T"]), "ece_other": float(worst["value_other"]),
            "T_other": float(worst["T_other"]), "difference": float(worst["difference"])}
