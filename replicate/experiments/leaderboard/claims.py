"""The leaderboard's claims: each paper's headline claim restated on the common protocol
(:func:`rules`), one registered builder per paper (``claims_<paper key>``, made for every
paper of :data:`replicate.papers.PAPERS` by the module's ``__getattr__``), decided on the
frame of :func:`.evidence.evaluate`."""
from __future__ import annotations

import pandas as pd

from ... import comparison as cmp
from ...claims import ClaimLog
from ...comparison import board, chapter
from ...papers import PAPERS
from . import rules as r
from .plan import CHAPTER, FTS_PAPER, HEADLINE, SECTION, plan


def rules(paper: str, alpha: float = 0.05) -> tuple[cmp.Claim, ...]:
    """``paper``'s headline claim restated on the common protocol, as rules on the per-seed
    frame of :func:`evaluate` (columns ``method, seed, setting, metric, value``). Each is read
    two ways: the paper's method has the lowest *mean* over seeds, and it is *significantly*
    lower than every other method of the paper's table (paired t-test over seeds, p <
    ``alpha``, no correction for the several tests); the verdict depends on the reading when
    the two disagree. The FTS paper's claim is about post-hoc calibration: FTS lowers the ECE
    of every model of its Table 1 (plus, beyond the paper, of every model of the leaderboard)."""
    from ...papers import get_paper

    get_paper(paper)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    if paper == FTS_PAPER:
        how = "test ECE after FTS vs after TS, both chosen by validation ECE on T = 0.1..10.0"
        return (cmp.Claim("FTS gives a lower ECE than TS for every model of the paper's Table 1", "Sec. 5.2, Sec. 6",
                          r.fts_rule(alpha, False), how + " (the paper: equal-mass ECE, T = 0.01..5)"),
                cmp.Claim("FTS gives a lower ECE than TS for every model of the leaderboard", "(the book)",
                          r.fts_rule(alpha, True), how))
    own = next(m.short for m in cmp.METHODS.values() if m.compared_with == HEADLINE[paper][0])
    how = ("mean test ECE (15 equal-width bins) over seeds of every method of the paper's Table 1 row we train; "
           f"reading 2: paired t-test against each, p < {alpha:g}")
    return tuple(cmp.Claim(f"{own} has the lowest ECE of the methods of the paper's Table 1, {when} temperature "
                           f"scaling", f"Table {HEADLINE[paper][1]}", r.lowest_rule(paper, scaled, alpha),
                           how + (" (T by validation ECE)" if scaled else ""))
                 for scaled, when in ((False, "before"), (True, "after")))


def headline_log(paper: str, frame: pd.DataFrame | None, label: str, missing_reason: str = "") -> ClaimLog:
    """``paper``'s headline claims on the common protocol, decided on ``frame`` (:func:`evaluate`)
    labelled ``label``; ``frame`` None: "not tested" with ``missing_reason``."""
    if frame is None:
        return chapter.chapter_log(paper, CHAPTER, rules(paper), {}, {label: missing_reason}, section=SECTION)
    return chapter.chapter_log(paper, CHAPTER, rules(paper), {label: frame}, section=SECTION)


def headline_claims(frame: pd.DataFrame, label: str) -> tuple[list[ClaimLog], pd.DataFrame]:
    """Every paper's :func:`headline_log` on ``frame`` and their rows in one frame (papers in
    book order)."""
    logs = [headline_log(p, frame, label) for p in PAPERS]
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
        _EVALUATED[key] = board.evaluate_board(board.calibrate_runs(image), metrics=("ece",))
    return headline_log(paper, _EVALUATED[key], cmp.evidence_label(image))


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
