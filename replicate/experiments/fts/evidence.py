"""The numbers the claims of ``exp_fts`` (Komisarenko & Kull 2024) are tested on: a summary
frame of :func:`replicate.comparison.summarise_posthoc` with a ``block`` column (the data
set). Ours (:func:`ours_frame`) has one block, the paper's Table 1 (:func:`paper_frame`)
three (CIFAR-100, CIFAR-10, TinyImageNet), and a claim about "all models" must hold in every
block (:mod:`.rules`).
"""
from __future__ import annotations

import pandas as pd

from ... import comparison as cmp
from .plan import GAMMA_TR, PAPER, check_grid

#: label of the paper's evidence (all three data sets of Table 1)
PAPER_LABEL = "paper: Table 1 (CIFAR-100, CIFAR-10, TinyImageNet; ResNet-50)"


def run_evidence(runs: dict, grid: str = "code", link: str = "intended", log=None):
    """Our runs as the claims' noise tests read them: a
    :class:`~replicate.comparison.noise.RunEvidence` whose settings ``"ts:SELECT"`` and
    ``"fts:SELECT"`` (SELECT ``nll`` or ``adaece``) hold each run's test probabilities after
    TS and after FTS with the parameters :func:`replicate.comparison.evaluate_posthoc` chose
    by that validation criterion, and whose frame gives those temperatures (``metric`` =
    SELECT), as :func:`ours_frame`'s numbers used them."""
    import math

    import numpy as np

    from ... import metrics as _m
    from ...comparison import board, noise
    from ...posthoc.fts import fts_log_probs

    raw = cmp.evaluate_posthoc(runs, grid=check_grid(grid), link=link, log=log)
    fits = raw[raw["posthoc"].isin(["ts", "fts"]) & raw["select"].isin(["nll", "adaece"])]
    fits = fits.drop_duplicates(["method", "seed", "posthoc", "select"])
    cells, temps = {}, []
    for r in fits.to_dict("records"):
        z, y = runs[(r["method"], r["seed"])].logits("test")
        z, y, fts = np.asarray(z, dtype=np.float64), np.asarray(y, dtype=np.int64), r["posthoc"] == "fts"
        lp = fts_log_probs(z, r["T"], r["gamma"]) if fts else _m._log_softmax(z / r["T"])
        cells[(r["method"], r["seed"], f"{r['posthoc']}:{r['select']}")] = board.Calibrated(
            r["posthoc"], np.exp(lp), y, lp[np.arange(len(y)), y], None, float(r["T"]),
            float(r["gamma"]) if fts else math.nan)
        if not fts:
            temps.append({"method": r["method"], "seed": r["seed"], "metric": r["select"], "temperature_scaled": True,
                          "T": float(r["T"])})
    run = next(iter(runs.values()))
    ev = noise.RunEvidence(runs, pd.DataFrame(temps), f"{run.resolved['dataset']}, {run.resolved['model']}")
    ev.board = cells
    return ev


def ours_frame(runs: dict, block: str, grid: str = "code", link: str = "intended", log=None) -> pd.DataFrame:
    """Our evidence for the rules: :func:`replicate.comparison.summarise_posthoc` of the runs
    ``{(method, seed): Run}`` (TS and FTS, chosen by validation log-loss and by equal-mass
    ECE on ``grid``) with ``block`` (the data set), plus Fig. 8's rows (``posthoc`` "path",
    ``metric`` "T"): per focal-loss model and gamma_ev, the T chosen by validation
    equal-mass ECE, mean and sd over seeds."""
    frame = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, grid=check_grid(grid), link=link, log=log))
    paths = cmp.optimal_temperatures({k: r for k, r in runs.items() if k[0] in GAMMA_TR}, "adaece", grid=grid,
                                     link=link)
    if len(paths):
        g = paths.groupby(["method", "gamma"], sort=False)["T"]
        p = g.agg(mean="mean", std="std").reset_index().assign(posthoc="path", select="adaece", link=link,
                                                               metric="T", n_seeds=g.size().to_numpy())
        p["T"], p["T_std"] = p["mean"], p["std"]
        frame = pd.concat([frame, p], ignore_index=True)
    return frame.assign(block=block)


def paper_frame() -> pd.DataFrame:
    """The paper's Table 1 (all three data sets) in the layout of :func:`ours_frame` (``block`` = data set)."""
    df = cmp.paper_posthoc(PAPER)
    return df.assign(block=df["dataset"])
