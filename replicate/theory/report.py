"""What a theory chapter's checks return: the claims, the numbers its prose quotes, the figure data.

A claims builder (e.g. :func:`replicate.theory.focal_loss.claims.report`) runs every check of a
paper once and returns a :class:`TheoryReport`; the chapter glues ``numbers`` into its prose
(:meth:`TheoryReport.glue`), draws its figures from ``data`` and shows ``log.table()``; the
claims registry uses only ``log``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..claims import cache
from ..claims.log import ClaimLog

__all__ = ["TheoryReport", "kept", "plain", "run_checks"]


def plain(x):
    """NumPy scalars (also inside dicts, lists and tuples) as Python numbers, so that
    ``{glue:text}`` prints ``0.25`` rather than ``np.float64(0.25)``."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(plain(v) for v in x)
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x.item()
    return x.item() if isinstance(x, np.generic) else x


@dataclass
class TheoryReport:
    """``log``: the claims; ``numbers``: name -> plain number or string (for glue);
    ``data``: arrays and objects the figures need; ``profile``: the grid sizes used;
    ``sections``: short key -> the chapter heading (for :meth:`show`)."""

    profile: str
    log: ClaimLog
    numbers: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)

    def claim(self, key: str, claim: str, where: str, how: str, result: str, outcome, **kwargs):
        """Add a claims row (:meth:`ClaimLog.add`) and record its verdict as number ``v_<key>``,
        so that the prose can glue the verdict it states. Returns the outcome."""
        o = self.log.add(claim, where, how, result, outcome, **kwargs)
        self.put(**{f"v_{key}": o.verdict})
        return o

    def show(self, section: str | None = None):
        """The claims table (all rows, or those of ``section``: a key of ``sections`` or a
        heading), styled for a notebook: HTML-escaped, no index."""
        table = self.log.table()
        if section is not None:
            heading = self.sections.get(section, section)
            rows = [r["section"] == heading for r in self.log.rows]
            if not any(rows):
                raise ValueError(f"section must be one of {', '.join(self.sections) or 'the headings'}; "
                                 f"got {section!r}")
            table = table[rows]
        return table.style.format(escape="html").hide(axis="index")

    def put(self, **numbers) -> None:
        """Record numbers for the prose (converted with :func:`plain`); a name is set once."""
        for k, v in numbers.items():
            if k in self.numbers:
                raise ValueError(f"number {k!r} is already set")
            v = plain(v)
            if not isinstance(v, (bool, int, float, str)):
                raise ValueError(f"number {k!r} must be a scalar or a string; got {type(v).__name__}")
            self.numbers[k] = v

    def glue(self) -> None:
        """``myst_nb.glue(name, value, display=False)`` for every number, ``summary`` (the
        verdict counts, e.g. "20 claims: 15 holds, 2 fails") and ``profile``."""
        from myst_nb import glue

        for k, v in {**self.numbers, "summary": self.log.summary(), "profile": self.profile}.items():
            glue(k, v, display=False)


def run_checks(paper: str, chapter: str, profile: str, sizes: dict, sections: dict, steps) -> TheoryReport:
    """A theory chapter's :class:`TheoryReport`: refuse a ``profile`` that ``sizes`` (profile
    name -> grid sizes) does not know, before any check runs; then run every ``(section key,
    step)`` of ``steps`` in chapter order, each ``step(report, sizes[profile])`` adding its
    claims under the heading ``sections[key]`` of ``paper``'s claims log ``chapter``. Computed
    once per profile and code (:mod:`replicate.claims.cache`): the chapter, ``replicate
    claims`` and the claims ledger share it."""
    if profile not in sizes:
        raise ValueError(f"profile must be one of {', '.join(sizes)}; got {profile!r}")

    def build() -> TheoryReport:
        rep = TheoryReport(profile, ClaimLog(paper, chapter, kind="theory"), sections=dict(sections))
        for section, step in steps:
            rep.log.at(sections[section])
            step(rep, sizes[profile])
        return rep
    return kept(chapter, profile, build)


def kept(chapter: str, profile: str, build) -> TheoryReport:
    """``build()``, a theory chapter's report at ``profile``, computed once per profile and
    code and kept on disk (:mod:`replicate.claims.cache`)."""
    return cache.kept(cache.folder() / f"{chapter}-{profile}-{cache.name(chapter, profile)[:16]}" / "report.pkl",
                      build)
