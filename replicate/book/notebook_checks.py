"""What an executed chapter must not show a reader: warnings (issue #24, item 2) and tables
that read like a pandas dump (issue #32, item 1).

:func:`warnings_in` lists the outputs of an executed notebook that print a warning: anything
written to stderr (Python's ``warnings`` module, a library's log line, the book's own
``LegibilityWarning`` from :mod:`replicate.plots.legibility`) and any output text carrying a
``SomethingWarning:`` line. ``tests/test_book.py`` runs it over every chapter of the smoke
book, and ``python -m replicate.book.notebook_checks book/chapters/*.ipynb`` over a built book.

:func:`table_problems` lists what a table of a page (or of a cell's ``text/html`` output)
shows a reader that it should not: a header cell, of a column or a row, that is a Python
identifier with an underscore (``classwise_ece``; a name the reader types is shown as
``<code>`` and is left alone), a cell with a number of more than four decimals
(``0.212000``, ``2.58e-09`` is fine), a cell reading ``NaN``, and pandas' default integer
index shown as a header-less first column (0, 1, 10, 11, ...). :func:`table_problems_in`
runs it over an executed notebook, including frames printed to stdout (a number of more than
four decimals or a ``NaN`` there). ``tests/test_book.py`` runs it over the chapter pages of
the smoke book; ``python -m replicate.book.notebook_checks --tables
_build/html/book/chapters/*.html`` (or executed notebooks) over a built book.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_WARNING = re.compile(r"\b[A-Z]\w*Warning\b:")
#: a header that reads as a Python identifier: lowercase words joined by underscores
IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")
#: a number with more than four decimals
LONG_DECIMAL = re.compile(r"(?<![\w.])[-+−]?\d*\.\d{5,}(?!\d)")
_NAN = re.compile(r"(?<![\w-])(NaN|nan|<NA>|NaT)(?![\w-])")

__all__ = ["warnings_in", "table_problems", "table_problems_in", "main"]


def _texts(output: dict) -> list[str]:
    texts = ["".join(output.get("text", ""))] if output.get("output_type") == "stream" else []
    data = output.get("data", {})
    texts += ["".join(data.get(m, "")) for m in ("text/plain", "text/markdown")]
    if output.get("output_type") == "error":
        texts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return [t for t in texts if t]


def warnings_in(notebook) -> list[tuple[int, str]]:
    """``(cell index, first line)`` for every output of ``notebook`` (a path or a notebook
    dict) that writes to stderr or prints a ``...Warning:`` line."""
    nb = json.loads(Path(notebook).read_text()) if isinstance(notebook, (str, Path)) else notebook
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            stderr = out.get("output_type") == "stream" and out.get("name") == "stderr"
            for text in _texts(out):
                line = next((ln for ln in text.splitlines() if _WARNING.search(ln)), None)
                if stderr or line:
                    found.append((i, (line or text.strip().splitlines()[0] if text.strip() else "(empty)")[:300]))
    return found


def _text(cell) -> str:
    """A cell's text as a reader sees it, without what sits in ``<code>``."""
    from bs4 import BeautifulSoup

    cell = BeautifulSoup(str(cell), "html.parser")
    for code in cell.find_all(["code", "script", "style"]):
        code.decompose()
    return " ".join(cell.get_text(" ", strip=True).split())


def _caption(table) -> str:
    """A short name for ``table`` in a problem: its caption, else its first header cells."""
    cap = table.find("caption")
    if cap is not None and cap.get_text(strip=True):
        return cap.get_text(" ", strip=True)[:60]
    heads = [h.get_text(" ", strip=True) for h in table.find_all("th")[:4]]
    return " | ".join(h for h in heads if h)[:60] or "(no header)"


def _rows(table) -> list[list]:
    return [[c for c in tr.find_all(["th", "td"], recursive=False)]
            for tr in table.find_all("tr") if tr.find_parent("table") is table]


def _default_index(table) -> bool:
    """pandas' integer index: a first column of integers whose header cells are empty."""
    head = table.find("thead")
    rows = _rows(table)
    header_rows = [r for r in rows if r and r[0].find_parent("thead") is not None] if head else []
    body_rows = [r for r in rows if r not in header_rows]
    if not header_rows or not body_rows:
        return False
    if any(r[0].get_text(strip=True) for r in header_rows):
        return False
    first = [r[0] for r in body_rows]
    if any(c.name != "th" for c in first):  # pandas writes the index as <th> cells of the body
        return False
    values = [c.get_text(strip=True) for c in first]
    return all(re.fullmatch(r"\d+", v) for v in values) and len(set(values)) == len(values)


def table_problems(html_text: str) -> list[str]:
    """One line for each table header or cell of ``html_text`` that a reader should not see
    (see the module's docstring); an empty list for clean tables."""
    if "<table" not in html_text:
        return []
    from bs4 import BeautifulSoup

    found = []
    for table in BeautifulSoup(html_text, "html.parser").find_all("table"):
        name = _caption(table)
        if _default_index(table):
            found.append(f"table [{name}]: pandas index shown as a header-less first column")
        for cell in (c for r in _rows(table) for c in r):
            text = _text(cell)
            if not text:
                continue
            if cell.name == "th" and IDENTIFIER.match(text):  # a column's or a row's header
                found.append(f"table [{name}]: header {text!r} is a Python identifier")
            if LONG_DECIMAL.search(text):
                found.append(f"table [{name}]: cell {text[:60]!r} has more than four decimals")
            if _NAN.search(text):
                found.append(f"table [{name}]: cell {text[:60]!r} shows NaN")
    return found


def table_problems_in(notebook) -> list[tuple[int, str]]:
    """``(cell index, problem)`` for the tables of every ``text/html`` output of ``notebook``
    (a path or a notebook dict), and for every stdout output that prints a number of more
    than four decimals or a ``NaN`` (a frame printed by ``print``)."""
    nb = json.loads(Path(notebook).read_text()) if isinstance(notebook, (str, Path)) else notebook
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            html_text = "".join(out.get("data", {}).get("text/html", ""))
            found += [(i, p) for p in table_problems(html_text)]
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                for line in "".join(out.get("text", "")).splitlines():
                    if LONG_DECIMAL.search(line) or _NAN.search(line):
                        found.append((i, f"printed: {line.strip()[:100]!r}"))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print every warning of the given executed notebooks (with ``--tables``: every table
    problem of the given notebooks or HTML pages); exit 1 when there is one."""
    paths = list(argv if argv is not None else sys.argv[1:])
    tables = "--tables" in paths
    paths = [p for p in paths if p != "--tables"]
    bad = 0
    for path in paths:
        if tables and str(path).endswith(".html"):
            found = [(None, p) for p in table_problems(Path(path).read_text())]
        else:
            found = table_problems_in(path) if tables else warnings_in(path)
        for cell, line in found:
            print(f"{path}: " + (f"cell {cell}: " if cell is not None else "") + line)
            bad += 1
    print(f"{len(paths)} file(s), {bad} {'table problem' if tables else 'warning'}(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
