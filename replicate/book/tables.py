"""HTML tables a reader can sort by clicking a column header, readable without JavaScript.

:func:`sortable_table` writes a plain ``<table>`` (caption, ``<thead>``, ``<tbody>``) with the
class ``sortable``. In the built book, the script of the npm package ``sortable-tablesort``
(4.1.7, the Unlicense; vendored unchanged in ``replicate/static/sortable/`` and served from the
book's ``_static`` folder by :mod:`replicate.book.html`, never from a CDN) sorts any such table
when a header is clicked: first click ascending (the class ``asc``: lower is better for most
metrics), second click descending. A cell may carry a number to sort by (``data-sort``)
beside the text it shows (e.g. "1.23 ± 0.45" sorts by 1.23); cells without one sort by their
text. Without JavaScript the table is shown as written, in the row order given.

**Wide and long tables.** Such a table is a scroll box of its own, inside the page's column
(it never runs under the side panel): at most 80 % of the window tall, so that its
horizontal scroll bar is in reach while its top is read, with its header row and its first
column sticky (the column to put first is the one that names the row:
:meth:`SortableTable.columns_first`). With ``filters``, a form above the table holds one
drop-down per filter and a text search box (rows holding every word typed), run by
``replicate/static/filter/table-filter.js``; without JavaScript the form stays hidden.

In a Jupyter notebook the returned :class:`SortableTable` displays as the same HTML (sorting
works there only where the script is loaded, i.e. in the book).
"""
from __future__ import annotations

import hashlib
import html
import math
import re
from pathlib import Path

import pandas as pd

#: The folder of the vendored script and style sheet (copied into the book's ``_static``).
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"   # replicate/static
SCRIPTS = ("sortable/sortable.js", "sortable/sortable.a11y.js", "filter/table-filter.js")
STYLESHEETS = ("sortable/sortable-base.css",)
#: Extra style for the book: a readable, compact table that scrolls sideways on small screens.
_STYLE = ("<style>table.replicate-board{border-collapse:separate;border-spacing:0;font-size:0.85em;display:block;"
          "overflow:auto;max-height:80vh;max-width:100%}"
          "table.replicate-board th,table.replicate-board td{padding:2px 6px;border-bottom:1px solid #ddd;"
          "text-align:right;white-space:nowrap;vertical-align:top;background:var(--pst-color-background,#fff)}"
          "table.replicate-board th{position:sticky;top:0;z-index:2}"
          "table.replicate-board tr>:first-child{position:sticky;left:0;z-index:1;"
          "box-shadow:inset -1px 0 0 #ccc}"
          "table.replicate-board thead tr>:first-child{z-index:3}"
          "table.replicate-board td.text,table.replicate-board th.text{text-align:left}"
          "table.replicate-board caption{caption-side:bottom;text-align:left;font-size:0.9em}"
          "table.replicate-board small{color:#666}"
          "table.replicate-board.wrap td,table.replicate-board.wrap th{white-space:normal;min-width:6em}"
          "table.replicate-board.wrap td.replicate-wide{min-width:18em}"
          "table.replicate-board::-webkit-scrollbar{height:10px;width:10px}"
          "table.replicate-board::-webkit-scrollbar-thumb{background:rgba(120,120,120,0.55);border-radius:5px}"
          "table.replicate-board::-webkit-scrollbar-track{background:rgba(120,120,120,0.12)}"
          "form.replicate-filters{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:0.85em;margin:0.5em 0}"
          "form.replicate-filters[hidden]{display:none}"
          "form.replicate-filters select{max-width:22em}"
          "form.replicate-filters input[type=search]{width:16em}</style>")
#: A text column whose longest cell has more characters than this gets a readable width
#: when the table wraps (``wrap=True``), instead of one word per line.
WIDE_TEXT = 60


class SortableTable:
    """An HTML table (:attr:`html`) that notebooks display as HTML (``_repr_html_``)."""

    def __init__(self, html_text: str, frame: pd.DataFrame, arguments: dict | None = None):
        self.html = html_text
        self.frame = frame
        self._arguments = arguments

    def columns_first(self, *names: str) -> "SortableTable":
        """The same table with the columns ``names`` first, in that order, and the others
        after them in their order (the first of them stays in view when the table scrolls
        sideways); ValueError for a name that is not a column."""
        unknown = [n for n in names if n not in self.frame.columns]
        if unknown or self._arguments is None:
            raise ValueError(f"columns_first: {unknown or list(names)} not columns of a sortable table; "
                             f"columns: {list(self.frame.columns)}")
        order = [*names, *(c for c in self.frame.columns if c not in names)]
        return sortable_table(self.frame[order], **self._arguments)

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


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-") or "f"


def _options(values: pd.Series) -> list:
    """The distinct values of a filter: a categorical's categories present, in their order;
    otherwise in order of first appearance."""
    present = set(values.dropna())
    if isinstance(values.dtype, pd.CategoricalDtype):
        return [v for v in values.cat.categories if v in present]
    return [v for v in dict.fromkeys(values.dropna()) if v in present]


def _filter_form(filters: pd.DataFrame, table_id: str) -> str:
    esc = html.escape
    parts = [f'<form class="replicate-filters" data-table="{esc(table_id)}" hidden>']
    for name in filters.columns:
        values = filters[name]
        counts = values.value_counts()
        opts = "".join(f'<option value="{esc(str(v))}">{esc(str(v))} ({int(counts[v])})</option>'
                       for v in _options(values))
        parts.append(f'<label>{esc(str(name))} <select data-filter="{_slug(name)}">'
                     f'<option value="">all</option>{opts}</select></label>')
    parts.append('<label>search <input type="search" data-search placeholder="words in any cell" '
                 'aria-label="show only the rows holding these words"></label>')
    parts.append('<button type="reset">show all</button> <span class="replicate-filter-count"></span></form>')
    return "".join(parts)


def sortable_table(cells: pd.DataFrame, sort_keys: pd.DataFrame | None = None, notes: pd.DataFrame | None = None,
                   caption: str = "", text_columns=(), ascending_first: bool = True, table_id: str | None = None,
                   title_row: dict | None = None, filters: pd.DataFrame | None = None,
                   links: pd.DataFrame | None = None, wrap: bool = False) -> SortableTable:
    """``cells`` (text shown, one row per table row; the index is not shown) as a sortable
    HTML table.

    ``sort_keys`` (same index, any of the columns, numbers) become ``data-sort`` attributes
    (a NaN key sorts last in both directions; a column without keys sorts by its text); ``notes`` (same shape, text) a second, smaller line in a
    cell (e.g. a 95 % interval); ``text_columns`` are left-aligned. ``ascending_first``: the
    first click on a header sorts ascending. ``title_row`` maps a column to a tooltip for its
    header (e.g. the metric's full name). ``filters`` (same index; one column per filter,
    e.g. "paper", "verdict"; shown or not in ``cells``) adds the drop-down filters of the
    module docstring (a categorical column keeps its categories' order); ``links`` (same
    index, any of the columns) makes a cell's text a link to the given address; ``wrap``
    lets long texts wrap. Every text is HTML-escaped.
    """
    if not isinstance(cells, pd.DataFrame) or cells.empty:
        raise ValueError("cells must be a non-empty DataFrame")
    if len(set(cells.columns)) != len(cells.columns):
        raise ValueError(f"cells must have distinct column names; got {list(cells.columns)}")
    for name, other in (("sort_keys", sort_keys), ("notes", notes), ("filters", filters), ("links", links)):
        if other is not None and not other.index.equals(cells.index):
            raise ValueError(f"{name} must have the index of cells")
    unknown = [c for c in text_columns if c not in cells.columns]
    if unknown:
        raise ValueError(f"text_columns {unknown} are not columns of cells; columns: {list(cells.columns)}")
    if filters is not None:
        slugs = [_slug(c) for c in filters.columns]
        if filters.shape[1] == 0 or len(set(slugs)) != len(slugs):
            raise ValueError(f"filters must have at least one column and distinct names; got {list(filters.columns)}")
    if links is not None:
        unknown = [c for c in links.columns if c not in cells.columns]
        if unknown:
            raise ValueError(f"links {unknown} are not columns of cells; columns: {list(cells.columns)}")
    arguments = dict(sort_keys=sort_keys, notes=notes, caption=caption, text_columns=text_columns,
                     ascending_first=ascending_first, table_id=table_id, title_row=title_row, filters=filters,
                     links=links, wrap=wrap)
    wide = {c for c in text_columns if wrap and cells[c].astype(str).str.len().max() > WIDE_TEXT}
    esc = html.escape
    classes = "sortable n-last replicate-board" + (" asc" if ascending_first else "") + (" wrap" if wrap else "")
    out = [_STYLE]
    if filters is not None:
        if table_id is None:      # a stable id: the same table gets the same id in every build
            table_id = "t-" + hashlib.sha256(pd.util.hash_pandas_object(cells.astype(str), index=False)
                                             .values.tobytes()).hexdigest()[:10]
        out.append(_filter_form(filters, table_id))
    out.append(f'<table class="{classes}"' + (f' id="{esc(table_id)}"' if table_id else "") + ">")
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
        row_attrs = "" if filters is None else "".join(
            f' data-filter-{_slug(c)}="{esc(str(filters.at[idx, c]))}"' for c in filters.columns)
        for c in cells.columns:
            attrs = (' class="text replicate-wide"' if c in wide else ' class="text"') if c in text_columns else ""
            if sort_keys is not None and c in sort_keys.columns:
                key = _number(sort_keys.at[idx, c])
                attrs += f' data-sort="{key if key is not None else ""}"'   # empty: sorted last (n-last)
            text = esc(str(row[c]))
            href = links.at[idx, c] if links is not None and c in links.columns else None
            if isinstance(href, str) and href:
                text = f'<a href="{esc(href)}">{text}</a>'
            note = notes.at[idx, c] if notes is not None and c in notes.columns else None
            if isinstance(note, str) and note:
                text += f"<br><small>{esc(note)}</small>"
            tds.append(f"<td{attrs}>{text}</td>")
        out.append(f"<tr{row_attrs}>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    return SortableTable("".join(out), cells, arguments)
