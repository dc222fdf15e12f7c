"""The claim-test library (replicate.claims.tests, .decide, .claim, .evidence): one rule for
both sides - printed numbers decided by plain comparison, draws by their interval - with
generated "how" texts, row scopes and the counting rule."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replicate.claims import decide as d
from replicate.claims.claim import Claim, Over, claims_log, decide_over
from replicate.claims.evidence import Cell, Draws, Evidence, Exact, Missing, Named, Names, Row
from replicate.claims.tests import (AllOf, ByDataset, Count, Difference, Given, Highest, Lowest, Not, PerSeed, Readings,
                                    OnRows, Statistic, Trend, Value, Within, is_one, near_one)


class Drawn(Evidence):
    """Evidence with given draws: ``{(row, quantity): (point, reps)}``."""

    def __init__(self, values, rows=None, same=()):
        super().__init__("test")
        self.values, self.same = values, set(same)
        self._rows = rows or [Row(r) for r in dict.fromkeys(r for r, _ in values)]

    def rows(self):
        return self._rows

    def draws(self, row, q):
        if (row, q) not in self.values:
            return f"no {q} in {row}"
        point, reps = self.values[(row, q)]
        return Draws(point, None if reps is None else np.asarray(reps, float), "test draws", ((row, str(q), (1,)),))

    def identical(self, row, a, b):
        return "twins" if frozenset((a, b)) in self.same else None


A, B, C = Cell("a"), Cell("b"), Cell("c")


def _res(test, values, **kw):
    return test(Drawn(values, **kw), "r")


def test_decide_holds_fails_and_inconclusive_for_every_relation():
    assert d.decide(-2, -1, "<", 0, "").verdict == "holds"
    assert d.decide(0, 1, "<", 0, "").verdict == "fails"
    assert d.decide(-1, 1, "<", 0, "x").verdict == "inconclusive"
    assert d.decide(0, 1, "<=", 1, "").verdict == "holds"
    assert d.decide(1.5, 2, "<=", 1, "").verdict == "fails"
    assert d.decide(2, 3, ">=", 2, "").verdict == "holds"
    with pytest.raises(ValueError, match="op must be one of"):
        d.decide(0, 1, "!=", 0, "")
    with pytest.raises(ValueError, match="low must be <= high"):
        d.decide(1, 0, "<", 0, "")


def test_tally_counts_rows_and_leaves_untested_ones_out():
    o = {"x": d.Resolution(d.Outcome("holds")), "y": d.Resolution(d.Outcome("fails")),
         "z": d.not_tested("no run")}
    assert d.tally(o, 1).verdict == "holds"
    assert d.tally(o, 2).verdict == "fails"
    with pytest.raises(ValueError, match="k must be at most"):
        d.tally(o, 3)


def test_printed_numbers_are_decided_by_plain_comparison():
    """The same test on the paper's side: no draws, the interval is the point."""
    frame = pd.DataFrame({"row": ["CIFAR-10"] * 3, "method": ["a", "b", "c"], "metric": ["ece"] * 3,
                          "post": ["none"] * 3, "setting": [""] * 3, "value": [1.0, 2.0, 1.0]})
    ev = Exact(frame, "Table 1")
    assert Difference(A, B, "<")(ev, "CIFAR-10").verdict == "holds"
    assert Difference(A, C, "<")(ev, "CIFAR-10").verdict == "fails"            # a tie is not lower
    assert Lowest(A, [B, C])(ev, "CIFAR-10").verdict == "fails"
    r = Difference(A, B, "<")(ev, "CIFAR-10")
    assert r.low == r.high == -1.0 and "no noise" in r.noise
    assert "the paper prints no" in Difference(A, Cell("z"), "<")(ev, "CIFAR-10").outcome.note


def test_draws_decide_by_their_interval():
    reps_a, reps_b = np.linspace(0, 1, 101), np.linspace(0.5, 1.5, 101)
    r = _res(Difference(A, B, "<"), {("r", A): (0.5, reps_a), ("r", B): (1.0, reps_b)})
    assert r.verdict == "holds" and r.estimate == -0.5 and r.high < 0
    wide = np.linspace(-1, 2, 101)
    r = _res(Difference(A, B, "<"), {("r", A): (0.5, wide), ("r", B): (1.0, reps_b)})
    assert r.verdict == "inconclusive" and "times the seeds and test examples" in r.outcome.note


def test_lowest_is_minus_the_best_rival_and_top_k():
    vals = {("r", A): (1.0, None), ("r", B): (2.0, None), ("r", C): (0.5, None)}
    assert _res(Lowest(A, [B, C]), vals).verdict == "fails"
    assert _res(Lowest(A, [B, C], top=2), vals).verdict == "holds"
    assert _res(Highest(B, [A, C]), vals).verdict == "holds"
    missing = {("r", A): (1.0, None), ("r", B): (2.0, None)}
    assert _res(Lowest(A, [B, C]), missing).verdict == "holds"               # rivals without numbers left out
    with pytest.raises(ValueError, match="top must be"):
        Lowest(A, [B], top=2)


def test_same_model_is_not_a_comparison():
    vals = {("r", A): (1.0, None), ("r", B): (1.0, None)}
    r = _res(Difference(A, B, "<"), vals, same=[frozenset((A, B))])
    assert r.verdict == "not tested" and "same model at this profile: twins" in r.outcome.note


def test_within_value_statistic_and_trend():
    T = Cell("a", "T", "ts")
    assert _res(near_one(T), {("r", T): (1.05, np.linspace(0.95, 1.08, 50))}).verdict == "holds"
    assert _res(is_one(T), {("r", T): (1.0, np.linspace(0.9, 1.1, 50))}).verdict == "inconclusive"
    assert _res(Within(T, 0.9, 1.1), {("r", T): (2.0, None)}).verdict == "fails"
    g = Named("gamma0", "final gamma, lowest bin")
    assert _res(Value(g, ">", 20), {("r", g): (25.0, None)}).verdict == "holds"
    dd = Statistic(lambda a, b, c: (a - b) - (c - b), (A, B, C), "<", 0, text="difference of differences")
    r = _res(dd, {("r", A): (1.0, None), ("r", B): (2.0, None), ("r", C): (3.0, None)})
    assert r.verdict == "holds" and r.estimate == -2
    up = {("r", A): (1.0, None), ("r", B): (2.0, None), ("r", C): (3.0, None)}
    assert _res(Trend([A, B, C], "increasing"), up).verdict == "holds"
    assert _res(Trend([A, B, C], "decreasing"), up).verdict == "fails"


def test_combinators():
    vals = {("r", A): (1.0, None), ("r", B): (2.0, None), ("r", C): (3.0, None)}
    yes, no = Difference(A, B, "<"), Difference(C, B, "<")
    assert _res(AllOf(yes, no), vals).verdict == "fails"
    assert _res(Not(no), vals).verdict == "holds"
    assert _res(Count({"x": yes, "y": no, "z": Difference(A, C, "<")}, "most"), vals).verdict == "holds"
    assert _res(Readings(first=yes, second=no), vals).verdict == "depends on reading"
    gate = Value(C, "<", 2)
    r = _res(Given(gate, yes, "the models must be confident"), vals)
    assert r.verdict == "not tested" and "confident" in r.outcome.note
    assert _res(Given(Value(A, "<", 2), no, "x"), vals).verdict == "fails"


def test_per_seed_counts_each_run():
    class Seeds(Drawn):
        def per_seed(self, row):
            return {1: Drawn({("r", A): (1.0, None), ("r", B): (2.0, None)}),
                    2: Drawn({("r", A): (3.0, None), ("r", B): (2.0, None)})}
    ev = Seeds({("r", A): (2.0, None), ("r", B): (2.0, None)})
    assert PerSeed(Difference(A, B, "<"), "every")(ev, "r").verdict == "fails"
    assert PerSeed(Difference(A, B, "<"), "any")(ev, "r").verdict == "holds"
    assert PerSeed(Difference(A, B, "<"))(Drawn({("r", A): (1.0, None)}), "r").verdict == "not tested"


def test_over_selects_rows_and_counts_them():
    rows = [Row("c10", "cifar10"), Row("c100", "cifar100"), Row("tin", "tiny_imagenet")]
    vals = {("c10", A): (1.0, None), ("c10", B): (2.0, None), ("c100", A): (1.0, None), ("c100", B): (2.0, None),
            ("tin", A): (3.0, None), ("tin", B): (2.0, None)}
    ev = Drawn(vals, rows)
    t = Difference(A, B, "<")
    assert decide_over(t, ev, Over("every")).verdict == "fails"
    assert decide_over(t, ev, Over(2 / 3)).verdict == "holds"
    assert decide_over(t, ev, Over("every", datasets=("cifar10", "cifar100"))).verdict == "holds"
    assert decide_over(t, ev, Over("every", datasets=("svhn",))).verdict == "not tested"
    r = decide_over(t, ev, Over(readings=(("every row", "every"), ("most rows", "most"))))
    assert r.verdict == "depends on reading"
    with pytest.raises(ValueError, match="quantifier must be one of"):
        Over("several")


def test_claims_log_rows_say_evidence_noise_and_how():
    frame = pd.DataFrame({"row": ["CIFAR-10"] * 2, "method": ["a", "b"], "metric": ["ece"] * 2,
                          "post": ["none"] * 2, "setting": [""] * 2, "value": [1.0, 2.0]})
    names = Names({"a": "Alpha", "b": "Beta"}, {"ece": "ECE"})
    sides = [Exact(frame, "Table 1", names), Missing("ours", "cpu", "the runs are not in the store"),
             Drawn({("CIFAR-10", A): (1.0, np.linspace(0.5, 1.5, 40)), ("CIFAR-10", B): (3.0, np.full(40, 3.0))})]
    log = claims_log("p", "exp_x", [Claim("Alpha beats Beta", "Table 1", Difference(A, B, "<")),
                                    Claim("An aside", "(book)", Difference(B, A, "<"), beyond=True)], sides, "Verdict",
                     names)
    f = log.frame()
    assert list(f.verdict) == ["holds", "not tested", "holds", "beyond the paper", "not tested", "beyond the paper"]
    assert "ECE pre-T: Alpha − Beta below 0" in f.how[0] and "printed numbers" in f.how[0]
    assert "noise model" in f.how[2]
    assert f.evidence[0] == "paper: Table 1; rows: CIFAR-10" and f.evidence[1] == "ours: cpu"
    assert f.noise[2] == "test draws" and "no noise" in f.noise[0]
    assert "noise" in log.table().columns


# ----------------------------------------------------------------------------- the counting rule, brute force
import itertools  # noqa: E402

V = ("holds", "fails", "inconclusive")


def _outcome(v: str):
    from replicate.claims import vocabulary as voc

    return voc.inconclusive("more seeds") if v == "inconclusive" else voc.Outcome(v)


def _brute(verdicts, k: int) -> str:
    """Holds when every completion of the undecided items reaches k holds, fails when none does."""
    undecided = [i for i, v in enumerate(verdicts) if v == "inconclusive"]
    reach = []
    for fill in itertools.product(("holds", "fails"), repeat=len(undecided)):
        full = list(verdicts)
        for i, v in zip(undecided, fill):
            full[i] = v
        reach.append(full.count("holds") >= k)
    return "holds" if all(reach) else "fails" if not any(reach) else "inconclusive"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_tally_agrees_with_a_brute_force_over_every_completion_of_the_undecided_items(n):
    for verdicts in itertools.product(V, repeat=n):
        for k in range(1, n + 1):
            got = d.tally({f"r{i}": _outcome(v) for i, v in enumerate(verdicts)}, k)
            assert got.verdict == _brute(verdicts, k), (verdicts, k)
            if got.verdict == "inconclusive":
                assert f"{k} of {n} rows must hold" in got.note and "more seeds" in got.note


def test_quantifiers_are_defined_once():
    from replicate.claims import wording

    assert [wording.needed("every", n) for n in (1, 2, 11)] == [1, 2, 11]
    assert [wording.needed("most", n) for n in (1, 2, 3, 4, 11)] == [1, 2, 2, 3, 6]
    assert [wording.needed("almost all", n) for n in (1, 5, 10)] == [1, 4, 8]
    assert wording.needed(9 / 11, 11) == 9 and wording.needed("any", 7) == 1
    assert wording.quantifier_text(9 / 11, "rows", 11) == "at least 9/11 of the 11 rows"
    assert d.decide_within(0.9, 1.1000000000000003, 0.9, 1.1, "x").verdict == "holds"


def test_over_selects_networks_and_ordinals_read_right():
    from replicate.claims.tests import _ordinal

    rows = [Row("a", "cifar10", "resnet50"), Row("b", "cifar10", "resnet110")]
    ev = Drawn({("a", A): (1.0, None), ("a", B): (2.0, None), ("b", A): (3.0, None), ("b", B): (2.0, None)}, rows)
    assert decide_over(Difference(A, B, "<"), ev, Over("every", models=("resnet50",))).verdict == "holds"
    assert "with resnet50" in Over(models=("resnet50",)).how()
    assert [_ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
    r = Lowest(A, [B, C])(Drawn({("r", B): (1.0, None)}), "r")
    assert r.verdict == "not tested" and "no Cell(method='a'" in r.outcome.note


def test_a_claim_that_fails_its_quantifier_may_hold_with_conditions():
    rows = [Row("a"), Row("b"), Row("c")]
    vals = {("a", A): (1.0, None), ("a", B): (2.0, None), ("b", A): (1.0, None), ("b", B): (2.0, None),
            ("c", A): (3.0, None), ("c", B): (2.0, None)}
    ev = Drawn(vals, rows)
    r = decide_over(Difference(A, B, "<"), ev, Over("every", conditional="most"))
    assert r.verdict == "holds with conditions" and r.outcome.note == "only in 2 of 3 rows: a; b"
    assert decide_over(Difference(B, A, "<"), ev, Over("every", conditional="most")).verdict == "fails"
    assert "holds with conditions in more than half" in Over("every", conditional="most").how()
    with pytest.raises(ValueError, match="give one of them"):
        Over(conditional="most", readings=(("a", "every"), ("b", "most")))


def test_rank_of_a_figure_statement_templates_data_sets_and_networks():
    """``complete`` ranks need every number; templates name the cells; ``ByDataset`` and
    ``OnRows`` pick a row's test by its data set or network key."""
    missing = {("r", A): (1.0, None), ("r", B): (2.0, None)}
    r = _res(Lowest(A, [B, C], complete=True), missing)
    assert r.verdict == "not tested" and r.outcome.note == f"no {C} in r"      # the missing rival says why
    assert _res(Lowest(A, [B, C], complete=True), {**missing, ("r", C): (3.0, None)}).verdict == "holds"
    names = Names({})
    tmpl = Statistic(lambda a, b: a - b, (A, B), "<", 0, text="{0} − {1}")
    assert tmpl.statement(names) == f"{A.label(names)} − {B.label(names)}"
    assert Statistic(lambda a: a, (A,), "<", 0, text="plain").statement(names) == "plain"

    rows = [Row("c10", "cifar10", "resnet50"), Row("imnet", "imagenet", "resnet50"),
            Row("c100", "cifar100", "wide_resnet")]
    vals = {(row.name, q): (v, None) for row in rows for q, v in ((A, 1.0), (B, 2.0))}
    ev = Drawn(vals, rows=rows)
    by = ByDataset({("cifar10",): Difference(A, B, "<"), ("imagenet",): Difference(A, B, ">")})
    assert [by(ev, r.name).verdict for r in rows] == ["holds", "fails", "not tested"]
    assert "cifar100" in by(ev, "c100").outcome.note
    with pytest.raises(ValueError, match="tests must map"):
        ByDataset({"cifar10": Difference(A, B, "<")})
    on = OnRows(Difference(A, B, "<"), ("resnet50",))
    assert [on(ev, r.name).verdict for r in rows] == ["holds", "holds", "not tested"]
    ours_all = OnRows(Difference(A, B, "<"), ("resnet50",), paper_only=True)
    assert ours_all(ev, "c100").verdict == "holds"                         # ours: every network
    paper = Drawn(vals, rows=rows)
    paper.side = "paper"
    assert ours_all(paper, "c100").verdict == "not tested"
    with pytest.raises(ValueError, match="models must name"):
        OnRows(Difference(A, B, "<"), ())
