"""Comparing training methods the way the papers' tables do, with the paper's numbers beside
ours: the machinery every experiment chapter shares (the papers' specifics live in
:mod:`replicate.experiments`).

1. :mod:`.methods` -- :data:`METHODS`, every training method of the five papers under one
   set of keys (shared with :mod:`replicate.paper_tables`), with network-specific
   parameters where a paper tunes them.
2. :mod:`.plan` -- :class:`Plan`: a chapter's runs in named groups, validated before
   anything trains; :func:`train` trains or loads them through the run store,
   :func:`load` reads them without training (:func:`load_groups`: the groups that are
   complete); :func:`check_datasets` and :func:`add_referenced` are the steps every
   chapter's plan shares.
3. :mod:`.evaluation` -- our side, recomputed from the runs' stored logits:
   :func:`evaluate_runs` every table metric before and after temperature scaling
   (:mod:`.evaluation.tables`), :func:`evaluate_posthoc` no calibration, temperature scaling
   and focal temperature scaling of any run, fitted on validation by a named metric over a
   named grid (the FTS paper's evaluation; :mod:`.evaluation.posthoc`), and their summaries
   over seeds (:func:`summarise`, :func:`summarise_posthoc`).
4. :mod:`.side_by_side` -- ours beside the paper's numbers: :func:`side_by_side` and
   :func:`styled_table` with the difference and our intervals (:mod:`.side_by_side.tables`);
   :func:`paper_posthoc` (a printed TS/FTS table), :func:`posthoc_table` (both in the FTS
   paper's layout) and :func:`fts_column` (the "+ FTS" column of any chapter;
   :mod:`.side_by_side.posthoc`).
5. :mod:`.paper` -- :func:`paper_reference` (the paper's row for our data and network, or
   the closest one) and :func:`paper_values` (its printed numbers, in our layout), for
   any paper of :mod:`replicate.paper_tables`.
6. :mod:`.stats` -- intervals over seeds, paired tests, seeds needed, bootstrap ranks and
   Kendall's tau (whether a difference between methods is real).
7. :mod:`.verdicts` -- :class:`Claim` rules tested on any set of numbers (ours, or the
   paper's own row), written into a :class:`replicate.claims.ClaimLog`.
8. :mod:`.layouts` -- a paper's tables in long form over every row and setting (by table,
   :func:`layouts.paper_long`, or by metric, :func:`layouts.paper_rows`), ours in the same
   form (:func:`layouts.summary_long`), and the layouts of ablation tables by setting, means ±
   standard errors and the recorded defects of a table (:func:`layouts.table_notes`).
9. :mod:`.ood` -- out-of-distribution AUROC and ROC curves from the runs' OOD logits.
10. :mod:`.noise` -- whether our runs resolve a comparison: ``holds`` / ``fails`` /
   ``inconclusive`` for a comparative claim (paired t-test over seeds with three or more,
   else a paired bootstrap over the test examples; best-of-N by bootstrap rank intervals;
   a temperature's range), the tests a :class:`Claim` carries as ``noise``.
11. :mod:`.board` -- what the old rules of :mod:`.noise` still read of the former leaderboard
   machinery (a calibrated run, its metrics on a subset of the test samples, bootstrap rank
   intervals); the leaderboard itself is :mod:`replicate.experiments.leaderboard`.
12. :mod:`.chapter` -- the chapter contract: the modules every experiment chapter folder
   holds, and what they share (:func:`chapter.chapter_log`, :func:`chapter.verdict_counts`
   and its glue keys, :func:`chapter.at_profile`, :func:`chapter.not_in_store`).

All metric values are percentages, as the papers print them; temperatures are not.
"""
from . import ood
from .methods import METHODS, Method, methods_frame, resolve_methods
from .paper import PaperReference, metric_tables, paper_reference, paper_values
from .evaluation import (GRIDS, METRIC_NAMES, METRICS, POSTHOC, POSTHOC_METRICS, T_SELECTED_BY, TABLE_METRICS,
                         evaluate_logits, evaluate_posthoc, evaluate_runs, fts_search, optimal_temperatures,
                         posthoc_logits, posthoc_value, quote, resolve_grid, summarise, summarise_posthoc, value)
from . import board, chapter, layouts, noise, report, scale, stats, wording
from .plan import (Plan, add_referenced, check_datasets, check_seeds, configs, load, load_groups, reuse_finished, train,
                   train_configs)
from .side_by_side import (data_name, describe_runs, evidence_label, fts_caption, fts_column, paper_posthoc,
                           posthoc_table, posthoc_tips, s99_side_by_side, side_by_side, styled, styled_table,
                           table_caption)
from .verdicts import Claim, below, log_claims, lowest, present, short, verdicts

__all__ = ["Method", "METHODS", "resolve_methods", "methods_frame", "Plan", "check_seeds", "configs", "train",
           "train_configs", "load", "load_groups", "check_datasets", "add_referenced", "reuse_finished", "board",
           "stats", "chapter", "noise", "report", "scale", "wording", "PaperReference",
           "paper_reference", "paper_values", "metric_tables",
           "METRICS", "METRIC_NAMES", "T_SELECTED_BY", "TABLE_METRICS", "evaluate_logits", "evaluate_runs",
           "summarise", "value", "quote", "side_by_side", "s99_side_by_side", "table_caption", "styled_table",
           "describe_runs", "evidence_label", "data_name", "Claim", "verdicts", "log_claims", "present", "lowest",
           "below", "short", "POSTHOC", "POSTHOC_METRICS", "GRIDS", "posthoc_logits", "evaluate_posthoc",
           "summarise_posthoc", "posthoc_value", "fts_search", "optimal_temperatures", "resolve_grid", "paper_posthoc",
           "posthoc_table", "posthoc_tips", "fts_column", "fts_caption", "styled"]
