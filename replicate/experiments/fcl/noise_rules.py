"""The FCL chapter's claims decided on our runs within their noise (a split of the rules
role, :mod:`.rules`): each returns a test of :mod:`replicate.comparison.noise` that reads
our runs of each table row (``{row: RunEvidence}``, :attr:`.evidence.Evidence.runs`).

Each row is decided by a comparison the runs must resolve (a paired bootstrap over the test
examples with one seed, the paired t-test over three or more; bootstrap rank intervals for
"the lowest" and "among the k lowest"), and the rows are counted by the book's one rule
(:func:`replicate.comparison.noise.tally`); "consistently" is read as every row and as most
rows, as on the paper's side. OOD claims are tested only on models that detect
(:func:`replicate.comparison.noise.detects`).
"""
from __future__ import annotations

from ...comparison import noise
from . import plan as fcl
from .rules import CAL_METRICS, FCL, NAMES, RIVALS

SEVEN = fcl.METHOD_KEYS
IMAGES = ("CIFAR-10", "CIFAR-100", "Tiny-ImageNet")
NEWS = ("CIFAR-100", "20 Newsgroups", "AG News")


def _data(names):
    return lambda row: row.split(",")[0] in names


def lowest_pre():
    """FCL the lowest pre-T value of the seven, per metric; every row / most rows."""
    parts = {NAMES[m]: noise.best(FCL, SEVEN, m) for m in CAL_METRICS}
    return noise.row_readings(parts, every_row="every", most_rows="most")


def among_lowest_post(k: int):
    """FCL among the ``k`` lowest post-T values of the seven, per metric, in most rows."""
    return noise.in_rows({NAMES[m]: noise.best(FCL, SEVEN, m, scaled=True, top=k) for m in CAL_METRICS}, "most")


def beats_ce_on_images():
    """FCL's pre-T ECE below cross-entropy's on every CIFAR and Tiny-ImageNet row."""
    return noise.in_rows(noise.lower(FCL, "cross_entropy"), "every", rows=_data(IMAGES))


def beats_rivals_pre_post():
    """FCL's ECE below Brier's, MMCE's, LS-0.05's and FLSD-53's, pre and post T; every / most rows."""
    parts = {f"ECE {'post' if s else 'pre'} T": noise.all_of(*(noise.lower(FCL, r, scaled=s) for r in RIVALS))
             for s in (False, True)}
    return noise.row_readings(parts, every_row="every", most_rows="most")


def fig9_lowest_ece():
    """Fig. 9: FCL the lowest pre-T ECE of CE, FLSD-53, DFL and FCL on CIFAR-10."""
    return noise.in_rows(noise.best(FCL, fcl.FIG9_METHODS), "every", rows=_data(("CIFAR-10",)))


def lowest_error_most():
    """FCL the lowest test error of the seven in most rows."""
    return noise.in_rows(noise.best(FCL, SEVEN, "error"), "most")


def lowest_error_c100_news():
    """FCL the lowest test error on every CIFAR-100 and news row."""
    return noise.in_rows(noise.best(FCL, SEVEN, "error"), "every", rows=_data(NEWS))


def highest_auroc():
    """FCL the highest AUROC, pre and post T, in most OOD rows; tested on models that detect."""
    parts = {f"AUROC {'post' if s else 'pre'} T": noise.best(FCL, SEVEN, "auroc", scaled=s) for s in (False, True)}
    return noise.in_rows(noise.detects(noise.all_of(*parts.values()), methods=SEVEN), "most",
                         rows=_data(("CIFAR-10",)))


def _ts_drop(share: float):
    """TS lowers FLSD-53's ``metric`` by at least ``share`` of its pre-T value: the interval
    of post - (1 - share) pre over bootstrap resamples of the test examples at or below 0."""
    def per_metric(metric):
        def test(ev) -> noise.Resolution:
            if "flsd53" not in ev.methods:
                return noise.not_tested(f"no FLSD-53 run in {ev.name}")
            pre = [c for (m, _), c in sorted(ev.cells(False).items()) if m == "flsd53"]
            post = [c for (m, _), c in sorted(ev.cells(True, metric).items()) if m == "flsd53"]
            r = ev.memo(("ts_drop", metric, share), lambda: noise.bootstrap_statistic(
                {"pre": pre, "post": post}, lambda v: v["post"] - (1 - share) * v["pre"], metric))
            return _decided(r, f"{NAMES[metric]}: FLSD-53 post T − {1 - share:g} × pre T")
        return test
    return per_metric


def _decided(r: dict, what: str) -> noise.Resolution:
    """A claimed statistic <= 0 from its bootstrap interval (:func:`noise.decide`)."""
    test = f"paired bootstrap over {r['n_test']:,} test examples, 95 % interval"
    needs = f"seeds or a larger test set: the interval [{r['low']:.2f}, {r['high']:.2f}] straddles 0"
    outcome = noise.decide(r["low"], r["high"], "lower", needs)
    return noise.Resolution(r["estimate"], r["low"], r["high"], test, outcome.note, outcome,
                            f"{what} = {r['estimate']:.2f} [{r['low']:.2f}, {r['high']:.2f}] ({test})")


def focal_drops(share: float):
    """Sec. 5.5.3: TS lowers FLSD-53's value by at least ``share``, per metric; every / most rows."""
    drop = _ts_drop(share)
    return noise.row_readings({NAMES[m]: drop(m) for m in CAL_METRICS}, every_row="every", most_rows="most")


def _smaller_change(ev) -> noise.Resolution:
    """TS changes FCL's ECE no more than FLSD-53's: |pre - post| of FCL minus that of FLSD-53
    at or below 0 (paired bootstrap over the test examples)."""
    if not {FCL, "flsd53"} <= set(ev.methods):
        return noise.not_tested(f"FCL or FLSD-53 have no run in {ev.name}")
    pre, post = ev.cells(False), ev.cells(True)
    groups = {f"{m} {w}": [c for (k, _), c in sorted(cells.items()) if k == m]
              for m in (FCL, "flsd53") for w, cells in (("pre", pre), ("post", post))}
    r = ev.memo(("ts_change",), lambda: noise.bootstrap_statistic(
        groups, lambda v: abs(v[f"{FCL} pre"] - v[f"{FCL} post"]) - abs(v["flsd53 pre"] - v["flsd53 post"])))
    return _decided(r, "ECE change by TS, |pre − post| of FCL − of FLSD-53")


def fcl_t_near_one():
    """Sec. 5.5.3: FCL's T close to 1 and TS changes its ECE no more than FLSD-53's; every / most rows."""
    both = noise.all_of(noise.near_one(FCL), _smaller_change)
    return noise.row_readings(both, every_row="every", most_rows="most")
