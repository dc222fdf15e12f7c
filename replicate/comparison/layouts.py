"""A paper's tables in long form over every row and setting, ours in the same form, and the
layouts of tables that are not one row per method: ablations by setting, means with a spread
over seeds, and the defects recorded beside a table.

A claim such as "AdaFocal has the lowest ECE in 9 of 11 cases" is about every row of a
paper's table, not one. The long form (:data:`LONG`) holds one number per line: ``table,
row, dataset_key, model_key, setting, method, metric, temperature_scaled, mean, sd, se, T,
T_sd, n, note``. The paper's side is every printed cell of the chosen tables
(:func:`paper_long`; ``n`` 0; the printed ``±`` term in ``se`` or ``sd`` by the table's
spread kind) or of the chosen metrics (:func:`paper_rows`: a cell printed in several tables
kept once, printed method names as our keys); ours (:func:`summary_long`) is a
:func:`replicate.comparison.summarise` frame of our runs labelled with the table it stands
beside. A rule such as "lowest MCE in most rows of Table 7" reads either side (through
:func:`pivot`, or by selecting lines), so that one rule decides a claim on the paper's own
table and on our runs.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .paper import _rows, metric_tables

LONG = ["table", "row", "dataset_key", "model_key", "setting", "method", "metric", "temperature_scaled", "mean", "sd",
        "se", "T", "T_sd", "n", "note"]


def row_label(dataset: str, model: str) -> str:
    """"CIFAR-10, ResNet-50": how a table row is named in claims and tables."""
    return f"{dataset}, {model}"


def paper_long(paper: str, tables) -> pd.DataFrame:
    """Every printed number of ``paper``'s ``tables`` (keys such as "table1") in :data:`LONG`
    form, rows in the paper's order; ``T`` is the printed temperature, ``note`` a cell's
    recorded defect. A printed ``±`` goes to ``se`` when the table's spread kind says
    "standard error", else to ``sd``."""
    from .. import paper_tables

    tables = [tables] if isinstance(tables, str) else list(tables)
    if not tables:
        raise ValueError("tables must name at least one table")
    frames = []
    for t in tables:
        df = paper_tables.get(paper, t)
        se = "standard error" in str(df.attrs.get("spread", ""))
        frames.append(pd.DataFrame({
            "table": t, "row": [row_label(d, m) for d, m in zip(df.dataset, df.model)],
            "dataset_key": df.dataset_key, "model_key": df.model_key, "setting": df.setting, "method": df.method,
            "metric": df.metric, "temperature_scaled": df.temperature_scaled.astype(bool), "mean": df.value,
            "sd": math.nan if se else df.spread, "se": df.spread if se else math.nan, "T": df.optimal_T,
            "T_sd": math.nan, "n": 0, "note": df.note}))
    return pd.concat(frames, ignore_index=True)[LONG]


def paper_rows(paper: str, metrics=None, settings=("",)) -> pd.DataFrame:
    """Every printed number of ``metrics`` (default: every metric of ``paper``'s
    :func:`replicate.comparison.metric_tables`) over every (data set, network) row and each
    ``setting`` ("" = the main rows; e.g. "ood=SVHN") in :data:`LONG` form, plus ``tables``
    (the numbers of the tables that print the cell, e.g. "1, 5"). A cell printed in several
    tables is kept once (``table``: the first); a row is named by its first spelling in the
    paper's metric tables (so "Resnet-50" and "ResNet-50" are one row); rows keep the
    paper's order; printed method aliases become our method keys."""
    from .. import paper_tables

    known = metric_tables(paper)
    metrics = tuple(known) if metrics is None else tuple(metrics)
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ValueError(f"{paper} reports no metric {unknown}; allowed: {', '.join(known) or 'none'}")
    tables = list(dict.fromkeys(t for m in metrics for t in known[m]))
    df = paper_long(paper, tables) if tables else pd.DataFrame(columns=LONG)
    df = df[df.metric.isin(metrics) & df.setting.isin(tuple(settings))].copy()
    if not len(df):
        return pd.DataFrame(columns=LONG + ["tables"])
    first = _rows(paper).drop_duplicates(["dataset_key", "model_key"])
    label = {(d, m): row_label(a, b) for a, b, d, m in first[["dataset", "model", "dataset_key",
                                                            "model_key"]].itertuples(index=False)}
    df["row"] = [label[k] for k in zip(df.dataset_key, df.model_key)]
    df["method"] = df["method"].replace(paper_tables.paper_info(paper).get("method_aliases", {}))
    df["tables"] = df["table"].str.replace("table", "", regex=False)
    keys = ["row", "setting", "method", "metric", "temperature_scaled"]
    printed_in = df.groupby(keys, sort=False)["tables"].agg(lambda s: ", ".join(dict.fromkeys(s)))
    df = df.drop_duplicates(keys).drop(columns="tables").merge(printed_in.reset_index(), on=keys)
    order = {r: i for i, r in enumerate(label.values())}
    df = df.sort_values("row", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    return df[LONG + ["tables"]]


def summary_long(summary: pd.DataFrame, table: str, row: str, dataset_key: str, model_key: str, setting="",
                 metrics=None, rename: dict | None = None) -> pd.DataFrame:
    """A :func:`replicate.comparison.summarise` frame of our runs as lines of ``table`` in
    :data:`LONG` form: one ``row`` (e.g. "ours: cifar10, tiny_cnn") of ``dataset_key`` and
    ``model_key``, ``setting`` a string or
    ``{method: setting}`` (an ablation's methods are its settings), only ``metrics`` (None:
    all), methods renamed by ``rename``; ``se`` is ``sd / sqrt(n)`` over seeds."""
    f = summary if metrics is None else summary[summary.metric.isin(tuple(metrics))]
    f = f.copy()
    f["method_key"] = f["method"]
    f["method"] = f["method"].replace(rename or {})
    sett = f["method_key"].map(setting).fillna("") if isinstance(setting, dict) else setting
    n = f["n_seeds"].astype(float)
    return pd.DataFrame({
        "table": table, "row": row, "dataset_key": dataset_key, "model_key": model_key, "setting": sett,
        "method": f["method"], "metric": f["metric"], "temperature_scaled": f["temperature_scaled"].astype(bool),
        "mean": f["mean"], "sd": f["std"], "se": f["std"] / np.sqrt(n), "T": f["T"], "T_sd": f["T_std"],
        "n": f["n_seeds"], "note": ""})[LONG].reset_index(drop=True)


def rename_method(frame: pd.DataFrame, old: str, new: str, drop=()) -> pd.DataFrame:
    """``frame`` with method ``old`` called ``new`` (e.g. one of our two AdaFocal rules as
    the paper's ``adafocal``) and the methods of ``drop`` left out."""
    f = frame[~frame["method"].isin(tuple(drop))].copy()
    f["method"] = f["method"].replace({old: new})
    return f


def pivot(long: pd.DataFrame, table: str, metric: str, scaled: bool = False, setting: str | None = "",
          col: str = "mean", among=None) -> pd.DataFrame:
    """One number per (row, method) of ``table``/``metric`` (pre or post T, ``setting``; None:
    every setting, the index is then (row, setting)), column ``col``; rows and methods in
    order of appearance, restricted to the methods ``among``; missing cells NaN."""
    if col not in ("mean", "sd", "se", "T", "T_sd", "n"):
        raise ValueError(f"col must be one of mean, sd, se, T, T_sd, n; got {col!r}")
    f = long[(long.table == table) & (long.metric == metric) & (long.temperature_scaled == bool(scaled))]
    if setting is not None:
        f = f[f.setting == setting]
    index = ["row"] if setting is not None else ["row", "setting"]
    out = f.pivot_table(index=index, columns="method", values=col, aggfunc="first", sort=False, dropna=False)
    out.columns.name = None
    if among is not None:
        out = out.reindex(columns=[m for m in among if m in out.columns])
    return out


def _cell(long, table, method, metric, scaled, setting):
    if long is None or not len(long):
        return None
    r = long[(long.table == table) & (long.method == method) & (long.metric == metric)
             & (long.temperature_scaled == bool(scaled)) & (long.setting == setting)]
    return r.iloc[0] if len(r) else None


def _text(r, spread: str = "sd", digits: int = 2, with_T: bool = False) -> str:
    if r is None or pd.isna(r["mean"]):
        return "–"
    s = f"{r['mean']:.{digits}f}"
    if not pd.isna(r[spread]):
        s += f" ± {r[spread]:.{digits}f}"
    if with_T and not pd.isna(r["T"]):
        s += f" ({r['T']:.2f})"
    return s


#: A metric's column heading in the side-by-side tables, as the book's glossary writes it
#: (issue #32, item 1); a metric missing here is headed by its name in METRIC_NAMES.
HEADINGS = {"ece": "ECE (%)", "adaece": "AdaECE (%)", "classwise_ece": "classwise ECE (%)", "mce": "MCE (%)",
            "nll": "NLL (x100)", "error": "test error (%)", "brier": "Brier score (x100)", "smece": "smooth ECE (%)",
            "debiased_ece": "debiased ECE (%, 15 bins)", "debiased_ece_30": "debiased ECE (%, 30 bins)",
            "sweep_ece": "ECE sweep (%, equal-width)", "sweep_ece_mass": "ECE sweep (%, equal-mass)",
            "auroc": "AUROC (%)", "accuracy": "accuracy (%)", "rbs": "RBS", "ece_kde": "ECE KDE",
            "s99_fraction": "|S99| (%)", "s99_accuracy": "accuracy on S99 (%)"}


def heading(metric: str, scaled: bool = False) -> str:
    """``"classwise_ece"`` -> ``"classwise ECE (%)"``; ``scaled`` adds " post T"."""
    from .evaluation import METRIC_NAMES

    words = HEADINGS.get(metric) or METRIC_NAMES.get(metric, metric)
    return words + (" post T" if scaled else "")


def by_label(frame: pd.DataFrame, index: str = "row", digits: int = 2, caption: str = ""):
    """``frame`` (methods as columns, by key, e.g. a :func:`pivot`) as a reader sees it: each
    method headed by its catalogue label ("flsd53" -> "FLSD-53"), the index a column headed
    ``index``, numbers to ``digits`` decimals, "–" for a missing cell, no pandas index."""
    from .methods import short

    lab = {"adafocal": "AdaFocal"}
    out = frame.rename(columns=lambda k: lab.get(k) or short(k)).rename_axis(index=index, columns=None)
    out = out.reset_index().style.hide(axis="index").format(precision=digits, na_rep="–")
    return out.set_caption(caption) if caption else out


def rows_by_label(frame: pd.DataFrame, digits: int = 2, caption: str = ""):
    """``frame`` (a row per method key) as a reader sees it: a ``method`` column of the
    catalogue labels, numbers to ``digits`` decimals, "–" for a missing cell, no pandas index."""
    from .methods import short

    out = frame.rename(index=lambda k: "AdaFocal" if k == "adafocal" else short(k)).rename_axis("method")
    out = out.reset_index().style.hide(axis="index").format(precision=digits, na_rep="–")
    return out.set_caption(caption) if caption else out


def _metric(m) -> tuple[str, bool, str]:
    """``"ece"`` or ``("ece", True)`` -> ``(metric, scaled, heading)`` (:func:`heading`)."""
    metric, scaled = (m, False) if isinstance(m, str) else (m[0], bool(m[1]))
    return metric, scaled, heading(metric, scaled)


def _check_metrics(metrics, *frames) -> None:
    from .evaluation import METRICS

    known = set(METRICS).union(*(set(f["metric"]) for f in frames if f is not None and len(f)))
    unknown = [m for m in (_metric(m)[0] for m in metrics) if m not in known]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(sorted(known))}")


def settings_side_by_side(ours: pd.DataFrame | None, paper: pd.DataFrame | None, table: str, metrics, settings,
                          columns: dict, paper_method: str, labels: dict | None = None,
                          digits: int = 2) -> pd.DataFrame:
    """An ablation table: a row per ``setting``; for each metric of ``metrics`` (a name, pre
    T, or ``(name, post_T)``) the paper's value (method ``paper_method``), then one column
    per entry of ``columns`` (``{our method key: column label}``, e.g. two readings of the
    same row) with ours (mean ± sd over seeds) and ours minus the paper's. ``labels``
    renames the settings. A metric neither the table metrics nor either frame knows is
    refused (a misspelt name would give a column of dashes)."""
    _check_metrics(metrics, ours, paper)
    frame = {}
    for setting in settings:
        row = {}
        for m in metrics:
            metric, scaled, head = _metric(m)
            p = _cell(paper, table, paper_method, metric, scaled, setting)
            row[(head, "paper")] = _text(p, digits=digits)
            for method, label in columns.items():
                o = _cell(ours, table, method, metric, scaled, setting)
                row[(head, label)] = _text(o, digits=digits)
                diff = math.nan if o is None or p is None else o["mean"] - p["mean"]
                row[(head, f"{label} − paper")] = "–" if pd.isna(diff) else f"{diff:.{digits}f}"
        frame[(labels or {}).get(setting, setting)] = row
    out = pd.DataFrame(frame).T
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "setting"
    return out


def methods_side_by_side(ours: pd.DataFrame | None, paper: pd.DataFrame | None, table: str, metrics,
                         methods: dict, paper_row: str | None, setting: str = "", digits: int = 2,
                         rename: dict | None = None) -> pd.DataFrame:
    """A row per method (``{our method key: label}``) of ``table``: for each metric of
    ``metrics`` (a name, pre T, or ``(name, post_T)``) the paper's value on ``paper_row``
    (with its T), ours (mean ± sd over seeds, with T) and ours minus the paper's.
    ``rename`` maps our keys to the paper's where they differ (e.g. our AdaFocal rule)."""
    pap = None if paper is None or paper_row is None else paper[paper.row == paper_row]
    frame = {}
    for method, label in methods.items():
        row = {}
        for m in metrics:
            metric, scaled, head = _metric(m)
            p = _cell(pap, table, (rename or {}).get(method, method), metric, scaled, setting)
            o = _cell(ours, table, method, metric, scaled, setting)
            row[(head, "paper")] = _text(p, digits=digits, with_T=scaled)
            row[(head, "ours")] = _text(o, digits=digits, with_T=scaled)
            diff = math.nan if o is None or p is None else o["mean"] - p["mean"]
            row[(head, "ours − paper")] = "–" if pd.isna(diff) else f"{diff:.{digits}f}"
        frame[label] = row
    out = pd.DataFrame(frame).T
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "method"
    return out


def spread_side_by_side(ours: pd.DataFrame | None, paper: pd.DataFrame | None, table: str, cells,
                        methods: dict, digits: int = 2) -> pd.DataFrame:
    """A table of means with their standard errors (e.g. a robustness table over seeds): a
    row per method (``{method key: label}``); for each ``(metric, scaled, heading)`` of
    ``cells`` the paper's "mean ± se" and ours ("mean ± se" over our seeds)."""
    frame = {}
    for method, label in methods.items():
        row = {}
        for metric, scaled, heading in cells:
            row[(heading, "paper")] = _text(_cell(paper, table, method, metric, scaled, ""), "se", digits)
            row[(heading, "ours")] = _text(_cell(ours, table, method, metric, scaled, ""), "se", digits)
        frame[label] = row
    out = pd.DataFrame(frame).T
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "method"
    return out


def table_notes(paper: str, tables, rows=None, whole: bool = True, shared_opening: bool = False) -> pd.DataFrame:
    """The recorded defects of ``paper``'s ``tables``: one line per table note (``cell``
    "table") and per annotated cell (row, setting, method, pre/post T, printed text, note;
    cells sharing a note are merged), to show beside the table. ``rows`` (labels of
    :func:`row_label`) keeps only the cell notes of those rows; ``whole`` False leaves the
    table notes out (cell notes only). ``shared_opening``: where several of ``tables`` are
    specs of one printed table (the same number) whose notes open with the same sentences,
    that opening is one line (``cell`` "table") and each spec's rest a line of its own
    (``cell`` "table (<its metric>)")."""
    from .. import paper_tables

    frames = [paper_tables.get(paper, t) for t in ([tables] if isinstance(tables, str) else tables)]
    openings = _shared_openings(frames) if shared_opening else {}
    out_rows = []
    for df in frames:
        label = f"Table {df.attrs['number']}"
        if whole and df.attrs.get("notes"):
            opening = openings.get(df.attrs["number"], "")
            own = df.attrs["notes"][len(opening):].strip()
            if opening:
                out_rows.append({"table": label, "cell": "table", "printed": "", "note": opening})
            if own:
                out_rows.append({"table": label, "cell": f"table ({df.attrs['metric']})" if opening else "table",
                                 "printed": "", "note": own})
        noted = df[df["note"].astype(str).str.len() > 0]
        if rows is not None:
            noted = noted[[row_label(d, m) in set(rows) for d, m in zip(noted.dataset, noted.model)]]
        for _, r in noted.iterrows():
            where = ", ".join(x for x in (r["dataset"], r["model"], r["setting"], r["method_label"],
                                          "post T" if r["temperature_scaled"] else "pre T") if x)
            out_rows.append({"table": label, "cell": where, "printed": str(r["printed"]), "note": r["note"]})
    out = pd.DataFrame(out_rows, columns=["table", "cell", "printed", "note"])
    if not len(out):
        return out
    merged = out.groupby(["table", "note"], sort=False, as_index=False).agg(
        cell=("cell", lambda s: "; ".join(dict.fromkeys(s))), printed=("printed", lambda s: ", ".join(x for x in dict.fromkeys(s) if x)))
    return merged[["table", "cell", "printed", "note"]]


def _shared_openings(frames) -> dict:
    """``{table number: the whole sentences its specs' notes open with}`` for the numbers
    printed as two or more specs of ``frames`` with notes."""
    import os

    by_number = {}
    for df in frames:
        if df.attrs.get("notes"):
            by_number.setdefault(df.attrs["number"], []).append(df.attrs["notes"])
    out = {}
    for number, notes in by_number.items():
        common = os.path.commonprefix(notes) if len(notes) > 1 else ""
        common = common[:common.rfind(". ") + 1] if ". " in common else ""
        if common:
            out[number] = common
    return out
