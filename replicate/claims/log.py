"""The rows of one chapter's claims table, with verdicts from :mod:`.vocabulary`.

Every chapter (theory or experiment) builds its claims through a package function that
fills a :class:`ClaimLog`; the chapter shows :meth:`ClaimLog.table`, and the registry
(:mod:`.registry`) collects the same rows for ``replicate claims`` and the claims ledger.

    log = ClaimLog("mukhoti2020", "theory_focal_loss", section="Proposition 2")
    log.add("gamma* solves g(p0, gamma*) = 1", "Prop. 2", "Lambert W vs root finder",
            f"max error {err:.1e}", err < 1e-10)
"""
from __future__ import annotations

from .vocabulary import VERDICTS, Outcome, as_outcome, counts

KINDS = ("theory", "experiment")
#: Every column of a row (what ``replicate claims --format json`` prints).
COLUMNS = ["paper", "kind", "chapter", "section", "claim", "where", "evidence", "how", "result", "noise", "verdict",
           "note", "check"]
#: The columns a chapter shows.
DISPLAY = ["claim", "where", "evidence", "how", "result", "noise", "verdict", "note"]


def _text(name: str, value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string; got {value!r}")
    return value


class ClaimLog:
    """Claims of one ``paper`` shown in ``chapter`` (the notebook's name), of ``kind``
    "theory" or "experiment". ``section`` is the heading of the chapter that decides the
    claims added next (change it with :meth:`at` or per row)."""

    def __init__(self, paper: str, chapter: str, kind: str = "theory", section: str = ""):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
        self.paper, self.chapter, self.kind = _text("paper", paper), _text("chapter", chapter), kind
        self.section = _text("section", section)
        self.rows: list[dict] = []

    def at(self, section: str) -> "ClaimLog":
        """Set the chapter heading that decides the claims added next; returns the log."""
        self.section = _text("section", section)
        return self

    def add(self, claim: str, where: str, how: str, result: str, outcome, *, evidence: str = "",
            section: str | None = None, noise: str = "") -> Outcome:
        """Append a row. ``outcome`` is an :class:`Outcome` from a vocabulary constructor
        (``check``, ``conditional``, ``corrected``, ``readings``, ``beyond``, ``untested``),
        or a boolean (``check``), or None (not tested). ``noise`` says how the noise of the
        numbers behind the verdict was handled (their interval and the seeds and examples
        behind it, or why they have none). Returns the outcome."""
        o = as_outcome(outcome)
        for name, v in (("claim", claim), ("where", where), ("how", how), ("result", result),
                        ("evidence", evidence), ("noise", noise)):
            _text(name, v)
        self.rows.append({"paper": self.paper, "kind": self.kind, "chapter": self.chapter,
                          "section": self.section if section is None else _text("section", section),
                          "claim": claim, "where": where, "evidence": evidence, "how": how, "result": result,
                          "noise": noise, "verdict": o.verdict, "note": o.note, "check": o.check})
        return o

    def extend(self, other: "ClaimLog") -> "ClaimLog":
        """Append the rows of another log (same paper and chapter); returns this log."""
        if (other.paper, other.chapter) != (self.paper, self.chapter):
            raise ValueError(f"cannot merge claims of {other.paper}/{other.chapter} into "
                             f"{self.paper}/{self.chapter}")
        self.rows.extend(dict(r) for r in other.rows)
        return self

    def frame(self):
        """Every column (:data:`COLUMNS`) as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=COLUMNS)

    def table(self):
        """The columns a chapter shows (:data:`DISPLAY`); ``evidence`` and ``noise`` are
        dropped when no row has any (theory checks)."""
        frame = self.frame()[DISPLAY]
        for col in ("evidence", "noise"):
            if not frame[col].astype(bool).any():
                frame = frame.drop(columns=col)
        return frame

    def counts(self) -> dict:
        """``{verdict: count}`` in the order of :data:`VERDICTS`."""
        return counts(r["verdict"] for r in self.rows)

    def summary(self) -> str:
        """"12 claims: 8 holds, 2 fails, ..." (verdicts with a zero count left out)."""
        c = self.counts()
        parts = [f"{n} {v}" for v, n in c.items() if n]
        return f"{len(self.rows)} claim{'s' if len(self.rows) != 1 else ''}" + (": " + ", ".join(parts) if parts
                                                                                else "")

    def __len__(self) -> int:
        return len(self.rows)


def counts_frame(frame, by: str | None = None):
    """Verdict counts of a claims frame: one row (``by`` None) or one row per value of
    ``by`` (e.g. "paper"), a column per verdict in :data:`VERDICTS` order plus ``total``."""
    import pandas as pd

    if by is None:
        out = pd.DataFrame([counts(frame["verdict"])])
    else:
        out = pd.DataFrame({k: counts(g["verdict"]) for k, g in frame.groupby(by, sort=False)}).T
        out.index.name = by
    out = out[list(VERDICTS)]
    out["total"] = out.sum(axis=1)
    return out
