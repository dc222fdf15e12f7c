"""The experimental claims of Tao, Dong & Xu (2023), Dual Focal Loss: each sentence, where the
paper makes it, its one test (:mod:`replicate.claims.tests`) and the rows it covers
(:class:`replicate.claims.claim.Over`), in the paper's order (:func:`definitions`). The same
test decides a claim on the paper's printed Tables 1-13 and on our runs; :mod:`.report`
builds both sides and applies them.

The rows each claim covers, from the paper's words:

- "in most cases" (Table 1's ECE, Table 7's MCE, Table 9's AUROC, Table 6's "best" classwise
  ECE): more than half of the rows; "in almost all cases" (Table 2's error): 80 %;
  "consistently", "all", "on every network", "on both data sets": every row. The claims of
  the appendix tables cover the image rows (Tables 5-8 and 11 print no text row), those of
  Fig. 2-4 and Fig. 3 the CIFAR-10 rows (the figures are CIFAR-10), the NLP claim the 20
  Newsgroups row, the CIFAR-100 claim its rows, Table 9 its (network, OOD set) cases.
- Claims that compare the paper's rows with each other (data sets, networks; "in only one
  case"; "evenly matched" over Table 3's rows) are tests on one row of the paper's side,
  ``Table 1, rows compared`` or ``Table 3, rows compared``, whose
  :class:`~replicate.claims.evidence.Named` numbers are the printed cells of the rows they
  compare (:mod:`.report`); our runs make one row per data set and network, so there they are
  "not tested" with the reason of :data:`ROWS_ONLY`.
- Claims read off a figure (Figs. 2 and 4) are tests of Named numbers behind our redrawn
  figures; the paper prints none of them (:data:`FIGURES`).
- "All optimal temperatures of DFL are 1" (and "the only method ... optimal T = 1") speak of
  every trained model: each run's T on its own validation resamples (:class:`EveryRun`), not
  the mean over seeds, which can be 1 while no run's is. "Especially (particularly) before
  temperature scaling": per row, DFL's lead over the best other method is larger pre-T than
  post-T.
- The sentences the paper leaves ambiguous keep two readings (:class:`Parts`): focal loss
  under-confident "can" happen (any row) / in most rows; DFL's pre-T ECE below the best
  baseline's post-T / below most baselines'; inverse focal the worst of the seven / above
  cross-entropy; ResNet-50 best by the mean over the methods / in DFL's column; Table 4's
  dual terms as labelled / as the authors' code computes them (the paper prints one
  number per row, its label's).

Two pieces the library lacks are written here, as small as they can be (for the library to
take over): :class:`Parts`, a claim whose parts are each one test over its own rows
(readings that differ in their test, not only in their quantifier, and a conjunction of two
counts over rows), and :class:`EveryRun`, :class:`~replicate.claims.tests.PerSeed` that
falls back to the row itself where a side has one run per row (the paper's printed cells).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...claims import wording
from ...claims.claim import Claim, Over, decide_over
from ...claims.decide import Resolution, all_hold
from ...claims.evidence import Cell, Named
from ...claims.tests import AllOf, Count, Difference, Given, Highest, Lowest, Not, PerSeed, Statistic, Value, is_one
from ...claims.vocabulary import NOT_TESTED, readings, untested
from . import plan as dfl

SEVEN = dfl.METHOD_KEYS
DFL, CE, FL, IFL = "dual_focal", "cross_entropy", "flsd53", "inverse_focal"
BASELINES = tuple(k for k in SEVEN if k != DFL)
IMAGE = ("cifar10", "cifar100", "tiny_imagenet")
#: The settings of the paper's tables that are not Tables 1, 2, 5-8 and 11 (whose cells share
#: the rows of Table 1, setting ""); Table 4's rows, Table 9's OOD sets and Table 13's
#: gammas are settings of their own (:data:`.plan.TABLE4_SETTINGS`, :data:`OOD`, ``gamma=g``).
T3, T10, T12 = "Table 3", "Table 10", "Table 12"
#: Table 9's settings and the OOD set of our runs each reads.
OOD = {"ood=CIFAR-10-C": "cifar10c_gaussian5", "ood=SVHN": "svhn"}
#: Table 12's cells (and Table 13's): ECE, ECE(T), AdaECE, classwise ECE.
TABLE12 = (("ece", "none"), ("ece", "ts"), ("adaece", "none"), ("classwise_ece", "none"))
#: "competitive" AUROC: among the best TOP_K of the seven methods; App. E's AdaECE gap.
TOP_K, ADAECE_GAP = 3, 0.1
#: Fig. 4a: the first WARMUP_FRACTION of the epochs are the warm-up; the paper's schedule
#: has three learning rates (0.1, 0.01, 0.001). Fig. 2: a bin counts where each of the four
#: methods has at least MIN_BIN test samples in it (15 equal-width bins).
WARMUP_FRACTION, PHASES, MIN_BIN, N_BINS = 0.1, 3, 10, 15
OTHER_NETS = ("the claim compares the paper's four networks: our runs train one network per execution of the "
              "chapter (parameter model; the cpu profile trains tiny_cnn, the gpu and paper profiles ResNet-50)")
OTHER_DATA = ("the claim compares data sets: our runs cover one image data set per execution of the chapter "
              "(parameter dataset), and CIFAR-100 and Tiny-ImageNet are not available offline here")
#: Our side's reason for the Named numbers only the paper's rows give, by the first part of the key.
ROWS_ONLY = {"networks": OTHER_NETS, "datasets": OTHER_DATA,
             "table1": "a count over the paper's ten rows of Table 1; our runs make one row per data set",
             "table3": "a statement over the paper's eight rows of Table 3; our runs make one row"}
#: The figures the Named numbers of each prefix are read off (the paper prints none of them).
FIGURES = {"fig2": "Figure 2", "fig4a": "Figure 4a", "fig4b": "Figure 4b", "fig4c": "Figure 4c"}
KDE_XE = ("KDE-XE (Popordanoska et al. 2022), its training setting and its networks (ResNet-110sd, DenseNet-40) "
          "are not implemented here")
#: The row of the paper's side that holds the Named numbers comparing its rows.
COMPARED = {"table1": "Table 1, rows compared", "table3": "Table 3, rows compared"}


# ----------------------------------------------------------------------------- two small additions
@dataclass(frozen=True)
class Parts(Claim):
    """A claim of ``parts`` ``((name, test, Over), ...)``, each one test over its own rows
    (:func:`replicate.claims.claim.decide_over`), combined as ``"readings"`` (the sentence
    read several ways: :func:`replicate.claims.readings` of the readings that could be
    tested) or ``"all"`` (every part must hold: :func:`replicate.claims.decide.all_hold`).
    The library's :class:`~replicate.claims.tests.Readings` reads every way inside one row,
    which the count over rows cannot combine; ``test`` (set from the parts) gives the
    quantities."""

    parts: tuple = ()
    combine: str = "readings"

    def how(self, names, side: str = "") -> str:
        tail = Claim.how(self, names, side)[len(f"{self.test.how(names)}; {self.over.how()}"):]
        word = "read as " if self.combine == "readings" else ""
        return " | ".join(f"{word}{n}: {t.how(names)}; {o.how()}" for n, t, o in self.parts) + tail

    def decide(self, ev) -> Resolution:
        got = {n: decide_over(t, ev, o) for n, t, o in self.parts}
        live = {n: r for n, r in got.items() if r.verdict != NOT_TESTED}
        used = tuple(u for r in got.values() for u in r.used)
        if not live:
            notes = "; ".join(dict.fromkeys(r.outcome.note for r in got.values()))
            return Resolution(untested(notes), text="–", noise="–", used=used)
        if self.combine == "all":
            outcome = all_hold(list(got.values()))
        elif len(live) > 1:
            outcome = readings(**{n.replace(" ", "_"): r.outcome for n, r in live.items()})
        else:
            (n, r), = live.items()
            outcome = type(r.outcome)(r.verdict, f"{n}: {r.outcome}" + "".join(
                f"; {m}: not tested ({x.outcome.note})" for m, x in got.items() if m != n))
        text = " || ".join(f"{n}: {r.text}" for n, r in got.items())
        noise = "; ".join(dict.fromkeys(r.noise for r in got.values() if r.noise and r.noise != "–")) or "–"
        return Resolution(outcome, text=text, noise=noise, needs=outcome.note if outcome.verdict == "inconclusive"
                          else "", used=used)


def parts(text: str, where: str, *parts, combine: str = "readings") -> Parts:
    """A :class:`Parts` claim of ``(name, test, Over)`` parts."""
    return Parts(text, where, AllOf(*(t for _, t, _ in parts)), parts=tuple(parts), combine=combine)


class EveryRun(PerSeed):
    """``test`` on every run of a row on its own (:class:`~replicate.claims.tests.PerSeed`,
    ``quantifier`` of the runs); where the side has one run per row (the paper's printed
    cells, or one seed) the test on the row."""

    def run(self, ev, row: str) -> Resolution:
        if isinstance(ev.per_seed(row), str):
            return self.test(ev, row)
        return super().run(ev, row)


# ----------------------------------------------------------------------------- the quantities
def lowest(metric: str = "ece", post: str = "none", setting: str = "", q: str = DFL, among=SEVEN) -> Lowest:
    """``q``'s ``metric`` (after ``post``) the lowest of the methods ``among``."""
    return Lowest(Cell(q, metric, post, setting), [Cell(m, metric, post, setting) for m in among])


def _min(*xs):
    return np.minimum.reduce(np.broadcast_arrays(*xs))


def _max(*xs):
    return np.maximum.reduce(np.broadcast_arrays(*xs))


def below_all(named, what: str, own: str = DFL, rivals=()) -> Statistic:
    """``named(own)`` below ``named(m)`` of every method of ``rivals`` (Named numbers of a
    figure: a missing number says why, where :class:`~replicate.claims.tests.Lowest` would
    only name the quantity); ``what`` names the number in the ``how``."""
    text = f"{what}: {_label(own)} − min({', '.join(_label(m) for m in rivals)})"
    return Statistic(lambda o, *r: o - _min(*r), [named(own), *(named(m) for m in rivals)], "<", 0.0, text)


def among_top(q: Cell, rivals, k: int) -> Statistic:
    """``q`` among the ``k`` highest of itself and ``rivals``: ``q`` minus the ``k``-th highest
    rival above 0 (a missing cell says why: an OOD set our runs did not record)."""
    def fn(own, *r):
        return own - np.sort(np.stack(np.broadcast_arrays(*r)), axis=0)[-k]
    nth = f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k, 'th')}"
    return Statistic(fn, [q, *rivals], ">", 0.0, f"AUROC pre-T ({q.setting}): {_label(q.method)} − the {nth} highest "
                     f"of the other {len(rivals)}", tuple((q, r) for r in rivals))


def especially_pre(metric: str) -> Statistic:
    """"Especially before temperature scaling": DFL's lead over the best other method
    (DFL minus the lowest other, negative when DFL is lowest) is larger before TS than after."""
    pre = [Cell(m, metric) for m in (DFL, *BASELINES)]
    post = [Cell(m, metric, "ts") for m in (DFL, *BASELINES)]

    def gap(*x):
        n = len(pre)
        return (x[0] - _min(*x[1:n])) - (x[n] - _min(*x[n + 1:]))
    pairs = tuple((pre[0], c) for c in pre[1:]) + tuple((post[0], c) for c in post[1:])
    label = _metric(metric)
    return Statistic(gap, pre + post, "<", 0.0, f"DFL's lead over the best other, {label} pre-T − {label} post-T "
                     f"(DFL − min(others) each)", pairs)


def temperature(method: str) -> Cell:
    return Cell(method, "T", "ts")


@functools.lru_cache(maxsize=None)
def paper_rows(table: str) -> tuple:
    """``((dataset key, model key, row label), ...)`` of a table of the paper, as printed."""
    from ...comparison.layouts import paper_long

    f = paper_long(dfl.PAPER, table)
    return tuple(dict.fromkeys((r.dataset_key, r.model_key, r.row) for r in f.itertuples()))


def _label(method: str) -> str:
    from ...comparison.report import names

    return names().method(method)


def _metric(metric: str) -> str:
    from ...comparison.report import names

    return names().metric(metric)


def _ece(prefix: str, ds: str, net: str, row: str, method: str) -> Named:
    return Named(f"{prefix}|{ds}|{net}|{method}", f"{_label(method)} pre-T ECE, {row}")


def _networks(ds: str, column: str | None, rows) -> list:
    """The per-network numbers of one data set: the mean pre-T ECE over the seven methods
    (``column`` None) or one method's."""
    got = [(net, row) for d, net, row in rows if d == ds]
    if column is None:
        return [Named(f"networks|{ds}|{net}|mean", f"mean pre-T ECE of the seven methods, {row}") for net, row in got]
    return [_ece("networks", ds, net, row, column) for net, row in got]


def _network_is(net: str, rows, largest: bool = False, column: str | None = None) -> AllOf:
    """``net`` the best (lowest) or worst (``largest``) network on CIFAR-10 and CIFAR-100: on
    each, its number minus the lowest (highest) of the other networks' below (above) 0."""
    parts, best = [], _max if largest else _min
    for ds in ("cifar10", "cifar100"):
        qs = _networks(ds, column, rows)
        own = next(q for q in qs if f"|{net}|" in q.key)
        text = f"{own.label_text} − {'max' if largest else 'min'}(the other networks')"
        parts.append(Statistic(lambda o, *r: o - best(*r), [own, *(q for q in qs if q != own)],
                               ">" if largest else "<", 0.0, text))
    return AllOf(*parts)


def _pairs(better: str, worse, rows) -> dict:
    """"``better`` models are better calibrated than ``worse`` ones": per (network, method)
    printed on both data sets, pre-T ECE on ``better`` below that on each of ``worse``."""
    at = {(d, n): row for d, n, row in rows}
    return {f"{_label(m)}, {at[(w, n)]}": Difference(_ece("datasets", better, n, at[(better, n)], m),
                                                     _ece("datasets", w, n, at[(w, n)], m), "<")
            for w in worse for d, n, _ in rows if d == w and (better, n) in at for m in SEVEN}


# ----------------------------------------------------------------------------- the claims
def definitions() -> tuple[Claim, ...]:
    """Every experimental claim of Tao et al. (2023), in the paper's order, with its test."""
    C = Claim
    t1, t3 = paper_rows("table1"), paper_rows("table3")
    almost, most, every = Over("almost all"), Over("most"), Over("every")
    image, cifar10 = Over("most", datasets=IMAGE), Over("every", datasets=("cifar10",))
    others = [m for m in SEVEN if m != DFL]
    r110 = next(r for r in t1 if r[:2] == ("cifar10", "resnet110"))
    warm = f"after the first {WARMUP_FRACTION:.0%} of the epochs"

    def fig(prefix, name, label):
        return Named(f"{prefix}|{name}", label)

    def phase(p, m):
        return fig("fig4a", f"phase{p}|{m}", f"mean smoothed test ECE of {_label(m)}, learning-rate phase {p} ({warm})")

    def qj(what, m):
        return fig("fig4c", f"{what}|{m}", f"{'median' if what == 'median' else 'whisker range of'} q_j, {_label(m)}")

    def bin_gap(b, m):
        return fig("fig2", f"bin{b}|{m}", f"|accuracy − confidence| of {_label(m)} in bin {b + 1} of {N_BINS}")

    def logit(m):
        return fig("fig4b", m, f"median maximum logit of {_label(m)}")

    between = Statistic(lambda d, c, f: _min(d - _min(c, f), _max(c, f) - d), [logit(DFL), logit(CE), logit(FL)],
                        ">", 0.0, "min(DFL − min(CE, FLSD-53), max(CE, FLSD-53) − DFL) of the median maximum logit")
    dual4 = {reading: Count({f"{s.split(': ', 1)[1]}, {k}": Difference(Cell(name, k, "none", s),
                                                                         Cell(name, k, "none", dfl.FL_ROW), "<")
                             for s in dfl.TABLE4_SETTINGS if s.startswith(dfl.OTHER) for k in ("ece", "adaece")},
                            "every", "(row, metric) cells") for reading, name in dfl.READINGS.items()}
    detects = {s: Given(Statistic(_max, [Cell(m, "auroc", "none", s) for m in SEVEN], ">=", wording.DETECTS_AUROC,
                                  "the highest AUROC of the seven"),
                        among_top(Cell(DFL, "auroc", "none", s), [Cell(m, "auroc", "none", s) for m in others], TOP_K),
                        "the claim is about models that detect out-of-distribution inputs")
               for s in OOD}
    below_t3 = {row: Difference(Named(f"table3|{d}|{n}|{DFL}", f"DFL ECE, Table 3, {row}"),
                                Named(f"table3|{d}|{n}|adafocal", f"AdaFocal ECE, Table 3, {row}"), "<")
                for d, n, row in t3}
    return (
        C("Focal loss can lead to under-confident predictions", "Abstract; Sec. 1, 3.2; Table 1",
          Value(temperature(FL), "<", wording.T_IS_ONE[0]),
          Over(readings=(("can happen", "any"), ("in most rows", "most")))),
        C("Inverse focal loss aggravates over-confidence", "Sec. 1, 3.2; Table 1",
          Difference(temperature(IFL), temperature(CE), ">"), most),
        C("DFL achieves state-of-the-art ECE in most cases, especially before temperature scaling",
          "Abstract; Sec. 5.1, 6; Table 1", AllOf(lowest("ece"), especially_pre("ece")), most),
        parts("DFL's ECE before temperature scaling beats most post-temperature-scaling results of previous works",
              "Sec. 5.1, Table 1",
              ("below the best baseline", Lowest(Cell(DFL), [Cell(b, "ece", "ts") for b in BASELINES]), most),
              ("below most baselines", Count({b: Difference(Cell(DFL), Cell(b, "ece", "ts"), "<")
                                              for b in BASELINES}, "most", "baselines"), most)),
        C("All optimal temperatures of DFL are 1: DFL trains innately calibrated models", "Sec. 5.1, Table 1",
          EveryRun(is_one(temperature(DFL))), every),
        C("CIFAR-10 models are better calibrated than those on data sets with more labels (CIFAR-100, "
          "Tiny-ImageNet)", "Sec. 5.1, Table 1",
          Count(_pairs("cifar10", ("cifar100", "tiny_imagenet"), t1), "most", "(network, method) pairs"), every),
        C("Tiny-ImageNet models are generally better calibrated than CIFAR-100 models", "Sec. 5.1, Table 1",
          Count(_pairs("tiny_imagenet", ("cifar100",), t1), "most", "(network, method) pairs"), every),
        parts("ResNet-50 is the best calibrated of the four networks on CIFAR-10 and CIFAR-100", "Sec. 5.1, Table 1",
              ("mean over methods", _network_is("resnet50", t1), every),
              ("DFL column", _network_is("resnet50", t1, column=DFL), every)),
        C("ResNet-110 is the worst calibrated network, especially with focal loss", "Sec. 5.1, Table 1",
          AllOf(_network_is("resnet110", t1, largest=True), _network_is("resnet110", t1, True, FL)), every),
        C("Wide-ResNet is generally better calibrated than the other networks", "Sec. 5.1, Table 1",
          _network_is("wide_resnet26_10", t1), every),
        parts("Inverse focal loss performs the worst of the methods, with an even higher ECE than cross-entropy",
              "Sec. 5.1, Table 1",
              ("worst in most rows", Highest(Cell(IFL), [Cell(m) for m in SEVEN]), most),
              ("above cross entropy", Difference(Cell(IFL), Cell(CE), ">"), most)),
        C("Inverse focal loss gives the best post-T ECE in only one case, ResNet-110 on CIFAR-10",
          "Sec. 5.1, Table 1",
          Count({row: Value(Named(f"table1|{d}|{n}", f"Inverse FL post-T ECE − the lowest other's, {row}"),
                            "<=" if (d, n, row) == r110 else ">", 0.0) for d, n, row in t1}, "every", "rows"), every),
        C("DFL has better pre- and post-T ECE on the NLP task (20 Newsgroups)", "Sec. 5.1, Table 1",
          AllOf(lowest("ece"), lowest("ece", "ts")), Over("every", datasets=("20newsgroups",))),
        C("DFL is state of the art across ECE, AdaECE and classwise ECE on CIFAR-10 (ResNet-50, ResNet-110)",
          "Sec. 5.1, Fig. 3; Tables 1, 5, 6", AllOf(lowest("ece"), lowest("adaece"), lowest("classwise_ece")),
          cifar10),
        C("DFL is the only method that achieves innately calibrated models (optimal T = 1)",
          "Sec. 5.1, Fig. 3; Table 1", AllOf(EveryRun(is_one(temperature(DFL))),
                                             *(Not(EveryRun(is_one(temperature(m)))) for m in others)), cifar10),
        C("After the first warm-up epochs, DFL's test ECE stays below cross-entropy's and focal loss's",
          "Sec. 5.1, Fig. 4a", Value(fig("fig4a", "below", f"share of the epochs {warm} where DFL's smoothed test "
                                            f"ECE is below cross-entropy's and FLSD-53's"), ">=", wording.ALMOST_ALL),
          cifar10),
        C("With the large learning rate focal loss is less calibrated than cross-entropy", "Sec. 5.1, Fig. 4a",
          Difference(phase(1, FL), phase(1, CE), ">"), cifar10),
        C("DFL trains calibrated models regardless of the learning rate", "Sec. 5.1, Fig. 4a",
          Count({f"phase {p}": below_all(lambda m, p=p: phase(p, m), f"mean smoothed test ECE, learning-rate phase {p}",
                                         rivals=(CE, FL)) for p in range(1, PHASES + 1)},
                "every", "learning-rate phases"), cifar10),
        C("DFL retains the best calibration over almost all bins of the reliability diagram", "Sec. 5.1, Fig. 2",
          Count({f"bin {b + 1}": below_all(lambda m, b=b: bin_gap(b, m), f"|accuracy − confidence| in bin {b + 1}",
                                           rivals=[m for m in dfl.FIG2_METHODS if m != DFL])
                 for b in range(N_BINS)}, "almost all", "bins"), cifar10),
        C("DFL improves the classification accuracy over focal loss in almost all cases", "Sec. 5.1, Table 2",
          Difference(Cell(DFL, "error"), Cell(FL, "error"), "<"), almost),
        C("On CIFAR-100 DFL calibrates without a trade-off in accuracy against cross-entropy on every network",
          "Sec. 5.1, Table 2", Difference(Cell(DFL, "error"), Cell(CE, "error"), "<="),
          Over("every", datasets=("cifar100",))),
        C("DFL and AdaFocal are evenly matched", "Sec. 5.2, Table 3",
          AllOf(Count(below_t3, 0.25, "rows (DFL below AdaFocal)"),
                Count({r: Not(t) for r, t in below_t3.items()}, 0.25, "rows (DFL not below AdaFocal)")), every),
        C("AdaDualFocal improves consistently on both AdaFocal and DFL", "Sec. 5.2, Table 3",
          lowest("ece", setting=T3, q="adadual_focal", among=("adadual_focal", "adafocal", DFL)), every),
        C("DFL's maximum logits lie between cross-entropy's and focal loss's: a balance that regularises while "
          "keeping hardness information", "Sec. 5.3, Fig. 4b", between, cifar10),
        C("DFL gives q_j a wider range and a lower median than focal loss and keeps it higher than cross-entropy",
          "Sec. 5.3, Fig. 4c", AllOf(Difference(qj("median", DFL), qj("median", FL), "<"),
                                     Difference(qj("median", DFL), qj("median", CE), ">"),
                                     Difference(qj("range", DFL), qj("range", FL), ">")), cifar10),
        parts("With other dual logits DFL still outperforms focal loss consistently across metrics",
              "Sec. 5.4, Table 4", *((f"{r} reading", t, every) for r, t in dual4.items())),
        parts("DFL's AdaECE is competitive with the best in almost all cases, only 0.1 from focal loss on "
              "Tiny-ImageNet", "App. E, Table 5",
              (f"within {ADAECE_GAP:g} of the lowest", Statistic(
                  lambda d, *o: np.round(d - _min(*o), 9), [Cell(DFL, "adaece")] + [Cell(m, "adaece") for m in others],
                  "<=", ADAECE_GAP, "DFL − min(others) of the pre-T AdaECE",
                  tuple((Cell(DFL, "adaece"), Cell(m, "adaece")) for m in others)), Over("every", datasets=IMAGE)),
              ("the lowest", lowest("adaece"), Over("almost all", datasets=IMAGE)), combine="all"),
        C("DFL has the best classwise ECE", "App. E, Table 6", lowest("classwise_ece"), image),
        C("DFL achieves a better NLL on the more complex data sets CIFAR-100 and Tiny-ImageNet", "App. E, Table 8",
          lowest("nll"), Over("every", datasets=("cifar100", "tiny_imagenet"))),
        C("DFL achieves state-of-the-art MCE in most cases, particularly before temperature scaling",
          "App. E, Table 7", AllOf(lowest("mce"), especially_pre("mce")), image),
        C("DFL achieves competitive OOD-detection AUROC in most cases", "App. E, Table 9",
          Count(detects, "most", "out-of-distribution sets"), Over("most", datasets=IMAGE)),
        C("DFL outperforms KDE-XE in ECE", "App. F, Table 10",
          Difference(Cell(DFL, "ece", "none", T10), Cell("kde_xe", "ece", "none", T10), "<"), every),
        C("DFL fails to outperform KDE-XE in the canonical calibration error", "App. F, Table 10",
          Difference(Cell(DFL, "ece_kde", "none", T10), Cell("kde_xe", "ece_kde", "none", T10), ">="), every),
        C("DFL improves consistently on the other methods in RBS", "App. G, Table 11", lowest("rbs"),
          Over("every", datasets=IMAGE)),
        C("Over repeated runs DFL's calibration is consistent and robust", "App. H, Table 12",
          Given(Value(Named("runs|repeated", "seeds of the repeated runs"), ">=", 2),
                AllOf(*(lowest(k, post, T12) for k, post in TABLE12)),
                "the claim is about repeated runs: Table 12 needs two seeds or more"),
          Over("every", datasets=IMAGE)),
        C("Gamma = 5, chosen by cross-validation, gives DFL its best calibration", "App. I, Table 13",
          AllOf(*(Lowest(Cell(DFL, k, post, "gamma=5"), [Cell(DFL, k, post, f"gamma={g:g}") for g in dfl.GAMMAS])
                  for k, post in TABLE12)), every),
    )


def named(claims=None) -> list[Named]:
    """Every :class:`~replicate.claims.evidence.Named` quantity the claims read."""
    out = {}
    for c in claims or definitions():
        tests = [t for _, t, _ in c.parts] if isinstance(c, Parts) else [c.test]
        for t in tests:
            out.update({q.key: q for q in t.quantities() if isinstance(q, Named)})
    return list(out.values())
