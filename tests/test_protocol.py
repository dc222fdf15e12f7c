"""The protocol chapter's package side: the deviation table names only options that exist in
the code; the networks table against closed-form parameter counts and the resolved run
configurations; the first experiment against its stored logits."""
import numpy as np
import pytest

from replicate import protocol


def test_every_named_option_exists():
    assert protocol.check_options() == []


def test_check_options_detects_a_missing_option(monkeypatch):
    rows = protocol.DEVIATIONS + ({"topic": "x", "text": "", "code": "", "book": "",
                                   "option": "replicate.metrics.ece:no_such_parameter"},)
    monkeypatch.setattr(protocol, "DEVIATIONS", rows)
    assert protocol.check_options() == ["replicate.metrics.ece:no_such_parameter"]


def test_frame_has_one_row_per_deviation():
    frame = protocol.deviations_frame()
    assert len(frame) == len(protocol.DEVIATIONS)
    assert list(frame.columns) == ["topic", "papers' text", "authors' public code", "this book", "option"]


# ----------------------------------------------------------------------------- networks
def _tiny_cnn_parameters(width: int, num_classes: int) -> int:
    """TinyCNN by hand: three bias-free 3x3 convs (3 -> w -> 2w -> 4w), BN scale and shift per
    channel, a linear layer 4w -> K with bias."""
    chans = (3, width, 2 * width, 4 * width)
    convs = sum(9 * a * b for a, b in zip(chans, chans[1:]))
    return convs + 2 * sum(chans[1:]) + 4 * width * num_classes + num_classes


def test_network_uses_agree_with_the_resolved_run_configurations():
    """The settings the table shows are those a run of that profile and network resolves to."""
    from replicate.profiles import PROFILES
    from replicate.runs import RunConfig

    uses = protocol.network_uses()
    for prof in PROFILES.values():
        for net in {prof.model, *prof.models}:
            resolved = RunConfig("cifar10", model=net, profile=prof.name).resolve()
            rows = [params for n, params, profs in uses if n == net and prof.name in profs]
            assert rows == [resolved["model_params"]], (prof.name, net)
    used = {n for n, _, profs in uses if profs}
    assert {n for n, _, profs in uses if not profs} == set(protocol.NETWORKS) - used


def test_networks_frame_counts_against_closed_forms():
    frame = protocol.networks_frame("smoke", num_classes=100)
    tiny = frame[frame.network == "tiny_cnn"].set_index("settings")
    assert tiny.loc["defaults", "parameters"] == f"{_tiny_cnn_parameters(16, 100):,}"
    assert tiny.loc["width=32", "parameters"] == f"{_tiny_cnn_parameters(32, 100):,}"
    assert tiny.loc["defaults", "profiles"] == "smoke" and tiny.loc["width=32", "profiles"] == "cpu"
    large = frame[frame.network.isin(protocol.LARGE_NETWORKS)]
    assert (large.parameters == "(not built at profile smoke)").all()
    assert set(large.set_index("network").drop("resnet18").profiles) == {"gpu, paper"}
    assert large.set_index("network").loc["resnet18", "profiles"] == "gpu"
    # He et al. 2016, Table 6: ResNet-20 on CIFAR-10 has 0.27M parameters.
    ten = protocol.networks_frame("smoke").set_index("network")
    assert round(int(ten.loc["resnet20", "parameters"].replace(",", "")) / 1e6, 2) == 0.27
    assert list(frame.columns) == ["network", "settings", "parameters", "profiles", "what"]
    with pytest.raises(ValueError, match="unknown profile 'laptop'"):
        protocol.networks_frame("laptop")


def test_profile_network_names_the_default_network_and_its_settings():
    from replicate.profiles import PROFILES

    for prof in PROFILES.values():
        label = protocol.profile_network(prof.name)
        assert label.split(" ")[0] == prof.model
        assert all(f"{k}={v}" in label for k, v in prof.model_params.items())
    assert protocol.profile_network("cpu") == f"tiny_cnn (width={PROFILES['cpu'].model_params['width']})"


# ----------------------------------------------------------------------------- first experiment
@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Private run stores and a generated CIFAR-shaped data set (no files read)."""
    from generated_data import generated_splits

    from replicate import data, runs

    loads = []
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(data, "load", lambda name, *a, **k: loads.append(name) or generated_splits(name))
    runs.clear_data_cache()
    yield loads
    runs.clear_data_cache()


def test_experiment_configs_are_the_chapter_runs_with_per_epoch_evaluation():
    from replicate.runs import RunConfig

    cfgs = protocol.experiment_configs(protocol.FIRST_EXPERIMENT, "cifar10", "smoke", 3)
    assert cfgs["focal (γ = 3)"] == RunConfig("cifar10", "focal", {"gamma": 3.0}, profile="smoke", seed=3,
                                              options={"eval_every_epoch": True})
    assert cfgs["cross-entropy"].resolve()["train"]["eval_every_epoch"] is True
    with pytest.raises(ValueError, match="methods must be a non-empty mapping"):
        protocol.experiment_configs({})
    with pytest.raises(ValueError, match=r"methods\['x'\] must be a pair"):
        protocol.experiment_configs({"x": "focal"})
    with pytest.raises(ValueError, match="unknown loss 'focall'"):
        protocol.experiment_configs({"x": ("focall", {})})


def test_train_or_load_trains_once_and_the_tables_match_the_stored_logits(stores):
    from scipy import special

    methods = {"fl": ("focal", {"gamma": 3.0})}           # one smoke run: seconds
    lines = []
    runs = protocol.train_or_load(methods, "cifar10", "smoke", 1, log=lines.append)
    assert [line.split(" -> ")[0] for line in lines] == ["fl"] and stores
    loaded = len(stores)
    again = protocol.train_or_load(methods, "cifar10", "smoke", 1, log=None)
    assert len(stores) == loaded                                  # read back, no data loaded
    assert {k: r.key for k, r in again.items()} == {k: r.key for k, r in runs.items()}
    panels = protocol.split_panels(runs, "test")
    table = protocol.metrics_table(runs).set_index("method")
    for label, run in runs.items():
        z, y = run.logits("test")
        p = special.softmax(z.astype(np.float64), axis=1)
        np.testing.assert_allclose(panels[label][0], p, rtol=1e-9)
        assert (panels[label][1] == y).all()
        assert table.loc[label, "test error (%)"] == pytest.approx(100 * np.mean(p.argmax(1) != y))
        assert table.loc[label, "test ECE (%)"] == pytest.approx(100 * _ece_numpy(p, y), abs=1e-4)
        pt = special.softmax(z.astype(np.float64) / run.temperature, axis=1)
        assert table.loc[label, "after TS (%)"] == pytest.approx(100 * _ece_numpy(pt, y), abs=1e-4)
    with pytest.raises(ValueError, match="runs must be a non-empty mapping"):
        protocol.metrics_table({})


def _ece_numpy(p, y, n_bins=15):
    """Equal-width ECE with (lower, upper] bins, written out."""
    conf, hit = p.max(1), p.argmax(1) == y
    b = np.clip(np.ceil(conf * n_bins).astype(int) - 1, 0, n_bins - 1)
    return sum(abs(conf[b == k].mean() - hit[b == k].mean()) * (b == k).mean()
               for k in range(n_bins) if (b == k).any())


def test_gpu_pilot_lists_the_committed_cross_entropy_runs_and_the_profile_setting():
    """The gpu profile's pilot (issue #20): one row per committed (network, epochs) of
    cross-entropy at profile gpu, exactly one of them the profile's own setting, and each
    row's error equal to the error recomputed from the run's stored test logits."""
    import numpy as np

    from replicate import runs
    from replicate.profiles import get_profile

    pilot = protocol.gpu_pilot()
    assert len(pilot) >= 2 and not pilot.duplicated(["network", "epochs"]).any()
    own = pilot[pilot["profile's setting"]]
    gpu = get_profile("gpu")
    assert len(own) == 1 and (own.network.iloc[0], own.epochs.iloc[0]) == (gpu.model, gpu.epochs)
    for row in pilot.itertuples(index=False):
        logits, labels = runs.load(row.key, store="results").logits("test")
        assert abs(float(np.mean(logits.argmax(1) != labels)) - row[2]) < 1e-9
    assert (pilot["ECE"] > pilot["ECE after TS"]).all()          # every pilot model over-confident, TS helps
    # the chapters' gpu runs (the profile's own network and length, not named in their
    # configuration) are not the pilot, although one of them has the profile's setting too
    chapters = runs.list_runs("results")
    chapters = chapters[(chapters.profile == "gpu") & (chapters.loss == "cross_entropy")]
    for key in chapters.key:
        cfg = runs.load(key, store="results").config
        assert (key in set(pilot.key)) == (cfg.model is not None and "epochs" in cfg.options)


def test_gpu_regime_reads_the_pilot_against_its_bounds_and_the_papers_printed_numbers():
    """The protocol chapter's sentence on the gpu profile: the bounds checked on the pilot
    rows themselves, the paper's numbers as printed in Mukhoti et al. Tables 3 and 1."""
    pilot = protocol.gpu_pilot()
    got = protocol.gpu_regime(pilot)
    own = pilot[pilot["profile's setting"]].iloc[0]
    assert (got["network"], got["epochs"], got["error"]) == (own.network, own.epochs, own["test error"])
    assert got["error_ok"] == (own["test error"] <= 0.08) and got["ece_ok"] == (own.ECE >= 0.02)
    assert (got["paper_error"], got["paper_ece"]) == (4.95, 4.35)
    assert got["error_ratio"] == pytest.approx(100 * own["test error"] / 4.95)
    assert got["best"]["error"] == pilot["test error"].min() <= got["error"]
    fake = pilot.assign(**{"profile's setting": False})
    with pytest.raises(ValueError, match="0 runs of the gpu profile's own setting"):
        protocol.gpu_regime(fake)


def test_gpu_regime_text_names_the_bounds_met_and_missed():
    base = {"network": "resnet18", "epochs": 30, "error": 0.119, "ece": 0.056, "error_ok": False, "ece_ok": True,
            "best": {"network": "resnet18", "epochs": 80, "error": 0.094, "error_ok": False, "train_s": 294.0}}
    text = protocol.gpu_regime_text(base)
    assert text.startswith("It meets the ECE bound (at least 2 %) but not the error bound (at most 8 %)")
    assert "resnet18 for 80 epochs (4.9 min of training), reached 9.4 %, still above it." in text
    both = {**base, "error_ok": True}
    assert protocol.gpu_regime_text(both) == ("It meets both bounds we aimed for: the error bound (at most 8 %) "
                                              "and the ECE bound (at least 2 %).")
    assert protocol.gpu_regime_text({**base, "ece_ok": False, "error_ok": True}) == (
        "It meets the error bound (at most 8 %) but not the ECE bound (at least 2 %).")
    own_best = {**base, "best": {**base["best"], "epochs": 30}}
    assert protocol.gpu_regime_text(own_best).endswith("no candidate of the pilot came closer.")
    neither = {**base, "ece_ok": False}
    assert protocol.gpu_regime_text(neither).startswith(
        "It meets neither the ECE bound (at least 2 %) nor the error bound (at most 8 %)")


def _pilot(rows):
    """A constructed pilot frame (:func:`protocol.gpu_pilot`'s columns that the texts read)."""
    import pandas as pd

    return pd.DataFrame([dict(zip(("network", "epochs", "test error", "train s", "T", "profile's setting"), r))
                         for r in rows])


def test_pilot_cost_text_reads_the_seconds_per_epoch_and_errors_of_the_rows():
    """Issue #32, item 5: the protocol's sentence on ResNet-50's cost is the pilot table's."""
    pilot = _pilot([("resnet18", 15, 0.15, 75.0, 1.3, False), ("resnet18", 30, 0.12, 120.0, 1.7, True),
                    ("resnet50", 30, 0.13, 240.0, 1.4, False)])
    text = protocol.pilot_cost_text(pilot)
    # 240 / 30 = 8 s per epoch against 120 / 30 = 4: twice, at the one shared length
    assert text.startswith("an epoch of resnet50 costs 2.0 times one of resnet18 (at 30 epochs, the length both ran)")
    assert "resnet50 reached 13.0 % test error, resnet18 12.0 %" in text and text.endswith("more slowly per second")
    # more accurate at the shared length: no "more slowly"
    faster = _pilot([("resnet18", 30, 0.12, 120.0, 1.7, True), ("resnet50", 30, 0.10, 240.0, 1.4, False)])
    assert "slowly" not in protocol.pilot_cost_text(faster)
    # no shared length: the medians of seconds per epoch (6 / 3)
    apart = _pilot([("resnet18", 20, 0.12, 60.0, 1.7, True), ("resnet50", 12, 0.2, 72.0, 1.2, False)])
    assert protocol.pilot_cost_text(apart) == ("an epoch of resnet50 costs 2.0 times one of resnet18 "
                                               "(median seconds per epoch over the pilot)")
    assert protocol.pilot_cost_text(_pilot([("resnet18", 30, 0.12, 120.0, 1.7, True)])) == ""


def test_pilot_trend_and_confidence_texts_follow_the_rows():
    falls = _pilot([("resnet18", 15, 0.15, 1, 1.3, False), ("resnet18", 30, 0.12, 1, 1.7, True),
                    ("resnet50", 12, 0.21, 1, 1.2, False), ("resnet50", 30, 0.13, 1, 1.4, False)])
    assert protocol.pilot_trend_text(falls).startswith("The pilot shows that the short schedule costs accuracy")
    rises = _pilot([("resnet18", 15, 0.15, 1, 1.3, False), ("resnet18", 30, 0.16, 1, 0.9, True)])
    assert protocol.pilot_trend_text(rises) == ("The pilot does not show that a longer schedule always helps: the "
                                                "test error does not fall for resnet18 from 15 to 30 epochs.")
    assert "over-confident like the papers' models (temperature 1.7)" in protocol.pilot_confidence_text(falls)
    assert "under-confident" in protocol.pilot_confidence_text(rises)
    one = _pilot([("resnet18", 30, 0.12, 1, 1.0, True)])
    assert "no temperature" in protocol.pilot_confidence_text(one)
    with pytest.raises(ValueError, match="own setting"):
        protocol.pilot_confidence_text(_pilot([("resnet18", 30, 0.12, 1, 1.0, False)]))


def test_the_committed_pilots_texts():
    """On the committed pilot: ResNet-50 at 30 epochs against ResNet-18 at 30 epochs."""
    pilot = protocol.gpu_pilot()
    if pilot.empty or not pilot["profile's setting"].any():
        pytest.skip("the gpu pilot's runs are not in the results store")
    r50, r18 = (pilot[(pilot.network == n) & (pilot.epochs == 30)].iloc[0] for n in ("resnet50", "resnet18"))
    ratio = (r50["train s"] / 30) / (r18["train s"] / 30)
    assert f"costs {ratio:.1f} times" in protocol.pilot_cost_text(pilot)
    assert "over-confident" in protocol.pilot_confidence_text(pilot)


def test_protocol_text_states_what_every_profile_shares_and_names_what_differs(monkeypatch):
    """Issue #32, item 5: "Every run uses SGD with momentum 0.9 ..." is read from the profiles."""
    import dataclasses

    from replicate import profiles

    text = protocol.protocol_text("image")
    p = profiles.get_profile("cpu")
    assert text.startswith(f"SGD with momentum {p.momentum:g} (no Nesterov), weight decay {p.weight_decay:g}, "
                           f"batch size {p.batch_size}, learning rate {p.lr:g} divided by {1 / p.lr_decay:g} at ")
    assert "150/350 and 250/350 of the epochs" in text and text.endswith("the model of the last epoch")
    assert protocol.protocol_text("text") == (f"Adam, learning rate {p.text['lr']:g}, the epoch with the best "
                                              "validation accuracy")
    # one profile with another batch size: the sentence names each profile's
    changed = {**profiles.PROFILES, "cpu": dataclasses.replace(p, batch_size=64)}
    monkeypatch.setattr(profiles, "PROFILES", changed)
    assert "batch size by profile (smoke: 128, cpu: 64" in protocol.protocol_text("image")
    assert "batch size batch size" not in protocol.protocol_text("image")
