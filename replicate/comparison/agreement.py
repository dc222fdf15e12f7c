"""Do the papers rank the methods as we do, and as each other do? Kendall's tau on rankings.

A paper's *printed ranking* is the order of the methods in one column of its CIFAR-10
ResNet-50 row (e.g. pre-T ECE), read by :func:`printed_column` from
:mod:`replicate.paper_tables`. :func:`our_agreement` compares it with our ranking of the
methods both have (ours: the mean over seeds; the interval of tau comes from the bootstrap
replicates of :func:`replicate.comparison.board.rank_intervals`, restricted to the shared
methods: tau depends only on the order, which the restriction keeps). A printed method that
stands for several of ours (the papers' "AdaFocal" for our two AdaFocal rules) gives one
comparison per choice (:func:`readings`). :func:`between_papers` compares the printed
columns of every pair of papers on the methods both print: tau between two single sets of
numbers (no interval), and how many of the shared numbers are identical - a paper that
reprints another's numbers agrees with it trivially.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from ..papers import PAPERS
from . import stats
from .paper import paper_reference, paper_values

#: Two printed numbers closer than this are "identical" (both papers print two decimals).
IDENTICAL_TOL = 0.005


def printed_column(paper: str, metric: str, scaled: bool, setting: str = "", dataset: str = "cifar10",
                   model: str = "resnet50", exclude=()) -> dict:
    """``{printed method key: value}`` of ``paper``'s ``metric`` (pre or post T, rows of
    ``setting``) in its row for ``(dataset, model)``, in printed order; ``exclude``: printed
    keys to leave out. Empty when the paper prints no such column."""
    ref = paper_reference(dataset, model, paper)
    if not ref.exact:
        return {}
    vals = paper_values(ref, [metric], setting=setting)
    vals = vals[(vals.temperature_scaled == scaled) & ~vals.method.isin(list(exclude))]
    return {m: float(v) for m, v in zip(vals.method, vals["mean"]) if not math.isnan(v)}


def readings(printed, ours) -> list[dict]:
    """Every way of matching the printed methods with ours: a list of ``{our key: printed key}``
    (one dict when each printed method stands for at most one of ours). ``ours`` is a list of
    :class:`replicate.comparison.Method` (matched by ``Method.compared_with``)."""
    choices = []
    for p in printed:
        mine = [m.key for m in ours if m.compared_with == p]
        if mine:
            choices.append([(k, p) for k in mine])
    return [dict(combo) for combo in itertools.product(*choices)] if choices else [{}]


def our_agreement(ranks: pd.DataFrame, printed: dict, mapping: dict, level: float = 0.95) -> dict:
    """Kendall's tau-b between our ranking (``ranks``: a :func:`rank_intervals` frame with
    ``attrs["ranks"]``) of the methods of ``mapping`` (``{our key: printed key}``) and the
    printed values ``printed`` of the same methods (lower = better in both), with the
    ``level`` bootstrap interval; ``methods`` lists the shared methods (ours)."""
    keys = [k for k in mapping if k in set(ranks.method) and mapping[k] in printed]
    pos = [list(ranks.method).index(k) for k in keys]
    a = ranks["rank"].to_numpy()[pos]
    b = np.array([printed[mapping[k]] for k in keys])
    reps = ranks.attrs["ranks"][:, pos] if "ranks" in ranks.attrs and keys else None
    out = stats.kendall_tau(a, b, reps, level) if len(keys) else {
        "tau": math.nan, "p": math.nan, "n": 0, "low": math.nan, "high": math.nan, "reason": "no shared methods"}
    return {**out, "methods": keys}


def between_papers(columns: dict) -> pd.DataFrame:
    """Every pair of papers of ``columns`` (``{paper key: {method: value}}``, papers in
    :data:`replicate.papers.PAPERS` order, i.e. by year): shared methods, Kendall's tau-b
    between the two papers' printed values on them, how many shared numbers are identical,
    and a note when every shared number is (the later paper reprints the earlier one's: the
    agreement is then trivial) or some are."""
    order = [p for p in PAPERS if p in columns]
    rows = []
    for p, q in itertools.combinations(order, 2):
        shared = [m for m in columns[p] if m in columns[q]]
        a = [columns[p][m] for m in shared]
        b = [columns[q][m] for m in shared]
        same = int(sum(abs(x - y) < IDENTICAL_TOL for x, y in zip(a, b)))
        res = stats.kendall_tau(a, b) if len(shared) else {"tau": math.nan, "p": math.nan,
                                                          "reason": "no shared methods"}
        if shared and same == len(shared):
            note = (f"all {same} shared numbers identical: {PAPERS[q].short} reprints {PAPERS[p].short}'s "
                    f"numbers, so the agreement is trivial")
        elif same:
            note = f"{same} of {len(shared)} shared numbers identical (reprinted)"
        else:
            note = res.get("reason", "") or ""
        rows.append({"paper_a": p, "paper_b": q, "n": len(shared), "methods": ", ".join(shared),
                     "tau": res["tau"], "p": res["p"], "identical": same, "note": note})
    return pd.DataFrame(rows, columns=["paper_a", "paper_b", "n", "methods", "tau", "p", "identical", "note"])
