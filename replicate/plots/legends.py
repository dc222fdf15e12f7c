"""Legends that cover no data (issue #32, item 6): what :mod:`replicate.plots.lint` asks of a
figure's legend, done by the figure functions.

- :func:`legend_clear_of_data` -- headroom above the data for a legend in an upper corner;
- :func:`legend_below` -- one figure legend under the panels (constrained layout).
"""
from __future__ import annotations

__all__ = ["legend_clear_of_data", "legend_below"]


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
