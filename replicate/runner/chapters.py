"""Finding the book's chapters and reading their parameters; nothing here executes.

A chapter's source is a MyST-markdown notebook ``notebooks/NAME.md``; the book reads its
executed copy ``book/chapters/NAME.ipynb``, listed in ``_toc.yml`` (:func:`toc_chapters`).
:func:`read_notebook` reads a source with jupytext (papermill cannot read MyST),
:func:`default_parameters` lists its ``parameters`` cell, and :func:`validate_parameters`
checks requested parameters (names, types) and the profile against
:mod:`replicate.profiles` before any kernel starts.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from .. import config

CHAPTER_DIR = Path("book") / "chapters"
SOURCE_DIR = Path("notebooks")
KERNEL = "python3"


@dataclass(frozen=True)
class Chapter:
    """One executable chapter: its name, MyST source and executed target."""

    name: str
    source: Path
    target: Path


# --------------------------------------------------------------------------- TOC
def _toc_files(node) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if key in node and isinstance(node[key], str):
                out.append(node[key])
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []) or []:
                out.extend(_toc_files(child))
    elif isinstance(node, list):
        for child in node:
            out.extend(_toc_files(child))
    return out


def toc_chapters(root: Path | None = None) -> list[Chapter]:
    """The executable chapters listed in ``_toc.yml``, in book order."""
    import yaml

    root = Path(root or config.repo_root())
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    chapters = []
    for entry in _toc_files(toc):
        path = Path(entry).with_suffix("")
        if path.parent != CHAPTER_DIR:
            continue
        source = root / SOURCE_DIR / f"{path.name}.md"
        if not source.exists():
            raise FileNotFoundError(f"_toc.yml lists {entry!r} but its source {source} does not exist")
        chapters.append(Chapter(path.name, source, root / CHAPTER_DIR / f"{path.name}.ipynb"))
    return chapters


def resolve_notebook(notebook: str | Path, root: Path | None = None) -> Path:
    """Accept ``notebooks/NAME.md``, ``NAME.md`` or ``NAME`` and return the source path."""
    root = Path(root or config.repo_root())
    p = Path(notebook)
    for cand in (p, root / p, root / SOURCE_DIR / p, root / SOURCE_DIR / f"{p.name}.md",
                 root / SOURCE_DIR / f"{p.stem}.md"):
        if cand.is_file():
            return cand.resolve()
    names = sorted(q.stem for q in (root / SOURCE_DIR).glob("*.md"))
    raise FileNotFoundError(f"notebook {str(notebook)!r} not found; chapters: {', '.join(names)}")


# -------------------------------------------------------------------- parameters
def read_notebook(source: Path):
    """Read a MyST-markdown chapter into a NotebookNode with kernel ``python3``."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    return nb


def default_parameters(nb) -> dict:
    """Names and default values of the chapter's ``parameters`` cell (literal assignments)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            params = {}
            for stmt in ast.parse(cell.source).body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            try:
                                params[t.id] = ast.literal_eval(stmt.value)
                            except ValueError:
                                params[t.id] = None
            return params
    return {}


def parse_value(text: str):
    """Parse a CLI value: a Python literal when it is one (``3``, ``0.5``, ``[1, 2]``, ``True``), else a string."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _type_ok(value, default) -> bool:
    if default is None or value is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def validate_parameters(name: str, defaults: dict, given: dict, profile: str | None) -> dict:
    """Check names, types and the profile before anything executes; return the merged overrides."""
    from .. import profiles

    merged = dict(given)
    if profile is not None:
        merged["profile"] = profile
    for key, value in merged.items():
        if key not in defaults:
            allowed = ", ".join(f"{k} ({type(v).__name__})" for k, v in defaults.items()) or "none"
            raise ValueError(f"chapter {name!r} has no parameter {key!r}; allowed parameters: {allowed}")
        if not _type_ok(value, defaults[key]):
            raise ValueError(f"chapter {name!r}: parameter {key!r} expects {type(defaults[key]).__name__} "
                             f"(default {defaults[key]!r}), got {value!r} ({type(value).__name__})")
    if "profile" in merged:
        profiles.get_profile(merged["profile"])  # ValueError listing the profiles
    return merged
