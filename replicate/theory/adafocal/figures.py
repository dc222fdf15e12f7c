"""The figures of the AdaFocal theory chapter (Ghosh et al. 2022, {cite}`ghosh2022adafocal`).

Each function takes the report of :func:`replicate.theory.adafocal.claims.report` (its
``data``) and returns a matplotlib ``Figure`` whose title says what produced it.

- :func:`figure_3a` -- the CalFocal loss against ``p`` (their Fig. 3a);
- :func:`push_figure` -- slope of that curve against the gradient training uses (Figure D);
- :func:`shrink_figure` -- where a larger gamma shrinks the gradient (footnote 2, Figure G);
- :func:`dynamics_figure` -- gamma under simulated gap sequences (Figure E);
- :func:`closed_loop_figure` -- the closed-loop toy (Figure F).
"""
from __future__ import annotations

import matplotlib.ticker
import matplotlib.pyplot as plt
import numpy as np

from ...plots import PAGE_WIDTH, legend_clear_of_data
from ...plots.lint import keep_limits
from ..focal_loss.gradient import gradient_factor_dgamma, gradient_threshold
from .claims import RULES
from .dynamics import calfocal_gamma

__all__ = ["figure_3a", "push_figure", "shrink_figure", "dynamics_figure", "closed_loop_figure"]


def figure_3a(rep):
    """The CalFocal loss (Eq. 1) of ``rp.losses`` with every bin accuracy 0.8, and cross-entropy."""
    d = rep.data["calfocal"]
    p = d["p"]
    fig, ax = plt.subplots(figsize=(6.0, 4))
    ax.plot(p, -np.log(p), color="grey", ls="--", label="cross-entropy")
    for lam, curve in d["curves"].items():
        ax.plot(p, curve, label=f"CalFocal λ = {lam:g}")
    ax.axvline(0.8, color="grey", lw=0.6, ls=":")
    ax.set(xlabel="p (true-class probability)", ylabel="loss", ylim=(0, 1.5),
           title=f"Fig. 3a regenerated: CalFocal loss, A_val = 0.8 (rp.losses, {len(p)} points; profile {rep.profile})")
    ax.legend()
    keep_limits(ax, "the losses diverge as p → 0: the axis shows losses up to 1.5", axis="y")
    return fig


def push_figure(rep):
    """For lambda = 100: minus the slope of the plotted curve, the detached-gamma push, and CE's 1/p."""
    d = rep.data["calfocal"]
    p, sl = d["p"], d["slopes"]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    ax.plot(p, -sl["curve"], label="slope of the plotted curve, -dL/dp")
    ax.plot(p, -sl["detached"], label="what training uses, g(p, γ_n)/p")
    ax.plot(p, 1 / p, color="grey", ls="--", label="cross-entropy, 1/p")
    ax.set(xlabel="p", ylabel="push towards larger p", ylim=(0, 12), xlim=(0.5, 1))
    ax.set_title(f"Figure D: CalFocal λ = 100, A_val = 0.8 (formula; profile {rep.profile})", pad=10)
    keep_limits(ax, "1/p and the pushes diverge as p → 0: a zoom on p in [0.5, 1] and pushes up to 12")
    ax.legend(loc="upper right")
    legend_clear_of_data(ax)
    return fig


def shrink_figure(rep, slope_gammas=(0.5, 1, 2, 5)):
    """(a) The p above which a larger gamma shrinks g, and the p where g crosses 1, against gamma;
    (b) ``dg/dgamma`` against p."""
    d = rep.data["shrink"]
    gam, thr = d["gamma"], d["threshold"]
    fig, (a, b) = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 6.6), layout="constrained")
    a.plot(gam, thr, label="larger γ shrinks g above this p (∂g/∂γ = 0)")
    a.plot(gam[gam > 0], gradient_threshold(gam[gam > 0]), ls="--", label="g(p, γ) = 1 (Mukhoti's p0)")
    a.axhspan(0.15, 0.25, color="grey", alpha=0.15, label="footnote 2: p ≈ 0.2")
    a.axvline(1.0, color="grey", lw=0.6, ls=":")
    a.set(xlabel="γ", ylabel="p", ylim=(0, 0.55), title=f"(a) thresholds against γ ({len(gam)} values)")
    a.legend(fontsize=8)
    p = np.linspace(0.001, 0.999, 999)
    for g in slope_gammas:
        b.plot(p, gradient_factor_dgamma(p, g), label=f"γ = {g}")
    b.axhline(0, color="grey", lw=0.8)
    b.axvline(0.2, color="grey", lw=0.6, ls=":")
    b.set(xlabel="p", ylabel="∂g/∂γ", title="(b) > 0: a larger γ enlarges the gradient")
    b.legend(fontsize=8)
    fig.suptitle(f"Figure G: does a larger γ give smaller gradients? (formulas; profile {rep.profile})", fontsize=10)
    return fig


def dynamics_figure(rep, calfocal_lam: float = 10.0):
    """Gap sequences (top) and gamma under Eq. 3, Eq. 4, the authors' code and CalFocal (bottom)."""
    d = rep.data["adafocal"]
    epochs, scen, traj = d["epochs"], d["scenarios"], d["trajectories"]
    style = {"Eq. 3 (no cap)": dict(lw=3.5, alpha=0.45), "Eq. 4 (paper)": dict(lw=2, ls="--"),
             "authors' code": dict(lw=1.2)}
    # one row per scenario (the page is narrow): the gaps left, gamma right
    fig, axes = plt.subplots(len(scen), 2, figsize=(PAGE_WIDTH, 2.3 * len(scen) + 0.8), sharex=True,
                             sharey="col", squeeze=False, layout="constrained")
    for j, (s, gaps) in enumerate(scen.items()):
        axes[j, 0].plot(np.arange(1, epochs + 1), gaps, color="k")
        axes[j, 0].axhline(0, color="grey", lw=0.6)
        axes[j, 0].set(title=f"{s}: gap E_t", ylim=(-0.4, 0.4))
        keep_limits(axes[j, 0], "one scale for the gaps of every scenario", axis="y")
        for r in RULES:
            axes[j, 1].plot(np.arange(epochs + 1), traj[(s, r)], label=r, **style[r])
        axes[j, 1].plot(np.arange(1, epochs + 1), calfocal_gamma(gaps, calfocal_lam), ls=":", color="grey",
                        label=f"CalFocal Eq. 2, λ = {calfocal_lam:g}")
        axes[j, 1].set_yscale("symlog", linthresh=0.2)
        axes[j, 1].yaxis.set_major_locator(matplotlib.ticker.SymmetricalLogLocator(base=10, linthresh=1))
        axes[j, 1].set(title=f"{s}: γ_t")
    axes[-1, 0].set(xlabel="epoch")
    axes[-1, 1].set(xlabel="epoch")
    axes[0, 1].legend(fontsize=8)
    fig.suptitle("Figure E: γ dynamics on simulated gaps (rp.losses.adafocal_gamma_update; "
                 f"symmetric log scale, linear inside ±0.2; profile {rep.profile})", fontsize=10)
    return fig


def closed_loop_figure(rep):
    """gamma_t of the closed-loop toy for each lambda, with the zero-gap gamma."""
    d = rep.data["loop"]
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for lam, r in d["loops"].items():
        ax.plot(r["gamma"], label=f"λ = {lam} (factor {d['factors'][lam]:+.2f})", lw=0.8 if lam >= 30 else 2)
    ax.axhline(d["g_star"], color="grey", ls="--", lw=0.8, label="γ° (zero gap)")
    ax.set(xlabel="epoch", ylabel="γ_t", yscale="log",
           title=f"Figure F: closed-loop toy, A_train = 0.99, A_val = 0.90 (Eq. 4 with λ; profile {rep.profile})")
    ax.legend(fontsize=8)
    legend_clear_of_data(ax)
    return fig
