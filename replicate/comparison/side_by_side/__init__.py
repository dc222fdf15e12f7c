"""Ours beside the paper's: the tables every experiment chapter draws, each of our cells
next to the printed one (:mod:`replicate.comparison.evaluation` computes ours).

- :mod:`.tables` -- a paper's metric table beside ours with the difference
  (:func:`side_by_side`, :func:`s99_side_by_side`), its caption (:func:`table_caption`,
  where our numbers come from: :func:`describe_runs`, :func:`evidence_label`,
  :func:`data_name`) and the captioned Styler with our intervals on hover
  (:func:`styled_table`).
- :mod:`.posthoc` -- the post-hoc calibration tables: a paper's printed TS/FTS table in our
  layout (:func:`paper_posthoc`), both in the FTS paper's layout (:func:`posthoc_table`,
  :func:`posthoc_tips`), the "+ FTS" column of any chapter (:func:`fts_column`,
  :func:`fts_caption`) and :func:`styled`.

The tables of long-form layouts (by setting, by method, means ± standard errors) are
:mod:`replicate.comparison.layouts`'s, beside the frames they read.
"""
from .posthoc import fts_caption, fts_column, paper_posthoc, posthoc_table, posthoc_tips, styled
from .tables import (data_name, describe_runs, evidence_label, interval_tips, s99_side_by_side, side_by_side,
                     styled_table, table_caption)

__all__ = ["side_by_side", "s99_side_by_side", "table_caption", "styled_table", "interval_tips", "describe_runs",
           "evidence_label", "data_name", "paper_posthoc", "posthoc_table", "posthoc_tips", "fts_column",
           "fts_caption", "styled"]
