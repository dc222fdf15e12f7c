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
6. :mod:`.stats` -- intervals over seeds, paired t-tests, seeds needed and Kendall's tau (the
   leaderboard's paired matrix and the exercises; a verdict's noise is :mod:`.noise`).
7. :mod:`.layouts` -- a paper's tables in long form over every row and setting (by table,
   :func:`layouts.paper_long`, or by metric, :func:`layouts.paper_rows`), ours in the same
   form (:func:`layouts.summary_long`), and the layouts of ablation tables by setting, means ±
   standard errors and the recorded defects of a table (:func:`layouts.table_notes`).
8. :mod:`.ood` -- out-of-distribution AUROC and ROC curves from the runs' OOD logits.
9. :mod:`.noise` -- the one noise model of our runs (a two-level bootstrap: seeds, then the
   shared test examples): our runs as the evidence of :mod:`replicate.claims.tests`
   (:class:`noise.RunsEvidence`), rank intervals, the rule in words.
10. :mod:`.report` -- a chapter's report (sections computed once from its plan and runs and
   kept on disk) and both sides of its claims: our runs (every stored seed), the paper's
   printed cells as :class:`replicate.claims.evidence.Exact`.
11. :mod:`.scale` -- the numbers of the scale box atop every experiment chapter (the box is
   drawn by :mod:`replicate.book.scale`).
12. :mod:`.chapter` -- the chapter contract: the modules every experiment chapter folder
   holds, and what they share (:func:`chapter.at_profile`, :func:`chapter.not_in_store`).

All metric values are percentages, as the papers print them; temperatures are not.
"""
from . import chapter, layouts, noise, ood, report, scale, stats
from .evaluation import (GRIDS, METRIC_NAMES, METRICS, POSTHOC, POSTHOC_METRICS, T_SELECTED_BY, TABLE_METRICS,
                         evaluate_logits, evaluate_posthoc, evaluate_runs, fts_search, optimal_temperatures,
                         posthoc_logits, posthoc_value, quote, resolve_grid, summarise, summarise_posthoc, value)
from .methods import METHODS, Method, methods_frame, resolve_methods, short
from .paper import PaperReference, metric_tables, paper_reference, paper_values
from .plan import (Plan, add_referenced, check_datasets, check_seeds, check_text_profile, configs, load, load_groups, reuse_finished, train,
                   train_configs)
from .side_by_side import (data_name, describe_runs, evidence_label, fts_caption, fts_column, paper_posthoc,
                           posthoc_table, posthoc_tips, s99_side_by_side, side_by_side, styled, styled_table,
                           table_caption)

__all__ = ["Method", "METHODS", "resolve_methods", "methods_frame", "short", "Plan", "check_seeds", "check_text_profile", "configs", "train",
           "train_configs", "load", "load_groups", "check_datasets", "add_referenced", "reuse_finished",
           "chapter", "layouts", "noise", "ood", "report", "scale", "stats", "PaperReference", "paper_reference", "paper_values",
           "metric_tables", "METRICS", "METRIC_NAMES", "T_SELECTED_BY", "TABLE_METRICS", "evaluate_logits",
           "evaluate_runs", "summarise", "value", "quote", "side_by_side", "s99_side_by_side", "table_caption",
           "styled_table", "describe_runs", "evidence_label", "data_name", "POSTHOC", "POSTHOC_METRICS", "GRIDS",
           "posthoc_logits", "evaluate_posthoc", "summarise_posthoc", "posthoc_value", "fts_search",
           "optimal_temperatures", "resolve_grid", "paper_posthoc", "posthoc_table", "posthoc_tips", "fts_column",
           "fts_caption", "styled"]
