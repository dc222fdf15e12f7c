"""Our side of every comparison: the numbers recomputed from our runs' stored logits.

- :mod:`.tables` -- the papers' table metrics (:data:`METRICS`) before and after
  temperature scaling, T chosen on the validation set as the papers do
  (:func:`evaluate_logits`, :func:`evaluate_runs`); :func:`summarise` over seeds, one
  number of it by :func:`value` and :func:`quote`.
- :mod:`.posthoc` -- no calibration, temperature scaling and focal temperature scaling of
  any run, fitted on validation by a named metric over a named grid (the FTS paper's
  evaluation: :func:`posthoc_logits`, :func:`evaluate_posthoc`); :func:`summarise_posthoc`,
  one number of it by :func:`posthoc_value`; the whole FTS search of a run
  (:func:`fts_search`, :func:`optimal_temperatures`).

Values are percentages as the papers print them (the FTS log-loss in nats); temperatures are not.
"""
from .posthoc import (GRID_NAMES, GRIDS, POSTHOC, POSTHOC_METRICS, SELECT_NAMES, evaluate_posthoc, fts_search,
                      optimal_temperatures, posthoc_logits, resolve_grid, summarise_posthoc)
from .posthoc import cell as posthoc_value
from .tables import (METRIC_NAMES, METRICS, T_SELECTED_BY, TABLE_METRICS, evaluate_logits, evaluate_runs, quote,
                     summarise, value)

__all__ = ["METRICS", "METRIC_NAMES", "T_SELECTED_BY", "TABLE_METRICS", "evaluate_logits", "evaluate_runs",
           "summarise", "value", "quote", "POSTHOC", "POSTHOC_METRICS", "GRIDS", "GRID_NAMES", "SELECT_NAMES",
           "posthoc_logits", "evaluate_posthoc", "summarise_posthoc", "posthoc_value", "fts_search",
           "optimal_temperatures", "resolve_grid"]
