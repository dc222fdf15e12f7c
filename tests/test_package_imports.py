"""Every import of the package's own modules resolves, including the imports placed inside
functions (which a plain ``import replicate`` never runs): after files move, a stale
``from .old_module import name`` would otherwise surface only when a chapter calls it."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import replicate

PACKAGE = Path(replicate.__file__).parent


def _module_name(path: Path) -> tuple[str, str]:
    """(module, package) of a source file of the package."""
    parts = ("replicate",) + path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), ".".join(parts[:-1])
    return ".".join(parts), ".".join(parts[:-1])


def own_imports():
    """(file, line, module, names) for every ``from replicate... import`` in the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        _, package = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "replicate" or target.startswith("replicate."):
                yield path.relative_to(PACKAGE.parent), node.lineno, target, [a.name for a in node.names]


def _resolves(target: str, name: str) -> bool:
    module = importlib.import_module(target)
    if name == "*" or hasattr(module, name):
        return True
    try:
        importlib.import_module(f"{target}.{name}")
        return True
    except ModuleNotFoundError:
        return False


def test_every_own_import_resolves():
    problems = []
    for where, line, target, names in own_imports():
        try:
            missing = [n for n in names if not _resolves(target, n)]
        except ModuleNotFoundError as err:
            if err.name and not err.name.startswith("replicate"):
                continue  # an optional third-party dependency that is not installed
            problems.append(f"{where}:{line}: no module {err.name!r}")
            continue
        problems += [f"{where}:{line}: {target} has no {n!r}" for n in missing]
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_stale_import():
    assert len(list(own_imports())) > 100  # the walk sees the package
    with pytest.raises(ModuleNotFoundError):
        _resolves("replicate.comparison.comparison", "data_name")
    assert not _resolves("replicate.comparison.side_by_side", "no_such_name")
    assert _resolves("replicate.comparison.side_by_side", "data_name")
