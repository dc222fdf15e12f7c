"""What the Mukhoti chapter (exp_focal_loss) shows: :mod:`replicate.experiments.focal_loss.views`
on constructed frames and stand-in runs, and on the committed cpu runs against numbers
computed here from their logits and records (skipped when they are not in the store)."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from needs import paper_text
from replicate import comparison as cmp
from replicate import experiments

views = experiments.focal_loss.views
exp = experiments.focal_loss.plan


def _summary(rows):
    """A summarise()-shaped frame from ``(method, metric, scaled, mean, T)`` rows."""
    return pd.DataFrame([{"method": m, "metric": k, "temperature_scaled": s, "mean": v, "std": math.nan,
                          "T": t, "T_std": math.nan} for m, k, s, v, t in rows])


def _run(wall_time=60.0, epochs=20):
    return SimpleNamespace(wall_time=wall_time, resolved={"train": {"epochs": epochs}})


def test_ece_quotes_read_both_frames_and_say_what_is_missing():
    ours = _summary([("cross_entropy", "ece", False, 4.567, math.nan), ("cross_entropy", "ece", True, 1.0, 2.34),
                     ("flsd53", "ece", False, 1.234, math.nan), ("flsd53", "ece", True, 0.9, 1.06)])
    paper = _summary([("cross_entropy", "ece", False, 4.35, math.nan), ("cross_entropy", "ece", True, 1.35, 2.5)])
    q = views.ece_quotes(ours, paper)
    assert q["ours_ce_ece"] == "4.57" and q["ours_flsd_ece"] == "1.23"
    assert q["ours_ce_T"] == "2.3" and q["ours_flsd_T"] == "1.1"              # one decimal, as the grid
    assert q["paper_ce_ece"] == "4.35" and q["paper_ce_T"] == "2.5"
    assert q["paper_flsd_ece"] == q["paper_flsd_T"] == "not available"
    assert len(q) == 8


def test_runs_by_label_keep_the_order_of_the_keys_and_skip_missing_runs():
    runs = {("fl3", 1): "a", ("cross_entropy", 1): "b", ("fl1", 2): "c"}
    got = views.by_label(runs, exp.HISTORY_METHODS, 1)
    assert list(got) == ["Cross Entropy", "FL-3"] and got["FL-3"] == "a"
    assert views.by_label(runs, exp.HISTORY_METHODS, 2) == {"FL-1": "c"}


def test_training_numbers_and_figure4_epochs():
    runs = {"image": {("a", 1): _run(90.0), ("b", 1): _run(30.0)}, "text": {("a", 1): _run(120.0)}}
    assert views.training_numbers(runs) == {"n_runs": "3", "train_minutes": "4.0"}
    # the paper's epochs 10, 100, 200 of 350 at the same fractions of 20 and 350 epochs
    assert views.figure4_epochs(_run(epochs=20)) == (round(10 / 17.5), round(100 / 17.5), round(200 / 17.5))
    assert views.figure4_epochs(_run(epochs=350)) == (10, 100, 200)


def test_text_views_without_a_text_experiment():
    assert views.text_view(None, {}) is None and views.text_tables(None, []) == []
    assert set(views.text_numbers(None, {}).values()) == {views.TEXT_SKIPPED}
    assert len(views.text_numbers(None, {})) == 5


# ----------------------------------------------------------------------------- committed cpu runs
@pytest.fixture(scope="module")
def cpu_runs():
    p = exp.plan("cpu", device="cpu")
    runs = cmp.load(p)
    if runs is None or any(r.store != "results" for g in runs.values() for r in g.values()):
        pytest.skip("the chapter's cpu runs are not all in the results store")
    return p, runs


def test_committed_runs_numbers_agree_with_their_records(cpu_runs):
    p, runs = cpu_runs
    every = [r for g in runs.values() for r in g.values()]
    recorded = [json.loads((r.path / "record.json").read_text())["wall_time"] for r in every]
    assert views.training_numbers(runs) == {"n_runs": str(len(every)),
                                            "train_minutes": f"{sum(recorded) / 60:.1f}"}
    text = runs["text"]
    ref = p.references["20newsgroups"]          # the view without data_name (no data loaded)
    view = {"ours": cmp.evaluate_runs(text, metrics=["error"]), "paper": cmp.paper_values(ref), "ref": ref,
            "source": "test"}
    z, y = text[("cross_entropy", 1)].logits("test")
    error = 100 * np.mean(np.asarray(z, dtype=np.float64).argmax(1) != y)      # independent of metrics.py
    got = views.text_numbers(view, text)
    assert got["text_ce_err"] == f"{error:.2f}"
    assert got["text_seconds"] == f"{np.mean([r.wall_time for r in text.values()]):.0f}"
    assert got["text_n_runs"] == str(len(p.group("text")))       # the sentence's count of text runs
    assert "frozen" in got["text_embeddings"]
    assert len(views.text_tables(view, p.methods["text"], ["error"])) == 1


def test_rule_texts_quote_the_thresholds_and_the_papers_printed_s99():
    """The verdict prose's numbers: the |S99| threshold of the rule and the paper's Table 6
    cell (CIFAR-10 ResNet-50 cross-entropy, before TS) as printed."""
    from replicate.experiments.focal_loss.claims import MIN_S99

    texts = views.rule_texts()
    assert texts["min_s99"] == f"{MIN_S99:g} %"
    assert texts["paper_ce_s99"] == "95.93 %"


def test_the_papers_s99_cell_is_the_one_its_text_prints():
    """The Table 6 cell the prose quotes, read again from the paper's text (the ResNet-50 row)."""
    lines = paper_text("mukhoti2020")
    row = next(ln for ln in lines[475:481] if "ResNet 50" in ln or "ResNet-50" in ln)
    assert "95.93" in row and views.rule_texts()["paper_ce_s99"] == "95.93 %"


# ----------------------------------------------------------------------------- the claims and their tests
def _exact(cells):
    """Exact evidence of one row from ``{(method, metric, post): value}``."""
    from replicate.claims.evidence import Exact

    frame = pd.DataFrame([{"row": "r", "dataset": "cifar10", "model": "m", "method": m, "metric": k, "post": p,
                           "setting": "", "value": v} for (m, k, p), v in cells.items()])
    return Exact(frame, "constructed")


def _decide(cells, **kw):
    from replicate.claims.claim import claims_log
    from replicate.experiments.focal_loss.claims import definitions

    return claims_log("mukhoti2020", "exp_focal_loss", definitions(**kw), [_exact(cells)], "Verdict").frame()


def _cells(ece_pre, ece_post, temps, s99_post, s99_pre):
    out = {}
    for name, (metric, post) in (("ece_pre", ("ece", "none")), ("ece_post", ("ece", "ts")), ("temps", ("T", "ts")),
                                 ("s99_post", ("s99_fraction", "ts")), ("s99_pre", ("s99_fraction", "none"))):
        out.update({(m, metric, post): v for m, v in locals()[name].items()})
    return out


def test_the_claims_on_constructed_numbers():
    good = _cells({"cross_entropy": 5.0, "fl3": 2.0, "flsd53": 1.0}, {"cross_entropy": 1.5, "fl3": 1.2, "flsd53": 0.8},
                  {"cross_entropy": 2.5, "fl3": 1.3, "flsd53": 1.1}, {"cross_entropy": 5.0, "flsd53": 20.0},
                  {"cross_entropy": 90.0})
    bad = _cells({"cross_entropy": 1.0, "fl3": 0.5, "flsd53": 2.0}, {"cross_entropy": 0.5, "fl3": 0.7, "flsd53": 0.6},
                 {"cross_entropy": 1.0, "fl3": 1.0, "flsd53": 1.3}, {"cross_entropy": 30.0, "flsd53": 20.0},
                 {"cross_entropy": 90.0})
    assert _decide(good).verdict.tolist() == ["holds"] * 5
    assert _decide(bad).verdict.tolist() == ["fails"] * 5
    only_ce = {k: v for k, v in good.items() if k[0] == "cross_entropy"}
    assert _decide(only_ce).verdict.tolist() == ["not tested"] * 5


def test_s99_claim_needs_a_confident_cross_entropy_model():
    cells = _cells({"cross_entropy": 5.0, "flsd53": 1.0}, {"cross_entropy": 1.0, "flsd53": 1.0},
                   {"cross_entropy": 2.0, "flsd53": 1.0}, {"cross_entropy": 0.1, "flsd53": 0.0},
                   {"cross_entropy": 0.5})
    row = _decide(cells).iloc[4]
    assert row.verdict == "not tested" and "confident before TS" in row.note and "0.50" in row.note
    assert _decide(cells, min_s99=0.4).iloc[4].verdict == "fails"
    for bad in (-1, True, "0.1"):
        with pytest.raises(ValueError, match="min_s99"):
            _decide(cells, min_s99=bad)


def test_t_near_one_is_the_books_one_reading():
    from replicate.claims import wording
    from replicate.experiments.focal_loss.claims import definitions

    cells = {("flsd53", "T", "ts"): 1.1}             # 1.1 - 1 > 0.1 in floating point, still near
    assert _decide(cells).verdict.tolist()[1] == "holds"
    assert wording.T_TOLERANCE == 0.1 and "[0.9, 1.1]" in definitions()[1].how(rp_names())


def rp_names():
    from replicate.comparison.report import names

    return names()


def test_the_papers_side_is_every_printed_row_counted_here_from_the_tables():
    """Claim 1 on the paper's side: FLSD-53's pre-T ECE below cross-entropy's in almost all
    (80 %) of the rows where Tables 1 and 7 print both, counted here from the stored tables."""
    import math as _m

    from replicate import paper_tables
    from replicate.experiments.focal_loss import report

    ece = pd.concat([paper_tables.get("mukhoti2020", t) for t in ("table1", "table4", "table7")])
    ece = ece[(ece.metric == "ece") & ~ece.temperature_scaled.astype(bool)]
    pivot = ece.drop_duplicates(["dataset", "model", "method"]).pivot_table(index=["dataset", "model"],
                                                                           columns="method", values="value")
    both = pivot[["flsd53", "cross_entropy"]].dropna()
    below = int((both.flsd53 < both.cross_entropy).sum())
    expected = "holds" if below >= _m.ceil(0.8 * len(both) - 1e-9) else "fails"
    log = report.decide(exp.plan("smoke", device="cpu"), None)
    row = log.frame().query("evidence.str.startswith('paper')").iloc[0]
    assert row.verdict == expected
    assert row.result.count("FLSD-53 − Cross Entropy") == len(both)


def test_noise_example_texts_count_the_resamples_the_table_shows():
    """Issue #32, item 5: the claims ledger's "(the first five)" is the length of the
    worked example's resamples table, not typed."""
    import pandas as pd

    example = {"point": -1.234, "low": -2.0, "high": -0.5, "n_boot": 1000, "n_test": 10000, "verdict": "holds",
               "row": "CIFAR-10", "resamples": pd.DataFrame({"resample": range(1, 6)})}
    texts = views.noise_example_texts(example)
    assert texts["ex_n_shown"] == "five" and texts["ex_point"] == "-1.23" and texts["ex_n_boot"] == "1,000"
    assert views.noise_example_texts({**example, "resamples": pd.DataFrame({"r": range(12)})})["ex_n_shown"] == "12"
    missing = views.noise_example_texts(None)
    assert set(missing) == set(texts) and all("not available" in v for v in missing.values())
