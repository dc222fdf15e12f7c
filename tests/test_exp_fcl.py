"""The FCL chapter: its plan, FCL's L1 term, the Lipschitz smCE, the two-dimensional study,
the figure helpers, the claims and their tests (constructed evidence with known answers, and
the paper's printed tables counted here independently), the report's Named numbers and
vectorised resamplings against plain computations, and the committed cpu runs against their
records."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
import torch
from scipy import sparse
from scipy.optimize import linprog

import replicate as rp
from replicate import comparison as cmp
from replicate import experiments
from replicate.claims.claim import claims_log
from replicate.claims.evidence import Exact
from replicate.experiments.fcl import claims as C, figures as F, plan as fcl, report as R


# ----------------------------------------------------------------------------- plan
def test_plan_takes_the_chapters_parameters_and_refuses_bad_ones():
    import replicate.runner as runner

    cell = runner.default_parameters(runner.read_notebook(runner.resolve_notebook("exp_fcl")))
    assert experiments.plan_parameters("exp_fcl") == list(cell)
    p = fcl.plan("smoke", device="cpu")
    assert set(p.groups) == {"image", "history", "norm", "lambda", "text"}
    assert [m.key for m in p.methods["image"]] == list(fcl.SMOKE_METHODS)
    assert set(fcl.plan("smoke", ablations=False, text_dataset=None, device="cpu").groups) == {"image", "history"}
    for kw, name in (({"profile": "laptop"}, "profile"), ({"methods": ["fl3"]}, "unknown method"),
                     ({"lambdas": [-1.0]}, "lambdas"), ({"lambdas": [0.5, 0.5]}, "lambdas"),
                     ({"lambdas": "big"}, "lambdas"), ({"ablations": "yes"}, "ablations"),
                     ({"dataset": "20newsgroups"}, "dataset"), ({"text_dataset": "cifar10"}, "text_dataset"),
                     ({"seeds": [1, 1]}, "seeds")):
        with pytest.raises(ValueError, match=name):
            fcl.plan(**{"profile": "smoke", "device": "cpu", **kw})


def test_plan_shares_runs_with_the_other_chapters_and_sweeps_lambda_at_the_networks_gamma():
    p = fcl.plan("cpu", device="cpu")
    muk = experiments.focal_loss.plan.plan("cpu", device="cpu", text_dataset=None)
    for key in ("cross_entropy", "brier", "mmce", "ls005", "flsd53"):
        assert p.image[(key, 1)].key == muk.image[(key, 1)].key        # Mukhoti's runs reused
    assert p.group("history")[("fl3", 1)].key == muk.image[("fl3", 1)].key
    lam = {k: c.resolve()["loss_params"] for (k, _), c in p.group("lambda").items()}
    assert {v["lam"] for v in lam.values()} == set(fcl.LAMBDAS) and {v["gamma"] for v in lam.values()} == {2.0}
    assert p.group("lambda")[("fcl_lam1", 1)].key == p.image[("fcl", 1)].key   # lambda 1 is the main run
    r50 = fcl.plan("smoke", model="resnet50", ablations=True, text_dataset=None, device="cpu")
    got = {v.resolve()["loss_params"]["gamma"] for v in r50.group("lambda").values()}
    assert got == {4.0}                                                 # A.10: CIFAR-10 ResNet-50 gamma 4
    assert r50.image[("fcl", 1)].resolve()["loss_params"]["lam"] == 1.5


def test_fcl_catalogue_parameters_are_app_a10():
    m = cmp.METHODS["fcl"]
    table = rp.paper_tables.get("liang2024", "table5")
    for (d, k), g in table.groupby(["dataset_key", "model_key"]):
        want = dict(zip(g.metric, g.value))
        assert m.params("image" if d != "20newsgroups" else "text", d, k) == {"gamma": want["gamma"],
                                                                            "lam": want["lambda"]}
    # read in the paper's text, App. A.10: CIFAR-10 ResNet-50 "4.0 1.5", 20 Newsgroups "5.0 4.5"
    assert m.params("image", "cifar10", "resnet50") == {"gamma": 4.0, "lam": 1.5}
    assert m.params("text", "20newsgroups", "text_cnn") == {"gamma": 5.0, "lam": 4.5}
    assert m.params("image", "cifar10", "tiny_cnn") == {"gamma": 2.0, "lam": 1.0}
    assert "did not train" in m.params_note("cifar10", "tiny_cnn")


# ----------------------------------------------------------------------------- the L1 term
def test_fcl_l1_term_closed_form_and_unchanged_l2_config():
    p = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]], dtype=torch.float64)
    z, y = p.log(), torch.tensor([0, 1])
    pt = p[torch.arange(2), y]
    focal = -((1 - pt) ** 2 * pt.log())
    for scale, k in (("sum", 1.0), ("mean", 3.0)):
        l1 = rp.losses.get_loss("fcl", gamma=2.0, lam=0.5, norm="l1", brier_scale=scale, reduction="sum")
        want = focal + 0.5 * 2 * (1 - pt) / k                # sum_k |p_k - y_k| = 2 (1 - p_y) for one-hot y
        assert float(l1(z, y)) == pytest.approx(float(want.sum()), rel=1e-12)
    l2 = rp.losses.get_loss("fcl", gamma=2.0, lam=0.5)
    assert set(l2.config()) == {"name", "reduction", "gamma", "lam", "brier_scale"}   # no "norm": keys unchanged
    assert rp.losses.get_loss("fcl", norm="l1").config()["norm"] == "l1"
    zz = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    yy = torch.tensor([0, 3, 1, 4])
    loss = rp.losses.get_loss("fcl", norm="l1")
    assert torch.autograd.gradcheck(lambda a: loss(a, yy), (zz,))
    with pytest.raises(ValueError, match="norm"):
        rp.losses.get_loss("fcl", norm="l3")


# ----------------------------------------------------------------------------- smCE
def _lp_smce(f, y):
    """Independent oracle: the primal LP of Def. 2.2 solved by scipy's HiGHS."""
    v, inv = np.unique(f, return_inverse=True)
    r = np.bincount(inv, weights=y - f) / f.size
    n = v.size
    if n == 1:
        return abs(r[0])
    d = sparse.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
    res = linprog(-r, A_ub=sparse.vstack([d, -d]), b_ub=np.r_[np.diff(v), np.diff(v)], bounds=(-1, 1),
                  method="highs")
    return -res.fun


def test_smce_equals_the_lp_and_the_theory_solver():
    from replicate.theory.fcl import postprocessing

    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 60))
        f = rng.uniform(size=n) if trial % 3 else np.round(rng.uniform(size=n), 1)    # with ties
        y = (rng.uniform(size=n) < f ** rng.uniform(0.3, 3)).astype(float)
        got = rp.smce.smooth_calibration_error(f, y)
        assert got == pytest.approx(_lp_smce(f, y), abs=1e-10)
        assert got == pytest.approx(postprocessing.smooth_calibration_error(f, y), abs=1e-10)


def test_smce_closed_forms():
    rng = np.random.default_rng(1)
    f = rng.uniform(0.2, 0.9, size=500)
    # one-signed residuals: w = -1 everywhere is optimal, smCE = |mean(y - f)|
    assert rp.smce.smooth_calibration_error(f, np.zeros(500)) == pytest.approx(f.mean())
    assert rp.smce.smooth_calibration_error(f, f) == pytest.approx(0.0, abs=1e-15)          # calibrated means
    assert rp.smce.smooth_calibration_error([0.3], [1.0]) == pytest.approx(0.7)
    # opposite residuals +-1/2 at 0 and 1: w may change by at most 1 between them, so the best
    # is w(0) - w(1) = 1 (not +1 / -1): smCE = 1/2 (the total residual |r| would be 1)
    assert rp.smce.smooth_calibration_error([0.0, 1.0], [1.0, 0.0]) == pytest.approx(0.5)
    # residual 1/3 at 0 and -2/3 at 1: w(1) = -1 and w(0) = 0 (the most the constraint leaves): 2/3
    assert rp.smce.smooth_calibration_error([0.0, 1.0, 1.0], [1.0, 0.0, 0.0]) == pytest.approx(2 / 3)
    probs = rng.dirichlet(np.ones(4), size=300)
    labels = rng.integers(0, 4, size=300)
    conf, hit = probs.max(1), (probs.argmax(1) == labels).astype(float)
    assert rp.smce.top_label_smce(probs, labels) == pytest.approx(_lp_smce(conf, hit), abs=1e-10)
    with pytest.raises(ValueError, match="f must"):
        rp.smce.smooth_calibration_error([1.5], [1.0])
    with pytest.raises(ValueError, match="equal length"):
        rp.smce.smooth_calibration_error([0.5, 0.2], [1.0])


# ----------------------------------------------------------------------------- two moons
def test_moons_and_boundary_length():
    x, y = rp.toy2d.moons(400, 0.2, seed=3)
    assert x.shape == (400, 2) and x.dtype == np.float32 and set(np.unique(y)) == {0, 1} and y.sum() == 200
    xs, ys = np.linspace(-2, 3, 101), np.linspace(-1.5, 2, 101)
    gx, gy = np.meshgrid(xs, ys)
    line = 1 / (1 + np.exp(-(gx - 0.3)))                     # boundary x = 0.3 across the box
    assert rp.toy2d.boundary_length(xs, ys, line) == pytest.approx(3.5, rel=1e-9)
    circle = 1 / (1 + np.exp(-(np.hypot(gx - 0.5, gy - 0.25) - 1.0)))   # circle of radius 1
    assert rp.toy2d.boundary_length(xs, ys, circle) == pytest.approx(2 * np.pi, rel=2e-3)
    with pytest.raises(ValueError, match="noise"):
        rp.toy2d.moons(10, -0.1)
    with pytest.raises(ValueError, match="lr"):
        rp.toy2d.train(x, y, lr=0)


def test_toy_study_learns_the_moons():
    frame, grids = rp.toy2d.study(seeds=(0,), epochs=200, n_train=300, n_test=1000, grid_size=51)
    assert set(frame.method) == {"FL", "FCL"} and (frame.error < 25).all()
    xs, ys, p, x, _ = grids[("FCL", 0)]
    assert p.shape == (51, 51) and x.shape == (300, 2) and ((p >= 0) & (p <= 1)).all()


# ----------------------------------------------------------------------------- figure helpers
class FakeRun:
    def __init__(self, nll, err, epochs=None):
        self._h = pd.DataFrame({"epoch": np.arange(1, len(nll) + 1), "test/nll": nll, "test/error": err})
        self.resolved = {"train": {"epochs": epochs or len(nll)}}

    def history_frame(self):
        return self._h


def test_normalised_loss_convergence_and_windows():
    runs = {"a": FakeRun([2.0, 1.0, 0.5, 0.4, 0.4], [0.5] * 5), "b": FakeRun([4.0, 3.8, 3.0, 1.0, 0.8], [0.4] * 5)}
    f = F.normalised_loss(runs)
    assert f[f.epoch == 1].normalised.tolist() == [1.0, 1.0]
    assert f[(f.method == "b") & (f.epoch == 5)].normalised.iloc[0] == pytest.approx(0.2)
    # drops a: 0, .5, .75, .8, .8 (90 % of .8 = .72 first at epoch 3); b: 0, .05, .25, .75, .8 (epoch 4)
    assert F.convergence_epochs(f, 0.9) == {"a": 3, "b": 4}
    w = F.window_stats(f, 2, 4).set_index("method")
    assert w.loc["a", "mean"] == pytest.approx(np.mean([0.5, 0.25, 0.2]))
    assert w.loc["a", "jitter"] == pytest.approx(np.std([-0.25, -0.05], ddof=1))
    assert F.paper_window(20, 100, 300) == (6, 17) and F.paper_window(350, 50, 150) == (50, 150)
    with pytest.raises(ValueError):
        F.paper_window(20, 300, 100)


def test_figures_draw_from_synthetic_inputs():
    import matplotlib.pyplot as plt

    runs = {"CE": FakeRun([2.0, 1.5, 1.4], [0.6, 0.5, 0.45]), "FCL": FakeRun([2.0, 1.2, 1.1], [0.6, 0.5, 0.4])}
    for fig in (F.figure3(runs, "c"), F.figure8(runs, "c")):
        assert len(fig.axes) == 1
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=200)
    fig = F.figure9({"A": (p, rng.integers(0, 3, 200)), "B": (p, rng.integers(0, 3, 200))})
    assert "MCE" in fig.axes[0].get_title()
    sweep = pd.DataFrame([{"method": f"m{lam}", "metric": m, "temperature_scaled": s, "mean": lam + s, "lam": lam}
                          for lam in (0, 1) for m, _ in F.FIG6_PANELS for s in (False, True)])
    assert len(F.figure6(sweep, 2.0).axes) == len(F.FIG6_PANELS)
    plt.close("all")


# ----------------------------------------------------------------------------- the claims on constructed evidence
SEVEN = fcl.METHOD_KEYS
ROW, OOD_ROW = "CIFAR-10, ResNet-110", "CIFAR-10/SVHN, ResNet-110"


def _exact(cells, named=None, rows=None):
    """Exact evidence from ``{(row, method, metric, post, setting): value}`` (rows as in
    ``rows``: ``{row: (dataset, model)}``, default the two above)."""
    rows = rows or {ROW: ("cifar10", "resnet110"), OOD_ROW: ("cifar10_svhn", "resnet110")}
    frame = pd.DataFrame([{"row": r, "dataset": rows[r][0], "model": rows[r][1], "method": m, "metric": k,
                           "post": p, "setting": st, "value": v} for (r, m, k, p, st), v in cells.items()])
    return Exact(frame, "constructed", named=named)


def _verdicts(ev, **kw):
    log = claims_log(fcl.PAPER, fcl.CHAPTER, C.definitions(**kw), [ev], fcl.SECTION)
    f = log.frame()
    return dict(zip(f.claim, f.verdict)), f


def _claim(i):
    return C.definitions()[i].text


def _table(values, metric, post="none", row=ROW, setting=""):
    return {(row, m, metric, post, setting): v for m, v in values.items()}


GOOD = dict(zip(SEVEN, (5.0, 3.0, 4.0, 3.5, 2.0, 2.5, 1.0)))        # FCL the lowest
BAD = {**GOOD, "brier": 0.5}                                        # Brier below FCL


def test_the_table_claims_on_constructed_numbers():
    cells = {}
    for metric in C.CAL_METRICS:
        for post in ("none", "ts"):
            cells.update(_table(GOOD, metric, post))
    cells.update(_table(GOOD, "error"))
    v, f = _verdicts(_exact(cells))
    for i in (0, 1, 2, 3, 4, 5, 9):                                # lowest pre/post, networks, CE, rivals, Fig. 9
        assert v[_claim(i)] == "holds", (i, f.iloc[i].result)
    assert v[_claim(10)] == "not tested"                            # no CIFAR-100 or news row
    worse = {k: val for k, val in cells.items() if k[2] != "ece" or k[3] != "none"}
    worse.update(_table(BAD, "ece"))
    v, _ = _verdicts(_exact(worse))
    assert v[_claim(0)] == v[_claim(4)] == "fails" and v[_claim(3)] == "holds"
    # one good row, one bad row: "consistently" depends on the reading
    two = {**cells, **{(r2, *k[1:]): val for k, val in worse.items() for r2 in ["CIFAR-10, ResNet-50"]}}
    rows = {ROW: ("cifar10", "resnet110"), "CIFAR-10, ResNet-50": ("cifar10", "resnet50")}
    v, f = _verdicts(_exact(two, rows=rows))
    assert v[_claim(0)] == "fails"                                   # 1 of 2 rows: not more than half
    three = {**two, **{("CIFAR-10, DenseNet-121", *k[1:]): val for k, val in cells.items()}}
    rows["CIFAR-10, DenseNet-121"] = ("cifar10", "densenet121")
    v, f = _verdicts(_exact(three, rows=rows))
    row = f[f.claim == _claim(0)].iloc[0]
    assert row.verdict == "depends on reading" and "every row: fails" in row.note and "most rows: holds" in row.note


def test_claims_about_named_networks_and_the_figure_network():
    cells = _table(GOOD, "ece")
    rows = {"CIFAR-10, Wide-ResNet-26-10": ("cifar10", "wide_resnet26_10")}
    v, f = _verdicts(_exact({("CIFAR-10, Wide-ResNet-26-10", *k[1:]): x for k, x in cells.items()}, rows=rows))
    assert v[_claim(2)] == "not tested" and "not a row of densenet121" in f.iloc[2].note
    assert v[_claim(5)] == "not tested"                              # the paper's Fig. 9 is ResNet-110

    class Ours(Exact):
        side = "ours"
    frame = pd.DataFrame([{"row": "cifar10, tiny_cnn", "dataset": "cifar10", "model": "tiny_cnn", "method": m,
                           "metric": "ece", "post": "none", "setting": "", "value": x} for m, x in GOOD.items()])
    v, _ = _verdicts(Ours(frame, "ours"))
    assert v[_claim(5)] == "holds" and v[_claim(2)] == "not tested"   # our network stands in for Fig. 9's


def test_mce_ood_and_post_processing_claims():
    cells = {**_table(dict(zip(C.FIG9, (10.0, 8.0, 6.0, 5.0))), "mce"),
             **_table({m: 70.0 + i for i, m in enumerate(SEVEN)}, "auroc", row=OOD_ROW),
             **_table({m: 70.0 + i for i, m in enumerate(SEVEN)}, "auroc", "ts", row=OOD_ROW)}
    for metric in C.CAL_METRICS:                     # FLSD-53: TS halves it; FCL: T = 1, changes little
        cells.update(_table({"flsd53": 4.0, "fcl": 1.0}, metric))
        cells.update(_table({"flsd53": 2.0, "fcl": 0.9}, metric, "ts"))
    cells[(ROW, "fcl", "T", "ts", "")] = 1.0
    v, f = _verdicts(_exact(cells))
    assert v[_claim(6)] == "holds"                                   # 5 < mean(10, 8, 6)
    assert v[_claim(11)] == "holds"                                  # FCL (last, 76) the highest, detects
    assert v[_claim(21)] == "holds" and v[_claim(22)] == "holds"
    low = {**cells, **{k: x - 20 for k, x in cells.items() if k[2] == "auroc"}}
    v, f = _verdicts(_exact(low))
    assert v[_claim(11)] == "not tested" and "detect" in f.iloc[11].note
    bad = {**cells, (ROW, "fcl", "T", "ts", ""): 1.2, (ROW, "flsd53", "adaece", "ts", ""): 3.5}
    v, _ = _verdicts(_exact(bad))
    assert v[_claim(21)] == "fails" and v[_claim(22)] == "fails"     # 3.5 > 0.8 x 4; T 1.2 outside [0.9, 1.1]
    l1 = {(ROW, "fcl", "ece", "none", "norm=l2"): 0.9, (ROW, "fcl", "ece", "none", "norm=l1"): 1.4}
    assert _verdicts(_exact(l1))[0][_claim(24)] == "holds"


def test_the_lambda_sweep_claims():
    lams = (0.0, 0.5, 1.0, 5.0)
    ece = dict(zip(lams, (3.0, 1.0, 2.0, 2.5)))
    cells = {}
    for lam, x in ece.items():
        for metric in ("ece", "adaece", "classwise_ece"):
            cells[(ROW, fcl.lambda_key(lam), metric, "none", "")] = x
            cells[(ROW, fcl.lambda_key(lam), metric, "ts", "")] = x / 2
        cells[(ROW, fcl.lambda_key(lam), "nll", "none", "")] = 100 - 10 * lam
        cells[(ROW, fcl.lambda_key(lam), "nll", "ts", "")] = 100 - 10 * lam + (1 if lam == 5 else -1)
        cells[(ROW, fcl.lambda_key(lam), "error", "none", "")] = 30.0 - lam
    v, f = _verdicts(_exact(cells), lambdas=lams)
    for i in (15, 16, 17, 18, 19):                # NLL falls, post-T lower (3 of 4), ECE falls, rises at 5, one best
        assert v[_claim(i)] == "holds", (i, f.iloc[i].result)
    assert v[_claim(20)] == "fails"                                  # the error is lowest at the largest lambda
    cells[(ROW, fcl.lambda_key(1.0), "adaece", "ts", "")] = 0.1      # AdaECE post-T best at lambda 1: no one best
    assert _verdicts(_exact(cells), lambdas=lams)[0][_claim(19)] == "fails"


def test_the_figure_claims_read_named_numbers():
    named = {(ROW, f"fig8_error:{m}"): 40.0 + i for i, m in enumerate(("fcl", *fcl.FIG8_METHODS[:-1]))}
    named.update({(ROW, f"fig3_converge:{m}"): 5 + i for i, m in enumerate(("fcl", "cross_entropy", "fl3",
                                                                            "dual_focal"))})
    named.update({(ROW, f"{s}:{m}"): x for s in ("fig3_mid_mean", "fig3_mid_std")
                  for m, x in (("fcl", 0.1), ("dual_focal", 0.2), ("cross_entropy", 0.3), ("fl3", 0.4))})
    named.update({(ROW, C.GAP_MIN_HIGH.key): 2.0, (ROW, C.GAP_HIGH.key): 5.0, (ROW, C.GAP_LOW.key): 1.0})
    named.update({(ROW, "fig3_initial_jitter:fl3"): 0.05, (ROW, "fig3_initial_jitter:cross_entropy"): 0.02})
    v, f = _verdicts(_exact(_table(GOOD, "ece"), named=named))
    for i in (7, 8, 12, 13, 14):
        assert v[_claim(i)] == "holds", (i, f.iloc[i].result)
    named[(ROW, C.GAP_MIN_HIGH.key)] = -1.0                          # one high bin under-confident
    named[(ROW, "fig3_mid_std:fl3")] = 0.15                          # FL-3 steadier than DFL
    v, _ = _verdicts(_exact(_table(GOOD, "ece"), named=named))
    assert v[_claim(7)] == "fails" and v[_claim(13)] == "fails"


def test_the_papers_side_says_why_figures_and_missing_tables_are_not_tested():
    v, f = _verdicts(R.paper_side(fcl.LAMBDAS))
    notes = dict(zip(f.claim, f.note))
    for i in (7, 8, 12, 13, 14, 15, 16, 17, 18, 19, 20, 25, 26):
        assert v[_claim(i)] == "not tested" and notes[_claim(i)].count(C.FIGURE_ONLY) >= 1, i
    assert notes[_claim(6)] == C.ABSENT["mce"] and notes[_claim(23)] == C.ABSENT["smce"]
    assert notes[_claim(27)] == C.ABSENT["chexnet"] and notes[_claim(28)] == C.ABSENT["gradcam"]


# ----------------------------------------------------------------------------- the paper's side, counted here
def _printed(table):
    t = rp.paper_tables.get(fcl.PAPER, table)
    return t.assign(row=t.dataset + ", " + t.model)


def _paper_verdicts():
    return _verdicts(R.paper_side(fcl.LAMBDAS))


def test_the_papers_side_counts_every_printed_row():
    v, f = _paper_verdicts()
    result = dict(zip(f.claim, f.result))
    # Table 2: FCL's error strictly the lowest of the seven, more than half of the rows
    t2 = _printed("table2").pivot_table(index="row", columns="method", values="value", sort=False)
    low = (t2["fcl"] < t2.drop(columns="fcl").min(axis=1))
    assert v[_claim(9)] == ("holds" if low.sum() > len(low) / 2 else "fails")
    assert result[_claim(9)].count("FCL − min(") == len(t2) == 12
    # CIFAR-100 and news rows: every one
    news = [r for r in t2.index if r.split(",")[0] in ("CIFAR-100", "20 Newsgroups", "AG News")]
    assert v[_claim(10)] == ("holds" if low[news].all() else "fails") and len(news) == 6
    # Table 8: L2 below L1 in every row
    t8 = _printed("table8")
    t8 = t8[t8.metric == "ece"].pivot_table(index="row", columns="setting", values="value")
    assert v[_claim(24)] == ("holds" if (t8["norm=l2"] < t8["norm=l1"]).all() else "fails") and len(t8) == 8
    # Table 4: FCL's AUROC the highest pre and post T in more than half of the eight OOD rows
    t4 = _printed("table4")
    best = [(g[g.method == "fcl"].value.iloc[0] > g[g.method != "fcl"].value.max())
            for _, g in t4.groupby(["row", "temperature_scaled"])]
    both = np.array(best).reshape(-1, 2).all(axis=1)
    assert v[_claim(11)] == ("holds" if both.sum() > len(both) / 2 else "fails") and len(both) == 8


def test_the_papers_side_of_consistently_is_read_every_row_and_most_rows():
    v, f = _paper_verdicts()
    per = []
    for table, metric in (("table1", "ece"), ("table3", "smece"), ("table6", "adaece"), ("table7", "classwise_ece")):
        t = _printed(table)
        t = t[~t.temperature_scaled.astype(bool)].pivot_table(index="row", columns="method", values="value",
                                                             sort=False)
        per.append(t["fcl"] < t.drop(columns="fcl").min(axis=1))
    rows_ok = pd.concat(per, axis=1).all(axis=1)
    every, most = rows_ok.all(), rows_ok.sum() > len(rows_ok) / 2
    want = "holds" if every else ("depends on reading" if most else "fails")
    assert v[_claim(0)] == want and len(rows_ok) == 12
    # Sec. 5.5.3: FLSD-53's post-T value at most 80 % of its pre-T value, every metric of the row
    per = []
    for table in ("table1", "table3", "table6", "table7"):
        t = _printed(table)
        t = t[t.method == "flsd53"].pivot_table(index="row", columns="temperature_scaled", values="value")
        per.append(t[True] - 0.8 * t[False] <= 0)
    ok = pd.concat(per, axis=1).all(axis=1)
    want = "holds" if ok.all() else ("depends on reading" if ok.sum() > len(ok) / 2 else "fails")
    assert v[_claim(21)] == want


def test_claims_without_runs_are_not_tested_on_ours(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    f = R.claims("smoke").frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == len(C.definitions()) and (ours.verdict == "not tested").all()
    assert ours.note.str.contains("not in the run store").all()
    paper = f[f.evidence.str.startswith("paper")]
    assert {"holds", "depends on reading", "not tested"} <= set(paper.verdict)
    assert (f.section == fcl.SECTION).all()
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_fcl")
    assert source.builder == "replicate.experiments.fcl.report:claims"


def test_definitions_refuse_bad_thresholds():
    for kw in ({"ts_drop": 1.5}, {"ts_drop": True}, {"among": 0}, {"among": 7}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            C.definitions(**kw)
    hows = [c.how(rp.comparison.report.names()) for c in C.definitions()]
    assert all(hows) and "[0.9, 1.1]" in hows[22] and "at least one of the" in hows[11]


# ----------------------------------------------------------------------------- the report's numbers
def test_seed_draws_and_the_history_numbers():
    d = R._seed_draws({1: 2.0, 2: 4.0, 3: 6.0}, "r", "who", "why")
    assert d.point == 4.0 and d.reps.shape == (rp.comparison.noise.N_BOOT,) and 2.0 <= d.reps.min() and d.reps.max() <= 6.0
    assert "3 seeds resampled" in d.noise and d.used == (("r", "who", (1, 2, 3)),)
    one = R._seed_draws({1: 2.0}, "r", "who", "why")
    assert one.reps is None and "one run (seed 1)" in one.noise
    ep = 20
    runs = {("fcl", 1): FakeRun(list(np.linspace(2, 1, ep)), [0.4] * ep),
            ("fcl", 2): FakeRun(list(np.linspace(2, 1, ep)), [0.2] * ep),
            ("cross_entropy", 1): FakeRun(list(np.linspace(3, 1, ep)), [0.5] * ep)}
    got = R._history_named(runs, "r")
    assert got["fig8_error:fcl"].point == pytest.approx(30.0)        # mean of 40 % and 20 %
    assert got["fig8_error:cross_entropy"].reps is None
    first, last = F.paper_window(ep, 100, 300)
    assert f"our epochs {first}-{last} of {ep}" in got["fig8_error:fcl"].noise
    assert isinstance(got["fig3_initial_jitter:fcl"], str)           # paper 0-50 = our epochs 1-3: too few


def test_the_reliability_gaps_against_numpy():
    """Fig. 9's gaps of a constructed model, computed here with np.histogram's bins."""
    class Run:
        def __init__(self, seed):
            rng = np.random.default_rng(seed)
            self.z = rng.normal(size=(3000, 5)) * 2.5
            self.y = np.where(rng.uniform(size=3000) < 0.6, self.z.argmax(1), rng.integers(0, 5, 3000))

        def logits(self, split):
            return self.z, self.y
    runs = {1: Run(1), 2: Run(2)}
    got = R._reliability_named(runs, "r")
    high, low = [], []
    for run in runs.values():
        p = np.exp(run.z - run.z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        conf, gap = p.max(1), p.max(1) - (p.argmax(1) == run.y)
        b = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)               # (lower, upper] bins of width 1/15
        cnt = np.bincount(b, minlength=15)
        mean_conf = np.bincount(b, conf, 15) / np.maximum(cnt, 1)
        keep = cnt >= 0.01 * len(conf)
        hi = keep[b] & (mean_conf[b] >= 0.5)
        lo = keep[b] & (mean_conf[b] < 0.5)
        high.append(100 * gap[hi].mean())
        low.append(100 * gap[lo].mean())
    assert got[C.GAP_HIGH.key].point == pytest.approx(np.mean(high), rel=1e-9)
    assert got[C.GAP_LOW.key].point == pytest.approx(np.mean(low), rel=1e-9)
    assert got[C.GAP_HIGH.key].reps.shape == (rp.comparison.noise.N_BOOT,) and "2 seeds resampled" in got[C.GAP_HIGH.key].noise


def test_the_two_dimensional_numbers():
    toy = rp.toy2d.study(seeds=(0, 1), epochs=60, n_train=100, n_test=300, grid_size=31, keep_test=True)
    got = R._toy_named(toy)
    frame = toy[0]
    for m in ("FL", "FCL"):
        for stat in ("ece", "error", "boundary_length", "uncertain_share"):
            assert got[f"toy_{stat}:{m}"].point == pytest.approx(frame[frame.method == m][stat].mean(), abs=1e-9)
        assert got[f"toy_ece:{m}"].reps.shape == (rp.comparison.noise.N_BOOT,)
    assert got["toy_error:FL"].used == ((R.TOY_ROW.name, "FL, FCL", (0, 1)),)


def test_extra_rows_and_identical_runs():
    from replicate.claims.evidence import Named, Row

    ev = R._WithRows(None, [(Row("t", "two_moons"), {"k": 1.0}, "not here")], "ours", "cpu", None)
    assert [r.name for r in ev.rows()] == ["t"] and ev.draws("t", Named("x")) == "not here"
    assert ev.label(()) == "ours: cpu"

    class Logits:
        def __init__(self, key, z):
            self.key, self.z = key, np.asarray(z, dtype=np.float32)

        def logits(self, split):
            return self.z, np.zeros(len(self.z), dtype=np.int64)
    a, b = Logits("k1", [[1.0, 2.0]]), Logits("k2", [[1.0, 2.0]])
    p = fcl.plan("smoke", device="cpu")
    fcl_label = cmp.METHODS["fcl"].label
    runs = {"image": {("fcl", 1): a}, "lambda": {("fcl_lam1", 1): a, ("fcl_lam0", 1): b}}
    text = rp.experiments.fcl.views.coincidences(p, runs)
    assert text.startswith(f"at the smoke profile, {fcl_label} (= FCL with λ = 1) and FCL with λ = 0 have identical "
                           f"test logits (seed 1)"), text
    assert f"by design, {fcl_label} and FCL with λ = 1 are one run" in text
    runs["lambda"][("fcl_lam0", 1)] = Logits("k2", [[0.0, 2.0]])
    runs["history"] = {("fcl", 1): Logits("k3", [[1.0, 2.0]])}
    text = rp.experiments.fcl.views.coincidences(p, runs)
    assert "no two different variants" in text and f"the runs of {fcl_label} trained again" in text


# ----------------------------------------------------------------------------- committed runs
def test_paper_notes_keep_every_note_of_the_chosen_rows():
    """Read against the stored tables: each table note once (``whole``), and exactly the cell
    notes of the chosen rows."""
    from replicate.experiments.fcl import views as fcl_report

    row = ("20 Newsgroups", "Global Pooling CNN")
    notes = fcl_report.paper_notes(("table1", "table3"), rows=[row])
    tables = [rp.paper_tables.get(fcl.PAPER, t) for t in ("table1", "table3")]
    assert list(notes[notes.cell == "table"].note) == [df.attrs["notes"] for df in tables]
    want = {n for df in tables for n in df[(df.dataset == row[0]) & (df.model == row[1])].note if n}
    cells = notes[notes.cell != "table"]
    assert want and set(cells.note) == want and cells.cell.str.startswith(", ".join(row)).all()
    only_cells = fcl_report.paper_notes(("table1", "table3"), rows=[row], whole=False)
    assert (only_cells.cell != "table").all() and set(only_cells.note) == want


def test_committed_cpu_runs_agree_with_their_records():
    p = fcl.plan("cpu", device="cpu")
    found = 0
    for cfg in p.configs().values():
        run = rp.runs.find(cfg)
        if run is None or run.store != "results" or cfg.loss != "fcl":
            continue
        found += 1
        z, y = run.logits("test")
        probs = rp.metrics.probs_from_logits(z)
        assert rp.metrics.ece(probs, y) == pytest.approx(run.metrics["test"]["ece"], abs=1e-9)
        assert rp.metrics.error_rate(probs, y) == pytest.approx(run.metrics["test"]["error"], abs=1e-12)
        assert run.resolved["loss_params"]["reduction"] == "mean"
    if not found:
        pytest.skip("no committed FCL cpu run in the store")


def test_the_toy_and_temperature_tables_are_headed_in_words():
    """Issue #32, item 1: no identifier header, no long decimals, no pandas index."""
    from replicate.book import notebook_checks
    from replicate.experiments.fcl import views

    toy = pd.DataFrame({"seed": [0, 1, 0, 1], "method": ["FL", "FL", "FCL", "FCL"], "error": [10.0, 12.0, 9.0, 9.5],
                        "ece": [3.123456, 2.0, 1.0, 1.5], "nll": [0.3, 0.31, 0.2, 0.25],
                        "boundary_length": [4.0, 4.2, 3.0, 3.1], "uncertain_share": [5.0, 6.0, 2.0, 2.5]})
    html = views.toy_table(toy).to_html()
    assert notebook_checks.table_problems(html) == [] and "boundary length" in html and "2.56" in html
    ours = pd.DataFrame({"method": ["fcl", "fcl", "cross_entropy", "cross_entropy"], "metric": "ece",
                         "temperature_scaled": [False, True, False, True], "value": [2.0, 1.9, 5.0, 1.5],
                         "T": [np.nan, 1.0, np.nan, 1.6]})
    changes = views.temperature_changes(ours)
    assert list(changes.index) == ["fcl", "cross_entropy"] and changes.loc["fcl", "change"] == pytest.approx(-0.1)
    html = views.temperature_table(changes).to_html()
    assert notebook_checks.table_problems(html) == [] and "FCL" in html and "ECE (%) post T" in html


def test_resample_note_names_the_metrics_the_noise_model_resamples_fewer_times():
    """Issue #32, item 5: "(200 resamples for the smooth ECE and the AdaECE)" was typed; the
    sentence now asks the noise model which metrics it recomputes on fewer resamples."""
    from replicate.comparison import noise
    from replicate.comparison.noise import scores
    from replicate.experiments.fcl import views

    assert views.slow_metrics(["ece", "error", "nll", "classwise_ece"]) == []
    assert views.slow_metrics(["ece", "smece", "adaece", "smce"]) == ["smece", "adaece", "smce"]
    # independently: the noise model returns N_BOOT_SLOW draws for these on a real weight matrix
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=50)
    y = rng.integers(0, 4, size=50)
    s = scores.Scored(p, y, np.log(p[np.arange(50), y]))
    w = noise.weights(50, noise.N_BOOT, 3)
    assert len(scores.replicated(s, "adaece", w)) == noise.N_BOOT_SLOW < len(scores.replicated(s, "ece", w))
    two = views.resample_note(["ece", "smece", "adaece"])
    assert two == (f"The intervals of the smooth ECE and the AdaECE, recomputed on each resample, rest on its first "
                   f"{noise.N_BOOT_SLOW} resamples; the others on all {noise.N_BOOT:,}.")
    assert views.resample_note(["adaece"]).startswith("The interval of the AdaECE, recomputed on each resample, rests")
    assert views.resample_note(["ece"]) == f"Every interval rests on all {noise.N_BOOT:,} resamples."


def test_toy_setting_says_what_the_study_runs_at_each_profile():
    import inspect

    from replicate import toy2d
    from replicate.experiments.fcl import plan as fcl_plan
    from replicate.experiments.fcl import views

    d = {k: v.default for k, v in inspect.signature(toy2d.study).parameters.items()}
    smoke = fcl_plan.TOY["smoke"]
    assert views.toy_setting("smoke") == (f"{d['n_train']:,} training points, {smoke['n_test']:,} test points per "
                                          f"seed, full-batch Adam for {smoke['epochs']} epochs, learning rate "
                                          f"{d['lr']:g}, seed {smoke['seeds'][0]}")
    cpu = views.toy_setting("cpu")
    assert f"{d['n_test']:,} test points" in cpu and f"for {d['epochs']} epochs" in cpu
    assert cpu.endswith(f"seeds {fcl_plan.TOY['default']['seeds'][0]} to {fcl_plan.TOY['default']['seeds'][-1]}")
