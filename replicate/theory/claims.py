"""The claims table every theory chapter shows: claim, where in the paper, how it was checked,
the result, and a verdict computed from the check (never typed)."""
from __future__ import annotations

COLUMNS = ["claim", "where", "how", "result", "verdict"]


class ClaimLog:
    """Rows of a chapter's claims table; the verdict is computed from a check, never typed.

    ``add(claim, where, how, result, ok, bad="fails")`` appends a row whose verdict is
    ``"holds"`` when ``ok`` is true and ``bad`` (e.g. ``"fails"``, ``"misprinted"``,
    ``"differs"``) otherwise; ``table()`` returns a pandas DataFrame.
    """

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, claim: str, where: str, how: str, result: str, ok, bad: str = "fails") -> None:
        self.rows.append(dict(claim=claim, where=where, how=how, result=result,
                              verdict="holds" if bool(ok) else bad))

    def table(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=COLUMNS)
