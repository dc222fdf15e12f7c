"""The leaderboard's numbers: every run under the three post-hoc settings (:func:`evaluate`),
the method labels, and Kendall's tau between our ranking and each paper's printed one
(:func:`agreement`) or between the papers (:func:`between_papers`)."""
from __future__ import annotations

import pandas as pd

from ... import comparison as cmp
from ...comparison import agreement as agr
from ...comparison import board
from .plan import AGREEMENT_COLUMNS, EXCLUDED, FTS_PAPER, FTS_SETTING, HEADLINE


def evaluate(runs: dict, log=None) -> tuple[dict, pd.DataFrame]:
    """``(calibrated, frame)``: every run of ``{(method, seed): Run}`` under the three post-hoc
    settings, and every metric of :data:`replicate.comparison.board.BOARD_METRICS` per run."""
    calibrated = board.calibrate_runs(runs, log=log)
    return calibrated, board.evaluate_board(calibrated)


def labels(methods=None) -> dict:
    """``{method key: label}`` of the catalogue (all methods by default): the short label, or
    the full one where two methods share a short label (the two AdaFocal rules)."""
    every = list(cmp.METHODS.values())
    shared = {m.short for m in every if sum(o.short == m.short for o in every) > 1}
    return {m.key: m.label if m.short in shared else m.short for m in (methods or every)}


def name(key: str) -> str:
    """The label of a method key (:func:`labels`); the key itself when unknown."""
    return labels().get(key, key)


def excluded(paper: str) -> dict:
    """``{printed key: reason}`` of the printed methods of ``paper`` left out of the rank
    comparisons; the reason is the paper table's own note on the method."""
    from ... import paper_tables

    notes = paper_tables.paper_info(paper).get("method_notes", {})
    return {k: notes.get(k, "not one of our methods") for k in EXCLUDED.get(paper, ())}


def agreement(calibrated: dict, methods, n_boot: int = 200, seed: int = 0, ranks: dict | None = None
              ) -> pd.DataFrame:
    """Kendall's tau between our ranking and each paper's printed CIFAR-10 ResNet-50 ranking of
    the methods it shares with us, for each column of :data:`AGREEMENT_COLUMNS`: one row per
    (paper, column, reading of the printed AdaFocal). Columns ``paper, column, reading, n,
    tau, low, high, p, methods, our_setting, our_metric, note``; ``attrs["ranks"]`` holds our
    rank frames by (setting, metric); ``ranks`` passes frames already computed (same keys)."""
    ranks, rows = dict(ranks or {}), []
    for paper, columns in AGREEMENT_COLUMNS.items():
        for label, metric, scaled, setting, ours, our_metric in columns:
            printed = agr.printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
            if (ours, our_metric) not in ranks:
                ranks[(ours, our_metric)] = board.rank_intervals(calibrated, our_metric, ours, n_boot, seed)
            for mapping in agr.readings(printed, methods):
                res = agr.our_agreement(ranks[(ours, our_metric)], printed, mapping)
                choice = [f"ours: {name(k)}" for k, v in mapping.items() if k != v]
                rows.append({"paper": paper, "column": label, "reading": "; ".join(choice), "n": res["n"],
                             "tau": res["tau"], "low": res["low"], "high": res["high"], "p": res["p"],
                             "methods": ", ".join(name(k) for k in res["methods"]), "our_setting": ours,
                             "our_metric": our_metric, "note": res["reason"]})
    out = pd.DataFrame(rows)
    out.attrs["ranks"] = ranks
    return out


def paper_columns(label: str) -> dict:
    """``{paper: {printed key: value}}`` of the column ``label`` of :data:`AGREEMENT_COLUMNS`
    (e.g. "post-T ECE") for every paper that prints it (excluded methods left out)."""
    out = {}
    for paper, columns in AGREEMENT_COLUMNS.items():
        for lab, metric, scaled, setting, _, _ in columns:
            if lab == label:
                out[paper] = agr.printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
    return out


def between_papers() -> pd.DataFrame:
    """Every pair of papers, per printed column they share (pre-T ECE, post-T ECE) and, with
    the FTS paper's equal-mass ECE after TS, the other papers' post-T AdaECE: Kendall's tau of
    their printed values on the shared methods, and how many of those numbers are identical."""
    frames = []
    for label in ("pre-T ECE", "post-T ECE"):
        frames.append(agr.between_papers(paper_columns(label)).assign(column=label))
    adaece = {p: agr.printed_column(p, "adaece", True) for p in HEADLINE}
    adaece[FTS_PAPER] = agr.printed_column(FTS_PAPER, "adaece", True, FTS_SETTING, exclude=excluded(FTS_PAPER))
    frames.append(agr.between_papers(adaece).assign(column="post-T AdaECE (FTS: equal-mass ECE after TS)"))
    return pd.concat(frames, ignore_index=True)
