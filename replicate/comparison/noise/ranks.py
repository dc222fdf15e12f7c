"""Ranks of several cells with intervals, from the noise model's joint draws.

The rank of a method is the rank of its cell among the others' on each joint resample
(seeds, then test examples, the same draws for every method: :mod:`replicate.comparison.noise.runs`);
its interval is the central ``level`` share of those ranks. A rank interval of ``[1, 1]`` is
the same statement as :class:`replicate.claims.tests.Lowest` holding: the cell is below every
rival on at least ``(1 + level) / 2`` of the resamples.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as _st

from ...claims.decide import ALPHA
from ...claims.evidence import Cell


def rank_intervals(ev, row: str, cells, higher_is_better: bool = False, level: float = 1 - ALPHA) -> pd.DataFrame:
    """One line per cell of ``cells`` (:class:`~replicate.claims.evidence.Cell`, all present in
    ``row`` of ``ev``): ``method``, ``score`` (its point value), ``rank`` (of the points),
    ``mean_rank``, ``rank_low`` / ``rank_high`` (the ``level`` interval over the joint
    resamples); rank 1 is the lowest (the highest with ``higher_is_better``). The resampled
    ranks are in ``attrs["ranks"]`` (resamples x cells)."""
    cells = list(cells)
    if len(cells) < 2 or not all(isinstance(c, Cell) for c in cells):
        raise ValueError("cells must be at least two Cell quantities")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    got = [ev.draws(row, c) for c in cells]
    missing = [c.method for c, d in zip(cells, got) if isinstance(d, str)]
    if missing:
        raise ValueError(f"cells without numbers in {row}: {', '.join(missing)}")
    sign = -1.0 if higher_is_better else 1.0
    point = sign * np.array([d.point for d in got])
    live = [d.reps for d in got if d.reps is not None]
    b = min(len(r) for r in live) if live else 1
    reps = sign * np.stack([d.reps[:b] if d.reps is not None else np.full(b, d.point) for d in got], axis=1)
    ranks = np.apply_along_axis(_st.rankdata, 1, reps)
    lo, hi = np.quantile(ranks, [(1 - level) / 2, (1 + level) / 2], axis=0)
    out = pd.DataFrame({"method": [c.method for c in cells], "score": sign * point, "rank": _st.rankdata(point),
                        "mean_rank": ranks.mean(axis=0), "rank_low": lo, "rank_high": hi})
    out.attrs.update(ranks=ranks, level=level, noise="; ".join(dict.fromkeys(d.noise for d in got)))
    return out
