"""Figures 1-7 of Komisarenko & Kull (2024), regenerated from :mod:`.calibration_map` and :mod:`.bounds`.

Every function returns a matplotlib ``Figure``; ``report`` is the dictionary built by
:func:`replicate.theory.fts.claims.report` (fits and bounds are computed there once).
Simplex plots use the barycentric projection with vertices class 1 (left), class 2
(right) and class 3 (top).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.tri as mtri
import numpy as np
from scipy.special import softmax

from ...plots import PAGE_WIDTH, page_figure
from ...plots.lint import keep_limits
from .._simplex import simplex_grid
from .bounds import focal_calibration_logit
from .calibration_map import (binary_focal_calibration_map, conditional_risk, focal_calibration_map,
                              focal_loss_true_class, properized_focal_loss)

__all__ = ["to_xy", "figure1", "figure2", "figure3", "figure4", "figure5",
           "figure6", "figure7"]

_VERTS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])


def to_xy(p):
    """Barycentric (..., 3) to plane coordinates (..., 2)."""
    return np.asarray(p) @ _VERTS


def _triangle(ax, labels=("class 1", "class 2", "class 3")):
    ax.plot(*np.vstack([_VERTS, _VERTS[:1]]).T, color="0.3", lw=1)
    for v, lab, off in zip(_VERTS, labels, [(-0.04, -0.05), (0.04, -0.05), (0, 0.03)]):
        ax.annotate(lab, v, xytext=(v[0] + off[0], v[1] + off[1]), ha="center", fontsize=8)
    ax.set_aspect("equal")
    ax.axis("off")


def figure1(gammas_loss=(0.5, 3.0), gammas_map=(-0.5, 0.5, 1.0, 2.0, 3.0, 5.0)):
    """Fig. 1: properized focal loss on a positive vs focal loss and CE; the binary map."""
    q = np.linspace(0.002, 0.998, 400)
    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    a.plot(q, -np.log(q), color="k", label="cross-entropy")
    for g, col in zip(gammas_loss, ["C0", "C1"]):
        two = np.stack([1 - q, q], -1)
        a.plot(q, properized_focal_loss(two, g)[:, 1], color=col, label=f"proper part, γ={g}")
        a.plot(q, focal_loss_true_class(q, g), color=col, ls="--", label=f"focal, γ={g}")
    a.set(xlabel="predicted probability of the true class", ylabel="loss", ylim=(0, 4))
    keep_limits(a, "the losses diverge as the probability goes to 0: the axis shows losses up to 4", axis="y")
    a.legend(fontsize=8)
    for g in gammas_map:
        b.plot(q, binary_focal_calibration_map(q, g), label=f"γ={g}")
    b.plot([0, 1], [0, 1], color="0.5", ls=":", lw=1)
    b.set(xlabel="q (model output)", ylabel="focal calibration p̂(q)")
    b.legend(fontsize=8)
    return fig


def figure2(report, gammas_right=(0.5, 2.0, 3.0)):
    """Fig. 2: minimax-closest 1/T against gamma (binary) and FC vs TS in logit scale."""
    fit = report["binary_fit"]
    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    a.plot(fit["gammas"], 1 / fit["T"], "o", ms=3, label="closest 1/T (this book)")
    x = np.array([0.0, fit["gammas"].max()])
    a.plot(x, fit["slope"] * x + fit["intercept"], label="least-squares line")
    a.plot(x, 0.95 * x + 0.85, ls="--", label="paper: 0.95γ + 0.85")
    a.set(xlabel="γ", ylabel="1/T")
    a.legend(fontsize=8)
    s = np.linspace(-8, 8, 400)
    for g, col in zip(gammas_right, ["C0", "C1", "C2"]):
        t = report["binary_closest"][g]
        b.plot(s, focal_calibration_logit(s, g), color=col, label=f"FC γ={g}")
        b.plot(s, s / t, color=col, ls="--", label=f"TS T={t:.3f}")
    b.set(xlabel="logit s", ylabel="output logit")
    b.legend(fontsize=8)
    return fig


def figure3(report, gamma_left=4.0):
    """Fig. 3: stated and tightest temperature bounds, in logit scale (left) and their widths."""
    from .calibration_map import temperature_bounds
    from .bounds import tightest_temperature_bounds

    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    s = np.linspace(-20, 20, 801)
    fc_logit = focal_calibration_logit(s, gamma_left)
    (t1, t2), (u1, u2) = temperature_bounds(gamma_left), tightest_temperature_bounds(gamma_left)
    for t, ls, lab in [(t1, "-", "stated"), (t2, "-", "stated"), (u1, "--", "tightest on (-20, 20)"),
                       (u2, "--", "tightest on (-20, 20)")]:
        a.plot(s, s / t - fc_logit, ls=ls, label=f"{lab}, T={t:.3f}")
    a.axhline(0, color="k", lw=0.8)
    a.set(xlabel="logit s", ylabel=f"s/T − logit FC(s), γ={gamma_left:g}")
    a.legend(fontsize=8)
    bd = report["bounds_curve"]
    b.plot(bd["gammas"], bd["theory_flat"] - bd["theory_steep"], label="theoretical width")
    b.plot(bd["gammas"], bd["tight_flat"] - bd["tight_steep"], ls="--",
           label="tightest width on (-20, 20)")
    b.set(xlabel="γ", ylabel="T_flat − T_steep")
    b.legend(fontsize=8)
    return fig


def figure4(report, p=(0.55, 0.3, 0.15), gammas=(1.0, 3.0), percentiles=(3, 12, 20)):
    """Fig. 4: isolines of conditional risks (Brier, CE, properized focal) for ``p``."""
    q = simplex_grid(report["sizes"]["simplex_res"])
    p = np.asarray(p, float)
    risks = {"Brier score": ((q - p) ** 2).sum(-1) + 1 - (p ** 2).sum(),
             "cross-entropy": conditional_risk(p, -np.log(q))}
    for g in gammas:
        risks[f"properized focal, γ={g:g}"] = conditional_risk(p, properized_focal_loss(q, g))
    xy = to_xy(q)
    tri = mtri.Triangulation(xy[:, 0], xy[:, 1])
    fig, axes = page_figure(len(risks), 3.3, layout="constrained")
    for ax, (name, r) in zip(axes, risks.items()):
        _triangle(ax)
        ax.tricontour(tri, r, levels=np.percentile(r, percentiles), colors=["C0", "C1", "C2"])
        ax.plot(*to_xy(p), "k*", ms=8)
        ax.set_title(name, fontsize=9, pad=14)
    return fig


def _arrows(ax, start, end, title):
    _triangle(ax)
    a, b = to_xy(start), to_xy(end)
    ax.quiver(a[:, 0], a[:, 1], b[:, 0] - a[:, 0], b[:, 1] - a[:, 1], angles="xy",
              scale_units="xy", scale=1, width=0.004, color="C0")
    ax.set_title(title, fontsize=9, pad=14)


def figure5(report, gammas=(1.0, 3.0), resolution=10):
    """Fig. 5: arrows q -> FC(q) (top) and q -> TS(q) with the closest T (bottom)."""
    q = simplex_grid(resolution)
    fig, axes = plt.subplots(2, len(gammas), figsize=(PAGE_WIDTH, 6.9), layout="constrained", squeeze=False)
    for col, g in enumerate(gammas):
        t = report["ternary_closest"][g]
        _arrows(axes[0, col], q, focal_calibration_map(q, g), f"focal calibration, γ={g:g}")
        _arrows(axes[1, col], q, softmax(np.log(q) / t, -1), f"temperature scaling, T={t:.3f}")
    return fig


def figure6(report):
    """Fig. 6: closest 1/T against gamma (3 and 4 classes) and the max deviation."""
    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    for key, n, paper in [("ternary_fit", 3, (0.64, 0.91)), ("quaternary_fit", 4, (0.47, 0.85))]:
        fit = report[key]
        line = a.plot(fit["gammas"], 1 / fit["T"], "o", ms=3, label=f"{n} classes")[0]
        x = np.array([0.0, fit["gammas"].max()])
        a.plot(x, paper[0] * x + paper[1], ls="--", color=line.get_color(),
               label=f"paper: {paper[0]}γ + {paper[1]}")
        b.plot(fit["gammas"], fit["dev"], "o-", ms=3, color=line.get_color(), label=f"{n} classes")
    a.set(xlabel="γ", ylabel="closest 1/T")
    b.set(xlabel="γ", ylabel="max |FC − TS| (probability)")
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    return fig


def figure7(report, pairs=((0.5, 0.8), (2.0, 0.46))):
    """Fig. 7: top-class probability after FC minus after TS, over the simplex."""
    q = simplex_grid(report["sizes"]["simplex_res"])
    xy = to_xy(q)
    tri = mtri.Triangulation(xy[:, 0], xy[:, 1])
    fig, axes = page_figure(len(pairs), 3.4, layout="constrained")
    top = np.argmax(q, -1)[:, None]
    for ax, (g, t) in zip(axes, pairs):
        d = (np.take_along_axis(focal_calibration_map(q, g), top, -1)
             - np.take_along_axis(softmax(np.log(q) / t, -1), top, -1))[:, 0]
        _triangle(ax)
        m = ax.tripcolor(tri, d, shading="gouraud", cmap="coolwarm",
                         vmin=-np.abs(d).max(), vmax=np.abs(d).max())
        fig.colorbar(m, ax=ax, shrink=0.7)
        ax.set_title(f"FC(γ={g:g}) − TS(T={t:g}), top class", fontsize=9, pad=14)
    return fig
