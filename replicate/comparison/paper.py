"""The paper's side of a comparison: which printed row we compare with, and its numbers.

Mukhoti et al. (2020) print each metric in several tables (:data:`PAPER_TABLES`): ECE in
Tables 1, 4 and 7 (which repeat columns), AdaECE in 2, 5, 8, error in 3 and 9, NLL in 10
(pre T) and 11 (post T), MCE in 12 and 13, |S99| and its accuracy in Table 6. Classwise
ECE is not reported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

#: metric -> the Mukhoti et al. tables that report it
PAPER_TABLES = {"ece": ("table1", "table4", "table7"), "adaece": ("table2", "table5", "table8"),
                "classwise_ece": (), "mce": ("table12", "table13"), "nll": ("table10", "table11"),
                "error": ("table3", "table9"), "s99_fraction": ("table6",), "s99_accuracy": ("table6",)}
#: Table 6 names its focal model only "Focal Loss"; Appendix F and Sec. 6 use FLSD-53.
PAPER_METHOD_ALIASES = {"focal": "flsd53"}
#: Our network names -> the paper's row labels; data set names -> the paper's.
PAPER_MODEL_LABELS = {"resnet50": "ResNet 50", "resnet110": "ResNet 110",
                      "wide_resnet26_10": "Wide ResNet 26-10", "densenet121": "DenseNet 121",
                      "text_cnn": "Global Pooling CNN"}
PAPER_DATASET_LABELS = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "20newsgroups": "20 Newsgroups"}
TEXT_DATASETS = ("20newsgroups",)
PAPER_NAMES = {"mukhoti2020": "Mukhoti et al. (2020)"}


@dataclass(frozen=True)
class PaperReference:
    """The row of a paper's tables that our numbers are compared with; ``exact`` is False
    when the paper did not train our network and ``model`` is the closest row."""

    dataset: str
    model: str
    exact: bool
    note: str
    paper: str = "mukhoti2020"


def paper_reference(dataset: str, model: str) -> PaperReference:
    """The paper's row for our ``dataset`` and network ``model``; the ResNet 50 row (image
    data) or the Global Pooling CNN row (text) when our network is not one of the paper's."""
    if dataset not in PAPER_DATASET_LABELS:
        raise ValueError(f"dataset {dataset!r} has no row in Mukhoti et al.'s tables; "
                         f"allowed datasets: {', '.join(PAPER_DATASET_LABELS)}")
    d = PAPER_DATASET_LABELS[dataset]
    if model in PAPER_MODEL_LABELS and (model == "text_cnn") == (dataset in TEXT_DATASETS):
        return PaperReference(d, PAPER_MODEL_LABELS[model], True, f"{d}, {PAPER_MODEL_LABELS[model]}")
    closest = "Global Pooling CNN" if dataset in TEXT_DATASETS else "ResNet 50"
    return PaperReference(d, closest, False, f"{d}, {closest} (closest row: the paper did not train our network "
                                             f"{model})")


COLUMNS = ["method", "metric", "temperature_scaled", "mean", "std", "T", "T_std", "n_seeds", "tables"]


def paper_values(ref: PaperReference, metrics=tuple(PAPER_TABLES)) -> pd.DataFrame:
    """The paper's numbers of the row ``ref`` in :func:`replicate.comparison.summarise`'s
    layout (``mean``, ``T``; ``std`` NaN, ``n_seeds`` 0), plus ``tables``: where each number
    is printed. A number printed in several tables appears once; Table 6's "Focal Loss"
    is keyed ``flsd53`` (:data:`PAPER_METHOD_ALIASES`)."""
    from .. import paper_tables

    unknown = [m for m in metrics if m not in PAPER_TABLES]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(PAPER_TABLES)}")
    frames = []
    for table in dict.fromkeys(t for m in metrics for t in PAPER_TABLES[m]):
        df = paper_tables.get(ref.paper, table)
        frames.append(df[(df.dataset == ref.dataset) & (df.model == ref.model) & df.metric.isin(metrics)])
    if not frames or not sum(len(f) for f in frames):
        return pd.DataFrame(columns=COLUMNS)
    df = pd.concat(frames, ignore_index=True)
    df["method"] = df["method"].replace(PAPER_METHOD_ALIASES)
    df["tables"] = df["table"].str.replace("table", "", regex=False)
    keys = ["method", "metric", "temperature_scaled"]
    tables = df.groupby(keys, sort=False)["tables"].agg(lambda s: ", ".join(dict.fromkeys(s)))
    df = df.drop_duplicates(keys).drop(columns="tables").merge(tables.reset_index(), on=keys)
    df = df.rename(columns={"value": "mean", "optimal_T": "T"})
    df["std"], df["T_std"], df["n_seeds"] = math.nan, math.nan, 0
    return df[COLUMNS].reset_index(drop=True)
