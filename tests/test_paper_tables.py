"""Checks of the stored paper numbers: layout, internal consistency, and a second reading
of the source text that re-parses every number and compares it with the typed data."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import replicate as rp
from replicate import paper_tables as pt
from needs import paper_text

P = "mukhoti2020"
ROWS10 = [(d, m) for d in ("CIFAR-100", "CIFAR-10") for m in
          ("ResNet 50", "ResNet 110", "Wide ResNet 26-10", "DenseNet 121")] + \
         [("20 Newsgroups", "Global Pooling CNN"), ("SST Binary", "Tree LSTM")]
PRE_POST = ["table1", "table2", "table4", "table5", "table7", "table8"]
KEY = ["dataset", "model", "method", "metric", "temperature_scaled"]


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {t: pt.get(P, t) for t in pt.list_tables(P)["table"]}


@pytest.fixture(scope="module")
def alltab(tables) -> pd.DataFrame:
    return pd.concat(tables.values(), ignore_index=True)


# ------------------------------------------------------------------ API
def test_api_and_metadata(tables):
    assert P in pt.list_papers()
    lt = pt.list_tables(P)
    assert list(lt["table"]) == [f"table{i}" for i in range(1, 14)]
    assert list(lt["number"]) == list(range(1, 14))
    for t, df in tables.items():
        assert list(df.columns) == pt.COLUMNS
        a = df.attrs
        assert a["paper"] == P and a["table"] == t and a["citation"] == "mukhoti2020focal"
        assert a["units"] == "percent" and a["source_file"] == "focal-loss-mukhoti-2020.txt"
        assert a["caption"] and len(a["source_lines"]) == 2 and a["source_lines"][0] < a["source_lines"][1]
        assert (df["paper"] == P).all() and (df["table"] == t).all()
        assert lt.set_index("table").loc[t, "n_values"] == len(df)
    with pytest.raises(ValueError, match="unknown paper 'mukhoti'.*mukhoti2020"):
        pt.get("mukhoti", "table1")
    with pytest.raises(ValueError, match="no table 'table14'.*table13"):
        pt.get(P, "table14")
    assert rp.paper_tables.paper_info(P)["citation"] == "mukhoti2020focal"


def test_parse_token():
    assert pt.parse_token("3.42(2.10)") == (3.42, 2.10)
    v, t = pt.parse_token("100")
    assert v == 100.0 and math.isnan(t)
    with pytest.raises(ValueError, match="not a printed number"):
        pt.parse_token("3.42 (2.10)")


# ------------------------------------------------------------------ layout
def test_layout_complete(tables):
    methods = {"table1": 4, "table2": 4, "table3": 6, "table4": 3, "table5": 3, "table7": 7, "table8": 7,
               "table9": 7, "table10": 10, "table11": 10, "table12": 10, "table13": 10}
    for t, df in tables.items():
        assert not df.duplicated(KEY).any(), t
        rows = list(dict.fromkeys(zip(df["dataset"], df["model"])))
        if t == "table6":
            assert rows == [("CIFAR-10", "ResNet 110"), ("CIFAR-10", "ResNet 50")]
            assert len(df) == 2 * 3 * 2 * 2  # rows x methods x pre/post x (|S99|, accuracy)
            continue
        assert rows == ROWS10, t
        assert df["method"].nunique() == methods[t], t
        per_cell = 2 if t in PRE_POST else 1
        assert len(df) == 10 * methods[t] * per_cell, t


def test_temperatures(tables):
    grid = np.round(np.arange(1, 101) / 10, 10)
    for t, df in tables.items():
        has_t = df["optimal_T"].notna()
        if t in PRE_POST:
            assert (has_t == df["temperature_scaled"]).all(), t
            assert np.isin(np.round(df.loc[has_t, "optimal_T"], 10), grid).all(), t
        else:
            assert not has_t.any(), t
    assert tables["table11"]["temperature_scaled"].all() and tables["table13"]["temperature_scaled"].all()
    assert not tables["table10"]["temperature_scaled"].any() and not tables["table12"]["temperature_scaled"].any()


def test_value_ranges(alltab):
    pct = alltab[alltab["metric"] != "nll"]
    assert pct["value"].between(0, 100).all()
    assert (alltab.loc[alltab["metric"] == "nll", "value"] > 0).all()
    # "exactly as printed": the value is the printed number
    assert all(float(p.split("(")[0]) == v for p, v in zip(alltab["printed"], alltab["value"]))


# ------------------------------------------------------------------ internal consistency
def _pre_post(df):
    pre = df[~df["temperature_scaled"]].set_index(["dataset", "model", "method", "metric"])
    post = df[df["temperature_scaled"]].set_index(["dataset", "model", "method", "metric"])
    return pre, post


def test_unit_temperature_leaves_values_unchanged(tables):
    """A post-T value with optimal T = 1.00 must equal the pre-T value (T = 1 is the identity)."""
    seen = set()
    for t in PRE_POST:
        pre, post = _pre_post(tables[t])
        ones = post[np.isclose(post["optimal_T"], 1.0)]
        for idx, row in ones.iterrows():
            assert row["printed"].split("(")[0] == pre.loc[idx, "printed"], (t, idx)
            seen.add(idx)
    assert len(seen) == 9  # 5 ECE-tuned and 4 AdaECE-tuned (dataset, model, method) cells


def _ece_temperature(tables):
    """ECE-optimal T per (dataset, model, method) from Tables 1 and 7 (they must agree)."""
    ts = {}
    for t in ("table1", "table7"):
        post = tables[t][tables[t]["temperature_scaled"]]
        for d, m, me, temp in zip(post["dataset"], post["model"], post["method"], post["optimal_T"]):
            assert ts.setdefault((d, m, me), temp) == temp
    return ts


def test_post_ts_nll_mce_equal_pre_where_ece_temperature_is_one(tables):
    """Tables 11/13 use the ECE-optimal T of Tables 1/7; where that T is 1.00 nothing changes."""
    ts = _ece_temperature(tables)
    assert len(ts) == 100
    ones = [k for k, v in ts.items() if v == 1.0]
    assert len(ones) == 5
    for pre_t, post_t in (("table10", "table11"), ("table12", "table13")):
        pre = tables[pre_t].set_index(["dataset", "model", "method"])["printed"]
        post = tables[post_t].set_index(["dataset", "model", "method"])["printed"]
        for k in ones:
            assert pre[k] == post[k], (pre_t, k)


def test_repeated_columns_agree(alltab):
    """The same (dataset, model, method, metric, pre/post) printed in several tables is identical."""
    groups = alltab.groupby(KEY)
    shared = [g for _, g in groups if len(g) > 1]
    # ECE: FL-3, FLS-532, FLA-53 pre/post in Tables 1/4/7; AdaECE likewise in 2/5/8; error in 3/9
    assert len(shared) == 10 * (2 * 3 + 2 * 3 + 3)
    for g in shared:
        assert g["printed"].nunique() == 1 and g["optimal_T"].nunique(dropna=False) == 1, g


def test_ece_at_most_mce(tables):
    """ECE is a bin-mass-weighted mean of |acc - conf| over 15 bins, MCE its maximum: ECE <= MCE."""
    ts_tables = pd.concat([tables["table1"], tables["table7"]]).drop_duplicates(KEY)
    ece = ts_tables.set_index(["dataset", "model", "method", "temperature_scaled"])["value"]
    mce = pd.concat([tables["table12"], tables["table13"]]).set_index(
        ["dataset", "model", "method", "temperature_scaled"])["value"]
    both = pd.concat([ece.rename("ece"), mce.rename("mce")], axis=1).dropna()
    assert len(both) == 2 * 10 * 10
    assert (both["ece"] <= both["mce"] + 0.01).all()  # printed to 2 decimals


def test_nll_at_least_error_times_log2(tables):
    """A misclassified sample has p_true <= 1/2, so NLL >= error * ln 2 (before and after TS,
    which does not change the predicted class)."""
    err = pd.concat([tables["table3"], tables["table9"]]).drop_duplicates(KEY).set_index(
        ["dataset", "model", "method"])["value"]
    for t in ("table10", "table11"):
        nll = tables[t].set_index(["dataset", "model", "method"])["value"]
        e = err.reindex(nll.index)
        assert e.notna().all()
        assert ((nll + 0.005) >= math.log(2) * (e - 0.005)).all(), t


def test_table6_counts_consistent_with_errors(tables):
    """|S99| x (1 - acc(S99)) counts errors inside S99: at most all test errors (Table 3); after
    scaling with T > 1 every confidence drops, so S99 shrinks and its errors and hits can only drop."""
    t6 = tables["table6"].set_index(["model", "method", "temperature_scaled", "metric"])["value"]
    err = pd.concat([tables["table3"], tables["table9"]]).drop_duplicates(KEY)
    err = err[err["dataset"] == "CIFAR-10"].set_index(["model", "method"])["value"]
    ts = _ece_temperature(tables)
    candidates = {"cross_entropy": ["cross_entropy"], "mmce": ["mmce"], "focal": ["fl3", "flsd53"]}
    for model in ("ResNet 110", "ResNet 50"):
        for method, cands in candidates.items():
            frac = {s: t6[(model, method, s, "s99_fraction")] for s in (False, True)}
            acc = {s: t6[(model, method, s, "s99_accuracy")] for s in (False, True)}
            wrong = {s: frac[s] * (100 - acc[s]) / 100 for s in frac}
            right = {s: frac[s] * acc[s] / 100 for s in frac}
            tol = 0.01
            for c in cands:
                assert all(w <= err[(model, c)] + tol for w in wrong.values()), (model, method, c)
                assert all(r <= 100 - err[(model, c)] + tol for r in right.values()), (model, method, c)
                assert ts[("CIFAR-10", model, c)] > 1.0
            assert wrong[True] <= wrong[False] + tol and right[True] <= right[False] + tol, (model, method)


# ------------------------------------------------------------------ second reading of the source
_MODEL_RE = re.compile(r"Wide ResNet 26-10|ResNet ?110|ResNet ?50|DenseNet 121|Global Pooling CNN|Tree LSTM")
_DATA_RE = re.compile(r"CIFAR-100|CIFAR-10|20 Newsgroups|SST Binary")
_NUM_RE = re.compile(r"\d+(?:\.\d+)?(?:\(\d+\.\d+\))?")
_TEXT_DATA = {"Global Pooling CNN": "20 Newsgroups", "Tree LSTM": "SST Binary"}


def _reread(lines: list[str], number: int):
    """Re-parse table ``number`` from the raw text: rows between its header and its caption."""
    cap = next(i for i, s in enumerate(lines) if s.startswith(f"Table {number}:"))
    head = max(i for i in range(cap) if lines[i].startswith("Dataset"))
    rows, image_sets = [], []
    for i in range(head + 1, cap):
        line = lines[i]
        models = [m.group(0) for m in _MODEL_RE.finditer(line)]
        if not models:
            continue
        for d in _DATA_RE.findall(line):
            if d not in _TEXT_DATA.values() and d not in image_sets:
                image_sets.append(d)
        nums = _NUM_RE.findall(_DATA_RE.sub(" ", _MODEL_RE.sub(" ", line)))
        k = len(models)
        for j, m in enumerate(models):  # a merged line holds k rows, numbers interleaved
            rows.append((re.sub(r"ResNet ?(\d)", r"ResNet \1", m), nums[j::k], i + 1))
    seen, out = {}, []
    for model, nums, ln in rows:
        if model in _TEXT_DATA:
            ds = _TEXT_DATA[model]
        else:
            ds = image_sets[seen.get(model, 0)]
            seen[model] = seen.get(model, 0) + 1
        out.append((ds, model, nums, ln))
    return out, cap + 1


@pytest.mark.parametrize("number", range(1, 14))
def test_second_reading_of_source(tables, number):
    lines = paper_text(P)
    df = tables[f"table{number}"]
    reread, cap_line = _reread(lines, number)
    typed = [(d, m, list(g["printed"])) for (d, m), g in df.groupby(["dataset", "model"], sort=False)]
    assert [(d, m, n) for d, m, n, _ in reread] == typed
    first_row, last = df.attrs["source_lines"]
    assert first_row == min(ln for *_, ln in reread)
    assert cap_line < last + 1 <= cap_line + 3
    first_caption_line = lines[cap_line - 1].split(":", 1)[1].strip()
    assert df.attrs["caption"].replace(" ", "").startswith(first_caption_line.replace(" ", "")[:40])


# ------------------------------------------------------------------ the format's extensions
def test_parse_cell_reads_spreads_temperatures_and_missing_cells():
    assert pt.parse_cell("1.23±0.05")[0] == 1.23 and pt.parse_cell("1.23±0.05")[2] == 0.05
    assert pt.parse_cell("3.42(2.10)")[:2] == (3.42, 2.10)
    assert all(math.isnan(v) for v in pt.parse_cell("–"))
    with pytest.raises(ValueError, match="not a printed number"):
        pt.parse_cell("13:01")


def test_cell_notes_settings_and_missing_cells(monkeypatch):
    """A spec with an ablation setting column, a garbled cell read by us and a missing cell."""
    import types

    mod = types.SimpleNamespace(PAPER={"source_file": "x.txt", "citation": "c"}, TABLES={"table9": {
        "number": 9, "metric": "ece", "lines": (1, 3), "caption": "Bins.", "spread": "sd over 5 seeds",
        "columns": [("adafocal", "AdaFocal", "ece", False), ("adafocal", "AdaFocal", "ece", True)],
        "rows": "CIFAR-10 | ResNet-50 | bins=5 | 1.30 0.9±0.1(1.10)\nCIFAR-10 | ResNet-50 | bins=10 | – 1.1(1.00)",
        "cells": [{"row": ("CIFAR-10", "ResNet-50", "bins=5"), "column": 0, "printed": "13:01",
                   "note": "decimal point lost in extraction"},
                  {"row": ("CIFAR-10", "ResNet-50", "bins=10"), "column": 0, "note": "not printed"}]}})
    monkeypatch.setitem(pt.PAPERS, "fake", "fake")
    monkeypatch.setattr(pt, "_module", lambda p: mod)
    with pytest.raises(ValueError, match="not a printed number"):
        pt.get("fake", "table9")           # "0.9±0.1(1.10)": T must come before the spread
    mod.TABLES["table9"]["rows"] = mod.TABLES["table9"]["rows"].replace("0.9±0.1(1.10)", "0.9(1.10)±0.1")
    df = pt.get("fake", "table9")
    assert list(df.columns) == pt.COLUMNS and df.attrs["spread"] == "sd over 5 seeds"
    first = df.iloc[0]
    assert (first.setting, first.value, first.printed, first.note) == ("bins=5", 1.30, "13:01",
                                                                      "decimal point lost in extraction")
    assert (df.iloc[1].optimal_T, df.iloc[1].spread, df.iloc[1].model_key) == (1.10, 0.1, "resnet50")
    assert math.isnan(df.iloc[2].value) and df.iloc[2].note == "not printed"
    del mod.TABLES["table9"]["cells"][1]
    with pytest.raises(ValueError, match="missing cell .* needs a cell note"):
        pt.get("fake", "table9")


def test_every_stored_label_maps_to_our_names():
    from replicate.paper_tables import labels

    for paper in pt.list_papers():
        info = pt.paper_info(paper)
        df = pt.get_all(paper)
        for lab in df["dataset"].unique():
            assert labels.is_mapped(lab, "dataset", info.get("dataset_keys")), (paper, lab)
        for lab in df["model"].unique():
            assert labels.is_mapped(lab, "model", info.get("model_keys")), (paper, lab)


def test_cell_is_the_one_row_of_its_keys_and_refuses_ambiguity():
    t = pt.get("mukhoti2020", "table1")
    row = pt.cell("mukhoti2020", "table1", "cifar10", "resnet50", "cross_entropy", "ece", temperature_scaled=True)
    same = t[(t.dataset_key == "cifar10") & (t.model_key == "resnet50") & (t.method == "cross_entropy")
             & t.temperature_scaled]
    assert len(same) == 1 and row.equals(same.iloc[0])
    assert pt.cell("mukhoti2020", "table3", "cifar10", "resnet50", "cross_entropy", "error").value == 4.95
    with pytest.raises(ValueError, match="0 cells for cifar10 / resnet50 / nope / ece; expected one"):
        pt.cell("mukhoti2020", "table1", "cifar10", "resnet50", "nope", "ece")
