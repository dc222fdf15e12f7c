"""The FTS chapter's tables beyond the paper's Table 1: the models with the paper's row each
is compared with, the selection-criterion comparison the paper describes but does not print,
the two temperature grids side by side, Fig. 8's straight lines, and the other experiment
chapters' runs that FTS is applied to (read from the store, never trained)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from .plan import ADAFOCAL_NOTE, CHAPTER, PAPER, UNREACHABLE

#: the paper's Table 1, stored as one spec per metric (:mod:`replicate.paper_tables.fts`)
TABLE1_SPECS = ("table1_accuracy", "table1_nll", "table1_adaece", "table1_gamma_ev")


def methods_table(methods, dataset: str = "cifar10", model: str | None = None) -> pd.DataFrame:
    """:func:`replicate.comparison.methods_frame` with the paper's row each method is set
    beside (``paper row``) and the note on that row (the AdaFocal note)."""
    from ... import paper_tables

    labels = dict(paper_tables.get(PAPER, "table1_nll")[["method", "method_label"]].drop_duplicates().values)
    frame = cmp.methods_frame(methods, "image", dataset, model)
    frame["paper row"] = [labels.get(m.compared_with, "– (not in Table 1)") for m in methods]
    frame["note on the paper's row"] = [ADAFOCAL_NOTE if m.compared_with == "adafocal" else "" for m in methods]
    return frame


def table_caption(ref, source: str, grid) -> str:
    """Caption of the chapter's Table 1: metrics, selection, grid, both sources."""
    _, grid_text = cmp.resolve_grid(grid)
    where = (f"paper: Komisarenko & Kull (2024) Table 1, {ref.note}, mean ± sd over 5 seeds" if ref.found
             else f"paper: {ref.note}")
    return (f"Accuracy (%), log-loss (nats; T and gamma_ev chosen by validation log-loss) and equal-mass ECE (%, 15 "
            f"bins; chosen by validation equal-mass ECE) after temperature scaling (TS) and after focal temperature "
            f"scaling (+ FTS); the optimal T in brackets. Ours: {grid_text}, gamma_ev in -0.5, -0.25, 0.05, 0.25, "
            f"0.37, 0.5, 0.75, 1, 5; the paper's text states T = 0.01..5 step 0.01. {where}. {source}.")


def paper_notes() -> pd.DataFrame:
    """The recorded notes of the paper's Table 1 (the notes of its four specs and their cell
    notes): :func:`replicate.comparison.layouts.table_notes`, the opening the specs' notes
    share shown once."""
    return cmp.layouts.table_notes(PAPER, TABLE1_SPECS, shared_opening=True)


def selection_table(ours: pd.DataFrame, methods) -> pd.DataFrame:
    """The comparison Sec. 5.2 describes but does not print: per model, test equal-mass ECE
    with the parameters chosen by validation log-loss and by validation ECE, and test
    log-loss with each, for TS and FTS, with the relative gain of the matching criterion."""
    rows = {}
    for m in methods:
        row = {}
        for setting in ("ts", "fts"):
            for metric, own, other in (("adaece", "adaece", "nll"), ("nll", "nll", "adaece")):
                a = cmp.posthoc_value(ours, m.key, setting, other, metric)
                b = cmp.posthoc_value(ours, m.key, setting, own, metric)
                name = "ECE %" if metric == "adaece" else "log-loss"
                row[(setting.upper(), name, f"by {'ECE' if other == 'adaece' else 'log-loss'}")] = f"{a:.3f}"
                row[(setting.upper(), name, f"by {'ECE' if own == 'adaece' else 'log-loss'}")] = f"{b:.3f}"
                row[(setting.upper(), name, "gain")] = f"{100 * (a - b) / a:+.1f} %" if a > 0 else "–"
        rows[m.label] = row
    out = pd.DataFrame(rows).T
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "model"
    return out


def selection_gains(ours: pd.DataFrame, methods, metric: str = "adaece") -> dict:
    """Mean relative gain (%) in test ``metric`` from choosing by ``metric`` instead of the
    other criterion: ``{"TS": ..., "FTS": ..., "all": ...}``."""
    other = "nll" if metric == "adaece" else "adaece"
    gains = {"TS": [], "FTS": []}
    for m in methods:
        for s in ("ts", "fts"):
            a, b = (cmp.posthoc_value(ours, m.key, s, sel, metric) for sel in (other, metric))
            if a > 0 and not math.isnan(b):
                gains[s.upper()].append(100 * (a - b) / a)
    return {"TS": float(np.mean(gains["TS"])) if gains["TS"] else math.nan,
            "FTS": float(np.mean(gains["FTS"])) if gains["FTS"] else math.nan,
            "all": float(np.mean(gains["TS"] + gains["FTS"])) if gains["TS"] else math.nan}


def grid_table(runs: dict, methods, grids=("code", "paper"), log=None) -> pd.DataFrame:
    """FTS on each temperature grid: per model, the (gamma_ev, T) chosen by log-loss and by
    ECE (mean T over the runs given) and the test metric each is chosen for."""
    rows = {m.label: {} for m in methods}
    for grid in grids:
        s = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, posthoc_settings=("fts",), grid=grid, log=log))
        for m in methods:
            for sel in ("nll", "adaece"):
                g, T, v = (cmp.posthoc_value(s, m.key, "fts", sel, sel, c) for c in ("gamma", "T", "mean"))
                head = (f"by {'log-loss' if sel == 'nll' else 'ECE'}", f"{grid} grid")
                rows[m.label][head] = "–" if math.isnan(v) else f"{v:.3f} (γ_ev {g:g}, T {T:.2f})"
    out = pd.DataFrame(rows).T.sort_index(axis=1)
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "model"
    return out


def other_chapter_runs(profile: str) -> dict:
    """``{(chapter, group): (runs, methods)}`` of every other experiment chapter's default plan
    at ``profile``, read from the run store (never trained); a group with a missing run is left out."""
    from .. import CHAPTERS, chapter_plan

    out = {}
    for ch in CHAPTERS:
        if ch == CHAPTER:
            continue
        p = chapter_plan(ch, profile=profile)
        for g in p.groups:
            found = cmp.load(p, g)
            if found:
                out[(ch, g)] = (found[g], p.methods[g])
    return out


def adafocal_agreement(runs: dict) -> pd.DataFrame:
    """Per seed with both AdaFocal rules: whether their test logits are identical, and the range
    of the per-bin gammas both recorded over training (the rules differ only below |gamma|
    0.2, where the code switches to inverse focal, and at the bounds)."""
    rows = []
    for seed in sorted({s for k, s in runs if k == "adafocal_code"}):
        a, b = runs.get(("adafocal_code", seed)), runs.get(("adafocal_paper", seed))
        if a is None or b is None:
            continue
        g = np.array([h["loss_state"]["gamma"] for r in (a, b) for h in r.history if "loss_state" in h], dtype=float)
        rows.append({"seed": seed, "identical test logits": bool(np.array_equal(a.logits("test")[0],
                                                                                b.logits("test")[0])),
                     "smallest |gamma|": float(np.nanmin(np.abs(g))) if g.size else math.nan,
                     "largest gamma": float(np.nanmax(g)) if g.size else math.nan})
    return pd.DataFrame(rows, columns=["seed", "identical test logits", "smallest |gamma|", "largest gamma"])


def unreachable_frame() -> pd.DataFrame:
    """The paper's data that cannot be reached offline, and why (one parameter away)."""
    return pd.DataFrame({"data set": list(UNREACHABLE), "why not here": list(UNREACHABLE.values())})


# ----------------------------------------------------------------------------- the chapter's glued texts
def training_texts(runs: dict) -> dict:
    """``{glue name: text}``: how many runs, their total and median training wall time."""
    walls = sorted(r.wall_time for r in runs.values())
    return {"n_runs": str(len(walls)), "train_minutes": f"{sum(walls) / 60:.1f}",
            "run_seconds": f"median {walls[len(walls) // 2]:.0f} s, {walls[0]:.0f} to {walls[-1]:.0f} s"}


def headline_texts(ours: pd.DataFrame, paper: pd.DataFrame, key: str = "cross_entropy") -> dict:
    """``{glue name: text}``: ``key``'s test equal-mass ECE and log-loss after TS and FTS, ours and the paper's."""
    out = {}
    for who, frame in (("ours", ours), ("paper", paper)):
        for s in ("ts", "fts"):
            out[f"{who}_ce_{s}_ece"] = f"{cmp.posthoc_value(frame, key, s, 'adaece', 'adaece'):.2f}"
            out[f"{who}_ce_{s}_nll"] = f"{cmp.posthoc_value(frame, key, s, 'nll', 'nll'):.3f}"
    return out


def gain_texts(ours: pd.DataFrame, methods) -> dict:
    """``{glue name: text}``: the mean relative gains of :func:`selection_gains` (percent, signed)."""
    ece, nll = selection_gains(ours, methods, "adaece"), selection_gains(ours, methods, "nll")
    return {"gain_ece_fts": f"{ece['FTS']:+.1f}", "gain_ece_all": f"{ece['all']:+.1f}",
            "gain_nll_all": f"{nll['all']:+.1f}"}


def adafocal_text(agree: pd.DataFrame) -> str:
    """Whether the two AdaFocal rules trained the same models (from :func:`adafocal_agreement`)."""
    if len(agree) and bool(agree["identical test logits"].all()):
        return "trained identical models at every seed"
    return "trained different models (or not both were trained)"


def fig8_table(paths: pd.DataFrame) -> pd.DataFrame:
    """Per model: slope, intercept and R² of the straight line through Figure 8's means."""
    from .figures import fig8_lines

    cols = ["slope", "intercept", "r2"]
    return fig8_lines(paths).groupby("method", sort=False)[cols].first().round(3)


def other_chapter_tables(profile: str, grid: str = "code") -> list:
    """"+ FTS" (equal-mass ECE, chosen by validation equal-mass ECE) for every group of
    :func:`other_chapter_runs`, as captioned tables."""
    out = []
    for (chapter, group), (runs, methods) in other_chapter_runs(profile).items():
        src = cmp.describe_runs(runs, cmp.data_name(next(iter(runs.values()))))
        col = cmp.fts_column(runs, methods, metric="adaece", select="adaece", grid=grid)
        out.append(cmp.styled(col, f"{chapter} ({group}): " + cmp.fts_caption("adaece", "adaece", grid, src)))
    return out
