"""Legends that cover no data (issue #32, item 6): what :mod:`replicate.plots.lint` asks of a
figure's legend, done by the figure functions.

- :func:`legend_clear_of_data` -- headroom above the data for a legend in an upper corner;
- :func:`legend_below` -- one figure legend under the panels (constrained layout);
- :func:`legend_under` -- an axes' legend under its own x axis;
- :func:`place_legend` -- inside where it covers nothing, else with headroom, else under the axes;
- :func:`settle_legends` -- after a figure's layout, the legends that now cover data go under their axes.
"""
from __future__ import annotations

__all__ = ["legend_clear_of_data", "legend_below", "legend_under", "place_legend", "settle_legends"]


def legend_clear_of_data(ax, step: float = 1.15, max_steps: int = 5):
    """Raise the top of the y axis of ``ax``, its range ``step`` times larger at a time (in
    decades on a log axis), until its legend covers none of the plotted data
    (:func:`replicate.plots.lint.legend_covers`), at most ``max_steps`` times (the data then
    still fill half the axis); returns ``ax``. For a legend in an upper corner over bars or
    lines that reach the top."""
    from . import lint

    for _ in range(max_steps):
        if not lint.legend_covers(ax):
            break
        lo, hi = ax.get_ylim()
        if ax.get_yscale() == "log":
            ax.set_ylim(lo, lo * (hi / lo) ** step)
        else:
            ax.set_ylim(lo, lo + (hi - lo) * step)
    return ax


def legend_below(fig, ax, ncols: int = 2, fontsize="small"):
    """The legend of ``ax``'s lines as one figure legend below every panel (the figure must
    use the constrained layout, which makes room for it), so that it covers no data; any
    legend of the axes is removed. Returns the Legend."""
    handles, labels = ax.get_legend_handles_labels()
    for a in fig.axes:
        if a.get_legend() is not None:
            a.get_legend().remove()
    return fig.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize=fontsize)


def legend_under(ax, ncols: int = 2, **legend_kw):
    """The legend of ``ax`` under its x axis, below its tick labels and x label, in ``ncols``
    columns (one where that is wider than the axes): it covers no data. Its distance from
    the axes is the height of those labels, in points, so it stays under them when a later
    ``tight_layout`` or the constrained layout moves the axes (and makes room for it).
    Returns the Legend."""
    from matplotlib.font_manager import FontProperties

    from .lint import _renderer

    fig = ax.figure
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    legend_kw.setdefault("fontsize", "x-small")
    renderer = _renderer(fig)
    fig.draw(renderer)
    below_px = max(0.0, ax.bbox.y0 - ax.get_tightbbox(renderer).y0)       # tick labels and x label
    size = FontProperties(size=legend_kw["fontsize"]).get_size_in_points()
    pad = (below_px * 72.0 / fig.dpi + 3.0) / size                        # in the legend's font sizes
    for n in dict.fromkeys((ncols, 1)):
        leg = ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), borderaxespad=pad, ncols=n, **legend_kw)
        fig.draw(renderer)
        if leg.get_window_extent(renderer).width <= ax.bbox.width:
            break
    return leg


def place_legend(ax, max_headroom: float = 1.5, ncols_under: int = 2, **legend_kw):
    """A legend for ``ax`` that covers none of its data (:func:`replicate.plots.lint.legend_covers`):
    where matplotlib's best place inside the axes covers some, the y axis grows by up to
    ``max_headroom`` times (a linear axis; :func:`legend_clear_of_data`), and if the legend
    still covers data it goes under the axes (:func:`legend_under`). Returns the Legend."""
    from math import ceil, log

    from . import lint

    legend_kw.setdefault("loc", "best")
    leg = ax.legend(**legend_kw)
    if not lint.legend_covers(ax):
        return leg
    if ax.get_yscale() == "linear" and max_headroom > 1:
        lo, hi = ax.get_ylim()
        legend_clear_of_data(ax, step=1.15, max_steps=max(1, ceil(log(max_headroom) / log(1.15))))
        if not lint.legend_covers(ax):
            return ax.get_legend()
        ax.set_ylim(lo, hi)
    kw = {k: v for k, v in legend_kw.items() if k not in ("loc", "bbox_to_anchor", "ncol", "ncols")}
    return legend_under(ax, ncols=ncols_under, **kw)


def settle_legends(fig, relayout=None, rounds: int = 2) -> int:
    """After a figure's layout: each legend inside its axes that now covers data (the layout
    moved the data under it, or matplotlib's "best" place has none free) goes under its axes
    (:func:`legend_under`), the figure grows by the legends' heights (so the panels keep
    their size) and ``relayout`` (e.g. ``fig.tight_layout``) runs again; returns how many
    legends moved."""
    from . import lint

    from .lint import _renderer

    moved = 0
    for _ in range(rounds):
        covering = [ax for ax in fig.axes if lint.legend_covers(ax)]
        if not covering:
            break
        rows: dict = {}
        for ax in covering:
            leg = ax.get_legend()
            kw = {"fontsize": leg.get_texts()[0].get_fontsize() if leg.get_texts() else "x-small"}
            title = leg.get_title().get_text()
            if title:
                kw.update(title=title, title_fontsize=leg.get_title().get_fontsize())
            legend_under(ax, **kw)
            moved += 1
            spec = ax.get_subplotspec()
            row = spec.rowspan.start if spec is not None else id(ax)
            height = ax.get_legend().get_window_extent(_renderer(fig)).height / fig.dpi
            rows[row] = max(rows.get(row, 0.0), height + 0.1)
        fig.set_figheight(fig.get_figheight() + sum(rows.values()))   # room for them: the panels keep their size
        if relayout is not None:
            relayout()
    return moved
