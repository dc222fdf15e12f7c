"""Our runs as the evidence a claim test reads (:class:`RunsEvidence`), with their noise.

A row of our runs (:class:`RowRuns`: one data set and network) holds every stored run of
the methods a chapter's claims name, ``{(method, setting, seed): Run}`` - every committed
seed, not only the seeds the chapter shows. A table cell (:class:`replicate.claims.evidence.Cell`)
is the mean over the method's seeds of its metric, after the post-hoc setting the cell
names (T as the chapter's table chose it). Its draws are the two-level bootstrap of
:mod:`replicate.comparison.noise.resampling`: seeds resampled, then the test examples, the same draws for
every method and seed of the row, so that a difference or a rank of several cells has one
interval holding both the seeds' spread and the shared test set's. A chosen temperature
(``metric="T"``) is resampled over the validation examples instead (T chosen again on each
resample, :mod:`replicate.comparison.noise.temperatures`). With one seed the model reduces to the
paired bootstrap over the test examples (nothing measures the training noise then, and the
row's noise text says so).

Two runs whose test logits are identical are the same model: :meth:`RunsEvidence.identical`
names them, and a claim test comparing them says so instead of counting the model twice.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from ... import metrics as _m
from ... import posthoc
from ...claims.evidence import Cell, Draws, Evidence, Named, Names, Row
from . import resampling, scores, store, temperatures
from .resampling import N_BOOT, N_BOOT_SLOW

#: The out-of-distribution set an AUROC cell reads when its setting names none.
DEFAULT_OOD = "cifar10c_gaussian5"


@dataclass
class RowRuns:
    """One row of our runs: ``runs`` ``{(method, setting, seed): Run}`` of one data set and
    network (``setting`` ``""`` for the main table). ``temperatures`` ``{(method,
    setting, seed, selector): T}``: the T the chapter's tables used (chosen again by
    :func:`replicate.comparison.noise.temperatures.chosen` when absent); ``t_selected_by`` ``{metric:
    selector}`` (default ``"ece"``); ``ood_settings`` ``{table setting: OOD set}``: the
    settings whose AUROC reads an out-of-distribution set of the main runs
    (``{"ood=SVHN": "svhn"}``); ``named`` ``{key: Draws or reason}`` for the chapter's
    :class:`~replicate.claims.evidence.Named` quantities; ``scored`` ``{(method, setting,
    seed, post): Scored}``: calibrations the chapter made itself (another selection metric,
    grid or map), used instead of :func:`calibrate`. A run may stand under several settings
    (the same model calibrated several ways)."""

    name: str
    dataset: str
    model: str
    runs: dict
    temperatures: dict = field(default_factory=dict)
    t_selected_by: dict = field(default_factory=dict)
    ood_settings: dict = field(default_factory=dict)
    named: dict = field(default_factory=dict)
    scored: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.runs, dict) or not self.runs:
            raise ValueError(f"row {self.name!r}: runs must be a non-empty dict (method, setting, seed) -> Run")
        bad = [k for k in self.runs if not (isinstance(k, tuple) and len(k) == 3)]
        if bad:
            raise ValueError(f"row {self.name!r}: runs keys must be (method, setting, seed); got {bad[:3]}")

    def seeds(self, method: str, setting: str = "") -> list:
        return sorted(s for m, st, s in self.runs if (m, st) == (method, setting))


def fingerprint(run) -> str:
    """SHA-1 of a run's test logits: equal for two runs that are the same model."""
    z, _ = run.logits("test")
    return hashlib.sha1(np.ascontiguousarray(z).tobytes()).hexdigest()


def _span(seeds) -> str:
    seeds = list(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))


class RunsEvidence(Evidence):
    """Our side of a chapter's claims: its rows of runs (:class:`RowRuns`), ``source`` the
    start of the evidence label (``"cpu"``); resamples ``n_boot``, drawn from ``seed``."""

    side = "ours"

    def __init__(self, rows, source: str, names: Names | None = None, n_boot: int = N_BOOT, seed: int = 0):
        super().__init__(source, names)
        rows = list(rows)
        if not rows or not all(isinstance(r, RowRuns) for r in rows):
            raise ValueError("rows must be a non-empty list of RowRuns")
        names_seen = [r.name for r in rows]
        if len(set(names_seen)) != len(names_seen):
            raise ValueError(f"row names must be unique; got {names_seen}")
        self._rows = {r.name: r for r in rows}
        self.n_boot, self.seed = resampling._count("n_boot", n_boot, 2), resampling._count("seed", seed, 0)
        self._scored, self._prints, self._draws = {}, {}, {}

    # ------------------------------------------------------------------ the interface
    def rows(self) -> list[Row]:
        return [Row(r.name, r.dataset, r.model) for r in self._rows.values()]

    def row(self, name: str) -> RowRuns:
        if name not in self._rows:
            raise ValueError(f"row must be one of {', '.join(self._rows)}; got {name!r}")
        return self._rows[name]

    def draws(self, row: str, quantity) -> Draws | str:
        key = (row, quantity)
        if key not in self._draws:
            self._draws[key] = self._compute(self.row(row), quantity)
        return self._draws[key]

    def identical(self, row: str, a, b) -> str | None:
        if not (isinstance(a, Cell) and isinstance(b, Cell)) or (a.metric, a.post) != (b.metric, b.post):
            return None
        r = self.row(row)
        sa, sb = r.seeds(a.method, a.setting), r.seeds(b.method, b.setting)
        if not sa or sa != sb:
            return None
        ra = [r.runs[(a.method, a.setting, s)] for s in sa]
        rb = [r.runs[(b.method, b.setting, s)] for s in sa]
        if any(x.key == y.key for x, y in zip(ra, rb)):
            return None                                  # one run under two settings: compared on purpose
        if all(self._print(x) == self._print(y) for x, y in zip(ra, rb)):
            na, nb = (self.names.method(c.method) + (f" ({c.setting})" if c.setting else "") for c in (a, b))
            return f"{na} and {nb} have identical test logits ({_span(sa)})"
        return None

    def per_seed(self, row: str):
        r = self.row(row)
        seeds = sorted({s for _, _, s in r.runs})
        if len(seeds) < 2:
            return f"only one seed in {row}"
        out = {}
        for s in seeds:
            one = RowRuns(r.name, r.dataset, r.model, {k: v for k, v in r.runs.items() if k[2] == s},
                          {k: v for k, v in r.temperatures.items() if k[2] == s}, r.t_selected_by, r.ood_settings,
                          {}, {k: v for k, v in r.scored.items() if k[2] == s})
            ev = RunsEvidence([one], self.source, self.names, self.n_boot, self.seed)
            ev._scored, ev._prints = self._scored, self._prints
            out[s] = ev
        return out

    def label(self, used) -> str:
        by_row: dict = {}
        for row, who, seeds in used:
            by_row.setdefault(row, {}).setdefault(tuple(seeds), []).append(who)
        parts = []
        for row, groups in by_row.items():
            inner = "; ".join(f"{_span(s)} of {', '.join(dict.fromkeys(w))}" if s else ", ".join(dict.fromkeys(w))
                              for s, w in groups.items())
            parts.append(f"{row} ({inner})")
        return f"ours: {self.source}" + (f"; {' | '.join(parts)}" if parts else "")

    # ------------------------------------------------------------------ the model
    def _print(self, run) -> str:
        if run.key not in self._prints:
            self._prints[run.key] = fingerprint(run)
        return self._prints[run.key]

    def scored(self, r: RowRuns, method: str, setting: str, seed: int, post: str, selector: str) -> scores.Scored:
        """The run after ``post`` (T of the table, chosen by ``selector``), cached per run."""
        if (method, setting, seed, post) in r.scored:
            return r.scored[(method, setting, seed, post)]
        run = r.runs[(method, setting, seed)]
        key = (run.key, post, selector if post != "none" else "")
        if key not in self._scored:
            T = r.temperatures.get((method, setting, seed, selector))
            self._scored[key] = calibrate(run, post, selector, T)
        return self._scored[key]

    def _compute(self, r: RowRuns, q) -> Draws | str:
        if isinstance(q, Named):
            got = r.named.get(q.key, f"no {q.label(self.names)} in {r.name}")
            return got
        if not isinstance(q, Cell):
            raise ValueError(f"quantity must be a Cell or Named; got {q!r}")
        ood_set = r.ood_settings.get(q.setting, "")
        setting = "" if ood_set else q.setting
        if q.metric == "auroc":
            ood_set = ood_set or DEFAULT_OOD
        seeds = r.seeds(q.method, setting)
        who = self.names.method(q.method) + (f" ({q.setting})" if q.setting else "")
        if not seeds:
            return f"no run of {who} in {r.name}"
        used = ((r.name, who, tuple(seeds)),)
        selector = r.t_selected_by.get(q.metric, "ece") if q.metric != "T" else r.t_selected_by.get("T", "ece")
        if q.metric == "T":
            return self._temperature(r, q, setting, seeds, selector, used)
        scored = [self.scored(r, q.method, setting, s, q.post, selector) for s in seeds]
        if q.metric == "auroc" and any(ood_set not in s.ood for s in scored):
            return f"{who} in {r.name} recorded no out-of-distribution logits of {ood_set}"
        try:
            scores.check_metric(q.metric)
        except ValueError:
            return f"the noise model has no metric {q.metric!r}"
        n = scored[0].n
        w = resampling.weights(n, self.n_boot, self.seed, "test")
        per_seed = np.stack([store.replicated(s, q.metric, w, ood_set) for s in scored])
        reps = resampling.over_seeds(per_seed, self.seed)
        point = float(np.mean([scores.point(s, q.metric, ood_set) for s in scored]))
        b = per_seed.shape[1]
        what = f"the {n:,} test examples" + (" and their out-of-distribution copies" if q.metric == "auroc" else "")
        return Draws(point, reps, noise_text(len(seeds), b, what), used)

    def _temperature(self, r, q, setting, seeds, selector, used) -> Draws:
        if q.post != "ts":
            return "the noise model resamples temperatures of temperature scaling only"
        runs = [r.runs[(q.method, setting, s)] for s in seeds]
        val = [run.logits("val") for run in runs]
        n = len(val[0][1])
        w = resampling.weights(n, self.n_boot, self.seed, "val")[:N_BOOT_SLOW]
        per_seed = np.stack([temperatures.replicated(z, y, w, selector) for z, y in val])
        reps = resampling.over_seeds(per_seed, self.seed)
        point = float(np.mean([self.scored(r, q.method, setting, s, "ts", selector).T for s in seeds]))
        what = f"the {n:,} validation examples, T chosen again by validation {selector.upper()} on each"
        return Draws(point, reps, noise_text(len(seeds), per_seed.shape[1], what), used)


def noise_text(n_seeds: int, n_boot: int, what: str) -> str:
    """How the noise of a number resampled by the model was handled, in words: the
    resamples, the seeds and ``what`` examples were drawn (for a row's ``noise``)."""
    if n_seeds == 1:
        return (f"bootstrap over {what} ({n_boot:,} resamples, the same draws for every method); one seed: "
                f"the training noise is not measured")
    return (f"two-level bootstrap ({n_boot:,} resamples): the {n_seeds} seeds resampled, then {what} "
            f"(the same draws for every method)")


def calibrate(run, post: str, selector: str = "ece", T: float | None = None) -> scores.Scored:
    """``run``'s test (and out-of-distribution) probabilities after ``post``: ``"none"``,
    ``"ts"`` (temperature ``T``, or the grid T chosen by validation ``selector``) or
    ``"fts"`` (focal temperature scaling, ``(gamma_ev, T)`` chosen by validation ECE on the
    grid 0.1..10.0, as the leaderboard does)."""
    z, y = run.logits("test")
    zv, yv = run.logits("val")
    gamma = math.nan
    if post == "none":
        T = 1.0
        lp = _m._log_softmax(np.asarray(z, dtype=np.float64))
        convert = lambda zz: _m._log_softmax(np.asarray(zz, dtype=np.float64))  # noqa: E731
    elif post == "ts":
        T = float(T) if T is not None else temperatures.chosen(zv, yv, selector)
        convert = lambda zz: _m._log_softmax(np.asarray(zz, dtype=np.float64) / T)  # noqa: E731
        lp = convert(z)
    elif post == "fts":
        from ...posthoc.fts import fts_log_probs

        T, gamma = store.focal_temperature(np.asarray(zv, dtype=np.float64), yv, "ece", posthoc.TS_GRID)
        convert = lambda zz: fts_log_probs(np.asarray(zz, dtype=np.float64), T, gamma)  # noqa: E731
        lp = convert(z)
    else:
        raise ValueError(f"post must be one of none, ts, fts; got {post!r}")
    y = np.asarray(y, dtype=np.int64)
    ood = {name: np.exp(convert(run.logits(f"ood:{name}")[0])) for name in run.ood_sets}
    return scores.Scored(np.exp(lp), y, lp[np.arange(len(y)), y], ood, float(T), gamma)
