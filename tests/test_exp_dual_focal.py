"""The Dual Focal Loss experiment chapter: its plan, the RBS metric, the long-form tables, the
figures' numbers (plain and on every resample), the claims and their tests (on constructed
evidence, and on the paper's own printed tables counted here independently), our side's
evidence and the committed cpu runs."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest
import torch

import replicate as rp
from replicate import comparison as cmp
from replicate.comparison import layouts as lay
from replicate.claims.claim import claims_log
from replicate.claims.evidence import Cell, Exact
from replicate.experiments.dual_focal import claims as cl
from replicate.experiments.dual_focal import figures as ev
from replicate.experiments.dual_focal import plan as exp
from replicate.experiments.dual_focal import report as rep
from replicate.experiments.dual_focal import views as vw


# ----------------------------------------------------------------------------- plan
def test_plan_parameters_are_the_chapters_parameters_cell():
    import replicate.runner as runner

    cell = runner.default_parameters(runner.read_notebook(runner.resolve_notebook("exp_dual_focal")))
    sig = inspect.signature(exp.plan).parameters
    assert list(sig) == list(cell)
    assert {k: v.default for k, v in sig.items()} == cell


@pytest.mark.parametrize("kw, match", [
    ({"profile": "laptop"}, "unknown profile 'laptop'; allowed profiles: smoke"),
    ({"seeds": [1, 1]}, "seeds must not repeat"),
    ({"seeds": []}, "seeds must be a non-empty list"),
    ({"methods": ["fl3"]}, "unknown method.*allowed methods: cross_entropy, brier"),
    ({"ablations": "yes"}, "ablations must be True or False"),
    ({"dataset": "20newsgroups"}, "dataset must be an image data set"),
    ({"text_dataset": "cifar10"}, "text_dataset must be one of 20newsgroups or None"),
    ({"device": "tpu"}, "device must be 'auto', 'cpu'"),
])
def test_bad_parameters_are_refused_before_anything_trains(kw, match, monkeypatch):
    monkeypatch.setattr(rp.runs, "get_or_train", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(ValueError, match=match):
        exp.plan(**{"profile": "smoke", **kw})


def test_cpu_plan_groups_and_the_runs_it_shares_with_the_mukhoti_chapter():
    p = exp.plan("cpu", device="cpu")
    assert p.seeds == (1, 2, 3) and list(p.groups) == ["image", "history", "table3", "dual_logit", "gamma", "text"]
    assert len(p.image) == 7 * 3 and all(s == 1 for g in ("history", "table3", "dual_logit", "gamma", "text")
                                         for _, s in p.group(g))
    muk = rp.experiments.focal_loss.plan.plan("cpu", device="cpu")
    for k in ("cross_entropy", "brier", "mmce", "ls005", "flsd53"):       # the same configuration, the same run
        assert p.image[(k, 1)].key == muk.image[(k, 1)].key
        assert p.text[(k, 1)].key == muk.text[(k, 1)].key
    dfl = p.image[("dual_focal", 1)]
    assert dfl.resolve()["loss_params"]["gamma"] == 5.0                 # default for a network the paper did not train
    assert p.group("gamma")[("dfl_gamma5", 1)].key == dfl.key           # Table 13's gamma = 5 row is DFL itself
    assert p.group("dual_logit")[("flsd53", 1)].key == p.image[("flsd53", 1)].key
    assert p.group("history")[("dual_focal", 1)].resolve()["train"]["eval_every_epoch"]
    assert not dfl.resolve()["train"]["eval_every_epoch"]
    assert len(p.configs()) == 7 * 3 + 2 + 2 + 12 + 4 + 7
    small = exp.plan("smoke", ablations=False, text_dataset=None, device="cpu")
    assert list(small.groups) == ["image", "history"] and small.seeds == (1,) and len(small.image) == 3


def test_gamma_rows_keep_their_gamma_on_the_papers_networks():
    for m in exp.gamma_methods():
        g = float(m.key.replace("dfl_gamma", ""))
        assert m.params("image", "cifar10", "resnet110")["gamma"] == g      # not the network's 4.5


def _dual_numpy(p, y, variant, k=1, offset=0.0):
    """Table 4's dual terms written out with sorted lists (an independent computation)."""
    out = []
    for row, t in zip(p, y):
        below = sorted((v for v in row if v < row[t]), reverse=True)
        kk = len(row) if k == "all" else k
        if variant == "fixed":
            out.append(offset)
        elif variant in ("largest", "kth"):
            out.append(below[kk - 1] if len(below) >= kk else 0.0)
        elif variant == "mean_topk":
            top = below[:kk]
            out.append(sum(top) / len(top) if top else 0.0)
        elif variant in ("sum_topk", "batch_mean_sum_topk"):
            out.append(sum(below[:kk]))
    out = np.array(out)
    return np.full_like(out, out.mean()) if variant == "batch_mean_sum_topk" else out


def test_every_table4_row_is_a_loss_variant_that_computes_its_dual_term():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(64, 10, generator=g, dtype=torch.float64) * 3
    y = torch.randint(0, 10, (64,), generator=g)
    p = torch.softmax(z, 1)
    rows = exp.dual_logit_methods()
    assert len(rows) == len(exp.DUAL_LOGIT_ROWS) == 12
    assert {s for _, s, _ in rows} | {exp.FL_ROW, exp.DFL_ROW} == set(exp.TABLE4_SETTINGS)
    paper_settings = set(rp.paper_tables.get("tao2023", "table4").setting)
    assert set(exp.TABLE4_SETTINGS) == paper_settings                     # every printed row is planned
    for m, _, _ in rows:
        loss = rp.losses.get_loss(m.loss, **m.params("image", "cifar10", "tiny_cnn"))
        assert loss.gamma == 5.0
        got = rp.losses.dual_term(p, p[torch.arange(64), y], loss.variant, loss.k, loss.offset).numpy()
        want = _dual_numpy(p.numpy(), y.numpy(), loss.variant, loss.k, loss.offset)
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=m.key)


# ----------------------------------------------------------------------------- RBS
def test_root_brier_score_against_an_independent_computation():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 7)) * 2
    y = rng.integers(0, 7, 500)
    onehot = torch.nn.functional.one_hot(torch.as_tensor(y), 7).double()
    want = math.sqrt(torch.nn.functional.mse_loss(torch.softmax(torch.as_tensor(z), 1), onehot,
                                                  reduction="sum").item() / 500)
    assert rp.metrics.root_brier_score(z, y, is_probs=False) == pytest.approx(want, rel=1e-12)
    assert rp.metrics.root_brier_score(np.eye(3), [0, 1, 2]) == 0.0


def test_rbs_lower_bound_holds_and_is_attained():
    rng = np.random.default_rng(1)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        p = rng.dirichlet(np.full(k, 0.3), size=int(rng.integers(1, 30)))
        y = rng.integers(0, k, len(p))
        err = rp.metrics.error_rate(p, y)
        assert rp.metrics.root_brier_score(p, y) >= rp.metrics.root_brier_lower_bound(err) - 1e-12
    half = np.array([[0.5, 0.5, 0.0]])                                    # p_y = p_c = 1/2, argmax picks class 0
    assert rp.metrics.root_brier_score(half, [1]) == pytest.approx(rp.metrics.root_brier_lower_bound(1.0))
    with pytest.raises(ValueError, match="error must be a fraction"):
        rp.metrics.root_brier_lower_bound(5.0)


def test_table11_prints_values_below_the_rbs_of_table2s_error_rates():
    b = vw.rbs_bounds()
    assert len(b) == 48 and b.fits_brier.all()
    c10 = b[b.row.str.startswith("CIFAR-10,")]
    assert len(c10) == 24 and not c10.fits_rbs.any()
    r = b[(b.row == "CIFAR-10, ResNet-50") & (b.method == "cross_entropy")].iloc[0]
    assert r.printed == 0.0922 and r.rbs_at_least == pytest.approx(math.sqrt(0.0495 / 2))


# ----------------------------------------------------------------------------- long form
def test_paper_long_holds_every_printed_cell_once():
    long = lay.paper_long("tao2023", ["table1", "table12"])
    t1 = rp.paper_tables.get("tao2023", "table1")
    assert len(long) == len(t1) + 28
    t12 = long[long.table == "table12"]
    assert t12.se.notna().all() and t12.sd.isna().all()                  # Table 12's ± is a standard error
    p = lay.pivot(long, "table1", "ece", True, col="T")
    assert p.loc["CIFAR-10, ResNet-50", "cross_entropy"] == 2.5 and p.shape == (10, 7)


def _summary(values: dict, metric="ece", scaled=False) -> pd.DataFrame:
    """A summarise() frame from ``{method: [values per seed]}``."""
    raw = pd.DataFrame([{"method": m, "seed": s, "metric": metric, "temperature_scaled": scaled, "value": v,
                         "T": 1.0 if scaled else math.nan} for m, vs in values.items() for s, v in enumerate(vs)])
    return cmp.summarise(raw)


def test_summary_long_standard_error_and_the_side_by_side_layouts():
    long = lay.summary_long(_summary({"dual_focal": [1.0, 2.0, 3.0], "flsd53": [4.0, 4.0, 4.0]}), "table12",
                            "ours: cifar10, tiny_cnn", "cifar10", "tiny_cnn")
    r = long.set_index("method").loc["dual_focal"]
    assert r["mean"] == 2.0 and r["sd"] == 1.0 and r["se"] == pytest.approx(1 / math.sqrt(3)) and r["n"] == 3
    paper = lay.paper_long("tao2023", "table12")
    t = lay.spread_side_by_side(long, paper, "table12", [("ece", False, "ECE")], {"dual_focal": "DFL"})
    assert t.loc["DFL", ("ECE", "paper")] == "0.49 ± 0.05" and t.loc["DFL", ("ECE", "ours")] == "2.00 ± 0.58"
    m = lay.methods_side_by_side(long.assign(table="table1"), lay.paper_long("tao2023", "table1"), "table1", ["ece"],
                                 {"dual_focal": "DFL"}, "CIFAR-10, ResNet-50")
    assert m.loc["DFL", ("ECE (%)", "paper")] == "0.46" and m.loc["DFL", ("ECE (%)", "ours − paper")] == "1.54"
    r = lay.methods_side_by_side(long.assign(table="table1", method="mine"), lay.paper_long("tao2023", "table1"),
                                 "table1", ["ece"], {"mine": "DFL"}, "CIFAR-10, ResNet-50",
                                 rename={"mine": "dual_focal"})
    assert r.loc["DFL", ("ECE (%)", "paper")] == "0.46" and r.loc["DFL", ("ECE (%)", "ours")] == "2.00 ± 1.00"
    s = lay.settings_side_by_side(None, lay.paper_long("tao2023", "table13"), "table13", [("ece", True)],
                                  ["gamma=2"], {"dual_focal": "ours"}, "dual_focal", digits=4)
    cell = s.loc["gamma=2"]
    assert cell[("ECE (%) post T", "paper")] == "0.8553" and cell[("ECE (%) post T", "ours")] == "–"


def test_table_notes_keep_the_table_notes_and_the_chosen_rows():
    n = lay.table_notes("tao2023", ["table1", "table7"], rows=["CIFAR-10, ResNet-50"])
    assert set(n.table) == {"Table 1", "Table 7"} and (n.cell == "table").sum() == 2
    assert n.note.str.contains("38.65").any() and not n.note.str.contains("20 Newsgroups").iloc[1:].any()


# ----------------------------------------------------------------------------- figures' numbers
class FakeRun:
    """What the figure functions and the noise model read from a Run: test/val/OOD logits,
    history, temperature, key."""

    def __init__(self, z, y, history=(), ood=None, T=1.0, key="fake", val=None):
        self.z, self.y, self.ood, self.temperature, self.key = z, y, ood, T, key
        self.history = [{"epoch": h["epoch"], "lr": h["lr"], "test": {"ece": h["ece"]}} for h in history]
        self.val = val if val is not None else (z, y)

    @property
    def ood_sets(self):
        return {"cifar10c_gaussian5": "generated"} if self.ood is not None else {}

    def logits(self, split="test"):
        if split == "val":
            return self.val
        return (self.ood if split.startswith("ood:") else self.z), self.y

    def history_frame(self):
        return pd.DataFrame([{"epoch": h["epoch"], "lr": h["lr"], "test/ece": h["test"]["ece"]} for h in self.history])


def test_ema_and_learning_rate_phases():
    np.testing.assert_allclose(ev.ema([4.0, 0.0, 0.0, 8.0]), [4.0, 2.0, 1.0, 4.5])
    hist = [{"epoch": e, "lr": lr, "ece": 0.01 * e} for e, lr in zip(range(1, 7), [0.1, 0.1, 0.01, 0.01, 0.001, 0.001])]
    c = ev.ece_over_epochs({"a": FakeRun(None, None, hist)})
    assert c.ece.tolist() == pytest.approx([1, 2, 3, 4, 5, 6]) and ev.lr_phases(c).tolist() == [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError, match="smoothing"):
        ev.ema([1.0], 1.0)


def test_dual_probabilities_match_the_losses_dual_term_and_box_stats_match_matplotlib():
    import matplotlib.cbook

    rng = np.random.default_rng(2)
    z, y = rng.normal(size=(300, 10)) * 3, rng.integers(0, 10, 300)
    p = torch.softmax(torch.as_tensor(z), 1)
    want = rp.losses.dual_term(p, p[torch.arange(300), torch.as_tensor(y)]).numpy()
    np.testing.assert_allclose(ev.dual_probabilities(z, y), want, atol=1e-12)
    b = ev.box_stats(pd.DataFrame({"method": "a", "q": z[:, 0]}), "q").iloc[0]
    mb = matplotlib.cbook.boxplot_stats(z[:, 0])[0]
    assert (b["median"], b["q1"], b["q3"], b["whisker_low"], b["whisker_high"]) == pytest.approx(
        (mb["med"], mb["q1"], mb["q3"], mb["whislo"], mb["whishi"]))


def test_reliability_interval_and_roc_frames_agree_with_independent_computations():
    rng = np.random.default_rng(3)
    z, y = rng.normal(size=(400, 10)) * 2, rng.integers(0, 10, 400)
    r = FakeRun(z, y, ood=rng.normal(size=(400, 10)) * 0.5, T=2.0)
    rel = ev.reliability_frame({"a": r})
    assert (rel["count"] / 400 * rel["gap"].abs()).sum() == pytest.approx(rp.metrics.ece(z, y, is_probs=False))
    roc = ev.roc_frame({"a": r})
    for scaled, T in ((False, 1.0), (True, 2.0)):
        want = rp.metrics.ood_auroc(rp.metrics.probs_from_logits(z, T), rp.metrics.probs_from_logits(r.ood, T))
        assert roc[roc.temperature_scaled == scaled].auroc.iloc[0] == pytest.approx(100 * want)
    iv = {"ece": {("a", False): {"mean": 2.0, "low": 1.0, "high": 3.5, "how": "x"},
                  ("a", True): {"mean": 9.0, "low": 8.0, "high": 9.5, "how": "x"}}}
    i = ev.interval_frame(iv)                          # Fig. 3: the noise model's pre-T intervals
    assert i.to_dict("records") == [{"method": "a", "metric": "ece", "mean": 2.0, "low": 1.0, "high": 3.5}]




def test_figure_numbers_on_every_resample_equal_the_plain_loop_on_fixed_draws():
    """quantiles, whisker_range and bin_gaps (all resamples at once) against np.percentile,
    box_stats and reliability_bins on each resample's examples gathered by index."""
    from replicate.comparison.noise import resampling

    rng = np.random.default_rng(4)
    z, y = rng.normal(size=(300, 10)) * 2, rng.integers(0, 10, 300)
    x = ev.dual_probabilities(z, y)
    w = resampling.weights(300, 40, 5, "test")
    q = ev.quantiles(x, w, (0.25, 0.5, 0.75))
    r = ev.whisker_range(x, w)
    p = rp.metrics.probs_from_logits(z)
    gaps, counts = ev.bin_gaps(p, y, w)
    assert counts.tolist() == rp.metrics.reliability_bins(p, y).count.astype(int).tolist()
    for b in range(0, 40, 7):
        i = resampling.indices(w[b])
        assert q[b] == pytest.approx(np.percentile(x[i], [25, 50, 75]))
        box = ev.box_stats(pd.DataFrame({"method": "a", "q": x[i]}), "q").iloc[0]
        assert r[b] == pytest.approx(box["whisker_high"] - box["whisker_low"])
        want = np.abs(rp.metrics.reliability_bins(p[i], y[i]).gap)
        np.testing.assert_allclose(gaps[b], want, equal_nan=True, atol=1e-12)


# ----------------------------------------------------------------------------- the claims on constructed evidence
def _exact(cells, named=None, absent=None):
    """Exact evidence of one CIFAR-10 row from ``{(method, metric, post, setting): value}``."""
    frame = pd.DataFrame([{"row": "r", "dataset": "cifar10", "model": "m", "method": m, "metric": k, "post": p,
                           "setting": st, "value": v} for (m, k, p, st), v in cells.items()])
    return Exact(frame, "constructed", rep.names(), named, absent)


def _decide(ev_, texts=None):
    f = claims_log(exp.PAPER, exp.CHAPTER, cl.definitions(), [ev_], exp.SECTION, rep.names()).frame()
    f = f.set_index("claim")
    return f if texts is None else f.loc[list(texts)]


SOTA = "DFL achieves state-of-the-art ECE in most cases, especially before temperature scaling"
ALL_T = "All optimal temperatures of DFL are 1: DFL trains innately calibrated models"
ONLY_T = "DFL is the only method that achieves innately calibrated models (optimal T = 1)"
TABLE4 = "With other dual logits DFL still outperforms focal loss consistently across metrics"
GAMMA = "Gamma = 5, chosen by cross-validation, gives DFL its best calibration"
ADAECE = ("DFL's AdaECE is competitive with the best in almost all cases, only 0.1 from focal loss on "
          "Tiny-ImageNet")


def _table1(dfl_pre, dfl_post, T=None):
    """One row of Table 1: DFL's pre- and post-T ECE against the six others at 3.0 and 1.0."""
    cells = {(m, "ece", "none", ""): 3.0 for m in cl.SEVEN}
    cells.update({(m, "ece", "ts", ""): 1.0 for m in cl.SEVEN})
    cells.update({("dual_focal", "ece", "none", ""): dfl_pre, ("dual_focal", "ece", "ts", ""): dfl_post})
    cells.update({(m, "T", "ts", ""): (T or {}).get(m, 1.5) for m in cl.SEVEN})
    return cells


def test_the_claims_on_constructed_numbers():
    good = _decide(_exact(_table1(0.5, 0.9, {"dual_focal": 1.0})), [SOTA, ALL_T, ONLY_T])
    assert good.verdict.tolist() == ["holds"] * 3
    lead_post = _decide(_exact(_table1(2.9, 0.1)), [SOTA])       # a larger lead after TS: not "especially pre"
    assert lead_post.verdict.tolist() == ["fails"]
    two_ones = _decide(_exact(_table1(0.5, 0.9, {"dual_focal": 1.0, "ls005": 1.0})), [ALL_T, ONLY_T])
    assert two_ones.verdict.tolist() == ["holds", "fails"]
    t_near = _decide(_exact(_table1(0.5, 0.9, {"dual_focal": 1.1})), [ALL_T])   # 1.1 is not the grid value 1.0
    assert t_near.verdict.tolist() == ["fails"]


def test_a_claim_the_side_cannot_test_says_why():
    f = _decide(_exact(_table1(0.5, 0.9)))
    assert f.loc[GAMMA, "verdict"] == "not tested" and "(gamma=5)" in f.loc[GAMMA, "note"]
    figure = f.loc["DFL retains the best calibration over almost all bins of the reliability diagram"]
    assert figure.verdict == "not tested" and "no number" not in figure.note
    absent = {q.key: "Figure 2 prints no numbers" for q in cl.named() if q.key.startswith("fig2|")}
    figure = _decide(_exact(_table1(0.5, 0.9), absent=absent)).loc[figure.name]
    assert figure.verdict == "not tested" and figure.note == "Figure 2 prints no numbers"


def test_the_table4_claim_reads_each_reading_and_the_gamma_claim_reads_table13():
    other = [s for s in exp.TABLE4_SETTINGS if s.startswith(exp.OTHER)]
    cells = {}
    for name, good in (("dual_focal", True), ("dual_focal_code", False)):
        for k in ("ece", "adaece"):
            cells[(name, k, "none", exp.FL_ROW)] = 2.0
            cells.update({(name, k, "none", s): 1.0 if good else 3.0 for s in other})
    row = _decide(_exact(cells), [TABLE4]).iloc[0]
    assert row.verdict == "depends on reading"
    assert "label reading: holds" in row.note and "code reading: fails" in row.note
    label_only = {k: v for k, v in cells.items() if k[0] == "dual_focal"}
    row = _decide(_exact(label_only, absent={"dual_focal_code": "printed once"}), [TABLE4]).iloc[0]
    assert row.verdict == "holds" and "code reading: not tested (printed once)" in row.note
    gam = {("dual_focal", k, p, f"gamma={g:g}"): (1.0 if g == 5 else 2.0) for g in exp.GAMMAS
           for k, p in cl.TABLE12}
    assert _decide(_exact(gam), [GAMMA]).verdict.tolist() == ["holds"]
    gam[("dual_focal", "adaece", "none", "gamma=2")] = 0.5
    assert _decide(_exact(gam), [GAMMA]).verdict.tolist() == ["fails"]


def test_the_adaece_claim_needs_both_parts_and_its_gap_is_read_as_printed():
    cells = {(m, "adaece", "none", ""): 1.0 for m in cl.SEVEN}
    cells[("dual_focal", "adaece", "none", "")] = 1.1                  # 0.1 above the best, as printed
    row = _decide(_exact(cells), [ADAECE]).iloc[0]
    assert row.verdict == "fails" and "within 0.1 of the lowest" in row.result   # within, but not the lowest
    cells[("dual_focal", "adaece", "none", "")] = 0.9
    assert _decide(_exact(cells), [ADAECE]).verdict.tolist() == ["holds"]


def test_every_run_is_each_seed_where_the_side_has_several_and_the_row_where_it_has_one():
    from replicate.claims.evidence import Draws, Evidence, Row

    class Seeds(Evidence):
        def __init__(self, values, seeds=None):
            super().__init__("test")
            self.values, self.seeds = values, seeds

        def rows(self):
            return [Row("r", "cifar10")]

        def draws(self, row, q):
            v = self.values.get(q)
            return f"no {q}" if v is None else Draws(v[0], None if v[1] is None else np.asarray(v[1]), "d")

        def per_seed(self, row):
            return self.seeds or "one run"

    t = Cell("dual_focal", "T", "ts")
    test = cl.EveryRun(rp.claims.tests.is_one(t))
    mean_one = Seeds({t: (1.0, [1.0, 1.0])}, {1: Seeds({t: (0.9, [0.9, 0.9])}), 2: Seeds({t: (1.1, [1.1, 1.1])})})
    assert test(mean_one, "r").verdict == "fails"           # the mean is 1, no run is
    assert test(Seeds({t: (1.0, None)}), "r").verdict == "holds"


# ----------------------------------------------------------------------------- the paper's side, counted here
def _printed(table, metric=None, scaled=None, col="value"):
    t = rp.paper_tables.get("tao2023", table)
    if metric is not None:
        t = t[t.metric == metric]
    if scaled is not None:
        t = t[t.temperature_scaled.astype(bool) == scaled]
    return t.pivot_table(index=["dataset_key", "model_key", "setting"], columns="method", values=col, aggfunc="first")


def _verdict(k, n, quantifier):
    return "holds" if k >= rp.claims.wording.needed(quantifier, n) else "fails"


@pytest.fixture(scope="module")
def paper_frame():
    f = claims_log(exp.PAPER, exp.CHAPTER, cl.definitions(), [rep.paper_side()], exp.SECTION, rep.names()).frame()
    return f.set_index("claim")


def test_the_papers_side_counts_every_printed_row(paper_frame):
    seven = list(cl.SEVEN)
    pre, post = _printed("table1", "ece", False)[seven], _printed("table1", "ece", True)[seven]
    others = [m for m in seven if m != "dual_focal"]
    lead_pre, lead_post = pre.dual_focal - pre[others].min(axis=1), post.dual_focal - post[others].min(axis=1)
    k = int(((lead_pre < 0) & (lead_pre < lead_post)).sum())
    assert paper_frame.loc[SOTA, "verdict"] == _verdict(k, len(pre), "most")
    T = _printed("table1", "ece", True, "optimal_T").dual_focal
    assert paper_frame.loc[ALL_T, "verdict"] == ("holds" if ((T - 1).abs() < 0.05).all() else "fails")
    err = _printed("table2", "error")
    k = int((err.dual_focal < err.flsd53).sum())
    acc = "DFL improves the classification accuracy over focal loss in almost all cases"
    assert (k, len(err)) == (7, 10) and paper_frame.loc[acc, "verdict"] == _verdict(k, len(err), "almost all")
    assert paper_frame.loc[acc, "result"].count("DFL − FLSD-53") == len(err)
    fl_T = _printed("table1", "ece", True, "optimal_T").flsd53
    under = paper_frame.loc["Focal loss can lead to under-confident predictions"]
    assert under.verdict == "depends on reading"
    assert f"can happen: {_verdict(int((fl_T < 0.95).sum()), len(fl_T), 'any')}" in under.note
    assert f"in most rows: {_verdict(int((fl_T < 0.95).sum()), len(fl_T), 'most')}" in under.note


def test_the_papers_side_of_the_rows_compared_and_of_tables_3_9_13(paper_frame):
    post = _printed("table1", "ece", True)[list(cl.SEVEN)]
    lead = post.inverse_focal - post.drop(columns="inverse_focal").min(axis=1)
    best = sorted(i[:2] for i in lead.index[lead <= 0])
    once = "Inverse focal loss gives the best post-T ECE in only one case, ResNet-110 on CIFAR-10"
    assert paper_frame.loc[once, "verdict"] == ("holds" if best == [("cifar10", "resnet110")] else "fails")
    t3 = _printed("table3", "ece")
    below = int((t3.dual_focal < t3.adafocal).sum())
    even = "holds" if len(t3) / 4 <= below <= 3 * len(t3) / 4 else "fails"
    assert paper_frame.loc["DFL and AdaFocal are evenly matched", "verdict"] == even
    ada = (t3.adadual_focal < t3[["adafocal", "dual_focal"]].min(axis=1)).all()
    assert paper_frame.loc["AdaDualFocal improves consistently on both AdaFocal and DFL", "verdict"] == \
        ("holds" if ada else "fails")
    t9 = _printed("table9", "auroc", False)[list(cl.SEVEN)].dropna(subset=["dual_focal"])
    top = [r.dual_focal > np.sort(r.drop("dual_focal").to_numpy())[-3] for _, r in t9.iterrows()]
    auroc = "DFL achieves competitive OOD-detection AUROC in most cases"
    assert paper_frame.loc[auroc, "verdict"] == _verdict(sum(top), len(top), "most")
    t13 = rp.paper_tables.get("tao2023", "table13")
    lowest = all(t13[(t13.metric == k) & (t13.temperature_scaled.astype(bool) == (p == "ts"))]
                 .set_index("setting").value.idxmin() == "gamma=5" for k, p in cl.TABLE12)
    assert paper_frame.loc[GAMMA, "verdict"] == ("holds" if lowest else "fails")


def test_the_figure_claims_are_not_tested_on_the_paper_and_every_claim_has_a_row(paper_frame):
    figures = paper_frame[paper_frame["where"].str.contains("Fig. 2|Fig. 4", regex=True)]
    assert len(figures) == 6 and (figures.verdict == "not tested").all()
    assert figures.note.str.contains("prints no numbers").all()
    assert len(paper_frame) == 36 and paper_frame.index.is_unique


# ----------------------------------------------------------------------------- our side's evidence
def _fake(seed, key, shift=0.0):
    rng = np.random.default_rng(seed)
    z, y = rng.normal(size=(400, 10)) * 2 + shift, rng.integers(0, 10, 400)
    return FakeRun(z, y, key=key, val=(rng.normal(size=(300, 10)) * 2, rng.integers(0, 10, 300)))


def test_our_side_computes_a_run_set_once_under_every_setting_and_says_why_a_cell_is_absent():
    from replicate.comparison.noise import RowRuns

    a, b = _fake(1, "a"), _fake(2, "b")
    runs = {("dual_focal", "", 1): a, ("flsd53", "", 1): b, ("dual_focal", cl.T12, 1): a,
            ("dual_focal", exp.FL_ROW, 1): b}
    ours = rep.Ours([RowRuns("r", "cifar10", "m", runs)], "test", rep.names(), {"kde_xe": "not implemented"},
                    n_boot=50)
    c = Cell("dual_focal")
    assert ours.draws("r", Cell("dual_focal", setting=cl.T12)) is ours.draws("r", c)
    assert ours.draws("r", Cell("dual_focal", setting=exp.FL_ROW)) is ours.draws("r", Cell("flsd53"))
    rbs, brier = ours.draws("r", Cell("dual_focal", "rbs")), ours.draws("r", Cell("dual_focal", "brier"))
    assert rbs.point == pytest.approx(rp.metrics.root_brier_score(a.z, a.y, is_probs=False))
    np.testing.assert_allclose(rbs.reps, np.sqrt(brier.reps / 100))
    assert ours.draws("r", Cell("kde_xe", setting=cl.T10)) == "not implemented"
    assert ours.identical("r", Cell("dual_focal", setting=exp.FL_ROW), Cell("flsd53")) is None   # one run set


def test_figure_numbers_are_means_over_the_seeds_with_the_noise_models_draws():
    image = {(m, "", s): _fake(10 * i + s, f"{m}{s}", shift=i) for i, m in enumerate(exp.FIG2_METHODS)
             for s in (1, 2)}
    got = ev.figure_numbers(image, None, "r", "no history")
    d = got["fig4b|dual_focal"]
    want = np.mean([np.median(image[("dual_focal", "", s)].z.max(axis=1)) for s in (1, 2)])
    assert d.point == pytest.approx(want) and len(d.reps) == rp.comparison.noise.N_BOOT_SLOW and "2 seeds" in d.noise
    assert len(got["fig2|bin5|dual_focal"].reps) == rp.comparison.noise.N_BOOT and "fig4b|ls005" not in got
    assert got["fig4a|below"] == "no history"
    assert all(isinstance(got[f"fig2|bin{b}|dual_focal"], (str, rp.claims.evidence.Draws)) for b in range(15))


# ----------------------------------------------------------------------------- the registry and the committed runs
def test_registered_claims_from_an_empty_store_are_not_tested_with_reasons(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_dual_focal")
    assert source.builder == "replicate.experiments.dual_focal.report:claims"
    f = rp.claims.build(source, "smoke").frame()
    ours, paper = f[f.evidence.str.startswith("ours")], f[f.evidence.str.startswith("paper")]
    assert len(ours) == len(paper) == 36 and (ours.verdict == "not tested").all() and ours.note.str.len().gt(0).all()
    assert (f.section == exp.SECTION).all() and {"holds", "fails"} <= set(paper.verdict)


@pytest.fixture(scope="module")
def cpu_chapter():
    """The chapter at the cpu profile from the committed store (text runs left out: they may
    await the text model's retraining); skipped when the image runs are not committed."""
    p = exp.plan("cpu", text_dataset=None, device="cpu")
    runs = cmp.load_groups(p)
    if "image" not in runs or any(r.store != "results" for r in runs["image"].values()):
        pytest.skip("the chapter's cpu image runs are not in the committed store")
    return vw.chapter(p, runs)


def test_committed_cpu_runs_agree_with_their_records(cpu_chapter):
    for name, group in cpu_chapter.runs.items():
        for (key, seed), run in group.items():
            cfg = cpu_chapter.plan.groups[name][(key, seed)]
            assert run.key == cfg.key and run.resolved == cfg.resolve()
            z, y = run.logits("test")
            assert rp.metrics.ece(z, y, is_probs=False) == pytest.approx(run.metrics["test"]["ece"], abs=1e-9)
            assert rp.metrics.error_rate(z, y, is_probs=False) == pytest.approx(run.metrics["test"]["error"])


def test_every_glued_key_of_the_chapter_is_produced(cpu_chapter):
    import re

    import replicate.runner as runner

    text = runner.resolve_notebook("exp_dual_focal").read_text()
    # exercise solutions glue their own answers from their own code (issue #24): not the package's
    text = re.sub(r"```\{solution-start\}.*?```\{solution-end\}", "", text, flags=re.S)
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    log = rep.decide(cpu_chapter.plan, None)                    # the glue keys do not depend on the verdicts
    counts = rp.claims.verdict_counts(log.frame(), vw.VERDICT_SIDES, per_claim=True, rule_text=rp.comparison.noise.rule_text())
    produced = {**vw.texts(cpu_chapter), **counts, **cmp.chapter.quantifier_words(),
                "tally_ours_glossed": cmp.chapter.tally_glossed(counts, "ours"),
                "our_setting": rp.book.scale.setting_text(cpu_chapter.report["scale_box"].scale)}
    assert used <= set(produced), used - set(produced)
    assert all(isinstance(v, str) and v for v in produced.values())
    assert produced["rbs_fit_brier"] == produced["rbs_cells"] == "48"
    assert "identical test logits" in produced["identical_runs"]


def _bounds(root, brier):
    """A constructed :func:`rbs_bounds` frame: ``root`` / ``brier`` are its fits columns."""
    return pd.DataFrame({"fits_rbs": root, "fits_brier": brier})


def test_rbs_sentence_counts_and_concludes_from_the_frame():
    """Issue #32, item 5: the sentence under the RBS check is written from the frame the
    check counts, each wording on a constructed frame."""
    # the printed table's case: few fit the root, every one the Brier score
    s = vw.rbs_sentence(_bounds([True, False, False, False], [True] * 4))
    assert s.startswith("Only 1 of the 4 printed values is at least the smallest RBS")
    assert "all 4 respect the Brier-score bound" in s and "prints Brier scores" in s
    s = vw.rbs_sentence(_bounds([True, True, False], [True] * 3))
    assert s.startswith("2 of the 3 printed values are") and "prints Brier scores" in s
    # every value fits both: the check cannot tell the two apart
    s = vw.rbs_sentence(_bounds([True] * 3, [True] * 3))
    assert s.startswith("All 3 printed values are") and "cannot tell RBS from Brier scores" in s
    # some below even the Brier bound (none fits the root): neither reading
    s = vw.rbs_sentence(_bounds([False] * 3, [True, False, False]))
    assert s.startswith("None of the 3") and "only 1 of the 3 respects" in s and "either reading" in s
    assert "check nothing" in vw.rbs_sentence(_bounds([], []))
    # the committed paper table: the counts the sentence states are the check's
    b = vw.rbs_bounds(vw.paper_tables())
    s = vw.rbs_sentence(b)
    assert f"{int(b.fits_rbs.sum())} of the {len(b)}" in s
    assert (f"all {len(b)} respect" in s) == bool(b.fits_brier.all())


def test_text_runs_sentence_names_the_runs_the_mukhoti_chapter_lacks():
    """The sentence that says which text runs this chapter adds compares the two plans'
    run keys (constructed plans: every wording)."""
    def plan_of(keys, seed=1):
        p = cmp.Plan("exp_x", "cpu", [seed], "cpu")
        ms = [cmp.METHODS[k] for k in keys]
        p.add("text", ms, cmp.configs(ms, "20newsgroups", None, "cpu", [seed]))
        return p

    ours = plan_of(["cross_entropy", "brier", "dual_focal", "inverse_focal"])
    s = vw.text_runs_sentence(ours, plan_of(["cross_entropy", "brier", "mmce"]))
    assert s == ("The DFL and Inverse FL runs are the 2 this chapter adds to the 2 of the Mukhoti chapter "
                 "it reuses.")
    assert vw.text_runs_sentence(plan_of(["cross_entropy", "dual_focal"]), plan_of(["cross_entropy"])) == (
        "The DFL run is the 1 this chapter adds to the 1 of the Mukhoti chapter it reuses.")
    assert vw.text_runs_sentence(plan_of(["cross_entropy"]), plan_of(["cross_entropy", "mmce"])) == (
        "The text run is the Mukhoti chapter's, reused.")
    assert vw.text_runs_sentence(plan_of(["cross_entropy", "mmce"]), plan_of(["cross_entropy", "mmce"])) == (
        "All 2 text runs are the Mukhoti chapter's, reused.")
    # another seed is another run: nothing is shared
    assert "None of the text runs" in vw.text_runs_sentence(plan_of(["cross_entropy"]), plan_of(["cross_entropy"], 2))
    assert "no text runs" in vw.text_runs_sentence(cmp.Plan("exp_x", "cpu", [1], "cpu"), plan_of(["mmce"]))
    # the chapter's own cpu plan against the Mukhoti chapter's
    p = exp.plan("cpu", device="cpu")
    assert vw.text_runs_sentence(p, vw._mukhoti_plan(p)).startswith("The Inverse FL and DFL runs are the 2")


def test_the_rbs_check_and_printed_table3_are_headed_in_words():
    """Issue #32, item 1: no identifier header (fits_rbs), no method key, no pandas index."""
    from types import SimpleNamespace

    from replicate.book import notebook_checks
    from replicate.experiments.dual_focal import views

    c = SimpleNamespace(paper=views.paper_tables())
    for table in (views.rbs_check(c), views.printed_table3(c)):
        html = table.to_html()
        assert notebook_checks.table_problems(html) == [], html[:300]
    assert "at least the smallest RBS" in views.rbs_check(c).to_html()
    assert "AdaDualFocal" in views.printed_table3(c).to_html()


def test_noted_rows_count_the_distinct_rows_of_the_cell_notes(monkeypatch):
    """Issue #32, item 5: "two rows lost cells" under Table 9 counts its cell notes' rows."""
    notes = lay.table_notes(exp.PAPER, "table9")
    rows = {tuple(part.split(", ")[:2]) for c in notes["cell"] if c != "table" for part in c.split("; ")}
    assert rows == {("CIFAR-10", "ResNet-50"), ("CIFAR-10", "DenseNet-121")}
    assert vw.noted_rows("table9") == 2 and vw.noted_rows_text("table9") == "two rows"
    for n, words in ((0, "no rows"), (1, "one row"), (12, "12 rows")):
        monkeypatch.setattr(vw, "noted_rows", lambda table, n=n: n)
        assert vw.noted_rows_text("table9") == words
