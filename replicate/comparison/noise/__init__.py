"""Do our runs resolve a comparison? ``holds``, ``fails`` or ``inconclusive`` for a claim on our runs.

A comparative claim ("A has a lower ECE than B", "A is the best of N", "the optimal T is
close to 1") is decided on our runs by one rule, whatever the chapter:

1. the quantity the claim is about gets an interval at level ``1 - alpha`` (95 %) that
   holds the runs' noise:

   - a difference ``a - b`` between two methods, with at least :data:`MIN_SEEDS` seeds:
     the paired t interval over seeds (:func:`replicate.comparison.stats.paired_comparison`,
     the test the leaderboard uses; both methods trained with the same seeds);
   - with fewer seeds: a **paired bootstrap over the test examples**
     (:func:`paired_bootstrap`): each resample draws ``n`` test indices with replacement,
     the same indices for both methods (and for every seed: they share one test set), the
     metric is recomputed on the resample (ECE: the samples re-binned and the bins
     re-summed, vectorised over resamples), and the percentile interval of ``a - b`` is
     taken. It holds the noise of the finite test set, not the noise of training (another
     seed trains another model): with one seed nothing can measure that;
   - "best of N": the bootstrap rank intervals of the leaderboard
     (:func:`replicate.comparison.board.rank_intervals`: test examples, and seeds when
     there are several, resampled with the same draws for every method);
   - "close to a value" for a temperature: the t interval of the mean optimal T over seeds,
     or with fewer seeds a bootstrap over the *validation* examples with T chosen again
     on each resample (:func:`temperature_bootstrap`, vectorised over the T grid).

2. ``holds`` when the whole interval lies on the side the claim states (the runs resolve
   the claimed direction); ``fails`` when it lies wholly on the contrary side (the runs
   resolve the contrary; two identical models, difference exactly 0, are not "lower");
   ``inconclusive`` otherwise, with what would decide it: the seeds a paired t-test would
   need (:func:`replicate.comparison.stats.seeds_needed`, 80 % power at the 5 % level) or,
   with the bootstrap, about how many test examples would (:func:`test_size_needed`).

The package, by concept: :mod:`.rule` (the decision, :func:`tally` for claims over rows),
:mod:`.resampling` (metrics on resamples, the paired bootstrap, a cell's interval),
:mod:`.comparisons` (:func:`compare`, :func:`best_of`), :mod:`.temperatures`,
:mod:`.evidence` (runs -> calibrated cells, :class:`RunEvidence`) and :mod:`.claim_tests`
(a claim's test: :func:`lower`, :func:`best`, :func:`in_rows`, ...). The thresholds of the
papers' vague words are :mod:`replicate.comparison.wording`.

Every function refuses bad input with a one-line error before any resampling. The
decision itself is :func:`decide` (a difference) and :func:`decide_within` (a value in a
range); :func:`compare`, :func:`best_of` and :func:`temperature_near` compute the interval
from the runs and call them.
"""
from . import claim_tests, comparisons, evidence, resampling, rule, temperatures  # noqa: F401
from .claim_tests import (all_of, at_most, best, detects, higher, in_rows, lower, method_labels, near, near_one,
                          negated, not_tested, readings_of, row_readings, t_higher)
from .comparisons import best_of, compare
from .evidence import RunEvidence, as_rows, calibrated, of_runs, temperatures_of
from .resampling import (N_BINS, VECTORISED, bootstrap_statistic, cell_intervals, check_metric, interval,
                         metric_label, metrics_allowed, paired_bootstrap, resampled, score, table_intervals)
from .resampling import _draws, _multiplicity  # noqa: F401  (the tests' oracles draw the same resamples)
from .rule import (ALPHA, CLAIMED, MIN_SEEDS, N_BOOT, N_BOOT_SLOW, POWER, Resolution, all_hold, decide,
                   decide_within, tally, test_size_needed)
from .temperatures import temperature_bootstrap, temperature_compare, temperature_near
from .temperatures import _temperature_rows  # noqa: F401  (checked against posthoc.fit_temperature)

__all__ = ["ALPHA", "CLAIMED", "MIN_SEEDS", "N_BINS", "N_BOOT", "N_BOOT_SLOW", "POWER", "Resolution", "RunEvidence",
           "VECTORISED", "all_hold", "all_of", "as_rows", "at_most", "best", "best_of", "bootstrap_statistic",
           "calibrated", "cell_intervals", "check_metric", "compare", "decide", "decide_within", "detects",
           "higher", "in_rows", "interval", "lower", "method_labels", "metric_label", "metrics_allowed", "near",
           "near_one", "negated", "not_tested", "of_runs", "paired_bootstrap", "readings_of", "resampled",
           "row_readings", "score", "t_higher", "table_intervals", "tally", "temperature_bootstrap",
           "temperature_compare", "temperature_near", "temperatures_of", "test_size_needed"]
