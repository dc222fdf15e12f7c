"""The plain-loop page runs on a core install (issue #31, item 6).

The code cells of ``notebooks/library_loop.md`` that are not tagged ``book-only`` (the
book's figure style and its glue, hidden in the book) run at ``profile = "smoke"`` in a
Python process where every library of an optional extra is hidden from import (as
``tests/test_extras.py`` simulates a core-only install): the page trains on in-memory data
with a loss, evaluates with the metrics and calibrates with both calibrators, using the
core dependencies only.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

from replicate import extras
from test_api_reference import core_distributions
from test_extras import HIDE

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "notebooks" / "library_loop.md"
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def code_cells(text: str) -> list[tuple[list[str], str]]:
    """``[(tags, source), ...]`` of the page's code cells (MyST: ``:tags: [...]`` options first)."""
    out = []
    for m in _CELL.finditer(text):
        lines = m.group(1).splitlines()
        tags, i = [], 0
        while i < len(lines) and lines[i].startswith(":"):
            if lines[i].startswith(":tags:"):
                tags = [t.strip() for t in lines[i].split(":", 2)[2].strip(" []").split(",") if t.strip()]
            i += 1
        out.append((tags, "\n".join(lines[i:]).strip("\n")))
    return out


def test_the_page_separates_what_only_the_book_needs():
    cells = code_cells(PAGE.read_text())
    book_only = [src for tags, src in cells if "book-only" in tags]
    plain = [src for tags, src in cells if "book-only" not in tags]
    assert cells[0][0] == ["parameters"]
    assert book_only and all("remove-cell" in tags for tags, _ in cells if "book-only" in tags)
    assert all("glue(" not in src and "myst_nb" not in src and "rp.plots" not in src for src in plain)
    assert any("glue(" in src for src in book_only)
    code = "\n".join(plain)
    # in-memory data; every loss through one loop with its per-epoch hooks, the metrics and both calibrators
    assert "rp.data" not in code and "torchvision" not in code
    for call in ("rp.losses.get_loss(", "rp.losses.available_losses()", "on_epoch_start(", "update_from_validation(",
                 "rp.posthoc.fit_temperature(", "rp.posthoc.fit_focal_temperature(", "rp.metrics.ece"):
        assert call in code, call


def hidden_modules() -> list[str]:
    """The extras' libraries that a core install does not bring (sympy, say, comes with torch)."""
    core = core_distributions()
    return sorted(m for m, (dist, _) in extras.EXTRAS.items() if canonicalize_name(dist) not in core)


def test_the_plain_loop_runs_with_the_core_only():
    hidden = hidden_modules()
    assert {"matplotlib", "myst_nb", "sklearn", "jupytext", "papermill"} <= set(hidden)
    cells = [src for tags, src in code_cells(PAGE.read_text()) if "book-only" not in tags]
    script = "\n\n".join([cells[0], 'profile = "smoke"', *cells[1:]]).replace("\ntable.round(2)", "\nprint(table.round(2))")
    script = script.replace("\nevery.round(2)", "\nprint(every.round(2))")
    script += "\nprint('rows', list(table.index)); print('answer', answer); print('every', list(every.index))"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", HIDE + script, ",".join(hidden)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "600 training, 300 validation, 600 test points" in out
    assert out.count("AdaFocal's gammas now") == 3
    rows = next(line for line in out.splitlines() if line.startswith("rows "))
    assert "'none'" in rows and "TS (T = " in rows and "FTS (T = " in rows
    assert "the same temperature: by hand T = " in out and "(profile smoke, seed 1)" in out
    # every loss of the package through the same loop, once
    every = next(line for line in out.splitlines() if line.startswith("every "))
    import replicate as rp

    want = ['get_loss("%s")' % n for n in rp.losses.available_losses()]
    assert every == f"every {want}"
