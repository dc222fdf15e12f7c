"""The AdaFocal experiment chapter: its plan (validated before anything trains, equal to the
chapter's parameters cell, sharing the Mukhoti chapter's runs), the shared functions it
added (validation bins, OOD AUROC and ROC, paper rows, ablation tables, table notes) against
independent computations, its figures and views on synthetic records, and the committed cpu
runs against their records. The claims and their tests: ``test_exp_adafocal_claims.py``.
Nothing trains here."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from scipy.special import softmax  # noqa: E402
from scipy.stats import entropy as scipy_entropy  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

import replicate as rp  # noqa: E402
from replicate import comparison as cmp  # noqa: E402
from replicate import runs as rruns  # noqa: E402
from replicate import training  # noqa: E402
from replicate.experiments.adafocal import claims as C  # noqa: E402
from replicate.experiments.adafocal import figures as figs  # noqa: E402
from replicate.experiments.adafocal import plan as exp  # noqa: E402
from replicate.experiments.adafocal import report as rep  # noqa: E402
from replicate.experiments.adafocal import views  # noqa: E402

EPOCHS, N, K = 4, 150, 5


@pytest.fixture()
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    yield tmp_path
    plt.close("all")


# ----------------------------------------------------------------------------- the plan
def test_plan_parameters_are_the_chapters_parameters_cell():
    import inspect

    import replicate.runner as runner

    cell = runner.default_parameters(runner.read_notebook(runner.resolve_notebook("exp_adafocal")))
    sig = inspect.signature(exp.plan).parameters
    assert list(cell) == list(sig)
    for name, value in cell.items():
        default = sig[name].default
        assert (tuple(value) if isinstance(value, list) else value) == default, name


@pytest.mark.parametrize("kw, match", [
    ({"profile": "laptop"}, "unknown profile"), ({"seeds": [1, 1]}, "seeds must not repeat"),
    ({"error_bar_seeds": [-1]}, "seeds must be"), ({"methods": ["focal_x"]}, "unknown method"),
    ({"methods": ["dual_focal"]}, "unknown method"), ({"ablation_rule": "adafocal"}, "ablation_rule must be"),
    ({"bins": [15]}, "other than 15"), ({"bins": [5, 5]}, "bins must be distinct"), ({"bins": [0]}, "1..1000"),
    ({"bins": [True]}, "bins must be"), ({"gamma_max": [20]}, "other than 20"),
    ({"gamma_max": ["inf"]}, "'unbounded'"), ({"gamma_max": [0.5]}, r"\[1, 1e6\]"),
    ({"gamma_max": [50, 50.0]}, "must not repeat"), ({"dataset": "20newsgroups"}, "image data set"),
    ({"text_dataset": "cifar10"}, "text_dataset must be"), ({"device": "tpu"}, "device must be")])
def test_bad_parameters_are_refused_before_anything_trains(kw, match, stores):
    with pytest.raises(ValueError, match=match):
        exp.plan(**{"profile": "smoke", **kw})
    assert not (stores / "results").exists() and not (stores / "cache").exists()


def test_cpu_plan_reuses_the_mukhoti_runs_and_shares_the_main_adafocal_run():
    from replicate.experiments.focal_loss import plan as mukhoti

    p = exp.plan("cpu", device="cpu")
    assert set(p.groups) == {"image", "seeds", "bins", "gamma_max", "text"}
    mk = mukhoti.plan("cpu", device="cpu")
    for key in ("cross_entropy", "brier", "mmce", "ls005", "fl3", "flsd53"):
        assert p.image[(key, 1)].key == mk.image[(key, 1)].key, key            # same run, trained once
    assert p.text[("flsd53", 1)].key == mk.text[("flsd53", 1)].key
    seeds = p.group("seeds")
    assert sorted({s for _, s in seeds}) == [1, 2, 3]
    assert all(c.resolve()["train"]["eval_every_epoch"] for c in seeds.values())
    assert seeds[("cross_entropy", 1)].key == p.image[("cross_entropy", 1)].key
    assert seeds[("flsd53", 1)].key != p.image[("flsd53", 1)].key              # per-epoch records added
    main = p.image[("adafocal_paper", 1)].key
    assert p.group("bins")[("adafocal_paper", 1)].key == main == p.group("gamma_max")[("adafocal_paper", 1)].key
    nb = {exp.setting_of("bins", k): c.resolve()["loss_params"]["num_bins"] for (k, _), c in p.group("bins").items()}
    assert nb == {f"bins={n}": n for n in (5, 10, 15, 20, 30, 50)}
    gm = {exp.setting_of("gamma_max", k): c.resolve()["loss_params"]["gamma_max"]
          for (k, _), c in p.group("gamma_max").items()}
    assert gm == {"gamma_max=20": 20.0, "gamma_max=50": 50.0, "gamma_max=unbounded": exp.UNBOUNDED}
    assert all(c.resolve()["loss_params"]["variant"] == "paper" for c in p.group("gamma_max").values())
    assert p.references["cifar10"].note.startswith("CIFAR-10, ResNet-50")
    assert exp.plan("gpu", device="cpu").image[("adafocal_code", 1)].resolve()["model"] == rp.profiles.get_profile("gpu").model
    smoke = exp.plan("smoke", device="cpu")
    assert len(smoke.configs()) <= 9 and [m.key for m in smoke.methods["image"]] == list(exp.SMOKE_METHODS)


# ----------------------------------------------------------------------------- shared functions
def _adafocal_bins_reference(val_z, val_y, train_z, train_y, m=15):
    """AdaFocal's binning written out with numpy: np.interp edges, lower <= v < upper with
    bin 0 and bin m-1 open-ended."""
    p = softmax(val_z.astype(np.float64), axis=1)
    conf, hit = p.max(1), p.argmax(1) == val_y
    n = conf.size
    edges = np.interp(np.linspace(0, n, m + 1), np.arange(n), np.sort(conf))
    idx = np.clip(np.searchsorted(edges[1:-1], conf, side="right"), 0, m - 1)
    pt = softmax(train_z.astype(np.float64), axis=1)[np.arange(len(train_y)), train_y]
    tidx = np.clip(np.searchsorted(edges[1:-1], pt, side="right"), 0, m - 1)
    out = {"count": [], "confidence": [], "accuracy": [], "train_confidence": []}
    for b in range(m):
        s, t = idx == b, tidx == b
        out["count"].append(s.sum())
        out["confidence"].append(conf[s].mean() if s.any() else np.nan)
        out["accuracy"].append(hit[s].mean() if s.any() else np.nan)
        out["train_confidence"].append(pt[t].mean() if t.any() else np.nan)
    return edges, out


def test_validation_bins_match_a_numpy_rewrite_of_adafocals_binning():
    from replicate.training.diagnostics import validation_bins

    rng = np.random.default_rng(0)
    vz, vy = rng.normal(size=(300, K)) * 2, rng.integers(0, K, 300)
    tz, ty = rng.normal(size=(500, K)) * 3, rng.integers(0, K, 500)
    got = validation_bins(torch.tensor(vz), torch.tensor(vy), torch.tensor(tz), torch.tensor(ty))
    edges, want = _adafocal_bins_reference(vz, vy, tz, ty)
    np.testing.assert_allclose(got["edges"], edges, rtol=1e-12)
    for k, v in want.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-10, equal_nan=True, err_msg=k)
    assert sum(got["count"]) == 300 and sum(got["train_count"]) == 500


def test_per_epoch_validation_bins_do_not_change_training():
    """The engine's new per-epoch record: the same run with and without ``eval_every_epoch``
    ends at identical logits (recording consumes no randomness and leaves the model alone),
    and the last epoch's bins are the final model's validation bins, with AdaFocal's own
    bins (its loss state) equal to them."""
    from generated_data import generated_splits

    splits = generated_splits(sizes=(300, 200, 200))
    out = {}
    for record in (False, True):
        torch.manual_seed(0)
        model = rp.models.get_model("tiny_cnn", 10, width=8)
        s = training.TrainSettings(epochs=2, batch_size=64, lr=0.05, augment=False, eval_every_epoch=record,
                                   eval_batch_size=100)
        out[record] = training.train(model, rp.losses.get_loss("adafocal", variant="paper"), splits, s,
                                     device="cpu", progress="none")
    assert torch.equal(out[True].logits["test"][0], out[False].logits["test"][0])
    last = out[True].history[-1]
    assert "val_bins" in last and "val_bins" not in out[False].history[-1]
    from replicate.training.diagnostics import validation_bins

    again = validation_bins(*out[True].logits["val"])
    np.testing.assert_allclose(last["val_bins"]["confidence"], again["confidence"], rtol=1e-6)
    np.testing.assert_allclose(last["val_bins"]["edges"], last["loss_state"]["edges"], rtol=1e-12)
    np.testing.assert_allclose(last["val_bins"]["count"], last["loss_state"]["count"])


def _result(rng, history=None, n=N):
    logits = {s: (torch.from_numpy((rng.normal(size=(n, K)) * 2).astype(np.float32)),
                  torch.from_numpy(rng.integers(0, K, n))) for s in ("val", "test")}
    return training.TrainResult(model=None, history=history or [{"epoch": 1, "seconds": 0.1}], logits=logits,
                                selected_epoch=1, device="cpu")


def _run(seed, loss="cross_entropy", params=None, ood=True, history=None):
    rng = np.random.default_rng(seed)
    res = _result(rng, history)
    extra = {"cifar10c_gaussian5": (torch.from_numpy((rng.normal(size=(N, K)) * 0.7).astype(np.float32)),
                                    torch.zeros(N, dtype=torch.long), "noise")} if ood else None
    cfg = rruns.RunConfig("cifar10", loss, params or {}, profile="smoke", seed=seed)
    return rruns.write_record(cfg, res, store="results", logits_dtype="float32", ood=extra)


def test_ood_auroc_and_roc_against_sklearn_on_the_entropy(stores):
    a, b = _run(1), _run(2, ood=False)
    f = cmp.ood.evaluate_ood({("cross_entropy", 1): a, ("fl3", 2): b})
    assert f.attrs["missing"] == [("fl3", 2)] and set(f.method) == {"cross_entropy"}
    zi, _ = a.logits("test")
    zo, _ = a.logits("ood:cifar10c_gaussian5")
    T = rp.posthoc.fit_temperature(*a.logits("val"), method="grid", metric="ece").params["T"]
    for scaled, t in ((False, 1.0), (True, T)):
        h = np.r_[scipy_entropy(softmax(zi / t, axis=1), axis=1), scipy_entropy(softmax(zo / t, axis=1), axis=1)]
        want = 100 * roc_auc_score(np.r_[np.zeros(N), np.ones(N)], h)
        assert f[f.temperature_scaled == scaled]["value"].iloc[0] == pytest.approx(want, abs=1e-9)
    assert a.metrics["ood_auroc"]["cifar10c_gaussian5"]["pre"] * 100 == pytest.approx(f["value"].iloc[0])
    curves = cmp.ood.roc_curves({("cross_entropy", 1): a, ("fl3", 2): b})
    pre = curves[~curves.temperature_scaled]
    assert np.trapezoid(pre.tpr, pre.fpr) * 100 == pytest.approx(pre.auroc.iloc[0], abs=1e-9)
    with pytest.raises(ValueError, match="ood_set must be one of"):
        cmp.ood.evaluate_ood({}, "mnist")
    table = cmp.ood.ood_side_by_side(f, {"paper R110": pd.DataFrame()}, [cmp.METHODS["cross_entropy"],
                                                                        cmp.METHODS["fl3"]])
    assert table.loc["FL-3", ("Pre T", "ours")] == "–" and table.loc["FL-3", ("Pre T", "paper R110")] == "–"


def test_paper_rows_merge_spellings_and_keep_every_row():
    rows = cmp.layouts.paper_rows("ghosh2022", ["ece", "adaece"])
    assert rows.row.nunique() == 11
    tiny = rows[rows.row.str.startswith("Tiny-ImageNet")]
    assert set(tiny.metric) == {"ece", "adaece"} and tiny.row.nunique() == 1      # "Resnet-50" / "ResNet-50"
    cell = rows[(rows.row == "CIFAR-10, ResNet-50") & (rows.method == "adafocal") & (rows.metric == "ece")
                & ~rows.temperature_scaled]
    assert cell["mean"].iloc[0] == 0.8 and "printed '08'" in cell["note"].iloc[0]
    assert (cell["table"].iloc[0], cell["tables"].iloc[0]) == ("table1", "1")
    ood = cmp.layouts.paper_rows("ghosh2022", ["auroc"], settings=("ood=SVHN",))
    assert set(ood.row) == {"CIFAR-10, ResNet-110", "CIFAR-10, Wide-ResNet-26-10"}
    with pytest.raises(ValueError, match="reports no metric"):
        cmp.layouts.paper_rows("ghosh2022", ["rbs"])
    notes = cmp.layouts.table_notes("ghosh2022", ["table1"])
    assert (notes.printed == "08").sum() == 1 and (notes.cell == "table").sum() == 1
    renamed = cmp.layouts.rename_method(rows, "adafocal", "ours", drop=("brier",))
    assert not {"adafocal", "brier"} & set(renamed.method)
    assert (renamed.method == "ours").sum() == (rows.method == "adafocal").sum()


def test_settings_side_by_side_places_both_sides_and_the_difference():
    ours = pd.DataFrame({"table": "table9", "setting": ["bins=5", "bins=5"], "method": "adafocal",
                         "metric": ["ece", "adaece"], "temperature_scaled": False, "mean": [1.25, 2.0],
                         "sd": [np.nan, 0.5]})
    t = cmp.layouts.settings_side_by_side(ours, rep.table9_rows(), "table9", ("ece", "adaece"), ["bins=5", "bins=10"],
                                          {"adafocal": "ours"}, "adafocal")
    assert t.loc["bins=5", ("ECE (%)", "paper")] == "0.76" and t.loc["bins=5", ("ECE (%)", "ours")] == "1.25"
    assert t.loc["bins=5", ("ECE (%)", "ours − paper")] == "0.49"
    assert t.loc["bins=5", ("AdaECE (%)", "ours")] == "2.00 ± 0.50"
    assert t.loc["bins=10", ("ECE (%)", "ours")] == "–"
    with pytest.raises(ValueError, match="unknown metric"):
        cmp.layouts.settings_side_by_side(ours, None, "table9", ("eceX",), ["bins=5"], {"adafocal": "ours"}, "adafocal")


def test_metric_registry_has_the_adafocal_metrics():
    rng = np.random.default_rng(3)
    p, y = softmax(rng.normal(size=(400, K)) * 2, axis=1), rng.integers(0, K, 400)
    m = cmp.METRICS
    assert m["debiased_ece_30"][1](p, y, None) == rp.metrics.debiased_ece(p, y, n_bins=30)
    assert m["sweep_ece_mass"][1](p, y, None) == rp.metrics.ece_sweep(p, y, binning="mass")
    assert m["debiased_ece_30"][1](p, y, None) != m["debiased_ece"][1](p, y, None)


# ----------------------------------------------------------------------------- figures on synthetic records
def _history(rng, gammas=True):
    rows = []
    for e in range(1, EPOCHS + 1):
        conf = np.sort(rng.uniform(0.2, 1.0, 15))
        row = {"epoch": e, "seconds": 0.1, "test": {"error": float(rng.random()), "ece": float(rng.random())},
               "val_bins": {"count": [10.0] * 15, "confidence": conf.tolist(),
                            "accuracy": np.clip(conf - 0.1, 0, 1).tolist(), "train_confidence": conf.tolist(),
                            "edges": np.linspace(0, 1, 16).tolist()}}
        if gammas:
            row["loss_state"] = {"gamma": (np.arange(15) + e).tolist(), "gap": [0.1] * 15, "count": [10.0] * 15,
                                 "confidence": conf.tolist(), "accuracy": np.clip(conf - 0.1, 0, 1).tolist()}
        rows.append(row)
    return rows


def test_bins_history_and_figures_from_records(stores):
    rng = np.random.default_rng(0)
    ada = _run(1, "adafocal", {"variant": "paper"}, history=_history(rng))
    ce = _run(2, history=_history(rng, gammas=False))
    h = figs.bins_history(ada)
    assert len(h) == EPOCHS * 15 and np.allclose(h.gap, 0.1)
    assert np.allclose(figs.adaece_history(h), 10.0)                       # |C - A| = 0.1 in every bin
    g = figs.bins_history(ada, "loss_state")
    assert g[g.epoch == 2].gamma.tolist() == list(np.arange(15) + 2.0)
    assert not len(figs.bins_history(ce, "loss_state"))
    fig = figs.figure1({"CE": ce, "Ada": ada}, caption_text="synthetic")
    assert len(fig.axes[0].lines) == 2 and np.allclose(fig.axes[0].lines[0].get_ydata(), 10.0)
    assert len(figs.bin_dynamics({"Ada": ada}, bins=(0, 14)).axes) == 4
    with pytest.raises(ValueError, match="record no per-bin gammas"):
        figs.bin_dynamics({"CE": ce})
    with pytest.raises(ValueError, match="bins must be bin indices"):
        figs.figure1({"CE": ce}, bins=(15,))
    assert len(figs.common_binning({"CE": ce}).axes) == 3
    fig = figs.over_epochs({("CE", 1): ce, ("CE", 2): ada}, caption_text="profile: test")
    want = 100 * np.mean([[r["test"]["error"] for r in x.history] for x in (ce, ada)], axis=0)
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), want)
    for ax in fig.axes:                                   # the bands stay inside 0-100 (percent)
        for band in ax.collections:
            y = band.get_paths()[0].vertices[:, 1]
            assert y.min() >= 0.0 and y.max() <= 100.0
    assert "cut at 0 and 100" in " ".join(t.get_text() for t in fig.texts)
    frame = cmp.evaluate_runs({("cross_entropy", 1): ce, ("cross_entropy", 2): ada}, metrics=("ece",))
    fig = figs.error_bars(frame, {"cross_entropy": "CE"})
    bars = [p.get_height() for p in fig.axes[0].patches]
    pre = frame[~frame.temperature_scaled]["value"]
    assert bars[0] == pytest.approx(pre.mean())
    curves = cmp.ood.roc_curves({("cross_entropy", 1): ce})
    assert len(figs.roc_figure(curves).axes[0].lines) == 3


# ----------------------------------------------------------------------------- claims and the committed runs
def test_claims_from_an_empty_store_are_not_tested_with_the_reason(stores):
    log = rep.claims("smoke")
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(f) == 3 * len(C.definitions()) and len(ours) == 2 * len(C.definitions())
    assert (ours.verdict == "not tested").all() and ours.note.str.contains("not in the run store").all()
    assert set(ours.evidence) == {"ours: smoke, AdaFocal Eq. 4", "ours: smoke, AdaFocal code rule"}
    assert (f.section == exp.SECTION).all()
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_adafocal")
    assert source.builder == "replicate.experiments.adafocal.report:claims"
    assert rp.claims.build(source, "smoke").summary() == log.summary()


def test_committed_cpu_runs_agree_with_their_records():
    p = exp.plan("cpu", device="cpu")
    found = {k: r for g in p.groups.values() for k, c in g.items() if (r := rruns.find(c)) is not None
             and r.store == "results"}
    if not found:
        pytest.skip("the chapter's cpu runs are not in the results store")
    from replicate.training.diagnostics import validation_bins

    for (key, seed), run in list(found.items())[:12]:
        z, y = run.logits("test")
        assert rp.metrics.ece(rp.metrics.probs_from_logits(z), y) == pytest.approx(run.metrics["test"]["ece"],
                                                                                  abs=1e-9), key
        last = run.history[-1] if run.history else {}
        zv, yv = run.logits("val")
        got = rep.run_bins(run, np.ones((1, len(yv))))
        want = validation_bins(torch.as_tensor(zv), torch.as_tensor(yv))
        gap = 100 * (np.asarray(want["confidence"]) - np.asarray(want["accuracy"]))
        np.testing.assert_allclose(got["E_val"][0], gap, atol=1e-9, err_msg=key)
        np.testing.assert_allclose(got["E_val"][1][0], gap, atol=1e-9, err_msg=key)   # a weight of 1 everywhere
        if "val_bins" in last:      # the last epoch's record: the final model's validation bins (the
            rec = 100 * np.asarray(last["val_bins"]["confidence"], dtype=float)   # stored logits round a little)
            np.testing.assert_allclose(rec, got["C_val"][0], atol=0.01, err_msg=key)


def test_rule_difference_and_final_gammas_from_records(stores):
    hist = [{"epoch": 1, "seconds": 0.1, "loss_state": {"gamma": [1.5, 0.5]}},
            {"epoch": 2, "seconds": 0.1, "loss_state": {"gamma": [1.2, -0.2]}}]
    a, b = _run(1, "adafocal", {"variant": "paper"}, history=hist), _run(1, "adafocal", {"variant": "code"},
                                                                          history=hist)
    d = exp.rule_difference(a, b)
    assert d == {"min_abs_gamma": 0.2, "negative_gammas": 1, "max_logit_difference": 0.0}   # same seed: same logits
    assert rep.final_gammas(a).tolist() == [1.2, -0.2]


def test_same_models_names_the_variants_with_identical_logits(stores):
    """Two rules' runs drawn from the same generator seed are the same model; another seed is not."""
    p = exp.plan("smoke", device="cpu")
    same = {("adafocal_paper", 1): _run(1, "adafocal", {"variant": "paper"}),
            ("adafocal_code", 1): _run(1, "adafocal", {"variant": "code"})}
    got = rep.twins(p, {"image": same})
    assert list(got) == ["cifar10, tiny_cnn"] and "identical test logits (seed 1)" in got["cifar10, tiny_cnn"]
    sentence = views.same_sentence(p.profile, rep.same_models(p, {"image": same}))
    assert "trained the same model" in sentence and "AdaFocal code rule and AdaFocal Eq. 4" in sentence
    other = {("adafocal_paper", 1): same[("adafocal_paper", 1)], ("adafocal_code", 1): _run(2, "adafocal",
                                                                                        {"variant": "code"})}
    assert rep.twins(p, {"image": other}) == {}
    assert "no two variants trained the same model" in views.same_sentence(p.profile,
                                                                           rep.same_models(p, {"image": other}))


def test_twin_note_says_what_the_two_flsd_runs_show():
    from types import SimpleNamespace

    twin_note = views.twin_note

    def run(device, ece):
        return SimpleNamespace(provenance={"device": device}, metrics={"test": {"ece": ece}})

    same = twin_note(1, run("cpu (1 threads, x86_64)", 0.0643), run("cpu (1 thread, x86_64)", 0.0643))
    assert "both trained on cpu (1 thread, x86_64)" in same and "6.43 %" in same and "noise" not in same
    other = twin_note(1, run("cpu (1 thread, x86_64)", 0.0643), run("cpu (2 threads, x86_64)", 0.0701))
    assert "number of CPU threads" in other and "6.43 %" in other and "7.01 %" in other and "noise" in other
    odd = twin_note(2, run("cpu (1 thread, x86_64)", 0.05), run("cpu (1 thread, x86_64)", 0.06))
    assert "yet they end at" in odd and "seed-2" in odd
    assert "not available" in twin_note(1, None, run("cpu", 0.05))


def test_side_by_side_headings_are_the_glossarys_words():
    """Issue #32, item 1: a table heading is the metric's name as the glossary writes it."""
    assert cmp.layouts.heading("classwise_ece") == "classwise ECE (%)"
    assert cmp.layouts.heading("ece", True) == "ECE (%) post T"
    assert cmp.layouts.heading("sweep_ece_mass") == "ECE sweep (%, equal-mass)"
    assert all("_" not in cmp.layouts.heading(m) for m in cmp.METRICS)


def test_the_seeds_table_and_a_paper_pivot_are_headed_in_words():
    from replicate.book import notebook_checks
    from replicate.experiments.adafocal import views

    rows = [{"method": m, "seed": s, "metric": metric, "temperature_scaled": ts, "value": v + s / 10,
             "T": 1.2 if ts else np.nan}
            for m in ("cross_entropy", "adafocal_paper") for s in (1, 2) for metric, v in (("ece", 5.0), ("error", 30.0))
            for ts in (False, True)]
    html = views.seeds_table(pd.DataFrame(rows)).to_html()
    assert notebook_checks.table_problems(html) == []
    assert "Cross-Entropy" in html or cmp.METHODS["cross_entropy"].short in html
    assert "ECE (%) post T" in html and "5.15 ± 0.07" in html
    pivot = pd.DataFrame({"adafocal": [0.2], "flsd53": [np.nan]}, index=pd.Index(["CIFAR-100, ResNet-50"], name="row"))
    html = views.by_label(pivot, "network").to_html()
    assert notebook_checks.table_problems(html) == [] and "FLSD-53" in html and "AdaFocal" in html


def test_rows_by_label_shows_method_labels_and_no_index():
    from replicate.book import notebook_checks

    frame = pd.DataFrame({"T by ece": [1.2, np.nan], "test ECE %, T by ece": [1.234567, 2.0]},
                         index=["cross_entropy", "flsd53"])
    html = cmp.layouts.rows_by_label(frame).to_html()
    assert notebook_checks.table_problems(html) == [] and "FLSD-53" in html and "1.23" in html


def test_the_printed_number_of_adafocal_runs_is_table1s_caption():
    """Issue #32, item 5: "AdaFocal's being a mean over N runs" reads the stored caption of
    Table 1, and the paper's own text prints that caption."""
    from needs import paper_text

    from replicate.experiments.adafocal import views

    n = views.printed_ada_runs()
    assert n.isdigit() and int(n) > 1
    text = paper_text("ghosh2022")
    assert any(f"For AdaFocal, the values are averaged over {n} runs." in line for line in text)
    with pytest.raises(KeyError):
        views.printed_ada_runs("table99")
