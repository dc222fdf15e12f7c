"""The noise model of our runs: one model for every claim, table cell and rank.

A number of our runs - a method's ECE, its temperature, a difference of two methods - varies
with the seed that trained the model and with the finite test set that scored it. Both
matter, and they act together: every method is scored on one shared test set (and picks
its T on one shared validation set), while each seed trains another model. The book treats
them with one **two-level bootstrap** (:mod:`.resampling`): each resample first draws the
seeds of each method with replacement (the same seed positions for methods with as many
seeds), then draws the test examples with replacement, the same examples for every run of
the row. A cell's value on a resample is the mean over its drawn seeds of the metric on the
drawn examples; every cell of a row is resampled with the same draws, so a statistic of
several cells (a difference, a rank, a difference of differences) has draws too, and its
95 % interval holds the seed spread and the test-set noise at once. With one seed the model
is the paired bootstrap over the test examples; for a chosen temperature the validation
examples are resampled and T chosen again (:mod:`.temperatures`).

- :mod:`.resampling` -- the draws: weight matrices of the examples, seed positions;
- :mod:`.scores` -- a run's metrics on every resample (matrix products of per-example terms
  where the metric is a sum; the plain loop otherwise, and as the tests' oracle);
- :mod:`.temperatures` -- a temperature chosen again on every resample;
- :mod:`.runs` -- :class:`RunsEvidence`, our runs as the evidence of
  :mod:`replicate.claims.tests` (the paper's printed cells are
  :class:`replicate.claims.evidence.Exact`: the same tests, without noise), and the
  detection of identical runs;
- :mod:`.ranks` -- rank intervals from the same draws.
"""
from .ranks import rank_intervals
from .resampling import N_BOOT, N_BOOT_SLOW, over_seeds, seed_draws, weights
from .runs import RowRuns, RunsEvidence, calibrate, fingerprint
from .scores import METRICS, SLOW, VECTORISED, Scored

__all__ = ["N_BOOT", "N_BOOT_SLOW", "METRICS", "SLOW", "VECTORISED", "RowRuns", "RunsEvidence", "Scored", "calibrate",
           "fingerprint", "over_seeds", "rank_intervals", "rule_text", "seed_draws", "weights"]


def rule_text() -> str:
    """The decision rule and the noise model in words, with their thresholds: the sentence
    every experiment chapter's verdict section quotes (glue key ``noise_rule``)."""
    from ...claims import wording

    return (f"a claim holds on our runs only when the 95 % interval of its statistic (a difference of two cells, a "
            f"cell minus the best of its rivals, a temperature) lies wholly on the claimed side of its threshold, "
            f"fails when it lies wholly on the contrary side, and is inconclusive otherwise, the row saying about how "
            f"much more evidence would decide it; the interval comes from one noise model, a two-level bootstrap of "
            f"{N_BOOT:,} resamples (every committed seed of each method resampled, then the shared test examples, the "
            f"same draws for every method; for a temperature the validation examples, T chosen again on each of "
            f"{N_BOOT_SLOW} resamples), which with one seed is the bootstrap over the test examples; the paper's "
            f"printed numbers go through the same test with no noise; a claim over k of N rows (\"most\": more than "
            f"half; \"almost all\": {wording.ALMOST_ALL:.0%}) holds once k rows hold and fails once more than N − k "
            f"fail; an optimal temperature close to 1 means {wording.near_one_text()}, one that is 1 means "
            f"{wording.is_one_text()}; two variants whose runs have identical test logits are the same model and "
            f"are not compared; an out-of-distribution claim is not tested on models whose AUROC interval stays "
            f"below {wording.DETECTS_AUROC:g} %")
