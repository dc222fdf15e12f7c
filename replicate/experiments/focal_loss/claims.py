"""The experimental claims of Mukhoti et al. (2020), ``exp_focal_loss``: each sentence, where
the paper makes it, its one test (:mod:`replicate.claims.tests`) and the rows it covers
(:class:`replicate.claims.claim.Over`), in :func:`definitions`. The same test decides each
claim on the paper's printed tables (every row they print) and on our runs (every row we
trained, within the noise model); :mod:`.report` applies them.

The paper's quantifiers, as it words them: focal loss is better calibrated "in almost all
cases" (Sec. 1, of the results of Sec. 6), the focal models' temperatures lie "mostly" between 0.9 and 1.1 (Sec. 6),
the baselines' are "significantly higher" (every row), FLSD-53 "broadly produces the lowest
ECE" (most rows), and Table 6 (CIFAR-10 rows) shows the focal model keeping more confident
predictions after temperature scaling.
"""
from __future__ import annotations

from ...claims.claim import Claim, Over
from ...claims.evidence import Cell
from ...claims.tests import AllOf, Difference, Given, Lowest, Value, near_one
from .plan import FOCAL_KEYS

#: The |S99| claim is about models confident before temperature scaling (the paper's
#: cross-entropy ResNet-50 puts 95.93 % of the test set at confidence >= 0.99, Table 6); it is
#: tested where cross-entropy puts at least this share (%) there before TS.
MIN_S99 = 1.0


def definitions(min_s99: float = MIN_S99) -> tuple[Claim, ...]:
    """The conclusions of Mukhoti et al. (2020), Sec. 5-6, each with its test."""
    if isinstance(min_s99, bool) or not isinstance(min_s99, (int, float)) or not min_s99 >= 0:
        raise ValueError(f"min_s99 must be a number >= 0; got {min_s99!r}")
    ce, flsd = "cross_entropy", "flsd53"
    focal = [Cell(k) for k in FOCAL_KEYS]
    focal_ts = [Cell(k, "ece", "ts") for k in FOCAL_KEYS]
    return (
        Claim("Focal loss (FLSD-53) has a lower test ECE than cross-entropy", "Sec. 6, Tables 1, 7",
              Difference(Cell(flsd), Cell(ce), "<"), Over("almost all")),
        Claim("The optimal T of the focal-loss model FLSD-53 is near 1", "Sec. 6",
              near_one(Cell(flsd, "T", "ts")), Over("most")),
        Claim("Cross-entropy needs a larger optimal T than FLSD-53", "Sec. 6, Table 1",
              Difference(Cell(ce, "T", "ts"), Cell(flsd, "T", "ts"), ">"), Over("every")),
        Claim("FLSD-53 is the best focal variant (lowest ECE before and after TS)", "Sec. 5-6, Table 7",
              AllOf(Lowest(Cell(flsd), focal), Lowest(Cell(flsd, "ece", "ts"), focal_ts)), Over("most")),
        Claim("After TS, FLSD-53 keeps more confident predictions (larger |S99|) than cross-entropy",
              "Sec. 6, Table 6",
              Given(Value(Cell(ce, "s99_fraction"), ">=", min_s99),
                    Difference(Cell(flsd, "s99_fraction", "ts"), Cell(ce, "s99_fraction", "ts"), ">"),
                    f"the claim is about models confident before TS: cross-entropy's |S99| must be at least "
                    f"{min_s99:g} % of the test set"),
              Over("every", datasets=("cifar10",))),
    )
