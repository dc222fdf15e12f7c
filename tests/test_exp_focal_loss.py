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
    assert len(views.text_numbers(None, {})) == 4


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
    assert "frozen" in got["text_embeddings"]
    assert len(views.text_tables(view, p.methods["text"], ["error"])) == 1


def test_rule_texts_quote_the_thresholds_and_the_papers_printed_s99():
    """The verdict prose's numbers: the |S99| threshold of the rule and the paper's Table 6
    cell (CIFAR-10 ResNet-50 cross-entropy, before TS) as printed, read from the paper's text
    when it is at hand."""
    from replicate import paper_tables
    from replicate.experiments.focal_loss.rules import MIN_S99

    texts = views.rule_texts()
    assert texts["min_s99"] == f"{MIN_S99:g} %"
    assert texts["paper_ce_s99"] == "95.93 %"
    lines = paper_tables.source_lines("mukhoti2020")
    if lines is not None:                      # the paper's text: the ResNet-50 row of Table 6
        row = next(ln for ln in lines[475:481] if "ResNet 50" in ln or "ResNet-50" in ln)
        assert "95.93" in row
