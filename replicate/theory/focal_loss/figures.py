"""The figures of the focal-loss theory chapter (Mukhoti et al. 2020, {cite}`mukhoti2020focal`).

Each function returns a matplotlib ``Figure`` whose title says what produced it. Figures of
formulas take the grid size; figures of checks take the report of
:func:`replicate.theory.focal_loss.claims.report` (its ``data``), so nothing is computed twice.

- :func:`prop1_figure` -- autograd gradient ratios against ``g(p, 3)``;
- :func:`figure_4a` -- ``g(p, gamma)`` (their Fig. 4a) and its slope ``dg/dp`` (Eq. 7);
- :func:`lambert_figure` -- ``gamma*(p0)``, closed form against root finder, and both branches;
- :func:`schedule_figure` -- the gradient factor of FLSD-53 and FLSD-532;
- :func:`figure_7` -- the binary focal risk minimiser; :func:`many_classes_figure` -- K = 100;
- :func:`figure_5`, :func:`figure_6` -- the linear model of Appendix G.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ...plots import PAGE_WIDTH, legend_clear_of_data, page_figure
from ...plots.lint import keep_limits
from .gradient import focal_gradient_factor, gradient_factor_dp, gradient_threshold
from .lambert import lambert_w_gamma_branches

__all__ = ["prop1_figure", "figure_4a", "lambert_figure", "schedule_figure", "figure_7", "many_classes_figure",
           "figure_5", "figure_6", "FIG4A_GAMMAS"]

FIG4A_GAMMAS = (0, 1, 2, 3, 4, 5, 7)


def prop1_figure(rep):
    """Autograd ratio ``<grad_FL, grad_CE> / |grad_CE|^2`` per image against ``g(p, 3)``."""
    d = rep.data["prop1"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    pp = np.linspace(1e-4, 1 - 1e-4, 400)
    ax.plot(pp, focal_gradient_factor(pp, 3.0), color="k", lw=1, label="g(p, 3), formula")
    ax.scatter(d["p"][d["keep"]], d["ratio"][d["keep"]], s=18, color="C1", label="autograd ratio, one image each")
    ax.set(xlabel="p (probability of the true class)", ylabel="grad_FL / grad_CE",
           title=f"Prop. 1 on tiny_cnn's last layer (untrained, random images; profile {rep.profile})")
    ax.legend()
    return fig


def _profile(profile) -> str:
    return f"; profile {profile}" if profile else ""


def figure_4a(n_grid: int = 2001, gammas=FIG4A_GAMMAS, slope_gammas=(0.5, 1, 3), profile: str | None = None):
    """(a) ``g(p, gamma)`` from the formula (their Fig. 4a); (b) its slope, Eq. 7."""
    p = np.linspace(0, 1, n_grid)
    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    for gam in gammas:
        a.plot(p, focal_gradient_factor(p, gam), label=f"γ = {gam}")
    a.axhline(1, color="grey", lw=0.8, ls="--")
    a.set(xlabel="p", ylabel="g(p, γ)", ylim=(0, 1.6), title=f"(a) Fig. 4a regenerated ({n_grid} points)")
    a.legend(ncol=2)
    legend_clear_of_data(a)
    inner = p[1:-1]
    for gam in slope_gammas:
        b.plot(inner, gradient_factor_dp(inner, gam), label=f"γ = {gam}")
    b.axhline(0, color="grey", lw=0.8)
    b.set(xlabel="p", ylabel="dg/dp (Eq. 7)", ylim=(-6, 3), title="(b) the slope: for γ > 1 it returns to 0 at p = 1")
    b.legend()
    keep_limits(b, "dg/dp diverges at the ends of [0, 1] for some γ: the axis shows where the slopes differ",
                axis="y")
    fig.suptitle(f"g(p, γ) and its slope, from the formulas{_profile(profile)}", fontsize=10)
    return fig


def lambert_figure(rep):
    """``gamma*`` against ``p0`` (closed form and Brent) and both Lambert-W branches."""
    d = rep.data["prop2"]
    pw = np.linspace(0.01, 0.99, 393)
    low, princ = lambert_w_gamma_branches(pw)
    fig, axes = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.2), layout="constrained")
    step = max(1, len(d["p0"]) // 20)
    axes[0].semilogy(d["p0"], d["closed"], label="closed form (W₋₁)")
    axes[0].semilogy(d["p0"][::step], d["root"][::step], "o", ms=4, mfc="none", label="root finder")
    axes[0].set(xlabel="threshold p0", ylabel="γ*", title="γ* with g(p0, γ*) = 1")
    axes[1].plot(pw, low, label="W₋₁ branch")
    axes[1].plot(pw, princ, label="W₀ branch")
    axes[1].axvline(0.5, color="grey", lw=0.8, ls="--")
    axes[1].set(xlabel="p0", ylabel="γ from Eq. 11/12", ylim=(-2, 6), title="both branches")
    for a in axes:
        a.legend()
    keep_limits(axes[1], "the W₋₁ branch diverges as p0 → 0 and 1: the axis shows γ in [-2, 6]", axis="y")
    fig.suptitle(f"Figure A: Prop. 2 closed form vs Brent root finder (formulas only; profile {rep.profile})",
                 fontsize=10)
    return fig


def schedule_figure(n_grid: int = 2001, profile: str | None = None):
    """Gradient factor ``g(p, gamma(p))`` of FLSD-53 and FLSD-532, with the crossing points of 5 and 3."""
    pp = np.linspace(1e-4, 1 - 1e-4, n_grid)
    flsd53 = np.where(pp < 0.2, 5.0, 3.0)
    flsd532 = np.where(pp < 0.2, 5.0, np.where(pp < 0.5, 3.0, 2.0))
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(pp, focal_gradient_factor(pp, flsd53), label="FLSD-53 (5 below 0.2, 3 above)")
    ax.plot(pp, focal_gradient_factor(pp, flsd532), ls="--", label="FLSD-532 (…, 2 above 0.5)")
    ax.axhline(1, color="grey", lw=0.8, label="cross-entropy (g = 1)")
    for pc in (gradient_threshold(5.0), gradient_threshold(3.0)):
        ax.axvline(pc, color="grey", lw=0.6, ls=":")
    ax.set(xlabel="p", ylabel="g(p, γ(p))", ylim=(0, 1.4))
    ax.set_title(f"Figure B: gradient factor of the sample-dependent schedules (formula{_profile(profile)})", pad=10)
    ax.legend()
    return fig


def figure_7(rep):
    """The binary focal risk minimiser against ``p`` (their Fig. 7)."""
    d = rep.data["fig7"]
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    for gam, q in d["q"].items():
        ax.plot(d["p"], q, label="cross-entropy (γ = 0)" if gam == 0 else f"focal γ = {gam}")
    ax.set(xlabel="p (true probability of class 1)", ylabel="optimal q",
           title=f"Fig. 7 regenerated: focal risk minimiser, K = 2 (profile {rep.profile})")
    ax.legend()
    return fig


def many_classes_figure(rep):
    """``q1* - eta_1`` against the top-class probability for K = 100 (positive: over-confident)."""
    d = rep.data["many"]
    a = np.asarray(d["a"])
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for gam, over in d["over"].items():
        ax.plot(a, over, label=f"γ = {gam}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(xlabel="a = top-class probability η₁", ylabel="q₁* - η₁",
           title=f"Figure C: over-confidence of the focal minimiser, K = 100 (formula; profile {rep.profile})")
    zoom = many_classes_zoom(a, d["over"])
    if zoom is not None:                    # the over-confident range, at a y scale that shows it
        x_hi, reason = zoom
        seen = np.concatenate([np.asarray(o)[a <= x_hi] for o in d["over"].values()])
        pad = 0.08 * (seen.max() - seen.min())
        ax.set(xlim=(0, x_hi), ylim=(seen.min() - pad, seen.max() + pad),
               xlabel=f"a = top-class probability η₁ (a > {x_hi:.2f}, not shown: every curve < 0)")
        keep_limits(ax, reason)
    ax.legend()
    return fig


def many_classes_zoom(a, over: dict):
    """``(x_hi, reason)`` for Figure C: the view ends a little past the largest ``a`` at which
    any curve ``q₁* - η₁`` of ``{gamma: values}`` is positive, when every curve stays below 0
    beyond it (so the part left out holds under-confidence only, and the reason says how
    deep); None when there is nothing to zoom on (no positive value, or a positive one
    beyond the view)."""
    a = np.asarray(a, dtype=np.float64)
    pos = [a[np.asarray(o) > 0] for o in over.values()]
    if not any(p.size for p in pos):
        return None
    a_max = max(p.max() for p in pos if p.size)
    x_hi = min(1.0, math.ceil(a_max * 1.25 / 0.05) * 0.05)
    rest = [np.asarray(o)[a > x_hi] for o in over.values()]
    if x_hi >= a.max() or any((r >= 0).any() for r in rest):
        return None
    low = min(r.min() for r in rest)
    return x_hi, (f"zoomed on a ≤ {x_hi:.2f}: the minimiser is over-confident up to a = {a_max:.3f}; beyond the "
                  f"view every curve is below 0 (under-confident, down to {low:.2f})")


def figure_5(rep):
    """Norms of the training logits and of the weights along gradient descent (their Fig. 5)."""
    runs = rep.data["linear"]["runs"]
    fig, axes = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.0), layout="constrained")
    for name, r in runs.items():
        axes[0].plot(r["steps"], r["logit_norm"], label=name)
        axes[1].plot(r["steps"], r["weight_norm"], label=name)
    labels = (("‖Xw‖ (training logits)", "(a) norm of logits"), ("‖w‖", "(b) norm of weights"))
    for ax, (lab, ttl) in zip(axes, labels):
        ax.set_xscale("symlog", linthresh=10)
        ax.set(xlabel="iteration (symmetric log scale)", ylabel=lab, title=ttl)
    axes[0].legend()
    n = len(rep.data["linear"]["y"])
    fig.suptitle(f"Fig. 5 regenerated: logistic regression, {n} synthetic points, 10% flipped labels, seed 0 "
                 f"(profile {rep.profile})", fontsize=10)
    return fig


def figure_6(rep):
    """(a) Confidence of the misclassified test points; (b, c) decision boundaries (their Fig. 6)."""
    d = rep.data["linear"]
    fig, axes = page_figure(3, 3.2, layout="constrained")
    axes[0].hist([d["mistakes"]["ce"], d["mistakes"]["focal"]], bins=np.linspace(0.5, 1, 21), label=["ce", "focal"])
    axes[0].set(xlabel="confidence of misclassified test points", ylabel="count", title="(a)")
    axes[0].legend()
    legend_clear_of_data(axes[0])
    grid = np.linspace(-3, 3, 121)
    g1, g2 = np.meshgrid(grid, grid)
    for ax, name, tag in zip(axes[1:], ("ce", "focal"), "bc"):
        w = d["runs"][name]["w"]
        ax.contourf(g1, g2, 1 / (1 + np.exp(-(w[0] * g1 + w[1] * g2))), levels=np.linspace(0, 1, 11),
                    cmap="RdBu_r", alpha=0.45)
        for lab, face in ((0, "white"), (1, "black")):
            ax.scatter(*d["X"][d["y"] == lab].T, s=7, c=face, edgecolor="k", linewidth=0.3, label=f"label {lab}")
        ax.plot(grid, -w[0] / w[1] * grid, color="k")
        ax.set(xlim=(-3, 3), ylim=(-3, 3), title=f"({tag}) {name}: f_w(x)")
        keep_limits(ax, "the plane [-3, 3]² of the data; the boundary line runs across it")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    fig.suptitle("Fig. 6 regenerated: confidence of mistakes and decision boundaries (same synthetic data, "
                 f"test seed 1; colour = predicted probability of class 1; profile {rep.profile})", fontsize=10)
    return fig
