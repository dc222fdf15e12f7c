"""What the FTS chapter (``exp_fts``) shows, built from its report (:mod:`.report`) so that
its cells stay short: the models with the paper's row each is compared with, Table 1's
captions and its cells' intervals, the selection-criterion comparison the paper describes
but does not print, the two temperature grids, Fig. 8's straight lines, the authors' focal
link beside the intended map, the models that coincide at a profile, FTS on the other
chapters' runs, and the texts glued into the prose. Nothing here trains, fits or decides a
claim (the fits and the claims are computed once in :mod:`.report`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from .plan import ADAFOCAL_NOTE, PAPER, UNREACHABLE

LINK_NAMES = {"intended": "intended map", "authors": "authors' link"}

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


def grid_table(summaries: dict, methods) -> pd.DataFrame:
    """FTS on each temperature grid (``summaries``: ``{grid: summary}``, the report's ``grids``):
    per model, the (gamma_ev, T) chosen by log-loss and by ECE (mean T over the runs) and the
    test metric each is chosen for."""
    rows = {m.label: {} for m in methods}
    for grid, s in summaries.items():
        for m in methods:
            for sel in ("nll", "adaece"):
                g, T, v = (cmp.posthoc_value(s, m.key, "fts", sel, sel, c) for c in ("gamma", "T", "mean"))
                head = (f"by {'log-loss' if sel == 'nll' else 'ECE'}", f"{grid} grid")
                rows[m.label][head] = "–" if math.isnan(v) else f"{v:.3f} (γ_ev {g:g}, T {T:.2f})"
    out = pd.DataFrame(rows).T.sort_index(axis=1)
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    out.index.name = "model"
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


def fig8_table(paths: pd.DataFrame, caption: str = ""):
    """Per model (its label): slope, intercept and R² of the straight line through Figure 8's
    means, to three decimals, no pandas index (issue #32, item 1)."""
    from .figures import fig8_lines

    cols = ["slope", "intercept", "r2"]
    t = fig8_lines(paths).groupby("method", sort=False)[cols].first().rename(columns={"r2": "R²"})
    t = t.rename(index=cmp.short).rename_axis("method").reset_index()
    return cmp.styled(t, caption, precision=3).hide(axis="index")


def clamp_table(clamp: pd.DataFrame, caption: str = ""):
    """The report's ``clamp`` (max |Δp| per gamma_ev and set of logits) with γ_ev as a column
    (its value as written, -0.5 not -0.500000) and the changes in scientific notation."""
    t = clamp.map("{:.1e}".format)
    t.insert(0, "γ_ev", [f"{g:g}" for g in clamp.index])
    return cmp.styled(t.reset_index(drop=True), caption).hide(axis="index")


def other_chapter_tables(tables: list) -> list:
    """The report's FTS tables of the other chapters' runs (:func:`.report.other_chapters`),
    styled with their captions."""
    return [cmp.styled(frame, f"{title}: {caption}") for title, caption, frame in tables]


def table_tips(table: pd.DataFrame, intervals: dict, methods, metrics=("accuracy", "nll", "adaece")) -> pd.DataFrame:
    """Hover texts for :func:`replicate.comparison.posthoc_table`'s ``table`` (same shape): each
    of our cells gets its 95 % interval under the noise model (the report's ``intervals``)."""
    from ...comparison.side_by_side.posthoc import HEADINGS

    tips = pd.DataFrame("", index=table.index, columns=table.columns)
    for m in methods:
        for post, name in (("ts", "TS"), ("fts", "+ FTS")):
            for metric in metrics:
                iv = intervals.get((m.key, post, metric))
                if iv is None or (m.label, name) not in tips.index:
                    continue
                digits = 1 if metric == "accuracy" else 2
                tips.loc[(m.label, name), (HEADINGS[metric], "ours")] = \
                    f"[{iv['low']:.{digits}f}, {iv['high']:.{digits}f}] ({iv['how']})"
    return tips


def same_models(runs: dict, profile: str) -> str:
    """Which variants are one model at ``profile``: the methods of ``runs`` (``{(method,
    seed): Run}``) whose test logits are identical at every seed (the noise model's
    fingerprint), as a sentence (every claim counts such a model once: :class:`.claims.Models`)."""
    from ...comparison.noise import fingerprint
    from .claims import names

    prints: dict = {}
    for (m, s), run in runs.items():
        prints.setdefault(m, {})[s] = fingerprint(run)
    groups, seen = [], set()
    for m in prints:
        if m in seen:
            continue
        twins = [o for o in prints if o != m and o not in seen and prints[o] == prints[m]]
        if twins:
            seen.update([m, *twins])
            seeds = sorted(prints[m])
            groups.append(f"{' and '.join(names().method(k) for k in (m, *twins))} (seed"
                          f"{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})")
    if not groups:
        return f"at the {profile} profile no two variants have identical test logits"
    return f"at the {profile} profile {'; '.join(groups)} have identical test logits"


# ----------------------------------------------------------------------------- the authors' link
def link_table(frame: pd.DataFrame, methods) -> pd.DataFrame:
    """Per model (rows) and map (column groups): for each selection, the gamma_ev chosen most
    often, the mean T and the test metric it is chosen for (log-loss / equal-mass ECE), the
    test accuracy, and the test rows the authors' guard rewrote (mean over seeds); ``frame``
    is the report's ``links["frame"]``."""
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


def pair_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per selection: the number of (model, seed, gamma_ev) fits, how many choose a different T
    under the authors' link, and how many of those land on the grid's smallest T."""
    g = pairs.groupby("select", sort=False)
    return pd.DataFrame({"fits": g.size(), "different T": g["differs"].sum(),
                         "authors' T at the grid minimum": g["at_grid_min"].sum()})


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


def link_texts(paper: pd.DataFrame, pairs: pd.DataFrame, grid: str = "code") -> dict:
    """``{glue name: text}`` of the link comparison: :func:`printed_link`'s conclusion, our
    authors'-link log-loss fits at the grid minimum, and the fits whose T differs."""
    v = printed_link(paper, pairs, float(cmp.resolve_grid(grid)[0].min()))
    return {"printed_link": v["conclusion"], "ours_at_min": f"{v['ours_at_min']} of {v['ours_n']}",
            "pairs_differ": f"{int(pairs['differs'].sum())} of {len(pairs)}", "guard": guard_text(pairs)}


def guard_text(pairs: pd.DataFrame) -> str:
    """What :func:`pair_summary`'s counts say of the authors' guard on our runs, as the
    clause after "of its fits:": that it fires only at temperatures never chosen when no fit
    changes its T, else how many change and how many of those run to the grid's smallest T."""
    differ, at_min = int(pairs["differs"].sum()), int((pairs["differs"] & pairs["at_grid_min"]).sum())
    if differ == 0:
        return "the guard fires only at temperatures that are never chosen (the figure)"
    if at_min == 0:
        return (f"the guard changes the chosen temperature of {differ} of the {len(pairs)} fits, none of them to "
                f"the grid's smallest")
    return (f"the guard changes the chosen temperature of {differ} of the {len(pairs)} fits, {at_min} of them to "
            f"the grid's smallest, where the overflowed rows score almost no log-loss")


def demo_table(long: pd.DataFrame) -> pd.DataFrame:
    """The confident model's FTS results (the report's ``demo``, long) wide: one row per map
    and selection, the chosen parameters, the test rows rewritten and the test metrics."""
    wide = long.pivot_table(index=["link", "select"], columns="metric", values="value", sort=False)
    params = long.groupby(["link", "select"], sort=False)[["gamma", "T", "overflowed"]].first()
    out = params.join(wide).reset_index()
    out["link"] = out["link"].map(LINK_NAMES)
    out["select"] = out["select"].map({"nll": "log-loss", "adaece": "equal-mass ECE"})
    return out.rename(columns={"select": "chosen by", "overflowed": "test rows rewritten", "nll": "log-loss",
                               "adaece": "ECE %", "accuracy": "accuracy %"})


def _rows(k: float, n: int) -> str:
    """How many of ``n`` test rows overflow, in words: "no row", "most rows (k of n)",
    "k of the n rows"."""
    k = int(round(k))
    if k == 0:
        return "no row overflows"
    if k == n:
        return f"every row overflows ({n:,})"
    if 2 * k > n:
        return f"most rows overflow ({k:,} of {n:,})"
    return f"{k:,} of the {n:,} rows overflow{'s' if k == 1 else ''}"


def _ece_choice(k: float, n: int) -> str:
    """What the authors' ECE choice leaves, from the test rows its guard rewrote: the
    intended map's numbers when none, nearly them when fewer than one in a hundred."""
    rows = _rows(k, n)
    if int(round(k)) == 0:
        return f"{rows}: the numbers are then the intended map's, at a choice restricted to temperatures the guard " \
               "leaves alone"
    if 100 * k < n:
        return (f"{rows}: the numbers are then nearly the intended map's, at a choice restricted to temperatures "
                "where the guard rewrites almost nothing")
    return f"{rows}: the guard still rewrites the numbers there"


def demo_texts(table: pd.DataFrame, acc: float, n_test: int | None = None) -> dict:
    """``{glue name: text}`` of :func:`demo_table`: accuracy, the authors' log-loss choice
    and the accuracy it leaves, the authors' ECE choice, and how many of the ``n_test`` test
    rows (default: :func:`.report.confident_demo`'s) overflow at each choice
    (``demo_nll_rows``, ``demo_ece_rows``: "most rows overflow (k of n)", "no row
    overflows", ...)."""
    import inspect

    from .report import confident_demo

    n = inspect.signature(confident_demo).parameters["n_test"].default if n_test is None else n_test
    auth = table[table["link"] == LINK_NAMES["authors"]].set_index("chosen by")
    nll, ece = auth.loc["log-loss"], auth.loc["equal-mass ECE"]
    return {"demo_acc": f"{acc:.1f}", "demo_nll_T": f"{nll['T']:.2f}", "demo_nll_acc": f"{nll['accuracy %']:.1f}",
            "demo_ece_choice": f"{ece['gamma']:g}, {ece['T']:.2f}",
            "demo_nll_rows": _rows(nll["test rows rewritten"], n), "demo_ece_rows": _ece_choice(ece["test rows rewritten"], n)}


def clamp_text(clamp: pd.DataFrame, ours: str = "our runs", rounding: float = 1e-6) -> str:
    """What the report's ``clamp`` table (max |Δp| per γ_ev, one column per set of logits)
    says, in one sentence: for our runs, whether any change exceeds ``rounding`` (float32's
    rounding of a probability: about 1e-7 relative), and for each other set its largest
    change and the γ_ev where it occurs."""
    mine = float(clamp[ours].max())
    head = (f"The clamp moves no probability of ours by more than rounding (at most {mine:.1e})" if mine <= rounding
            else f"The clamp moves probabilities of ours by up to {mine:.1e}, at γ_ev = {clamp[ours].idxmax():g}")
    others = [f"on the {c} by up to {clamp[c].max():.1e}, the largest change at γ_ev = {clamp[c].idxmax():g}"
              + (", where the map depends on how small 1 − q is" if clamp[c].idxmax() < 0 else "")
              for c in clamp.columns if c != ours]
    return head + ("; " + "; ".join(others) if others else "") + "."


def rule_texts() -> dict:
    """The thresholds of the chapter's claims, for its verdict prose (the defaults of
    :func:`.claims.definitions`): ``t_rule`` (the book's "close to 1"), ``loss_share``
    ("occasionally"), ``minor`` (a "marginal" / "minor" log-loss change), ``ece_gain`` ("an
    extra ~20 %"), ``min_r2`` ("close to linear")."""
    import inspect

    from ...claims import wording
    from .claims import definitions

    d = {k: v.default for k, v in inspect.signature(definitions).parameters.items()}
    return {"t_rule": wording.near_one_text(), "loss_share": f"{d['loss_share']:.0%}",
            "minor": f"{100 * d['minor']:g} %", "ece_gain": f"{100 * d['ece_gain']:g} %", "min_r2": f"{d['min_r2']:g}"}


def grid_texts() -> dict:
    """The grids of the chapter in words, from the package's grids: ``gamma_grid`` (the γ_ev
    of :data:`replicate.posthoc.FTS_GAMMAS`, "{-0.5, ..., 5}"), ``n_grid_paper`` /
    ``n_grid_code`` (the temperatures of :data:`replicate.comparison.GRIDS`' paper and
    code grids) and ``grid_cost`` (how many times the finer grid's fits cost, the ratio of
    their sizes)."""
    from ...posthoc import FTS_GAMMAS

    sizes = {g: len(cmp.resolve_grid(g)[0]) for g in ("paper", "code")}
    ratio = sizes["paper"] / sizes["code"]
    return {"gamma_grid": "{" + ", ".join(f"{g:g}" for g in FTS_GAMMAS) + "}",
            "n_grid_paper": f"{sizes['paper']:,}", "n_grid_code": f"{sizes['code']:,}",
            "grid_cost": f"{ratio:g} times" if ratio != 1 else "as much"}
