"""A chapter shown at two profiles (issue #29, item 4): its image rows at ``gpu`` while its
text rows wait for a loan of their own and show at ``cpu``. Each verdict rests on runs of one
profile and says which; the book picks the split from the store alone; the ledger adds the
larger profile's verdicts on our runs beside the page's own.

Stores are temporary REPLICATE_RESULTS folders of fabricated run records (the selection reads
only whether each record exists), except where a test says it reads the committed runs.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from replicate import claims, comparison as cmp, experiments, runner
from replicate.claims import registry
from replicate.claims.tallies import verdict_counts

CHAPTER = runner.SOURCE_DIR / "exp_focal_loss.md"
TINY = {"profile": "cpu", "dataset": "cifar10", "model": None, "seeds": [1], "methods": ["cross_entropy", "fl3"],
        "text_dataset": "20newsgroups", "device": "cpu", "text_profile": None}


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "results"


def fabricate(results, profile, group):
    """Finished-run records (and two-example logits: a run without them is damaged, hence
    missing) of one group of the tiny plan at ``profile``."""
    params = {k: v for k, v in TINY.items() if k not in ("profile", "text_profile")}
    plan = experiments.chapter_plan("exp_focal_loss", **params, profile=profile)
    for cfg in plan.group(group).values():
        path = results / "runs" / cfg.key
        path.mkdir(parents=True, exist_ok=True)
        record = {"format": 1, "key": cfg.key, "config": cfg.to_dict(), "resolved": cfg.resolve(),
                  "metrics": {s: {} for s in ("val", "test", "val_ts", "test_ts")}, "temperature": 1.0,
                  "history": [], "provenance": {}, "wall_time": 0.0}
        (path / "record.json").write_text(json.dumps(record))
        np.savez_compressed(path / "logits.npz", test_logits=np.zeros((2, 10), np.float16),
                            test_labels=np.zeros(2, np.int64))


def test_the_text_rows_are_planned_at_their_own_profile():
    p = experiments.focal_loss.plan.plan("gpu", methods=["cross_entropy"], device="cpu", text_profile="cpu")
    assert {c.profile for c in p.image.values()} == {"gpu"} and {c.profile for c in p.text.values()} == {"cpu"}
    assert p.profile_of("image") == "gpu" and p.profile_of("text") == "cpu"
    assert p.profile_text() == "gpu (text rows: cpu)"
    same = experiments.focal_loss.plan.plan("gpu", methods=["cross_entropy"], device="cpu")
    assert same.profiles == {} and same.profile_text() == "gpu"
    assert experiments.focal_loss.plan.plan("gpu", methods=["cross_entropy"], device="cpu",
                                            text_profile="gpu").profiles == {}
    with pytest.raises(ValueError, match=r"^text_profile must be one of smoke, cpu, gpu, paper or None"):
        experiments.focal_loss.plan.plan("gpu", device="cpu", text_profile="laptop")


def test_the_book_shows_image_rows_at_gpu_and_text_rows_at_cpu(results):
    assert runner.book.showable_split(CHAPTER, TINY) == (None, "no profile with all its image runs")
    fabricate(results, "gpu", "image")
    assert runner.book.showable_split(CHAPTER, TINY) == (
        None, "its image runs are all in results/ at gpu, its text runs at no profile")
    fabricate(results, "cpu", "text")
    assert runner.book.showable_split(CHAPTER, TINY) == (
        {"profile": "gpu", "text_profile": "cpu"}, "its image runs are all in results/ at gpu, its text runs at cpu")
    assert runner.showable_profile(CHAPTER, TINY)[0] is None         # the whole plan is complete nowhere
    fabricate(results, "gpu", "text")                                # the text loan came: one profile again
    assert runner.showable_profile(CHAPTER, TINY)[0] == "gpu"
    assert runner.book.showable_split(runner.SOURCE_DIR / "exp_fcl.md", {"profile": "cpu"}) == \
        (None, "no text_profile parameter")
    assert runner.book.showable_split(CHAPTER, {**TINY, "text_dataset": None}) == (None, "no text rows")


def test_the_book_passes_the_split_to_the_chapter(monkeypatch, tmp_path):
    calls = {}
    monkeypatch.setattr(runner.book, "execute",
                        lambda src, tgt, parameters=None, profile=None, **k: calls.__setitem__(src.stem, (profile, parameters)))
    monkeypatch.setattr(runner.book, "build_html", lambda base, **k: base / "index.html")
    monkeypatch.setattr(runner.book, "check_data", lambda chapters, **k: {})
    monkeypatch.setattr(runner.book, "showable_profile", lambda src, d: (None, "gpu: 11/22 runs in results/")
                        if src.stem == "exp_focal_loss" else (None, "trains nothing"))
    monkeypatch.setattr(runner.book, "showable_split", lambda src, d: ({"profile": "gpu", "text_profile": "cpu"},
                                                                      "why"))
    monkeypatch.setenv(runner.BOOK_DIR_ENV, str(tmp_path))
    logs = []
    runner.build(log=logs.append, workers=1)
    assert calls["exp_focal_loss"] == ("gpu", {"text_profile": "cpu"})
    assert "[replicate] exp_focal_loss: showing profile gpu, its text rows at cpu (why)" in logs


def test_one_side_of_our_runs_per_profile():
    """Committed runs: the Mukhoti chapter's CIFAR-10 runs at gpu (loan of 2026-11-27) and its
    20 Newsgroups runs at cpu give two sides, each labelled with its profile."""
    p = experiments.focal_loss.plan.plan("gpu", device="cpu", text_profile="cpu")
    runs = cmp.load_groups(p)
    if set(runs) != {"image", "text"}:
        pytest.skip("the chapter's gpu CIFAR-10 runs or cpu text runs are not in the store")
    sides = cmp.report.runs_sides(p, runs)
    assert [s.source for s in sides] == ["gpu", "cpu"]
    assert [[r.dataset for r in s.rows()] for s in sides] == [["cifar10"], ["20newsgroups"]]
    with pytest.raises(ValueError, match="one side per profile"):
        cmp.report.runs_evidence(p, runs)
    one = experiments.focal_loss.plan.plan("cpu", device="cpu")
    assert [s.source for s in cmp.report.runs_sides(one, cmp.load_groups(one))] == ["cpu"]


def _frame(rows):
    return pd.DataFrame(rows, columns=["claim", "evidence", "verdict", "check", "kind"])


def test_prose_counts_quote_each_profile():
    f = _frame([("A", "ours: gpu; cifar10", "holds", "holds: -2.0 [-3, -1]", "experiment"),
                ("A", "ours: cpu; 20newsgroups", "inconclusive", "inconclusive: -1 [-3, 1]", "experiment"),
                ("A", "paper: tables", "holds", "holds: -5", "experiment"),
                ("B", "ours: gpu; cifar10", "fails", "fails: +1 [0.5, 2]", "experiment"),
                ("B", "ours: cpu; 20newsgroups", "holds", "holds: -1 [-2, -0.5]", "experiment"),
                ("B", "paper: tables", "holds", "holds: -3", "experiment")])
    out = verdict_counts(f, {"ours": "ours", "paper": "paper"}, per_claim=True)
    assert out["n_claims_ours"] == "2" and out["n_claims_paper"] == "2"
    assert out["tally_ours"] == "at gpu: 1 holds and 1 fails; at cpu: 1 holds, 0 fail and 1 is inconclusive"
    assert out["claim1_ours"] == "holds: -2.0 [-3, -1] (at gpu); inconclusive: -1 [-3, 1] (at cpu)"
    assert out["claim2_ours"] == "fails: +1 [0.5, 2] (at gpu); holds: -1 [-2, -0.5] (at cpu)"
    assert out["claim1_paper"] == "holds: -5"
    single = verdict_counts(f[~f.evidence.str.contains("cpu")], {"ours": "ours"}, per_claim=True)
    assert single["n_claims_ours"] == "2" and single["claim2_ours"] == "fails: +1 [0.5, 2]"


def test_the_ledger_adds_larger_profiles_rows_of_our_runs_only():
    assert claims.larger_profiles("cpu") == ("gpu", "paper")
    assert claims.larger_profiles("gpu") == ("paper",)
    assert claims.larger_profiles("smoke") == ()
    with pytest.raises(ValueError, match="profile must be one of"):
        claims.larger_profiles("laptop")
    f = _frame([("A", "ours: gpu; cifar10, resnet18 (seed 1 of CE, FLSD-53)", "holds", "holds", "experiment"),
                ("B", "ours: gpu", "not tested", "not tested", "experiment"),   # runs missing: dropped
                ("C", "ours: gpu", "not tested", "not tested", "experiment"),   # no CIFAR-10 row: kept
                ("A", "paper: Mukhoti et al.", "holds", "holds", "experiment")])
    f["result"] = ["-2.0 [-3, -1]", "–", "no row of cifar10", "-5"]
    assert list(registry._ours_at(f, "gpu").claim) == ["A", "C"]
    with pytest.raises(ValueError, match="beside must name profiles"):
        claims.collect(paper="mukhoti2020", kind="theory", profile="cpu", beside=("cpu",))


def test_replicate_claims_adds_the_gpu_rows_beside(capsys):
    """Committed runs: the Mukhoti chapter's verdicts on the gpu CIFAR-10 runs follow its cpu
    rows (what `replicate claims --beside gpu` and the ledger print), each labelled gpu; a bad
    profile is one line, before any work."""
    from replicate.cli import main

    assert main(["claims", "--paper", "mukhoti2020", "--kind", "experiment", "--beside", "laptop", "--quiet"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["replicate: error: beside must name profiles of smoke, cpu, gpu, paper other than profile 'cpu'; "
                   "got ['laptop']"]
    if not experiments.focal_loss.plan.plan("gpu", device="cpu", text_dataset=None).complete():
        pytest.skip("the chapter's gpu CIFAR-10 runs are not in the store")
    srcs = [s for s in registry.sources("mukhoti2020", "experiment") if s.chapter == "exp_focal_loss"]
    frames = registry.add_beside(srcs, registry.build_frames(srcs, "cpu"), ("gpu", "paper"))
    cpu, gpu = frames                                           # nothing at paper: no frame for it
    assert cpu.evidence.str.startswith(("ours: cpu", "paper")).all()
    assert len(gpu) == 5 and gpu.evidence.str.startswith("ours: gpu; cifar10, resnet18").all()
    assert list(gpu.claim) == list(dict.fromkeys(cpu.claim))
