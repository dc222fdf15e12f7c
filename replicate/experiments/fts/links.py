"""The FTS chapter's look at the authors' focal link (the book's page "The authors' code", its defects): what its
overflow guard and its probability clamp change on our models, and which map the paper's
printed numbers most likely used.

- :func:`link_frame`: TS and FTS of every run with the intended map and with the authors'
  link (:func:`replicate.posthoc.fts.authors_focal_link`), per seed.
- :func:`link_table`: per model, the (gamma_ev, T) chosen by validation log-loss and by
  validation equal-mass ECE, and the test metrics, under both maps.
- :func:`pair_changes`: per (model, seed, gamma_ev), the T each map chooses; how often they
  differ and how often the authors' link picks the grid's smallest T.
- :func:`clamp_effect`: what clipping the probabilities to [1e-12, 1 - 1e-12] changes.
- :func:`confident_demo`: the same comparison on synthetic logits of a confident model.
- :func:`printed_link`: the evidence on the printed table, and the conclusion drawn from it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...posthoc.fts import AUTHORS_CLAMP, fts_log_probs

LINK_NAMES = {"intended": "intended map", "authors": "authors' link"}


def link_frame(runs: dict, grid: str = "code", log=None) -> pd.DataFrame:
    """:func:`replicate.comparison.evaluate_posthoc` of ``runs`` with the intended map (TS and
    FTS) and with the authors' link (FTS), selections by log-loss and equal-mass ECE, test
    accuracy, log-loss and equal-mass ECE, one frame (column ``link``)."""
    kw = dict(grid=grid, select=("nll", "adaece"), metrics=("accuracy", "nll", "adaece"))
    ours = cmp.evaluate_posthoc(runs, posthoc_settings=("ts", "fts"), log=log, **kw)
    theirs = cmp.evaluate_posthoc(runs, posthoc_settings=("fts",), link="authors", log=log, **kw)
    return pd.concat([ours, theirs], ignore_index=True)


def link_table(frame: pd.DataFrame, methods) -> pd.DataFrame:
    """Per model (rows) and map (column groups): for each selection, the gamma_ev chosen most
    often, the mean T and the test metric it is chosen for (log-loss / equal-mass ECE), the
    test accuracy, and the test rows the authors' guard rewrote (mean over seeds)."""
    summ = cmp.summarise_posthoc(frame)
    over = frame.groupby(["method", "link", "posthoc", "select"])["overflowed"].mean()
    rows = {}
    for m in methods:
        row = {}
        for link in ("intended", "authors"):
            for sel, metric in (("nll", "nll"), ("adaece", "adaece")):
                head = (LINK_NAMES[link], f"by {'log-loss' if sel == 'nll' else 'ECE'}")
                r = summ[(summ["method"] == m.key) & (summ["link"] == link) & (summ["posthoc"] == "fts")
                         & (summ["select"] == sel)].set_index("metric")
                if r.empty:
                    continue
                digits = 3 if metric == "nll" else 2
                row[head + ("γ_ev, T",)] = f"{r.loc[metric, 'gamma']:g}, {r.loc[metric, 'T']:.2f}"
                row[head + ("test " + ("log-loss" if metric == "nll" else "ECE %"),)] = \
                    f"{r.loc[metric, 'mean']:.{digits}f}"
                row[head + ("accuracy %",)] = f"{r.loc['accuracy', 'mean']:.2f}"
                if link == "authors":
                    row[head + ("rows rewritten",)] = f"{over.get((m.key, link, 'fts', sel), math.nan):.0f}"
        rows[m.label] = row
    out = pd.DataFrame(rows).T
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "model"
    return out


def pair_changes(runs: dict, grid: str = "code") -> pd.DataFrame:
    """Per (method, seed, gamma_ev, selection): the T the intended map and the authors' link
    choose on the validation set (columns ``T_intended``, ``T_authors``), whether they
    differ, whether the authors' T is the grid's smallest, and the validation rows its
    guard rewrote at that T."""
    temps, _ = cmp.resolve_grid(grid)
    frames = []
    for sel in ("nll", "adaece"):
        a = cmp.optimal_temperatures(runs, sel, grid=grid)
        b = cmp.optimal_temperatures(runs, sel, grid=grid, link="authors")
        m = a.merge(b, on=["method", "seed", "gamma"], suffixes=("_intended", "_authors"))
        over = []
        for r in m.itertuples():
            s = cmp.fts_search(runs[(r.method, r.seed)], sel, grid=grid, link="authors")
            hit = s[np.isclose(s["gamma"], r.gamma) & np.isclose(s["T"], r.T_authors)]
            over.append(float(hit["overflowed"].iloc[0]) if len(hit) else math.nan)
        frames.append(m.assign(select=sel, overflowed=over))
    out = pd.concat(frames, ignore_index=True)
    out["differs"] = ~np.isclose(out["T_intended"], out["T_authors"])
    out["at_grid_min"] = np.isclose(out["T_authors"], temps.min())
    return out[["method", "seed", "gamma", "select", "T_intended", "T_authors", "differs", "at_grid_min",
                "overflowed"]]


def pair_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per selection: the number of (model, seed, gamma_ev) fits, how many choose a different T
    under the authors' link, and how many of those land on the grid's smallest T."""
    g = pairs.groupby("select", sort=False)
    return pd.DataFrame({"fits": g.size(), "different T": g["differs"].sum(),
                         "authors' T at the grid minimum": g["at_grid_min"].sum()})


def clamp_effect(logit_sets: dict, gammas=None, T: float = 1.0, clamp: float = AUTHORS_CLAMP) -> pd.DataFrame:
    """Per gamma_ev (rows) and set of logits (columns, ``{label: (N, C) logits}``): the largest
    change of any probability when ``q`` is clipped to ``[clamp, 1 - clamp]`` before the focal
    map (the authors' clamp), at temperature ``T``."""
    from ...posthoc import FTS_GAMMAS

    out = {}
    for label, z in logit_sets.items():
        col = {}
        for g in FTS_GAMMAS if gammas is None else gammas:
            exact = np.exp(fts_log_probs(z, T, g))
            col[g] = float(np.abs(np.exp(fts_log_probs(z, T, g, clamp)) - exact).max())
        out[label] = col
    frame = pd.DataFrame(out)
    frame.index.name = "gamma_ev"
    return frame


def confident_logits(scale: float = 14.0, beta: float = 1.6, n: int = 15000, seed: int = 0):
    """Synthetic logits of a confident 10-class model (:class:`replicate.synthetic.LogitModel`:
    true logits N(0, ``scale``²), reported ``beta`` times sharper, like a cross-entropy network
    needing T = ``beta``) and their labels."""
    from ...synthetic import LogitModel

    s = LogitModel(n_classes=10, beta=beta, scale=scale).sample(n, rng=seed)
    return s.logits, s.labels


def printed_link(paper: pd.DataFrame, pairs: pd.DataFrame, grid_min: float, log_loss_margin: float = 0.05) -> dict:
    """The evidence on the printed table for which map produced it, and the conclusion.

    The authors' guard gives an overflowed row log-loss ``-log(1 - 1e-5)`` whatever its
    label, so once most validation rows overflow (the smallest temperatures, on confident
    models), selection by log-loss runs to the grid's smallest T and the test log-loss
    collapses towards 0. Returns ``{"at_min": printed FTS log-loss temperatures at a grid
    minimum (0.01 or 0.05), "n": how many are printed, "T_range": (min, max),
    "max_gap": the largest |FTS - TS| printed log-loss, "ours_at_min": our authors'-link
    log-loss fits at ``grid_min``, "ours_n": our fits, "conclusion": text}``."""
    sel = paper[(paper["posthoc"] == "fts") & (paper["select"] == "nll") & (paper["metric"] == "nll")]
    ts = paper[(paper["posthoc"] == "ts") & (paper["select"] == "nll") & (paper["metric"] == "nll")]
    gaps = (sel.set_index(["dataset", "method"])["mean"] - ts.set_index(["dataset", "method"])["mean"]).abs()
    at_min = int((sel["T"] <= 0.05 + 1e-9).sum())
    ours = pairs[pairs["select"] == "nll"]
    ours_min = int(ours["at_grid_min"].sum())
    consistent = at_min == 0 and float(gaps.max()) <= log_loss_margin
    if consistent:
        text = (f"the printed log-loss column did not come from the authors' link with selection by log-loss: none "
                f"of its {len(sel)} FTS temperatures sits at a grid minimum (they range from {sel['T'].min():.2f} "
                f"to {sel['T'].max():.2f}) and its log-loss stays within {gaps.max():.2f} nats of TS, whereas on a "
                f"confident model that selection runs to the grid's smallest T, where most rows overflow and score "
                f"almost no log-loss; it most likely used the intended map (or a guard that never fired on their "
                f"logits)")
    else:
        text = (f"the printed log-loss column is consistent with the authors' link: {at_min} of its {len(sel)} FTS "
                f"temperatures sit at a grid minimum or its log-loss departs from TS by up to {gaps.max():.2f} nats")
    return {"at_min": at_min, "n": len(sel), "T_range": (float(sel["T"].min()), float(sel["T"].max())),
            "max_gap": float(gaps.max()), "ours_at_min": ours_min, "ours_n": len(ours), "conclusion": text}


def confident_demo(scale: float = 14.0, beta: float = 1.6, n_val: int = 5000, n_test: int = 10000, seed: int = 0,
                   grid: str = "code") -> tuple[pd.DataFrame, float]:
    """The guard on a confident model, which our CPU networks are not: :func:`confident_logits`
    split ``n_val`` / ``n_test`` as CIFAR-10's validation and test sets. Returns the FTS results of
    both maps (the layout of :func:`replicate.comparison.posthoc_logits`, wide: one row per map
    and selection) and the model's test accuracy (%)."""
    z, y = confident_logits(scale, beta, n_val + n_test, seed)
    val, test = (z[:n_val], y[:n_val]), (z[n_val:], y[n_val:])
    frames = [cmp.posthoc_logits(*val, *test, posthoc_settings=("fts",), grid=grid, link=link)
              for link in ("intended", "authors")]
    f = pd.concat(frames, ignore_index=True)
    wide = f.pivot_table(index=["link", "select"], columns="metric", values="value", sort=False)
    params = f.groupby(["link", "select"], sort=False)[["gamma", "T", "overflowed"]].first()
    out = params.join(wide).reset_index()
    out["link"] = out["link"].map(LINK_NAMES)
    out["select"] = out["select"].map({"nll": "log-loss", "adaece": "equal-mass ECE"})
    acc = 100 * float(np.mean(test[0].argmax(1) == test[1]))
    return out.rename(columns={"select": "chosen by", "overflowed": "test rows rewritten", "nll": "log-loss",
                               "adaece": "ECE %", "accuracy": "accuracy %"}), acc


def link_texts(paper: pd.DataFrame, pairs: pd.DataFrame, grid: str = "code") -> dict:
    """``{glue name: text}`` of the link comparison: :func:`printed_link`'s conclusion, our
    authors'-link log-loss fits at the grid minimum, and the fits whose T differs."""
    v = printed_link(paper, pairs, float(cmp.resolve_grid(grid)[0].min()))
    return {"printed_link": v["conclusion"], "ours_at_min": f"{v['ours_at_min']} of {v['ours_n']}",
            "pairs_differ": f"{int(pairs['differs'].sum())} of {len(pairs)}"}


def demo_texts(table: pd.DataFrame, acc: float) -> dict:
    """``{glue name: text}`` of :func:`confident_demo`: accuracy, the authors' log-loss choice
    and the accuracy it leaves, the authors' ECE choice."""
    auth = table[table["link"] == LINK_NAMES["authors"]].set_index("chosen by")
    nll, ece = auth.loc["log-loss"], auth.loc["equal-mass ECE"]
    return {"demo_acc": f"{acc:.1f}", "demo_nll_T": f"{nll['T']:.2f}", "demo_nll_acc": f"{nll['accuracy %']:.1f}",
            "demo_ece_choice": f"{ece['gamma']:g}, {ece['T']:.2f}"}
