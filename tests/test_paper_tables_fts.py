"""Checks of the stored numbers of Komisarenko & Kull (2024), Table 1: layout, value ranges,
internal consistency (accuracy unchanged by the post-hoc maps, NLL bounded by the error,
the grids of Sec. 5.1, the text's statements about the table), the AdaFocal note, and a
second reading of the source text compared cell by cell with the typed data."""
from __future__ import annotations

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import replicate as rp
from replicate import paper_tables as pt
from needs import paper_text

P = "komisarenko2024"
MOD = importlib.import_module(f"replicate.paper_tables.{pt.PAPERS[P]}")
DATASETS = ["CIFAR-100", "CIFAR-10", "TinyImageNet"]
METHODS = ["cross_entropy", "fl1", "fl3", "fl7", "flsd53", "adafocal"]
SPECS = {"table1_accuracy": ("accuracy", "percent", ["posthoc=ts", "posthoc=fts"]),
         "table1_nll": ("nll", "nats", ["posthoc=ts,select=nll", "posthoc=fts,select=nll"]),
         "table1_adaece": ("adaece", "percent", ["posthoc=ts,select=adaece", "posthoc=fts,select=adaece"]),
         "table1_gamma_ev": ("gamma_ev", "none", ["posthoc=fts"])}
GAMMA_EV_GRID = [-0.5, -0.25, 0.05, 0.25, 0.37, 0.5, 0.75, 1.0, 5.0]   # Sec. 5.1, typed here from the text


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {t: pt.get(P, t) for t in pt.list_tables(P)["table"]}


def _pairs(df) -> pd.DataFrame:
    """TS and FTS rows side by side: index (dataset, method), columns (ts/fts) x (value, spread, T)."""
    df = df.assign(posthoc=df["setting"].str.extract(r"posthoc=(\w+)")[0])
    return df.pivot_table(index=["dataset", "method"], columns="posthoc", values=["value", "spread", "optimal_T"])


# ------------------------------------------------------------------ API and metadata
def test_metadata(tables):
    info = pt.paper_info(P)
    assert P in pt.list_papers() and info["key"] == P and info["citation"] == "komisarenko2024fts"
    bib = (Path(rp.config.repo_root()) / "book" / "references.bib").read_text(encoding="utf-8")
    assert "@inproceedings{komisarenko2024fts," in bib
    assert list(tables) == list(SPECS)
    for t, df in tables.items():
        metric, units, _ = SPECS[t]
        a = df.attrs
        assert a["number"] == 1 and a["units"] == units and a["caption"].startswith("Test set performance")
        assert a["source_file"] == "focal-temperature-scaling-komisarenko-kull-2024.md"
        assert (df["metric"] == metric).all() and (df["temperature_scaled"]).all()
        assert a["spread"] == ("" if metric == "gamma_ev" else "standard deviation over 5 random seeds")
    assert info["metric_tables"] == {"accuracy": ("table1_accuracy",), "nll": ("table1_nll",),
                                     "adaece": ("table1_adaece",)}
    assert "equal mass" in info["metric_notes"]["adaece"].lower()
    assert "figure8" in info["not_stored"] and "no numbers" in info["not_stored"]["figure8"]
    assert info["closest_model"]["image"] == "Resnet-50"


def test_every_label_maps():
    from replicate.paper_tables import labels

    info, df = pt.paper_info(P), pt.get_all(P)
    assert all(labels.is_mapped(x, "dataset", info["dataset_keys"]) for x in df["dataset"].unique())
    assert all(labels.is_mapped(x, "model", info["model_keys"]) for x in df["model"].unique())
    assert set(df["model_key"]) == {"resnet50"}
    assert list(df["dataset_key"].unique()) == ["cifar100", "cifar10", "tiny_imagenet"]


# ------------------------------------------------------------------ layout and ranges
def test_layout_complete(tables):
    for t, df in tables.items():
        _, _, settings = SPECS[t]
        rows = list(dict.fromkeys(zip(df["dataset"], df["setting"])))
        assert rows == [(d, s) for d in DATASETS for s in settings], t
        assert len(df) == len(rows) * 6 and not df.duplicated(["dataset", "setting", "method"]).any()
        assert list(df["method"].iloc[:6]) == METHODS


def test_value_ranges(tables):
    for t in ("table1_accuracy", "table1_nll", "table1_adaece"):
        df = tables[t]
        assert (df["spread"] >= 0).all() and df["spread"].notna().all(), t
        assert df["value"].between(0, 100).all(), t
    assert (tables["table1_nll"]["value"] > 0).all()
    for t in ("table1_nll", "table1_adaece"):   # T grid of Sec. 5.1: 0.01 to 5, step 0.01
        temps = tables[t]["optimal_T"]
        assert temps.notna().all() and temps.between(0.01, 5).all()
        assert np.allclose(np.round(temps * 100), temps * 100)
    assert tables["table1_accuracy"]["optimal_T"].isna().all()
    assert tables["table1_gamma_ev"]["value"].isin(GAMMA_EV_GRID).all()


# ------------------------------------------------------------------ internal consistency
def test_accuracy_is_unchanged_by_the_posthoc_map(tables):
    """TS keeps the predicted class and the paper says FTS keeps 'the accuracy unchanged by
    design' (Sec. 6): each TS/FTS pair prints the same accuracy; one printed standard
    deviation breaks this and carries a note."""
    pairs = _pairs(tables["table1_accuracy"])
    assert (pairs[("value", "ts")] == pairs[("value", "fts")]).all()
    odd = pairs.index[pairs[("spread", "ts")] != pairs[("spread", "fts")]].tolist()
    assert odd == [("CIFAR-100", "flsd53")]
    acc = tables["table1_accuracy"]
    cell = acc[(acc.dataset == "CIFAR-100") & (acc.method == "flsd53") & (acc.setting == "posthoc=fts")].iloc[0]
    assert "paper defect" in cell["note"] and cell["spread"] == 0.3


def test_nll_at_least_error_times_log2(tables):
    """A misclassified image has p_true <= 1/2, so mean NLL >= error x ln 2 (also for the mean over seeds)."""
    acc = tables["table1_accuracy"].assign(post=lambda d: d.setting.str.extract(r"posthoc=(\w+)")[0])
    nll = tables["table1_nll"].assign(post=lambda d: d.setting.str.extract(r"posthoc=(\w+)")[0])
    m = nll.merge(acc, on=["dataset", "method", "post"], suffixes=("_nll", "_acc"))
    assert len(m) == 36
    assert (m["value_nll"] + 0.005 >= math.log(2) * (1 - (m["value_acc"] + 0.05) / 100)).all()


def test_the_texts_statements_about_the_table(tables):
    """Sec. 5.2: FTS improves ECE over TS for every model; the TS temperature decreases as gamma_tr grows."""
    ece = _pairs(tables["table1_adaece"])
    assert (ece[("value", "fts")] < ece[("value", "ts")]).all()
    for t in ("table1_nll", "table1_adaece"):
        ts = _pairs(tables[t])[("optimal_T", "ts")]
        for d in DATASETS:
            assert ts[(d, "fl1")] > ts[(d, "fl3")] > ts[(d, "fl7")], (t, d)


def test_adafocal_cells_carry_the_protocol_note(tables):
    info = pt.paper_info(P)
    assert "gamma 1" in info["method_notes"]["adafocal"]
    for t, df in tables.items():
        ada = df[df.method == "adafocal"]
        assert len(ada) and ada["note"].str.contains("focal loss with gamma 1").all(), t
        assert not df.loc[df.method != "adafocal", "note"].str.contains("gamma 1 in effect").any(), t


# ------------------------------------------------------------------ second reading of the source
_ROW = re.compile(r"^\| (CROSS-ENTROPY|FOCAL \$\\gamma_\{tr\} = (\d+)\$|FLSD-53|ADAFOCAL|"
                  r"\+ \$\\gamma_\{ev\} = (-?[\d.]+)\$) \|(.*)$")
_CELL = re.compile(r"^(-?[\d.]+) \\pm ([\d.]+)(?: \(([\d.]+)\))?$")
_BLOCK = re.compile(r"^\| (CIFAR-100|CIFAR-10|TINYIMAGENET) DATASET")
_NAME = {"CROSS-ENTROPY": "cross_entropy", "FLSD-53": "flsd53", "ADAFOCAL": "adafocal"}


def _reread(lines: list[str]):
    """{(dataset, method, 'ts'|'fts'): ([(value, sd, T) x 3], gamma_ev or None, line)} from the raw text."""
    out, ds, method = {}, None, None
    for i, s in enumerate(lines):
        b = _BLOCK.match(s)
        if b:
            ds = {"TINYIMAGENET": "TinyImageNet"}.get(b.group(1), b.group(1))
            continue
        m = _ROW.match(s)
        if not (m and ds):
            continue
        label, gtr, gev, rest = m.groups()
        if gev is None:
            method = _NAME.get(label) or f"fl{gtr}"
        cells = [c.strip() for c in rest.split("|") if c.strip()]
        nums = [tuple(float(x) if x else math.nan for x in _CELL.match(c).groups()) for c in cells]
        out[(ds, method, "ts" if gev is None else "fts")] = (nums, float(gev) if gev else None, i + 1)
    return out


@pytest.fixture(scope="module")
def source():
    return paper_text(P)


def test_second_reading_of_source(tables, source):
    reread = _reread(source)
    assert len(reread) == 3 * 6 * 2
    for j, t in enumerate(("table1_accuracy", "table1_nll", "table1_adaece")):
        df = tables[t]
        for _, r in df.iterrows():
            post = re.search(r"posthoc=(\w+)", r["setting"]).group(1)
            v, sd, temp = reread[(r["dataset"], r["method"], post)][0][j]
            assert (r["value"], r["spread"]) == (v, sd), (t, r["dataset"], r["method"], post)
            assert r["optimal_T"] == temp or (math.isnan(temp) and math.isnan(r["optimal_T"]))
    g = tables["table1_gamma_ev"]
    assert all(reread[(d, m, "fts")][1] == v for d, m, v in zip(g["dataset"], g["method"], g["value"]))
    cap_line, last = tables["table1_nll"].attrs["source_lines"]
    assert source[cap_line - 1].startswith("Table 1. Test set performance")
    assert last == max(ln for *_, ln in reread.values())
    norm = lambda s: re.sub(r"[^a-z0-9γ±]", "", s.lower().replace("\\pm", "±"))  # noqa: E731
    assert norm(source[cap_line - 1].split(".", 1)[1]) == norm(tables["table1_nll"].attrs["caption"])
