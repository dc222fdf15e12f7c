"""Everything the Mukhoti chapter (``exp_focal_loss``) computes from its plan and runs, once,
as the sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``evaluation``
    every run's table metrics, pre and post T (``{group: frame}``);
``claims``
    the claims' verdicts on both sides (:func:`decide`): the paper's printed tables (every
    row it prints) and our runs (every seed the store holds of the chapter's
    configurations, within the noise model of :mod:`replicate.comparison.noise`);
``intervals``
    the 95 % interval of each of our CIFAR-10 table cells, by the same noise model;
``fts_column``, ``ts_code``
    the "+ FTS" column and TS on the FTS authors' grid;
``scale_box``
    the box atop the page.

Each section is computed when first read and kept on disk, so the notebook's views and
figures, the claims ledger and ``replicate claims`` (:func:`claims`, the builder the
registry finds) share one computation.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Missing
from ...comparison import chapter
from ...comparison import report as rpt
from ...comparison.layouts import paper_rows
from .claims import definitions
from .plan import CHAPTER, PAPER, SECTION, plan

#: The metrics of the chapter's CIFAR-10 tables that show an interval on each of our cells.
SHOWN = ("ece", "adaece", "classwise_ece", "mce", "nll", "error")
#: What the paper's side is.
PAPER_SOURCE = "Mukhoti et al. (2020), Tables 1-13, every printed row"


def paper_side():
    """The paper's printed tables, every row, as evidence without noise."""
    return rpt.paper_evidence(paper_rows(PAPER), PAPER_SOURCE)


def decide(p: cmp.Plan, runs: dict | None, frames: dict | None = None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`.claims.definitions` on our runs
    (every group, every seed the store holds; or why they are missing; one side per profile
    when the text rows are planned at another profile than the image rows,
    :func:`replicate.comparison.report.runs_sides`) and on the paper's printed rows."""
    ours = rpt.runs_sides(p, runs, ("image", "text"), frames) if runs else []
    ours = ours or [Missing("ours", p.profile, chapter.not_in_store(p.profile, p))]
    sides = [*ours, *chapter.damaged_sides(p, runs, ("image", "text")), paper_side()]
    return claims_log(PAPER, CHAPTER, definitions(), sides, SECTION, rpt.names())


def _intervals(p: cmp.Plan, image: dict, frames: dict) -> dict:
    shown = rpt.runs_evidence(p, {"image": image}, ("image",), frames, every_seed=False)
    return rpt.table_intervals(shown, [m.key for m in p.methods["image"]], SHOWN)


def report(p: cmp.Plan, runs: dict) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{group: {(method, seed): Run}}``)."""
    from ...book.scale import ScaleBox
    from ...comparison import scale

    image = runs.get("image", {})
    wide = {g: rpt.with_store_seeds(runs[g], p.group(g)) for g in runs}
    sections = {
        "evaluation": lambda r: {g: cmp.evaluate_runs(runs[g]) for g in ("image", "text") if runs.get(g)},
        "claims": lambda r: decide(p, runs, r["evaluation"]),
        "intervals": lambda r: _intervals(p, image, r["evaluation"]),
        "fts_column": lambda r: cmp.fts_column(image, p.methods["image"], metric="ece", select="ece", grid="code"),
        "ts_code": lambda r: cmp.evaluate_posthoc(image, posthoc_settings=("ts",), select="ece", metrics=("ece",),
                                                  grid="code"),
        "scale_box": lambda r: ScaleBox(scale.describe(runs)),
    }
    return rpt.Report(CHAPTER, p.profile, rpt.keys_of(wide), sections)


def claims(profile: str = "cpu", text_profile: str | None = None) -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile`` (its text rows at ``text_profile``, None: ``profile``), the runs of every group
    whose runs are all in the store (never trained; the rows of a group with a missing run
    are left out), decided on both sides."""
    p = plan(profile, device="cpu", text_profile=text_profile)
    runs = cmp.load_groups(p)
    return report(p, runs).claims if runs else decide(p, None)
