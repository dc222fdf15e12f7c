"""The FCL chapter: its plan, FCL's L1 term, the Lipschitz smCE, the two-dimensional study,
the figure helpers, the claims as rules (constructed numbers and the paper's own rows) and
the committed cpu runs against their records."""
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
from replicate.claims import as_outcome
from replicate.experiments.fcl import claims as C, evidence as E, figure_rules as FR, plan as fcl, rules as R


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
    def __init__(self, nll, err):
        self._h = pd.DataFrame({"epoch": np.arange(1, len(nll) + 1), "test/nll": nll, "test/error": err})

    def history_frame(self):
        return self._h


def test_normalised_loss_convergence_and_windows():
    F = rp.experiments.fcl.figures
    runs = {"a": FakeRun([2.0, 1.0, 0.5, 0.4, 0.4], [0.5] * 5), "b": FakeRun([4.0, 3.8, 3.0, 1.0, 0.8], [0.4] * 5)}
    f = E.normalised_loss(runs)
    assert f[f.epoch == 1].normalised.tolist() == [1.0, 1.0]
    assert f[(f.method == "b") & (f.epoch == 5)].normalised.iloc[0] == pytest.approx(0.2)
    # drops a: 0, .5, .75, .8, .8 (90 % of .8 = .72 first at epoch 3); b: 0, .05, .25, .75, .8 (epoch 4)
    assert E.convergence_epochs(f, 0.9) == {"a": 3, "b": 4}
    w = E.window_stats(f, 2, 4).set_index("method")
    assert w.loc["a", "mean"] == pytest.approx(np.mean([0.5, 0.25, 0.2]))
    assert w.loc["a", "jitter"] == pytest.approx(np.std([-0.25, -0.05], ddof=1))
    assert E.paper_window(20, 100, 300) == (6, 17) and E.paper_window(350, 50, 150) == (50, 150)
    with pytest.raises(ValueError):
        E.paper_window(20, 300, 100)


def test_figures_draw_from_synthetic_inputs():
    import matplotlib.pyplot as plt

    F = rp.experiments.fcl.figures
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


# ----------------------------------------------------------------------------- rules
def _ev(rows, **kw):
    """Evidence from ``(row, metric, scaled, {method: value})`` tuples (ours: epochs set)."""
    recs = [{"row": r, "dataset_key": "cifar10", "model_key": "tiny_cnn", "setting": "", "method": m, "metric": met,
             "temperature_scaled": s, "mean": v, "T": np.nan} for r, met, s, vals in rows for m, v in vals.items()]
    return E.Evidence("ours: test", pd.DataFrame(recs, columns=E.COLUMNS), epochs=20, **kw)


def _verdict(rule, ev):
    return as_outcome(rule(ev)[1]).verdict


def test_table_rules_on_constructed_numbers():
    good = {"cross_entropy": 5.0, "brier": 2.0, "flsd53": 1.5, "fcl": 1.0}
    bad = {"cross_entropy": 5.0, "brier": 0.5, "flsd53": 1.5, "fcl": 1.0}
    rows = [(f"r{i}", m, False, v) for i, v in enumerate((good, good, bad)) for m in R.CAL_METRICS]
    o = as_outcome(R.lowest_pre(_ev(rows))[1])
    assert o.verdict == "depends on reading" and "every row: fails" in o.note and "most rows: holds" in o.note
    assert _verdict(R.lowest_pre, _ev([("r", m, False, good) for m in R.CAL_METRICS])) == "holds"
    assert _verdict(R.lowest_error_most, _ev([("r1", "error", False, bad), ("r2", "error", False, bad)])) == "fails"
    assert _verdict(R.highest_auroc, _ev([("o", "auroc", s, {"fcl": 90.0, "brier": 80.0}) for s in (0, 1)])) \
        == "holds"
    partial = _ev([("o", "auroc", s, {"fcl": 90.0}) for s in (0, 1)], missing={"ood": "runs lack OOD logits"})
    assert _verdict(R.highest_auroc, partial) == "not tested"
    assert _verdict(R.excels_on_networks, _ev([("r", "ece", False, good)])) == "not tested"   # tiny_cnn only
    assert _verdict(R.lowest_pre, _ev([])) == "not tested"


def test_figure_rules_on_constructed_histories_and_sweeps():
    ep = np.arange(1, 21)
    hist = pd.concat([pd.DataFrame({"method": m, "epoch": ep, "normalised": 1 / (1 + k * ep), "error": 50 - k})
                      for m, k in (("cross_entropy", 0.1), ("fl3", 0.2), ("dual_focal", 0.5), ("fcl", 3.0))])
    ev = _ev([], history=hist)
    assert _verdict(FR.fastest_convergence(0.9), ev) == "holds"
    assert _verdict(FR.lowest_error_over_training, ev) == "holds"
    assert _verdict(FR.initial_ce_steadier, ev) == "not tested"      # paper epochs 0-50 = our 1-3: too few
    sweep = pd.DataFrame([{"lam": lam, "metric": m, "temperature_scaled": s, "mean": v}
                          for lam, v in ((0.0, 3.0), (0.5, 1.0), (1.0, 2.0))
                          for m in ("nll", "ece", "adaece", "classwise_ece", "error") for s in (False, True)])
    ev = _ev([], sweep=sweep)
    assert _verdict(FR.sweep_falls("ece"), ev) == "holds" and _verdict(FR.one_best_lambda, ev) == "holds"
    assert _verdict(FR.too_much_lambda("ece"), ev) == "holds" and _verdict(FR.post_nll_lower, ev) == "fails"
    assert _verdict(FR.sweep_falls("ece", 0.0, 2.0), ev) == "not tested"                # no lambda 2
    toy = pd.DataFrame({"seed": [0, 0], "method": ["FL", "FCL"], "boundary_length": [7.0, 6.0],
                        "uncertain_share": [20.0, 5.0], "error": [3.0, 3.5], "ece": [20.0, 1.0]})
    assert _verdict(FR.toy_smoother, _ev([], toy=toy)) == "depends on reading"     # shorter, but a sharper band
    assert _verdict(FR.toy_smoother, _ev([], toy=toy.assign(uncertain_share=[5.0, 20.0]))) == "holds"
    assert _verdict(FR.toy_balance(1.0), _ev([], toy=toy)) == "holds"
    assert _verdict(FR.toy_balance(0.1), _ev([], toy=toy)) == "fails"
    assert _verdict(FR.toy_smoother, _ev([])) == "not tested"


def test_rules_on_the_papers_own_rows():
    """Expected verdicts from reading the printed tables."""
    ev = E.paper_evidence()
    # Table 2: FCL lowest error in 9 of 12 rows (not CIFAR-10 ResNet-110: LS 4.70 < 4.75; CIFAR-10 WRN:
    # CE 3.80 < 4.16; FinSen: DFL 1.09 < 1.22)
    numbers, ok = R.lowest_error_most(ev)
    assert ok is True and "9/12" in numbers
    # CIFAR-100 rows (21.81, 21.02, 19.81, 21.80) and news rows (27.13, 8.13) are all lowest
    assert R.lowest_error_c100_news(ev)[1] is True
    # Table 4 pre T: FCL highest in 5 of 8 rows (not SVHN R50 Brier 95.11, SVHN R110 DFL 95.26, C10-C R50 FLSD 91.37)
    numbers, ok = R.highest_auroc(ev)
    assert ok is True and "AUROC pre T 5/8" in numbers
    # Table 8: L2 below L1 in all 8 rows (e.g. CIFAR-10 DenseNet-121 0.66 < 4.00)
    assert R.l2_beats_l1(ev)[1] is True
    # Table 1 pre T: FCL not lowest on Tiny-ImageNet (10.22 > FLSD 1.61), 20 Newsgroups (15.35 > LS 4.79),
    # FinSen (0.51 > DFL 0.40)
    o = as_outcome(R.lowest_pre(ev)[1])
    assert o.verdict == "depends on reading" and "ECE 9/12" in R.lowest_pre(ev)[0]
    # Table 1, CIFAR-10 ResNet-110: FCL 0.95 below CE 4.86, FLSD 1.67, DFL 1.48
    assert R.fig9_lowest_ece(ev)[1] is True
    # FLSD-53 post-T ECE >= 20 % below pre-T in 8 of 12 rows (not C100 WRN 2.42->2.16, C10 R50 1.46->1.46,
    # Tiny 1.61->1.61, FinSen 0.43->0.53)
    assert "ECE 8/12" in R.focal_drops(0.2)(ev)[0]
    for rule in (FR.fastest_convergence(0.9), FR.one_best_lambda, FR.toy_smoother, R.fig9_low_mce, R.chexnet):
        assert _verdict(rule, ev) == "not tested"


def test_claims_without_runs_are_not_tested_on_ours(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    p = fcl.plan("smoke", device="cpu")
    log = C.claims_log(p, cmp.load_groups(p), None)
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == len(C.rules()) and (ours.verdict == "not tested").all()
    assert ours.note.str.len().gt(0).all()
    paper = f[f.evidence.str.startswith("paper")]
    assert {"holds", "depends on reading", "not tested"} <= set(paper.verdict)
    assert (f.section == fcl.SECTION).all()


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
