"""Figures of the dual focal loss chapter (Tao et al. 2023), from :mod:`.loss` and
:mod:`.study`. Every function returns a matplotlib ``Figure`` whose title says
how it was computed; ``profile`` is printed in it."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import PAGE_WIDTH, legend_below, page_figure
from .loss import dual_focal_phi, phi_key_points
from .study import LOSSES, region_grid

__all__ = ["phi_figure", "region_figure", "binary_minimizer_figure"]


def phi_figure(gamma: float = 1.0, c: float = 0.3, *, profile: str = ""):
    """Fig. 1 regenerated: ``phi`` for FL (``C = 0``) and DFL (``C = q_j``) with ``v_m``,
    ``v'`` and ``v_uc`` of the DFL curve (bisection; closed forms at ``gamma = 1``)."""
    kp = {k: float(x) for k, x in phi_key_points(gamma, c).items()}
    v = np.linspace(0, 1, 1001)
    fig, ax = plt.subplots()
    ax.plot(v, dual_focal_phi(v, gamma, 0.0), label="FL ($C = 0$)")
    ax.plot(v, dual_focal_phi(v, gamma, c), label=f"DFL ($C = q_j = {c:g}$)")
    for x, lab, col in [(kp["v_m"], "$v_m$", "k"), (kp["v_prime"], "$v'$", "C0"),
                        (kp["v_uc"], "$v_{uc}$ (DFL)", "C1")]:
        ax.axvline(x, ls=":", color=col)
        ax.text(x + 0.01, 0.05, lab, color=col)
    ax.axhline(1.0, lw=0.8, color="grey")
    ax.axhline((1 + c) ** gamma, lw=0.8, ls="--", color="C1")
    ax.set(xlabel="$v = q^*_m$", ylabel=r"$\phi(v)$",
           title=f"Tao et al. Fig. 1 regenerated: $\\gamma = {gamma:g}$ (closed-form curves; profile {profile})")
    ax.legend()
    return fig


def region_figure(gammas, cs, *, profile: str = ""):
    """The shift of the eta-UC region start with ``C``: ``v_uc(gamma, C) - v_uc(gamma, 0)``
    on a grid (left) and, for three ``C``, against the paper's ``phi^-1(1) - phi^-1((1+C)^gamma)``."""
    gam, cs = np.asarray(gammas, float), np.asarray(cs, float)
    red = region_grid(gam, cs)["reduction_vs_focal"].to_numpy().reshape(gam.size, cs.size)
    fig, axes = plt.subplots(2, 1, figsize=(PAGE_WIDTH, 7.0), layout="constrained")
    im = axes[0].pcolormesh(cs, gam, red, shading="auto", cmap="viridis")
    fig.colorbar(im, ax=axes[0], pad=0.02)
    axes[0].set(xlabel="$C = q_j$", ylabel=r"$\gamma$", title="$v_{uc}(\\gamma, C) - v_{uc}(\\gamma, 0)$ (vs FL)")
    for c in (0.1, 0.3, 0.5):
        sub = region_grid(gam, [c])
        line = axes[1].plot(gam, sub["reduction_vs_focal"], label=f"vs FL, C = {c}")[0]
        axes[1].plot(gam, sub["reduction_paper"], ls="--", color=line.get_color(), label=f"paper's formula, C = {c}")
    axes[1].set(xlabel=r"$\gamma$", ylabel="reduction", title="two ways to measure it")
    legend_below(fig, axes[1], ncols=3)
    fig.suptitle(f"η-UC region start from φ alone (bisection on a {gam.size}×{cs.size} grid; profile {profile})")
    return fig


def binary_minimizer_figure(curves: dict, thresholds: dict, *, profile: str = ""):
    """``q*_1`` against ``eta_1`` for two classes, one panel per gamma (``curves[gamma]`` from
    :func:`~replicate.theory.dual_focal.study.binary_minimizer_curve`); the dotted line is
    the strict-tie threshold ``thresholds[gamma]``."""
    fig, axes = page_figure(len(curves), 3.2, sharey=True, layout="constrained")
    for ax, (g, curve) in zip(np.atleast_1d(axes), curves.items()):
        for col in LOSSES:
            ax.plot(curve["eta"], curve[col], label=col)
        ax.plot(curve["eta"], curve["eta"], color="grey", lw=0.8, label="$q^* = \\eta$")
        ax.axvline(thresholds[g], ls=":", color="C1")
        ax.set(xlabel=r"$\eta_1$", title=f"$\\gamma = {g:g}$")
    np.atleast_1d(axes)[0].set_ylabel("$q^*_1$")
    legend_below(fig, np.atleast_1d(axes)[-1], ncols=3)
    fig.suptitle(f"Binary conditional-risk minimisers (FL: exact KKT; DFL: scalar search on each side of "
                 f"the tie; profile {profile})")
    return fig
