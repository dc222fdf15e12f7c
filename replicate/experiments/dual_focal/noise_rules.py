"""The Dual Focal Loss claims decided on our runs within their noise (a split of the rules
role, :mod:`.rules` and :mod:`.appendix_rules`): each returns a test of
:mod:`replicate.comparison.noise` that reads our runs of each table row (``{row:
RunEvidence}``, :func:`.evidence.run_rows`: the image row over the seeds, the text row).

Each row is decided by a comparison the runs must resolve (the paired t-test over three or
more seeds, else a paired bootstrap over the test examples; bootstrap rank intervals for "the
lowest"); the rows are counted by the book's one rule
(:func:`replicate.comparison.noise.tally`) with the thresholds of :mod:`.terms` ("most" more
than half, "almost all" 80 %); temperatures by :func:`replicate.comparison.noise.near`.
"""
from __future__ import annotations

import math

from ...claims import Outcome
from ...comparison import noise, wording
from .terms import SEVEN, TOP_K

DFL = "dual_focal"
BASELINES = tuple(k for k in SEVEN if k != DFL)
TEXT = "20newsgroups"


def _image(row: str) -> bool:
    return not row.startswith(TEXT)


def _text(row: str) -> bool:
    return row.startswith(TEXT)


def under_confident():
    """Sec. 3.2: FLSD-53's optimal T below 1 (a grid value below 1.0) in some row / in most rows."""
    below = noise.near("flsd53", 0.0, wording.T_IS_ONE[0])
    return noise.row_readings(below, can_happen="any", in_most_rows="most")


def ifl_overconfident():
    """Sec. 3.2: inverse focal needs a larger T than cross-entropy, in most rows."""
    return noise.in_rows(noise.t_higher("inverse_focal", "cross_entropy"), "most")


def lowest_especially_pre(metric: str = "ece", rows=None):
    """DFL the lowest of the seven (pre-T ``metric``) in most rows, and in at least as many
    rows as post T: decided rows counted by :func:`replicate.comparison.noise.tally`; the
    "especially before TS" part fails when more rows resolve DFL lowest post T than pre T."""
    pre = noise.in_rows(noise.best(DFL, SEVEN, metric), "most", rows=rows)
    post = noise.in_rows(noise.best(DFL, SEVEN, metric, scaled=True), "most", rows=rows)

    def test(ev) -> noise.Resolution:
        a, b = pre(ev), post(ev)
        held = [sum(r.verdict == "holds" for r in part.values()) for x in (a, b)
                for part in x.details.get("rows", {}).values()]
        outcome = a.outcome
        if outcome.verdict == "holds" and len(held) == 2 and held[1] > held[0]:
            outcome = Outcome("fails", f"resolved lowest post T in {held[1]} rows, pre T in {held[0]}")
        return noise.Resolution(math.nan, math.nan, math.nan, a.test, a.needs, outcome,
                                f"pre T: {a.text} | post T: {b.text}", {"pre": a, "post": b})
    return test


def _mixed(ev, dfl_scaled: bool, others_scaled: bool) -> dict:
    """Cells of DFL (pre or post T) and the baselines (pre or post T) in one dict."""
    out = {(m, s): c for (m, s), c in ev.cells(dfl_scaled).items() if m == DFL}
    out.update({(m, s): c for (m, s), c in ev.cells(others_scaled).items() if m in BASELINES})
    return out


def beats_post_ts():
    """Sec. 5.1: DFL's pre-T ECE below the baselines' post-T ECE, read as below the best
    baseline / below most baselines, each in most rows."""
    def row_best(ev) -> noise.Resolution:
        if DFL not in ev.methods:
            return noise.not_tested(f"no DFL run in {ev.name}")
        return ev.memo(("dfl_pre_vs_post_best",), lambda: noise.best_of(_mixed(ev, False, True), DFL, "ece",
                                                                   labels=noise.method_labels()))

    def row_most(ev) -> noise.Resolution:
        if DFL not in ev.methods:
            return noise.not_tested(f"no DFL run in {ev.name}")
        cells = _mixed(ev, False, True)
        parts = {b: ev.memo(("dfl_pre_vs_post", b), lambda b=b: noise.compare(cells, DFL, b, "ece", "lower",
                                                                                labels=noise.method_labels()))
                 for b in BASELINES if any(k[0] == b for k in cells)}
        outcome = noise.tally(parts, wording.needed("most", len(parts)), "baselines")
        name = noise.method_labels()
        return noise.Resolution(math.nan, math.nan, math.nan, next(iter(parts.values())).test,
                                outcome.note if outcome.verdict == "inconclusive" else "", outcome,
                                "; ".join(f"DFL pre T − {name[b]} post T {p.estimate:+.2f} [{p.low:.2f}, "
                                          f"{p.high:.2f}]" for b, p in parts.items()))
    return noise.readings_of(below_the_best_baseline=noise.in_rows(row_best, "most"),
                             below_most_baselines=noise.in_rows(row_most, "most"))


def t_is_one(method: str = DFL):
    """DFL's optimal T is 1 (the grid value 1.0) in every row."""
    return noise.in_rows(noise.near(method, *wording.T_IS_ONE), "every")


def ifl_worst():
    """Sec. 5.1: inverse focal the worst of the seven / above cross-entropy, in most rows."""
    worst = noise.all_of(*(noise.higher("inverse_focal", m) for m in SEVEN if m != "inverse_focal"))
    return noise.readings_of(worst_in_most_rows=noise.in_rows(worst, "most"),
                             above_cross_entropy=noise.in_rows(noise.higher("inverse_focal", "cross_entropy"), "most"))


def text_row():
    """Sec. 5.1: DFL the lowest pre-T and post-T ECE on 20 Newsgroups."""
    both = noise.all_of(noise.best(DFL, SEVEN), noise.best(DFL, SEVEN, scaled=True))
    return noise.in_rows(both, "every", rows=_text)


def fig3_metrics():
    """Fig. 3: DFL the lowest pre-T ECE, AdaECE and classwise ECE on the CIFAR-10 row."""
    parts = {m: noise.best(DFL, SEVEN, m) for m in ("ece", "adaece", "classwise_ece")}
    return noise.in_rows(parts, "every", rows=_image)


def only_t_one():
    """Fig. 3: DFL's T is 1 and no other method's is, on the CIFAR-10 row."""
    def test(ev) -> noise.Resolution:
        others = [m for m in SEVEN if m != DFL and m in ev.methods]
        return noise.all_of(noise.near(DFL, *wording.T_IS_ONE),
                            *(noise.negated(noise.near(m, *wording.T_IS_ONE)) for m in others))(ev)
    return noise.in_rows(test, "every", rows=_image)


def accuracy_vs_fl():
    """Table 2: DFL's error below FLSD-53's in almost all rows."""
    return noise.in_rows(noise.lower(DFL, "flsd53", "error"), "almost all")


def adaece_competitive(gap: float = 0.1):
    """App. E: DFL's pre-T AdaECE within ``gap`` points of the lowest other method's in every
    row (the lowest other by its point AdaECE), and the lowest in all rows but one."""
    def near_lowest(ev) -> noise.Resolution:
        if DFL not in ev.methods:
            return noise.not_tested(f"no DFL run in {ev.name}")
        cells = ev.cells(False)
        others = [m for m in SEVEN if m != DFL and m in ev.methods]
        rival = min(others, key=lambda m: math.fsum(noise.score(c, "adaece") for (k, _), c in cells.items()
                                                     if k == m))
        return noise.at_most(DFL, rival, gap, "adaece")(ev)

    within = noise.in_rows(near_lowest, "every", rows=_image)

    def test(ev) -> noise.Resolution:
        r = within(ev)
        n = len(r.details.get("rows", {}).get("", {}))
        if n < 2 or r.verdict != "holds":      # "all but one" of one row asks nothing more
            return r
        lowest = noise.in_rows(noise.best(DFL, SEVEN, "adaece"), n - 1, rows=_image)(ev)
        outcome = noise.all_hold([r.outcome, lowest.outcome])
        return noise.Resolution(math.nan, math.nan, math.nan, r.test, outcome.note, outcome,
                                f"{r.text} | {lowest.text}")
    return test


def auroc_competitive():
    """App. E: DFL's AUROC among the best :data:`.terms.TOP_K` of the seven in most rows;
    tested on models that detect better than chance."""
    return noise.in_rows(noise.detects(noise.best(DFL, SEVEN, "auroc", top=TOP_K), methods=SEVEN), "most",
                         rows=_image)


def lowest_brier():
    """App. G: DFL the lowest RBS, i.e. the lowest Brier score (RBS is its square root, a
    monotone map), in every row."""
    return noise.in_rows(noise.best(DFL, SEVEN, "brier"), "every", rows=_image)


def robust_over_seeds():
    """App. H: DFL the lowest mean over the seeds in ECE, ECE(T), AdaECE and classwise ECE
    (bootstrap rank intervals resampling seeds and test examples)."""
    parts = noise.all_of(noise.best(DFL, SEVEN), noise.best(DFL, SEVEN, scaled=True), noise.best(DFL, SEVEN, "adaece"),
                         noise.best(DFL, SEVEN, "classwise_ece"))
    return noise.in_rows(parts, "every", rows=_image)

