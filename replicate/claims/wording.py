"""The papers' vague words made decidable, once for the whole book.

Every experiment chapter reads its claims' words through these definitions, so that one
concept has one threshold everywhere, fixed from the wording of the claims before any
number is seen:

- "the optimal temperature is (close to / about / near) 1": ``|T - 1| <=``
  :data:`T_TOLERANCE`, from Mukhoti et al. (2020, Sec. 6): the temperatures of their focal
  models are "mostly lying between 0.9 and 1.1"; on our runs the interval of T must lie in
  :data:`T_NEAR_ONE` (:class:`replicate.claims.tests.Within`);
- "the optimal temperature is 1" (Tao et al. 2023: "all optimal temperatures of DFL are 1"):
  the grid value 1.0, i.e. ``|T - 1| <`` :data:`T_IS_ONE_TOLERANCE`, half the step of the
  papers' grid 0.1, 0.2, ..., 10.0 (a T "below 1" is a grid value below 1.0);
- "in k of N cases", "in most cases", "in every case" / "consistently" over rows: at least
  :func:`needed` rows, decided by :func:`replicate.claims.decide.tally` ("most" is more
  than half, "almost all" at least :data:`ALMOST_ALL`);
- "detects out-of-distribution inputs": an OOD-detection claim is about models that tell
  OOD inputs from in-distribution ones, which the usual reading of an AUROC calls
  "acceptable discrimination" from :data:`DETECTS_AUROC` (70 %) up (0.5 is no discrimination;
  Hosmer, Lemeshow and Sturdivant, *Applied Logistic Regression*, 3rd ed., Sec. 5.2.4). When
  the 95 % interval of every compared model's AUROC lies below it (they detect at or near
  chance), the models are not in the regime the claim speaks of, and the claim is ``not
  tested`` with that reason (:class:`replicate.claims.tests.Given`).
"""
from __future__ import annotations

import math

#: "close to 1" for an optimal temperature: |T - 1| <= 0.1 (Mukhoti et al. 2020, Sec. 6:
#: "mostly lying between 0.9 and 1.1").
T_TOLERANCE = 0.1
T_NEAR_ONE = (1 - T_TOLERANCE, 1 + T_TOLERANCE)
#: "the optimal T is 1": the grid value 1.0, |T - 1| < 0.05 (half the grid step 0.1).
T_IS_ONE_TOLERANCE = 0.05
T_IS_ONE = (1 - T_IS_ONE_TOLERANCE, 1 + T_IS_ONE_TOLERANCE)
#: "almost all": at least this share of the rows.
ALMOST_ALL = 0.8
#: An AUROC (%) of a detector no better than chance.
CHANCE_AUROC = 50.0
#: The AUROC (%) from which a detector discriminates acceptably (Hosmer & Lemeshow).
DETECTS_AUROC = 70.0
QUANTIFIERS = ("every", "most", "almost all", "any")


def needed(quantifier, n: int) -> int:
    """How many of ``n`` rows a quantifier needs: ``"every"`` all, ``"most"`` more than
    half, ``"almost all"`` at least :data:`ALMOST_ALL` of them, ``"any"`` one, a share
    ``p`` in (0, 1] at least ``p n`` (the paper's "9 of 11": ``9 / 11``)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1; got {n!r}")
    if quantifier == "every":
        return n
    if quantifier == "most":
        return n // 2 + 1
    if quantifier == "almost all":
        return max(1, math.ceil(ALMOST_ALL * n - 1e-9))
    if quantifier == "any":
        return 1
    if not isinstance(quantifier, bool) and isinstance(quantifier, (int, float)) and 0 < quantifier <= 1:
        return max(1, math.ceil(quantifier * n - 1e-9))
    raise ValueError(f"quantifier must be one of {', '.join(QUANTIFIERS)} or a share in (0, 1]; got {quantifier!r}")


def near_one_text() -> str:
    """The rule in words, for a claim row's "how" text and the chapters' prose."""
    return f"|T − 1| <= {T_TOLERANCE:g} (T in [{T_NEAR_ONE[0]:g}, {T_NEAR_ONE[1]:g}])"


def is_one_text() -> str:
    """The rule of "the optimal T is 1" in words."""
    return f"|T − 1| < {T_IS_ONE_TOLERANCE:g} (the grid value 1.0)"



def quantifier_text(quantifier, what: str = "rows", n: int | None = None) -> str:
    """How many of the ``n`` ``what`` a quantifier of :func:`needed` asks for, in words:
    ``"all 11 rows"``, ``"more than half of the rows"``, ``"at least 9/11 of the 11 rows"``."""
    from fractions import Fraction

    needed(quantifier, 1)
    of = f"of the {n} {what}" if n else f"of the {what}"
    if quantifier == "every":
        return f"all {n} {what}" if n else f"all the {what}"
    if quantifier == "most":
        return f"more than half {of}"
    if quantifier == "almost all":
        return f"at least {ALMOST_ALL:.0%} {of}"
    if quantifier == "any":
        return f"at least one {of}"
    share = Fraction(quantifier).limit_denominator(20)
    return f"at least {share.numerator}/{share.denominator} {of}"
