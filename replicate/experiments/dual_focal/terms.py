"""The words of Tao, Dong & Xu's (2023) claims made decidable, and the pieces the Dual Focal
Loss rules share (:mod:`.rules`, :mod:`.appendix_rules`,
:mod:`.figure_rules`).

Words the paper leaves vague get one stated threshold:

- "in most cases": more than half of the rows that have the numbers (:func:`most`);
- "almost all": at least :data:`ALMOST_ALL` of them;
- "lowest": ties included (printed values are rounded; :func:`wins`);
- "competitive" (AUROC): among the best :data:`TOP_K` of the seven methods;
- an optimal temperature within :data:`T_TOL` of 1 "is" 1 (the grid value 1.0).

"Most", "almost all" and "is 1" are the book's one reading of these words
(:mod:`replicate.comparison.wording`), used by every chapter.

A rule reads an :class:`~replicate.experiments.dual_focal.evidence.Evidence`; :func:`gone`
makes it "not tested" when our runs of the group it needs are missing.
"""
from __future__ import annotations

import math

import pandas as pd

from ...claims import untested
from ...comparison import wording
from . import plan as dfl

ALMOST_ALL = wording.ALMOST_ALL
TOP_K = 3
T_TOL = wording.T_IS_ONE_TOLERANCE     # a temperature within this of 1 "is" 1 (the grid step is 0.1)
#: the seven methods of Table 1
SEVEN = dfl.METHOD_KEYS
OTHER_DATA = ("the claim compares data sets: our runs cover one image data set per execution of the chapter "
              "(parameter dataset), and CIFAR-100 and Tiny-ImageNet are not available offline here")


def most(k: int, n: int) -> bool:
    """"In most cases": ``k`` of ``n`` is more than half (False when ``n`` is 0)."""
    return n > 0 and k > n / 2


def wins(tab: pd.DataFrame, method: str, among=SEVEN, highest: bool = False) -> tuple[int, int, list]:
    """``(rows where method is best, rows with its value and another's, rows it loses)`` of a
    table with one column per method (ties count as best; ``highest``: best is the largest)."""
    cols = [c for c in among if c in tab.columns]
    if method not in cols:
        return 0, 0, []
    won, n, lost = 0, 0, []
    for row, v in tab[cols].iterrows():
        v = v.dropna()
        if method not in v.index or len(v) < 2:
            continue
        n += 1
        best = v.max() if highest else v.min()
        if math.isclose(v[method], best, rel_tol=0, abs_tol=1e-9):
            won += 1
        else:
            lost.append(row)
    return won, n, lost


def gone(ev, group: str):
    """``("–", not tested)`` when our ``group`` of runs is missing, else None."""
    if ev.kind == "ours" and group in ev.missing:
        return "–", untested(ev.missing[group])
    return None
