"""A chapter's report: everything it computes from (plan, runs), computed once and cached.

Each experiment chapter has one report (``replicate.experiments.<chapter>.report``), built
from its plan and runs: the evaluation of every run, the tables beside the paper's, the
evidence of both sides and the claims' verdicts. The notebook's views and figures read it,
and so does the claims registry (``replicate claims``, the ledger page), so that ``make
book`` and ``replicate claims`` compute each chapter's evidence once and share it.

:class:`Report` keeps each section on disk (:mod:`replicate.claims.cache`) keyed by the
chapter, the profile, the keys of the runs it read and the package's code: new runs or
changed code build it anew, anything else reads it back; each section is computed only when
first read. :func:`with_store_seeds` widens a chapter's runs to every seed
the store holds of the same configurations (a verdict may use seeds the chapter does not
show), and :func:`row` turns them into a row of :class:`replicate.comparison.noise.RunsEvidence`.
"""
from __future__ import annotations

import hashlib
from pathlib import Path



class Report:
    """A chapter's report: named sections, each computed once from the chapter's plan and
    runs and kept on disk. ``sections`` maps a name to ``build(report)`` (a section may read
    others: ``report["evaluation"]``); ``report[name]`` computes it the first time and reads
    it back after, in this process or any later one, as long as the chapter, the profile,
    the run ``keys``, ``extra`` (the chapter's options, as text) and the package's code are
    the same (:func:`replicate.claims.cache.code_version`). The claims registry reads only the
    sections its claims need; the notebook reads all. ``REPLICATE_REPORT_CACHE=0`` keeps
    nothing on disk."""

    def __init__(self, chapter: str, profile: str, keys, sections: dict, extra: str = ""):
        if not sections or not all(callable(f) for f in sections.values()):
            raise ValueError("sections must be a non-empty dict name -> build(report)")
        self.chapter, self.profile, self.keys = chapter, profile, tuple(sorted(keys))
        self.sections, self.extra, self._got = dict(sections), extra, {}
        self.folder = _path(chapter, profile, self.keys, extra)

    def __getitem__(self, name: str):
        if name not in self.sections:
            raise KeyError(f"report of {self.chapter} has no section {name!r}; sections: {', '.join(self.sections)}")
        if name not in self._got:
            self._got[name] = _cached(self.folder / f"{name}.pkl", lambda: self.sections[name](self))
        return self._got[name]

    def __contains__(self, name: str) -> bool:
        return name in self.sections

    @property
    def claims(self):
        """The chapter's claims table (:class:`replicate.claims.ClaimLog`), section ``claims``."""
        return self["claims"]


def _path(chapter: str, profile: str, keys, extra: str) -> Path:
    from ..claims import cache

    h = hashlib.sha256("\n".join([chapter, profile, cache.code_version(), extra, *sorted(keys)]).encode()).hexdigest()
    return cache.folder() / f"{chapter}-{profile}-{h[:16]}"


def _cached(path: Path, build):
    from ..claims import cache

    return cache.kept(path, build)


def with_store_seeds(runs: dict, cfgs: dict) -> dict:
    """``runs`` (``{(method, seed): Run}`` of a chapter's group, planned as ``cfgs``) with
    every other seed the stores hold of the same configurations
    (:func:`replicate.runs.seeds_in_store`): the evidence a verdict may use, whatever seeds
    the chapter shows."""
    from ..runs import seeds_in_store

    out = dict(runs)
    done = set()
    for (method, _), cfg in cfgs.items():
        if method in done:
            continue
        done.add(method)
        for seed, run in seeds_in_store(cfg).items():
            out.setdefault((method, seed), run)
    return out


def keys_of(*groups) -> tuple:
    """The run keys of ``{(method, seed): Run}`` mappings (or nested ``{group: ...}``)."""
    out = []
    for g in groups:
        for v in g.values():
            if isinstance(v, dict):
                out += keys_of(v)
            elif v is not None:
                out.append(v.key)
    return tuple(sorted(set(out)))


def names():
    """Display names of every method key (the catalogue's short labels) and metric (the
    tables' names): what claim texts and evidence labels show."""
    from ..claims.evidence import Names
    from . import METRIC_NAMES
    from .methods import METHODS

    metrics = {k: v.split(" (")[0] for k, v in METRIC_NAMES.items()}
    metrics.update({"auroc": "AUROC", "accuracy": "accuracy", "T": "T"})
    return Names({"adafocal": "AdaFocal", **{k: m.short for k, m in METHODS.items()}}, metrics)


def row(runs: dict, name: str | None = None, setting: str = "", **kw):
    """A :class:`replicate.comparison.noise.RowRuns` of ``{(method, seed): Run}`` (one data set and
    network; ``setting`` the table setting of all of them), named "dataset, model" unless
    ``name`` is given; keywords go to :class:`~replicate.comparison.noise.RowRuns`."""
    from .noise import RowRuns

    if not runs:
        raise ValueError("runs must be a non-empty dict (method, seed) -> Run")
    first = next(iter(runs.values()))
    ds, model = first.resolved["dataset"], first.resolved["model"]
    return RowRuns(name or f"{ds}, {model}", ds, model, {(m, setting, s): r for (m, s), r in runs.items()}, **kw)


def temperatures(frame, setting: str = "") -> dict:
    """``{(method, setting, seed, selector): T}`` of the temperature-scaled rows of an
    evaluation frame (:func:`replicate.comparison.evaluate_runs`): the T its post-T cells
    used, for :class:`replicate.comparison.noise.RowRuns`."""
    rows = frame[frame.temperature_scaled.astype(bool)]
    return {(r.method, setting, int(r.seed), r.T_selected_by): float(r.T) for r in rows.itertuples(index=False)}


def paper_evidence(long, source: str, named: dict | None = None, absent: dict | None = None):
    """A paper's printed cells (the long form of :func:`replicate.comparison.layouts.paper_rows`
    or :func:`~replicate.comparison.layouts.paper_long`) as :class:`replicate.claims.evidence.Exact`
    evidence, ``source`` its label ("Mukhoti et al. (2020), Tables 1-13, every row"). Each
    post-T cell's printed temperature becomes the cell ``T`` (post ``ts``) of its method,
    read from the ECE table where a method prints several."""
    import math

    import pandas as pd

    from ..claims.evidence import Exact

    f = long.assign(post=["ts" if s else "none" for s in long.temperature_scaled.astype(bool)])
    cells = f.rename(columns={"mean": "value", "dataset_key": "dataset", "model_key": "model"})
    cells = cells[["row", "dataset", "model", "method", "metric", "post", "setting", "value"]]
    temps = f[f.temperature_scaled.astype(bool) & f["T"].notna()].copy()
    temps["first"] = temps.metric != "ece"                        # the ECE table's T first
    temps = temps.sort_values("first", kind="stable").drop_duplicates(["row", "method", "setting"])
    temps = temps.assign(metric="T", post="ts", value=temps["T"]).rename(
        columns={"dataset_key": "dataset", "model_key": "model"})[list(cells.columns)]
    frame = pd.concat([cells, temps], ignore_index=True)
    frame = frame[[isinstance(v, (int, float)) and math.isfinite(v) for v in frame.value]]
    frame = frame.drop_duplicates(["row", "method", "metric", "post", "setting"])
    return Exact(frame, source, names(), named, absent)


def runs_evidence(p, runs: dict, groups=("image", "text"), frames: dict | None = None, every_seed: bool = True,
                  t_selected_by: dict | None = None, names_=None, **kw):
    """Our side of a chapter's claims: one row of :class:`replicate.comparison.noise.RunsEvidence` per
    group of ``groups`` that ``runs`` holds (``{group: {(method, seed): Run}}``), widened to
    every seed in the store (``every_seed``, :func:`with_store_seeds`), the post-T cells at the
    temperatures of ``frames[group]`` (the chapter's evaluation, where it has them) and
    selected per metric as ``t_selected_by`` says (default the tables' own,
    :data:`replicate.comparison.T_SELECTED_BY`). None when no group has runs."""
    from .noise import RunsEvidence
    from . import T_SELECTED_BY

    rows, profiles = [], []
    for g in groups:
        got = (runs or {}).get(g)
        if not got:
            continue
        profiles.append(p.profile_of(g))
        wide = with_store_seeds(got, p.group(g)) if every_seed else dict(got)
        temps = temperatures(frames[g]) if frames and g in frames else {}
        rows.append(row(wide, temperatures=temps, t_selected_by=dict(t_selected_by or T_SELECTED_BY)))
    if not rows:
        return None
    if len(set(profiles)) > 1:
        raise ValueError(f"groups {groups} are planned at profiles {sorted(set(profiles))}: one side per profile "
                         f"(runs_sides)")
    return RunsEvidence(rows, profiles[0], names_ or names(), **kw)


def runs_sides(p, runs: dict, groups=("image", "text"), frames: dict | None = None, **kw) -> list:
    """Our side of a chapter's claims, one :func:`runs_evidence` per profile the plan's groups
    are at (:meth:`replicate.comparison.Plan.profile_of`), in the order of ``groups``: one side
    normally; two when the image rows are at ``gpu`` and the text rows at ``cpu``, so that
    every verdict rests on runs of one profile and its evidence label names it. Empty when no
    group has runs."""
    by_profile: dict = {}
    for g in groups:
        if (runs or {}).get(g):
            by_profile.setdefault(p.profile_of(g), []).append(g)
    out = []
    for gs in by_profile.values():
        ev = runs_evidence(p, runs, tuple(gs), frames, **kw)
        if ev is not None:
            out.append(ev)
    return out


def table_intervals(ev, methods, metrics, posts=("none", "ts"), row_name: str | None = None) -> dict:
    """``{metric: {(method, post-T): {"mean", "low", "high", "how"}}}``: the 95 % interval of
    each of our table cells under the noise model (what :func:`replicate.comparison.styled_table`
    shows on hover), from ``ev`` (a :class:`replicate.comparison.noise.RunsEvidence` of the runs the
    table shows)."""
    import numpy as np

    from ..claims.evidence import Cell

    name = row_name or ev.rows()[0].name
    out = {}
    for m in metrics:
        cells = {}
        for post in posts:
            for key in methods:
                d = ev.draws(name, Cell(key, m, post))
                if isinstance(d, str):
                    continue
                lo, hi = (np.quantile(d.reps, [0.025, 0.975]) if d.reps is not None else (d.point, d.point))
                cells[(key, post != "none")] = {"mean": d.point, "low": float(lo), "high": float(hi),
                                                "how": "95 % interval: " + d.noise}
        out[m] = cells
    return out
