"""What a claim test reads, on either side: the interface both sides implement.

A claim test (:mod:`replicate.claims.tests`) names *quantities*: a :class:`Cell` of a
table (a method's metric, before or after post-hoc calibration, in a table setting) or a
:class:`Named` number a chapter defines (a bin's final gamma, a boundary length). An
:class:`Evidence` holds one side's numbers over *rows* (a data set and network, as the
papers' tables are laid out) and answers, for a row and a quantity, its :class:`Draws`:
the point value and, where the side has noise, its joint resamples.

- The paper's printed cells are :class:`Exact` evidence: a point and no resamples, so a
  test's interval is the point itself and the same rule decides them by plain comparison.
- Our runs are :class:`replicate.comparison.noise.RunsEvidence`: every cell's resamples come from one
  noise model (seeds, then test examples, the same draws for every method), so any
  statistic of several cells (a difference, a rank) has an interval that holds both.

Both sides say which rows and seeds a test used (:meth:`Evidence.label`), and our side
says when two quantities are the same model (:meth:`Evidence.identical`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Post-hoc settings of a cell: none, temperature scaling, focal temperature scaling.
POSTS = ("none", "ts", "fts")
POST_WORDS = {"none": "pre-T", "ts": "post-T", "fts": "after FTS"}
#: What the paper's side says about its noise.
PRINTED = "printed numbers: no noise model (the interval is the number itself)"


@dataclass(frozen=True)
class Cell:
    """One number of a table: ``metric`` of ``method`` after post-hoc ``post`` (``"none"``,
    ``"ts"``, ``"fts"``) in the table ``setting`` (``""``, or e.g. ``"bins=10"``,
    ``"ood=SVHN"``). ``metric="T"`` is the temperature chosen on the validation set."""

    method: str
    metric: str = "ece"
    post: str = "none"
    setting: str = ""

    def __post_init__(self):
        if not isinstance(self.method, str) or not self.method:
            raise ValueError(f"method must be a non-empty string; got {self.method!r}")
        if not isinstance(self.metric, str) or not self.metric:
            raise ValueError(f"metric must be a non-empty string; got {self.metric!r}")
        if self.post not in POSTS:
            raise ValueError(f"post must be one of {', '.join(POSTS)}; got {self.post!r}")
        if self.metric == "T" and self.post == "none":
            raise ValueError("metric 'T' (the chosen temperature) needs post 'ts' or 'fts'")

    def label(self, names: "Names") -> str:
        what = "T" if self.metric == "T" else f"{names.metric(self.metric)} {POST_WORDS[self.post]}"
        return f"{names.method(self.method)} {what}" + (f" ({self.setting})" if self.setting else "")


@dataclass(frozen=True)
class Named:
    """A number a chapter defines outside the tables (``key``, shown as ``label``): its
    evidence provides it (or says why it has none)."""

    key: str
    label_text: str = ""

    def label(self, names: "Names") -> str:
        return self.label_text or self.key


@dataclass(frozen=True)
class Draws:
    """A quantity on one side: ``point`` (on all the data), ``reps`` (its joint resamples,
    shape ``(B,)``; None: it carries no noise), ``noise`` (how its noise is handled, or why
    it has none) and ``used`` (``(row, who, seeds)`` triples: what it rests on)."""

    point: float
    reps: np.ndarray | None = None
    noise: str = ""
    used: tuple = ()


@dataclass(frozen=True)
class Row:
    """A row of one side: ``name`` as shown, and its ``dataset`` and ``model`` keys (what a
    claim's row selector reads)."""

    name: str
    dataset: str = ""
    model: str = ""


@dataclass
class Names:
    """Display names of method and metric keys (a key without one is shown as itself)."""

    methods: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)

    def method(self, key: str) -> str:
        return self.methods.get(key, key)

    def metric(self, key: str) -> str:
        return self.metrics.get(key, key)


class Evidence:
    """One side of a claim (``side`` "ours" or "paper") over its rows; ``source`` begins its
    evidence label (``"ours: cpu"``, ``"paper: Mukhoti et al. (2020), Tables 1-2"``).
    Subclasses implement :meth:`rows` and :meth:`draws`; results of a test on the
    evidence may be remembered with :meth:`memo` (claims that share a comparison compute it
    once)."""

    side = "ours"

    def __init__(self, source: str, names: Names | None = None):
        if not isinstance(source, str) or not source:
            raise ValueError("source must be a non-empty label of the evidence")
        self.source, self.names, self._memo = source, names or Names(), {}

    def rows(self) -> list[Row]:
        raise NotImplementedError

    def draws(self, row: str, quantity) -> Draws | str:
        """The :class:`Draws` of ``quantity`` in ``row``, or a string: why it has none."""
        raise NotImplementedError

    def identical(self, row: str, a, b) -> str | None:
        """Why ``a`` and ``b`` are the same model in ``row`` (their runs' test logits are
        identical at every seed), or None. Printed numbers never are."""
        return None

    def per_seed(self, row: str):
        """``{seed: Evidence}``, the row's runs one seed at a time, or why there are none."""
        return "no per-run numbers on this side"

    def memo(self, key, compute):
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def label(self, used) -> str:
        """The evidence label of a claim row: the source and the rows (and seeds) used."""
        rows = list(dict.fromkeys(r for r, _, _ in used))
        return f"{self.side}: {self.source}" + (f"; rows: {'; '.join(rows)}" if rows else "")


class Missing:
    """A side with no evidence (its runs are not in the store): every claim is ``not
    tested`` there with ``reason``."""

    def __init__(self, side: str, source: str, reason: str):
        if not reason:
            raise ValueError("reason must say why the side has no evidence")
        self.side, self.source, self.reason = side, source, reason

    def label(self, used=()) -> str:
        return f"{self.side}: {self.source}"


#: The columns of the long frame :class:`Exact` reads.
EXACT_COLUMNS = ("row", "method", "metric", "post", "setting", "value")


class Exact(Evidence):
    """The paper's printed numbers as evidence without noise: a long frame with columns
    :data:`EXACT_COLUMNS` (and optionally ``dataset``, ``model`` for row selectors),
    ``named`` values ``{(row, key): number}`` for :class:`Named` quantities, and ``absent``
    ``{key or metric: reason}``: why a quantity the paper does not print is missing (e.g. a
    figure-only number)."""

    side = "paper"

    def __init__(self, frame, source: str, names: Names | None = None, named: dict | None = None,
                 absent: dict | None = None):
        super().__init__(source, names)
        missing = [c for c in EXACT_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"frame must have the columns {', '.join(EXACT_COLUMNS)}; missing {', '.join(missing)}")
        frame = frame[np.isfinite(frame["value"].astype(float))]
        self._values = {(r.row, r.method, r.metric, r.post, r.setting): float(r.value)
                        for r in frame.itertuples(index=False)}
        meta = {}
        for r in frame.itertuples(index=False):
            meta.setdefault(r.row, Row(r.row, getattr(r, "dataset", ""), getattr(r, "model", "")))
        for row, _ in (named or {}):
            meta.setdefault(row, Row(row))
        self._rows = list(meta.values())
        self._named = dict(named or {})
        self._absent = dict(absent or {})

    def rows(self) -> list[Row]:
        return list(self._rows)

    def draws(self, row: str, quantity) -> Draws | str:
        if isinstance(quantity, Named):
            if (row, quantity.key) in self._named:
                return Draws(self._named[(row, quantity.key)], None, PRINTED, ((row, "paper", ()),))
            return self._absent.get(quantity.key, f"the paper prints no {quantity.label(self.names)} for {row}")
        if not isinstance(quantity, Cell):
            raise ValueError(f"quantity must be a Cell or Named; got {quantity!r}")
        key = (row, quantity.method, quantity.metric, quantity.post, quantity.setting)
        if key in self._values and math.isfinite(self._values[key]):
            return Draws(self._values[key], None, PRINTED, ((row, "paper", ()),))
        for what in (quantity.metric, quantity.method, quantity.setting):
            if what in self._absent:
                return self._absent[what]
        return f"the paper prints no {quantity.label(self.names)} for {row}"


def combine(ev, row: str, quantities, fn):
    """``fn`` of the quantities' draws in ``row``: ``(point, reps, noise, used)``, or the
    reason a quantity is missing (a string). ``fn`` must work on numbers and on arrays of
    resamples (a noise-free quantity enters an array as its point, repeated)."""
    got = []
    for q in quantities:
        d = ev.draws(row, q)
        if isinstance(d, str):
            return d
        got.append(d)
    point = float(fn(*[d.point for d in got]))
    live = [d.reps for d in got if d.reps is not None]
    reps = None
    if live:
        b = min(len(r) for r in live)
        reps = np.asarray(fn(*[d.reps[:b] if d.reps is not None else np.full(b, d.point) for d in got]), dtype=float)
    noise = "; ".join(dict.fromkeys(d.noise for d in got if d.noise))
    return point, reps, noise, tuple(dict.fromkeys(u for d in got for u in d.used))
