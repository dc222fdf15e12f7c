"""Checks of the stored numbers of Liang et al. (Focal Calibration Loss): layout, the
identification of each caption-less table, internal consistency (shared temperatures, the
L1/L2 ablation against the main tables), the recorded defects, cross-checks with the Dual
Focal Loss text (read here independently) and with Mukhoti et al.'s stored tables, and a
second reading of the FCL text that re-parses every number and compares it cell by cell."""
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

P = "liang2024"
MOD = importlib.import_module(f"replicate.paper_tables.{pt.PAPERS[P]}")
IMAGE_ROWS = [(d, m) for d in ("CIFAR-100", "CIFAR-10") for m in
              ("ResNet-50", "ResNet-110", "Wide-ResNet-26-10", "DenseNet-121")] + [("Tiny-ImageNet", "ResNet-50")]
ROWS12 = IMAGE_ROWS + [(d, "Global Pooling CNN") for d in ("20 Newsgroups", "AG News", "FinSen")]
METHODS = ["cross_entropy", "brier", "mmce", "ls005", "flsd53", "dual_focal", "fcl"]
PRE_POST = ["table1", "table3", "table6", "table7"]
NG = ("20 Newsgroups", "Global Pooling CNN")
KEY = ["dataset", "model", "setting", "method", "metric", "temperature_scaled"]


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {t: pt.get(P, t) for t in pt.list_tables(P)["table"]}


def _cell(df, dataset, model, method, scaled, setting=""):
    r = df[(df.dataset == dataset) & (df.model == model) & (df.method == method) & (df.setting == setting)
           & (df.temperature_scaled == scaled)]
    assert len(r) == 1, (dataset, model, method, scaled)
    return r.iloc[0]


# ------------------------------------------------------------------ API and metadata
def test_metadata_and_identification(tables):
    assert P in pt.list_papers()
    info = pt.paper_info(P)
    assert info["key"] == P and info["citation"] == "liang2024fcl"
    bib = (Path(rp.config.repo_root()) / "book" / "references.bib").read_text(encoding="utf-8")
    assert "@misc{liang2024fcl," in bib
    assert list(tables) == [f"table{i}" for i in range(1, 9)]
    expected = {"table1": "ece", "table2": "error", "table3": "smece", "table4": "auroc", "table5": "gamma_lambda",
                "table6": "adaece", "table7": "classwise_ece", "table8": "norm_ablation"}
    for t, df in tables.items():
        spec = MOD.TABLES[t]
        assert spec["identified_as"] == expected[t] and len(spec["identification"]) > 80, t
        assert spec["caption"].startswith("[reconstructed] ") and spec["caption_reconstructed"], t
        assert df.attrs["notes"].startswith("Identified as described: " + spec["identification"]), t
        assert df.attrs["number"] == int(t[5:]) and df.attrs["source_file"] == "focal-calibration-loss-fcl.txt"
        assert list(df.columns) == pt.COLUMNS
    # metric_tables names only tables holding that metric, and only the agreed metric names
    allowed = {"ece", "adaece", "classwise_ece", "mce", "nll", "error", "accuracy", "smece", "auroc"}
    for metric, tabs in info["metric_tables"].items():
        assert metric in allowed
        for t in tabs:
            assert (tables[t]["metric"] == metric).all(), (metric, t)
    assert set(tables["table5"]["metric"]) == {"gamma", "lambda"} and tables["table5"].attrs["units"] == "none"
    assert "Blasiok & Nakkiran" in info["metric_notes"]["smece"] and "not proven" in info["metric_notes"]["smece"]
    assert set(info["not_stored"]) == {"table9", "fragment_after_A17"}


def test_every_label_maps():
    from replicate.paper_tables import labels

    info, df = pt.paper_info(P), pt.get_all(P)
    assert all(labels.is_mapped(x, "dataset", info["dataset_keys"]) for x in df["dataset"].unique())
    assert all(labels.is_mapped(x, "model", info["model_keys"]) for x in df["model"].unique())
    assert set(df["method"]) == set(METHODS)


# ------------------------------------------------------------------ layout and ranges
def test_layout_complete(tables):
    for t, df in tables.items():
        assert not df.duplicated(KEY).any(), t
        rows = list(dict.fromkeys(zip(df["dataset"], df["model"])))
        if t in PRE_POST:
            assert rows == ROWS12 and len(df) == 12 * 14, t
            assert list(df["method"].iloc[:14]) == [m for m in METHODS for _ in (0, 1)]
        elif t == "table2":
            assert rows == ROWS12 and len(df) == 12 * 7
        elif t == "table4":
            assert rows == [(d, m) for d in ("CIFAR-10/SVHN", "CIFAR-10/CIFAR-10-C") for m in
                            ("ResNet-50", "ResNet-110", "Wide-ResNet-26-10", "DenseNet-121")] and len(df) == 8 * 14
        elif t == "table5":
            assert rows == ROWS12 and len(df) == 24
        else:
            assert len(df) == 16 * 2 and set(df["setting"]) == {"norm=l1", "norm=l2"} and set(df["method"]) == {"fcl"}


def test_value_ranges_and_temperatures(tables):
    grid = np.round(np.arange(1, 101) / 10, 10)
    for t, df in tables.items():
        assert df["value"].notna().all() and df["spread"].isna().all(), t
        if t == "table5":
            assert (df["value"] > 0).all()
            continue
        assert df["value"].between(0, 100).all(), t
        has_t = df["optimal_T"].notna()
        if t in PRE_POST:
            assert (has_t == df["temperature_scaled"]).all(), t
            assert np.isin(np.round(df.loc[has_t, "optimal_T"], 10), grid).all(), t
        else:
            assert not has_t.any(), t
    assert all(float(p.split("(")[0]) == v for df in tables.values() for p, v in zip(df["printed"], df["value"]))


# ------------------------------------------------------------------ internal consistency
def _temps(df):
    post = df[df.temperature_scaled]
    return post.set_index(["dataset", "model", "method"])["optimal_T"]


def test_ece_temperature_is_reused_except_the_noted_cells(tables):
    """Sec. 5: the ECE-optimal T is used for every metric; where smCE/AdaECE/classwise print
    another T, the cell carries a note saying so - and only there."""
    ece_t = _temps(tables["table1"])
    for t in ("table3", "table6", "table7"):
        df = tables[t]
        post = df[df.temperature_scaled].set_index(["dataset", "model", "method"])
        differ = {k for k, v in post["optimal_T"].items() if not math.isclose(v, ece_t[k])}
        noted = {k for k, n in post["note"].items() if "temperature" in n and "ECE-optimal" in n}
        assert differ == noted and differ, t
    assert len({k for k, v in _temps(tables["table3"]).items() if not math.isclose(v, ece_t[k])}) == 8


def test_unit_temperature_is_the_identity(tables):
    """Post-T at T = 1.0 equals pre-T, except the one cell of the duplicated smCE row."""
    broken = []
    for t in PRE_POST:
        df = tables[t]
        pre = df[~df.temperature_scaled].set_index(["dataset", "model", "method"])["value"]
        post = df[df.temperature_scaled].set_index(["dataset", "model", "method"])
        for k, row in post[np.isclose(post["optimal_T"], 1.0)].iterrows():
            if row["value"] != pre[k]:
                broken.append((t, k))
                assert "repeats the CIFAR-100 DenseNet-121 row" in row["note"]
    assert broken == [("table3", ("CIFAR-10", "DenseNet-121", "brier"))]


def test_auroc_pre_equals_post_where_the_ece_temperature_is_one(tables):
    ece_t = _temps(tables["table1"])
    auroc = tables["table4"]
    odd = []
    for (d, m), g in auroc.groupby(["dataset", "model"], sort=False):
        for method in METHODS:
            pre, post = (_cell(auroc, d, m, method, s) for s in (False, True))
            if ece_t[("CIFAR-10", m, method)] == 1.0 and pre["value"] != post["value"]:
                odd.append((d, m, method))
                assert "identity" in post["note"]
    assert odd == [("CIFAR-10/SVHN", "ResNet-50", "dual_focal"), ("CIFAR-10/CIFAR-10-C", "ResNet-50", "dual_focal")]


def test_smce_densenet_row_is_recorded_as_a_duplicate(tables):
    df = tables["table3"]
    c100 = df[(df.dataset == "CIFAR-100") & (df.model == "DenseNet-121")].reset_index(drop=True)
    c10 = df[(df.dataset == "CIFAR-10") & (df.model == "DenseNet-121")].reset_index(drop=True)
    same = c100["value"] == c10["value"]
    assert list(c10.loc[~same, "method"]) == ["ls005", "ls005"] and same.sum() == 12
    assert all("repeats the CIFAR-100 DenseNet-121 row" in n for n in c10.loc[same, "note"])
    assert not c10.loc[~same, "note"].str.len().any()
    # its temperatures are CIFAR-10's (table1), not CIFAR-100's
    ece_t = _temps(tables["table1"])
    assert all(ece_t[("CIFAR-10", "DenseNet-121", m)] == t for m, t in
               zip(c10.loc[c10.temperature_scaled, "method"], c10.loc[c10.temperature_scaled, "optimal_T"]))
    # the copied values are far from CIFAR-10's ECE; every other CIFAR-10 smCE row stays near its ECE
    ece = tables["table1"].set_index(["dataset", "model", "method", "temperature_scaled"])["value"]
    sm = df.set_index(["dataset", "model", "method", "temperature_scaled"])["value"]
    gap = (sm - ece).abs().xs("CIFAR-10", level="dataset").groupby(level="model").max()
    assert gap["DenseNet-121"] > 10 and (gap.drop("DenseNet-121") < 2).all()


def test_l1_l2_ablation_matches_the_main_tables(tables):
    abl = tables["table8"]
    alias = {"WideResNet": "Wide-ResNet-26-10"}
    l2 = abl[abl.setting == "norm=l2"]
    for _, r in l2.iterrows():
        model = alias.get(r["model"], r["model"])
        main = tables["table1"] if r["metric"] == "ece" else tables["table2"]
        assert _cell(main, r["dataset"], model, "fcl", False)["value"] == r["value"], (r["dataset"], model)
    piv = abl[abl.metric == "ece"].pivot_table(index=["dataset", "model"], columns="setting", values="value")
    assert (piv["norm=l2"] < piv["norm=l1"]).all()  # A.15: "L2 consistently achieves lower ECE"
    assert len(l2) == 16 and len(piv) == 8


def test_hyperparameter_table(tables):
    a10 = tables["table5"].pivot_table(index=["dataset", "model"], columns="metric", values="value")
    assert len(a10) == 12 and a10.loc[("CIFAR-10", "ResNet-50")].to_dict() == {"gamma": 4.0, "lambda": 1.5}
    assert a10.loc[NG].to_dict() == {"gamma": 5.0, "lambda": 4.5}


def test_mukhoti_provenance_of_the_20newsgroups_baselines(tables):
    """AdaECE/classwise 20 Newsgroups baselines are Mukhoti's (stored mukhoti2020 tables): pre-T
    AdaECE of CE/Brier/MMCE, FL-3 as 'Focal Loss - 53', Mukhoti's ECE temperatures; table1's
    Brier and MMCE are Mukhoti's MMCE and Brier."""
    if "mukhoti2020" not in pt.list_papers():
        pytest.skip("mukhoti2020 tables not available")
    mk = {t: pt.get("mukhoti2020", t) for t in ("table1", "table2", "table4", "table5")}
    gp = ("20 Newsgroups", "Global Pooling CNN")
    for ours, theirs in (("cross_entropy", "cross_entropy"), ("brier", "brier"), ("mmce", "mmce")):
        assert _cell(tables["table6"], *NG, ours, False)["value"] == _cell(mk["table2"], *gp, theirs, False)["value"]
        for t in ("table6", "table7"):
            assert _cell(tables[t], *NG, ours, True)["optimal_T"] == _cell(mk["table1"], *gp, theirs, True)["optimal_T"]
    fl3 = [_cell(mk["table5"], *gp, "fl3", s) for s in (False, True)]
    ours = [_cell(tables["table6"], *NG, "flsd53", s) for s in (False, True)]
    assert [r["value"] for r in ours] == [r["value"] for r in fl3] and ours[1]["optimal_T"] == fl3[1]["optimal_T"]
    assert "FL-3" in ours[0]["note"] and "FL-3" in ours[1]["note"]
    assert _cell(tables["table7"], *NG, "flsd53", True)["optimal_T"] == _cell(mk["table4"], *gp, "fl3",
                                                                              True)["optimal_T"]
    for ours_m, theirs_m in (("brier", "mmce"), ("mmce", "brier")):   # the swap, through DFL
        assert _cell(tables["table1"], *NG, ours_m, True)["value"] == _cell(mk["table1"], *gp, theirs_m,
                                                                            True)["value"]


# ------------------------------------------------------------------ the Dual Focal Loss text, read independently
def _dfl_table1() -> dict:
    """DFL Table 1 (ECE) from its TSV-like text: {(dataset, model): [14 cells as printed]}."""
    lines = paper_text("tao2023")
    cap = next(i for i, s in enumerate(lines) if s.startswith("Table 1. ECE"))
    head = max(i for i in range(cap) if lines[i].startswith("Dataset\tModel"))
    out, ds = {}, None
    for s in lines[head + 2:cap]:
        cells = [re.sub(r"</?b>", "", c).strip() for c in s.split("\t")]
        if len(cells) < 16:
            continue
        ds = cells[0].replace("NLP ", "") or ds
        out[(ds, cells[1])] = cells[2:16]
    return out


def test_20newsgroups_row_is_dfl_table1s(tables):
    dfl = _dfl_table1()
    theirs = dfl[NG]  # WD, Brier, MMCE, LS, Inverse Focal, Focal, Dual Focal; pre/post each
    t1 = tables["table1"]
    pairs = {"cross_entropy": 0, "brier": 1, "mmce": 2, "ls005": 3, "flsd53": 5}
    equal, differ = [], []
    for m, j in pairs.items():
        for s, tok in zip((False, True), theirs[2 * j:2 * j + 2]):
            (equal if _cell(t1, *NG, m, s)["printed"] == tok else differ).append((m, s))
    assert len(equal) == 9 and differ == [("mmce", False)]
    assert theirs[4] == "13.58" and _cell(t1, *NG, "mmce", False)["printed"] == "15.38"
    assert sorted(theirs[4]) == sorted("15.38")  # the same digits, two of them swapped
    for m, s in equal:
        assert "copied from Dual Focal Loss" in _cell(t1, *NG, m, s)["note"]
    assert "13.58" in _cell(t1, *NG, "mmce", False)["note"]


def test_dual_focal_baseline_is_not_the_dfl_papers(tables):
    dfl = _dfl_table1()
    t1 = tables["table1"]
    shared = [k for k in ROWS12 if k in dfl]
    assert len(shared) == 10
    for k in shared:
        own = dfl[k][12]                                   # DFL's own pre-T ECE of Dual Focal
        ours = _cell(t1, *k, "dual_focal", False)
        assert ours["value"] > float(own), k               # worse in every row both print
        assert f"prints {own} here" in ours["note"], k
    assert _cell(t1, "CIFAR-10", "ResNet-50", "dual_focal", False)["value"] == 1.32 and \
        dfl[("CIFAR-10", "ResNet-50")][12] == "0.46"


# ------------------------------------------------------------------ second reading of the FCL text
_DATA = ("CIFAR-100", "CIFAR-10/SVHN", "CIFAR-10/CIFAR-10-C", "CIFAR-10", "Tiny-ImageNet", "NLP 20 Newsgroups",
         "NLP AG News", "NLP FinSen", "20 Newsgroups", "AG News", "FinSen")
_NUM = re.compile(r"^(\d+(?:\.\d+)?)(?:\((\d+(?:\.\d+)?)\))?$")


def _blocks(lines: list[str]) -> dict[str, list]:
    """Every table of the text as ``{key: [(line, dataset, model, setting, [(value, T), ...]), ...]}``:
    blocks start at a 'Dataset | Model' header; the four main-text ones are keyed by order
    (ECE, error, smCE, AUROC), the appendix ones by their section heading."""
    heads = [i for i, s in enumerate(lines) if s.startswith("Dataset | Model |")]
    keys, main = {}, iter(["table1", "table2", "table3", "table4"])
    for h in heads:
        section = next(s for s in reversed(lines[:h]) if re.match(r"^(A\.\d+|\d+(\.\d+)*) ", s))
        sec = section.split()[0]
        keys[h] = {"A.10": "table5", "A.12": "table6", "A.13": "table7", "A.15": "table8"}.get(sec) or \
            (next(main) if not sec.startswith("A.") else None)
    out = {}
    for h in heads:
        if keys[h] is None:
            continue
        rows, ds = [], None
        for i in range(h + 1, len(lines)):
            cells = [c.strip() for c in lines[i].split("|") if c.strip()]
            if not cells or "|" not in lines[i] or cells[0] == "Dataset":
                break
            if cells[0] in ("Pre T",) or cells[0].startswith("---"):
                continue
            if cells[0] in _DATA:
                ds, cells = cells[0].removeprefix("NLP "), cells[1:]
            model, rest = cells[0], cells[1:]
            setting = ""
            if rest and rest[0] in ("L1", "L2"):
                setting, rest = f"norm={rest[0].lower()}", rest[1:]
            nums = []
            for c in rest:
                m = _NUM.match(c)
                nums.append((float(m.group(1)), float(m.group(2)) if m.group(2) else math.nan))
            rows.append((i + 1, ds, model, setting, nums))
        out[keys[h]] = rows
    return out


@pytest.fixture(scope="module")
def reread():
    return _blocks(paper_text(P))


def test_second_reading_finds_every_table_and_no_other(reread, tables):
    assert sorted(reread) == sorted(tables)


@pytest.mark.parametrize("table", [f"table{i}" for i in range(1, 9)])
def test_second_reading_of_source(reread, tables, table):
    df = tables[table]
    typed = [((d, m, s), list(zip(g["value"], g["optimal_T"])))
             for (d, m, s), g in df.groupby(["dataset", "model", "setting"], sort=False)]
    parsed = [((d, m, s), nums) for _, d, m, s, nums in reread[table]]
    assert [k for k, _ in typed] == [k for k, _ in parsed]
    for (k, a), (_, b) in zip(typed, parsed):
        assert len(a) == len(b), k
        for (va, ta), (vb, tb) in zip(a, b):
            assert va == vb and (ta == tb or (math.isnan(ta) and math.isnan(tb))), (table, k)
    first, last = reread[table][0][0], reread[table][-1][0]
    assert tuple(df.attrs["source_lines"]) == (first, last)
