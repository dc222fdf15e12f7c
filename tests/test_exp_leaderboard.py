"""The leaderboard chapter and its shared machinery: plan validation, post-hoc calibration and
metrics against independent computations, paired tests and rank agreement against scipy /
statsmodels, the headline rules on constructed numbers and on the papers' own printed rows,
the sortable table in headless Chromium, and the committed cpu runs against their records."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import replicate as rp
from replicate import metrics, posthoc
from replicate.comparison import agreement as agr
from replicate.comparison import board, pairs
from replicate.experiments import leaderboard as lb  # the chapter's folder: lb.plan, lb.evidence, ...


# ----------------------------------------------------------------------------- plan
def test_plan_parameters_equal_the_chapter_and_bad_values_are_refused_before_training():
    from replicate import runner

    cell = runner.default_parameters(runner.read_notebook(runner.resolve_notebook("exp_leaderboard")))
    assert rp.experiments.plan_parameters("exp_leaderboard") == list(cell)
    assert cell["profile"] == "cpu" and cell["seeds"] == [1, 2, 3] and cell["methods"] is None
    p = lb.plan.plan("smoke", device="cpu")
    assert set(p.groups) == {"image"} and {k for k, _ in p.image} == set(lb.plan.SMOKE_METHODS)
    assert {s for _, s in p.image} == {1, 2, 3}
    assert [m.key for m in lb.plan.plan("cpu", device="cpu").methods["image"]] == list(lb.plan.METHOD_KEYS)
    assert {k for k, _ in lb.plan.plan("smoke", methods=["fls532", "fl4"], device="cpu").image} == {"fls532", "fl4"}
    for kw, match in (({"profile": "laptop"}, "unknown profile"), ({"seeds": [1, 1]}, "seeds must not repeat"),
                      ({"seeds": []}, "seeds must be"), ({"methods": ["fl6"]}, "unknown method"),
                      ({"methods": ["fcl"]}, "at least two methods"), ({"dataset": "20newsgroups"}, "image data"),
                      ({"dataset": "mnist"}, "unknown dataset"), ({"device": "tpu"}, "device")):
        with pytest.raises(ValueError, match=match):
            lb.plan.plan(**{"profile": "smoke", "device": "cpu", **kw})


def test_the_catalogue_holds_every_method_of_the_acceptance_list():
    assert len(lb.plan.METHOD_KEYS) == 17 and set(lb.plan.METHOD_KEYS) <= set(rp.comparison.METHODS)
    assert {"fl1", "fl2", "fl3", "fl5", "fl7", "adafocal_paper", "adafocal_code"} <= set(lb.plan.METHOD_KEYS)


def test_reuse_finished_takes_an_equivalent_finished_run(monkeypatch):
    cfgs = rp.comparison.configs([rp.comparison.METHODS["fl3"], rp.comparison.METHODS["brier"]], "cifar10",
                                 None, "smoke", (1,))
    hist = cfgs[("fl3", 1)].replace(options={"eval_every_epoch": True})
    monkeypatch.setattr(rp.runs, "find", lambda cfg: "run" if cfg.key == hist.key else None)
    out = rp.comparison.reuse_finished(cfgs)
    assert out[("fl3", 1)].key == hist.key                   # the finished run with per-epoch records
    assert out[("brier", 1)].key == cfgs[("brier", 1)].key   # nothing finished: planned as given


# ----------------------------------------------------------------------------- calibration and metrics
def _logits(n=400, k=5, scale=3.0, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) * scale
    z[np.arange(n), y] += 2.0
    return z, y


def test_ts_and_fts_choose_the_grid_point_of_lowest_validation_ece():
    zv, yv = _logits(seed=1)
    zt, yt = _logits(seed=2)
    ts = board.calibrate_logits(zv, yv, zt, yt, "ts")
    brute = [metrics.ece(special.softmax(zv / t, axis=1), yv) for t in posthoc.TS_GRID]
    assert ts.T == pytest.approx(posthoc.TS_GRID[int(np.argmin(brute))])
    np.testing.assert_allclose(ts.probs, special.softmax(zt / ts.T, axis=1), atol=1e-12)
    fts = board.calibrate_logits(zv, yv, zt, yt, "fts")
    from replicate.theory.fts.calibration_map import focal_calibration_map

    grid = [(metrics.ece(focal_calibration_map(special.softmax(zv / t, axis=1), g), yv), i, j)
            for i, g in enumerate(posthoc.FTS_GAMMAS) for j, t in enumerate(posthoc.TS_GRID)]
    best = min(grid)
    assert best[0] == pytest.approx(metrics.ece(focal_calibration_map(special.softmax(zv / fts.T, axis=1),
                                                                      fts.gamma), yv), abs=1e-9)
    np.testing.assert_allclose(fts.probs, focal_calibration_map(special.softmax(zt / fts.T, axis=1), fts.gamma),
                               atol=1e-9)
    np.testing.assert_allclose(np.exp(fts.logp_y), fts.probs[np.arange(len(yt)), yt], rtol=1e-9)
    none = board.calibrate_logits(zv, yv, zt, yt, "none")
    assert none.T == 1 and math.isnan(none.gamma) and none.ood_probs is None


def test_scores_on_a_subset_equal_independent_computations():
    from sklearn.metrics import log_loss, roc_auc_score

    zv, yv = _logits(seed=3)
    zt, yt = _logits(seed=4)
    zo = zt * 0.3
    cal = board.calibrate_logits(zv, yv, zt, yt, "ts", ood_logits=zo)
    idx = np.random.default_rng(0).integers(0, len(yt), len(yt))
    p, y = cal.probs[idx], yt[idx]
    assert board.score(cal, "nll", idx) == pytest.approx(100 * log_loss(y, p, labels=range(5)), rel=1e-9)
    assert board.score(cal, "brier", idx) == pytest.approx(100 * np.mean(((p - np.eye(5)[y]) ** 2).sum(1)))
    assert board.score(cal, "error", idx) == pytest.approx(100 * np.mean(p.argmax(1) != y))
    assert board.score(cal, "ece", idx) == pytest.approx(100 * metrics.ece(p, y))
    po = cal.ood_probs[idx]
    ent = lambda q: -(q * np.log(q)).sum(1)                                     # noqa: E731
    auc = roc_auc_score(np.r_[np.zeros(len(idx)), np.ones(len(idx))], np.r_[ent(p), ent(po)])
    assert board.score(cal, "auroc", idx) == pytest.approx(100 * auc)
    assert math.isnan(board.score(board.calibrate_logits(zv, yv, zt, yt, "none"), "auroc"))
    with pytest.raises(ValueError, match="metric must be one of"):
        board.score(cal, "accuracy")
    with pytest.raises(ValueError, match="setting must be one of"):
        board.calibrate_logits(zv, yv, zt, yt, "platt")


def test_summary_interval_is_the_student_t_interval():
    frame = pd.DataFrame({"method": "a", "seed": [1, 2, 3], "setting": "none", "metric": "ece",
                          "value": [1.0, 2.0, 4.0], "T": 1.0, "gamma": np.nan})
    s = board.summarise_board(frame).iloc[0]
    lo, hi = stats.t.interval(0.95, 2, loc=7 / 3, scale=stats.sem([1.0, 2.0, 4.0]))
    assert (s["mean"], s["sd"], s["n"]) == (pytest.approx(7 / 3), pytest.approx(np.std([1, 2, 4], ddof=1)), 3)
    assert (s["low"], s["high"]) == (pytest.approx(lo), pytest.approx(hi))


# ----------------------------------------------------------------------------- paired tests and ranks
def test_paired_matrix_against_scipy_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    v = pd.DataFrame(rng.normal(size=(4, 4)) + np.array([0.0, 0.1, 2.0, 5.0]), columns=list("abcd"))
    pr = pairs.paired_matrix(v)
    assert len(pr) == 6
    for r in pr.itertuples():
        t = stats.ttest_rel(v[r.a], v[r.b])
        assert (r.t, r.p) == (pytest.approx(t.statistic), pytest.approx(t.pvalue))
        assert r.diff == pytest.approx((v[r.a] - v[r.b]).mean())
        need = rp.comparison.stats.seeds_needed(r.diff, (v[r.a] - v[r.b]).std(ddof=1))
        assert (math.isnan(r.seeds_needed) and need is None) or r.seeds_needed == need
    np.testing.assert_allclose(pr.p_bh, multipletests(pr.p, method="fdr_bh")[1])
    m = pairs.matrix(pr, "diff")
    np.testing.assert_allclose(m.to_numpy(dtype=float), -m.to_numpy(dtype=float).T)
    assert pairs.matrix(pr, "p").loc["a", "b"] == pairs.matrix(pr, "p").loc["b", "a"]
    summ = pairs.summary(pr)
    assert summ["pairs"] == 6 and summ["significant"] == int((pr.p < 0.05).sum())
    with pytest.raises(ValueError, match="every method at every seed"):
        pairs.paired_matrix(v.assign(a=[1.0, np.nan, 2.0, 3.0]))


def test_seeds_needed_by_bisection_equals_the_first_n_of_a_linear_search():
    for diff, sd in ((0.5, 0.5), (0.1, 1.0), (0.03, 1.0), (2.0, 0.1), (-0.2, 0.7)):
        linear = next((n for n in range(2, 3001) if rp.comparison.stats.paired_power(n, diff / sd) >= 0.8), None)
        assert rp.comparison.stats.seeds_needed(diff, sd, max_n=3000) == linear, (diff, sd)


def _cal(probs_correct: float, n=300, k=4, seed=0, ood_conf=None):
    """A calibrated run whose confidence on the label is ``probs_correct`` everywhere."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.full((n, k), (1 - probs_correct) / (k - 1))
    p[np.arange(n), y] = probs_correct
    ood = None if ood_conf is None else np.full((n, k), 1 / k) * (1 - ood_conf) + np.eye(k)[y] * ood_conf
    return board.Calibrated("none", p, y, np.log(p[np.arange(n), y]), ood, 1.0, math.nan)


def test_rank_intervals_put_a_clearly_better_method_first_and_handle_higher_is_better():
    cal = {(m, s, "none"): _cal(c, seed=s, ood_conf=o) for m, c, o in (("good", 0.9, 0.0), ("bad", 0.3, 0.99))
           for s in (1, 2)}
    r = board.rank_intervals(cal, "nll", "none", n_boot=20)
    assert list(r.sort_values("rank").method) == ["good", "bad"]
    assert (r.rank_low == r.rank_high).all() and r.attrs["ranks"].shape == (20, 2)
    a = board.rank_intervals(cal, "auroc", "none", n_boot=5)       # good: uniform OOD, entropy separates
    assert a.set_index("method").loc["good", "rank"] == 1 and a.set_index("method").loc["good", "score"] > 50
    with pytest.raises(ValueError, match="every method needs every seed"):
        board.rank_intervals({k: v for k, v in cal.items() if k != ("bad", 2, "none")}, "nll", "none")


def test_auroc_ranks_refuse_runs_without_ood_logits_and_twins_are_found():
    cal = {(m, s, "none"): _cal(0.8, seed=s, ood_conf=None if m == "b" else 0.0) for m in "ab" for s in (1, 2)}
    with pytest.raises(ValueError, match="without out-of-distribution logits"):
        board.rank_intervals(cal, "auroc", "none", n_boot=2)
    assert board.missing_ood(cal) == [("b", 1), ("b", 2)] and board.missing_ood(cal, "ts") == []
    assert board.missing_ood({k: v for k, v in cal.items() if k[0] == "a"}) == []

    class FakeRun:
        def __init__(self, z):
            self.z = z

        def logits(self, split):
            return self.z, None

    z1, z2 = np.eye(3), np.ones((3, 3))
    runs = {("a", 1): FakeRun(z1), ("b", 1): FakeRun(z1.copy()), ("c", 1): FakeRun(z2),
            ("a", 2): FakeRun(z2), ("b", 2): FakeRun(z2.copy()), ("c", 2): FakeRun(z2)}
    assert lb.views.identical_models(runs) == [("a", "b")]          # c differs at seed 1
    r = pd.DataFrame({"method": list("abc"), "rank": [1.0, 2, 3], "mean_rank": [1.0, 2, 3],
                      "rank_low": [1.0, 1, 3], "rank_high": [2.0, 2, 3]})
    assert lb.views.neighbours_overlap(r) == (1, 2)                  # a-b overlap, b-c do not
    names = lb.evidence.labels()
    assert names["adafocal_paper"] != names["adafocal_code"] and names["fl3"] == "FL-3"


# ----------------------------------------------------------------------------- rank agreement
def test_readings_and_our_agreement_against_scipy():
    ours = [rp.comparison.METHODS[k] for k in ("cross_entropy", "adafocal_paper", "adafocal_code", "fcl")]
    rd = agr.readings({"cross_entropy": 1.0, "adafocal": 0.5, "brier": 2.0}, ours)
    assert rd == [{"cross_entropy": "cross_entropy", "adafocal_paper": "adafocal"},
                  {"cross_entropy": "cross_entropy", "adafocal_code": "adafocal"}]
    ranks = pd.DataFrame({"method": ["x", "y", "z", "w"], "rank": [1.0, 2.0, 3.0, 4.0]})
    ranks.attrs["ranks"] = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4.0]])
    printed = {"X": 0.3, "Y": 0.1, "Z": 0.5, "W": 0.9}
    res = agr.our_agreement(ranks, printed, {"x": "X", "y": "Y", "z": "Z", "w": "W"})
    assert res["tau"] == pytest.approx(stats.kendalltau([1, 2, 3, 4], [0.3, 0.1, 0.5, 0.9]).statistic)
    taus = [stats.kendalltau(r, [0.3, 0.1, 0.5, 0.9]).statistic for r in ranks.attrs["ranks"]]
    assert res["low"] == pytest.approx(np.quantile(taus, 0.025)) and res["methods"] == ["x", "y", "z", "w"]


def test_between_papers_detects_reprinted_numbers():
    cols = {"mukhoti2020": {"a": 1.0, "b": 2.0, "c": 3.0}, "ghosh2022": {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5},
            "liang2024": {"a": 1.5, "b": 1.2, "c": 3.3}}
    out = agr.between_papers(cols).set_index(["paper_a", "paper_b"])
    assert out.loc[("mukhoti2020", "ghosh2022"), "identical"] == 3
    assert "reprints" in out.loc[("mukhoti2020", "ghosh2022"), "note"]
    assert out.loc[("mukhoti2020", "liang2024"), "tau"] == pytest.approx(stats.kendalltau([1, 2, 3],
                                                                                         [1.5, 1.2, 3.3]).statistic)


def test_printed_columns_read_the_papers_tables():
    # Tao et al. Table 1 and Liang et al. Table 1, CIFAR-10 ResNet-50, DFL pre-T ECE: 0.46 and 1.32
    assert agr.printed_column("tao2023", "ece", False)["dual_focal"] == 0.46
    assert agr.printed_column("liang2024", "ece", False)["dual_focal"] == 1.32
    fts = agr.printed_column("komisarenko2024", "adaece", True, lb.plan.FTS_SETTING, exclude=lb.evidence.excluded("komisarenko2024"))
    assert set(fts) == {"cross_entropy", "fl1", "fl3", "fl7", "flsd53"}       # its AdaFocal left out
    assert "gamma 1" in lb.evidence.excluded("komisarenko2024")["adafocal"]
    b = lb.evidence.between_papers()
    row = b[(b.paper_a == "mukhoti2020") & (b.paper_b == "ghosh2022") & (b.column == "pre-T ECE")].iloc[0]
    assert row.identical == row.n == 4 and "reprints" in row.note      # Ghosh reprints Mukhoti's baselines
    row = b[(b.paper_a == "tao2023") & (b.paper_b == "liang2024") & (b.column == "pre-T ECE")].iloc[0]
    assert row.identical == 0                                          # Liang retrained every baseline


# ----------------------------------------------------------------------------- headline rules
def _frame(values: dict, setting="none", seeds=(1, 2, 3)):
    """``{method: per-seed values}`` (or one number for every seed) as the per-seed ECE frame."""
    rows = []
    for m, v in values.items():
        v = [v] * len(seeds) if np.isscalar(v) else v
        rows += [(m, s, setting, "ece", float(x), 1.0, np.nan) for s, x in zip(seeds, v)]
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "metric", "value", "T", "gamma"])


def _verdict(paper, frame, which=0):
    numbers, outcome = lb.claims.rules(paper)[which].rule(frame)
    return rp.claims.as_outcome(outcome), numbers


def test_headline_rule_holds_fails_depends_and_is_not_tested():
    base = {"cross_entropy": [4.0, 4.2, 4.1], "brier": [2.0, 2.1, 2.2], "mmce": [4.5, 4.4, 4.6]}
    holds = _frame({**base, "flsd53": [1.0, 1.1, 1.05]})
    assert _verdict("mukhoti2020", holds)[0].verdict == "holds"
    noisy = _frame({**base, "flsd53": [0.5, 3.5, 1.6]})                 # lowest mean, not significant
    o, numbers = _verdict("mukhoti2020", noisy)
    assert o.verdict == "depends on reading" and "rank 1 of 4" in numbers
    fails = _frame({**base, "flsd53": [2.5, 2.6, 2.7]})
    o, numbers = _verdict("mukhoti2020", fails)
    assert o.verdict == "fails" and "lowest Brier" in numbers
    o, _ = _verdict("mukhoti2020", _frame({"cross_entropy": 1.0, "flsd53": 0.5}))
    assert o.verdict == "not tested" and "Brier" in o.note
    post = _frame({**base, "flsd53": [1.0, 1.1, 1.05]}, setting="ts")
    assert _verdict("mukhoti2020", post, 1)[0].verdict == "holds"


def test_adafocal_headline_is_read_with_each_rule():
    base = {"cross_entropy": [4.0, 4.3, 4.1], "brier": [2.0, 2.1, 2.3], "mmce": [4.5, 4.4, 4.9],
            "ls005": [3.0, 3.3, 3.1], "flsd53": [1.5, 1.6, 1.8]}
    f = _frame({**base, "adafocal_paper": [0.5, 0.6, 0.55], "adafocal_code": [1.9, 2.0, 2.1]})
    o, _ = _verdict("ghosh2022", f)
    assert o.verdict == "depends on reading" and "AdaFocal (Eq. 4): lowest mean: holds" in o.note
    assert "AdaFocal (authors' code): lowest mean: fails" in o.note


def test_fts_rule_counts_models_where_fts_beats_ts():
    keys = ("cross_entropy", "fl1", "fl3", "fl7", "flsd53")
    ts = _frame({k: [2.0, 2.1, 2.2] for k in keys}, "ts")
    better = _frame({k: [1.0, 1.3, 1.1] for k in keys}, "fts")
    numbers, o = lb.claims.rules("komisarenko2024")[0].rule(pd.concat([ts, better]))
    assert rp.claims.as_outcome(o).verdict == "holds" and "for 5 of 5 models" in numbers, numbers
    worse = better.assign(value=np.where(better.method == "fl7", 3.0, better.value))
    numbers, o = lb.claims.rules("komisarenko2024")[0].rule(pd.concat([ts, worse]))
    assert rp.claims.as_outcome(o).verdict == "fails" and "not FL-7" in numbers
    _, o = lb.claims.rules("komisarenko2024")[1].rule(pd.concat([ts, better]))
    assert o.verdict == "beyond the paper" and o.check == "holds"


@pytest.mark.parametrize("paper", ["mukhoti2020", "ghosh2022", "tao2023", "liang2024"])
def test_headline_rules_on_the_papers_own_printed_rows(paper):
    """One 'seed' holding the paper's printed Table 1 row: by reading the printed numbers, each
    paper's method has the lowest pre-T and post-T ECE of its Table 1 (Mukhoti: FLSD-53 1.55
    and 0.95; Ghosh: AdaFocal 0.80 and 0.65; Tao: DFL 0.46 and 0.46; Liang: FCL 0.76 and 0.76);
    with one seed there is no paired test, so the mean is the only reading (AdaFocal: one per rule)."""
    for which, scaled, setting in ((0, False, "none"), (1, True, "ts")):
        col = agr.printed_column(paper, "ece", scaled)
        vals = {m.key: col[m.compared_with] for m in rp.comparison.METHODS.values() if m.compared_with in col}
        o, numbers = _verdict(paper, _frame(vals, setting, seeds=(1,)), which)
        assert o.verdict == "holds", numbers
        assert "significantly" not in o.note and "rank 1 of" in numbers


def test_claims_without_runs_are_not_tested_and_every_paper_is_registered(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    sources = [s for s in rp.claims.SOURCES if s.chapter == "exp_leaderboard"]
    assert {s.paper for s in sources} == set(rp.papers.PAPERS)
    for s in sources:
        f = rp.claims.build(s, "smoke").frame()
        assert (f.verdict == "not tested").all() and (f.section == lb.plan.SECTION).all()
        assert f.note.str.contains("not all in the run store").all()
    with pytest.raises(ValueError, match="alpha"):
        lb.claims.rules("tao2023", alpha=1.5)


# ----------------------------------------------------------------------------- the sortable table
def test_sortable_table_html_is_escaped_and_carries_sort_keys():
    from replicate.book.tables import sortable_table

    cells = pd.DataFrame({"method": ["<b>x</b>", "y"], "ECE": ["1.00 ± 0.10", "–"]})
    keys = pd.DataFrame({"ECE": [1.0, np.nan]})
    notes = pd.DataFrame({"ECE": ["[0.8, 1.2]", None]})
    html = sortable_table(cells, keys, notes, caption="a & b", text_columns=("method",)).html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<caption>a &amp; b</caption>" in html
    assert 'data-sort="1.0"' in html and 'data-sort=""' in html and "<small>[0.8, 1.2]</small>" in html
    assert 'class="sortable n-last replicate-board asc"' in html
    with pytest.raises(ValueError, match="text_columns"):
        sortable_table(cells, text_columns=("T",))


def test_clicking_a_header_sorts_the_table_in_chromium_and_the_page_passes_the_html_check(tmp_path):
    """The vendored script, served from the page's own folder, sorts by the data-sort numbers
    (ascending, then descending); the page makes no request elsewhere and logs no error."""
    import shutil

    from replicate.book import check as htmlcheck
    from replicate.book.tables import SCRIPTS, STATIC_DIR, STYLESHEETS, sortable_table

    reason = htmlcheck.unavailable_reason()
    if reason:
        pytest.skip(f"no headless browser: {reason}")
    values = [3.5, 10.25, 1.0, 2.75]
    cells = pd.DataFrame({"method": list("abcd"), "ECE": [f"{v:.2f} ± 0.1" for v in values]})
    table = sortable_table(cells, pd.DataFrame({"ECE": values}), table_id="t").html
    shutil.copytree(STATIC_DIR, tmp_path / "_static")
    head = "".join(f'<script src="_static/{s}"></script>' for s in SCRIPTS) + \
        "".join(f'<link rel="stylesheet" href="_static/{c}">' for c in STYLESHEETS)
    (tmp_path / "index.html").write_text(f"<!doctype html><html><head>{head}</head><body>{table}</body></html>")
    assert htmlcheck.check_book(tmp_path) == []
    from playwright.sync_api import sync_playwright

    with htmlcheck._Server(tmp_path) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=htmlcheck.find_chromium(), headless=True,
                                     args=list(htmlcheck.LAUNCH_ARGS))
        page = browser.new_page()
        page.goto(f"{server.origin}/index.html")
        first = lambda: page.eval_on_selector_all("#t tbody tr td:first-child",       # noqa: E731
                                                  "els => els.map(e => e.textContent)")
        assert first() == list("abcd")                    # without a click: the order written
        page.click("#t thead th:nth-child(2)")
        page.wait_for_function("document.querySelector('#t tbody td').textContent === 'c'")
        assert first() == list("cdab")                    # ascending by the number, not the text
        page.click("#t thead th:nth-child(2)")
        page.wait_for_function("document.querySelector('#t tbody td').textContent === 'b'")
        assert first() == list("badc")
        browser.close()


# ----------------------------------------------------------------------------- figures
def test_figures_draw_every_method_and_panel():
    import matplotlib.pyplot as plt

    r = pd.DataFrame({"method": ["a", "b", "c"], "score": [1, 2, 3.0], "rank": [1, 2, 3.0],
                      "mean_rank": [1.2, 2.0, 2.8], "rank_low": [1, 1, 2.0], "rank_high": [2, 3, 3.0]})
    fig = rp.experiments.leaderboard.figures.rank_figure({"x": r, "y": r}, {"a": "A"}, "cap")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["A", "b", "c"] and len(fig.axes) == 2
    v = pd.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 2.5, 3.5], "c": [5.0, 6, 7]})
    fig2 = rp.experiments.leaderboard.figures.pairs_figure(pairs.paired_matrix(v), ["c", "b", "a"], caption_text="cap")
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["c", "b", "a"]
    fig3 = rp.experiments.leaderboard.figures.agreement_figure(pd.DataFrame({"label": ["p"], "tau": [0.5], "low": [0.1],
                                                                 "high": [0.9], "n": [4]}))
    assert len(fig3.axes) == 1
    plt.close("all")


# ----------------------------------------------------------------------------- committed runs
def test_committed_cpu_runs_agree_with_their_records():
    """The uncalibrated test ECE and error recomputed from each committed run's stored logits
    equal the numbers its record holds (skipped for runs not in results/)."""
    p = lb.plan.plan("cpu", device="cpu")
    found = {k: rp.runs.find(c) for k, c in p.image.items()}
    found = {k: r for k, r in found.items() if r is not None and r.store == "results"}
    if not found:
        pytest.skip("no committed cpu run of the leaderboard in results/")
    for (key, seed), run in list(found.items())[:12]:
        cal = board.calibrate_run(run, "none")
        assert board.score(cal, "ece") == pytest.approx(100 * run.metrics["test"]["ece"], abs=1e-3), key
        assert board.score(cal, "error") == pytest.approx(100 * run.metrics["test"]["error"], abs=1e-3), key
