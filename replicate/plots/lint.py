"""Figures that teach (issue #32, item 6): what a figure must not do, checked on the figure.

The book shows every figure as a PNG, so the HTML check cannot see its text; this module
reads the drawn figure instead (matplotlib's own extents, in display pixels, of a figure
drawn into a private renderer, as :mod:`replicate.plots.legibility` does):

- :func:`overlapping_texts` -- two texts drawn over each other: titles, axis labels, tick
  labels, legends, annotations, the suptitle and figure captions, e.g. an x label under the
  title of the panel below (boxes sharing more than :data:`OVERLAP_PX` px both ways);
- :func:`legends_over_data` -- a legend inside its axes drawn over plotted data: a line
  crossing it, a marker, bar or shaded band under it (lines drawn in axes coordinates,
  such as ``axhline``, are reference lines and do not count);
- :func:`limit_problems` -- axes not sized to the data: plotted data outside the view
  limits (cut off), or data filling less than :data:`MIN_FILL` of an axis's range (on a
  log axis, of its decades). An axes whose limits carry a meaning of their own (the unit
  square of a reliability diagram) says so with :func:`keep_limits` and a reason;
- :func:`figure_findings` -- all of them, one line each; :func:`check_open_figures` prints
  a ``FigureLintWarning`` line on stderr for each finding of each open figure (installed
  after every cell of a chapter by :func:`replicate.plots.legibility.install`, so that the
  book's test over the executed chapters fails on a figure that breaks these rules).
"""
from __future__ import annotations

import sys

import numpy as np

#: Two boxes overlap when they share more than this many pixels in both directions.
OVERLAP_PX = 1.0
#: The least part of an axis's range (linear, or in decades on a log axis) the data must fill.
MIN_FILL = 0.4
WARNING = "FigureLintWarning"
_KEEP = "_replicate_keep_limits"

__all__ = ["OVERLAP_PX", "MIN_FILL", "keep_limits", "text_boxes", "overlapping_texts", "legend_covers",
           "legends_over_data",
           "limit_problems", "figure_findings", "check_open_figures"]


def keep_limits(ax, reason: str, axis: str = "both"):
    """Mark the limits of ``ax`` (``axis``: ``"x"``, ``"y"`` or ``"both"``) as chosen for a
    ``reason`` (e.g. "probabilities: the unit square"), so :func:`limit_problems` leaves them
    alone; returns ``ax``."""
    if not str(reason).strip():
        raise ValueError("keep_limits needs a reason")
    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both'; got {axis!r}")
    kept = dict(getattr(ax, _KEEP, {}))
    kept.update({a: str(reason) for a in (("x", "y") if axis == "both" else (axis,))})
    setattr(ax, _KEEP, kept)
    return ax


def _renderer(fig):
    """An off-screen Agg renderer the size of ``fig`` (text extents without drawing to a file);
    the legibility check and the legend placement measure with it too."""
    from matplotlib.backends.backend_agg import RendererAgg

    w, h = fig.bbox.size
    return RendererAgg(max(int(w), 1), max(int(h), 1), fig.dpi)


def _drawn(fig):
    renderer = _renderer(fig)
    fig.draw(renderer)
    return renderer


def _name(ax, fig) -> str:
    title = ax.get_title() or ax.get_title("left") or ax.get_ylabel() or ""
    return f"panel {fig.axes.index(ax) + 1}" + (f" ({title[:30]!r})" if title else "")


def _visible_text(t) -> bool:
    return t is not None and t.get_visible() and bool(str(t.get_text()).strip())


def text_boxes(fig, renderer=None) -> list[tuple[str, object, object]]:
    """``(label, owner, Bbox)`` of every text drawn in ``fig`` (display pixels): each axes'
    titles, axis labels, the tick labels it draws, its legend (one box) and annotations;
    the figure's suptitle, axis super-labels, texts and legends. ``owner`` groups the tick
    labels of one axis (which may touch each other but not other texts)."""
    renderer = renderer or _drawn(fig)
    out = []

    def add(label, owner, artist):
        if artist is not None and artist.get_visible():
            box = artist.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                out.append((label, owner, box))

    for ax in fig.axes:
        if not ax.get_visible():
            continue
        name = _name(ax, fig)
        for loc in ("center", "left", "right"):
            t = ax.title if loc == "center" else getattr(ax, f"_{loc}_title")
            if _visible_text(t):
                add(f"{name} title {t.get_text()[:30]!r}", t, t)
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not (ax.axison and axis.get_visible()):   # axis("off"), the shared x axis of a twinx
                continue
            if _visible_text(axis.label):
                add(f"{name} {which} label {axis.label.get_text()[:30]!r}", axis.label, axis.label)
            for tick in axis._update_ticks():
                for lab in (tick.label1, tick.label2):
                    if _visible_text(lab):
                        add(f"{name} {which} tick label {lab.get_text()!r}", axis, lab)
            if _visible_text(axis.offsetText):
                add(f"{name} {which} offset {axis.offsetText.get_text()!r}", axis, axis.offsetText)
        if ax.get_legend() is not None:
            add(f"{name} legend", ax.get_legend(), ax.get_legend())
        for t in ax.texts:
            if _visible_text(t):
                add(f"{name} text {t.get_text()[:30]!r}", t, t)
    for t in {id(t): t for t in [*fig.texts, getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None),
                                 getattr(fig, "_supylabel", None)] if t is not None}.values():
        if _visible_text(t):
            add(f"figure text {t.get_text()[:30]!r}", t, t)
    for leg in fig.legends:
        add("figure legend", leg, leg)
    return out


def _shared(a, b) -> tuple[float, float]:
    return min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)


def overlapping_texts(fig, renderer=None) -> list[str]:
    """One line per pair of texts of :func:`text_boxes` drawn over each other (tick labels of
    one axis only when they overlap each other)."""
    boxes = text_boxes(fig, renderer)
    found = []
    for i, (la, oa, a) in enumerate(boxes):
        for lb, ob, b in boxes[i + 1:]:
            dx, dy = _shared(a, b)
            if dx > OVERLAP_PX and dy > OVERLAP_PX:
                found.append(f"{la} and {lb} overlap ({dx:.0f} x {dy:.0f} px)")
    return found


def _is_data(artist, ax) -> bool:
    transform = artist.get_transform()
    return transform == ax.transData or transform.contains_branch(ax.transData)


def _data_paths(ax) -> list[tuple[str, np.ndarray, bool]]:
    """``(label, xy in data coordinates, filled)`` of what ``ax`` plots in data coordinates."""
    from matplotlib.collections import Collection, LineCollection
    from matplotlib.patches import Patch

    out = []
    for line in ax.lines:
        if line.get_visible() and _is_data(line, ax):
            xy = np.asarray(line.get_xydata(), dtype=float)
            out.append((f"line {line.get_label()!r}", xy, False))
    for coll in ax.collections:
        if not (coll.get_visible() and isinstance(coll, Collection)):
            continue
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if len(offsets) and coll.get_offset_transform().contains_branch(ax.transData) and len(coll.get_paths()) <= 1:
            out.append((f"markers {coll.get_label()!r}", offsets, False))       # a scatter
        elif _is_data(coll, ax):
            kind, filled = ("lines", False) if isinstance(coll, LineCollection) else ("area", True)
            for path in coll.get_paths():
                out.append((f"{kind} {coll.get_label()!r}", np.asarray(path.vertices, dtype=float), filled))
    for patch in ax.patches:
        if patch.get_visible() and isinstance(patch, Patch) and _is_data(patch, ax):
            verts = patch.get_patch_transform().transform(patch.get_path().vertices)
            out.append((f"bar {patch.get_label()!r}", verts, True))
    return out


def legend_covers(ax, renderer=None) -> list[str]:
    """What the legend of ``ax`` covers of the data ``ax`` plots (labels of lines, markers,
    bars, bands), drawn as the figure is drawn; empty when it has no legend, or one outside the axes."""
    from matplotlib.path import Path

    leg = ax.get_legend()
    if leg is None or not leg.get_visible():
        return []
    renderer = renderer or _drawn(ax.figure)
    box = leg.get_window_extent(renderer).padded(-OVERLAP_PX)
    inside = ax.bbox
    if box.x1 <= inside.x0 or box.x0 >= inside.x1 or box.y1 <= inside.y0 or box.y0 >= inside.y1:
        return []
    hits = []
    for label, xy, filled in _data_paths(ax):
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            continue
        px = ax.transData.transform(xy)
        if label.startswith("markers") or len(px) == 1:
            hit = bool(np.any((px[:, 0] > box.x0) & (px[:, 0] < box.x1) & (px[:, 1] > box.y0) & (px[:, 1] < box.y1)))
        else:
            hit = Path(px).intersects_bbox(box, filled=filled)
        if hit:
            hits.append(label)
    return list(dict.fromkeys(hits))


def legends_over_data(fig, renderer=None) -> list[str]:
    """One line per axes whose legend, drawn inside the axes, covers plotted data."""
    renderer = renderer or _drawn(fig)
    found = []
    for ax in fig.axes:
        hits = legend_covers(ax, renderer)
        if hits:
            found.append(f"{_name(ax, fig)}: the legend covers {', '.join(hits)}")
    return found


def _scaled(values: np.ndarray, scale: str) -> np.ndarray:
    if scale == "log":
        values = values[values > 0]
        return np.log10(values)
    return values


def limit_problems(fig) -> list[str]:
    """One line per axis (of an axes that plots data and whose limits were not kept with
    :func:`keep_limits`) whose data lie outside its view limits, or fill less than
    :data:`MIN_FILL` of its range."""
    found = []
    for ax in fig.axes:
        paths = _data_paths(ax)
        if not paths or not ax.get_visible():
            continue
        kept = getattr(ax, _KEEP, {})
        xy = np.concatenate([p[1] for p in paths])
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            continue
        for i, which in enumerate("xy"):
            if which in kept:
                continue
            scale = ax.get_xscale() if which == "x" else ax.get_yscale()
            if scale not in ("linear", "log"):
                continue
            lo, hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
            data = _scaled(xy[:, i], scale)
            (lo, hi) = _scaled(np.array([lo, hi]), scale) if scale == "log" else (lo, hi)
            if not len(data) or hi <= lo:
                continue
            span = hi - lo
            out = int(np.sum((data < lo - 0.01 * span) | (data > hi + 0.01 * span)))
            if out:
                found.append(f"{_name(ax, fig)}: {out} plotted point(s) lie outside the {which} limits "
                             f"[{lo:.3g}, {hi:.3g}]" + (" (log10)" if scale == "log" else ""))
            fill = (min(data.max(), hi) - max(data.min(), lo)) / span
            if data.max() > data.min() and fill < MIN_FILL:
                found.append(f"{_name(ax, fig)}: the data fill {100 * fill:.0f} % of the {which} axis "
                             f"([{data.min():.3g}, {data.max():.3g}] of [{lo:.3g}, {hi:.3g}]"
                             + (", log10" if scale == "log" else "") + ")")
    return found


def figure_findings(fig) -> list[str]:
    """Every finding of :func:`overlapping_texts`, :func:`legends_over_data` and
    :func:`limit_problems` for ``fig``, one line each."""
    renderer = _drawn(fig)
    return [*overlapping_texts(fig, renderer), *legends_over_data(fig, renderer), *limit_problems(fig)]


def check_open_figures(stream=None) -> int:
    """Print a ``FigureLintWarning`` line on ``stream`` (stderr) for each finding of each open
    pyplot figure; return the number of figures with findings."""
    import matplotlib.pyplot as plt

    stream = stream or sys.stderr
    bad = 0
    for num in plt.get_fignums():
        findings = figure_findings(plt.figure(num))
        for line in findings:
            print(f"{WARNING}: {line}", file=stream)
        bad += bool(findings)
    return bad
