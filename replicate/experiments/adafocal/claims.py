"""The experimental claims of Ghosh et al. (2022), ``exp_adafocal``: each sentence, where the
paper makes it, its one test (:mod:`replicate.claims.tests`) and the rows it covers
(:class:`replicate.claims.claim.Over`), in :func:`definitions`. The same test decides each
claim on the paper's printed Tables 1-10 (every row they print) and on our runs (every row
we trained, every seed the store holds, within the noise model); :mod:`.report` applies
them. AdaFocal is the method ``adafocal`` on every side.

**Which rows, in the paper's words.** "In 9 out of 11 cases" and "in 7 out of the 11
experiments" are shares of the rows of Table 1 (9/11, 7/11); "for any dataset-model pair",
"consistently", "outperform FL-3 and FLSD-53", "significantly better at OOD detection" and
"temperature scaling is ineffective" hold in every row; sentences without a quantifier
over experiments ("outperforms all the baselines", "confirm") are read both ways, in every
row and in most rows; "without a significant loss in accuracy" must hold in every row and
holds with conditions (the rows named) where it holds in most. A claim made of a
figure covers the data set of that figure: Fig. 1, 2, 3, 5(a) and 17-22 are CIFAR-10,
Fig. 5(b) and 8 ImageNet, Table 9 and Table 10 CIFAR-10. Inside a row, "9 out of 9 times",
"mostly" and "7 out of 9 times" count runs (seeds 1-9 where stored, :data:`RUNS`) and "in
every bin" the 15 validation bins (:class:`~replicate.claims.tests.Count`). Sec. 6 says
opposite things of FLSD-53 on CIFAR/Tiny-ImageNet and on ImageNet;
:class:`~replicate.claims.tests.ByDataset` gives each data set its test.

**Figure numbers** are :class:`~replicate.claims.evidence.Named` quantities our runs provide
(:mod:`.report`) and the paper does not print (:func:`paper_absent`: "not tested" there, as
a figure is not a number): the final validation bins of each method (C_val, E_val =
C_val - A_val and |E_val| per bin, the validation AdaECE, C_train), AdaFocal's final per-bin
gammas, the ECE of each AdaFocal run of App. L and their spread over seeds.

**The two AdaFocal rules.** The submission's AdaFocal is Eq. 4; the authors' code adds a
switch to inverse focal loss below |gamma| = 0.2. Both are trained, and our runs are two
sides, as they were before: ``ours: <profile>, AdaFocal Eq. 4`` and ``ours: <profile>,
AdaFocal code rule``, on each of which ``adafocal`` is that rule's runs, so that every claim
keeps one test for the paper's side and both of ours. The code rule's side reads each
claim through :class:`RuleTwin`: in a row where the code rule's runs have the same test
logits as the Eq. 4 runs at every seed (the rules part only once a gamma falls below 0.2),
a claim is "not tested: the same model at this profile", and a claim that names no
AdaFocal quantity is never decided there (both sides hold the same runs of its methods).
So each model is counted once, on the Eq. 4 side, the paper's own rule. We did not make
the code rule a method of one side: every claim of the paper is about AdaFocal, and a
second method would need a second test per claim (or a reading) that restates the first
whenever the two rules train one model, while two sides keep the verdicts of each rule
apart at profiles where they differ.

**Test written here**: :class:`RuleTwin` (a side that restates another side's runs), which
only this chapter's two-rule design needs. A rank among a figure's numbers (all or none) is
:class:`~replicate.claims.tests.Lowest` with ``complete=True``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import comparison as cmp
from ...claims import wording
from ...claims.claim import Claim, Over
from ...claims.decide import not_tested
from ...claims.evidence import Cell, Named
from ...claims.tests import (AllOf, ByDataset, Count, Difference, Given, Highest, Lowest, Not, Statistic, Test, Trend, Value,
                             near_one)
from ...comparison.ood import OOD_SETTINGS
from .plan import BINS, CALFOCAL_KEYS, MAIN_BINS

ADA = "adafocal"
TABLE1 = ("cross_entropy", "brier", "mmce", "ls005", "flsd53")
TABLE10 = ("cross_entropy", "brier", "mmce", "ls005", "fl3", "flsd53")
DEBIASED = ("debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")
TABLE9 = ("ece", "adaece", *DEBIASED)
FIXED_GAMMA = ("cross_entropy", "fl3", "fl4", "fl5")
#: Table 9's training bins: the middle (10-20) and the ends.
TABLE9_BINS = tuple(sorted((*BINS, MAIN_BINS)))
#: AdaFocal's 15 equal-mass validation bins (bin 0: the least confident).
VAL_BINS = 15
#: The runs App. L counts (the paper's 9): seeds 1-9, those the store holds.
RUNS = tuple(range(1, 10))
#: "gamma ends close to 20 (1)": nearer 20 than 1.
GAMMA_MIDWAY = 10.5
#: "gamma goes to 0": below the |gamma| at which the authors' code switches focal loss off (0.2).
GAMMA_AT_ZERO = 0.2
OOD = tuple(OOD_SETTINGS.values())
#: The paper's names of Tables 5-8's estimators (the book's short names call two of them alike).
METRIC_LABELS = {"debiased_ece": "ECE_debias (15 bins)", "debiased_ece_30": "ECE_debias (30 bins)",
                 "sweep_ece": "EW ECE_sweep", "sweep_ece_mass": "EM ECE_sweep"}
FIGURE_ONLY = "the paper shows this only in a figure and prints no numbers for it"
NO_ADAFOCAL = ("the claim names no AdaFocal run: its runs are those of the Eq. 4 side, where it is decided once")
BOTH = Over(readings=(("every row", "every"), ("most rows", "most")))
CIFAR10 = Over("every", datasets=("cifar10",))


def _short(m: str) -> str:
    return "AdaFocal" if m == ADA else cmp.METHODS[m].short


# ----------------------------------------------------------------------------- the Named quantities
def e_val(m: str, b: int) -> Named:
    return Named(f"E_val {m} bin {b}", f"E_val of {_short(m)}, bin {b} (%)")


def abs_e_val(m: str, b: int) -> Named:
    return Named(f"|E_val| {m} bin {b}", f"|E_val| of {_short(m)}, bin {b} (%)")


def c_val(m: str, b: int) -> Named:
    return Named(f"C_val {m} bin {b}", f"C_val of {_short(m)}, bin {b} (%)")


def c_train(m: str, b: int) -> Named:
    return Named(f"C_train {m} bin {b}", f"C_train of {_short(m)}, bin {b} (%)")


def val_adaece(m: str) -> Named:
    return Named(f"validation AdaECE {m}", f"validation AdaECE of {_short(m)}")


def final_gamma(which: str, setting: str = "gamma_max=20") -> Named:
    """AdaFocal's final gamma: ``which`` "lowest bin", "highest bin", "largest bin" (mean over
    seeds), or "three lowest bins" / "three highest bins" (the largest over runs)."""
    return Named(f"final gamma {ADA} {setting} {which}", f"AdaFocal's final γ ({setting}), {which}")


def run_ece(setting: str, seed: int) -> Named:
    return Named(f"ECE {ADA} {setting} seed {seed}", f"AdaFocal ECE pre-T ({setting}), seed {seed}")


def ece_sd(setting: str) -> Named:
    return Named(f"ECE sd {ADA} {setting}", f"AdaFocal's ECE sd over seeds ({setting})")


# ----------------------------------------------------------------------------- chapter tests
def names_adafocal(test: Test) -> bool:
    """Whether ``test`` reads an AdaFocal quantity (a cell or a number of AdaFocal's runs)."""
    return any((isinstance(q, Cell) and q.method == ADA) or (isinstance(q, Named) and f" {ADA} " in f" {q.key} ")
               for q in test.quantities())


class RuleTwin(Test):
    """``test`` read on the side of the authors' code rule: not tested in a row where the
    code rule's runs are the same model as the Eq. 4 runs (``same``: ``{row: why}``, from
    their test logits), nor where the claim names no AdaFocal quantity; else ``test``."""

    def __init__(self, test: Test, same: dict):
        self.test, self.same = test, dict(same)

    def key(self):
        return ("RuleTwin", self.test.key(), tuple(sorted(self.same.items())))

    def quantities(self) -> tuple:
        return self.test.quantities()

    def how(self, names) -> str:
        return self.test.how(names)

    def run(self, ev, row: str):
        if not names_adafocal(self.test):
            return not_tested(NO_ADAFOCAL)
        if row in self.same:
            return not_tested(f"the same model at this profile: {self.same[row]} in {row}; decided once, on the "
                              f"Eq. 4 side")
        return self.test(ev, row)


def twin(claim: Claim, same: dict) -> Claim:
    """``claim`` as the code rule's side reads it (:class:`RuleTwin`)."""
    return replace(claim, test=RuleTwin(claim.test, same))


# ----------------------------------------------------------------------------- helpers of the claims
def _stack_min(*xs):
    return np.min(np.stack(np.broadcast_arrays(*xs)), axis=0)


def _stack_max(*xs):
    return np.max(np.stack(np.broadcast_arrays(*xs)), axis=0)


def _lowest_with_ts(rivals) -> Count:
    """AdaFocal's pre-T or post-T ECE is the lowest of every method's pre- and post-T cells."""
    others = [Cell(m, "ece", p) for m in rivals for p in ("none", "ts")]
    return Count({f"AdaFocal {w}": Lowest(Cell(ADA, "ece", p), others) for w, p in (("pre-T", "none"),
                                                                                    ("post-T", "ts"))},
                 "any", "AdaFocal cells")


def _detects(test: Test, setting: str) -> Given:
    """``test`` where the compared models detect: the largest of their AUROCs (before
    temperature scaling: the models as trained) is not wholly below the threshold."""
    cells = [q for q in test.quantities() if isinstance(q, Cell) and q.post == "none"]
    cond = Statistic(_stack_max, cells, ">=", wording.DETECTS_AUROC, f"the largest pre-T AUROC ({setting[4:]})")
    return Given(cond, test, f"the claim is about models that detect out-of-distribution inputs (AUROC of "
                             f"{wording.DETECTS_AUROC:g} % or more, acceptable discrimination); every compared "
                             f"model's AUROC lies below it")


def _ood(make) -> Count:
    """An OOD-detection claim: ``make(setting)`` on each OOD set, tested only where the
    models detect (:data:`replicate.claims.wording.DETECTS_AUROC`); every set must hold."""
    return Count({s[4:]: _detects(make(s), s) for s in OOD}, "every", "OOD sets")


def _above_rivals(rivals):
    def make(s):
        return Highest(Cell(ADA, "auroc", "none", s),
                       [Cell(m, "auroc", p, s) for m in rivals for p in ("none", "ts")], complete=True)
    return make


def _ts_gain(tolerance: float):
    def make(s):
        return Count({_short(m): Difference(Cell(m, "auroc", "ts", s), Cell(m, "auroc", "none", s), "<=", tolerance)
                      for m in (*TABLE10, ADA)}, "every", "methods")
    return make


def _bins_best_middle(metric: str) -> Statistic:
    mid = [n for n in TABLE9_BINS if 10 <= n <= 20]
    ends = [n for n in TABLE9_BINS if n < 10 or n > 20]
    cells = [Cell(ADA, metric, "none", f"bins={n}") for n in (*mid, *ends)]
    k = len(mid)
    return Statistic(lambda *v: _stack_min(*v[:k]) - _stack_min(*v[k:]), cells, "<", 0.0,
                     f"{METRIC_LABELS.get(metric, cmp.METRIC_NAMES[metric].split(' (')[0])} pre-T: min over "
                     f"{mid} training bins − min over {ends}")


def _per_bin(make, quantifier="every") -> Count:
    return Count({f"bin {b}": make(b) for b in range(VAL_BINS)}, quantifier, "bins")


def _runs_below_flsd(setting: str, quantifier) -> Count:
    flsd = Cell("flsd53", "ece", "none", "Fig. 14")
    return Count({f"seed {s}": Difference(run_ece(setting, s), flsd, "<") for s in RUNS}, quantifier, "runs")


def _not_lowest_everywhere(m: str, among) -> Not:
    others = [o for o in among if o != m]
    return Not(_per_bin(lambda b: Lowest(abs_e_val(m, b), [abs_e_val(o, b) for o in others], complete=True)))


def _check(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
        raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return float(v)


# ----------------------------------------------------------------------------- the claims
def definitions(error_tolerance: float = 1.0, similar_tolerance: float = 0.5, slight_tolerance: float = 0.5,
                ts_tolerance: float = 1.0) -> tuple[Claim, ...]:
    """The claims of Ghosh et al. (2022), each with its test; tolerances in percentage
    points: ``error_tolerance`` "without a significant loss in accuracy" (error at most this
    far above cross-entropy's), ``similar_tolerance`` "very similar" ECE (CalFocal Eq. 2 vs
    Eq. 1), ``slight_tolerance`` "only slightly better" (FLSD-53 vs the best fixed gamma),
    ``ts_tolerance`` "temperature scaling is ineffective" (AUROC gain). "Close to 1" for a
    temperature is the book's one reading (:func:`replicate.claims.tests.near_one`)."""
    err, sim, slight, ts = (_check(n, v) for n, v in (("error_tolerance", error_tolerance),
                                                      ("similar_tolerance", similar_tolerance),
                                                      ("slight_tolerance", slight_tolerance),
                                                      ("ts_tolerance", ts_tolerance)))
    ce, flsd, cal = "cross_entropy", "flsd53", CALFOCAL_KEYS
    lowest_t1 = Lowest(Cell(ADA), [Cell(m) for m in TABLE1])
    fixed = [Cell(m) for m in ("fl3", "fl4", "fl5")]
    C = Claim
    return (
        C("Before temperature scaling AdaFocal has the lowest ECE, by a substantial margin, in 9 of 11 cases",
          "Sec. 6, Table 1", lowest_t1, Over(9 / 11)),
        C("With temperature scaling included, AdaFocal has the lowest ECE in 7 of 11 experiments",
          "Sec. 6, Table 1", _lowest_with_ts(TABLE1), Over(7 / 11)),
        C("AdaFocal's optimal temperature is 1 in many cases and close to 1 in the rest (innately calibrated)",
          "Sec. 6, Sec. 7, Table 1", near_one(Cell(ADA, "T", "ts")), Over("every")),
        C("For any dataset-model pair AdaFocal leads to the gammas that give the best calibration",
          "App. A", lowest_t1, Over("every")),
        C("AdaFocal substantially outperforms the regular focal loss (FLSD-53) consistently",
          "Abstract, Sec. 1, Table 1", Difference(Cell(ADA), Cell(flsd), "<"), Over("every")),
        C("AdaFocal improves calibration without a significant loss in accuracy", "Abstract, Sec. 6, Table 2",
          Difference(Cell(ADA, "error"), Cell(ce, "error"), "<=", err), Over("every", conditional="most")),
        C("FLSD-53 is much better calibrated than CE on CIFAR-10, CIFAR-100 and Tiny-ImageNet; on ImageNet "
          "the reverse", "Sec. 6, Fig. 4, Table 1",
          ByDataset({("cifar10", "cifar100", "tiny_imagenet"): Difference(Cell(flsd), Cell(ce), "<"),
                     ("imagenet",): Difference(Cell(flsd), Cell(ce), ">")}),
          Over("every", datasets=("cifar10", "cifar100", "tiny_imagenet", "imagenet"))),
        C("AdaFocal outperforms all the baselines by a substantial margin in AdaECE, especially pre-T",
          "App. F, Table 3", Lowest(Cell(ADA, "adaece"), [Cell(m, "adaece") for m in TABLE1]), BOTH),
        C("AdaFocal outperforms all the baselines by a substantial margin in classwise ECE, especially pre-T",
          "App. F, Table 4", Lowest(Cell(ADA, "classwise_ece"), [Cell(m, "classwise_ece") for m in TABLE1]), BOTH),
        C("The debiased estimates (ECE_debias 15 and 30 bins, EW and EM ECE_sweep) confirm AdaFocal's lower "
          "calibration error", "Sec. 2, Sec. 6, App. G, Tables 5-8",
          AllOf(*(Lowest(Cell(ADA, m), [Cell(ce, m), Cell(flsd, m)]) for m in DEBIASED)), BOTH),
        C("The best results come from 10 to 20 validation bins; fewer than 10 or more than 20 degrade them",
          "Sec. 6, App. I, Table 9", AllOf(*(_bins_best_middle(m) for m in TABLE9)), CIFAR10),
        C("AdaFocal with γmax = 20 is consistently better than FLSD-53 (9 of 9 runs)", "App. L.1, Fig. 17",
          _runs_below_flsd("gamma_max=20", "every"), CIFAR10),
        C("AdaFocal with γmax = 50 is mostly better than FLSD-53", "App. L.2, Fig. 19",
          _runs_below_flsd("gamma_max=50", "most"), CIFAR10),
        C("AdaFocal with γmax = 50 varies more across runs than with γmax = 20", "App. L.2, Fig. 19",
          Statistic(lambda a, b: a - b, (ece_sd("gamma_max=50"), ece_sd("gamma_max=20")), ">", 0.0,
                    "ECE sd over seeds: γmax 50 − γmax 20",
                    ((Cell(ADA, "ece", "none", "gamma_max=50"), Cell(ADA, "ece", "none", "gamma_max=20")),)),
          CIFAR10),
        C("Unconstrained AdaFocal is better than FLSD-53 in 7 of 9 runs", "App. L.3, Fig. 21",
          _runs_below_flsd("gamma_max=unbounded", 7 / 9), CIFAR10),
        C("Unconstrained gammas blow up to very high values in the lower bins and settle in the higher bins",
          "App. L.3, Fig. 22", AllOf(Value(final_gamma("three lowest bins", "gamma_max=unbounded"), ">", 20.0),
                                     Value(final_gamma("three highest bins", "gamma_max=unbounded"), "<=", 20.0)),
          CIFAR10),
        C("AdaFocal is significantly better at OOD detection than the competing methods",
          "Abstract, Sec. 1, Sec. 7, Table 10", _ood(_above_rivals(TABLE10)), CIFAR10),
        C("Models trained with AdaFocal outperform FL-3 and FLSD-53 at OOD detection", "Sec. 6, Table 10, Fig. 6",
          _ood(_above_rivals(("fl3", flsd))), CIFAR10),
        C("Temperature scaling is ineffective for OOD detection under distributional shift", "Sec. 6, Fig. 6",
          _ood(_ts_gain(ts)), CIFAR10),
        C("Although FL-4 achieves the lowest validation AdaECE, no single γ is the best in every bin",
          "Sec. 3, Fig. 1, App. B",
          Lowest(val_adaece("fl4"), [val_adaece(m) for m in FIXED_GAMMA if m != "fl4"], complete=True),
          CIFAR10),
        C("No single fixed γ achieves the best calibration in every validation bin", "Sec. 3, Fig. 1, App. B",
          AllOf(*(_not_lowest_everywhere(m, FIXED_GAMMA) for m in FIXED_GAMMA)), CIFAR10),
        C("FLSD-53 is not the best strategy across all the bins either", "Sec. 3, Fig. 1(b)",
          _not_lowest_everywhere(flsd, (*FIXED_GAMMA, flsd)), CIFAR10),
        C("C_train and C_val correspond: as γ increases (0, 3, 5) both get lower", "Sec. 4, Fig. 2(b)",
          AllOf(*(_per_bin(lambda b, q=q: Trend([q(m, b) for m in (ce, "fl3", "fl5")], "decreasing"), "most")
                  for q in (c_train, c_val))), CIFAR10),
        C("CalFocal (λ = 10, 100) reduces the calibration error compared to CE but stays far from FLSD-53",
          "Sec. 5.1, Fig. 3(c)", AllOf(*(Difference(Cell(flsd), Cell(k), "<") for k in cal[:2]),
                                       *(Difference(Cell(k), Cell(ce), "<") for k in cal[:2])), CIFAR10),
        C("Too high λ (= 100) affects the accuracy of CalFocal", "Sec. 5.1, Fig. 3(b)",
          AllOf(Difference(Cell(cal[1], "error"), Cell(cal[0], "error"), ">"),
                Difference(Cell(cal[1], "error"), Cell(ce, "error"), ">")), CIFAR10),
        C("CalFocal Eq. 2 performs very similarly to (or slightly better than) Eq. 1", "Sec. 5.1, App. D, Fig. 13",
          AllOf(*(Difference(Cell(f"calfocal2_l{lam}"), Cell(f"calfocal1_l{lam}"), "<=", sim) for lam in (10, 100))),
          CIFAR10),
        C("CE is over-confident compared to FLSD-53 in every bin (CIFAR-10)", "Sec. 6, Fig. 5(a)",
          _per_bin(lambda b: Difference(e_val(ce, b), e_val(flsd, b), ">")), CIFAR10),
        C("AdaFocal finds the γs that produce the lowest calibration error in each bin", "Fig. 5 caption",
          _per_bin(lambda b: Lowest(abs_e_val(ADA, b), [abs_e_val(ce, b), abs_e_val(flsd, b)], complete=True)),
          Over("every", datasets=("cifar10", "imagenet"))),
        C("On CIFAR-10 AdaFocal's γ ends close to 1 in the higher bins and close to 20 in the lowest bin",
          "Sec. 6, Fig. 5(a)", AllOf(Value(final_gamma("lowest bin"), ">", GAMMA_MIDWAY),
                                     Value(final_gamma("highest bin"), "<", GAMMA_MIDWAY)), CIFAR10),
        C("On ImageNet FLSD-53 is under-confident in every bin and AdaFocal's γ goes to 0 (cross-entropy)",
          "Sec. 6, Fig. 5(b), App. A, Fig. 8",
          AllOf(_per_bin(lambda b: Value(e_val(flsd, b), "<", 0.0)), Value(final_gamma("largest bin"), "<",
                                                                            GAMMA_AT_ZERO)),
          Over("every", datasets=("imagenet",))),
        C("AdaFocal's mean ECE over runs is significantly below the baselines' (error bars)", "Sec. 6, App. H, "
          "Fig. 14", Lowest(Cell(ADA, "ece", "none", "Fig. 14"),
                                 [Cell(m, "ece", "none", "Fig. 14") for m in (ce, flsd)], complete=True),
          Over("every")),
        C("FLSD-53 is only slightly better than focal loss with a fixed γ", "Abstract",
          AllOf(Statistic(lambda f, *g: _stack_min(*g) - f, (Cell(flsd), *fixed), ">", 0.0,
                          "better: ECE pre-T, min(FL-3, FL-4, FL-5) − FLSD-53"),
                Statistic(lambda f, *g: _stack_min(*g) - f, (Cell(flsd), *fixed), "<=", slight,
                          "only slightly: ECE pre-T, min(FL-3, FL-4, FL-5) − FLSD-53")), Over("every")),
        C("The moving-average γ update (MA-α) is not as effective as AdaFocal's", "App. K, Fig. 15-16",
          Difference(Cell(ADA), Cell("ma_alpha"), "<"), CIFAR10),
    )


def paper_absent(claims=None) -> dict:
    """Why the paper's side has no number for what it shows only in figures: every Named
    quantity of the claims, CalFocal, the fixed-gamma focal losses, MA-alpha, the runs of
    Fig. 14 and App. L (``{key: reason}`` for :class:`replicate.claims.evidence.Exact`)."""
    out = {q.key: FIGURE_ONLY for c in (claims or definitions()) for q in c.test.quantities() if isinstance(q, Named)}
    out.update(dict.fromkeys(CALFOCAL_KEYS, "the paper shows CalFocal only in Fig. 3 and Fig. 13 and prints no "
                                            "numbers for it"))
    out.update(dict.fromkeys(("fl3", "fl4", "fl5"), "the paper's tables print no fixed-γ focal loss ECE (Mukhoti "
                                                    "et al.'s do: see that chapter)"))
    out["ma_alpha"] = "the paper shows this only in Fig. 15 and Fig. 16 and prints no numbers for it"
    out.update(dict.fromkeys(("Fig. 14", "gamma_max=20", "gamma_max=50", "gamma_max=unbounded"), FIGURE_ONLY))
    return out
