"""The chapters' plans by name, the plan's bookkeeping, network-specific method parameters,
and experiment claims written into the one registry."""
from __future__ import annotations

from pathlib import Path

import pytest

import replicate as rp
from replicate import comparison as cmp
from replicate import experiments
from replicate.claims import counts as vocabulary_counts
from replicate.claims.tallies import _PHRASES, tally_text, verdict_counts


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
    log = experiments.focal_loss.report.claims("smoke")
    f = log.frame()
    ours = f[f.evidence.str.startswith("ours")]
    assert len(ours) == 5 and (ours.verdict == "not tested").all()
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


# ----------------------------------------------------------------------------- the chapter contract
def test_every_chapter_folder_has_the_contracts_modules_and_the_registry_finds_them():
    import importlib.util
    import inspect

    for chapter, folder in experiments.CHAPTERS.items():
        roles = ("plan", "claims", "report", "views", "figures")
        path = Path(rp.experiments.__file__).parent / folder
        modules = sorted(f.stem for f in path.glob("*.py") if f.stem != "__init__")
        assert modules == sorted(roles), (chapter, modules)       # five modules, the same roles everywhere
        plan = experiments.chapter_module(chapter)
        assert plan.CHAPTER == chapter and callable(plan.default_methods)
        report = importlib.import_module(f"replicate.experiments.{folder}.report")
        assert list(inspect.signature(report.report).parameters)[:2] == ["p", "runs"], folder
        claims = importlib.import_module(f"replicate.experiments.{folder}.claims")
        defined = [c for p in rp.papers.PAPERS for c in claims.definitions(p)] if folder == "leaderboard" else \
            claims.definitions()
        assert defined and all(isinstance(c, rp.claims.claim.Claim) for c in defined), folder
        if folder != "leaderboard":
            assert plan.PAPER == next(p.key for p in rp.papers.PAPERS.values() if p.chapter == folder)
    for folder in {p.chapter for p in rp.papers.PAPERS.values()}:
        for role in ("claims", "figures"):
            assert importlib.util.find_spec(f"replicate.theory.{folder}.{role}") is not None, (folder, role)
    builders = {s.builder.partition(":")[0] for s in rp.claims.SOURCES}
    assert builders == {f"replicate.theory.{p.chapter}.claims" for p in rp.papers.PAPERS.values()} | \
        {f"replicate.experiments.{f}.report" for f in experiments.CHAPTERS.values()}
    assert all(callable(s.load()) for s in rp.claims.SOURCES)


def test_verdict_counts_follow_one_glue_key_convention():
    import pandas as pd

    frame = pd.DataFrame({"kind": ["experiment"] * 6, "evidence": ["ours: cpu"] * 3 + ["paper: b"] * 3,
                          "verdict": ["holds", "not tested", "beyond the paper", "holds", "holds with conditions",
                                      "fails"],
                          "check": ["holds", "not tested", "fails", "holds", "holds with conditions", "fails"]})
    n = verdict_counts(frame, {"ours": "ours", "paper": "paper: b"}, per_claim=True, rule_text=rp.comparison.noise.rule_text())
    assert (n["n_claims_ours"], n["n_holds_ours"], n["n_not_tested_ours"], n["n_beyond_the_paper_ours"]) == \
        ("3", "1", "1", "1")
    assert (n["n_holds_paper"], n["n_holds_with_conditions_paper"], n["n_holds_any_paper"], n["n_fails_paper"]) == \
        ("1", "1", "2", "1")
    assert (n["claim3_ours"], n["claim2_paper"]) == ("fails", "holds with conditions")   # a beyond row's own check
    assert {k for k in n if k.endswith("_ours") and k.startswith("n_")} == \
        {"n_claims_ours", "n_holds_any_ours"} | {f"n_{v.replace(' ', '_')}_ours" for v in rp.claims.VERDICTS}
    assert n["tally_ours"] == "1 holds, 0 fail, 1 goes beyond the paper and 1 cannot be tested"
    assert n["tally_paper"] == "1 holds, 1 holds only with a condition and 1 fails"
    none = verdict_counts(frame, {"x": "no such label"})
    assert none["n_claims_x"] == "0" and "claim1_x" not in none
    assert none["tally_x"] == "0 hold and 0 fail"
    # the counting lives in claims/, which knows no noise model: the chapters pass its rule
    plain = verdict_counts(frame, {"ours": "ours", "paper": "paper: b"}, per_claim=True)
    assert "noise_rule" not in plain and plain == {k: v for k, v in n.items() if k != "noise_rule"}
    assert verdict_counts(frame, {}, rule_text="the rule")["noise_rule"] == "the rule"
    assert vocabulary_counts is rp.claims.vocabulary.counts


def test_a_tally_agrees_with_its_counts_and_names_every_verdict():
    tally = tally_text
    assert tally(["holds", "fails", "fails", "fails", "inconclusive", "not tested", "not tested"]) == \
        "1 holds, 3 fail, 1 is inconclusive and 2 cannot be tested"
    assert tally(["inconclusive"] * 2 + ["holds"] * 2 + ["fails"]) == "2 hold, 1 fails and 2 are inconclusive"
    assert tally(["fails"]) == "0 hold and 1 fails"
    # every verdict has both forms, and the counts in the clause add up to the claims
    every = [v for i, v in enumerate(rp.claims.VERDICTS) for _ in range(i + 1)]
    text = tally(every)
    assert sum(int(w) for w in text.replace(",", " ").split() if w.isdigit()) == len(every)
    assert all(_PHRASES[v][1] in text for v in rp.claims.VERDICTS[1:])
    with pytest.raises(ValueError, match="verdicts must be among"):
        tally(["holds", "true"])


def test_tally_glossed_explains_inconclusive_only_when_a_claim_is():
    """Issue #32, item 5: the gloss of "inconclusive" follows a tally only when the tally
    counts an inconclusive claim (constructed claims frames, both sides)."""
    import pandas as pd

    frame = pd.DataFrame({"evidence": ["ours: cpu", "ours: cpu", "paper: Table 1", "paper: Table 1"],
                          "verdict": ["holds", "inconclusive", "holds", "fails"],
                          "claim": ["a", "b", "a", "b"], "check": ["holds", "inconclusive", "holds", "fails"],
                          "kind": "experiment", "paper": "mukhoti2020"})
    counts = verdict_counts(frame, {"ours": "ours", "paper": "paper"})
    glossed = cmp.chapter.tally_glossed(counts, "ours")
    assert glossed == f"1 holds, 0 fail and 1 is inconclusive ({cmp.chapter.INCONCLUSIVE_GLOSS})"
    assert cmp.chapter.tally_glossed(counts, "paper") == "1 holds and 1 fails"          # no gloss
    assert "inconclusive" not in cmp.chapter.tally_glossed(counts, "paper")


def test_quantifier_words_are_the_wording_modules_reading():
    from replicate.claims import wording

    words = cmp.chapter.quantifier_words()
    assert words["q_most"] == "more than half of the rows"
    assert words["q_almost_all"] == f"at least {wording.ALMOST_ALL:.0%} of the rows"
    assert words["q_every"] == "all the rows"
    # the reading in words is the rule that counts: "most" of 10 rows needs 6, "almost all" 8
    assert wording.needed("most", 10) == 6 and wording.needed("almost all", 10) == round(10 * wording.ALMOST_ALL)


def test_text_scale_names_what_a_profile_cuts_from_the_paper_profiles_text_runs():
    """Issue #32, item 5: AdaFocal's text section said "the CPU profile uses shorter
    documents" whatever profile its text rows had; the sentence now reads the profile."""
    from replicate.profiles import get_profile

    for name in ("smoke", "cpu"):
        t = get_profile(name).text
        text = cmp.chapter.text_scale(name)
        assert f"documents cut to {t['data_params']['max_len']} tokens" in text
        assert text.endswith("weaker classifiers than the paper's")
        assert f"at most {t['epochs']} epoch" in text
    gpu = cmp.chapter.text_scale("gpu")       # full documents, default network, fewer epochs
    assert "keep the paper profile's documents and network" in gpu and "weaker" not in gpu
    assert f"at most {get_profile('gpu').text['epochs']} epochs (paper profile: " in gpu
    assert cmp.chapter.text_scale("paper") == "the paper profile's text runs follow the paper profile's text protocol"
