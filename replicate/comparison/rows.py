"""A paper's tables as one frame over all its (data set, network) rows, and ours beside them.

A claim such as "AdaFocal has the lowest ECE in 9 of 11 cases" is about every row of a
paper's table, not one. :func:`paper_rows` gathers the printed numbers of every row (in
:func:`replicate.comparison.summarise`' layout, plus ``row`` and ``setting``);
:func:`our_rows` does the same for our runs, so that one rule reads either.
"""
from __future__ import annotations

import pandas as pd

from .paper import _rows, metric_tables

ROW_COLUMNS = ["row", "dataset_key", "setting", "method", "metric", "temperature_scaled", "mean", "std", "T", "n_seeds"]


def row_label(dataset: str, model: str) -> str:
    """"CIFAR-10, ResNet-50": how a row is named in claims and tables."""
    return f"{dataset}, {model}"


def paper_rows(paper: str, metrics=None, settings=("",)) -> pd.DataFrame:
    """Every printed number of ``metrics`` (default: all of ``paper``'s ``metric_tables``)
    over every (data set, network) row and each ``setting`` ("" = the main rows; e.g.
    "ood=SVHN"), with columns :data:`ROW_COLUMNS` plus ``tables`` and ``note``. Rows keep
    the paper's order; printed aliases are our method keys."""
    from .. import paper_tables

    known = metric_tables(paper)
    metrics = tuple(known) if metrics is None else tuple(metrics)
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ValueError(f"{paper} reports no metric {unknown}; allowed: {', '.join(known) or 'none'}")
    # each table read once; the same selection and layout as paper_values, for every row
    frames = [paper_tables.get(paper, t) for t in dict.fromkeys(t for m in metrics for t in known[m])]
    df = pd.concat(frames, ignore_index=True)
    df = df[df.metric.isin(metrics) & df.setting.isin(tuple(settings))].copy()
    if not len(df):
        return pd.DataFrame(columns=ROW_COLUMNS + ["tables", "note"])
    first = _rows(paper).drop_duplicates(["dataset_key", "model_key"])
    label = {(d, m): row_label(a, b) for a, b, d, m in first[["dataset", "model", "dataset_key",
                                                            "model_key"]].itertuples(index=False)}
    df["row"] = [label[k] for k in zip(df.dataset_key, df.model_key)]
    df["method"] = df["method"].replace(paper_tables.paper_info(paper).get("method_aliases", {}))
    df["tables"] = df["table"].str.replace("table", "", regex=False)
    keys = ["row", "setting", "method", "metric", "temperature_scaled"]
    tables = df.groupby(keys, sort=False)["tables"].agg(lambda s: ", ".join(dict.fromkeys(s)))
    df = df.drop_duplicates(keys).drop(columns="tables").merge(tables.reset_index(), on=keys)
    df = df.rename(columns={"value": "mean", "optimal_T": "T"})
    df["std"], df["T_std"], df["n_seeds"] = float("nan"), float("nan"), 0
    order = {r: i for i, r in enumerate(label.values())}
    df = df.sort_values("row", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    return df[ROW_COLUMNS + ["T_std", "tables", "spread", "note"]]


def our_rows(summary: pd.DataFrame, row: str, dataset: str, setting: str = "") -> pd.DataFrame:
    """A :func:`replicate.comparison.summarise` frame of our runs on ``dataset`` (its key) as
    one table row ``row`` (with ``setting``), in :func:`paper_rows`' layout."""
    return summary.assign(row=row, dataset_key=dataset, setting=setting)[ROW_COLUMNS]


def rename_method(frame: pd.DataFrame, old: str, new: str, drop=()) -> pd.DataFrame:
    """``frame`` with method ``old`` called ``new`` (e.g. one of our two AdaFocal rules as
    the paper's ``adafocal``) and the methods of ``drop`` left out."""
    f = frame[~frame["method"].isin(tuple(drop))].copy()
    f["method"] = f["method"].replace({old: new})
    return f


def settings_side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, method: str, metrics, settings,
                          labels: dict | None = None, digits: int = 2) -> pd.DataFrame:
    """An ablation table (e.g. AdaFocal Table 9): a row per ``setting`` ("bins=5", ...), for
    each metric of ``metrics`` the paper's value, ours (mean ± std over seeds) and ours minus
    the paper's, pre-T, for ``method``. Both frames are in :func:`paper_rows`' layout
    (``paper`` None: every paper cell "–"); ``labels`` renames the settings."""
    from .tables import METRICS, _fmt

    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}")

    def cell(frame, setting, metric):
        if frame is None or not len(frame):
            return float("nan"), float("nan")
        r = frame[(frame.setting == setting) & (frame.method == method) & (frame.metric == metric)
                  & (~frame.temperature_scaled.astype(bool))]
        return (float(r["mean"].iloc[0]), float(r["std"].iloc[0])) if len(r) else (float("nan"), float("nan"))

    table = {}
    for setting in settings:
        row = {}
        for m in metrics:
            p, _ = cell(paper, setting, m)
            o, sd = cell(ours, setting, m)
            row[(m, "paper")] = _fmt(p, digits=digits)
            row[(m, "ours")] = _fmt(o, sd, digits=digits)
            row[(m, "ours − paper")] = _fmt(o - p, digits=digits)
        table[(labels or {}).get(setting, setting)] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "setting"
    return frame


def table_notes(paper: str, tables) -> pd.DataFrame:
    """The recorded defects of ``paper``'s ``tables`` (keys such as "table1"): one row per
    table note (``cell`` "table") and per annotated cell (its data set, network, setting,
    method, pre/post T, printed text and note; cells sharing a note and printed text are
    merged), to show beside the table."""
    from .. import paper_tables

    rows = []
    for t in tables:
        df = paper_tables.get(paper, t)
        if df.attrs.get("notes"):
            rows.append({"table": t.replace("table", "Table "), "cell": "table", "printed": "",
                         "note": df.attrs["notes"]})
        noted = df[df["note"].astype(str).str.len() > 0]
        for _, r in noted.drop_duplicates(["dataset", "model", "setting", "method", "temperature_scaled",
                                           "note"]).iterrows():
            where = ", ".join(x for x in (r["dataset"], r["model"], r["setting"], r["method_label"],
                                          "post T" if r["temperature_scaled"] else "pre T") if x)
            rows.append({"table": t.replace("table", "Table "), "cell": where, "printed": str(r["printed"]),
                         "note": r["note"]})
    out = pd.DataFrame(rows, columns=["table", "cell", "printed", "note"])
    # one row per (table, printed text, note): identical notes of several cells are merged
    return out.groupby(["table", "printed", "note"], sort=False, as_index=False).agg(
        cell=("cell", "; ".join))[["table", "cell", "printed", "note"]]
