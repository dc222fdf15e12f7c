"""Figures a reader can read at the book's page width (issue #24, item 2).

The book shows a figure as one PNG of the whole figure, cut to what is drawn
(``bbox_inches="tight"``, padding 0.1 in) at ``figure.dpi`` pixels per inch, and a browser
shrinks an image wider than the page's output column to that column. A label drawn at
``s`` points therefore reads, on the page, at

    s * min(1, column_px / image_px) * dpi / 96   points

(a CSS pixel is 1/96 in). :data:`COLUMN_PX` is the width of a cell's output in the built
book (sphinx-book-theme, desktop layout: measured in headless Chromium at a 1280-px-wide
window, where the article column is 752 px and an output 688 px); a figure at most
``COLUMN_PX / dpi`` inches wide (6.88 in at 100 dpi) is shown at its own size.

- :func:`drawn_texts` -- every string a figure draws, with its size in points (the figure
  is drawn into a private renderer; its canvas is left alone);
- :func:`page_scale` -- the factor the page shrinks the figure's image by;
- :func:`small_texts` -- the drawn strings that read below :data:`MIN_POINTS` on the page;
- :func:`wrap_figure_texts` -- a figure's own texts (its suptitle, ``fig.text`` captions and
  the titles of its axes) wrap at the figure's width instead of widening the image (which
  would shrink every label);
- :func:`check_open_figures` / :func:`install` -- in a chapter's kernel, every open figure
  is also checked by :mod:`replicate.plots.lint` (overlapping texts, a legend over data,
  axes not sized to the data: one ``FigureLintWarning`` line each) and shown as a PNG
  carrying its alt text (:mod:`replicate.plots.alt_text`); every open figure
  has its figure texts wrapped and is checked after each cell, before the inline backend
  shows it, and each figure with
  text below :data:`MIN_POINTS` prints one ``LegibilityWarning`` line on stderr. The book's
  test over the executed chapters (``tests/test_reader.py``) fails on any warning in an
  output, so a figure too small to read fails the test suite. :func:`replicate.plots.use_style`
  calls :func:`install`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

#: Width in CSS pixels of a cell's output in the built book (desktop layout).
COLUMN_PX = 688
#: The smallest size, in points on the page, of any text of a figure.
MIN_POINTS = 8.0
#: ``bbox_inches="tight"`` pads the drawn area by this many inches on each side.
PAD_INCHES = 0.1
CSS_DPI = 96.0
WARNING = "LegibilityWarning"

__all__ = ["COLUMN_PX", "MIN_POINTS", "DrawnText", "drawn_texts", "image_width_px", "page_scale",
           "small_texts", "figure_problem", "wrap_figure_texts", "check_open_figures", "install"]


@dataclass(frozen=True)
class DrawnText:
    """One string a figure draws: its ``text``, its size in ``points`` as drawn, and the size
    ``on_page`` (points) it reads at on the book's page."""

    text: str
    points: float
    on_page: float


def _renderer(fig):
    from .lint import _renderer as offscreen

    return offscreen(fig)


def _draw_recording(fig) -> tuple[list[tuple[str, float]], object]:
    renderer = _renderer(fig)
    seen: list[tuple[str, float]] = []
    original = renderer.draw_text

    def draw_text(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if str(s).strip():
            seen.append((str(s), float(prop.get_size_in_points())))
        return original(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = draw_text
    fig.draw(renderer)
    return seen, renderer


def image_width_px(fig, renderer=None) -> float:
    """Width in pixels of the PNG the book shows: the figure's drawn area (its tight bounding
    box) plus :data:`PAD_INCHES` on each side, at ``fig.dpi``."""
    renderer = renderer or _renderer(fig)
    box = fig.get_tightbbox(renderer)      # inches
    return (box.width + 2 * PAD_INCHES) * fig.dpi


def page_scale(fig, column_px: float = COLUMN_PX, renderer=None) -> float:
    """The factor (at most 1) by which the page shrinks the figure's image to the column."""
    return min(1.0, float(column_px) / image_width_px(fig, renderer))


def drawn_texts(fig, column_px: float = COLUMN_PX) -> list[DrawnText]:
    """Every non-empty string ``fig`` draws (titles, labels, tick labels, legends,
    annotations, colour-bar ticks), with its size as drawn and on the page."""
    seen, renderer = _draw_recording(fig)
    factor = page_scale(fig, column_px, renderer) * fig.dpi / CSS_DPI
    return [DrawnText(s, p, p * factor) for s, p in seen]


def small_texts(fig, min_points: float = MIN_POINTS, column_px: float = COLUMN_PX) -> list[DrawnText]:
    """The strings of :func:`drawn_texts` that read below ``min_points`` on the page."""
    return [t for t in drawn_texts(fig, column_px) if t.on_page < min_points - 1e-9]


def figure_problem(fig, min_points: float = MIN_POINTS, column_px: float = COLUMN_PX) -> str | None:
    """One line saying how small the smallest text of ``fig`` reads on the page, or None
    when every text reads at ``min_points`` or more."""
    small = small_texts(fig, min_points, column_px)
    if not small:
        return None
    worst = min(small, key=lambda t: t.on_page)
    w, h = fig.get_size_inches()
    examples = ", ".join(repr(t.text[:24]) for t in small[:4])
    return (f"{WARNING}: a figure of {w:.1f} x {h:.1f} in has {len(small)} text(s) below {min_points:g} pt "
            f"at the page width ({column_px:g} px), the smallest {worst.on_page:.1f} pt "
            f"({worst.points:.1f} pt drawn): {examples}")


def wrap_figure_texts(fig) -> int:
    """Let the figure-level texts of ``fig`` (suptitle, supxlabel and ``fig.text`` captions)
    and the titles of its axes wrap at the figure's width; returns how many were set to wrap."""
    texts = list(fig.texts) + [t for t in (getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None))
                               if t is not None] + [ax.title for ax in fig.axes if ax.get_title()]
    texts = list({id(t): t for t in texts}.values())        # the suptitle is one of fig.texts too
    for t in texts:
        t.set_wrap(True)
    return len(texts)


def check_open_figures(stream=None, min_points: float = MIN_POINTS, wrap: bool = True) -> int:
    """Print a :func:`figure_problem` line on ``stream`` (stderr) for every open pyplot
    figure whose text is too small (after :func:`wrap_figure_texts` when ``wrap``); return
    the number of such figures."""
    import matplotlib.pyplot as plt

    stream = stream or sys.stderr
    bad = 0
    for num in plt.get_fignums():
        if wrap:
            wrap_figure_texts(plt.figure(num))
        problem = figure_problem(plt.figure(num), min_points)
        if problem:
            print(problem, file=stream)
            bad += 1
    return bad


def _after_cell() -> None:
    from . import alt_text, lint

    try:
        check_open_figures()
        lint.check_open_figures()
    except Exception as err:  # a check that cannot run says so, in the cell's output
        print(f"{WARNING}: the legibility check could not run: {type(err).__name__}: {err}", file=sys.stderr)
    try:
        from IPython import get_ipython

        alt_text.install(get_ipython())   # the inline backend may have chosen its printers again
    except Exception as err:
        print(f"{WARNING}: the figures' alt text could not be installed: {type(err).__name__}: {err}",
              file=sys.stderr)


def install(shell=None) -> bool:
    """In an IPython kernel, check every open figure after each cell, before the inline
    backend shows (and closes) it (legibility and :mod:`replicate.plots.lint`), and show each
    with its alt text (:func:`replicate.plots.alt_text.install`). Returns False outside IPython. Installing twice is
    harmless."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "events"):
        return False
    from . import alt_text

    alt_text.install(shell)
    callbacks = shell.events.callbacks["post_execute"]
    if _after_cell not in callbacks:
        callbacks.insert(0, _after_cell)   # before matplotlib-inline's flush_figures
    return True
