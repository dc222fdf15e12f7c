"""The experimental claims of Liang et al. (Focal Calibration Loss), ``exp_fcl``: each sentence,
where the paper makes it, its one test (:mod:`replicate.claims.tests`) and the rows it covers
(:class:`replicate.claims.claim.Over`), in :func:`definitions`. The same test decides each
claim on the paper's printed tables (every row they print) and on our runs (every row we
trained, every stored seed, within the noise model); :mod:`.report` applies them.

The rows each claim covers, in the paper's words:

- Sec. 5.1.1 (Tables 1, 3, 6, 7): FCL "consistently achieves lower pre-T calibration error"
  (read as every row and as most rows of the twelve main rows), its post-T error is "among
  the lowest" (most rows; "among the lowest" = among the ``among`` lowest of the seven), it
  excels "with DenseNet-121 and ResNet-50/110" (the CIFAR rows of those networks), improves
  on CIFAR-10, CIFAR-100 and Tiny-ImageNet (their rows), and outperforms Brier, MMCE, label
  smoothing and focal loss pre and post T (every row / most rows);
- Sec. 5.1.2 (Figs. 8, 9): the reliability diagrams and error curves are of CIFAR-10 (the
  paper's Fig. 9 is ResNet-110: Table 1's ResNet-110 row on the paper's side; our CIFAR-10
  network stands in for it on ours);
- Sec. 5.2.1 (Table 2): the lowest error "in most cases" (most main rows), "especially in
  CIFAR-100 and News datasets" (every CIFAR-100, 20 Newsgroups and AG News row);
- Sec. 5.4 (Table 4): the highest AUROC "across most datasets" (most of the OOD rows), on
  models that detect out-of-distribution inputs at all;
- Sec. 5.5.1-5.5.3 (Figs. 3, 6; Tables 1, 3, 6, 7): the curves of CIFAR-10, the lambda sweep
  of the chapter's image data, the post-processing gap in every row / most rows; App. A.15
  (Table 8): L2 below L1 "consistently" (every CIFAR row of the table); App. A.11 (Fig. 7):
  the two-dimensional study; App. A.16 and Sec. 5.3: CheXNet (ChestX-ray14).

Thresholds the paper leaves open are parameters of :func:`definitions`: "converges faster" =
reaches :data:`FRACTION` of its largest drop of normalised test loss sooner; a "significant
reduction" by TS = at least ``ts_drop`` of the pre-T value; "balancing accuracy" = at most
``toy_error`` points more test error; "T close to 1" is the book's one reading
(:func:`replicate.claims.tests.near_one`). The paper shows Figs. 3, 6-9 only as figures: on
its side those claims are not tested, with the reason (:data:`ABSENT`).
"""
from __future__ import annotations

from ...claims import wording
from ...claims.claim import Claim, Over
from ...claims.evidence import Cell, Named
from ...claims.tests import (AllOf, OnRows, Count, Difference, Given, Highest, Lowest, Not, Readings, Statistic, Value,
                             near_one)
from . import plan as fcl

FCL = "fcl"
SEVEN = fcl.METHOD_KEYS
RIVALS = ("brier", "mmce", "ls005", "flsd53")
CAL_METRICS = ("ece", "smece", "adaece", "classwise_ece")
#: The data sets of the paper's main tables (Tables 1-3, 6, 7), its OOD rows (Table 4) and
#: the rows of its figure-only studies.
MAIN = ("cifar10", "cifar100", "tiny_imagenet", "20newsgroups", "ag_news", "finsen")
IMAGES = ("cifar10", "cifar100", "tiny_imagenet")
OOD = ("cifar10_svhn", "cifar10_cifar10c")
TOY, CHEST = "two_moons", "chestxray14"
EVERY_OR_MOST = (("every row", "every"), ("most rows", "most"))
#: The paper's figures (Fig. 3's and Fig. 8's method keys as the runs name them).
FIG3, FIG8, FIG9 = fcl.FIG3_METHODS, fcl.FIG8_METHODS, fcl.FIG9_METHODS
#: "Converges faster": reaches this share of its largest drop of normalised test loss sooner.
FRACTION = 0.9
FIGURE_ONLY = "the paper shows this only in a figure and prints no numbers for it"
#: Why the paper's side has no number for a quantity (a method, metric or Named key).
ABSENT = {
    "mce": "the paper prints MCE only in Fig. 9's panels",
    "smce": "the paper prints no Lipschitz smCE (Def. 2.2): its smCE table is most likely the kernel smECE",
    "chexnet": "Table 9 (App. A.16) is not stored as data: two of its columns are other papers' models and its "
               "'Average' row adds symbols the text never defines (paper_tables)",
    "gradcam": "a qualitative comparison of Grad-CAM heatmaps on ChestX-ray14; the paper gives no measure to test",
}
#: Why our side has no number for the CheXNet and Grad-CAM quantities.
UNREACHABLE = {"chexnet": "ChestX-ray14 (CheXNet) is not available offline",
               "gradcam": "a qualitative comparison of Grad-CAM heatmaps on ChestX-ray14, which is not available "
                          "offline; the paper gives no measure to test"}


def short(key: str) -> str:
    from ...comparison.methods import METHODS

    return METHODS[key].short if key in METHODS else key


def history(stat: str, method: str) -> Named:
    """A number of the per-epoch test records (Figs. 3, 8) of ``method`` (:mod:`.report`)."""
    what = {"fig8_error": "test error % (Fig. 8's epochs)",
            "fig3_converge": f"first epoch with {FRACTION:.0%} of its drop of normalised NLL (Fig. 3)",
            "fig3_mid_mean": "mean normalised NLL (Fig. 3, epochs 50-150)",
            "fig3_mid_std": "s.d. of normalised NLL (Fig. 3, epochs 50-150)",
            "fig3_initial_jitter": "s.d. of the changes of normalised NLL (Fig. 3, epochs 0-50)"}[stat]
    return Named(f"{stat}:{method}", f"{short(method)} {what}")


def toy(stat: str, method: str) -> Named:
    """A number of the two-dimensional study (Fig. 7) of ``method`` ("FL" or "FCL")."""
    what = {"boundary_length": "0.5-boundary length", "uncertain_share": "share (%) of the plane with 0.25 < p < 0.75",
            "ece": "test ECE (%)", "error": "test error (%)"}[stat]
    return Named(f"toy_{stat}:{method}", f"{method} {what} (two moons)")


#: Fig. 9's reliability numbers of cross-entropy (test bins holding >= 1 % of the samples).
GAP_HIGH = Named("ce_gap_high", "Cross Entropy's gap confidence − accuracy (points), bins at confidence >= 0.5")
GAP_LOW = Named("ce_gap_low", "Cross Entropy's gap confidence − accuracy (points), bins below 0.5")
GAP_MIN_HIGH = Named("ce_gap_min_high", "Cross Entropy's smallest bin gap (points) at confidence >= 0.5")


def lambda_cell(lam: float, metric: str, post: str = "none") -> Cell:
    return Cell(fcl.lambda_key(lam), metric, post)


def lowest(q, among, top: int = 1, highest: bool = False):
    """:class:`Lowest` (:class:`Highest`) of ``q`` among ``among``."""
    return (Highest if highest else Lowest)(q, among, top)


def _lowest_all(metrics, post="none", among=SEVEN, top=1):
    return AllOf(*(lowest(Cell(FCL, m, post), [Cell(k, m, post) for k in among], top) for m in metrics))


def _ts_drop(metric: str, share: float) -> Statistic:
    post, pre = Cell("flsd53", metric, "ts"), Cell("flsd53", metric)
    return Statistic(lambda a, b: a - (1 - share) * b, (post, pre), "<=", 0.0, f"{{0}} − {1 - share:g} × {{1}}")


def _changes_less() -> Statistic:
    qs = (Cell(FCL), Cell(FCL, "ece", "ts"), Cell("flsd53"), Cell("flsd53", "ece", "ts"))
    return Statistic(lambda a, b, c, d: abs(a - b) - abs(c - d), qs, "<=", 0.0, "|{0} − {1}| − |{2} − {3}|")


def _detects() -> Count:
    return Count({short(k): Value(Cell(k, "auroc"), ">=", wording.DETECTS_AUROC) for k in SEVEN}, "any", "models")


def _history_lowest(stat: str, methods, top: int = 1) -> Lowest:
    return lowest(history(stat, FCL), [history(stat, m) for m in methods], top)


def definitions(among: int = 3, ts_drop: float = 0.2, toy_error: float = 1.0, lambdas=fcl.LAMBDAS
                ) -> tuple[Claim, ...]:
    """The experimental claims of Liang et al., in the paper's order, each with its test
    (thresholds as in the module docstring; ``lambdas``: the sweep's grid, whose largest value
    is the "overly large" lambda)."""
    if isinstance(ts_drop, bool) or not isinstance(ts_drop, (int, float)) or not 0 < ts_drop < 1:
        raise ValueError(f"ts_drop must be a number in (0, 1); got {ts_drop!r}")
    if isinstance(among, bool) or not isinstance(among, int) or not 1 <= among < len(SEVEN):
        raise ValueError(f"among must be an integer in [1, {len(SEVEN) - 1}]; got {among!r}")
    lams = sorted(float(v) for v in lambdas)
    top = lams[-1]
    sweep = lambda metric, post="none": [lambda_cell(v, metric, post) for v in lams]  # noqa: E731
    reliability = AllOf(Value(GAP_MIN_HIGH, ">", 0.0), Difference(GAP_HIGH, GAP_LOW, ">"))
    middle = AllOf(*(lowest(history(s, m), [history(s, k) for k in FIG3], 2)
                     for s in ("fig3_mid_mean", "fig3_mid_std") for m in (FCL, "dual_focal")))
    one_best = Count({f"λ = {v:g}": AllOf(*(lowest(lambda_cell(v, m, p), sweep(m, p))
                                            for m in ("ece", "adaece", "classwise_ece") for p in ("none", "ts")))
                      for v in lams}, "any", "values of λ")
    chexnet = AllOf(Difference(Named("chexnet:auroc_fcl", "CheXNet mean AUROC, FCL"),
                               Named("chexnet:auroc_bce", "CheXNet mean AUROC, BCE"), ">"),
                    *(Difference(Named(f"chexnet:{m}_fcl", f"CheXNet {m.upper()}, FCL"),
                                 Named(f"chexnet:{m}_bce", f"CheXNet {m.upper()}, BCE"), "<") for m in ("ece", "mce")))
    gradcam = lowest(Named("gradcam:fcl", "Grad-CAM localisation precision, FCL"),
                     [Named(f"gradcam:{m}", f"Grad-CAM localisation precision, {m}") for m in ("CE", "FL")],
                     highest=True)
    C = Claim
    return (
        C("FCL consistently has the lowest pre-T calibration error (ECE, smCE, AdaECE, classwise ECE)",
          "Sec. 5.1.1; Tables 1, 3, 6, 7", _lowest_all(CAL_METRICS), Over("every", MAIN, EVERY_OR_MOST)),
        C("FCL's post-T calibration error is also among the lowest", "Sec. 5.1.1; Tables 1, 3, 6, 7",
          _lowest_all(CAL_METRICS, "ts", top=among), Over("most", MAIN)),
        C("FCL excels with DenseNet-121 and ResNet-50/110", "Sec. 5.1.1; Table 1",
          OnRows(lowest(Cell(FCL), [Cell(k) for k in SEVEN]), ("densenet121", "resnet50", "resnet110")),
          Over("every", ("cifar10", "cifar100"))),
        C("FCL improves calibration markedly on CIFAR-10, CIFAR-100 and Tiny-ImageNet", "Sec. 5.1.1; Table 1",
          Difference(Cell(FCL), Cell("cross_entropy"), "<"), Over("every", IMAGES)),
        C("FCL outperforms Brier, MMCE, label smoothing and focal loss before and after TS",
          "Sec. 5.1.1; Table 1", AllOf(*(lowest(Cell(FCL, "ece", p), [Cell(k, "ece", p) for k in (FCL, *RIVALS)])
                                         for p in ("none", "ts"))), Over("every", MAIN, EVERY_OR_MOST)),
        C("Of CE, FLSD-53, Dual Focal and FCL, FCL is the best calibrated, with the lowest ECE",
          "Sec. 5.1.2; Fig. 9 (ResNet-110, CIFAR-10)",
          OnRows(lowest(Cell(FCL), [Cell(k) for k in FIG9]), ("resnet110",), paper_only=True),
          Over("every", ("cifar10",))),
        C("FCL has a relatively low MCE", "Sec. 5.1.2; Fig. 9",
          Statistic(lambda f, *o: f - sum(o) / len(o), [Cell(k, "mce") for k in (FCL, *FIG9[:-1])], "<", 0.0,
                  "{0} − mean({1}, {2}, {3})", pairs=[(Cell(FCL, "mce"), Cell(k, "mce")) for k in FIG9[:-1]]),
          Over("every", ("cifar10",))),
        C("Cross-entropy shows a large gap between confidence and accuracy, especially in the high-confidence bins",
          "Sec. 5.1.2; Fig. 9", reliability, Over("every", ("cifar10",))),
        C("FCL keeps the lowest test error during training", "Sec. 5.1.2; Fig. 8 (ResNet-50, epochs 100-300)",
          _history_lowest("fig8_error", FIG8), Over("every", ("cifar10",))),
        C("FCL achieves the lowest classification error in most cases across all data sets and models",
          "Sec. 5.2.1; Table 2", lowest(Cell(FCL, "error"), [Cell(k, "error") for k in SEVEN]), Over("most", MAIN)),
        C("FCL's error advantage shows especially on CIFAR-100 and the news data sets", "Sec. 5.2.1; Table 2",
          lowest(Cell(FCL, "error"), [Cell(k, "error") for k in SEVEN]),
          Over("every", ("cifar100", "20newsgroups", "ag_news"))),
        C("Across most OOD data sets FCL achieves the highest AUROC", "Sec. 5.4; Table 4",
          Given(_detects(), AllOf(*(lowest(Cell(FCL, "auroc", p), [Cell(k, "auroc", p) for k in SEVEN], highest=True)
                                    for p in ("none", "ts"))),
                f"the claim is about models that detect out-of-distribution inputs: at least one model's AUROC must "
                f"reach {wording.DETECTS_AUROC:g} %"), Over("most", OOD)),
        C("FCL converges faster: it reaches a low normalised test loss sooner than CE, FL and DFL",
          "Sec. 5.5.1; Fig. 3", _history_lowest("fig3_converge", FIG3), Over("every", ("cifar10",))),
        C("In epochs 50-150, FCL and DFL have the lowest and most stable test loss", "Sec. 5.5.1; Fig. 3",
          middle, Over("every", ("cifar10",))),
        C("In epochs 0-50, cross-entropy's test loss falls steadily while focal loss varies more",
          "Sec. 5.5.1; Fig. 3", Difference(history("fig3_initial_jitter", "fl3"),
                                           history("fig3_initial_jitter", "cross_entropy"), ">"),
          Over("every", ("cifar10",))),
        C("NLL decreases as lambda grows from 0 to 0.5", "Sec. 5.5.2; Fig. 6",
          Difference(lambda_cell(0.5, "nll"), lambda_cell(0.0, "nll"), "<"), Over("every", IMAGES)),
        C("After temperature scaling NLL is generally lower", "Sec. 5.5.2; Fig. 6",
          Count({f"λ = {v:g}": Difference(lambda_cell(v, "nll", "ts"), lambda_cell(v, "nll"), "<") for v in lams},
                "most", "values of λ"), Over("every", IMAGES)),
        C("ECE decreases significantly at lambda 0.5", "Sec. 5.5.2; Fig. 6",
          Difference(lambda_cell(0.5, "ece"), lambda_cell(0.0, "ece"), "<"), Over("every", IMAGES)),
        C("Calibration error increases for larger lambda: too much regularisation degrades calibration",
          "Sec. 5.5.2; Fig. 6", Not(lowest(lambda_cell(top, "ece"), sweep("ece"))), Over("every", IMAGES)),
        C("One lambda gives the best calibration on every ECE metric before and after TS",
          "Sec. 5.5.2; Fig. 6 (the value was lost in extraction)", one_best, Over("every", IMAGES)),
        C("Overly large lambda can reduce classification accuracy", "Sec. 5.5.2; Fig. 6",
          Not(lowest(lambda_cell(top, "error"), sweep("error"))), Over("every", IMAGES)),
        C("Temperature scaling markedly reduces focal loss's calibration error (a substantial post-processing gap)",
          "Sec. 5.5.3; Tables 1, 3, 6, 7", AllOf(*(_ts_drop(m, ts_drop) for m in CAL_METRICS)),
          Over("every", MAIN, EVERY_OR_MOST)),
        C("FCL's calibration error changes little with TS and its temperature is close to 1, confirming the "
          "reduced post-processing gap", "Sec. 5.5.3; Tables 1, 3, 6, 7",
          AllOf(near_one(Cell(FCL, "T", "ts")), _changes_less()), Over("every", MAIN, EVERY_OR_MOST)),
        C("FCL's Lipschitz smCE (Def. 2.2; smCE^2 <= pGap <= 2 smCE, Blasiok et al.) is below focal loss's",
          "beyond the paper: Def. 2.2, Thm. 4.5", Difference(Cell(FCL, "smce"), Cell("flsd53", "smce"), "<"),
          Over("every", MAIN), beyond=True),
        C("The L2 calibration term gives lower ECE than L1, consistently", "App. A.15; Table 8",
          Difference(Cell(FCL, "ece", "none", "norm=l2"), Cell(FCL, "ece", "none", "norm=l1"), "<"),
          Over("every", ("cifar10", "cifar100"))),
        C("On a noisy 2-D set, focal loss draws a sharp boundary around hard samples, FCL a smoother one",
          "App. A.11; Fig. 7", Readings(boundary_shape=Difference(toy("boundary_length", "FCL"),
                                                                  toy("boundary_length", "FL"), "<"),
                                        probability_transition=Difference(toy("uncertain_share", "FCL"),
                                                                          toy("uncertain_share", "FL"), ">")),
          Over("every", (TOY,))),
        C("There FCL balances accuracy and calibration", "App. A.11; Fig. 7",
          AllOf(Difference(toy("ece", "FCL"), toy("ece", "FL"), "<"),
                Difference(toy("error", "FCL"), toy("error", "FL"), "<=", toy_error)), Over("every", (TOY,))),
        C("On CheXNet, FCL improves the average AUROC and the reliability scores (ECE, MCE)", "App. A.16; Table 9",
          chexnet, Over("every", (CHEST,))),
        C("FCL gives the most precise anomaly localisation in Grad-CAM heatmaps", "Sec. 5.3; Fig. 1", gradcam,
          Over("every", (CHEST,))),
    )


def named_keys() -> tuple[str, ...]:
    """The keys of every :class:`~replicate.claims.evidence.Named` quantity the claims read."""
    return tuple(sorted({q.key for c in definitions() for q in c.test.quantities() if isinstance(q, Named)}))
