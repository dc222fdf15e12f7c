"""HTML tables a reader can sort by clicking a column header, readable without JavaScript.

:func:`sortable_table` writes a plain ``<table>`` (caption, ``<thead>``, ``<tbody>``) with the
class ``sortable``. In the built book, the script of the npm package ``sortable-tablesort``
(4.1.7, the Unlicense; vendored unchanged in ``replicate/static/sortable/`` and served from the
book's ``_static`` folder by :mod:`replicate.book_html`, never from a CDN) sorts any such table
when a header is clicked: first click ascending (the class ``asc``: lower is better for most
metrics), second click descending. A cell may carry a number to sort by (``data-sort``)
beside the text it shows (e.g. "1.23 ± 0.45" sorts by 1.23); cells without one sort by their
text. Without JavaScript the table is shown as written, in the row order given.

In a Jupyter notebook the returned :class:`SortableTable` displays as the same HTML (sorting
works there only where the script is loaded, i.e. in the book).
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

#: The folder of the vendored script and style sheet (copied into the book's ``_static``).
STATIC_DIR = Path(__file__).resolve().parent / "static"
SCRIPTS = ("sortable/sortable.js", "sortable/sortable.a11y.js")
STYLESHEETS = ("sortable/sortable-base.css",)
#: Extra style for the book: a readable, compact table that scrolls sideways on small screens.
_STYLE = ("<style>table.replicate-board{border-collapse:collapse;font-size:0.85em;display:block;overflow-x:auto}"
          "table.replicate-board th,table.replicate-board td{padding:2px 6px;border-bottom:1px solid #ddd;"
          "text-align:right;white-space:nowrap;vertical-align:top}"
          "table.replicate-board th{position:sticky;top:0;background:var(--pst-color-background,#fff)}"
          "table.replicate-board td.text,table.replicate-board th.text{text-align:left}"
          "table.replicate-board caption{caption-side:bottom;text-align:left;font-size:0.9em}"
          "table.replicate-board small{color:#666}</style>")


class SortableTable:
    """An HTML table (:attr:`html`) that notebooks display as HTML (``_repr_html_``)."""

    def __init__(self, html_text: str, frame: pd.DataFrame):
        self.html = html_text
        self.frame = frame

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html


def _number(v) -> str | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else repr(x)


def sortable_table(cells: pd.DataFrame, sort_keys: pd.DataFrame | None = None, notes: pd.DataFrame | None = None,
                   caption: str = "", text_columns=(), ascending_first: bool = True, table_id: str | None = None,
                   title_row: dict | None = None) -> SortableTable:
    """``cells`` (text shown, one row per table row; the index is not shown) as a sortable
    HTML table.

    ``sort_keys`` (same index, any of the columns, numbers) become ``data-sort`` attributes
    (a NaN key sorts last in both directions; a column without keys sorts by its text); ``notes`` (same shape, text) a second, smaller line in a
    cell (e.g. a 95 % interval); ``text_columns`` are left-aligned. ``ascending_first``: the
    first click on a header sorts ascending. ``title_row`` maps a column to a tooltip for its
    header (e.g. the metric's full name). Every text is HTML-escaped.
    """
    if not isinstance(cells, pd.DataFrame) or cells.empty:
        raise ValueError("cells must be a non-empty DataFrame")
    if len(set(cells.columns)) != len(cells.columns):
        raise ValueError(f"cells must have distinct column names; got {list(cells.columns)}")
    for name, other in (("sort_keys", sort_keys), ("notes", notes)):
        if other is not None and not other.index.equals(cells.index):
            raise ValueError(f"{name} must have the index of cells")
    unknown = [c for c in text_columns if c not in cells.columns]
    if unknown:
        raise ValueError(f"text_columns {unknown} are not columns of cells; columns: {list(cells.columns)}")
    esc = html.escape
    classes = "sortable n-last replicate-board" + (" asc" if ascending_first else "")
    out = [_STYLE, f'<table class="{classes}"' + (f' id="{esc(table_id)}"' if table_id else "") + ">"]
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    head = []
    for c in cells.columns:
        cls = ' class="text"' if c in text_columns else ""
        tip = f' title="{esc(str(title_row[c]))}"' if title_row and c in title_row else ""
        head.append(f"<th{cls}{tip}>{esc(str(c))}</th>")
    out.append("<thead><tr>" + "".join(head) + "</tr></thead>")
    out.append("<tbody>")
    for idx, row in cells.iterrows():
        tds = []
        for c in cells.columns:
            attrs = ' class="text"' if c in text_columns else ""
            if sort_keys is not None and c in sort_keys.columns:
                key = _number(sort_keys.at[idx, c])
                attrs += f' data-sort="{key if key is not None else ""}"'   # empty: sorted last (n-last)
            text = esc(str(row[c]))
            note = notes.at[idx, c] if notes is not None and c in notes.columns else None
            if isinstance(note, str) and note:
                text += f"<br><small>{esc(note)}</small>"
            tds.append(f"<td{attrs}>{text}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    return SortableTable("".join(out), cells)
