"""The noise model worked through on one comparison, step by step, for the book's page on
verdicts: every number the page shows about the model is computed here from the runs.

:func:`walkthrough` takes a row of our runs and two cells (``a - b`` claimed ``op`` 0) and
returns each step: the seeds and per-seed values on the whole test set, the first few
resamples (which seeds were drawn, how many distinct test examples, the two cells' means and
their difference), the interval over all resamples and the verdict the rule gives.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...claims.decide import decide, interval, needs_text
from ...claims.evidence import Cell
from . import resampling, scores, store


def walkthrough(ev, row: str, a: Cell, b: Cell, op: str = "<", shown: int = 5) -> dict:
    """The two-level bootstrap of ``a - b`` in ``row`` of ``ev`` (a
    :class:`replicate.comparison.noise.RunsEvidence`), step by step: ``seeds`` (per cell), ``per_seed``
    (a frame: each seed's value of each cell on every test example), ``resamples`` (a frame of
    the first ``shown`` resamples: the seeds drawn, the distinct test examples drawn, each
    cell's mean over its drawn seeds, the difference), ``point``, ``low``, ``high``,
    ``n_boot``, ``n_test``, ``verdict`` and ``noise`` (the model in words)."""
    r = ev.row(row)
    seeds = {c: r.seeds(c.method, c.setting) for c in (a, b)}
    if not seeds[a] or not seeds[b]:
        raise ValueError(f"row {row!r} has no runs of {a.method if not seeds[a] else b.method}")
    per_seed, reps = {}, {}
    for c in (a, b):
        sel = r.t_selected_by.get(c.metric, "ece")
        got = [ev.scored(r, c.method, c.setting, s, c.post, sel) for s in seeds[c]]
        per_seed[c] = [scores.point(g, c.metric) for g in got]
        w = resampling.weights(got[0].n, ev.n_boot, ev.seed, "test")
        reps[c] = np.stack([store.replicated(g, c.metric, w, "") for g in got])
    n_test = r.runs[(a.method, a.setting, seeds[a][0])].logits("test")[1].size
    w = resampling.weights(n_test, ev.n_boot, ev.seed, "test")
    names = ev.names
    rows = []
    for i in range(shown):
        row_ = {"resample": i + 1, "distinct test examples": int((w[i] > 0).sum())}
        for c in (a, b):
            draw = resampling.seed_draws(len(seeds[c]), ev.n_boot, ev.seed)[i]
            row_[f"seeds of {names.method(c.method)}"] = ", ".join(str(seeds[c][j]) for j in draw)
            row_[names.method(c.method)] = float(reps[c][draw, i].mean())
        row_["difference"] = row_[names.method(a.method)] - row_[names.method(b.method)]
        rows.append(row_)
    diff = resampling.over_seeds(reps[a], ev.seed) - resampling.over_seeds(reps[b], ev.seed)
    point = float(np.mean(per_seed[a]) - np.mean(per_seed[b]))
    low, high = interval(point, diff)
    outcome = decide(low, high, op, 0.0, needs_text(point, diff, 0.0))
    frame = pd.DataFrame({"seed": sorted(set(seeds[a]) | set(seeds[b]))})
    for c in (a, b):
        frame[names.method(c.method)] = [per_seed[c][seeds[c].index(s)] if s in seeds[c] else np.nan
                                         for s in frame.seed]
    return {"seeds": seeds, "per_seed": frame, "resamples": pd.DataFrame(rows), "point": point, "low": low,
            "high": high, "n_boot": ev.n_boot, "n_test": n_test, "verdict": outcome.verdict,
            "noise": ev.draws(row, a).noise}
