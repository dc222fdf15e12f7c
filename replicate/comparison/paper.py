"""The paper's side of a comparison: which printed row we compare with, and its numbers.

Any paper of :mod:`replicate.paper_tables` whose ``PAPER`` metadata says which tables
report which metric (``metric_tables``), which printed method names stand for one of our
methods (``method_aliases``) and which network's row to compare with when the paper did
not train ours (``closest_model``: per data kind "image"/"text").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..papers import get_paper

#: Data sets of text (their closest row is the paper's text network).
TEXT_DATASETS = ("20newsgroups",)


@dataclass(frozen=True)
class PaperReference:
    """The row of ``paper``'s tables that our numbers are compared with: printed data set
    and network labels; ``exact`` is False when the paper did not train our network and
    ``model`` is the closest row; ``found`` is False when the paper has no row for our
    data set at all (every paper cell then shows "–")."""

    dataset: str
    model: str
    exact: bool
    note: str
    paper: str = "mukhoti2020"
    found: bool = True


def metric_tables(paper: str) -> dict:
    """``{metric: (table keys)}``: where ``paper`` prints each metric of the comparisons."""
    from .. import paper_tables

    return dict(paper_tables.paper_info(paper).get("metric_tables", {}))


def _rows(paper: str) -> pd.DataFrame:
    """Every (dataset, model) row of the paper's metric tables, with their keys."""
    from .. import paper_tables

    tables = dict.fromkeys(t for ts in metric_tables(paper).values() for t in ts)
    frames = [paper_tables.get(paper, t)[["dataset", "model", "dataset_key", "model_key"]] for t in tables]
    return pd.concat(frames).drop_duplicates() if frames else pd.DataFrame(
        columns=["dataset", "model", "dataset_key", "model_key"])


def paper_reference(dataset: str, model: str, paper: str = "mukhoti2020") -> PaperReference:
    """``paper``'s row for our ``dataset`` and network ``model``: the exact row if the
    paper trained that network on that data set, else the row of its ``closest_model``
    for the data kind (e.g. ResNet 50 for images), else no row (``found`` False)."""
    from .. import paper_tables

    name = get_paper(paper).short
    rows = _rows(paper)
    here = rows[rows.dataset_key == dataset]
    exact = here[here.model_key == model]
    if len(exact):
        d, m = exact.iloc[0][["dataset", "model"]]
        return PaperReference(d, m, True, f"{d}, {m}", paper)
    kind = "text" if dataset in TEXT_DATASETS else "image"
    closest = paper_tables.paper_info(paper).get("closest_model", {}).get(kind)
    near = here[here.model == closest]
    if len(near):
        d = near.iloc[0]["dataset"]
        return PaperReference(d, closest, False, f"{d}, {closest} (closest row: {name} did not train our network "
                                                 f"{model})", paper)
    return PaperReference(dataset, model, False, f"{name} reports no {dataset} row", paper, found=False)


COLUMNS = ["method", "metric", "temperature_scaled", "mean", "std", "T", "T_std", "n_seeds", "tables", "spread",
           "note"]


def paper_values(ref: PaperReference, metrics=None, setting: str = "") -> pd.DataFrame:
    """The paper's numbers of the row ``ref`` in :func:`replicate.comparison.summarise`'s
    layout (``mean``, ``T``; ``std`` NaN, ``n_seeds`` 0), plus ``tables`` (where each
    number is printed), ``spread`` (a printed ± term) and ``note`` (a cell's defect).
    A number printed in several tables appears once; printed aliases
    (``method_aliases``) are renamed to our method keys. ``setting`` selects the rows of an
    ablation setting (default: the main rows)."""
    from .. import paper_tables

    known = metric_tables(ref.paper)
    metrics = tuple(known) if metrics is None else tuple(metrics)
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ValueError(f"{ref.paper} reports no metric {unknown}; allowed: {', '.join(known) or 'none'}")
    frames = []
    for table in dict.fromkeys(t for m in metrics for t in known[m]):
        df = paper_tables.get(ref.paper, table)
        frames.append(df[(df.dataset == ref.dataset) & (df.model == ref.model) & (df.setting == setting)
                         & df.metric.isin(metrics)])
    if not ref.found or not frames or not sum(len(f) for f in frames):
        return pd.DataFrame(columns=COLUMNS)
    df = pd.concat(frames, ignore_index=True)
    df["method"] = df["method"].replace(paper_tables.paper_info(ref.paper).get("method_aliases", {}))
    df["tables"] = df["table"].str.replace("table", "", regex=False)
    keys = ["method", "metric", "temperature_scaled"]
    tables = df.groupby(keys, sort=False)["tables"].agg(lambda s: ", ".join(dict.fromkeys(s)))
    df = df.drop_duplicates(keys).drop(columns="tables").merge(tables.reset_index(), on=keys)
    df = df.rename(columns={"value": "mean", "optimal_T": "T"})
    df["std"], df["T_std"], df["n_seeds"] = math.nan, math.nan, 0
    return df[COLUMNS].reset_index(drop=True)
