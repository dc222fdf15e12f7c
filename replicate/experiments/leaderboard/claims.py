"""The leaderboard's claims: each paper's headline claim restated on the common protocol
(:func:`rules`), one registered builder per paper (``claims_<paper key>``, made for every
paper of :data:`replicate.papers.PAPERS` by the module's ``__getattr__``), decided on the
frame of :func:`.evidence.evaluate`."""
from __future__ import annotations

import pandas as pd

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import board, chapter, noise
from ...papers import PAPERS
from . import rules as r
from .plan import CHAPTER, FTS_PAPER, HEADLINE, SECTION, plan


def rules(paper: str, alpha: float = 0.05) -> tuple[cmp.Claim, ...]:
    """``paper``'s headline claim restated on the common protocol, as rules on the per-seed
    frame of :func:`evaluate` (columns ``method, seed, setting, metric, value``) and, on our
    runs, decided within their noise (:func:`.rules.lowest_test`, :func:`.rules.fts_test`):
    the paper's method is the lowest when its bootstrap rank interval (seeds and test
    examples resampled) is [1, 1], not the lowest when the interval excludes rank 1, and
    ``inconclusive`` otherwise. Without runs (the rule alone) each is read two ways: the
    lowest *mean* over seeds, and *significantly* lower than every other method of the
    paper's table (paired t-test over seeds, p < ``alpha``). The FTS paper's claim is about
    post-hoc calibration: FTS lowers the ECE of every model of its Table 1 (plus, beyond the
    paper, of every model of the leaderboard), each model by the paired t-test over seeds."""
    from ...papers import get_paper

    get_paper(paper)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    if paper == FTS_PAPER:
        how = ("test ECE after FTS vs after TS, both chosen by validation ECE on T = 0.1..10.0; per model the "
               "paired t-test over seeds (95 % interval of the difference); holds when every model's FTS - TS "
               "interval lies below 0, fails when one lies at or above 0")
        return (cmp.Claim("FTS gives a lower ECE than TS for every model of the paper's Table 1", "Sec. 5.2, Sec. 6",
                          r.fts_rule(alpha, False), how + " (the paper: equal-mass ECE, T = 0.01..5)",
                          r.fts_test(False)),
                cmp.Claim("FTS gives a lower ECE than TS for every model of the leaderboard", "(the book)",
                          r.fts_rule(alpha, True), how, r.fts_test(True)))
    own = next(m.short for m in cmp.METHODS.values() if m.compared_with == HEADLINE[paper][0])
    how = ("test ECE (15 equal-width bins) of every method of the paper's Table 1 row we train; holds when the "
           "paper's method has the 95 % bootstrap rank interval [1, 1] (seeds and test examples resampled), fails "
           "when the interval excludes rank 1")
    return tuple(cmp.Claim(f"{own} has the lowest ECE of the methods of the paper's Table 1, {when} temperature "
                           f"scaling", f"Table {HEADLINE[paper][1]}", r.lowest_rule(paper, scaled, alpha),
                           how + (" (T by validation ECE)" if scaled else ""), r.lowest_test(paper, scaled))
                 for scaled, when in ((False, "before"), (True, "after")))


def headline_log(paper: str, frame: pd.DataFrame | None, label: str, missing_reason: str = "",
                 runs: noise.RunEvidence | None = None) -> ClaimLog:
    """``paper``'s headline claims on the common protocol, decided on ``frame`` (:func:`evaluate`)
    labelled ``label`` and, with ``runs`` (:func:`run_evidence`), within the runs' noise;
    ``frame`` None: "not tested" with ``missing_reason``."""
    if frame is None:
        return chapter.chapter_log(paper, CHAPTER, rules(paper), {}, {label: missing_reason}, section=SECTION)
    return chapter.chapter_log(paper, CHAPTER, rules(paper), {label: frame}, section=SECTION,
                               runs={label: runs} if runs is not None else None)


def run_evidence(runs: dict, calibrated: dict) -> noise.RunEvidence:
    """Our runs ``{(method, seed): Run}`` with their three post-hoc calibrations
    (:func:`.evidence.evaluate`'s ``calibrated``), as the claims' noise tests read them."""
    run = next(iter(runs.values()))
    return noise.RunEvidence(runs, name=f"{run.resolved['dataset']}, {run.resolved['model']}", board=calibrated)


def headline_claims(frame: pd.DataFrame, label: str, runs: noise.RunEvidence | None = None
                    ) -> tuple[list[ClaimLog], pd.DataFrame]:
    """Every paper's :func:`headline_log` on ``frame`` (and ``runs``, :func:`run_evidence`)
    and their rows in one frame (papers in book order)."""
    logs = [headline_log(p, frame, label, runs=runs) for p in PAPERS]
    return logs, pd.concat([log.frame() for log in logs], ignore_index=True)


_EVALUATED: dict = {}   # run keys -> evaluation frame (the five papers' builders share one evaluation)


def claims(profile: str = "cpu", paper: str = "mukhoti2020") -> ClaimLog:
    """The registered claims of ``paper`` (one builder per paper, ``claims_<paper key>``): the
    chapter's default plan at ``profile``, its runs read from the store (never trained)."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p)
    if runs is None:
        return headline_log(paper, None, f"ours: {p.profile}, cifar10",
                          f"the chapter's {p.profile} runs are not all in the run store (execute the chapter)")
    image = runs["image"]
    key = tuple(sorted(r.key for r in image.values()))
    if key not in _EVALUATED:
        calibrated = board.calibrate_runs(image)
        _EVALUATED[key] = (board.evaluate_board(calibrated, metrics=("ece",)), run_evidence(image, calibrated))
    frame, ours = _EVALUATED[key]
    return headline_log(paper, frame, cmp.evidence_label(image), runs=ours)


def _builder(paper: str):
    def build(profile: str = "cpu") -> ClaimLog:
        return claims(profile, paper)
    build.__name__ = build.__qualname__ = f"claims_{paper}"
    build.__doc__ = f":func:`claims` of {paper} (registered in :data:`replicate.claims.SOURCES`)."
    return build


def __getattr__(name: str):
    """``claims_<paper key>``: the registered builder of that paper (:func:`claims` of it), for
    every paper of :data:`replicate.papers.PAPERS` (the registry names them; no list here)."""
    paper = name.removeprefix("claims_")
    if name.startswith("claims_") and paper in PAPERS:
        return _builder(paper)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
