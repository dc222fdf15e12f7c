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
"""
from __future__ import annotations

import ast

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
