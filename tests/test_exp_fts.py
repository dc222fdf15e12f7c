"""The FTS experiment chapter: plan validation, the plan equals the chapter's parameters cell,
every rule on constructed numbers (holds / fails / not tested) and on the paper's own Table 1
(verdicts derived by reading the printed numbers), the chapter's tables and the link
comparison on generated logits, and the committed cpu runs against their records."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import replicate as rp
from replicate import comparison as cmp
from replicate import experiments, runner, synthetic
from replicate.experiments.fts import claims as fts_claims
from replicate.experiments.fts import evidence as fts_evidence
from replicate.experiments.fts import links as fts_links
from replicate.experiments.fts import plan as fts
from replicate.experiments.fts import views as fts_tables


# ----------------------------------------------------------------------------- plan
def test_plan_parameters_equal_the_chapter_parameters_cell():
    import inspect

    defaults = runner.default_parameters(runner.read_notebook(runner.resolve_notebook("exp_fts")))
    assert list(defaults) == experiments.plan_parameters("exp_fts")
    params = inspect.signature(fts.plan).parameters
    for name, value in defaults.items():
        assert params[name].default == value, name


def test_plan_defaults_and_reuse_of_the_mukhoti_runs():
    smoke = fts.plan("smoke", device="cpu")
    assert [m.key for m in smoke.methods["image"]] == list(fts.SMOKE_METHODS) and smoke.seeds == (1, 2)
    cpu = fts.plan("cpu", device="cpu")
    assert [m.key for m in cpu.methods["image"]] == list(fts.METHOD_KEYS) and cpu.seeds == (1, 2, 3)
    mk = experiments.focal_loss.plan.plan("cpu", text_dataset=None, device="cpu")
    for key in ("cross_entropy", "fl1", "fl2", "fl3", "flsd53"):          # the same configuration, the same run
        assert cpu.image[(key, 1)].key == mk.image[(key, 1)].key
    assert cpu.references["cifar10"].model == "Resnet-50"


@pytest.mark.parametrize("kw, match", [
    ({"methods": ["brier"]}, "unknown method"), ({"grid": "fine"}, "grid must be one of"),
    ({"dataset": "20newsgroups"}, "dataset must be an image data set"), ({"seeds": [1, 1]}, "seeds must not repeat"),
    ({"profile": "laptop"}, "profile"), ({"seeds": [-1]}, "seeds must be"),
])
def test_bad_parameters_are_refused_before_training(kw, match):
    with pytest.raises(ValueError, match=match):
        fts.plan(**{"device": "cpu", **kw})


# ----------------------------------------------------------------------------- rules on constructed numbers
def frame(rows, block="B"):
    """rows: {(method, posthoc, select, metric): (mean, std, T)} -> the rules' layout."""
    return pd.DataFrame([dict(block=block, method=m, posthoc=p, select=s, metric=k, mean=v[0], std=v[1], T=v[2],
                              link="intended") for (m, p, s, k), v in rows.items()])


def base(ece_ts=(3.0, 2.0), ece_fts=(2.0, 1.5), nll_ts=(1.0, 1.0), nll_fts=(0.99, 1.0), acc=(50.0, 48.0),
         t=(1.2, 0.9), sd=0.01):
    rows = {}
    for i, m in enumerate(("fl1", "fl3")):
        for s in ("nll", "adaece"):
            rows[(m, "ts", s, "accuracy")] = rows[(m, "fts", s, "accuracy")] = (acc[i], sd, math.nan)
        rows[(m, "ts", "adaece", "adaece")] = (ece_ts[i], sd, t[i])
        rows[(m, "fts", "adaece", "adaece")] = (ece_fts[i], sd, t[i])
        rows[(m, "ts", "nll", "nll")] = (nll_ts[i], sd, t[i])
        rows[(m, "fts", "nll", "nll")] = (nll_fts[i], sd, t[i])
    return rows


RULES = {c.text: c.rule for c in fts_claims.rules()}


def rule(start):
    return next(r for t, r in RULES.items() if t.startswith(start))


def verdict(outcome):
    return rp.claims.as_outcome(outcome).verdict


def test_rule_fts_improves_ece():
    r = rule("FTS improves")
    assert verdict(r(frame(base()))[1]) == "holds"
    text, o = r(frame(base(ece_fts=(2.0, 2.5))))
    assert verdict(o) == "fails" and "FL-3 2.50 vs 2.00" in text
    assert verdict(r(frame({("fl1", "ts", "nll", "nll"): (1, 0, 1)}))[1]) == "not tested"


def test_rule_keeps_accuracy():
    r = rule("FTS keeps")
    assert verdict(r(frame(base()))[1]) == "holds"
    rows = base()
    rows[("fl3", "fts", "nll", "accuracy")] = (47.9, 0.01, math.nan)
    assert verdict(r(frame(rows))[1]) == "fails"


def test_rule_log_loss_marginal():
    r = rule("FTS only occasionally")
    assert verdict(r(frame(base()))[1]) == "holds"                               # no loss at all
    assert verdict(r(frame(base(nll_fts=(1.015, 1.0))))[1]) == "holds"          # one loss, 1.5 sd
    text, o = r(frame(base(nll_fts=(1.05, 1.0))))                               # 5 sd
    assert verdict(o) == "fails" and "beyond 2 sd" in text
    assert verdict(r(frame(base(nll_fts=(1.01, 1.01))))[1]) == "fails"         # both models lose: not occasional
    assert verdict(r(frame(base(nll_fts=(1.01, 1.0), sd=math.nan)))[1]) == "not tested"


def test_rule_t_decreases_and_tradeoff():
    r = rule("The optimal temperature decreases")
    assert verdict(r(frame(base()))[1]) == "holds"
    assert verdict(r(frame(base(t=(0.9, 1.2))))[1]) == "fails"
    tr = rule("Higher gamma_tr")
    assert verdict(tr(frame(base()))[1]) == "holds"                             # 48 < 50, ECE falls
    assert verdict(tr(frame(base(acc=(48.0, 50.0))))[1]) == "fails"
    two = pd.concat([frame(base(), "A"), frame(base(acc=(48.0, 50.0)), "C")])
    o = tr(two)[1]
    assert o.verdict == "holds with conditions" and "on A only" in o.note


def test_rule_selection_gains():
    rows = base()
    for m, by_nll in (("fl1", 4.0), ("fl3", 2.5)):
        for p in ("ts", "fts"):
            rows[(m, p, "nll", "adaece")] = (by_nll, 0.1, 1.0)
            rows[(m, p, "adaece", "nll")] = (1.02, 0.01, 1.0)
    gain = rule("Choosing the parameters by validation ECE")
    text, o = gain(frame(rows))
    assert verdict(o) == "holds" and "FTS: mean +45.0 %" in text                # (4-2)/4, (2.5-1.5)/2.5
    rows2 = {**rows, **{(m, p, "nll", "adaece"): (rows[(m, p, "adaece", "adaece")][0] * 1.05, 0.1, 1.0)
                        for m in ("fl1", "fl3") for p in ("ts", "fts")}}
    text, o = gain(frame(rows2))                                                 # a 4.8 % gain everywhere
    assert verdict(o) == "fails" and "FTS: mean +4.8 %" in text
    assert verdict(gain(frame(base()))[1]) == "not tested"
    nll = rule("For log-loss")
    assert verdict(nll(frame(rows))[1]) == "holds"                              # gains 2 % and 1 %
    rows3 = dict(rows)
    rows3[("fl1", "fts", "adaece", "nll")] = (0.98, 0.01, 1.0)                   # one model loses
    assert verdict(nll(frame(rows3))[1]) == "fails"


def test_rule_close_to_linear_and_t_near_one():
    g = [-0.5, 0.05, 0.5, 1.0, 5.0]
    lin = pd.DataFrame({"block": "B", "method": "fl1", "posthoc": "path", "select": "adaece", "metric": "T",
                        "gamma": g, "mean": [0.3 + 0.5 * x for x in g], "std": 0.0, "T": 0.0})
    r = rule("The optimal T is close to linear")
    assert verdict(r(pd.concat([frame(base()), lin]))[1]) == "depends on reading"   # T linear, 1/T not quite
    bent = lin.assign(mean=[1.0, 0.5, 1.5, 0.4, 1.2])
    assert verdict(r(pd.concat([frame(base()), bent]))[1]) == "fails"
    assert verdict(r(frame(base()))[1]) == "not tested"
    near = rule("The post-hoc temperature")
    assert verdict(near(frame(base(t=(1.1, 0.9))))[1]) == "holds"      # the book's one reading: |T - 1| <= 0.1
    assert verdict(near(frame(base()))[1]) == "fails"                  # T 1.2 (the old 0.25 let it pass)
    assert verdict(near(frame(base(t=(1.5, 0.9))))[1]) == "fails"


def test_rules_refuse_bad_thresholds():
    with pytest.raises(ValueError, match="min_r2 must be a number >= 0"):
        fts_claims.rules(min_r2=-1)


# ----------------------------------------------------------------------------- the paper's own Table 1
def test_rules_on_the_printed_table():
    """Expected verdicts by reading Table 1: FTS's ECE is below TS's in all 18 pairs; accuracy
    means are equal in every pair; FTS's log-loss is higher in 2 (CIFAR-100), 3 (CIFAR-10) and
    0 (TinyImageNet) of 6 models, each by at most 2 printed sd (AdaFocal CIFAR-10: 0.02, sd
    0.02); TS temperatures fall 1 > 3 > 7 everywhere; accuracy falls with gamma_tr on CIFAR
    only (TinyImageNet 50.6, 51.6, 50.9) and TS's ECE falls only on CIFAR-10 (CIFAR-100 1.66,
    1.28, 1.83); the selection comparisons and Fig. 8 are not printed; FL-1/FL-3 temperatures
    lie in 0.75..1.20, so not all within 0.1 of 1 (CIFAR-10 FL-3: 0.75)."""
    f = fts_evidence.paper_frame()
    got = {c.text: verdict(c.rule(f)[1]) for c in fts_claims.rules()}
    assert list(got.values()) == ["holds", "holds", "holds", "holds", "holds with conditions", "not tested",
                                  "not tested", "not tested", "fails"]
    o = rule("Higher gamma_tr")(f)[1]
    assert "after TS: holds with conditions (on CIFAR-10 only)" in o.note
    assert "after FTS: holds with conditions (on CIFAR-100, CIFAR-10 only)" in o.note


def test_paper_notes_show_every_recorded_note_of_table1_once():
    """The four specs' notes share an opening: it is shown once, each spec's rest on its own
    line, and every cell note of the specs appears; read against the stored specs."""
    notes = fts_tables.paper_notes()
    specs = [rp.paper_tables.get(fts.PAPER, t) for t in fts_tables.TABLE1_SPECS]
    opening = notes[notes.cell == "table"].note
    assert len(opening) == 1
    for df in specs:
        own = notes[notes.cell == f"table ({df.attrs['metric']})"].note
        assert len(own) == 1 and f"{opening.iloc[0]} {own.iloc[0]}" == df.attrs["notes"]
    cell_notes = {n for df in specs for n in df.note if n}
    assert cell_notes and cell_notes == set(notes[~notes.cell.str.startswith("table")].note)


def test_printed_link_evidence():
    pairs = pd.DataFrame({"select": ["nll", "nll", "adaece"], "at_grid_min": [True, False, False]})
    v = fts_links.printed_link(fts_evidence.paper_frame(), pairs, 0.05)
    assert v["at_min"] == 0 and v["n"] == 18 and v["T_range"] == (0.55, 3.70) and v["ours_at_min"] == 1
    assert v["max_gap"] == pytest.approx(0.02) and "did not come from the authors' link" in v["conclusion"]


def test_claims_without_runs_are_not_tested_and_registered(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    log = fts_claims.claims("smoke")
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == len(fts_claims.rules()) and (ours.verdict == "not tested").all()
    assert (f[f.evidence == fts_evidence.PAPER_LABEL].verdict == "holds").sum() == 4
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_fts")
    assert rp.claims.build(source, "smoke").summary() == log.summary()
    assert fts_tables.other_chapter_runs("smoke") == {}


# ----------------------------------------------------------------------------- chapter tables on generated logits
class FakeRun:
    def __init__(self, seed, scale=3.0, n=300, k=10):
        s = synthetic.LogitModel(n_classes=k, beta=1.5, scale=scale).sample(2 * n, rng=seed)
        self.key, self._z, self._y, self._n = f"fake-exp-{seed}-{scale}", s.logits, s.labels, n

    def logits(self, split):
        sl = slice(0, self._n) if split == "val" else slice(self._n, None)
        return self._z[sl], self._y[sl]


def test_selection_and_link_tables_on_generated_runs():
    runs = {("fl1", 1): FakeRun(1), ("fl1", 2): FakeRun(2), ("fl3", 1): FakeRun(3, scale=8.0)}
    methods = cmp.resolve_methods(["fl1", "fl3"])
    grid = [0.05, 0.1, 0.5, 1.0, 2.0]
    ours = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, grid=grid))
    t = fts_tables.selection_table(ours, methods)
    a = cmp.posthoc_value(ours, "fl1", "fts", "nll", "adaece")
    b = cmp.posthoc_value(ours, "fl1", "fts", "adaece", "adaece")
    assert t.loc["FL-1", ("FTS", "ECE %", "gain")] == f"{100 * (a - b) / a:+.1f} %"
    gains = fts_tables.selection_gains(ours, methods)
    assert gains["FTS"] == pytest.approx(np.mean([100 * (cmp.posthoc_value(ours, k, "fts", "nll", "adaece") -
                                                          cmp.posthoc_value(ours, k, "fts", "adaece", "adaece")) /
                                                   cmp.posthoc_value(ours, k, "fts", "nll", "adaece")
                                                   for k in ("fl1", "fl3")]))
    both = fts_links.link_frame(runs, grid)
    assert set(both["link"]) == {"intended", "authors"}
    lt = fts_links.link_table(both, methods)
    assert ("authors' link", "by log-loss", "rows rewritten") in lt.columns
    pairs = fts_links.pair_changes(runs, grid)
    assert len(pairs) == 2 * 3 * len(rp.posthoc.FTS_GAMMAS)
    assert (pairs.loc[pairs["at_grid_min"], "T_authors"] == 0.05).all()
    assert fts_links.pair_summary(pairs)["fits"].tolist() == [27, 27]
    z = np.array([[40.0, 0.0, -1.0], [0.3, 0.0, 0.1]])
    clamp = fts_links.clamp_effect({"a": z, "b": z[1:]}, gammas=[-0.5, 1.0])
    q = np.clip(rp.metrics.probs_from_logits(z), 1e-12, 1 - 1e-12)
    fp = (1 - q) ** -0.5 * (-0.5 * np.log(q) / (1 - q) - 1 / q)
    want = np.abs((1 / fp) / (1 / fp).sum(1, keepdims=True) - np.exp(rp.posthoc.fts.fts_log_probs(z, 1.0, -0.5)))
    assert clamp.loc[-0.5, "a"] == pytest.approx(want.max(), rel=1e-6) and clamp.loc[-0.5, "a"] > 1e-9
    assert clamp.loc[-0.5, "b"] < 1e-12                      # no probability outside [1e-12, 1 - 1e-12]


def test_adafocal_agreement_reads_the_recorded_gammas():
    class R:
        def __init__(self, z, gammas):
            self._z, self.history = z, [{"loss_state": {"gamma": g}} for g in gammas]

        def logits(self, split):
            return self._z, None

    z = np.arange(6.0).reshape(2, 3)
    runs = {("adafocal_code", 1): R(z, [[1.0, 2.0], [0.5, 3.0]]), ("adafocal_paper", 1): R(z, [[1.0, 2.0]]),
            ("adafocal_code", 2): R(z, [[1.0]]), ("adafocal_paper", 2): R(z + 1, [[-0.1]])}
    a = fts_tables.adafocal_agreement(runs).set_index("seed")
    assert a.loc[1, "identical test logits"] and not a.loc[2, "identical test logits"]
    assert a.loc[1, "smallest |gamma|"] == 0.5 and a.loc[1, "largest gamma"] == 3.0
    assert a.loc[2, "smallest |gamma|"] == pytest.approx(0.1)


def test_methods_table_caption_and_unreachable():
    methods = cmp.resolve_methods(["cross_entropy", "fl2", "adafocal_code"])
    t = fts_tables.methods_table(methods)
    assert t["paper row"].tolist() == ["CROSS-ENTROPY", "– (not in Table 1)", "ADAFOCAL"]
    assert "gamma 1" in t["note on the paper's row"].iloc[2] and t["note on the paper's row"].iloc[0] == ""
    ref = cmp.paper_reference("cifar10", "tiny_cnn", fts.PAPER)
    cap = fts_tables.table_caption(ref, "ours: x", "code")
    assert "0.05..5.00" in cap and "0.01..5 step 0.01" in cap and "closest row" in cap
    assert set(fts_tables.unreachable_frame()["data set"]) == {"cifar100", "tiny_imagenet"}
    assert set(fts.UNREACHABLE) <= set(rp.data.DATASETS)


# ----------------------------------------------------------------------------- committed runs
def test_committed_cpu_runs_agree_with_their_records():
    p = fts.plan("cpu", device="cpu")
    found = {k: rp.runs.find(c) for k, c in p.image.items()}
    if any(r is None or r.store != "results" for r in found.values()):
        pytest.skip("the chapter's cpu runs are not all in the results store")
    for (key, seed), run in found.items():
        f = cmp.posthoc_logits(*run.logits("val"), *run.logits("test"), posthoc_settings=("none", "ts"),
                               select=("ece",), metrics=("accuracy", "nll"), grid="ts").set_index(["posthoc", "metric"])
        assert f.loc[("ts", "nll"), "T"] == pytest.approx(run.temperature)
        assert f.loc[("none", "accuracy"), "value"] == pytest.approx(100 * (1 - run.metrics["test"]["error"]), abs=0.1)
        assert f.loc[("none", "nll"), "value"] == pytest.approx(run.metrics["test"]["nll"], abs=5e-3)


def test_confident_demo_shows_the_guard_where_rows_overflow():
    t, acc = fts_links.confident_demo(n_val=400, n_test=400, grid=[0.05, 1.0, 2.0, 4.0])
    assert list(t["link"]) == ["intended map"] * 2 + ["authors' link"] * 2 and 50 < acc < 100
    assert (t.loc[t["link"] == "intended map", "test rows rewritten"] == 0).all()
    intended = t[t["link"] == "intended map"]
    assert (intended["accuracy %"] == acc).all()                 # the intended map keeps the accuracy
    # the authors' log-loss choice: T = 0.05, most rows overflow and the accuracy collapses
    nll = t[(t["link"] == "authors' link") & (t["chosen by"] == "log-loss")].iloc[0]
    assert nll["T"] == 0.05 and nll["test rows rewritten"] > 200 and nll["accuracy %"] < 50


def test_glued_texts_come_from_the_numbers():
    class R:
        def __init__(self, w):
            self.wall_time = w

    t = fts_tables.training_texts({("a", 1): R(10.0), ("a", 2): R(30.0), ("b", 1): R(20.0)})
    assert t == {"n_runs": "3", "train_minutes": "1.0", "run_seconds": "median 20 s, 10 to 30 s"}
    paper = cmp.paper_posthoc(dataset="CIFAR-10")
    h = fts_tables.headline_texts(paper, paper)
    assert (h["paper_ce_ts_ece"], h["paper_ce_fts_ece"], h["paper_ce_fts_nll"]) == ("1.03", "0.71", "0.170")
    demo = pd.DataFrame({"link": ["intended map", "authors' link", "authors' link"],
                         "chosen by": ["log-loss", "log-loss", "equal-mass ECE"], "gamma": [0.05, -0.5, 5.0],
                         "T": [1.6, 0.05, 5.0], "accuracy %": [92.9, 12.4, 92.9]})
    assert fts_links.demo_texts(demo, 92.94) == {"demo_acc": "92.9", "demo_nll_T": "0.05", "demo_nll_acc": "12.4",
                                                 "demo_ece_choice": "5, 5.00"}
    pairs = pd.DataFrame({"select": ["nll", "adaece"], "at_grid_min": [False, False], "differs": [True, False]})
    lt = fts_links.link_texts(fts_evidence.paper_frame(), pairs, "code")
    assert lt["ours_at_min"] == "0 of 1" and lt["pairs_differ"] == "1 of 2" and "18 FTS" in lt["printed_link"]
    assert fts_tables.adafocal_text(pd.DataFrame({"identical test logits": [True, False]})).startswith("trained diff")
