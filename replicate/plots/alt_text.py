"""Alt text for the book's figures, written from the figure itself (issue #32, item 6).

A chapter's figure reaches the page as a PNG: Sphinx would give it its file name as alt
text. Here the figure says what it plots:

- :func:`describe` -- one paragraph from what the figure draws: its suptitle, and for each
  panel its title, what is plotted against what (the axis labels, log scales named), the
  number of lines, bar series or marker series and their legend entries, and the caption;
  a figure function that knows better sets its own text with :func:`set_alt_text`;
- :func:`png` -- the PNG of a figure with that text in its ``Description`` (a PNG text
  chunk), the way :func:`install` makes a chapter's kernel show every figure;
- :func:`read_png_description` -- the text back from a PNG file; the book's Sphinx
  extension (:mod:`replicate.book.html`) makes it the image's ``alt`` in the HTML.
"""
from __future__ import annotations

import functools

_ALT = "_replicate_alt_text"
KEY = "Description"
#: Legend entries named per panel at most; the rest are counted.
MAX_ENTRIES = 8

__all__ = ["KEY", "set_alt_text", "describe", "png", "read_png_description", "install"]


def set_alt_text(fig, text: str):
    """Give ``fig`` its own alt text (used by :func:`describe` instead of the generated one)."""
    if not str(text).strip():
        raise ValueError("alt text must not be empty")
    setattr(fig, _ALT, " ".join(str(text).split()))
    return fig


def _clean(text: str) -> str:
    return " ".join(str(text).replace("$", "").replace("\\", "").split())


def _panel(ax) -> str | None:
    from matplotlib.collections import PathCollection, PolyCollection

    title = _clean(ax.get_title() or ax.get_title("left"))
    x, y = _clean(ax.get_xlabel()), _clean(ax.get_ylabel())
    scale = lambda s: " (log scale)" if s == "log" else ""  # noqa: E731
    parts = []
    if ax.images:
        parts.append("an image")
    if x or y:
        parts.append(f"{y or 'values'}{scale(ax.get_yscale())} against {x or 'position'}{scale(ax.get_xscale())}")
    lines = [ln for ln in ax.lines if ln.get_visible() and len(ln.get_xdata()) > 2]
    markers = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_visible()]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_visible()]
    counts = [f"{len(lines)} line{'s' * (len(lines) != 1)}" if lines else "",
              f"{len(ax.patches)} bar{'s' * (len(ax.patches) != 1)}" if ax.patches else "",
              f"{len(markers)} marker series" if markers else "",
              f"{len(bands)} shaded band{'s' * (len(bands) != 1)}" if bands else ""]
    counts = [c for c in counts if c]
    if counts:
        parts.append(", ".join(counts))
    leg = ax.get_legend()
    if leg is not None:
        entries = [_clean(t.get_text()) for t in leg.get_texts() if t.get_text().strip()]
        more = f" and {len(entries) - MAX_ENTRIES} more" if len(entries) > MAX_ENTRIES else ""
        head = _clean(leg.get_title().get_text())
        if entries:
            parts.append(f"legend{' ' + head if head else ''}: {', '.join(entries[:MAX_ENTRIES])}{more}")
    if not parts and not title:
        return None
    return (f"{title}: " if title else "") + "; ".join(parts)


def describe(fig) -> str:
    """The alt text of ``fig``: its own (:func:`set_alt_text`), else one generated from what it draws."""
    own = getattr(fig, _ALT, None)
    if own:
        return own
    panels = [p for p in (_panel(ax) for ax in fig.axes if ax.get_visible()) if p]
    sup = getattr(fig, "_suptitle", None)
    texts = [_clean(t.get_text()) for t in fig.texts if t is not sup and t.get_visible() and t.get_text().strip()]
    head = _clean(sup.get_text()) if sup is not None and sup.get_text().strip() else ""
    n = len(panels)
    out = [f"Figure{': ' + head if head else ''}, {n} panel{'s' * (n != 1)}." if n != 1 or head else "Figure."]
    out += [f"Panel {i}, {p}." if n > 1 else f"{p[0].upper()}{p[1:]}." for i, p in enumerate(panels, 1)]
    out += [f"{t}." if not t.endswith(".") else t for t in texts]
    return " ".join(out)


def png(fig, **savefig_kw) -> bytes:
    """The PNG bytes of ``fig`` (``bbox_inches="tight"`` unless given) with :func:`describe`
    in its ``Description`` text chunk."""
    import io

    buf = io.BytesIO()
    savefig_kw.setdefault("bbox_inches", "tight")
    fig.savefig(buf, format="png", metadata={KEY: describe(fig)}, **savefig_kw)
    return buf.getvalue()


def read_png_description(path) -> str | None:
    """The ``Description`` text of a PNG file, or None (not a PNG, no such text)."""
    try:
        from PIL import Image

        with Image.open(path) as im:
            text = getattr(im, "text", {}) or {}
            return text.get(KEY) or None
    except (OSError, ValueError, ImportError):
        return None


def _printer(original):
    @functools.wraps(original)
    def printer(fig, *args, **kwargs):
        if isinstance(original, functools.partial):
            return original.func(fig, *original.args, *args,
                                 **{**original.keywords, **kwargs, "metadata": {KEY: describe(fig)}})
        from IPython.core.pylabtools import print_figure

        return print_figure(fig, "png", bbox_inches="tight", base64=True, metadata={KEY: describe(fig)})
    printer._replicate_alt = True
    return printer


def install(shell) -> bool:
    """Make the kernel's PNG of every matplotlib figure carry :func:`describe` (wrapping the
    inline backend's own printer, its options kept); True when installed (again) or already there."""
    from matplotlib.figure import Figure

    formatter = getattr(getattr(shell, "display_formatter", None), "formatters", {}).get("image/png")
    if formatter is None:
        return False
    try:
        current = formatter.lookup_by_type(Figure)
    except KeyError:
        current = None
    if getattr(current, "_replicate_alt", False):
        return True
    formatter.for_type(Figure, _printer(current))
    return True
