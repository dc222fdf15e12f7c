"""Comparing training methods the way the papers' tables do, with the paper's numbers beside ours.

An experiment chapter runs four steps, one submodule each:

1. :mod:`.methods` -- the methods (:class:`Method`; :data:`MUKHOTI_METHODS` are the eleven
   of Mukhoti et al. 2020, Sec. 5 and Appendix E, keyed as in :mod:`replicate.paper_tables`);
   :func:`plan` validates the chapter's parameters and builds every run configuration
   before anything trains; :func:`train` trains or loads them through the run store.
2. :mod:`.tables` -- :func:`evaluate_runs` recomputes every table metric from the stored
   logits, before and after temperature scaling with T chosen on the validation set by
   the metric the paper uses (:data:`T_SELECTED_BY`); :func:`side_by_side`,
   :func:`s99_side_by_side` and :func:`styled_table` set ours beside the paper's numbers
   with the difference, every column labelled *paper* or *ours*.
3. :mod:`.paper` -- :func:`paper_reference` (the paper's row for our data and network, or
   the closest one) and :func:`paper_values` (its printed numbers, in our layout).
4. :mod:`.verdicts` -- :func:`verdicts` tests a paper's conclusions (:class:`Claim` rules,
   :func:`mukhoti_claims`) on any set of numbers: ours, or the paper's own row.

A later chapter adds its methods to a registry like :data:`MUKHOTI_METHODS`, its paper's
tables to :mod:`replicate.paper_tables`, and its claims as :class:`Claim` rules.
All metric values are percentages, as the papers print them; temperatures are not.
"""
from .methods import (FOCAL_KEYS, HISTORY_METHODS, MUKHOTI_METHODS, QUALITATIVE_METHODS, SMOKE_METHODS, Method,
                      Plan, configs, default_methods, methods_frame, plan, resolve_methods, train, train_configs)
from .paper import (PAPER_DATASET_LABELS, PAPER_METHOD_ALIASES, PAPER_MODEL_LABELS, PAPER_TABLES, PaperReference,
                    paper_reference, paper_values)
from .tables import (METRIC_NAMES, T_SELECTED_BY, TABLE_METRICS, data_name, describe_runs, evaluate_logits,
                     evaluate_runs, quote, s99_side_by_side, side_by_side, styled_table, summarise, table_caption,
                     value)
from .verdicts import VERDICTS, Claim, mukhoti_claims, verdicts

__all__ = ["Method", "MUKHOTI_METHODS", "FOCAL_KEYS", "HISTORY_METHODS", "QUALITATIVE_METHODS", "SMOKE_METHODS",
           "Plan", "plan", "configs", "default_methods", "resolve_methods", "methods_frame", "train", "train_configs",
           "PaperReference", "paper_reference", "paper_values", "PAPER_TABLES", "PAPER_METHOD_ALIASES",
           "PAPER_MODEL_LABELS", "PAPER_DATASET_LABELS", "T_SELECTED_BY", "TABLE_METRICS", "METRIC_NAMES",
           "evaluate_logits", "evaluate_runs", "summarise", "value", "quote", "side_by_side", "s99_side_by_side",
           "table_caption", "styled_table", "describe_runs", "data_name", "Claim", "VERDICTS", "mukhoti_claims",
           "verdicts"]
