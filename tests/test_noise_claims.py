"""The claim side of replicate.comparison.noise: the one counting rule for claims over rows
(tally), the quantifiers of replicate.comparison.wording, and the tests chapters build from
them (in_rows, row_readings, at_most, best(top=k), negated, detects, bootstrap_statistic).

Oracles: the counting rule against a brute force over every way the undecided rows could
resolve (holds when every completion reaches k, fails when none does); the row tests on
constructed models whose calibration is known by construction (tests/test_noise.py's
calibrated and over-confident models); the bootstrap statistic against a loop that
recomputes the metric on each resample with the package's own metric function."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from generated_data import shifted_model_probs

from replicate import claims as cl
from replicate import comparison as cmp
from replicate.comparison import board, noise, wording
from replicate.comparison.evaluation import METRICS

K = 4
V = ("holds", "fails", "inconclusive")


def _outcome(v: str) -> cl.Outcome:
    return cl.inconclusive("more seeds") if v == "inconclusive" else cl.Outcome(v)


def _brute(verdicts, k: int) -> str:
    undecided = [i for i, v in enumerate(verdicts) if v == "inconclusive"]
    reach = []
    for fill in itertools.product(("holds", "fails"), repeat=len(undecided)):
        full = list(verdicts)
        for i, v in zip(undecided, fill):
            full[i] = v
        reach.append(full.count("holds") >= k)
    return "holds" if all(reach) else "fails" if not any(reach) else "inconclusive"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_tally_agrees_with_a_brute_force_over_every_completion_of_the_undecided_rows(n):
    for verdicts in itertools.product(V, repeat=n):
        for k in range(1, n + 1):
            got = noise.tally({f"r{i}": _outcome(v) for i, v in enumerate(verdicts)}, k)
            assert got.verdict == _brute(verdicts, k), (verdicts, k)
            if got.verdict == "inconclusive":
                assert f"{k} of {n} rows must hold" in got.note and "more seeds" in got.note
                held, failed = verdicts.count("holds"), verdicts.count("fails")
                assert (f"{held} {'holds' if held == 1 else 'hold'}, {failed} {'fails' if failed == 1 else 'fail'}, "
                        f"{verdicts.count('inconclusive')} undecided") in got.note


def test_tally_leaves_untested_rows_out_and_refuses_bad_counts():
    rows = {"a": cl.Outcome("holds"), "b": cl.untested("no data")}
    assert noise.tally(rows, 1).verdict == "holds"
    with pytest.raises(ValueError, match="k must be at most the number of rows"):
        noise.tally(rows, 2)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        noise.tally(rows, 0)
    with pytest.raises(ValueError, match="at least one decided or undecided row"):
        noise.tally({"b": cl.untested("no data")}, 1)


def test_all_hold_needs_every_part():
    h, f, i = (_outcome(v) for v in V)
    assert noise.all_hold([h, h]).verdict == "holds"
    assert noise.all_hold([h, i, f]).verdict == "fails"
    assert noise.all_hold([h, i]).verdict == "inconclusive"
    assert noise.all_hold([h, cl.untested("x")]).verdict == "not tested"


def test_quantifiers_are_defined_once():
    assert [wording.needed("every", n) for n in (1, 2, 11)] == [1, 2, 11]
    assert [wording.needed("most", n) for n in (1, 2, 3, 4, 11)] == [1, 2, 2, 3, 6]
    assert [wording.needed("almost all", n) for n in (1, 5, 10)] == [1, 4, 8]
    assert wording.needed(9 / 11, 11) == 9 and wording.needed(9 / 11, 2) == 2 and wording.needed("any", 7) == 1
    assert all(wording.needed("most", n) > n / 2 >= wording.needed("most", n) - 1 for n in range(1, 30))
    with pytest.raises(ValueError, match="quantifier must be one of every, most, almost all, any"):
        wording.needed("many", 3)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        wording.needed("most", 0)
    assert wording.T_NEAR_ONE == pytest.approx((0.9, 1.1)) and "0.1" in wording.near_one_text()


def test_decide_within_takes_grid_temperatures_at_their_ends():
    assert noise.decide_within(0.9, 1.1000000000000003, 0.9, 1.1, "x").verdict == "holds"
    assert noise.decide_within(1.11, 1.3, 0.9, 1.1, "x").verdict == "fails"
    assert noise.decide_within(1.0, 1.2, 0.9, 1.1, "x").verdict == "inconclusive"


# ----------------------------------------------------------------------------- runs made by construction
def _model_logits(y, rng, shift: float) -> np.ndarray:
    """Logits of a model whose top probability is c (+ shift): calibrated at shift 0."""
    return np.log(shifted_model_probs(y, rng, shift, K))


class _Run:
    """A stored run as the noise tests read it: test logits, and OOD logits when given."""

    def __init__(self, z, y, ood=None):
        self._z, self._y, self._ood = z, y, ood
        self.ood_sets = {board.OOD_SET: "noisy copies"} if ood is not None else {}

    def logits(self, split="test"):
        return (self._ood, self._y) if split.startswith("ood:") else (self._z, self._y)


def _evidence(shifts: dict, seed: int = 0, n: int = 3000, ood=None, name="row") -> noise.RunEvidence:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    runs = {}
    for i, (m, s) in enumerate(shifts.items()):
        z = _model_logits(y, np.random.default_rng(100 * seed + i), s)
        o = None if ood is None else ood(z, np.random.default_rng(7 + i))
        runs[(m, 1)] = _Run(z, y, o)
    return noise.RunEvidence(runs, name=name)


def test_in_rows_counts_rows_decided_within_the_noise():
    """Row A: a clear win (calibrated vs +0.15); row B: a tie (two calibrated models); row C:
    a clear loss. 'every' of A, B is inconclusive, 'any' holds; with C, 'every' fails."""
    a = _evidence({"m": 0.0, "r": 0.15}, 1, name="A")
    b = _evidence({"m": 0.0, "r": 0.0}, 2, name="B")
    c = _evidence({"m": 0.15, "r": 0.0}, 3, name="C")
    test = noise.lower("m", "r", n_boot=300)
    assert noise.in_rows(test, "every")({"A": a, "B": b}).verdict == "inconclusive"
    assert noise.in_rows(test, "any")({"A": a, "B": b}).verdict == "holds"
    assert noise.in_rows(test, "every")({"A": a, "B": b, "C": c}).verdict == "fails"
    assert noise.in_rows(test, "most")({"A": a, "C": c}).verdict == "fails"
    only_a = noise.in_rows(test, "every", rows=lambda r: r == "A")({"A": a, "B": b, "C": c})
    assert only_a.verdict == "holds" and "A:" in only_a.text and "C:" not in only_a.text
    readings = noise.row_readings(test, every_row="every", any_row="any")
    assert readings({"A": a, "B": b}).verdict == "depends on reading"
    assert readings({"A": a}).verdict == "holds"                 # one row: one test, one verdict
    missing = noise.in_rows(noise.lower("m", "absent"), "every")({"A": a})
    assert missing.verdict == "not tested" and "no run of absent" in missing.outcome.note
    with pytest.raises(ValueError, match="wrap it in noise.in_rows"):
        test({"A": a, "B": b})


def test_at_most_and_negated_on_constructed_models():
    ev = _evidence({"m": 0.0, "r": 0.15, "t": 0.0}, 4)
    assert noise.at_most("r", "m", 20.0)(ev).verdict == "holds"      # 15 points over, margin 20
    assert noise.at_most("r", "m", 2.0)(ev).verdict == "fails"
    assert noise.at_most("m", "t", 0.0)(ev).verdict == "inconclusive"
    win = noise.lower("m", "r")
    assert noise.negated(win)(ev).verdict == "fails" and noise.negated(noise.lower("r", "m"))(ev).verdict == "holds"


def test_best_among_the_top_k_uses_the_rank_intervals():
    ev = _evidence({"best": 0.0, "mid": 0.12, "worst": 0.3}, 5)
    assert noise.best("mid", top=2, n_boot=100)(ev).verdict == "holds"
    assert noise.best("mid", n_boot=100)(ev).verdict == "fails"
    assert noise.best("worst", top=2, n_boot=100)(ev).verdict == "fails"
    assert noise.best("best", among=["best", "gone"], n_boot=100)(ev).verdict == "not tested"


def test_detects_leaves_models_at_chance_untested():
    """OOD inputs drawn like the test inputs (AUROC about 50 %): not tested, with the AUROCs;
    OOD inputs with flat logits (entropy far higher: AUROC near 100 %): the inner test decides."""
    same = _evidence({"m": 0.0, "r": 0.15}, 6, n=1500, ood=lambda z, rng: z[rng.permutation(len(z))])
    flat = _evidence({"m": 0.0, "r": 0.15}, 6, n=1500, ood=lambda z, rng: np.zeros_like(z))
    inner = noise.lower("m", "r", n_boot=200)
    r = noise.detects(inner)(same)
    assert r.verdict == "not tested" and "at or near chance" in r.outcome.note and "below 70 %" in r.outcome.note
    assert noise.detects(inner)(flat).verdict == "holds"
    iv = noise.interval(flat.cells(), "m", "auroc", n_boot=50)
    assert iv["low"] > wording.DETECTS_AUROC


def test_bootstrap_statistic_matches_a_loop_over_the_same_resamples():
    ev = _evidence({"a": 0.0, "b": 0.1}, 7, n=800)
    cells = ev.cells()
    groups = {"a": [cells[("a", 1)]], "b": [cells[("b", 1)]]}
    r = noise.bootstrap_statistic(groups, lambda v: v["b"] - 0.5 * v["a"], "ece", n_boot=60, seed=3)
    idx = noise._draws(800, 60, 3)
    loop = [100 * (METRICS["ece"][1](cells[("b", 1)].probs[i], cells[("b", 1)].labels[i], None)
                   - 0.5 * METRICS["ece"][1](cells[("a", 1)].probs[i], cells[("a", 1)].labels[i], None)) for i in idx]
    lo, hi = np.quantile(loop, [0.025, 0.975])
    assert (r["low"], r["high"]) == pytest.approx((lo, hi), rel=1e-9)
    with pytest.raises(ValueError, match="groups must be a non-empty dict"):
        noise.bootstrap_statistic({}, lambda v: 0.0)


def test_log_claims_keeps_a_statement_beyond_the_paper_one():
    import pandas as pd

    ev = _evidence({"m": 0.0, "r": 0.15}, 8)
    summ = pd.DataFrame({"method": ["m", "r"], "metric": "ece", "temperature_scaled": False, "mean": [1.0, 2.0],
                         "std": math.nan, "T": math.nan, "T_std": math.nan, "n_seeds": 1})
    claim = cmp.Claim("m below r (the book's)", "(the book)", lambda s: ("m, r", cl.beyond(True)), "pre-T ECE",
                      noise.lower("m", "r"))
    log = cmp.log_claims(cl.ClaimLog("mukhoti2020", "exp_focal_loss", kind="experiment", section="s"), (claim,),
                         {"ours": summ}, runs={"ours": ev})
    row = log.frame().iloc[0]
    assert row.verdict == "beyond the paper" and row.check == "holds" and "paired bootstrap" in row.how


def test_verdict_counts_give_the_split_and_the_rule_every_verdict_section_quotes():
    log = cl.ClaimLog("mukhoti2020", "exp_focal_loss", kind="experiment", section="Verdict")
    log.add("a", "Sec. 1", "how", "1", cl.inconclusive("~9 seeds"), evidence="ours: cpu, cifar10, tiny_cnn, seed 1")
    log.add("a", "Sec. 1", "how", "1", cl.Outcome("holds"), evidence="paper: Table 1")
    log.add("b", "Sec. 1", "how", "1", cl.Outcome("fails"), evidence="ours: cpu, cifar10, tiny_cnn, seed 1")
    got = cmp.chapter.verdict_counts(log.frame(), {"ours": "ours", "paper": "paper"})
    assert got["n_inconclusive_ours"] == "1" and got["n_fails_ours"] == "1" and got["n_holds_paper"] == "1"
    assert got["evidence_split"] == ("the paper's tables: 1 verdict (1 holds); our runs (cpu): 2 verdicts "
                                     "(1 fails, 1 inconclusive)")
    rule = got["noise_rule"]
    assert f"{noise.MIN_SEEDS} or more" in rule and wording.near_one_text() in rule and "70 %" in rule
