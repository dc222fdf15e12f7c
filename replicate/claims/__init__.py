"""Claims: the verdict vocabulary, each chapter's claims log, and the one registry.

- :mod:`.vocabulary` -- the verdicts (:data:`VERDICTS`, :data:`MEANINGS`) and the
  constructors that compute them from checks (``check``, ``conditional``, ``corrected``,
  ``readings``, ``beyond``, ``inconclusive``, ``untested``);
- :mod:`.log` -- :class:`ClaimLog`, the rows of one chapter's claims table;
- :mod:`.registry` -- :data:`SOURCES` and :func:`collect`: every claim of the book, read
  by ``replicate claims``, the claims ledger and the tests;
- :mod:`.tallies` -- the verdicts counted for a chapter's prose: :func:`tally_text` and
  :func:`verdict_counts` (its glue keys).

``counts`` here is :func:`replicate.claims.vocabulary.counts` (``{verdict: count}``), not
the module :mod:`replicate.claims.tallies`: import that module's names from it.
"""
from . import ledger
from .tallies import tally_text, verdict_counts
from .log import COLUMNS, DISPLAY, KINDS, ClaimLog, counts_frame
from .registry import SOURCES, Source, build, collect, larger_profiles, sources
from .vocabulary import (BEYOND_THE_PAPER, DEPENDS_ON_READING, FAILS, HOLDS, HOLDS_WITH_CONDITIONS, INCONCLUSIVE,
                         MEANINGS, MISPRINTED, NOT_TESTED, VERDICTS, Outcome, as_outcome, beyond, check,
                         conditional, corrected, counts, inconclusive, readings, untested)

__all__ = ["VERDICTS", "MEANINGS", "HOLDS", "HOLDS_WITH_CONDITIONS", "FAILS", "MISPRINTED", "DEPENDS_ON_READING",
           "BEYOND_THE_PAPER", "NOT_TESTED", "INCONCLUSIVE", "Outcome", "check", "conditional", "corrected", "readings",
           "beyond", "inconclusive", "untested", "as_outcome", "counts", "ClaimLog", "COLUMNS", "DISPLAY", "KINDS", "counts_frame", "Source",
           "SOURCES", "sources", "build", "collect", "larger_profiles", "tally_text", "verdict_counts"]
