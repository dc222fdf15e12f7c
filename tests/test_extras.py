"""A missing extra fails with one line naming it (issue #31, item 5).

Every library the package imports is a core dependency or listed in
:data:`replicate.extras.EXTRAS` with the extra that brings it; a module that needs a library
of a missing extra stops with :class:`replicate.extras.MissingExtraError`, one line naming the
module, the library and ``pip install "focal-calibration[EXTRA]"``, and the command line
prints it as ``replicate: error: ...``. A missing install is simulated in a subprocess whose
path finder cannot see the extras' libraries (what a core-only install looks like), with
this checkout's package first on the path.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from replicate import extras

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
#: The import names of the core dependencies (pyproject's ``dependencies``).
CORE_MODULES = {"torch", "torchvision", "numpy", "scipy", "pandas", "tqdm", "PIL", "mpmath", "platformdirs"}
#: Libraries of an extra that come through another of its requirements (not listed by name).
THROUGH = {"contourpy": "matplotlib", "jupyter-client": "ipykernel", "jupyter-core": "ipykernel",
           "ipython": "ipykernel", "myst-nb": "jupyter-book", "myst-parser": "jupyter-book",
           "markdown-it-py": "jupyter-book", "sphinx": "jupyter-book", "docutils": "jupyter-book",
           "beautifulsoup4": "jupyter-book", "packaging": "jupyter-book"}

HIDE = """
import sys
from importlib.machinery import PathFinder
HIDDEN = set(sys.argv[1].split(","))
class Hide:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        return None if name.partition(".")[0] in HIDDEN else PathFinder.find_spec(name, path, target)
    @classmethod
    def invalidate_caches(cls):
        PathFinder.invalidate_caches()
sys.meta_path[:] = [Hide if f is PathFinder else f for f in sys.meta_path]
sys.argv[1:2] = []
"""


def third_party_imports() -> dict[str, set[str]]:
    """``{top-level module: {files}}`` of every import of the package outside the standard library."""
    out: dict = {}
    for path in sorted((REPO / "replicate").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top and top != "replicate" and top not in sys.stdlib_module_names:
                    out.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return out


def extra_requirements(extra: str, seen=()) -> set[str]:
    """The distributions an extra lists, its included extras' (``focal-calibration[...]``) too."""
    out = set()
    for text in PROJECT["optional-dependencies"][extra]:
        req = Requirement(text)
        if canonicalize_name(req.name) == canonicalize_name(PROJECT["name"]):
            out |= set().union(*(extra_requirements(e, seen + (extra,)) for e in req.extras if e not in seen))
        else:
            out.add(canonicalize_name(req.name))
    return out


def test_every_library_the_package_imports_is_core_or_named_with_its_extra():
    found = third_party_imports()
    assert len(found) > 20 and "matplotlib" in found
    unknown = {m: sorted(f) for m, f in found.items() if m not in CORE_MODULES and m not in extras.EXTRAS}
    assert not unknown, f"add them to replicate.extras.EXTRAS (or the core dependencies): {unknown}"
    core = {canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"]}
    assert len(core) == len(CORE_MODULES)
    for module, (dist, extra) in extras.EXTRAS.items():
        assert extra in PROJECT["optional-dependencies"], (module, extra)
        listed = extra_requirements(extra)
        assert canonicalize_name(dist) in listed or canonicalize_name(THROUGH.get(dist, "-")) in listed, \
            f"{module}: {dist} is not a requirement of the extra {extra!r}"


def test_the_message_is_one_line_naming_the_module_the_library_and_the_extra():
    text = extras.message("sklearn", "replicate.toy2d")
    assert "\n" not in text
    assert text == ('replicate.toy2d needs scikit-learn (module sklearn), which is not installed: it comes with '
                    'the extra "text", pip install "focal-calibration[text]"')
    with pytest.raises(ValueError, match=r"module must be one of .*; got 'numpy'"):
        extras.message("numpy")
    assert issubclass(extras.MissingExtraError, ModuleNotFoundError)


def _run_without(hidden, code: str):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", HIDE + code, ",".join(hidden)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_without_the_extras_the_core_imports_and_the_rest_fails_with_one_line():
    code = """
import importlib
import replicate as rp
from replicate.extras import MissingExtraError
for name in ("losses", "metrics", "posthoc", "runs", "data", "models", "training", "profiles", "calibration",
             "comparison", "claims", "cli"):
    importlib.import_module("replicate." + name)
print("core imports")

def fails(f):
    try:
        f()
    except MissingExtraError as err:
        print("ERR", err)
    else:
        print("NO ERROR")

fails(lambda: rp.plots)
fails(lambda: importlib.import_module("replicate.experiments.focal_loss.figures"))
fails(lambda: rp.toy2d.moons(10))
try:
    import matplotlib
except ModuleNotFoundError as err:
    print("OTHERS", type(err).__name__, err)
"""
    proc = _run_without(extras.EXTRAS, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "core imports"
    book = 'which is not installed: it comes with the extra "book", pip install "focal-calibration[book]"'
    assert lines[1] == f"ERR replicate.plots needs matplotlib, {book}"
    assert lines[2] == f"ERR replicate.experiments.focal_loss.figures needs matplotlib, {book}"
    assert lines[3] == ('ERR replicate.toy2d needs scikit-learn (module sklearn), which is not installed: it comes '
                        'with the extra "text", pip install "focal-calibration[text]"')
    assert lines[4] == "OTHERS ModuleNotFoundError No module named 'matplotlib'"   # an import not by the package


def test_the_command_line_prints_a_missing_extra_as_one_line():
    code = """
import sys
from replicate.cli import main
sys.exit(main(["run", "exp_focal_loss", "--profile", "smoke"]))
"""
    proc = _run_without(["jupytext", "papermill", "nbformat"], code)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]
    assert re.fullmatch(r'replicate: error: replicate\.runner\.\w+ needs (jupytext|papermill|nbformat), which is not '
                        r'installed: it comes with the extra "book", pip install "focal-calibration\[book\]"', lines[0])
