"""Our runs as the evidence a noise test reads: each run's calibrated test probabilities
(:func:`calibrated`, before or after the chapter's temperature) and :class:`RunEvidence`."""
from __future__ import annotations

import math

import numpy as np

from .. import board


# ----------------------------------------------------------------------------- runs -> cells
def calibrated(runs: dict, temperatures: dict | None = None) -> dict:
    """``{(method, seed): Calibrated}`` of ``{(method, seed): Run}``: the test softmax of
    each run's logits divided by ``temperatures[(method, seed)]`` (default 1: no
    temperature scaling). Pass the temperatures a chapter's table used (e.g. from
    :func:`replicate.comparison.evaluate_runs`, rows ``temperature_scaled``) so that the
    verdict is on the numbers the table shows. A run that recorded the leaderboard's
    out-of-distribution set (:data:`replicate.comparison.board.OOD_SET`: its own test images
    with Gaussian noise) carries their softmax at the same T, so the AUROC can be resampled
    with the same indices as the test set (:func:`replicate.comparison.board.score`)."""
    from ... import metrics as _m

    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
    temperatures = temperatures or {}
    unknown = [k for k in temperatures if k not in runs]
    if unknown:
        raise ValueError(f"temperatures names runs that are not in runs: {unknown}")
    out = {}
    for key, run in runs.items():
        z, y = run.logits("test")
        T = float(temperatures.get(key, 1.0))
        if not math.isfinite(T) or T <= 0:
            raise ValueError(f"temperatures[{key!r}] must be a finite number > 0; got {T!r}")
        lp = _m._log_softmax(np.asarray(z, dtype=np.float64) / T)
        y = np.asarray(y, dtype=np.int64)
        ood = None
        if board.OOD_SET in getattr(run, "ood_sets", {}):
            ood = np.exp(_m._log_softmax(np.asarray(run.logits(f"ood:{board.OOD_SET}")[0], dtype=np.float64) / T))
        out[key] = board.Calibrated("ts" if key in temperatures else "none", np.exp(lp), y,
                                    lp[np.arange(len(y)), y], ood, T, math.nan)
    return out


def temperatures_of(frame, metric: str = "ece") -> dict:
    """``{(method, seed): T}`` of the temperature-scaled rows of ``metric`` in a
    :func:`replicate.comparison.evaluate_runs` frame (the T its post-T numbers used)."""
    rows = frame[(frame.metric == metric) & frame.temperature_scaled.astype(bool)]
    if rows.empty:
        raise ValueError(f"frame has no temperature-scaled rows of metric {metric!r}")
    return {(r.method, r.seed): float(r.T) for r in rows.itertuples(index=False)}


# ----------------------------------------------------------------------------- claims on runs
class RunEvidence:
    """A chapter's runs ``{(method, seed): Run}`` as the evidence a claim's noise test reads:
    :meth:`cells` gives the calibrated test probabilities before (``scaled=False``) or after
    temperature scaling with the T of ``frame`` (a :func:`replicate.comparison.evaluate_runs`
    frame: the T the chapter's table used for ``metric``), computed once per setting.
    ``name`` names the table row the runs make ("cifar10, tiny_cnn"). ``board``, the
    leaderboard's calibrations ``{(method, seed, setting): Calibrated}``
    (:func:`replicate.comparison.board.calibrate_runs`), replaces both: :meth:`cells` then
    reads its settings "none" and "ts", :meth:`setting` any of them ("fts"). Tests remember
    their results (:meth:`memo`): claims that share a comparison compute it once."""

    def __init__(self, runs: dict, frame=None, name: str = "our runs", board: dict | None = None):
        if not isinstance(runs, dict) or not runs:
            raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
        self.runs, self.frame, self.name, self.board, self._cells, self._memo = runs, frame, name, board, {}, {}

    def setting(self, setting: str) -> dict:
        """``{(method, seed): Calibrated}`` of the leaderboard's post-hoc ``setting`` (needs ``board``)."""
        if self.board is None:
            raise ValueError("post-hoc settings need board (the leaderboard's calibrate_runs output)")
        cells = {(m, s): c for (m, s, st), c in self.board.items() if st == setting}
        if not cells:
            raise ValueError(f"board has no runs calibrated by setting {setting!r}")
        return cells

    @property
    def methods(self) -> list:
        """The method keys of the runs, in order."""
        return list(dict.fromkeys(m for m, _ in self.runs))

    def memo(self, key, compute):
        """``compute()``, computed once per ``key`` on this evidence."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def cells(self, scaled: bool = False, metric: str = "ece") -> dict:
        if self.board is not None:
            return self.setting("ts" if scaled else "none")
        key = (bool(scaled), metric if scaled else "")
        if key not in self._cells:
            if not scaled:
                self._cells[key] = calibrated(self.runs)
            elif self.frame is None:
                raise ValueError("post-T comparisons need frame (the evaluate_runs frame whose T the table used)")
            else:
                self._cells[key] = calibrated(self.runs, temperatures_of(self.frame, metric))
        return self._cells[key]

    def temperatures(self, method: str, metric: str = "ece") -> list:
        """The T of ``method`` at each seed (from ``frame``), in seed order."""
        if self.frame is None:
            raise ValueError("temperatures need frame (the evaluate_runs frame)")
        ts = temperatures_of(self.frame, metric)
        return [ts[k] for k in sorted(k for k in ts if k[0] == method)]

    def val(self, method: str) -> list:
        """``[(val logits, val labels)]`` of ``method`` at each seed, in seed order."""
        return [self.runs[k].logits("val") for k in sorted(k for k in self.runs if k[0] == method)]




def as_rows(evidence) -> dict:
    """``{row name: RunEvidence}`` of a claim's evidence on our runs: one
    :class:`RunEvidence` (one row, named by its ``name``) or a mapping of rows to them (our
    runs of several data sets: a claim "in most rows" counts them, :func:`tally`)."""
    if isinstance(evidence, RunEvidence):
        return {evidence.name: evidence}
    if isinstance(evidence, dict) and evidence and all(isinstance(v, RunEvidence) for v in evidence.values()):
        return dict(evidence)
    raise ValueError("evidence must be a RunEvidence or a non-empty dict row name -> RunEvidence")


def of_runs(runs: dict, frame=None) -> RunEvidence:
    """:class:`RunEvidence` of a chapter's runs of one table row, named "dataset, model"
    (``frame``: the :func:`replicate.comparison.evaluate_runs` frame whose T the chapter's
    post-T numbers used)."""
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
    run = next(iter(runs.values()))
    return RunEvidence(runs, frame, f"{run.resolved['dataset']}, {run.resolved['model']}")
