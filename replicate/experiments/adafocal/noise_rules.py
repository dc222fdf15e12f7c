"""The AdaFocal chapter's claims decided on our runs within their noise (a split of the
rules role, :mod:`.rules`): each returns a test of :mod:`replicate.comparison.noise` that
reads our runs of each table row (``{row: RunEvidence}``, :func:`.evidence.run_rows`).

A claim over rows ("in 9 of 11 cases", "in every row", "in most rows") decides each row by a
comparison that must be resolved by the runs (a paired bootstrap over the test examples with
one seed, the paired t-test over three or more seeds; bootstrap rank intervals for "the
lowest of N") and counts the rows with the book's one counting rule
(:func:`replicate.comparison.noise.tally`): holds when at least k rows hold, fails when more
than N - k fail, else ``inconclusive``. OOD-detection claims are tested only on models that
detect better than chance (:func:`replicate.comparison.noise.detects`).
"""
from __future__ import annotations

import math

from ... import comparison as cmp
from ...claims import Outcome, inconclusive
from ...comparison import noise
from .rules import ADA, TABLE1, TABLE10

#: The methods of Table 1 with AdaFocal: "the lowest" is the best of these.
TABLE1_ADA = (*TABLE1, ADA)
#: The data sets where the paper finds FLSD-53 better calibrated than cross-entropy.
FLSD_BETTER_ON = ("cifar10", "cifar100", "tiny_imagenet")


def lowest(metric: str = "ece", among=TABLE1_ADA):
    """AdaFocal the best of ``among`` by pre-T ``metric`` (bootstrap rank interval [1, 1])."""
    return noise.best(ADA, among, metric)


def lowest_cell(among=TABLE1):
    """AdaFocal's better cell (pre or post T, by its point ECE) is the lowest of every pre- and
    post-T ECE cell of ``among`` (bootstrap rank intervals over all the cells)."""
    def test(ev) -> noise.Resolution:
        if ADA not in ev.methods:
            return noise.not_tested(f"no AdaFocal run in {ev.name}")
        keep = [m for m in (*among, ADA) if m in ev.methods]
        cells = {}
        for scaled, when in ((False, "pre T"), (True, "post T")):
            for (m, s), c in ev.cells(scaled).items():
                if m in keep:
                    cells[(f"{cmp.short(m) if m != ADA else 'AdaFocal'} {when}", s)] = c
        ada = {k: c for k, c in cells.items() if k[0].startswith("AdaFocal ")}
        pick = min({k[0] for k in ada}, key=lambda name: math.fsum(noise.score(c, "ece") for k, c in ada.items()
                                                                    if k[0] == name))
        cells = {k: c for k, c in cells.items() if not k[0].startswith("AdaFocal ") or k[0] == pick}
        return ev.memo(("lowest_cell", tuple(keep)), lambda: noise.best_of(cells, pick, "ece"))
    return test


def _with_note(test, note):
    """``test`` whose decided verdict carries ``note(ev)`` (what the rows covered)."""
    def run(ev) -> noise.Resolution:
        r = test(ev)
        if r.verdict in ("holds", "fails"):
            text = note(ev)
            if text:
                return noise.Resolution(r.estimate, r.low, r.high, r.test, r.needs, Outcome(r.verdict, text), r.text,
                                        r.details)
        return r
    return run


def _flsd_rows(row: str) -> bool:
    return row.split(",")[0] in FLSD_BETTER_ON


def flsd_vs_ce():
    """Sec. 6: FLSD-53 below cross-entropy on the CIFAR and Tiny-ImageNet rows (our rows of
    those data sets; ImageNet is not available offline)."""
    def note(ev):
        rows = [r for r in noise.as_rows(ev) if _flsd_rows(r)]
        return f"tested on {'; '.join(rows)} only; no CIFAR-100, Tiny-ImageNet or ImageNet row (not available offline)"
    return _with_note(noise.in_rows(noise.lower("flsd53", "cross_entropy"), "every", rows=_flsd_rows), note)


def ood(test, among=TABLE10):
    """An OOD-detection claim's test on the rows whose models detect better than chance."""
    return noise.in_rows(noise.detects(test, methods=among), "every")


def ts_gain_at_most(tolerance: float, among=TABLE10):
    """"TS is ineffective for OOD detection": no method's AUROC gains more than ``tolerance``
    points from temperature scaling (per method, the interval of post-T minus pre-T AUROC at
    or below ``tolerance``; T by validation ECE)."""
    def test(ev) -> noise.Resolution:
        parts = []
        pre, post = ev.cells(False), ev.cells(True)
        for m in [m for m in among if m in ev.methods]:
            cells = {**{("post", s): c for (k, s), c in post.items() if k == m},
                     **{("pre", s): c for (k, s), c in pre.items() if k == m}}
            names = {"post": f"{cmp.short(m)} post T", "pre": "pre T"}
            r = ev.memo(("ts_gain", m), lambda cells=cells, names=names: noise.compare(cells, "post", "pre", "auroc",
                                                                                     "lower", labels=names))
            ok = Outcome("holds") if r.high <= tolerance else Outcome("fails") if r.low > tolerance else \
                inconclusive(f"{cmp.short(m)}: the AUROC gain's interval [{r.low:.2f}, {r.high:.2f}] "
                                           f"straddles {tolerance:g}")
            parts.append(noise.Resolution(r.estimate, r.low, r.high, r.test, ok.note, ok, r.text))
        if not parts:
            return noise.not_tested(f"no run of the compared methods in {ev.name}")
        outcome = noise.all_hold(parts)
        return noise.Resolution(math.nan, math.nan, math.nan, parts[0].test, outcome.note, outcome,
                                " | ".join(p.text for p in parts))
    return test


def calfocal_between():
    """Sec. 5.1: FLSD-53 < CalFocal Eq. 1 (lambda 10 and 100) < cross-entropy, pre-T ECE."""
    keys = ("calfocal1_l10", "calfocal1_l100")
    return noise.in_rows(noise.all_of(*(noise.lower("flsd53", k) for k in keys),
                                      *(noise.lower(k, "cross_entropy") for k in keys)), "every")


def calfocal_accuracy():
    """Sec. 5.1: lambda 100 has a higher test error than lambda 10 and cross-entropy."""
    return noise.in_rows(noise.all_of(noise.higher("calfocal1_l100", "calfocal1_l10", "error"),
                                      noise.higher("calfocal1_l100", "cross_entropy", "error")), "every")


def calfocal_eq2_similar(tolerance: float):
    """App. D: Eq. 2's ECE at most ``tolerance`` points above Eq. 1's, lambda 10 and 100."""
    return noise.in_rows(noise.all_of(*(noise.at_most(f"calfocal2_l{lam}", f"calfocal1_l{lam}", tolerance)
                                        for lam in (10, 100))), "every")


def flsd_slightly_better(tolerance: float):
    """Abstract: 0 < (best fixed-gamma ECE) - (FLSD-53 ECE) <= ``tolerance``; the best fixed
    gamma of FL-3/4/5 by its point ECE, then both sides decided within the noise."""
    def test(ev) -> noise.Resolution:
        fixed = [k for k in ("fl3", "fl4", "fl5") if k in ev.methods]
        if not fixed or "flsd53" not in ev.methods:
            return noise.not_tested(f"FL-3/4/5 or FLSD-53 have no run in {ev.name}")
        cells = ev.cells(False)
        best = min(fixed, key=lambda k: math.fsum(noise.score(c, "ece") for (m, _), c in cells.items() if m == k))
        return noise.all_of(noise.lower("flsd53", best), noise.at_most(best, "flsd53", tolerance))(ev)
    return noise.in_rows(test, "every")
