"""The verdict vocabulary, the claims log and the registry: verdicts follow from checks."""
from __future__ import annotations

import json

import numpy as np
import pytest

from replicate import claims as cl


def test_vocabulary_is_one_ordered_set_with_a_meaning_each():
    assert len(set(cl.VERDICTS)) == len(cl.VERDICTS) == 8
    assert set(cl.MEANINGS) == set(cl.VERDICTS) and all(cl.MEANINGS.values())


def test_inconclusive_says_what_would_decide_it():
    o = cl.inconclusive("~145 seeds to resolve a difference this size")
    assert (o.verdict, o.note) == ("inconclusive", "~145 seeds to resolve a difference this size")
    assert cl.INCONCLUSIVE in cl.VERDICTS and "noise" in cl.MEANINGS[cl.INCONCLUSIVE]
    with pytest.raises(ValueError, match="needs"):
        cl.inconclusive(" ")
    assert "**inconclusive**" in cl.ledger.vocabulary_markdown()


@pytest.mark.parametrize("ok, verdict", [(True, "holds"), (False, "fails"), (np.bool_(True), "holds")])
def test_check(ok, verdict):
    assert cl.check(ok).verdict == verdict


@pytest.mark.parametrize("bad", [None, "yes", 0.5 * np.ones(2)])
def test_a_missing_or_ambiguous_result_is_never_a_verdict(bad):
    with pytest.raises(ValueError):
        cl.check(bad)


def test_conditional_corrected_readings_beyond_untested():
    assert cl.conditional(True, True, "for gamma >= 1").verdict == "holds"
    o = cl.conditional(False, True, "for gamma >= 1")
    assert (o.verdict, o.note) == ("holds with conditions", "for gamma >= 1")
    assert cl.conditional(False, False, "for gamma >= 1").verdict == "fails"
    # misprinted only when the stated correction holds
    assert cl.corrected(False, True, "T = 1/(gamma+1) is a lower bound").verdict == "misprinted"
    assert cl.corrected(False, False, "x").verdict == "fails"
    assert cl.corrected(True, False, "x").verdict == "holds"
    with pytest.raises(ValueError, match="correction"):
        cl.corrected(False, True, "")
    r = cl.readings(with_ties=False, tie_free=True)
    assert r.verdict == "depends on reading" and "with ties: fails" in r.note and "tie free: holds" in r.note
    assert cl.readings(a=True, b=True).verdict == "holds"
    b = cl.beyond(False)
    assert (b.verdict, b.check) == ("beyond the paper", "fails")
    assert cl.untested("no runs").note == "no runs"
    with pytest.raises(ValueError):
        cl.untested("")
    with pytest.raises(ValueError, match="verdict must be one of"):
        cl.Outcome("differs")


def test_log_rows_counts_and_table():
    log = cl.ClaimLog("mukhoti2020", "theory_focal_loss", section="Proposition 2")
    log.add("a", "Prop. 2", "how", "res", True)
    log.add("b", "Prop. 2", "how", "res", cl.corrected(False, True, "y"), section="Appendix B")
    log.add("c", "Sec. 4", "how", "res", None)
    assert log.summary() == "3 claims: 1 holds, 1 misprinted, 1 not tested"
    f = log.frame()
    assert list(f.columns) == cl.COLUMNS and list(f.section) == ["Proposition 2", "Appendix B", "Proposition 2"]
    assert "evidence" not in log.table().columns
    counts = cl.counts_frame(f, by="paper")
    assert counts.loc["mukhoti2020", "total"] == 3 and counts.loc["mukhoti2020", "fails"] == 0
    json.dumps(f.to_dict("records"))
    with pytest.raises(ValueError, match="kind must be"):
        cl.ClaimLog("mukhoti2020", "x", kind="proof")


def test_registry_filters_and_refuses_unknown_papers():
    assert all(s.paper == "mukhoti2020" for s in cl.sources(paper="mukhoti2020"))
    with pytest.raises(ValueError, match="unknown paper 'nope'.*mukhoti2020"):
        cl.sources(paper="nope")
    with pytest.raises(ValueError, match="kind must be"):
        cl.sources(kind="proofs")


def test_cli_claims_prints_every_registered_claim(tmp_path, monkeypatch, capsys):
    from replicate import cli

    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    assert cli.main(["claims", "--format", "json", "--profile", "smoke", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["paper"] for r in rows} == {s.paper for s in cl.SOURCES}
    assert {r["verdict"] for r in rows} <= set(cl.VERDICTS)
    assert all(r["chapter"] and r["section"] for r in rows)
    assert cli.main(["claims", "--format", "yaml"]) == 2
    assert "--format must be one of table, json, csv" in capsys.readouterr().err


def test_claims_built_in_worker_processes_equal_those_built_in_this_one(tmp_path, monkeypatch):
    """Two spawned workers give the same rows in registry order as one process; each source
    is reported once; a bad worker count is refused before any work."""
    import pandas as pd

    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    srcs = [s for s in cl.SOURCES if s.chapter in ("theory_adafocal", "theory_fcl")]
    seen = []
    one = cl.registry.build_frames(srcs, "smoke", workers=1, first=lambda: seen.append("first"))
    assert seen == ["first"]
    two = cl.registry.build_frames(srcs, "smoke", workers=2, done=lambda s, n, sec: seen.append((s, n)),
                                   first=lambda: seen.append("first again"))
    assert seen[:2] == ["first", "first again"]           # before any source was built
    seen = seen[2:]
    assert sorted(seen, key=lambda sn: srcs.index(sn[0])) == [(s, len(f)) for s, f in zip(srcs, one)]
    for a, b in zip(one, two):
        pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        cl.registry.build_frames(srcs, "smoke", workers=0)


def test_a_failing_source_stops_the_build_and_its_workers(tmp_path, monkeypatch):
    """A builder that fails in a worker fails the build with its own error, and no worker
    process is left running after it (nor after a build that succeeds)."""
    import multiprocessing

    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    good = [s for s in cl.SOURCES if s.chapter == "theory_adafocal"]
    bad = cl.registry.Source("mukhoti2020", "theory", "theory_nowhere", "replicate.claims.registry:no_such_builder")
    with pytest.raises(AttributeError, match="no_such_builder"):
        cl.registry.build_frames([*good, bad], "smoke", workers=2)
    assert multiprocessing.active_children() == []
    two = [s for s in cl.SOURCES if s.chapter in ("theory_adafocal", "theory_fcl")]
    assert [len(f) for f in cl.registry.build_frames(two, "smoke", workers=2)] == [
        len(f) for f in cl.registry.build_frames(two, "smoke", workers=1)]
    assert multiprocessing.active_children() == []


def _die_in_worker(profile="smoke"):
    """A claims builder whose process dies at once (as one killed for memory would)."""
    import os

    os._exit(3)


def test_a_worker_that_dies_fails_the_build_instead_of_hanging(tmp_path, monkeypatch):
    """A worker killed mid-build (its task never returns) is noticed within seconds: the
    build raises with a one-line reason, and no worker is left behind."""
    import multiprocessing
    import time

    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    good = [s for s in cl.SOURCES if s.chapter == "theory_adafocal"]
    dies = cl.registry.Source("mukhoti2020", "theory", "theory_dies", f"{__name__}:_die_in_worker")
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="a worker process building the claims died"):
        cl.registry.build_frames([*good, dies], "smoke", workers=2)
    assert time.monotonic() - t0 < 60
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("source", cl.SOURCES, ids=lambda s: f"{s.paper}-{s.kind}-{s.chapter}")
def test_every_registered_source_runs_at_smoke_with_vocabulary_verdicts_and_real_sections(source, tmp_path,
                                                                                          monkeypatch):
    """The registry's contract: each builder runs at the smoke profile, every row has a
    verdict of the vocabulary and a section that is a heading of its chapter (the ledger
    links to it). Experiment builders read an empty store here: never training."""
    monkeypatch.setenv("REPLICATE_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "cache"))
    log = cl.build(source, "smoke")
    f = log.frame()
    assert len(f) and set(f.verdict) <= set(cl.VERDICTS)
    for section in set(f.section):
        cl.ledger.link(source.chapter, section)          # ValueError if not a heading
    assert (f.claim.str.len() > 0).all() and (f["where"].str.len() > 0).all()
    needs_note = f.verdict.isin(["holds with conditions", "misprinted", "depends on reading", "not tested"])
    assert (f.loc[needs_note, "note"].str.len() > 0).all()


def test_ledger_links_and_refuses_unknown_sections():
    assert cl.ledger.link("exp_focal_loss", "Verdict") == "exp_focal_loss.ipynb#verdict"
    with pytest.raises(ValueError, match="no heading 'Nowhere'"):
        cl.ledger.link("exp_focal_loss", "Nowhere")
    md = cl.ledger.ledger_markdown(cl.ClaimLog("mukhoti2020", "exp_focal_loss", "experiment", "Verdict").frame())
    assert md.splitlines()[0].startswith("| paper | claim")


def test_replicate_claims_builds_its_own_parser_only():
    from replicate import cli

    assert cli._command(["--data-dir", "claims", "claims", "--format", "csv"]) == "claims"
    assert cli._command(["--data-dir=x", "runs", "ls"]) == "runs"
    assert cli._command(["-h", "claims"]) is None and cli._command([]) is None
    light = cli.build_parser("claims")
    args = light.parse_args(["claims", "--format", "csv", "--quiet"])
    assert args.command == "claims" and args.format == "csv" and args.quiet
    full = cli.build_parser()
    assert full.parse_args(["runs", "ls"]).command == "runs"
