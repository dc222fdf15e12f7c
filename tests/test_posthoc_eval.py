"""The shared post-hoc evaluation (none / TS / FTS of any run) against a brute-force search
written out here, the paper's printed Table 1 in our layout, the "+ FTS" column and the
FTS figures on constructed numbers."""
from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import special

from replicate import comparison as cmp
from replicate import metrics, synthetic
from replicate.experiments.fts import figures as posthoc_figures

matplotlib.use("Agg")


class FakeRun:
    """What the evaluation reads from a run: a key and validation/test logits."""

    def __init__(self, seed, scale=2.0, n=300, k=6):
        s = synthetic.LogitModel(n_classes=k, beta=1.6, scale=scale).sample(2 * n, rng=seed)
        self.key, self._z, self._y, self._n = f"fake{seed}-{scale}", s.logits, s.labels, n

    def logits(self, split):
        sl = slice(0, self._n) if split == "val" else slice(self._n, None)
        return self._z[sl], self._y[sl]


def _eq1(q, g):
    fp = (1 - q) ** g * (g * np.log(q) / (1 - q) - 1 / q)
    w = 1 / fp
    return w / w.sum(1, keepdims=True)


def _brute(run, grid, gammas, sel):
    """First minimum over (gamma, T) of the validation score, with Eq. (1) typed out; test metrics."""
    (zv, yv), (zt, yt) = run.logits("val"), run.logits("test")

    def score(p, y):
        return -np.mean(np.log(p[np.arange(len(y)), y])) if sel == "nll" else metrics.adaptive_ece(p, y)

    best, arg = np.inf, None
    for g in gammas:
        for t in grid:
            s = score(_eq1(special.softmax(zv / t, axis=1), g) if g is not None else special.softmax(zv / t, axis=1),
                      yv)
            if arg is None or s < best - 1e-12 * max(1, abs(best)):
                best, arg = s, (g, t)
    g, t = arg
    p = _eq1(special.softmax(zt / t, axis=1), g) if g is not None else special.softmax(zt / t, axis=1)
    return g, t, {"accuracy": 100 * np.mean(p.argmax(1) == yt), "nll": -np.mean(np.log(p[np.arange(len(yt)), yt])),
                  "adaece": 100 * metrics.adaptive_ece(p, yt)}


@pytest.mark.parametrize("sel", ["nll", "adaece"])
def test_posthoc_logits_equal_a_brute_force_search(sel):
    run = FakeRun(1)
    grid, gammas = np.round(np.arange(8, 26) * 0.1, 10), [-0.25, 0.5, 1.0]
    f = cmp.posthoc_logits(*run.logits("val"), *run.logits("test"), select=(sel,), grid=grid, gammas=gammas)
    for setting, gs in (("ts", [None]), ("fts", gammas)):
        g, t, want = _brute(run, grid, gs, sel)
        got = f[(f["posthoc"] == setting) & (f["select"] == sel)].set_index("metric")
        assert got["T"].iloc[0] == pytest.approx(t)
        assert (math.isnan(got["gamma"].iloc[0]) if g is None else got["gamma"].iloc[0] == g)
        for m, v in want.items():
            assert got.loc[m, "value"] == pytest.approx(v, rel=1e-8, abs=1e-10), (setting, m)
    none = f[f["posthoc"] == "none"].set_index("metric")
    zt, yt = run.logits("test")
    assert none.loc["nll", "value"] == pytest.approx(-np.mean(special.log_softmax(zt, 1)[np.arange(len(yt)), yt]))


def test_evaluate_summarise_and_search_cache():
    runs = {("a", 1): FakeRun(1), ("a", 2): FakeRun(2), ("b", 1): FakeRun(3, scale=4.0)}
    grid = np.round(np.arange(1, 13) * 0.25, 10)
    f = cmp.evaluate_posthoc(runs, grid=grid)
    assert set(f["method"]) == {"a", "b"} and set(f["posthoc"]) == {"none", "ts", "fts"}
    s = cmp.summarise_posthoc(f)
    r = f[(f["method"] == "a") & (f["posthoc"] == "fts") & (f["select"] == "nll") & (f["metric"] == "nll")]
    row = s[(s["method"] == "a") & (s["posthoc"] == "fts") & (s["select"] == "nll") & (s["metric"] == "nll")].iloc[0]
    assert row["mean"] == pytest.approx(r["value"].mean()) and row["std"] == pytest.approx(r["value"].std(ddof=1))
    assert row["T"] == pytest.approx(r["T"].mean()) and row["n_seeds"] == 2
    assert row["gamma"] == min(r["gamma"].mode())
    # Fig. 8 paths come from the same searches: the overall FTS choice is one of them
    paths = cmp.optimal_temperatures(runs, "nll", grid=grid)
    one = paths[(paths["method"] == "a") & (paths["seed"] == 1)]
    chosen = f[(f["method"] == "a") & (f["seed"] == 1) & (f["posthoc"] == "fts") & (f["select"] == "nll")].iloc[0]
    assert chosen["T"] == one.loc[one["score"].idxmin(), "T"]
    with pytest.raises(ValueError, match="grid must be one of"):
        cmp.evaluate_posthoc(runs, grid="fine")
    with pytest.raises(ValueError, match="select must name"):
        cmp.evaluate_posthoc(runs, select=("brier",))
    with pytest.raises(ValueError, match="posthoc_settings must name"):
        cmp.evaluate_posthoc(runs, posthoc_settings=("vector",))


def test_runs_with_identical_validation_logits_are_fitted_once(monkeypatch):
    """The FTS search is keyed by the validation logits and labels, not the run's key: two runs
    whose validation sets are identical (AdaFocal's two update rules at cpu) share one search,
    also when one hands its logits over as float32 holding the same numbers."""
    from replicate import posthoc
    from replicate.comparison.evaluation import posthoc as ev

    calls = []
    real = posthoc.fit_focal_temperatures
    monkeypatch.setattr(posthoc, "fit_focal_temperatures", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(ev, "_SEARCHES", {})
    one, other = FakeRun(11), FakeRun(11)
    other.key = "another run, the same logits"
    other._z = other._z.astype(np.float32).astype(np.float64)        # exactly representable below
    one._z = other._z.copy()
    grid = np.round(np.arange(1, 9) * 0.5, 10)
    a = cmp.evaluate_posthoc({("x", 1): one}, grid=grid)
    b = cmp.evaluate_posthoc({("x", 1): other}, grid=grid)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(a, b)
    z32 = FakeRun(11)
    z32.key, z32._z = "float32 copy", one._z.astype(np.float32)
    cmp.optimal_temperatures({("x", 1): z32}, "nll", grid=grid)
    assert len(calls) == 1
    different = FakeRun(12)
    cmp.evaluate_posthoc({("x", 1): different}, grid=grid)
    assert len(calls) == 2


def test_authors_link_rows_count_the_rewritten_test_rows():
    runs = {("a", 1): FakeRun(1, scale=6.0)}
    f = cmp.evaluate_posthoc(runs, posthoc_settings=("fts",), link="authors", grid=[0.05, 0.1])
    assert (f["link"] == "authors").all() and (f["overflowed"] > 0).any()


def test_paper_posthoc_holds_the_printed_cells():
    p = cmp.paper_posthoc(dataset="CIFAR-10")
    def one(method, setting, sel, metric, col="mean"):
        r = p[(p["method"] == method) & (p["posthoc"] == setting) & (p["select"] == sel) & (p["metric"] == metric)]
        assert len(r) == 1
        return r[col].iloc[0]
    assert one("cross_entropy", "fts", "nll", "nll") == 0.17 and one("cross_entropy", "fts", "nll", "nll", "T") == 2.20
    assert one("cross_entropy", "fts", "adaece", "adaece") == 0.71 and one("cross_entropy", "fts", "adaece",
                                                                             "adaece", "std") == 0.16
    assert one("adafocal", "fts", "nll", "nll", "gamma") == 5.0
    assert one("fl7", "ts", "nll", "accuracy") == one("fl7", "ts", "adaece", "accuracy") == 93.1
    assert "gamma 1" in one("adafocal", "ts", "nll", "nll", "note")
    assert set(cmp.paper_posthoc()["dataset"]) == {"CIFAR-100", "CIFAR-10", "TinyImageNet"}
    with pytest.raises(ValueError, match="prints no post-hoc"):
        cmp.paper_posthoc("mukhoti2020")


def test_posthoc_table_and_fts_column_layout():
    runs = {("cross_entropy", 1): FakeRun(1), ("cross_entropy", 2): FakeRun(2)}
    grid = [0.5, 1.0, 1.5, 2.0]
    ours = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, grid=grid))
    methods = cmp.resolve_methods(["cross_entropy", "adafocal_code"])
    t = cmp.posthoc_table(ours, cmp.paper_posthoc(dataset="CIFAR-10"), methods)
    assert list(t.index) == [("Cross Entropy", "TS"), ("Cross Entropy", "+ FTS"), ("AdaFocal (authors' code)", "TS"),
                             ("AdaFocal (authors' code)", "+ FTS")]
    assert t.loc[("Cross Entropy", "+ FTS"), ("Log-loss", "paper")] == "0.17 ± 0.01 (2.20)"
    assert t.loc[("AdaFocal (authors' code)", "TS"), ("ECE (equal-mass)", "paper")] == "1.80 ± 0.17 (1.63)"
    assert t.loc[("AdaFocal (authors' code)", "TS"), ("ECE (equal-mass)", "ours")] == "–"
    m = ours[(ours["method"] == "cross_entropy") & (ours["posthoc"] == "fts") & (ours["select"] == "nll")
             & (ours["metric"] == "nll")].iloc[0]
    assert t.loc[("Cross Entropy", "+ FTS"), ("Log-loss", "ours")] == f"{m['mean']:.2f} ± {m['std']:.2f} ({m['T']:.2f})"
    col = cmp.fts_column(runs, methods[:1], metric="ece", select="ece", grid=grid)
    assert list(col.columns) == ["before", "TS", "+ FTS", "FTS − TS"] and list(col.index) == ["Cross Entropy"]
    assert "γ_ev" in col.iloc[0]["+ FTS"]
    assert "0.05..5.00" in cmp.fts_caption("ece", "ece", "code", "ours: x")
    with pytest.raises(ValueError, match="metric must be one of"):
        cmp.fts_column(runs, methods, metric="brier")


def test_posthoc_tips_give_the_t_interval_over_the_seeds():
    from scipy import stats

    runs = {("cross_entropy", s): FakeRun(s) for s in (1, 2, 3)}
    grid = [0.5, 1.0, 1.5, 2.0]
    per_seed = cmp.evaluate_posthoc(runs, grid=grid)
    ours = cmp.summarise_posthoc(per_seed)
    methods = cmp.resolve_methods(["cross_entropy", "adafocal_code"])
    table = cmp.posthoc_table(ours, None, methods)
    tips = cmp.posthoc_tips(table, ours, methods)
    assert tips.shape == table.shape and (tips.index == table.index).all()
    v = per_seed[(per_seed["method"] == "cross_entropy") & (per_seed["posthoc"] == "fts")
                 & (per_seed["select"] == "nll") & (per_seed["metric"] == "nll")]["value"].to_numpy()
    low, high = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))   # independent oracle
    assert tips.loc[("Cross Entropy", "+ FTS"), ("Log-loss", "ours")] == \
        f"[{low:.2f}, {high:.2f}] (95 % interval over 3 seeds)"
    assert tips.loc[("Cross Entropy", "TS"), ("Log-loss", "paper")] == ""        # the paper's cells: none
    assert tips.loc[("AdaFocal (authors' code)", "TS"), ("Log-loss", "ours")] == ""   # no runs: none
    one = cmp.summarise_posthoc(cmp.evaluate_posthoc({("cross_entropy", 1): FakeRun(1)}, grid=grid))
    assert (cmp.posthoc_tips(cmp.posthoc_table(one, None, methods), one, methods) == "").all().all()


def test_posthoc_tips_cut_the_t_interval_of_a_non_negative_metric_at_zero():
    """Issue #32, item 5: a log-loss near 0 with a wide spread over three seeds: the t interval
    would reach below 0; the tip shows it cut at 0 and says so, its upper end unchanged."""
    from scipy import stats

    runs = {("cross_entropy", s): FakeRun(s) for s in (1, 2, 3)}
    ours = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, grid=[0.5, 1.0, 1.5, 2.0])).copy()
    methods = cmp.resolve_methods(["cross_entropy"])
    row = (ours["method"] == "cross_entropy") & (ours["posthoc"] == "fts") & (ours["select"] == "nll") \
        & (ours["metric"] == "nll")
    assert row.sum() == 1
    ours.loc[row, ["mean", "std"]] = [0.05, 0.4]
    tips = cmp.posthoc_tips(cmp.posthoc_table(ours, None, methods), ours, methods)
    low, high = stats.t.interval(0.95, 2, loc=0.05, scale=0.4 / np.sqrt(3))
    assert low < 0
    assert tips.loc[("Cross Entropy", "+ FTS"), ("Log-loss", "ours")] == \
        f"[0.00, {high:.2f}] (95 % interval over 3 seeds; cut at 0, the metric's range)"


def test_figure8_lines_recover_a_straight_line_and_the_figures_draw():
    g = np.array([-0.5, 0.05, 0.5, 1.0, 5.0])
    paths = pd.DataFrame([(m, s, x, a + b * x + 0.01 * s) for m, a, b in (("fl1", 1.0, 0.3), ("fl3", 0.8, 0.2))
                          for s in (1, 2) for x in g], columns=["method", "seed", "gamma", "T"])
    lines = posthoc_figures.fig8_lines(paths)
    fl1 = lines[lines["method"] == "fl1"]
    assert fl1["slope"].iloc[0] == pytest.approx(0.3) and fl1["r2"].iloc[0] == pytest.approx(1.0)
    assert fl1["intercept"].iloc[0] == pytest.approx(1.015)
    inv = posthoc_figures.fig8_lines(paths, "inverse_T")
    assert inv["r2"].lt(1.0).all()
    assert posthoc_figures.figure8(paths, {"fl1": "FL-1"}, "profile: test") is not None
    search = pd.DataFrame({"gamma": 1.0, "T": [0.05, 0.5, 1.0], "nll": [0.1, 1.2, 1.0], "adaece": [0.3, 0.05, 0.1],
                           "overflowed": [10, 0, 0]})
    assert posthoc_figures.link_curves({"authors": search, "intended": search.assign(overflowed=0)}, 1.0) is not None
    with pytest.raises(ValueError, match="lacks column"):
        posthoc_figures.fig8_lines(paths.drop(columns="T"))
    with pytest.raises(ValueError, match="has no gamma"):
        posthoc_figures.link_curves({"x": search}, 2.0)
