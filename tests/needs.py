"""What some tests need beyond the package: the papers' texts and the oracle libraries.

A test that re-reads a paper's table from its text needs the text (:func:`paper_text`:
:func:`replicate.paper_tables.papers_dir`, ``$REPLICATE_PAPERS``, else ``<data_dir>/papers``;
without the setting, then :data:`BESIDE`, the project's shared folder beside the checkout, which
the package itself never names); a test that compares with an independent
library (an *oracle*: netcal, torch-uncertainty, torchmetrics, ...) needs that library, which
comes with the ``test`` extra. Without them such a test is skipped with the reason, so that
the suite runs anywhere; with ``REPLICATE_STRICT_TESTS=1`` (set by ``.ci/run``) it *fails*
instead, so that CI never passes by skipping what it should check.

An oracle is imported by the test that uses it, never at module level: ``oracle(module,
distribution)`` returns a stand-in whose first attribute access imports the module (or skips
or fails the test), so the hand-computed tests of the same file run without it.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

STRICT_ENV = "REPLICATE_STRICT_TESTS"
#: The last place :func:`paper_text` looks, when ``$REPLICATE_PAPERS`` is not set.
BESIDE = (Path(__file__).resolve().parents[2] / "shared" / "papers").resolve()


def strict() -> bool:
    """True when a missing text or oracle must fail the test (``REPLICATE_STRICT_TESTS`` set, not 0)."""
    return os.environ.get(STRICT_ENV, "").strip() not in ("", "0")


def missing(reason: str):
    """Skip the calling test with ``reason``, or fail it under :func:`strict`."""
    if strict():
        pytest.fail(f"{reason} ({STRICT_ENV} is set: a missing requirement fails)", pytrace=False)
    pytest.skip(reason)


def paper_text(paper: str) -> list[str]:
    """The lines of ``paper``'s text (a paper key, ``mukhoti2020``), or skip/fail naming where it was looked for."""
    from replicate import paper_tables as pt

    lines = pt.source_lines(paper)
    dirs = pt.papers_dirs() + ([] if os.environ.get(pt.PAPERS_ENV) else [BESIDE])
    if lines is None and len(dirs) > 1 and pt.source_path(paper, BESIDE).is_file():
        lines = pt.source_path(paper, BESIDE).read_text(encoding="utf-8").splitlines()
    if lines is None:
        looked = ", ".join(str(d) for d in dirs)
        missing(f"{pt.paper_info(paper)['source_file']} not found in {looked} "
                f"(set {pt.PAPERS_ENV} to the folder holding the papers' texts)")
    return lines


def need(module: str, distribution: str):
    """``module`` imported, or skip/fail naming the distribution that brings it (the ``test`` extra)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        missing(f"{module} is not importable ({err}): install {distribution} (the test extra)")


class oracle:
    """A module imported on first use inside a test (:func:`need`): ``tm = oracle("torchmetrics", "torchmetrics")``."""

    def __init__(self, module: str, distribution: str):
        self._module, self._distribution = module, distribution

    def __getattr__(self, name):
        if name.startswith("_"):     # what pytest's collection asks of every module-level name
            raise AttributeError(name)
        return getattr(need(self._module, self._distribution), name)
