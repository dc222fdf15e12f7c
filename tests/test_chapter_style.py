"""Chapters are thin (issue #15, item 5): the style rules of CONTRIBUTING.md, checked on the
chapters listed in :data:`CHAPTERS`.

For every listed chapter (read with :func:`replicate.runner.read_notebook`, as the runner does):

* every code cell has at most :data:`MAX_LINES` lines and :data:`MAX_WIDTH` characters per line;
* the first code cell is tagged ``parameters`` and assigns ``profile``;
* the chapter imports ``replicate as rp`` and nothing outside :data:`ALLOWED_IMPORTS` (the
  one package alias ``rp``, ``myst_nb.glue``, ``IPython.display`` and the plotting / array /
  table libraries under their usual aliases); inside an exercise solution (between
  ``solution-start`` and ``solution-end``) a reader may also import :data:`SOLUTION_IMPORTS`
  (scipy: an independent check of the answer, as ``scipy.stats.chisquare`` or
  ``scipy.optimize.brentq`` in the solutions of protocol and theory_adafocal; torch: a loss
  written in plain PyTorch, checked against the package's).

To put a chapter under these rules, add its name to :data:`CHAPTERS`.

On the chapters of :data:`COUNTED_CHAPTERS`, no count, ratio or number of runs, rows or models
is typed into the prose outside :data:`TYPED_COUNTS` (each entry with its reason): such
numbers are glued from the values the table beside them shows (issue #32, item 5).
"""
from __future__ import annotations

import ast
import re

import pytest

from replicate import runner

#: The chapters that satisfy the rules (file names in notebooks/ without ``.md``).
CHAPTERS = [
    "measuring_calibration",
    "protocol",
    "authors_code",
    "reproducibility",
    "claims_ledger",
    "theory_focal_loss",
    "theory_adafocal",
    "theory_dual_focal",
    "theory_fcl",
    "theory_fts",
    "exp_focal_loss",
    "exp_adafocal",
    "exp_dual_focal",
    "exp_fcl",
    "exp_fts",
    "exp_leaderboard",
]

MAX_LINES = 12
MAX_WIDTH = 100
#: Top-level module -> (alias it must have for ``import m as alias``, or None when ``import m``
#: is not allowed; names allowed in ``from m import ...``, ``"*"`` for any).
ALLOWED_IMPORTS = {
    "replicate": ("rp", ()),
    "myst_nb": (None, ("glue",)),
    "IPython.display": (None, "*"),
    "numpy": ("np", ()),
    "pandas": ("pd", ()),
    "matplotlib.pyplot": ("plt", ()),
    "seaborn": ("sns", ()),
}
#: Modules (with their submodules) a solution cell may import in any form: scipy for an
#: independent check of an answer, torch for the exercises where a reader writes a loss in
#: plain PyTorch and checks it against the package (issue #24, item 5).
SOLUTION_IMPORTS = ("scipy", "torch")


def code_cells(path):
    """``(index, cell, in_solution)`` for every code cell of the chapter at ``path``."""
    nb = runner.read_notebook(path)
    inside, out = False, []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if "{solution-start}" in line:
                    inside = True
                elif "{solution-end}" in line:
                    inside = False
        elif cell.cell_type == "code":
            out.append((len(out), cell, inside))
    return out


def size_problems(cells) -> list[str]:
    problems = []
    for i, cell, _ in cells:
        lines = cell.source.splitlines()
        if len(lines) > MAX_LINES:
            problems.append(f"code cell {i} has {len(lines)} lines (at most {MAX_LINES})")
        for j, line in enumerate(lines, 1):
            if len(line) > MAX_WIDTH:
                problems.append(f"code cell {i}, line {j} has {len(line)} characters (at most {MAX_WIDTH})")
    return problems


def parameter_problems(cells) -> list[str]:
    if not cells:
        return ["the chapter has no code cell"]
    _, first, _ = cells[0]
    problems = []
    if "parameters" not in first.metadata.get("tags", []):
        problems.append("the first code cell is not tagged 'parameters'")
    assigned = {t.id for stmt in ast.parse(first.source).body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                if isinstance(t, ast.Name)}
    if "profile" not in assigned:
        problems.append("the first code cell does not define 'profile'")
    return problems


def _import_problem(node, in_solution: bool) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if in_solution and alias.name.split(".")[0] in SOLUTION_IMPORTS:
                continue
            want = ALLOWED_IMPORTS.get(alias.name, (None, ()))[0]
            if want is None or alias.asname != want:
                hint = f" (use 'import {alias.name} as {want}')" if want else ""
                return f"'import {alias.name}{' as ' + alias.asname if alias.asname else ''}'{hint}"
        return None
    module = node.module or ""
    if in_solution and module.split(".")[0] in SOLUTION_IMPORTS:
        return None
    names = ALLOWED_IMPORTS.get(module, (None, ()))[1]
    bad = [a.name for a in node.names if names != "*" and a.name not in names]
    return f"'from {module} import {', '.join(bad)}'" if bad else None


def import_problems(cells) -> list[str]:
    problems, has_rp = [], False
    for i, cell, in_solution in cells:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import) and any(a.name == "replicate" and a.asname == "rp"
                                                    for a in node.names):
                has_rp = True
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                problem = _import_problem(node, in_solution)
                if problem:
                    where = "solution code cell" if in_solution else "code cell"
                    problems.append(f"{where} {i} imports {problem}, outside the allowed imports")
    if not has_rp:
        problems.append("the chapter never imports 'replicate as rp'")
    return problems


def problems_of(path) -> list[str]:
    cells = code_cells(path)
    return size_problems(cells) + parameter_problems(cells) + import_problems(cells)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_follows_the_style_rules(chapter):
    path = runner.SOURCE_DIR / f"{chapter}.md"
    assert path.is_file(), f"{path} does not exist: remove {chapter!r} from CHAPTERS"
    problems = problems_of(path)
    assert not problems, f"notebooks/{chapter}.md:\n  " + "\n  ".join(problems)


# ----------------------------------------------------------------------------- the checker itself
HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter
"""


def _chapter(tmp_path, *cells: str):
    path = tmp_path / "chapter.md"
    path.write_text(HEADER + "\n".join(cells))
    return path


def _code(source: str, tags: str = "") -> str:
    return f"```{{code-cell}} ipython3\n{tags}{source}\n```\n"


PARAMS = _code('profile = "cpu"', ":tags: [parameters]\n\n")


def test_checker_accepts_a_thin_chapter(tmp_path):
    solution = ("```{solution-start} x-ex\n:class: dropdown\n```\n\n"
                + _code("from scipy import stats\nimport scipy.optimize\nstats.norm.cdf(0)")
                + "\n```{solution-end}\n```\n")
    path = _chapter(tmp_path, PARAMS, _code("import numpy as np\nfrom myst_nb import glue\n"
                                            "from IPython.display import Markdown\nimport replicate as rp"),
                    _code("\n".join(f"x{i} = {i}" for i in range(MAX_LINES))), solution)
    assert problems_of(path) == []


def test_checker_reports_each_broken_rule(tmp_path):
    path = _chapter(tmp_path, _code('seed = 0'),
                    _code("import replicate\nimport numpy\nfrom scipy import stats\nfrom myst_nb import glue, md"),
                    _code("\n".join(f"x{i} = {i}" for i in range(MAX_LINES + 1))),
                    _code("y = '" + "a" * MAX_WIDTH + "'"))
    problems = "\n".join(problems_of(path))
    assert f"code cell 2 has {MAX_LINES + 1} lines" in problems
    assert f"code cell 3, line 1 has {MAX_WIDTH + 6} characters" in problems
    assert "not tagged 'parameters'" in problems and "does not define 'profile'" in problems
    assert "'import replicate' (use 'import replicate as rp')" in problems
    assert "'import numpy' (use 'import numpy as np')" in problems
    assert "'from scipy import stats'" in problems and "'from myst_nb import md'" in problems
    assert "never imports 'replicate as rp'" in problems


# ----------------------------------------------------------------------------- typed counts in prose
# Issue #32, item 5: a count ("3 of 5 methods", "the eleven text runs"), a ratio ("about three
# times") or a number of our runs, rows or models typed into a chapter's prose can disagree
# with the table beside it; such numbers are glued from the values the table is drawn from.
# The scan below reads the prose outside code cells, directives (exercises, figures,
# admonitions) and folded solutions, after removing glue roles, math, inline code, references
# (Table 1, Figs. 17-22, Eq. 4, App. A.10), names with digits (ResNet-50, FL-3, CIFAR-10) and
# "20 Newsgroups". What is left and still looks like a count is either glued or listed here
# with the reason it may stay typed.

#: The chapters whose prose is scanned (issue #32, item 5: the experiment chapters and the
#: protocol, reproducibility and claims-ledger pages; the leaderboard's sentences are its own).
COUNTED_CHAPTERS = ["exp_focal_loss", "exp_adafocal", "exp_dual_focal", "exp_fcl", "exp_fts", "protocol",
                    "reproducibility", "claims_ledger"]
_W = r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen|\d+(?:,\d{3})*(?:\.\d+)?)"
_W1 = r"(?:one|" + _W[3:]
_NOUN = (r"(?:runs?|methods?|models?|seeds?|claims?|rows?|verdicts?|resamples?|fits?|conclusions?|cells?|loans?|"
         r"networks?|data sets?|losses|baselines|trainings|points|samples)")
COUNT_PATTERNS = (re.compile(rf"\b{_W1}\s+(?:of|out of)\s+(?:the\s+|its\s+|our\s+|these\s+)?{_W1}\b", re.I),
                  re.compile(rf"\b{_W1}\s+times\b", re.I),
                  re.compile(rf"\b(?:all|none of|only|the first|the last)\s+(?:the\s+)?{_W}\b", re.I),
                  re.compile(rf"\b{_W}\s+(?:[a-z-]+\s+)?{_NOUN}\b", re.I))
_REF = (r"(?:Tables?|Figs?\.|Figures?|Eqs?\.|Equations?|Sec\.|Sections?|Appendix|App\.|Definitions?|Thm\.|"
        r"Theorems?|Propositions?|Algorithm|Step)")
_NUM = r"[A-Z]?\d+(?:\.\d+)*(?:\([a-z](?:-[a-z])?\))?[a-z]?"
_SCRUB = (re.compile(r"\{[\w:-]+\}`[^`]*`"), re.compile(r"\$[^$]*\$"), re.compile(r"`[^`]*`"),
          re.compile(_REF + r"\s+" + _NUM + r"(?:\s*(?:,|-|–|and|to|or)\s*" + _NUM + r")*"),
          re.compile(r"\b20 Newsgroups\b"), re.compile(r"\b[A-Za-z][\w.]*-\d[\w.\-/]*"))

#: chapter -> {typed count: why it may stay typed}
TYPED_COUNTS = {
    "exp_focal_loss": {
        "eleven methods": "the paper's own count of its methods (they train eleven), not our runs",
        "250 of 350": "FLS's switch epochs, as the paper defines the schedules",
        "all four": "the four models of the paper's Figure 8, named right after",
        "four models": "the four models of the paper's Figure 8, named right after",
    },
    "exp_adafocal": {
        "two AdaFocal models": "the two rules the chapter trains, named in its introduction (Eq. 4, code rule)",
        "5 runs": "the caption of the paper's Figure 4a (a figure: no stored table holds it)",
        "9 seeds": "the paper's Figures 17-22 repeat each setting over 5 to 9 seeds (figures only)",
        "9 out of 11": "the paper's own words, quoted",
        "9 of 11": "the claim as the paper words it",
        "7 of 11": "the claim as the paper words it",
    },
    "exp_dual_focal": {
        "six baselines": "what the paper compares, from its text",
        "four networks": "what the paper compares, from its text",
        "one of 15": "AdaDualFocal's 15 equal-mass bins (the authors' code), a definition",
        "one of two": "a 'depends on the reading' verdict holds under one of the claim's two readings (definition)",
    },
    "exp_fcl": {
        "all 50,000": "the authors' code trains on the whole CIFAR-10 training set (its official size)",
        "the first 50": "the paper's description of its Figure 3 (epochs 0-50)",
    },
    "exp_fts": {
        "three rows": "the three rows of logits typed into the code cell right below",
        "three data sets": "the paper's data sets (CIFAR-10, CIFAR-100, TinyImageNet)",
        "all three": "the paper's three data sets of its Table 1",
    },
    "protocol": {
        "a dozen losses": "an order of magnitude for the catalogue, said as such",
        "two final models": "the two models of the demonstration (cross-entropy and focal loss)",
    },
    "claims_ledger": {
        "two verdicts": "an experiment claim's two sides (the paper's table, our runs): a definition",
        "two methods": "a kind of test (a difference of two methods): a definition",
        "two cells": "a kind of test (a difference of two cells): a definition",
    },
}


def prose_lines(path) -> list[str]:
    """The chapter's prose: markdown lines outside directives (```` ```{...} ````,
    ``:::{...}``) and outside folded solutions."""
    out, fence, solution = [], None, False
    for cell in runner.read_notebook(path).cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if "{solution-start}" in line:
                solution = True
            elif "{solution-end}" in line:
                solution = False
                continue
            m = re.match(r"^(`{3,}|:{3,})\{", line)
            if fence is None and m:
                fence = m.group(1)
                continue
            if fence is not None:
                if line.strip() == fence:
                    fence = None
                continue
            if not solution:
                out.append(line)
    return out


def typed_counts(path) -> list[str]:
    """Every typed count of the chapter's prose that :data:`COUNT_PATTERNS` finds."""
    found = []
    for line in prose_lines(path):
        for p in _SCRUB:
            line = p.sub(" ", line)
        for p in COUNT_PATTERNS:
            found += [re.sub(r"\s+", " ", m.group(0)) for m in p.finditer(line)]
    return found


@pytest.mark.parametrize("chapter", COUNTED_CHAPTERS)
def test_counts_in_prose_are_glued(chapter):
    allowed = TYPED_COUNTS.get(chapter, {})
    found = typed_counts(runner.SOURCE_DIR / f"{chapter}.md")
    typed = sorted(set(found) - set(allowed))
    assert not typed, (f"notebooks/{chapter}.md types counts its tables may contradict: {typed}; glue them "
                       f"from the values the table shows, or list them in TYPED_COUNTS with the reason")
    stale = sorted(set(allowed) - set(found))
    assert not stale, f"TYPED_COUNTS[{chapter!r}] lists phrases the chapter no longer has: {stale}"


def test_count_scan_finds_typed_counts_and_skips_glue_math_references_and_exercises(tmp_path):
    path = _chapter(tmp_path, "Of the {glue:text}`n` claims 3 of 5 hold; it costs about three times more, "
                              "over the eleven text runs.\n"
                              "See Tables 1-4 and 6, Figs. 17-22 and Eq. 4; ResNet-50 runs, $2 of 3$, `4 of 5`,\n"
                              "20 Newsgroups rows, in 2024.\n"
                              "```{exercise} A title\n:label: x\n\nCount 7 of 9 rows.\n```\n"
                              "```{solution-start} x\n:class: dropdown\n```\nAll 12 runs agree.\n"
                              "```{solution-end}\n```\nNone of the 4 fits, the first five resamples.\n")
    assert typed_counts(path) == ["3 of 5", "three times", "eleven text runs", "None of the 4", "the first five",
                                  "4 fits", "five resamples"]
