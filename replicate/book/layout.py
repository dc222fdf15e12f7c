"""How the book lays out the tables that chapters print (issue #24, item 1).

Chapters display pandas tables (plain DataFrames and Stylers) and the package's own HTML
tables. pandas' display defaults cut a cell at 50 characters and a table at 60 rows with
"..."; :func:`replicate.plots.use_style` turns that off (:data:`replicate.plots.TABLE_OPTIONS`),
so every table holds its full text. This module makes such tables readable on the page:

- :func:`mark_tables` runs on every page of the HTML book (``html-page-context``, from
  :mod:`replicate.book.html`) and gives each table in a cell's output the class
  :data:`TABLE_CLASS`, and each of its cells holding more than :data:`LONG_CELL` characters
  the class :data:`LONG_CLASS`;
- :data:`STYLESHEET` (``replicate/static/reader/tables.css``) then pads every cell (two
  adjacent numbers never run together), keeps short cells on one line (a number and its
  bracket stay together), lets long cells wrap at a readable width (at least
  ``18em``, at most ``36em``) instead of one word per line, and shows the edge of a table
  that is wider than the column: the output box it sits in scrolls sideways (the theme's
  ``overflow-x: auto``) with a visible scroll bar and a shadow on the side that has more;
  the box is at most 80 % of the window tall (its scroll bar stays in reach) and the
  table's first column and header row are sticky.

The HTML check (:mod:`replicate.book.check`) fails on a cell cut with "..." and on a table
wider than the page's column that does not sit in a scroll box of its own.
"""
from __future__ import annotations

#: Class given to every table of a cell output.
TABLE_CLASS = "replicate-output-table"
#: Class given to a cell of such a table holding more than :data:`LONG_CELL` characters.
LONG_CLASS = "replicate-long"
LONG_CELL = 40
#: The style sheet, relative to ``replicate/static`` (served from the book's ``_static``).
STYLESHEET = "reader/tables.css"
#: Where tables are laid out: the outputs of code cells (and outputs glued elsewhere).
_OUTPUT_CLASSES = ("cell_output", "text_html")

__all__ = ["TABLE_CLASS", "LONG_CLASS", "LONG_CELL", "STYLESHEET", "mark_tables"]


def _in_output(tag) -> bool:
    for parent in tag.parents:
        classes = parent.get("class") or []
        if any(c in classes for c in _OUTPUT_CLASSES):
            return True
    return False


def _add_class(tag, name: str) -> None:
    classes = list(tag.get("class") or [])
    if name not in classes:
        tag["class"] = [*classes, name]


def mark_tables(body: str) -> str:
    """``body`` (a page's HTML) with the classes of this module's docstring added; a page
    without tables in outputs comes back unchanged."""
    if "<table" not in body:
        return body
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    changed = False
    for table in soup.find_all("table"):
        if not _in_output(table):
            continue
        _add_class(table, TABLE_CLASS)
        changed = True
        for cell in table.find_all(["td", "th"]):
            if cell.find_parent("table") is table and len(cell.get_text(" ", strip=True)) > LONG_CELL:
                _add_class(cell, LONG_CLASS)
    return str(soup) if changed else body
