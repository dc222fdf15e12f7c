"""The chapters' plans by name, the plan's bookkeeping, network-specific method parameters,
and experiment claims written into the one registry."""
from __future__ import annotations

import pytest

import replicate as rp
from replicate import comparison as cmp
from replicate import experiments


def test_chapter_plan_takes_exactly_the_chapters_parameters():
    import replicate.runner as runner

    for chapter in experiments.CHAPTERS:
        cell = runner.default_parameters(runner.read_notebook(runner.resolve_notebook(chapter)))
        assert experiments.plan_parameters(chapter) == list(cell), chapter
    p = experiments.chapter_plan("exp_focal_loss", profile="smoke", text_dataset=None)
    assert p.chapter == "exp_focal_loss" and set(p.groups) == {"image"}
    with pytest.raises(ValueError, match="unknown parameter.*allowed: profile"):
        experiments.chapter_plan("exp_focal_loss", epochs=3)
    with pytest.raises(ValueError, match="trains nothing or is unknown.*exp_focal_loss"):
        experiments.chapter_plan("theory_fts")


def test_plan_lists_distinct_runs_and_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    p = experiments.chapter_plan("exp_focal_loss", profile="smoke", seeds=[1, 2])
    cfgs = p.configs()
    assert len(cfgs) == 2 * 2 * 3 and all(k == c.key for k, c in cfgs.items())
    shared = cmp.Plan("x", "smoke", (1,), "cpu")
    shared.add("a", [], {("cross_entropy", 1): p.image[("cross_entropy", 1)]})
    shared.add("b", [], {("ce", 1): p.image[("cross_entropy", 1)]})
    assert len(shared.configs()) == 1                                   # one run shared by two groups
    with pytest.raises(ValueError, match="added twice"):
        shared.add("a", [], {})
    assert set(p.missing()) == set(cfgs) and not p.complete()
    assert cmp.load(p) is None
    f = p.frame()
    assert len(f) == 12 and not f.finished.any() and set(f.group) == {"image", "text"}
    with pytest.raises(ValueError, match="unknown group"):
        cmp.train(p, groups="bins")


def test_network_specific_parameters_and_their_source():
    dfl = cmp.METHODS["dual_focal"]
    assert dfl.params("image", "cifar10", "resnet110") == {"gamma": 4.5}       # authors' README
    assert dfl.params("image", "cifar10", "tiny_cnn") == {"gamma": 5.0}
    assert "did not train" in dfl.params_note("cifar10", "tiny_cnn")
    assert dfl.params_note("cifar10", "resnet110") == "per the paper for this network"
    cfgs = cmp.configs([dfl], "cifar10", "resnet110", "smoke", seeds=[1])
    assert cfgs[("dual_focal", 1)].resolve()["loss_params"]["gamma"] == 4.5
    f = cmp.methods_frame([dfl, cmp.METHODS["mmce"]], "text")
    assert f.parameters.tolist()[1] == "lam=8"                                   # MMCE on text
    v = cmp.METHODS["adafocal_code"].variant("adafocal_bins5", "AdaFocal, 5 bins", num_bins=5)
    assert v.loss_params == {"variant": "code", "num_bins": 5} and v.compared_with == "adafocal_bins5"
    assert cmp.METHODS["adafocal_paper"].compared_with == "adafocal"


def test_every_catalogued_method_builds_its_loss():
    for m in cmp.METHODS.values():
        rp.losses.get_loss(m.loss, **m.params("image")).config()


def test_experiment_claims_from_the_store_or_not_tested(tmp_path, monkeypatch):
    """With no runs in the store, our verdicts are 'not tested' with the reason, while the
    paper's own rows are still decided; every verdict is of the vocabulary."""
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    log = experiments.focal_loss.claims.claims("smoke")
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == 2 * 5 and (ours.verdict == "not tested").all()
    assert ours.note.str.contains("not in the run store").all()
    paper = f[f.evidence.str.startswith("paper")]
    assert set(paper.verdict) <= set(rp.claims.VERDICTS) and "holds" in set(paper.verdict)
    assert (f.section == experiments.focal_loss.plan.SECTION).all()
    source = next(s for s in rp.claims.sources(kind="experiment") if s.chapter == "exp_focal_loss")
    assert rp.claims.build(source, "smoke").summary() == log.summary()


def test_registered_sections_are_headings_of_their_chapters():
    import replicate.runner as runner

    for s in rp.claims.SOURCES:
        text = runner.resolve_notebook(s.chapter).read_text()
        if s.kind == "experiment":
            section = experiments.chapter_module(s.chapter).SECTION
            assert f"\n## {section}\n" in text or f"\n### {section}\n" in text, (s.chapter, section)
