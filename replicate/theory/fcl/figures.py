"""Figures of the focal calibration loss chapter (Liang et al.), from :mod:`.loss`."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ...plots import legend_below, page_figure
from .loss import fcl_risk_minimizer

__all__ = ["binary_minimizer_curves", "binary_minimizer_figure"]


def binary_minimizer_curves(etas, gammas, lams, *, brier: str = "sum") -> pd.DataFrame:
    """``q*_1`` against ``eta_1`` for every (gamma, lambda) (long format; exact KKT minimiser)."""
    e = np.asarray(etas, dtype=float)
    eta = np.stack([e, 1 - e], -1)
    frames = [pd.DataFrame({"gamma": float(g), "lambda": float(lv), "eta": e,
                            "q*": fcl_risk_minimizer(eta, g, lv, brier=brier)[:, 0]})
              for g, lv in itertools.product(gammas, lams)]
    return pd.concat(frames, ignore_index=True)


def binary_minimizer_figure(etas, gammas=(1.0, 2.0, 3.0), lams=(0.0, 0.5, 1.0, 2.0, 4.0), *, profile: str = ""):
    """The minimiser of the two-class FCL risk against ``eta_1``, one panel per gamma."""
    curves = binary_minimizer_curves(etas, gammas, lams)
    fig, axes = page_figure(len(gammas), 3.2, sharey=True, layout="constrained")
    for ax, (g, sub) in zip(np.atleast_1d(axes), curves.groupby("gamma")):
        for lam, s in sub.groupby("lambda"):
            ax.plot(s["eta"], s["q*"], label=f"λ = {lam:g}" + (" (focal)" if lam == 0 else ""))
        ax.plot(s["eta"], s["eta"], color="grey", lw=0.8, ls="--", label="$q^* = \\eta$")
        ax.set(xlabel=r"$\eta_1$", title=f"$\\gamma = {g:g}$")
    np.atleast_1d(axes)[0].set_ylabel("$q^*_1$")
    legend_below(fig, np.atleast_1d(axes)[-1], ncols=3)
    fig.suptitle(f"Minimiser of the FCL conditional risk, two classes, Brier summed (exact KKT; profile {profile})")
    return fig
