"""The AdaFocal experiment chapter: its plan (validated before anything trains, equal to the
chapter's parameters cell, sharing the Mukhoti chapter's runs), the rules on constructed
numbers and on the paper's own printed tables, the shared functions it added (validation
bins, OOD AUROC and ROC, paper rows, ablation tables, table notes) against independent
computations, its figures on synthetic records, and the committed cpu runs against their
records. Nothing trains here."""
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
from replicate.experiments.adafocal import plan as exp  # noqa: E402
from replicate.experiments.adafocal import claims as C  # noqa: E402
from replicate.experiments.adafocal import evidence as ev  # noqa: E402
from replicate.experiments.adafocal import figure_rules as F  # noqa: E402
from replicate.experiments.adafocal import rules as R  # noqa: E402
from replicate.experiments.adafocal import figures as figs  # noqa: E402

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


# ----------------------------------------------------------------------------- rules on constructed numbers
def _ev(cells, **kw):
    """Evidence from ``{(row, setting, method, metric, scaled): value}`` (T in a "T" entry)."""
    rows = [{"table": "", "row": r, "dataset_key": r.split(",")[0], "model_key": "", "setting": s, "method": m,
             "metric": met, "temperature_scaled": sc, "mean": v, "sd": np.nan, "se": np.nan, "T": t,
             "T_sd": np.nan, "n": 1, "note": ""}
            for (r, s, m, met, sc), (v, t) in ((k, v if isinstance(v, tuple) else (v, np.nan))
                                              for k, v in cells.items())]
    return ev.Evidence(pd.DataFrame(rows, columns=cmp.layouts.LONG), **kw)


def _table1(row, ada, **others):
    return {(row, "", m, "ece", False): v for m, v in {"adafocal": ada, **others}.items()}


def verdict(rule, e):
    return rp.claims.as_outcome(rule(e)[1])


def test_share_and_universal_rules_count_rows():
    e = _ev({**_table1("cifar10, a", 1.0, cross_entropy=3.0, flsd53=2.0),
             **_table1("cifar100, b", 2.5, cross_entropy=3.0, flsd53=2.0)})
    low = lambda v: R._lowest(v, R.TABLE1)  # noqa: E731
    assert verdict(R.share_rule(low, "ece", 0.5, "x"), e).verdict == "holds"
    assert verdict(R.share_rule(low, "ece", 9 / 11, "x"), e).verdict == "fails"
    assert verdict(R.every_rule(low, "ece", "x"), e).verdict == "fails"
    assert "not: cifar100, b" in R.every_rule(low, "ece", "x")(e)[0]
    assert R.share_rule(low, "ece", 0.5, "x")(_ev({("r", "", "adafocal", "ece", False): 1.0}))[1] is None
    o = verdict(R.lowest_readings(("ece",), R.TABLE1, "x"), e)
    assert o.verdict == "fails" and "every row: fails" in o.note               # 1 of 2 is not "most"
    e3 = _ev({**_table1("a, x", 1.0, cross_entropy=3.0), **_table1("b, y", 1.0, cross_entropy=3.0),
              **_table1("c, z", 4.0, cross_entropy=3.0)})
    assert verdict(R.lowest_readings(("ece",), R.TABLE1, "x"), e3).verdict == "depends on reading"


def test_temperature_rule_uses_the_books_one_close_to_one():
    def e(t):
        return _ev({("r", "", "adafocal", "ece", True): (1.0, t), ("s", "", "adafocal", "ece", True): (1.0, 1.0)})
    rule = R.t_near_one(rp.comparison.wording.T_TOLERANCE)
    assert verdict(rule, e(1.1)).verdict == "holds"            # the grid value 1.1: |T - 1| = 0.1
    assert verdict(rule, e(1.12)).verdict == "fails"           # 20 Newsgroups in Table 1: no looser reading
    assert "T = 1 in 1 of 2 rows" in rule(e(1.3))[0]


def test_bins_rule_needs_both_ends_and_the_middle():
    def e(vals):
        return _ev({("r", f"bins={n}", "adafocal", m, False): v for n, v in vals.items() for m in R.TABLE9})
    assert verdict(R.bins_best_middle, e({5: 2.0, 15: 1.0, 30: 1.5})).verdict == "holds"
    assert verdict(R.bins_best_middle, e({5: 2.0, 15: 1.0, 30: 0.5})).verdict == "fails"
    o = verdict(R.bins_best_middle, e({15: 1.0, 30: 1.5}))
    assert o.verdict == "not tested"


def test_seed_rules_need_several_runs():
    per_seed = pd.DataFrame([{"setting": "", "method": m, "seed": s, "metric": "ece", "temperature_scaled": False,
                              "value": v} for m, vals in (("adafocal", (1.0, 1.2)), ("flsd53", (2.0, 2.2)),
                                                          ("cross_entropy", (4.0, 4.5))) for s, v in
                             zip((1, 2), vals)])
    e = _ev({}, per_seed=per_seed)
    assert verdict(F.error_bars_separate, e).verdict == "holds"
    assert verdict(F.runs_below_flsd("", 1.0, "x"), e).verdict == "holds"
    assert verdict(F.more_variable, e).verdict == "not tested"
    assert verdict(F.error_bars_separate, _ev({})).verdict == "not tested"    # the paper: figure only
    one = _ev({}, per_seed=per_seed[per_seed.seed == 1])
    assert verdict(F.error_bars_separate, one).verdict == "not tested"


def _bins(method, conf, acc, train=None):
    n = len(conf)
    return pd.DataFrame({"bin": np.arange(n), "count": 10.0, "confidence": conf, "accuracy": acc,
                         "train_confidence": train if train is not None else np.nan, "method": method})


def test_bin_rules_on_constructed_gaps():
    b = pd.concat([_bins("cross_entropy", [0.5, 0.7, 0.9], [0.3, 0.5, 0.7], [0.6, 0.8, 0.95]),
                   _bins("fl3", [0.45, 0.65, 0.85], [0.4, 0.6, 0.8], [0.5, 0.7, 0.9]),
                   _bins("fl4", [0.4, 0.62, 0.82], [0.41, 0.61, 0.81], [0.45, 0.65, 0.85]),
                   _bins("fl5", [0.35, 0.6, 0.8], [0.4, 0.6, 0.9], [0.4, 0.6, 0.8]),
                   _bins("flsd53", [0.42, 0.6, 0.85], [0.4, 0.62, 0.8]),
                   _bins("adafocal", [0.4, 0.6, 0.8], [0.4, 0.6, 0.8])], ignore_index=True)
    e = _ev({}, bins=b)
    assert verdict(F.ce_overconfident_every_bin, e).verdict == "holds"
    assert verdict(F.ada_lowest_every_bin, e).verdict == "holds"
    assert verdict(F.fl4_lowest_adaece, e).verdict == "holds"
    assert verdict(F.no_single_gamma, e).verdict == "holds"                   # FL-4 in bins 0, 1; FL-5 in bin 1
    assert verdict(F.flsd_not_best, e).verdict == "holds"
    assert verdict(F.correspondence, e).verdict == "holds"
    assert verdict(F.correspondence, _ev({}, bins=b.assign(train_confidence=np.nan))).verdict == "not tested"
    assert verdict(F.ce_overconfident_every_bin, _ev({})).verdict == "not tested"


def test_gamma_rules_read_the_final_gammas():
    def e(setting, g):
        return _ev({}, gammas=pd.DataFrame({"setting": setting, "seed": 1, "bin": np.arange(len(g)), "gamma": g}))
    assert verdict(F.gamma_ends, e("gamma_max=20", [19.0, 5.0, 1.2])).verdict == "holds"
    assert verdict(F.gamma_ends, e("gamma_max=20", [2.0, 5.0, 1.2])).verdict == "fails"
    assert verdict(F.unbounded_blows_up, e("gamma_max=unbounded", [300.0, 40, 9, 3, 2, 1])).verdict == "holds"
    assert verdict(F.unbounded_blows_up, e("gamma_max=unbounded", [3.0, 4, 9, 3, 2, 1])).verdict == "fails"
    assert verdict(F.gamma_ends, e("gamma_max=50", [19.0, 5.0, 1.2])).verdict == "not tested"


def test_ood_rules():
    def cells(ada, fl3_pre, fl3_post, ce_post):
        return {("r, m", "ood=CIFAR-10-C", "adafocal", "auroc", False): ada,
                ("r, m", "ood=CIFAR-10-C", "fl3", "auroc", False): fl3_pre,
                ("r, m", "ood=CIFAR-10-C", "fl3", "auroc", True): fl3_post,
                ("r, m", "ood=CIFAR-10-C", "cross_entropy", "auroc", False): 80.0,
                ("r, m", "ood=CIFAR-10-C", "cross_entropy", "auroc", True): ce_post}
    beats = R.ood_beats(("fl3", "flsd53"), "x")
    everyone = R.ood_beats(("cross_entropy", "fl3"), "x")
    assert verdict(beats, _ev(cells(90, 85, 86, 95))).verdict == "holds"
    assert verdict(everyone, _ev(cells(90, 85, 86, 95))).verdict == "fails"   # CE post-T above AdaFocal
    assert verdict(beats, _ev(cells(85, 85, 84, 80))).verdict == "fails"      # a tie is not "outperform"
    ts = R.ts_ineffective(1.0)
    assert verdict(ts, _ev(cells(90, 85, 86, 80.5))).verdict == "holds"
    assert verdict(ts, _ev(cells(90, 85, 87, 80))).verdict == "fails"


def test_every_rule_answers_on_empty_evidence_with_a_verdict_of_the_vocabulary():
    for claim in C.rules():
        numbers, outcome = claim.rule(_ev({}))
        assert rp.claims.as_outcome(outcome).verdict in rp.claims.VERDICTS and isinstance(numbers, str)
    with pytest.raises(ValueError, match="error_tolerance"):
        C.rules(error_tolerance=-1)


# ----------------------------------------------------------------------------- the paper's own tables
def test_rules_on_the_papers_printed_tables():
    """Expected verdicts read off the printed tables (our reading of damaged cells):
    Table 1 pre-T AdaFocal is lowest except Tiny-ImageNet (FLSD-53 1.76 < 2.41) and ImageNet
    (CE 2.81 < 3.68): 9 of 11; with post-T cells it loses on CIFAR-100 WRN (FLSD-53 1.64),
    DenseNet (1.31), Tiny-ImageNet (1.76) and 20 Newsgroups (2.19): 7 of 11; its T is 1.12
    on 20 Newsgroups (not close to 1 by the book's one reading, |T - 1| <= 0.1); its error is 1.85 points above CE's there (28.53 vs 26.68); classwise
    ECE (Table 4) is strictly lowest in 5 rows only (ties 0.20/0.16/0.03); in Table 10 CE and
    MMCE post-T (97.62, 97.95) beat AdaFocal's 96.63 on Wide-ResNet/SVHN."""
    paper = ev.paper_evidence()
    got = {c.text: rp.claims.as_outcome(c.rule(paper)[1]) for c in C.rules()}
    v = {k[:40]: o.verdict for k, o in got.items()}
    expected = {
        "Before temperature scaling AdaFocal has ": "holds",
        "With temperature scaling included, AdaFo": "holds",
        "AdaFocal's optimal temperature is 1 in m": "fails",         # T 1.12 on 20 Newsgroups: |T - 1| > 0.1
        "For any dataset-model pair AdaFocal lead": "fails",
        "AdaFocal substantially outperforms the r": "fails",
        "AdaFocal improves calibration without a ": "holds with conditions",
        "FLSD-53 is much better calibrated than C": "holds",
        "AdaFocal outperforms all the baselines b": "fails",            # classwise (the AdaECE one below)
        "The debiased estimates (ECE_debias 15 an": "depends on reading",
        "The best results come from 10 to 20 vali": "holds",
        "AdaFocal is significantly better at OOD ": "fails",
        "Models trained with AdaFocal outperform ": "holds",
        "Temperature scaling is ineffective for O": "holds",
    }
    for k, want in expected.items():
        assert v[k] == want, (k, v[k])
    ada = [o for t, o in got.items() if "in AdaECE" in t][0]
    assert ada.verdict == "depends on reading" and "most rows: holds" in ada.note
    first = C.rules()[0].rule(paper)[0]
    assert "9 of 11" in first and "Tiny-ImageNet" in first and "ImageNet, ResNet-50" in first
    figure_only = [t for t, o in got.items() if o.verdict == "not tested"]
    assert len(figure_only) >= 15 and all(got[t].note for t in figure_only)


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
    t = cmp.layouts.settings_side_by_side(ours, ev.table9_rows(), "table9", ("ece", "adaece"), ["bins=5", "bins=10"],
                                          {"adafocal": "ours"}, "adafocal")
    assert t.loc["bins=5", ("ece", "paper")] == "0.76" and t.loc["bins=5", ("ece", "ours")] == "1.25"
    assert t.loc["bins=5", ("ece", "ours − paper")] == "0.49"
    assert t.loc["bins=5", ("adaece", "ours")] == "2.00 ± 0.50"
    assert t.loc["bins=10", ("ece", "ours")] == "–"
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
    fig = figs.over_epochs({("CE", 1): ce, ("CE", 2): ada})
    want = 100 * np.mean([[r["test"]["error"] for r in x.history] for x in (ce, ada)], axis=0)
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), want)
    frame = cmp.evaluate_runs({("cross_entropy", 1): ce, ("cross_entropy", 2): ada}, metrics=("ece",))
    fig = figs.error_bars(frame, {"cross_entropy": "CE"})
    bars = [p.get_height() for p in fig.axes[0].patches]
    pre = frame[~frame.temperature_scaled]["value"]
    assert bars[0] == pytest.approx(pre.mean())
    curves = cmp.ood.roc_curves({("cross_entropy", 1): ce})
    assert len(figs.roc_figure(curves).axes[0].lines) == 3


# ----------------------------------------------------------------------------- claims and the committed runs
def test_claims_from_an_empty_store_are_not_tested_with_the_reason(stores):
    log = C.claims("smoke")
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == 2 * len(C.rules()) and (ours.verdict == "not tested").all()
    assert ours.note.str.contains("not in the run store").all()
    assert (f.section == exp.SECTION).all()
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_adafocal")
    assert rp.claims.build(source, "smoke").summary() == log.summary()


def test_committed_cpu_runs_agree_with_their_records():
    p = exp.plan("cpu", device="cpu")
    found = {k: r for g in p.groups.values() for k, c in g.items() if (r := rruns.find(c)) is not None
             and r.store == "results"}
    if not found:
        pytest.skip("the chapter's cpu runs are not in the results store")
    for (key, seed), run in list(found.items())[:12]:
        z, y = run.logits("test")
        assert rp.metrics.ece(rp.metrics.probs_from_logits(z), y) == pytest.approx(run.metrics["test"]["ece"],
                                                                                  abs=1e-9), key
        last = run.history[-1]
        if "val_bins" in last:      # the last epoch's bins are the final model's validation bins
            got = ev.final_bins(run)
            from replicate.training.diagnostics import validation_bins
            zv, yv = run.logits("val")
            again = validation_bins(torch.as_tensor(zv), torch.as_tensor(yv))
            assert np.array_equal(np.asarray(again["count"]), got["count"].to_numpy()) or \
                np.abs(np.asarray(again["count"]) - got["count"].to_numpy()).sum() <= 4, key   # float16 logits


def test_rule_difference_and_final_bins_from_records(stores):
    hist = [{"epoch": 1, "seconds": 0.1, "loss_state": {"gamma": [1.5, 0.5]}},
            {"epoch": 2, "seconds": 0.1, "loss_state": {"gamma": [1.2, -0.2]}}]
    a, b = _run(1, "adafocal", {"variant": "paper"}, history=hist), _run(1, "adafocal", {"variant": "code"},
                                                                          history=hist)
    d = exp.rule_difference(a, b)
    assert d == {"min_abs_gamma": 0.2, "negative_gammas": 1, "max_logit_difference": 0.0}   # same seed: same logits
    from replicate.training.diagnostics import validation_bins

    f = ev.final_bins(a)                                  # no per-epoch bins: from the validation logits
    z, y = a.logits("val")
    want = validation_bins(torch.as_tensor(z), torch.as_tensor(y))
    assert f["count"].tolist() == want["count"] and f["train_confidence"].isna().all()


def test_twin_note_says_what_the_two_flsd_runs_show():
    from types import SimpleNamespace

    from replicate.experiments.adafocal.views import twin_note

    def run(device, ece):
        return SimpleNamespace(provenance={"device": device}, metrics={"test": {"ece": ece}})

    same = twin_note(1, run("cpu (1 threads, x86_64)", 0.0643), run("cpu (1 thread, x86_64)", 0.0643))
    assert "both trained on cpu (1 thread, x86_64)" in same and "6.43 %" in same and "noise" not in same
    other = twin_note(1, run("cpu (1 thread, x86_64)", 0.0643), run("cpu (2 threads, x86_64)", 0.0701))
    assert "number of CPU threads" in other and "6.43 %" in other and "7.01 %" in other and "noise" in other
    odd = twin_note(2, run("cpu (1 thread, x86_64)", 0.05), run("cpu (1 thread, x86_64)", 0.06))
    assert "yet they end at" in odd and "seed-2" in odd
    assert "not available" in twin_note(1, None, run("cpu", 0.05))
