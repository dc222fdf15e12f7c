"""Comparison of methods with the paper's tables: evaluation against independent computations,
paper rows against the printed text, table layout, parameter validation, and
one end-to-end pass (two methods trained on generated data) against the run store's own metrics.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.special import log_softmax, softmax

from replicate import comparison as cmp
from replicate.experiments.focal_loss import plan as mk
from replicate import data, metrics, runs
from generated_data import generated_splits


# ----------------------------------------------------------------------------- independent references
def ece_ref(p, y, n_bins=15):
    """Equal-width ECE with (lower, upper] bins, written out bin by bin."""
    conf, hit = p.max(1), p.argmax(1) == y
    edges = np.linspace(0, 1, n_bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            total += m.mean() * abs(hit[m].mean() - conf[m].mean())
    return total


def mce_ref(p, y, n_bins=15):
    conf, hit = p.max(1), p.argmax(1) == y
    edges = np.linspace(0, 1, n_bins + 1)
    return max(abs(hit[m].mean() - conf[m].mean()) for lo, hi in zip(edges[:-1], edges[1:])
               if (m := (conf > lo) & (conf <= hi)).any())


def classwise_ref(p, y, n_bins=15):
    k = p.shape[1]
    edges = np.linspace(0, 1, n_bins + 1)
    per_class = []
    for c in range(k):
        q, hit = p[:, c], (y == c)
        tot = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            m = (q > lo) & (q <= hi)
            if m.any():
                tot += m.mean() * abs(hit[m].mean() - q[m].mean())
        per_class.append(tot)
    return float(np.mean(per_class))


def brute_T(z, y, score):
    """The papers' grid 0.1..10.0, first minimum (ties keep the smaller T)."""
    grid = np.round(np.arange(1, 101) * 0.1, 1)
    vals = [score(softmax(z / t, axis=1), y) for t in grid]
    return float(grid[int(np.argmin(vals))])


def overconfident(n, k, seed, scale=4.0):
    """Logits whose labels are drawn from softmax(z / 2.5): the model is over-confident."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    p = softmax(z / 2.5, axis=1)
    y = (p.cumsum(1) > rng.random((n, 1))).argmax(1)
    return z, y


# ----------------------------------------------------------------------------- evaluation
def test_evaluate_logits_matches_independent_computations():
    vz, vy = overconfident(1500, 5, 0)
    tz, ty = overconfident(2000, 5, 1)
    f = cmp.evaluate_logits(vz, vy, tz, ty).set_index(["metric", "temperature_scaled"])
    p = softmax(tz, axis=1)
    T = brute_T(vz, vy, ece_ref)
    pt = softmax(tz / T, axis=1)
    assert T > 1.5                                   # the construction is over-confident
    assert f.loc[("ece", False), "value"] == pytest.approx(100 * ece_ref(p, ty), abs=1e-9)
    assert f.loc[("ece", True), "T"] == T and f.loc[("ece", True), "T_selected_by"] == "ece"
    assert f.loc[("ece", True), "value"] == pytest.approx(100 * ece_ref(pt, ty), abs=1e-9)
    assert f.loc[("mce", True), "value"] == pytest.approx(100 * mce_ref(pt, ty), abs=1e-9)
    assert f.loc[("classwise_ece", False), "value"] == pytest.approx(100 * classwise_ref(p, ty), abs=1e-9)
    nll = -log_softmax(tz / T, axis=1)[np.arange(len(ty)), ty].mean()
    assert f.loc[("nll", True), "value"] == pytest.approx(100 * nll, rel=1e-10)
    err = 100 * np.mean(tz.argmax(1) != ty)
    assert f.loc[("error", False), "value"] == pytest.approx(err)
    assert f.loc[("error", True), "value"] == pytest.approx(err)
    s99 = pt.max(1) >= 0.99
    assert f.loc[("s99_fraction", True), "value"] == pytest.approx(100 * s99.mean())
    assert f.loc[("s99_accuracy", True), "value"] == pytest.approx(100 * (pt.argmax(1) == ty)[s99].mean())
    # AdaECE: its T is chosen by validation AdaECE (brute force over the grid), then applied
    T_ada = brute_T(vz, vy, lambda q, yy: metrics.adaptive_ece(q, yy))
    assert f.loc[("adaece", True), "T"] == T_ada and f.loc[("adaece", True), "T_selected_by"] == "adaece"
    assert f.loc[("adaece", True), "value"] == pytest.approx(
        100 * metrics.adaptive_ece(softmax(tz / T_ada, axis=1), ty), abs=1e-9)
    assert math.isnan(f.loc[("ece", False), "T"])


def test_summarise_gives_mean_and_sample_std_over_seeds():
    ours = pd.DataFrame({"method": ["a", "a", "a"], "seed": [1, 2, 3], "metric": "ece", "temperature_scaled": True,
                         "value": [1.0, 2.0, 4.0], "T": [1.1, 1.2, 1.6], "T_selected_by": "ece"})
    s = cmp.summarise(ours).iloc[0]
    assert s["mean"] == pytest.approx(7 / 3) and s["std"] == pytest.approx(np.std([1, 2, 4], ddof=1))
    assert s["T"] == pytest.approx(1.3) and s["n_seeds"] == 3


# ----------------------------------------------------------------------------- the paper's rows
def test_paper_values_hold_the_printed_numbers_once_with_their_tables():
    ref = cmp.paper_reference("cifar10", "resnet50")
    assert ref.exact and (ref.dataset, ref.model) == ("CIFAR-10", "ResNet 50")
    pv = cmp.paper_values(ref).set_index(["method", "metric", "temperature_scaled"])
    assert not pv.index.duplicated().any()
    # Table 1, CIFAR-10 ResNet 50: "4.35 1.35(2.50) ... 1.55 0.95(1.10)"
    assert pv.loc[("cross_entropy", "ece", False), "mean"] == 4.35
    assert (pv.loc[("cross_entropy", "ece", True), "mean"], pv.loc[("cross_entropy", "ece", True), "T"]) == (1.35, 2.5)
    assert pv.loc[("flsd53", "ece", True), "tables"] == "1, 4, 7"
    assert pv.loc[("fl1", "ece", False), "tables"] == "7"
    # Table 3: error of FLA-53 4.98; Table 6 "Focal Loss" post-T |S99| 14.27 is keyed flsd53
    assert pv.loc[("flsd53", "error", False), "mean"] == 4.98
    assert pv.loc[("flsd53", "s99_fraction", True), "mean"] == 14.27
    assert not (pv.reset_index().metric == "classwise_ece").any()
    text = cmp.paper_values(cmp.paper_reference("20newsgroups", "text_cnn")).set_index(
        ["method", "metric", "temperature_scaled"])
    assert text.loc[("cross_entropy", "ece", False), "mean"] == 17.92   # Table 1, 20 Newsgroups row
    assert not (text.reset_index().metric == "s99_fraction").any()        # Table 6 is CIFAR-10 only


def test_paper_reference_closest_rows_and_refusals():
    small = cmp.paper_reference("cifar10", "tiny_cnn")
    assert not small.exact and small.model == "ResNet 50" and "tiny_cnn" in small.note
    assert cmp.paper_reference("cifar100", "resnet110").model == "ResNet 110"
    assert cmp.paper_reference("20newsgroups", "text_cnn").exact
    none = cmp.paper_reference("svhn", "resnet50")
    assert not none.found and "reports no svhn row" in none.note and cmp.paper_values(none).empty
    assert "paper: Mukhoti et al. (2020) reports no svhn row" in cmp.table_caption("ece", none, "ours")


# ----------------------------------------------------------------------------- layout
def _ours(rows):
    return pd.DataFrame([{"method": m, "seed": s, "metric": met, "temperature_scaled": ts, "value": v, "T": t,
                          "T_selected_by": "ece" if ts else ""} for m, s, met, ts, v, t in rows])


def test_side_by_side_layout_values_and_difference():
    ours = _ours([("cross_entropy", 1, "ece", False, 5.0, math.nan), ("cross_entropy", 2, "ece", False, 6.0, math.nan),
                  ("cross_entropy", 1, "ece", True, 1.0, 2.0), ("cross_entropy", 2, "ece", True, 2.0, 2.2),
                  ("ls005", 1, "ece", False, 3.0, math.nan), ("ls005", 1, "ece", True, 2.5, 1.1)])
    paper = cmp.paper_values(cmp.paper_reference("cifar10", "resnet50"))
    methods = cmp.resolve_methods(["cross_entropy", "ls005"])
    t = cmp.side_by_side(ours, paper, "ece", methods)
    assert list(t.columns) == [(ph, c) for ph in ("Pre T", "Post T") for c in ("paper", "ours", "ours − paper")]
    assert list(t.index) == ["Cross Entropy", "LS-0.05"]
    sd = np.std([5.0, 6.0], ddof=1)
    assert t.loc["Cross Entropy", ("Pre T", "ours")] == f"5.50 ± {sd:.2f}"
    assert t.loc["Cross Entropy", ("Pre T", "paper")] == "4.35"
    assert t.loc["Cross Entropy", ("Pre T", "ours − paper")] == f"{5.5 - 4.35:.2f}"
    assert t.loc["Cross Entropy", ("Post T", "paper")] == "1.35 (2.50)"
    assert t.loc["Cross Entropy", ("Post T", "ours")] == f"1.50 ± {np.std([1, 2], ddof=1):.2f} (2.10 ± 0.14)"
    assert t.loc["LS-0.05", ("Pre T", "paper")] == "–" and t.loc["LS-0.05", ("Pre T", "ours − paper")] == "–"
    assert t.loc["LS-0.05", ("Post T", "ours")] == "2.50 (1.10)"      # one seed: no ±
    err = cmp.side_by_side(_ours([("cross_entropy", 1, "error", False, 40.0, math.nan)]), paper, "error", methods[:1],
                           temperature=False)
    assert list(err.columns.get_level_values(0).unique()) == ["Pre T"]
    assert err.iloc[0][("Pre T", "ours − paper")] == f"{40 - 4.95:.2f}"
    with pytest.raises(ValueError, match="metric must be one of"):
        cmp.side_by_side(ours, paper, "accuracy", methods)


def test_s99_table_has_table6_layout():
    cells = [(m, met, ts) for m in ("cross_entropy", "flsd53") for met in ("s99_fraction", "s99_accuracy")
             for ts in (False, True)]
    ours = _ours([(m, 1, met, ts, 10.0 + i, 1.5 if ts else math.nan) for i, (m, met, ts) in enumerate(cells)])
    paper = cmp.paper_values(cmp.paper_reference("cifar10", "resnet50"))
    t = cmp.s99_side_by_side(ours, paper, cmp.resolve_methods(["cross_entropy", "flsd53"]))
    assert t.columns.nlevels == 3
    assert t.loc["Cross Entropy", ("Post T", "|S99| %", "paper")] == "7.33"
    assert t.loc["FLSD-53 (FLA-53)", ("Pre T", "accuracy on S99 %", "paper")] == "99.57"


# ----------------------------------------------------------------------------- verdicts
# ----------------------------------------------------------------------------- plan and helpers
@pytest.mark.parametrize("kw, match", [
    ({"profile": "laptop"}, "unknown profile"),
    ({"methods": ["focal"]}, "unknown method"),
    ({"methods": []}, "at least one method"),
    ({"methods": ["fl1", "fl1"]}, "repeat"),
    ({"seeds": []}, "seeds"),
    ({"seeds": [1, 1]}, "seeds must not repeat"),
    ({"seeds": [-1]}, "seeds"),
    ({"dataset": "20newsgroups"}, "dataset must be an image data set"),
    ({"text_dataset": "cifar10"}, "text_dataset must be one of"),
    ({"dataset": "mnist"}, "unknown dataset"),
    ({"model": "vgg"}, "unknown model"),
    ({"device": "tpu"}, "device"),
])
def test_plan_refuses_bad_parameters_before_training(kw, match):
    with pytest.raises(ValueError, match=match):
        mk.plan(**{"profile": "smoke", **kw})


def test_plan_builds_every_configuration_with_its_options():
    p = mk.plan("smoke")
    assert [m.key for m in p.methods["image"]] == list(mk.SMOKE_METHODS)
    assert set(p.image) == {(k, 1) for k in mk.SMOKE_METHODS} == set(p.text)
    assert p.image[("cross_entropy", 1)].options == {"eval_every_epoch": True}
    assert p.image[("flsd53", 1)].options == {}
    assert all(c.options == {} for c in p.text.values())        # text runs: no per-epoch records
    full = mk.plan("cpu", methods=["mmce"], seeds=[1, 2])
    assert full.image[("mmce", 2)].resolve()["loss_params"]["lam"] == 2.0
    assert full.text[("mmce", 1)].resolve()["loss_params"]["lam"] == 8.0   # Appendix D: lambda 8 on text
    assert not full.references["cifar10"].exact and full.references["20newsgroups"].exact
    assert mk.plan("smoke", text_dataset=None).text == {}
    paper = mk.plan("paper", methods=["cross_entropy"])
    r = paper.image[("cross_entropy", 1)].resolve()
    assert (r["model"], r["train"]["epochs"], r["train"]["lr_step_at_epoch_start"]) == ("resnet50", 350, True)
    assert paper.references["cifar10"].exact and paper.references["cifar10"].model == "ResNet 50"
    t = paper.text[("cross_entropy", 1)].resolve()["train"]
    assert (t["optimizer"], t["epochs"], t["select"]) == ("adam", 50, "best_val_accuracy")   # Appendix D
    assert len(mk.default_methods("cpu")) == 11


def test_quote_and_caption():
    pv = cmp.paper_values(cmp.paper_reference("cifar10", "resnet50"))
    assert cmp.quote(pv, "cross_entropy", "ece") == "4.35"
    assert cmp.quote(pv, "cross_entropy", "ece", True, "T", digits=1) == "2.5"
    assert cmp.quote(pv, "ls005", "ece") == "not available"
    cap = cmp.table_caption("adaece", cmp.paper_reference("cifar10", "tiny_cnn"), "ours: profile cpu")
    assert "Tables 2, 5, 8" in cap and "by AdaECE" in cap and "closest row" in cap and "ours: profile cpu" in cap
    assert "not reported" in cmp.table_caption("classwise_ece", cmp.paper_reference("cifar10", "resnet50"), "ours")
    with pytest.raises(ValueError, match="col must be"):
        cmp.quote(pv, "cross_entropy", "ece", col="median")


# ----------------------------------------------------------------------------- end to end on generated data
def fake_load(name, data_dir=None, split="reference", val_size=None, split_seed=1, **options):
    return generated_splits(name)


def test_end_to_end_evaluation_agrees_with_the_run_store(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(data, "load", fake_load)
    runs.clear_data_cache()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        p = mk.plan("smoke", methods=["cross_entropy", "flsd53"], text_dataset=None, device="cpu")
        trained = cmp.train(p, log=None)
        image, text = trained["image"], trained.get("text", {})
    finally:
        torch.set_num_threads(threads)
        runs.clear_data_cache()
    assert text == {} and set(image) == {("cross_entropy", 1), ("flsd53", 1)}
    ours = cmp.evaluate_runs(image)
    for (key, seed), run in image.items():
        f = ours[(ours.method == key)].set_index(["metric", "temperature_scaled"])
        # the store evaluated with its own one-pass metrics and fitted T by validation ECE
        assert f.loc[("ece", True), "T"] == run.temperature
        for metric in ("ece", "adaece", "classwise_ece", "mce", "nll", "error"):
            want = 100 * run.metrics["test"][metric]
            assert f.loc[(metric, False), "value"] == pytest.approx(want, rel=1e-6, abs=1e-6)
        for metric in ("ece", "mce", "nll", "classwise_ece"):
            want = 100 * run.metrics["test_ts"][metric]
            assert f.loc[(metric, True), "value"] == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert "generated" in cmp.describe_runs(image, cmp.data_name(image[("flsd53", 1)]))
    assert len(image[("cross_entropy", 1)].history[0]["test"]) > 0          # per-epoch records for the figures


@pytest.mark.parametrize("profile, text", [("cpu", "20newsgroups")])
def test_committed_chapter_runs_agree_with_their_records(profile, text):
    """The runs the chapter reads from the committed store: our recomputed tables agree with
    the metrics the store wrote when each run finished (float16 logits, hence the tolerance)."""
    p = mk.plan(profile, text_dataset=text, device="cpu")
    for cfgs in (p.image, p.text):
        found = {k: runs.find(c) for k, c in cfgs.items()}
        if any(r is None or r.store != "results" for r in found.values()):
            pytest.skip(f"the chapter's {profile} runs are not in the results store (profile changed since)")
        ours = cmp.evaluate_runs(found) if found else None
        for (key, seed), run in found.items():
            f = ours[(ours.method == key) & (ours.seed == seed)].set_index(["metric", "temperature_scaled"])
            assert f.loc[("ece", True), "T"] == pytest.approx(run.temperature)
            for metric in ("ece", "error", "nll"):
                assert f.loc[(metric, False), "value"] == pytest.approx(100 * run.metrics["test"][metric], abs=0.05)
