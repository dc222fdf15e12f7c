"""The leaderboard chapter: plan validation, post-hoc calibration and metrics against
independent computations, rank intervals of the noise model, paired tests and rank agreement
against scipy / statsmodels, the headline claims on constructed evidence (known answers) and
on the papers' printed rows counted here from the tables, the sortable table in headless
Chromium, and the committed cpu runs against their records."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import replicate as rp
from replicate import metrics, posthoc
from replicate.experiments import leaderboard as lb  # the chapter's folder: lb.plan, lb.report, ...
from replicate.experiments.leaderboard import report, views


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
    monkeypatch.setattr(rp.runs, "find", lambda cfg, **kw: "run" if cfg.key == hist.key else None)
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
    from replicate.theory.fts.calibration_map import focal_calibration_map

    zv, yv = _logits(seed=1)
    zt, yt = _logits(seed=2)
    fitted = report.fit(zv, yv)
    brute = [metrics.ece(special.softmax(zv / t, axis=1), yv) for t in posthoc.TS_GRID]
    assert fitted["ts"][0] == pytest.approx(posthoc.TS_GRID[int(np.argmin(brute))])
    ts = report.calibrate_logits(zt, yt, "ts", *fitted["ts"])
    np.testing.assert_allclose(ts.probs, special.softmax(zt / ts.T, axis=1), atol=1e-12)
    grid = [(metrics.ece(focal_calibration_map(special.softmax(zv / t, axis=1), g), yv), i, j)
            for i, g in enumerate(posthoc.FTS_GAMMAS) for j, t in enumerate(posthoc.TS_GRID)]
    T, gamma = fitted["fts"]
    assert min(grid)[0] == pytest.approx(metrics.ece(focal_calibration_map(special.softmax(zv / T, axis=1), gamma),
                                                     yv), abs=1e-9)
    fts = report.calibrate_logits(zt, yt, "fts", T, gamma)
    np.testing.assert_allclose(fts.probs, focal_calibration_map(special.softmax(zt / T, axis=1), gamma), atol=1e-9)
    np.testing.assert_allclose(np.exp(fts.logp_y), fts.probs[np.arange(len(yt)), yt], rtol=1e-9)
    none = report.calibrate_logits(zt, yt, "none", 3.0, 0.5)
    assert none.T == 1 and math.isnan(none.gamma) and none.ood == {}
    with pytest.raises(ValueError, match="setting must be one of"):
        report.calibrate_logits(zt, yt, "platt")


def test_scores_equal_independent_computations():
    from sklearn.metrics import log_loss, roc_auc_score

    zt, y = _logits(seed=4)
    cal = report.calibrate_logits(zt, y, "ts", 1.7, ood={report.OOD_SET: zt * 0.3})
    p = special.softmax(zt / 1.7, axis=1)
    assert report.score(cal, "nll") == pytest.approx(100 * log_loss(y, p, labels=range(5)), rel=1e-9)
    assert report.score(cal, "brier") == pytest.approx(100 * np.mean(((p - np.eye(5)[y]) ** 2).sum(1)))
    assert report.score(cal, "error") == pytest.approx(100 * np.mean(p.argmax(1) != y))
    assert report.score(cal, "ece") == pytest.approx(100 * metrics.ece(p, y))
    assert report.score(cal, "smece") == pytest.approx(100 * metrics.smooth_ece(p, y))
    po = special.softmax(zt * 0.3 / 1.7, axis=1)
    ent = lambda q: -(q * np.log(q)).sum(1)                                     # noqa: E731
    auc = roc_auc_score(np.r_[np.zeros(len(y)), np.ones(len(y))], np.r_[ent(p), ent(po)])
    assert report.score(cal, "auroc") == pytest.approx(100 * auc)
    assert math.isnan(report.score(report.calibrate_logits(zt, y, "none"), "auroc"))
    with pytest.raises(ValueError, match="metric must be one of"):
        report.score(cal, "accuracy")


def test_summary_interval_is_the_student_t_interval():
    frame = pd.DataFrame({"method": "a", "seed": [1, 2, 3], "setting": "none", "metric": "ece",
                          "value": [1.0, 2.0, 4.0], "T": 1.0, "gamma": np.nan})
    s = report.summarise_board(frame).iloc[0]
    lo, hi = stats.t.interval(0.95, 2, loc=7 / 3, scale=stats.sem([1.0, 2.0, 4.0]))
    assert (s["mean"], s["sd"], s["n"]) == (pytest.approx(7 / 3), pytest.approx(np.std([1, 2, 4], ddof=1)), 3)
    assert lo < 0 and (s["low"], s["high"], s["cut"]) == (0.0, pytest.approx(hi), "low")   # an ECE: cut at 0
    far = frame.assign(value=frame["value"] + 10)
    lo, hi = stats.t.interval(0.95, 2, loc=7 / 3 + 10, scale=stats.sem([1.0, 2.0, 4.0]))
    assert tuple(report.summarise_board(far).iloc[0][["low", "high", "cut"]]) == (pytest.approx(lo), pytest.approx(hi), "")
    assert list(report.seed_values(frame, "ece", "none").a) == [1.0, 2.0, 4.0]


def test_board_interval_of_a_small_ece_is_cut_at_zero_and_says_so():
    """Issue #32, item 5: an ECE near 0 over three seeds; the t interval would reach below 0,
    the summary and the board's note cut it at 0 (the upper end is the t interval's)."""
    v = [0.1, 0.2, 1.5]
    frame = pd.DataFrame({"method": "a", "seed": [1, 2, 3], "setting": "none", "metric": "ece", "value": v,
                          "T": 1.0, "gamma": np.nan})
    s = report.summarise_board(frame).iloc[0]
    lo, hi = stats.t.interval(0.95, 2, loc=np.mean(v), scale=stats.sem(v))
    assert lo < 0 and (s["low"], s["high"], s["cut"]) == (0.0, pytest.approx(hi), "low")
    html = views.board_table(report.summarise_board(frame), "c", metrics=["ece"]).html
    assert f"[0.00, {hi:.2f}] (cut at 0)" in str(html)


# ----------------------------------------------------------------------------- paired tests and ranks
def test_paired_matrix_against_scipy_and_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    v = pd.DataFrame(rng.normal(size=(4, 4)) + np.array([0.0, 0.1, 2.0, 5.0]), columns=list("abcd"))
    pr = views.paired_matrix(v)
    assert len(pr) == 6
    for r in pr.itertuples():
        t = stats.ttest_rel(v[r.a], v[r.b])
        assert (r.t, r.p) == (pytest.approx(t.statistic), pytest.approx(t.pvalue))
        assert r.diff == pytest.approx((v[r.a] - v[r.b]).mean())
        need = rp.comparison.stats.seeds_needed(r.diff, (v[r.a] - v[r.b]).std(ddof=1))
        assert (math.isnan(r.seeds_needed) and need is None) or r.seeds_needed == need
    np.testing.assert_allclose(pr.p_bh, multipletests(pr.p, method="fdr_bh")[1])
    m = views.matrix(pr, "diff")
    np.testing.assert_allclose(m.to_numpy(dtype=float), -m.to_numpy(dtype=float).T)
    assert views.matrix(pr, "p").loc["a", "b"] == views.matrix(pr, "p").loc["b", "a"]
    summ = views.pairs_summary(pr)
    assert summ["pairs"] == 6 and summ["significant"] == int((pr.p < 0.05).sum())
    with pytest.raises(ValueError, match="every method at every seed"):
        views.paired_matrix(v.assign(a=[1.0, np.nan, 2.0, 3.0]))


def test_seeds_needed_by_bisection_equals_the_first_n_of_a_linear_search():
    for diff, sd in ((0.5, 0.5), (0.1, 1.0), (0.03, 1.0), (2.0, 0.1), (-0.2, 0.7)):
        linear = next((n for n in range(2, 3001) if rp.comparison.stats.paired_power(n, diff / sd) >= 0.8), None)
        assert rp.comparison.stats.seeds_needed(diff, sd, max_n=3000) == linear, (diff, sd)


class FakeRun:
    """A stored run's interface: key, resolved (data set and network), logits(split), ood_sets."""

    made = 0

    def __init__(self, test, labels, ood=None):
        import hashlib

        self._z, self._y = np.asarray(test, np.float32), labels
        self._ood = ood
        FakeRun.made += 1
        self.key = hashlib.sha1(self._z.tobytes() + str(FakeRun.made).encode()).hexdigest()[:16]
        self.resolved = {"dataset": "cifar10", "model": "tiny_cnn"}

    @property
    def ood_sets(self):
        return {} if self._ood is None else {report.OOD_SET: "noisy copies"}

    def logits(self, split="test"):
        if split.startswith("ood:"):
            return self._ood, self._y
        return self._z, self._y


def _confident(p_label: float, n=300, k=4, seed=0, ood_flat=None):
    """Logits whose softmax puts ``p_label`` on the label everywhere; OOD copies flat (``ood_flat``)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.full((n, k), (1 - p_label) / (k - 1))
    p[np.arange(n), y] = p_label
    ood = None if ood_flat is None else np.log(np.full((n, k), 1 / k) * (1 - ood_flat) + np.eye(k)[y] * ood_flat)
    return FakeRun(np.log(p), y, ood)


def _evidence(runs):
    cal = report.calibrated(runs, {}, ("none",))
    return report.our_evidence(runs, cal, "test", n_boot=50)


def test_rank_intervals_of_the_noise_model_put_a_clearly_better_method_first():
    runs = {(m, s): _confident(c, seed=s, ood_flat=o) for m, c, o in (("good", 0.9, 0.0), ("bad", 0.3, 0.99))
            for s in (1, 2)}
    ev = _evidence(runs)
    r = report.ranks(ev, ["good", "bad"], "nll", "none")
    assert list(r.sort_values("rank").method) == ["good", "bad"]
    assert (r.rank_low == r.rank_high).all() and r.attrs["ranks"].shape == (50, 2)
    a = report.ranks(ev, ["good", "bad"], "auroc", "none")         # good: flat OOD copies, entropy separates
    assert a.set_index("method").loc["good", "rank"] == 1 and a.set_index("method").loc["good", "score"] > 50
    with pytest.raises(ValueError, match="metric must be one of"):
        report.ranks(ev, ["good", "bad"], "accuracy", "none")


def test_auroc_needs_ood_logits_and_twins_are_found_by_their_fingerprints():
    runs = {(m, s): _confident(0.8, seed=s, ood_flat=None if m == "b" else 0.0) for m in "ab" for s in (1, 2)}
    assert report.missing_ood(runs) == [("b", 1), ("b", 2)]
    with pytest.raises(ValueError, match="without numbers"):
        report.ranks(_evidence(runs), ["a", "b"], "auroc", "none")
    z1, z2, y = np.eye(3), np.ones((3, 3)), np.arange(3)
    twins = {("a", 1): FakeRun(z1, y), ("b", 1): FakeRun(z1.copy(), y), ("c", 1): FakeRun(z2, y),
             ("a", 2): FakeRun(z2, y), ("b", 2): FakeRun(z2.copy(), y), ("c", 2): FakeRun(z2, y)}
    assert views.identical_models(twins) == [("a", "b")]          # c differs at seed 1
    assert "a and b have identical test logits at every seed (1, 2)" in views.twins_text(twins, "cpu")
    assert views.twins_text({k: v for k, v in twins.items() if k[0] != "b"}, "cpu").startswith("no two methods")
    rules = {("adafocal_paper", 1): FakeRun(z1, y), ("adafocal_code", 1): FakeRun(z1.copy(), y)}
    assert "both readings rest on the same runs" in views.readings_text(rules, "cpu")
    rules[("adafocal_code", 1)] = FakeRun(z2, y)
    assert "different models" in views.readings_text(rules, "cpu")
    r = pd.DataFrame({"method": list("abc"), "rank": [1.0, 2, 3], "mean_rank": [1.0, 2, 3],
                      "rank_low": [1.0, 1, 3], "rank_high": [2.0, 2, 3]})
    assert views.neighbours_overlap(r) == (1, 2)                  # a-b overlap, b-c do not
    names = views.labels()
    assert names["adafocal_paper"] != names["adafocal_code"] and names["fl3"] == "FL-3"


# ----------------------------------------------------------------------------- rank agreement
def test_readings_and_our_agreement_against_scipy():
    ours = [rp.comparison.METHODS[k] for k in ("cross_entropy", "adafocal_paper", "adafocal_code", "fcl")]
    rd = report.readings({"cross_entropy": 1.0, "adafocal": 0.5, "brier": 2.0}, ours)
    assert rd == [{"cross_entropy": "cross_entropy", "adafocal_paper": "adafocal"},
                  {"cross_entropy": "cross_entropy", "adafocal_code": "adafocal"}]
    ranks = pd.DataFrame({"method": ["x", "y", "z", "w"], "rank": [1.0, 2.0, 3.0, 4.0]})
    ranks.attrs["ranks"] = np.array([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4.0]])
    printed = {"X": 0.3, "Y": 0.1, "Z": 0.5, "W": 0.9}
    res = report.our_agreement(ranks, printed, {"x": "X", "y": "Y", "z": "Z", "w": "W"})
    assert res["tau"] == pytest.approx(stats.kendalltau([1, 2, 3, 4], [0.3, 0.1, 0.5, 0.9]).statistic)
    taus = [stats.kendalltau(r, [0.3, 0.1, 0.5, 0.9]).statistic for r in ranks.attrs["ranks"]]
    assert res["low"] == pytest.approx(np.quantile(taus, 0.025)) and res["methods"] == ["x", "y", "z", "w"]


def test_between_papers_detects_reprinted_numbers():
    cols = {"mukhoti2020": {"a": 1.0, "b": 2.0, "c": 3.0}, "ghosh2022": {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.5},
            "liang2024": {"a": 1.5, "b": 1.2, "c": 3.3}}
    out = report.papers_pairs(cols).set_index(["paper_a", "paper_b"])
    assert out.loc[("mukhoti2020", "ghosh2022"), "identical"] == 3
    assert "reprints" in out.loc[("mukhoti2020", "ghosh2022"), "note"]
    assert out.loc[("mukhoti2020", "liang2024"), "tau"] == pytest.approx(stats.kendalltau([1, 2, 3],
                                                                                         [1.5, 1.2, 3.3]).statistic)


def test_printed_columns_read_the_papers_tables():
    # Tao et al. Table 1 and Liang et al. Table 1, CIFAR-10 ResNet-50, DFL pre-T ECE: 0.46 and 1.32
    assert report.printed_column("tao2023", "ece", False)["dual_focal"] == 0.46
    assert report.printed_column("liang2024", "ece", False)["dual_focal"] == 1.32
    assert views.printed("tao2023", "dual_focal") == "0.46" and views.printed("tao2023", "nothing") == "not printed"
    fts = report.printed_column("komisarenko2024", "adaece", True, lb.plan.FTS_SETTING,
                                exclude=report.excluded("komisarenko2024"))
    assert set(fts) == {"cross_entropy", "fl1", "fl3", "fl7", "flsd53"}       # its AdaFocal left out
    assert "gamma 1" in report.excluded("komisarenko2024")["adafocal"]
    b = report.between_papers()
    row = b[(b.paper_a == "mukhoti2020") & (b.paper_b == "ghosh2022") & (b.column == "pre-T ECE")].iloc[0]
    assert row.identical == row.n == 4 and "reprints" in row.note      # Ghosh reprints Mukhoti's baselines
    row = b[(b.paper_a == "tao2023") & (b.paper_b == "liang2024") & (b.column == "pre-T ECE")].iloc[0]
    assert row.identical == 0                                          # Liang retrained every baseline


# ----------------------------------------------------------------------------- the claims and their tests
def _exact(cells: dict):
    """Exact evidence of one CIFAR-10 row from ``{(method, post): ECE}``."""
    from replicate.claims.evidence import Exact

    frame = pd.DataFrame([{"row": "r", "dataset": "cifar10", "model": "m", "method": m, "metric": "ece", "post": p,
                           "setting": "", "value": v} for (m, p), v in cells.items()])
    return Exact(frame, "constructed", report.names())


def _decide(paper: str, cells: dict):
    from replicate.claims.claim import claims_log

    return claims_log(paper, "exp_leaderboard", lb.claims.definitions(paper), [_exact(cells)], "s").frame()


def _board(values: dict, post: str = "none") -> dict:
    return {(m, post): v for m, v in values.items()}


def test_lowest_claims_on_constructed_numbers():
    base = {"cross_entropy": 4.0, "brier": 2.0, "mmce": 4.5}
    good = {**_board({**base, "flsd53": 1.0}), **_board({**base, "flsd53": 0.5}, "ts")}
    assert _decide("mukhoti2020", good).verdict.tolist() == ["holds", "holds"]
    tie = {**_board({**base, "flsd53": 2.0}), **_board({**base, "flsd53": 3.0}, "ts")}   # a tie is not lowest
    f = _decide("mukhoti2020", tie)
    assert f.verdict.tolist() == ["fails", "fails"] and "FLSD-53 − min(Cross Entropy, Brier Loss, MMCE) = 0.00" in \
        f.result[0]
    assert (_decide("mukhoti2020", _board(base)).verdict == "not tested").all()           # no FLSD-53
    only = _decide("mukhoti2020", _board({"flsd53": 1.0, "cross_entropy": 2.0}))          # the rivals it has
    assert only.verdict[0] == "holds" and "min(Cross Entropy)" in only.result[0]


def test_adafocal_claim_is_read_with_each_of_our_rules():
    base = {"cross_entropy": 4.0, "brier": 2.0, "mmce": 4.5, "ls005": 3.0, "flsd53": 1.5}
    f = _decide("ghosh2022", _board({**base, "adafocal_paper": 0.5, "adafocal_code": 1.9}))
    assert f.verdict[0] == "depends on reading"
    assert "AdaFocal (Eq. 4): holds" in f.note[0] and "AdaFocal (authors' code): fails" in f.note[0]
    same = _decide("ghosh2022", _board({**base, "adafocal_paper": 0.5, "adafocal_code": 0.5}))
    assert same.verdict[0] == "holds"             # the other rule is no rival: a tie between them is not counted


def test_fts_claims_count_every_model():
    keys = ("cross_entropy", "fl1", "fl3", "fl7", "flsd53")
    ts = _board({k: 2.0 for k in keys}, "ts")
    assert lb.claims.fts_models() == list(keys)
    better = {**ts, **_board({k: 1.5 for k in keys}, "fts")}
    f = _decide("komisarenko2024", better)
    assert f.verdict[0] == "holds" and f.result[0].startswith("5 of 5 models hold")
    assert f.verdict[1] == "beyond the paper" and f.check[1] == "holds"         # the five it has
    worse = {**better, ("fl7", "fts"): 2.5}
    assert _decide("komisarenko2024", worse).verdict[0] == "fails"
    claim = lb.claims.definitions("komisarenko2024", ["cross_entropy", "brier"])[1]
    assert claim.beyond and claim.where == "(the book)" and "all 2 models" in claim.how(report.names())


def test_the_paper_side_is_its_printed_row_counted_here_from_the_tables():
    """Each headline claim on the paper's side: the paper's method below every other method of
    the CIFAR-10 ResNet-50 row of its Table 1 (pre-T and post-T ECE), counted from the stored
    table; FTS below TS for each model of the FTS paper's CIFAR-10 row (its AdaFocal left out)."""
    from replicate import paper_tables

    p = lb.plan.plan("smoke", device="cpu")
    logs = report.decide(p, None)
    for paper, (own, table) in lb.plan.HEADLINE.items():
        t = paper_tables.get(paper, f"table{table}")
        t = t[(t.dataset_key == "cifar10") & (t.model_key == "resnet50") & (t.metric == "ece") & (t.setting == "")]
        f = logs[paper].frame()
        paper_rows = f[f.evidence.str.startswith("paper")]
        for i, scaled in enumerate((False, True)):
            col = t[t.temperature_scaled.astype(bool) == scaled].set_index("method").value
            expected = "holds" if col[own] < col.drop(own).min() else "fails"
            assert paper_rows.verdict.iloc[i] == expected, (paper, scaled)
            assert f"= {col[own] - col.drop(own).min():.2f}" in paper_rows.result.iloc[i]
        ours = f[f.evidence.str.startswith("ours")]
        assert (ours.verdict == "not tested").all() and ours.note.str.contains("not all in the run store").all()
    t = paper_tables.get("komisarenko2024", "table1_adaece")
    t = t[(t.dataset_key == "cifar10") & (t.method != "adafocal")]
    post = {s: t[t.setting.str.startswith(f"posthoc={s},")].set_index("method").value for s in ("ts", "fts")}
    below = int((post["fts"] < post["ts"]).sum())
    f = logs["komisarenko2024"].frame()
    paper_rows = f[f.evidence.str.startswith("paper")]
    assert paper_rows.verdict.iloc[0] == ("holds" if below == len(post["ts"]) else "fails")
    assert paper_rows.result.iloc[0].startswith(f"{below} of {len(post['ts'])} models hold")
    assert "equal-mass" in paper_rows.evidence.iloc[0]
    assert paper_rows.verdict.iloc[1] == "not tested" and "the book adds" in paper_rows.note.iloc[1]


def test_claims_without_runs_are_not_tested_and_every_paper_is_registered(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    sources = [s for s in rp.claims.SOURCES if s.chapter == "exp_leaderboard"]
    assert {s.paper for s in sources} == set(rp.papers.PAPERS)
    assert all(s.builder.startswith("replicate.experiments.leaderboard.report:claims_") for s in sources)
    for s in sources:
        f = rp.claims.build(s, "smoke").frame()
        ours = f[f.evidence.str.startswith("ours")]
        assert len(ours) == 2 and (ours.verdict == "not tested").all() and (f.section == lb.plan.SECTION).all()
        assert ours.note.str.contains("not all in the run store").all()
        assert set(f.claim) == {c.text for c in lb.claims.definitions(s.paper)}
    with pytest.raises(AttributeError):
        report.claims_nobody2030


def test_claims_on_runs_decide_within_the_noise_model():
    """Constructed runs whose answer is known: FLSD-53 far below its rivals holds, with the
    noise model's interval and the seeds behind it."""
    from replicate.claims.claim import claims_log

    runs = {(m, s): _confident(c, n=2000, seed=10 * s + i) for i, (m, c) in
            enumerate((("flsd53", 0.99), ("cross_entropy", 0.75), ("brier", 0.85), ("mmce", 0.8))) for s in (1, 2)}
    cal = report.calibrated(runs, {r.key: {"ts": (1.0, math.nan), "fts": (1.0, 0.05)} for r in runs.values()})
    ev = report.our_evidence(runs, cal, "test", n_boot=100)
    f = claims_log("mukhoti2020", "exp_leaderboard", lb.claims.definitions("mukhoti2020"), [ev], "s").frame()
    assert f.verdict.tolist() == ["holds", "holds"]
    assert "two-level bootstrap (100 resamples): the 2 seeds resampled" in f.noise[0]
    assert "seeds 1, 2 of FLSD-53" in f.evidence[0]
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
    fig = lb.figures.rank_figure({"x": r, "y": r}, {"a": "A"}, "cap")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["A", "b", "c"] and len(fig.axes) == 2
    v = pd.DataFrame({"a": [1.0, 2, 3], "b": [2.0, 2.5, 3.5], "c": [5.0, 6, 7]})
    fig2 = lb.figures.pairs_figure(views.paired_matrix(v), ["c", "b", "a"], caption_text="cap")
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["c", "b", "a"]
    fig3 = lb.figures.agreement_figure(pd.DataFrame({"label": ["p"], "tau": [0.5], "low": [0.1], "high": [0.9],
                                                     "n": [4]}))
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
        cal = report.calibrate_logits(*run.logits("test"), "none")
        assert report.score(cal, "ece") == pytest.approx(100 * run.metrics["test"]["ece"], abs=1e-3), key
        assert report.score(cal, "error") == pytest.approx(100 * run.metrics["test"]["error"], abs=1e-3), key


def test_the_agreement_and_rank_tables_are_headed_in_words():
    """Issue #32, item 1: tau, low/high/p, rank_low shown in words, whole ranks as integers."""
    from replicate.book import notebook_checks
    from replicate.experiments.leaderboard import views

    ranks = pd.DataFrame({"method": ["fl1", "cross_entropy"], "score": [51.015713, 49.3], "rank": [1.0, 2.0],
                          "rank_low": [1.0, 1.0], "rank_high": [2.0, 2.0]})
    html = views.words_table(ranks, views.RANK_WORDS, labels={"fl1": "FL-1"}).to_html()
    assert notebook_checks.table_problems(html) == [] and "rank 95 % low" in html and "FL-1" in html
    assert "51.02" in html and ">1<" in html
    tau = pd.DataFrame({"label": ["a, ECE"], "n": [5], "tau": [0.4], "low": [np.nan], "high": [0.9], "p": [0.0004],
                        "methods": ["x"], "note": [""]})
    html = views.words_table(tau, views.AGREEMENT_WORDS).to_html()
    assert notebook_checks.table_problems(html) == [] and "Kendall τ_b" in html and "0.0004" in html


def test_the_agreement_sentence_counts_what_the_table_prints():
    """Issue #32, item 5: the sentence under the agreement table is computed from the same rows
    and the same printed values: an interval printed as [0.00, ...] is not "above zero", a
    second reading of a printed AdaFocal is counted as such, and the rows named are those whose
    printed interval lies on one side of 0 (read back from the HTML the table renders)."""
    import re

    tau = pd.DataFrame({
        "paper": ["mukhoti2020", "ghosh2022", "ghosh2022", "tao2023", "liang2024", "komisarenko2024"],
        "column": ["pre-T ECE", "pre-T ECE", "pre-T ECE", "pre-T ECE", "pre-T ECE", "post-TS"],
        "reading": ["", "ours: Eq. 4", "ours: code", "", "", ""],
        "label": ["M, pre", "G, pre (Eq. 4)", "G, pre (code)", "T, pre", "L, pre", "K, post"],
        "n": [8, 6, 6, 7, 7, 2], "tau": [-0.21, 0.2, 0.2, 0.3, -0.49, np.nan],
        "low": [-0.43, 0.0667, 0.0667, 0.004, -0.49, np.nan], "high": [-0.07, 0.33, 0.33, 0.5, -0.003, np.nan],
        "p": [0.5] * 6, "methods": ["x"] * 6, "note": [""] * 5 + ["only 2 shared methods"]})
    got = views.agreement_summary(tau)
    shown = tau[["label", "n", "tau", "low", "high", "p", "methods", "note"]]
    html = views.words_table(shown, views.AGREEMENT_WORDS).to_html()
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]]
    printed = [(c[0], float(c[2]), float(c[3]), float(c[4])) for c in cells if c[2] != "–"]
    assert got["n"] == len(printed) == 5
    assert got["positive"] == sum(t > 0 for _, t, _, _ in printed) == 3
    assert got["above_rows"] == [lab for lab, _, lo, _ in printed if lo > 0] == ["G, pre (Eq. 4)", "G, pre (code)"]
    assert got["below_rows"] == [lab for lab, _, _, hi in printed if hi < 0] == ["M, pre"]   # -0.003 prints -0.00
    assert got["readings"] == 1 and got["range"] == "-0.49 to 0.30"
    s = got["sentence"]
    assert s.startswith("Of the 5 rows with a τ (comparisons with at least three shared methods, 1 of them a second")
    assert "3 have a positive τ" in s and "2 have a 95 % interval entirely above zero (G, pre (Eq. 4); G, pre (code))" in s
    assert s.endswith("1 entirely below (M, pre).")
    assert views.agreement_summary(tau.iloc[5:])["sentence"].startswith("No row has")
