"""What the leaderboard chapter says in its prose, from the evaluated frames: the best
method, a paper's printed number, overlapping rank intervals, identical models and the
agreement counts. Nothing here trains or decides a claim."""
from __future__ import annotations

import math

import pandas as pd

from ...comparison import agreement as agr
from ...comparison import board
from .evidence import name


def best(summary: pd.DataFrame, metric: str = "ece", setting: str = "none") -> dict:
    """The method with the best mean ``metric`` after ``setting`` (lowest; highest for the
    AUROC) and the runner-up: ``{"key", "label", "mean", "sd", "text", "second", "second_text"}``."""
    part = summary[(summary.metric == board.check_metric(metric)) & (summary.setting == board.check_setting(setting))]
    part = part.dropna(subset=["mean"]).sort_values("mean", ascending=metric not in board.HIGHER_IS_BETTER)
    if part.empty:
        return {"key": None, "label": "not available", "mean": math.nan, "sd": math.nan, "text": "not available",
                "second": "not available", "second_text": "not available"}

    def text(r):
        sd = f" ± {r['sd']:.2f}" if math.isfinite(r["sd"]) else ""
        return f"{name(r['method'])} ({r['mean']:.2f}{sd})"

    top = part.iloc[0]
    second = part.iloc[1] if len(part) > 1 else None
    return {"key": top.method, "label": name(top.method), "mean": float(top["mean"]), "sd": float(top["sd"]),
            "text": text(top), "second": name(second.method) if second is not None else "none",
            "second_text": text(second) if second is not None else "none"}


def printed(paper: str, method: str, metric: str = "ece", scaled: bool = False) -> str:
    """One printed number of ``paper``'s CIFAR-10 ResNet-50 row as text ("not printed" when absent)."""
    v = agr.printed_column(paper, metric, scaled).get(method)
    return "not printed" if v is None else f"{v:.2f}"


def neighbours_overlap(ranks: pd.DataFrame) -> tuple[int, int]:
    """``(overlapping, pairs)``: of the methods next to each other in the order of their rank,
    how many pairs have overlapping bootstrap rank intervals (cannot be told apart)."""
    f = ranks.sort_values(["rank", "mean_rank"]).reset_index(drop=True)
    over = sum(f.rank_high[i] >= f.rank_low[i + 1] for i in range(len(f) - 1))
    return int(over), max(len(f) - 1, 0)


def identical_models(runs: dict) -> list[tuple[str, str]]:
    """Pairs of methods whose runs have identical test logits at every seed (e.g. the two
    AdaFocal rules when no gamma reaches a bound, where the rules coincide): the same
    model trained twice under two names."""
    import numpy as np

    methods = list(dict.fromkeys(m for m, _ in runs))
    seeds = sorted({s for _, s in runs})
    z = {k: r.logits("test")[0] for k, r in runs.items()}
    return [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:]
            if all((a, s) in z and (b, s) in z and np.array_equal(z[(a, s)], z[(b, s)]) for s in seeds)]


def agreement_summary(table: pd.DataFrame) -> dict:
    """Counts for the prose from :func:`agreement`: comparisons, how many have a positive tau,
    how many have an interval above 0, and the range of tau."""
    t = table.dropna(subset=["tau"])
    return {"n": len(t), "positive": int((t.tau > 0).sum()), "above_zero": int((t.low > 0).sum()),
            "below_zero": int((t.high < 0).sum()),
            "range": f"{t.tau.min():.2f} to {t.tau.max():.2f}" if len(t) else "not available"}
