"""Checks of Tao et al. (2023, Dual Focal Loss) stored numbers: layout, temperatures, the
baseline cells repeated from Mukhoti et al. (2020) and Ghosh et al. (2022), internal
consistency, and a second reading of the source text (tab-separated tables) that re-parses
every number and compares it with the typed data."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from replicate import paper_tables as pt
from needs import paper_text
from replicate.paper_tables import labels

P = "tao2023"
TABLES = [f"table{i}" for i in range(1, 14)]
TABLES.insert(10, "table10_kde")
IMAGE = [(d, m) for d in ("cifar100", "cifar10") for m in ("resnet50", "resnet110", "wide_resnet26_10", "densenet121")]
SEVEN = ["cross_entropy", "brier", "mmce", "ls005", "inverse_focal", "flsd53", "dual_focal"]
PRE_POST = ["table1", "table5", "table6", "table7", "table8"]
KEY = ["dataset_key", "model_key", "setting", "method", "metric", "temperature_scaled"]
BASELINES = ["cross_entropy", "brier", "mmce", "flsd53"]


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {t: pt.get(P, t) for t in pt.list_tables(P)["table"]}


@pytest.fixture(scope="module")
def mukhoti() -> pd.DataFrame:
    return pt.get_all("mukhoti2020")


def _cell(df, dk, mk, method, scaled=False, metric=None, setting=""):
    s = df[(df.dataset_key == dk) & (df.model_key == mk) & (df.method == method) & (df.temperature_scaled == scaled)
           & (df.setting == setting)]
    if metric is not None:
        s = s[s.metric == metric]
    assert len(s) == 1, (dk, mk, method, scaled, metric, setting, len(s))
    return s.iloc[0]


# ------------------------------------------------------------------ metadata and layout
def test_metadata(tables):
    assert list(tables) == TABLES
    info = pt.paper_info(P)
    assert info["citation"] == "tao2023dual" and info["source_file"] == "dual-focal-loss-tao-2023.md"
    for t, df in tables.items():
        a = df.attrs
        assert list(df.columns) == pt.COLUMNS and a["paper"] == P and a["table"] == t
        assert a["caption"] and a["source_lines"][0] < a["source_lines"][1]
        assert a["number"] == int(re.match(r"table(\d+)", t).group(1))
    for metric, ts in info["metric_tables"].items():
        for t in ts:
            assert metric in set(tables[t]["metric"]), (metric, t)
    assert "table3" not in {t for ts in info["metric_tables"].values() for t in ts}  # swapped labels
    every = pd.concat(tables.values())
    assert {info["closest_model"]["image"], info["closest_model"]["text"]} <= set(every["model"])
    for lab in every["dataset"].unique():
        assert labels.is_mapped(lab, "dataset", info.get("dataset_keys")), lab
    for lab in every["model"].unique():
        assert labels.is_mapped(lab, "model", info.get("model_keys")), lab
    assert labels.model_key("Wide-ResNet", info["model_keys"]) != "wide_resnet26_10"  # Table 10's own network


def _rows(df):
    return list(dict.fromkeys(zip(df["dataset_key"], df["model_key"], df["setting"])))


def test_layout_complete(tables):
    nine = [r + ("",) for r in IMAGE] + [("tiny_imagenet", "resnet50", "")]
    for t, df in tables.items():
        assert not df.duplicated(KEY).any(), t
    for t in ("table1", "table2", *PRE_POST[1:]):
        df, per = tables[t], (1 if t == "table2" else 2)
        rows = nine + ([("20newsgroups", "text_cnn", "")] if t in ("table1", "table2") else [])
        assert _rows(df) == rows, t
        assert list(dict.fromkeys(df["method"])) == SEVEN and len(df) == len(rows) * 7 * per, t
    assert _rows(tables["table3"]) == [(d, m, "") for d in ("cifar10", "cifar100")
                                       for m in ("resnet50", "resnet110", "densenet121", "wide_resnet26_10")]
    assert len(tables["table3"]) == 8 * 4
    assert len(_rows(tables["table4"])) == 9 and len(tables["table4"]) == 18
    assert _rows(tables["table9"]) == [("cifar10", m, f"ood={o}") for o in ("SVHN", "CIFAR-10-C")
                                       for m in ("resnet50", "densenet121")]
    assert len(tables["table9"]) == 4 * 14
    assert len(tables["table10"]) == 6 * 3 and len(tables["table10_kde"]) == 2 * 3
    assert _rows(tables["table11"]) == [(d, m, "") for d, m in IMAGE[4:] + IMAGE[:4]] and len(tables["table11"]) == 48
    assert len(tables["table12"]) == 4 * 7 and _rows(tables["table12"]) == [("cifar10", "resnet50", "")]
    assert _rows(tables["table13"]) == [("cifar10", "resnet50", f"gamma={g}") for g in (2, 3, 4, 5, 10)]
    assert len(tables["table13"]) == 5 * 5
    # the only missing cells: the Dual Focal pre/post cells that fell off two shifted rows
    every = pd.concat(tables.values())
    missing = every[every["value"].isna()]
    assert list(zip(missing["table"], missing["model"], missing["method"])) == \
        [("table8", "ResNet-50", "dual_focal")] * 2 + [("table9", "ResNet-50", "dual_focal")] * 2
    assert missing["note"].str.contains("fell off").all()


def test_temperatures(tables):
    grid = np.round(np.arange(1, 101) / 10, 10)
    for t, df in tables.items():
        has_t = df["optimal_T"].notna()
        if t in PRE_POST:
            assert (has_t == (df["temperature_scaled"] & df["value"].notna())).all(), t
            assert np.isin(np.round(df.loc[has_t, "optimal_T"], 10), grid).all(), t
        else:
            assert not has_t.any(), t
    # Sec. 5.1: "all optimal temperatures for DFL are searched as 1"
    every = pd.concat(tables[t] for t in PRE_POST)
    dfl = every[(every.method == "dual_focal") & every.temperature_scaled & every.value.notna()]
    assert len(dfl) == 10 + 4 * 9 - 1 and (dfl["optimal_T"] == 1.0).all()


def test_value_ranges(tables):
    every = pd.concat(tables.values())
    pct = every[~every["metric"].isin(["nll", "rbs", "ece_kde"])]
    assert pct["value"].dropna().between(0, 100).all()
    assert (every.loc[every.metric == "nll", "value"].dropna() > 0).all()
    assert every.loc[every.metric.isin(["rbs", "ece_kde"]), "value"].between(0, 1).all()
    for r in every.itertuples():  # nothing damaged here: every value is the printed number
        if r.printed in pt.MISSING:
            assert math.isnan(r.value) and r.note
        else:
            assert pt.parse_cell(r.printed)[0] == r.value
    assert tables["table12"]["spread"].notna().all() and every.loc[every.table != "table12", "spread"].isna().all()


# ------------------------------------------------------------------ internal consistency
def test_unit_temperature_leaves_values_unchanged(tables):
    """A post-T value at T = 1.0 equals its pre-T value; every DFL row is such a case."""
    n = 0
    for t in PRE_POST:
        df = tables[t]
        pre = df[~df.temperature_scaled].set_index(["dataset", "model", "method"])["value"]
        for r in df[df.temperature_scaled & (df.optimal_T == 1.0)].itertuples():
            assert pre[(r.dataset, r.model, r.method)] == r.value, (t, r.dataset, r.model, r.method)
            n += 1
    assert n == 75


def _temps(df):
    post = df[df.temperature_scaled & df.optimal_T.notna()]
    return post.set_index(["dataset_key", "model_key", "method"])[["optimal_T", "note"]]


def test_temperatures_shared_between_tables(tables):
    """Tables 5-8 'calculated temperature on best ECE': Table 1's temperature, except the two
    cells whose notes say otherwise."""
    t1 = _temps(tables["table1"])["optimal_T"]
    odd = []
    for t in PRE_POST[1:]:
        ts = _temps(tables[t])
        diff = ts[ts["optimal_T"] != t1.reindex(ts.index)]
        assert diff["note"].str.contains("T = |T printed", regex=True).all(), t
        odd += [(t,) + k for k in diff.index]
    assert odd == [("table5", "cifar10", "resnet50", "inverse_focal"), ("table6", "cifar10", "resnet110", "brier")]


def _mukhoti_ece_temperatures(mukhoti):
    post = mukhoti[(mukhoti.metric == "ece") & mukhoti.temperature_scaled]
    return post.drop_duplicates(["dataset_key", "model_key", "method"]).set_index(
        ["dataset_key", "model_key", "method"])["optimal_T"]


def _compare(ours: pd.DataFrame, theirs: pd.DataFrame, t_theirs_default=None):
    """(our cell, status): 'equal', 'differs' or 'T differs' for each cell with a twin."""
    th = theirs.set_index(["dataset_key", "model_key", "method", "temperature_scaled"])
    out = []
    for r in ours.itertuples():
        k = (r.dataset_key, r.model_key, r.method, r.temperature_scaled)
        if k not in th.index or math.isnan(r.value):
            continue
        m = th.loc[k]
        t_theirs = m["optimal_T"]
        if r.temperature_scaled and math.isnan(t_theirs) and t_theirs_default is not None:
            t_theirs = t_theirs_default[k[:3]]
        if r.temperature_scaled and t_theirs != r.optimal_T:
            out.append((r, "T differs"))
        else:
            out.append((r, "equal" if m["value"] == r.value else "differs"))
    return out


@pytest.mark.parametrize("table, mukhoti_tables, n_cells, n_equal, n_t_differs", [
    ("table1", ("table1",), 72, 66, 4), ("table2", ("table3",), 36, 34, 0), ("table5", ("table2",), 64, 49, 10),
    ("table7", ("table12", "table13"), 64, 62, 0), ("table8", ("table10", "table11"), 64, 62, 0)])
def test_baselines_repeat_mukhoti(tables, mukhoti, table, mukhoti_tables, n_cells, n_equal, n_t_differs):
    """The cross-entropy, Brier, MMCE and focal (FLSD-53) columns repeat Mukhoti et al.'s
    numbers. Every cell that differs from our Mukhoti text at the same temperature - or whose
    temperature differs where the value does not depend on the choice of T - carries a note
    naming Mukhoti. Tables 12/13 and 10/11 of Mukhoti print no T: their post-T cells are at
    the ECE-optimal T of Mukhoti's Table 1."""
    ours = tables[table][tables[table].method.isin(BASELINES)]
    theirs = mukhoti[mukhoti.table.isin(mukhoti_tables)]
    res = _compare(ours, theirs, _mukhoti_ece_temperatures(mukhoti))
    status = pd.Series([s for _, s in res])
    assert len(res) == n_cells
    assert (status == "equal").sum() == n_equal and (status == "T differs").sum() == n_t_differs
    for r, s in res:
        if s == "differs" or (s == "T differs" and table == "table1"):  # Table 1 *is* the ECE-optimal T
            assert "Mukhoti" in r.note, (r.dataset, r.model, r.method, r.temperature_scaled)


@pytest.mark.parametrize("table, ghosh_table", [("table1", "table1"), ("table2", "table2"), ("table5", "table3"),
                                                ("table6", "table4")])
def test_baselines_repeat_ghosh(tables, table, ghosh_table):
    """Ghosh et al. (2022) print the same baselines (quoted from the same source), including
    label smoothing and Tiny-ImageNet, which our Mukhoti text lacks: each cell equals theirs or
    carries a note (Ghosh's damaged cells compare on our reading)."""
    g = pt.get(*("ghosh2022", ghosh_table))
    ours = tables[table][tables[table].method.isin(BASELINES + ["ls005"])]
    th = g.set_index(["dataset_key", "model_key", "method", "temperature_scaled"])
    n = 0
    for r in ours.itertuples():
        k = (r.dataset_key, r.model_key, r.method, r.temperature_scaled)
        if k not in th.index:
            continue
        n += 1
        m = th.loc[k]
        same = m["value"] == r.value and (m["optimal_T"] == r.optimal_T or not r.temperature_scaled)
        assert same or r.note, (table, r.dataset, r.model, r.method, r.temperature_scaled)
    assert n == {"table1": 100, "table2": 50, "table5": 90, "table6": 90}[table]


def test_twenty_newsgroups_brier_mmce_swapped(tables, mukhoti):
    """The 20 Newsgroups Brier cells hold Mukhoti's MMCE numbers and vice versa (Tables 1, 2)."""
    for t, mt in (("table1", "table1"), ("table2", "table3")):
        ours, theirs = tables[t], mukhoti[mukhoti.table == mt]
        for a, b in (("brier", "mmce"), ("mmce", "brier")):
            cell, twin = _cell(ours, "20newsgroups", "text_cnn", a), _cell(theirs, "20newsgroups", "text_cnn", b)
            assert cell.value == twin.value and "swapped" in cell.note


def test_table3_labels_swapped(tables):
    """Table 3's FLSD-53 and DualFocal cells are Table 1's pre-T ECE, with the DenseNet and
    Wide ResNet rows exchanged; the swapped rows carry notes, the others equal Table 1 as labelled."""
    t1, t3 = tables["table1"], tables["table3"]
    swap = {"densenet121": "wide_resnet26_10", "wide_resnet26_10": "densenet121"}
    for d, m, _ in _rows(t3):
        for method in ("flsd53", "dual_focal"):
            cell = _cell(t3, d, m, method)
            assert cell.value == _cell(t1, d, swap.get(m, m), method).value, (d, m, method)
            assert ("swapped" in cell.note) == (m in swap)
            if m in swap:
                assert cell.value != _cell(t1, d, m, method).value


def test_ablation_rows_repeat_main_tables(tables, mukhoti):
    """Table 4's focal-loss row is FLSD-53 on CIFAR-10 ResNet 50 (Mukhoti Tables 1, 2); its
    'Ours' row is Tables 1/5's DFL. Table 13's gamma = 5 row is the DFL model of Tables 1, 2, 5,
    6 after truncation (not rounding) to two decimals."""
    t4 = tables["table4"].set_index(["setting", "metric"])["value"]
    m1, m2 = mukhoti[mukhoti.table == "table1"], mukhoti[mukhoti.table == "table2"]
    assert t4[("Focal loss: +0.0", "ece")] == _cell(m1, "cifar10", "resnet50", "flsd53").value
    assert t4[("Focal loss: +0.0", "adaece")] == _cell(m2, "cifar10", "resnet50", "flsd53").value
    ours = "Dual Focal Loss (Ours): + largest lower than q_gt"
    assert t4[(ours, "ece")] == _cell(tables["table1"], "cifar10", "resnet50", "dual_focal").value
    assert t4[(ours, "adaece")] == _cell(tables["table5"], "cifar10", "resnet50", "dual_focal").value
    g5 = tables["table13"].query("setting == 'gamma=5'").set_index(["metric", "temperature_scaled"])["value"]
    trunc = lambda v: math.floor(v * 100 + 1e-9) / 100  # noqa: E731
    dfl = lambda t, s=False: _cell(tables[t], "cifar10", "resnet50", "dual_focal", s).value  # noqa: E731
    assert trunc(g5[("ece", False)]) == dfl("table1") and trunc(g5[("ece", True)]) == dfl("table1", True)
    assert trunc(g5[("adaece", False)]) == dfl("table5") != round(g5[("adaece", False)], 2)
    assert trunc(g5[("classwise_ece", False)]) == dfl("table6") != round(g5[("classwise_ece", False)], 2)
    assert round(100 - g5[("accuracy", False)], 2) == dfl("table2")


def test_rows_that_lost_cells(tables, mukhoti):
    """The two shifted rows: Table 8's printed numbers 11-12 are Mukhoti's FLSD-53 NLL (so the
    numbers sit in the first 12 columns); in Table 9 no printed pair has pre = post, which the
    missing Dual Focal pair (T = 1.0) would have."""
    t8 = tables["table8"]
    for scaled, mt in ((False, "table10"), (True, "table11")):
        assert _cell(t8, "cifar100", "resnet50", "flsd53", scaled).value == \
            _cell(mukhoti[mukhoti.table == mt], "cifar100", "resnet50", "flsd53", scaled).value
    row = tables["table9"].query("model == 'ResNet-50' and setting == 'ood=SVHN'")["value"].to_numpy()
    pairs = row[:12].reshape(6, 2)
    assert (pairs[:, 0] != pairs[:, 1]).all() and np.isnan(row[12:]).all()


def test_table5_cifar100_resnet50_repeats_table1(tables):
    """As in Ghosh et al. Table 3, the AdaECE row of CIFAR-100 ResNet-50 repeats Table 1's ECE
    row in the columns that carry the note (all but inverse focal loss and DFL)."""
    t1 = tables["table1"].query("dataset == 'CIFAR-100' and model == 'ResNet-50'").reset_index(drop=True)
    t5 = tables["table5"].query("dataset == 'CIFAR-100' and model == 'ResNet-50'").reset_index(drop=True)
    same = t1["printed"] == t5["printed"]
    noted = t5["note"].str.contains("repeat Table 1")
    assert (same == noted).all() and noted.sum() == 10


def test_table12_brier_mmce_headers_swapped(tables):
    """The column headed MMCE is nearer Brier's single-run numbers of Tables 1, 5, 6 (same
    network) than MMCE's, and vice versa, for all three pre-T metrics; those cells carry notes."""
    t12 = tables["table12"]
    for metric, t in (("ece", "table1"), ("adaece", "table5"), ("classwise_ece", "table6")):
        one = {m: _cell(tables[t], "cifar10", "resnet50", m).value for m in ("brier", "mmce")}
        for head, fits in (("mmce", "brier"), ("brier", "mmce")):
            cell = _cell(t12, "cifar10", "resnet50", head, metric=metric)
            other = "mmce" if fits == "brier" else "brier"
            assert abs(cell.value - one[fits]) < abs(cell.value - one[other]) / 5, (metric, head)
            assert "swapped" in cell.note
    cw = t12[t12.metric == "classwise_ece"]
    big = cw[cw.spread == cw.spread.max()]
    assert len(big) == 1 and big.spread.iloc[0] >= 6 * cw.spread.drop(big.index).max() - 1e-9 and big.note.iloc[0]


def test_mce_and_nll_bounds(tables):
    """ECE <= MCE (a mean over bins against their maximum; Tables 1/7 at the same T), and
    NLL >= ln 2 x error (a misclassified sample has p_true <= 1/2; Tables 8/2)."""
    k = ["dataset", "model", "method", "temperature_scaled"]
    ece = tables["table1"].set_index(k)["value"]
    mce = tables["table7"].set_index(k)["value"]
    both = pd.concat([ece.rename("ece"), mce.rename("mce")], axis=1).dropna()
    assert len(both) == 9 * 7 * 2 and (both["ece"] <= both["mce"] + 0.01).all()
    err = tables["table2"].set_index(["dataset", "model", "method"])["value"]
    nll = tables["table8"].dropna(subset=["value"])
    e = err.reindex(list(zip(nll.dataset, nll.model, nll.method))).to_numpy()
    assert not np.isnan(e).any() and (nll["value"].to_numpy() + 0.005 >= math.log(2) * (e - 0.005)).all()


def test_notes_on_single_cell_findings(tables, mukhoti):
    """The claims of the remaining cell notes hold in the data."""
    t7 = tables["table7"]
    dn = [_cell(t7, "cifar10", "densenet121", m, s).value for m, s in (("dual_focal", False), ("dual_focal", True),
                                                                        ("inverse_focal", False))]
    assert dn[0] == dn[1] == dn[2]
    others = t7.query("dataset == 'CIFAR-10' and method == 'dual_focal' and model != 'DenseNet-121'")["value"]
    assert dn[0] >= 1.9 * others.max() and "suspicious" in _cell(t7, "cifar10", "densenet121", "dual_focal").note
    t8 = tables["table8"]
    brier = _cell(t8, "cifar10", "resnet50", "brier")
    assert brier.value == _cell(mukhoti[mukhoti.table == "table11"], "cifar10", "resnet50", "brier", True).value
    t5 = _cell(tables["table5"], "cifar100", "wide_resnet26_10", "flsd53", True)
    assert str(t5.value) == "1.6" and "1.63" in t5.note
    auroc = tables["table9"]
    t1 = tables["table1"].query("temperature_scaled and dataset_key == 'cifar10'").set_index(
        ["model_key", "method"])["optimal_T"]
    unequal = []
    for (mk, setting, method), g in auroc.dropna(subset=["value"]).groupby(["model_key", "setting", "method"]):
        if t1[(mk, method)] == 1.0:
            pre, post = g.sort_values("temperature_scaled")["value"]
            if pre != post:
                unequal.append((mk, setting, method))
                assert "T = 1" in g["note"].iloc[1]
    assert unequal == [("densenet121", "ood=SVHN", "brier")]


# ------------------------------------------------------------------ second reading of the source
_HEAD = {"Weight Decay (Guo et al., 2017)": "cross_entropy", "Brier Loss (Brier et al., 1950)": "brier",
         "MMCE (Kumar et al., 2018)": "mmce", "Label Smoothing (Szegedy et al., 2016)": "ls005",
         "Inverse Focal Loss (Wang et al., 2021)": "inverse_focal", "Focal Loss (Mukhoti et al., 2020)": "flsd53",
         "Dual Focal Ours": "dual_focal", "FLSD-53": "flsd53", "AdaFocal": "adafocal", "DualFocal": "dual_focal",
         "AdaDualFocal": "adadual_focal", "Cross Entropy": "cross_entropy", "KDE-XE": "kde_xe"}
_METRIC_ROWS = {"ECE": ("ece", False), "ECE(T)": ("ece", True), "AdaECE": ("adaece", False),
                "Classwise-ECE": ("classwise_ece", False), "Classwise ECE": ("classwise_ece", False),
                "Accuracy": ("accuracy", False), "$ECE_{KDE}$": ("ece_kde", False)}
_NUM = re.compile(r"^\d+(?:\.\d+)?(?:\(\d+(?:\.\d+)?\))?(?:±\d+(?:\.\d+)?)?$")
_DATASET = re.compile(r"CIFAR-100|CIFAR-10|Tiny-ImageNet|20 Newsgroups")


def _source():
    return paper_text(P)


def _block(lines, number):
    """The table's lines (header first) above its caption, and the caption's index."""
    cap = next(i for i, s in enumerate(lines) if s.startswith(f"Table {number}."))
    end = max(i for i in range(cap) if lines[i].strip())
    start = end
    while lines[start - 1].strip():
        start -= 1
    return [(i + 1, re.sub(r"</?b>", "", lines[i])) for i in range(start, end + 1)], cap


def _cells(line):
    return [c.strip() for c in line.split("\t") if c.strip()]


def _split(cells):
    labels_ = [c for c in cells if not _NUM.match(c)]
    nums = [c for c in cells if _NUM.match(c)]
    assert cells == labels_ + nums, cells  # labels first, then numbers
    return labels_, nums


def _reread(lines, number):
    """[(dataset, model, setting, tokens, line)] of a table laid out dataset | model | numbers."""
    block, cap = _block(lines, number)
    body = [(ln, s) for ln, s in block[1:] if not _cells(s)[0].startswith("Pre T")]
    out, dataset = [], None
    for ln, s in body:
        labels_, nums = _split(_cells(s))
        setting = ""
        if len(labels_) == 2:
            ood = re.fullmatch(r"(CIFAR-10)/(.+)", labels_[0])
            dataset, setting = (ood.group(1), f"ood={ood.group(2)}") if ood else (
                _DATASET.search(labels_[0]).group(0), "")
        elif out:
            setting = out[-1][2]
        out.append((dataset, labels_[-1], setting, nums, ln))
    return out, block, cap


def _typed(df):
    return [(d, m, s, list(g["printed"])) for (d, m, s), g in df.groupby(["dataset", "model", "setting"], sort=False)]


def _columns_from_header(header, pre_post):
    names = [_HEAD[c] for c in _cells(header) if c in _HEAD]
    return [(n, s) for n in names for s in ((False, True) if pre_post else (False,))]


def _check_lines(df, first_line, cap, lines):
    first_row, last = df.attrs["source_lines"]
    assert first_row == first_line and cap < last <= cap + 3
    norm = lambda s: re.sub(r"[\s*$]", "", s)  # noqa: E731
    assert norm(df.attrs["caption"]).startswith(norm(lines[cap].split(".", 1)[1])[:40])


@pytest.mark.parametrize("number", [1, 2, 3, 5, 6, 7, 8, 9, 11])
def test_second_reading_of_source(tables, number):
    lines = _source()
    df = tables[f"table{number}"]
    rows, block, cap = _reread(lines, number)
    typed = _typed(df)
    assert [r[:3] for r in rows] == [t[:3] for t in typed]
    for (d, m, s, nums, ln), (*_, printed) in zip(rows, typed):
        present = [p for p in printed if p not in pt.MISSING]
        assert present == nums, (d, m, s, ln)
        assert printed[len(nums):] == ["–"] * (len(printed) - len(nums))  # a row that lost cells lost its last ones
    pre_post = any(_cells(s)[0] == "Pre T" for _, s in block[1:3])
    first = df[(df.dataset == typed[0][0]) & (df.model == typed[0][1]) & (df.setting == typed[0][2])]
    assert list(zip(first.method, first.temperature_scaled)) == _columns_from_header(block[0][1], pre_post)
    _check_lines(df, rows[0][4], cap, lines)


def test_second_reading_of_table4(tables):
    lines = _source()
    block, cap = _block(lines, 4)
    assert _cells(block[0][1]) == ["Method", "Dual Logit", "ECE", "AdaECE"]
    read, group = [], None
    for ln, s in block[1:]:
        labels_, nums = _split(_cells(s))
        group = labels_[0] if len(labels_) == 2 else group
        logit = re.sub(r"\s+", " ", re.sub(r"\s+\)", ")", re.sub(r"\$q_\{gt\}\$", "q_gt", labels_[-1])))
        read.append((f"{group}: {logit}", nums))
    df = tables["table4"]
    assert [(s, list(g["printed"])) for s, g in df.groupby("setting", sort=False)] == read
    assert list(df["metric"][:2]) == ["ece", "adaece"] and "ResNet-50 on CIFAR-10" in lines[cap]
    assert set(zip(df.dataset, df.model)) == {("CIFAR-10", "ResNet-50")}
    _check_lines(df, block[1][0], cap, lines)


def test_second_reading_of_table10(tables):
    """Rows 'metric | model | dataset | numbers': ECE rows in table10, ECE_KDE rows in table10_kde."""
    lines = _source()
    block, cap = _block(lines, 10)
    assert _cells(block[0][1])[:3] == ["Metrics", "Model", "Dataset"]
    cols = _columns_from_header(block[0][1], False)
    read = {"ece": [], "ece_kde": []}
    for ln, s in block[1:]:
        (metric_label, model, dataset), nums = _split(_cells(s))
        read[_METRIC_ROWS[metric_label][0]].append((dataset, model, "", nums, ln))
    for t, metric in (("table10", "ece"), ("table10_kde", "ece_kde")):
        df = tables[t]
        assert _typed(df) == [r[:4] for r in read[metric]] and (df.metric == metric).all()
        assert list(zip(df.method[:3], df.temperature_scaled[:3])) == cols
        _check_lines(df, read[metric][0][4], cap, lines)


@pytest.mark.parametrize("number", [12, 13])
def test_second_reading_of_metric_tables(tables, number):
    """Tables 12 (metrics x methods) and 13 (gamma x metrics): each printed cell against the
    stored cell of the same method, metric and pre/post T."""
    lines = _source()
    block, cap = _block(lines, number)
    head = _cells(block[0][1])
    read = {}
    for ln, s in block[1:]:
        (label,), nums = _split(_cells(s))
        assert len(nums) == len(head)
        for col, tok in zip(head, nums):
            if number == 12:
                read[(_HEAD[col],) + _METRIC_ROWS[label] + ("",)] = tok
            else:
                g = re.fullmatch(r"\$\\gamma = (\d+)\$", label).group(1)
                read[("dual_focal",) + _METRIC_ROWS[col] + (f"gamma={g}",)] = tok
    df = tables[f"table{number}"]
    stored = {(r.method, r.metric, r.temperature_scaled, r.setting): r.printed for r in df.itertuples()}
    assert stored == read
    assert set(zip(df.dataset, df.model)) == {("CIFAR-10", "ResNet-50")}
    assert "Resnet50 on CIFAR10" in " ".join(lines[cap - 30:cap]).replace("ResNet50", "Resnet50")
    _check_lines(df, block[1][0], cap, lines)
