"""Legends that cover no data (issue #32, item 6): what :mod:`replicate.plots.lint` asks of a
figure's legend, done by the figure functions.

- :func:`legend_clear_of_data` -- headroom above the data for a legend in an upper corner;
- :func:`legend_below` -- one figure legend under the panels (constrained layout);
- :func:`legend_under` -- an axes' legend under its own x axis;
- :func:`place_legend` -- inside where it covers nothing, else with headroom, else under the axes.
"""
from __future__ import annotations

__all__ = ["legend_clear_of_data", "legend_below", "legend_under", "place_legend"]


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
    """The legend of ``ax`` under its x axis (below its tick labels and x label), in
    ``ncols`` columns: it covers no data; a later ``tight_layout`` or the constrained layout
    makes room for it. Returns the Legend."""
    from .legibility import _renderer

    fig = ax.figure
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    renderer = _renderer(fig)
    fig.draw(renderer)
    bottom = ax.get_tightbbox(renderer).y0                      # display pixels
    y = ax.transAxes.inverted().transform((0, bottom))[1] - 0.02
    legend_kw.setdefault("fontsize", "x-small")
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, y), ncols=ncols, **legend_kw)


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
    if ax.get_yscale() == "linear":
        lo, hi = ax.get_ylim()
        legend_clear_of_data(ax, step=1.15, max_steps=max(1, ceil(log(max_headroom) / log(1.15))))
        if not lint.legend_covers(ax):
            return ax.get_legend()
        ax.set_ylim(lo, hi)
    kw = {k: v for k, v in legend_kw.items() if k not in ("loc", "bbox_to_anchor", "ncol", "ncols")}
    return legend_under(ax, ncols=ncols_under, **kw)
