"""Everything the leaderboard (``exp_leaderboard``) computes from its plan and runs, once, as
the sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``fits``
    every run's post-hoc parameters (every seed the store holds of the chapter's
    configurations): T of temperature scaling and ``(gamma_ev, T)`` of focal temperature
    scaling, both chosen by validation ECE on the grid 0.1..10.0 (:func:`fit`);
``evaluation``
    the board: every run the chapter shows under the three post-hoc settings
    (:data:`POSTHOC`), every metric of :data:`BOARD_METRICS` (:func:`evaluate_board`);
``summary``
    its mean, standard deviation and Student-t interval over seeds (:func:`summarise_board`);
``ranks``
    the rank intervals of the noise model (:func:`replicate.comparison.noise.rank_intervals`: seeds and
    test examples resampled, the same draws for every method) by ECE before, after TS and
    after FTS, and by the test error;
``agreement``
    Kendall's tau between our ranking and each paper's printed one (:func:`agreement`);
``claims``
    every paper's headline claims (:mod:`.claims`) decided on both sides, ``{paper: ClaimLog}``
    (:func:`decide`): the paper's printed CIFAR-10 ResNet-50 row (:func:`paper_side`) and
    our runs (every committed seed, within the noise model);
``scale_box``
    the box atop the page.

Each section is computed when first read and kept on disk, so the notebook, the claims ledger
and ``replicate claims`` share one computation: the five builders the registry finds
(``claims_<paper key>``, made by the module's ``__getattr__`` for every paper of
:data:`replicate.papers.PAPERS`) read the one ``claims`` section.

Post-hoc settings: ``none`` (the softmax), ``ts`` (temperature scaling, Mukhoti et al. Sec. 6)
and ``fts`` (focal temperature scaling, Komisarenko & Kull 2024 Sec. 4.2: the focal calibration
map after TS, ``gamma_ev`` on :data:`replicate.posthoc.FTS_GAMMAS`; the paper selects by
equal-mass ECE over T = 0.01..5, here both settings use one selection metric and one grid, so
that they differ only by the focal map). Values are percentages as the papers print them (NLL
and Brier x100, AUROC in %).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ... import metrics as _m
from ... import posthoc
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Cell, Exact, Missing, Names
from ...comparison import report as rpt
from ...comparison import stats
from ...comparison.noise import RunsEvidence, Scored, rank_intervals, store
from ...comparison.noise.runs import DEFAULT_OOD
from ...comparison.noise.scores import point
from ...papers import PAPERS
from .claims import definitions, labels, name, ours_of
from .plan import AGREEMENT_COLUMNS, CHAPTER, EXCLUDED, FTS_PAPER, FTS_SETTING, HEADLINE, SECTION, plan

POSTHOC = ("none", "ts", "fts")
POSTHOC_NAMES = {"none": "none", "ts": "TS", "fts": "FTS"}
POSTHOC_LONG = {"none": "no post-hoc calibration",
                "ts": "temperature scaling, T by validation ECE on 0.1..10.0",
                "fts": "focal temperature scaling, gamma_ev and T by validation ECE (gamma_ev in "
                       f"{{{', '.join(f'{g:g}' for g in posthoc.FTS_GAMMAS)}}}, T on 0.1..10.0)"}
#: The out-of-distribution set of the AUROC: each run's test images with CIFAR-10-C Gaussian noise, severity 5.
OOD_SET = DEFAULT_OOD
#: metric -> (column label, full name). Lower is better except for :data:`HIGHER_IS_BETTER`.
BOARD_METRICS = {
    "error": ("test error (%)", "test error (%)"),
    "nll": ("NLL (x100)", "negative log-likelihood (x100)"),
    "brier": ("Brier (x100)", "Brier score (x100, summed over classes)"),
    "ece": ("ECE (%)", "ECE (%, 15 equal-width bins)"),
    "adaece": ("AdaECE (%)", "AdaECE (%, 15 equal-mass bins)"),
    "classwise_ece": ("classwise ECE (%)", "classwise ECE (%, 15 bins)"),
    "mce": ("MCE (%)", "MCE (%, 15 equal-width bins)"),
    "smece": ("smooth ECE (%)", "smooth ECE (%, Blasiok & Nakkiran 2023)"),
    "auroc": ("AUROC (%)", "AUROC (%) of the softmax entropy, test images against the same images with "
                       "CIFAR-10-C Gaussian noise, severity 5"),
}
HIGHER_IS_BETTER = ("auroc",)
#: The rank panels of the chapter: title -> (metric, post-hoc setting).
RANK_PANELS = {"ECE, no post-hoc": ("ece", "none"), "ECE, TS": ("ece", "ts"), "ECE, FTS": ("ece", "fts"),
               "test error": ("error", "none")}
#: Why the leaderboard's claims are not tested when its runs are missing.
NOT_IN_STORE = "the chapter's {} runs are not all in the run store (execute the chapter)"


def check_setting(setting: str) -> str:
    if setting not in POSTHOC:
        raise ValueError(f"setting must be one of {', '.join(POSTHOC)}; got {setting!r}")
    return setting


def check_metric(metric: str) -> str:
    if metric not in BOARD_METRICS:
        raise ValueError(f"metric must be one of {', '.join(BOARD_METRICS)}; got {metric!r}")
    return metric


# ----------------------------------------------------------------------------- every run under three settings
def fit(val_logits, val_labels) -> dict:
    """``{"ts": (T, nan), "fts": (T, gamma_ev)}`` fitted on the validation logits by validation
    ECE (15 equal-width bins) on the grid 0.1..10.0 (:data:`replicate.posthoc.TS_GRID`)."""
    zv = np.asarray(val_logits, dtype=np.float64)
    T = store.temperature(zv, val_labels, "ece", posthoc.TS_GRID)             # fitted once for every chapter
    T_f, gamma = store.focal_temperature(zv, val_labels, "ece", posthoc.TS_GRID)   # identical logits: once
    return {"ts": (T, math.nan), "fts": (T_f, gamma)}


def fits(runs: dict, log=None) -> dict:
    """``{run key: fit}`` (:func:`fit`) of every run of ``{(method, seed): Run}``."""
    out = {}
    for i, ((method, seed), run) in enumerate(runs.items(), 1):
        out[run.key] = fit(*run.logits("val"))
        if log:
            log(f"[{i}/{len(runs)}] {method} seed {seed}: TS and FTS fitted")
    return out


def calibrate_logits(test_logits, test_labels, setting: str, T: float = 1.0, gamma: float = math.nan,
                     ood: dict | None = None) -> Scored:
    """The test (and out-of-distribution, ``{set: logits}``) probabilities after ``setting``
    with the fitted ``T`` and ``gamma``, as the noise model's :class:`replicate.comparison.noise.Scored`."""
    from ...posthoc.fts import fts_log_probs

    check_setting(setting)
    T = 1.0 if setting == "none" else float(T)

    def convert(z):
        z = np.asarray(z, dtype=np.float64)
        return fts_log_probs(z, T, gamma) if setting == "fts" else _m._log_softmax(z / T)
    lp, y = convert(test_logits), np.asarray(test_labels, dtype=np.int64)
    probs = {k: np.exp(convert(z)) for k, z in (ood or {}).items()}
    return Scored(np.exp(lp), y, lp[np.arange(len(y)), y], probs, T, gamma if setting == "fts" else math.nan)


def calibrated(runs: dict, fitted: dict, settings=POSTHOC) -> dict:
    """``{(method, seed, setting): Scored}`` of every run of ``{(method, seed): Run}`` with its
    fitted parameters (``fitted``: :func:`fits`)."""
    out = {}
    for (method, seed), run in runs.items():
        ood = {s: run.logits(f"ood:{s}")[0] for s in run.ood_sets}
        for s in settings:
            T, gamma = (1.0, math.nan) if s == "none" else fitted[run.key][s]
            out[(method, seed, s)] = calibrate_logits(*run.logits("test"), s, T, gamma, ood)
    return out


def score(cal: Scored, metric: str) -> float:
    """``metric`` of :data:`BOARD_METRICS` on all test examples (percent; NLL and Brier x100);
    NaN for the AUROC of a run without out-of-distribution logits."""
    check_metric(metric)
    if metric == "auroc" and OOD_SET not in cal.ood:
        return math.nan
    return point(cal, metric, OOD_SET if metric == "auroc" else "")


def evaluate_board(cal: dict, metrics=tuple(BOARD_METRICS)) -> pd.DataFrame:
    """Long frame ``method, seed, setting, metric, value, T, gamma`` of every calibrated run."""
    metrics = [check_metric(m) for m in metrics]
    rows = [(method, seed, setting, m, score(c, m), c.T, c.gamma)
            for (method, seed, setting), c in cal.items() for m in metrics]
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "metric", "value", "T", "gamma"])


def summarise_board(frame: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per ``method, setting, metric``: ``mean``, ``sd`` (sample, over seeds), ``n`` seeds and the
    Student-t interval ``low``/``high`` at ``level``, cut to the range the metric can take
    (:func:`replicate.comparison.stats.seed_interval` with :func:`~replicate.comparison.stats.metric_range`:
    an ECE's interval never reaches below 0; ``cut`` names the ends cut; NaN with one seed),
    the mean ``T`` and the ``gammas`` chosen (one per seed)."""
    rows = []
    for (method, setting, metric), g in frame.groupby(["method", "setting", "metric"], sort=False):
        v = g["value"].dropna()
        ci = stats.seed_interval(v, level, stats.metric_range(metric)) if len(v) else {
            "mean": math.nan, "sd": math.nan, "n": 0, "low": math.nan, "high": math.nan, "cut": ""}
        rows.append({"method": method, "setting": setting, "metric": metric, **ci, "T": float(g["T"].mean()),
                     "gammas": ", ".join(f"{x:g}" for x in g["gamma"].dropna())})
    return pd.DataFrame(rows)


def seed_values(frame: pd.DataFrame, metric: str, setting: str) -> pd.DataFrame:
    """``metric`` after ``setting`` as a seeds x methods table (columns in order of appearance)."""
    part = frame[(frame.metric == check_metric(metric)) & (frame.setting == check_setting(setting))]
    return part.pivot(index="seed", columns="method", values="value")[list(dict.fromkeys(part.method))]


def missing_ood(runs: dict) -> list:
    """``(method, seed)`` of the runs without out-of-distribution logits of :data:`OOD_SET`."""
    return sorted(k for k, r in runs.items() if OOD_SET not in getattr(r, "ood_sets", {}))


# ----------------------------------------------------------------------------- our side: the noise model
def names() -> Names:
    """The claims' display names: the leaderboard's method labels (:func:`.claims.labels`)."""
    return Names(labels(), rpt.names().metrics)


def our_evidence(runs: dict, cal: dict, source: str, **kw) -> RunsEvidence:
    """Our runs ``{(method, seed): Run}`` with their calibrations (:func:`calibrated`) as the
    noise model's evidence: one row, "dataset, network"."""
    scored = {(m, "", s, post): c for (m, s, post), c in cal.items() if (m, s) in runs}
    return RunsEvidence([rpt.row(runs, scored=scored)], source, names(), **kw)


def ranks(ev: RunsEvidence, methods, metric: str, setting: str) -> pd.DataFrame:
    """The rank of each of ``methods`` by ``metric`` after ``setting`` with its 95 % interval
    under the noise model (:func:`replicate.comparison.noise.rank_intervals`; rank 1 the best)."""
    check_metric(metric), check_setting(setting)
    row = ev.rows()[0].name
    out = rank_intervals(ev, row, [Cell(k, metric, setting) for k in methods], metric in HIGHER_IS_BETTER)
    out.attrs.update(metric=metric, setting=setting)
    return out


# ----------------------------------------------------------------------------- the papers' side
def excluded(paper: str) -> dict:
    """``{printed key: reason}`` of the printed methods of ``paper`` that stand for none of
    ours (:data:`.plan.EXCLUDED`); the reason is the paper table's own note on the method."""
    from ... import paper_tables

    notes = paper_tables.paper_info(paper).get("method_notes", {})
    return {k: notes.get(k, "not one of our methods") for k in EXCLUDED.get(paper, ())}


def printed_column(paper: str, metric: str, scaled: bool, setting: str = "", dataset: str = "cifar10",
                   model: str = "resnet50", exclude=(), table: str | None = None) -> dict:
    """``{printed method key: value}`` of ``paper``'s ``metric`` (pre or post T, rows of
    ``setting``; of ``table`` only, e.g. "1", when given) in its row for ``(dataset, model)``,
    in printed order; ``exclude``: printed keys left out. Empty when the paper prints none."""
    ref = cmp.paper_reference(dataset, model, paper)
    if not ref.exact:
        return {}
    vals = cmp.paper_values(ref, [metric], setting=setting)
    vals = vals[(vals.temperature_scaled == scaled) & ~vals.method.isin(list(exclude))]
    if table is not None:
        vals = vals[vals.tables.map(lambda t: table in t.split(", "))]
    return {m: float(v) for m, v in zip(vals.method, vals["mean"]) if not math.isnan(v)}


def paper_side(paper: str) -> Exact:
    """``paper``'s printed CIFAR-10 ResNet-50 row of its Table 1 as evidence without noise,
    each printed method under our keys of it (:func:`.claims.ours_of`): the pre- and post-T
    ECE of the headline papers; the FTS paper's ECE after TS and after FTS (its equal-mass ECE,
    said in the evidence label)."""
    if paper == FTS_PAPER:
        what = {post: printed_column(paper, "adaece", True, f"posthoc={post},select=adaece",
                                     exclude=excluded(paper)) for post in ("ts", "fts")}
        source = (f"{PAPERS[paper].short}, Table 1, CIFAR-10 ResNet-50 row (its ECE is equal-mass, 15 bins; TS and "
                  f"FTS chosen by it on T = 0.01..5)")
    else:
        table = HEADLINE[paper][1]
        what = {post: printed_column(paper, "ece", post == "ts", table=table) for post in ("none", "ts")}
        source = f"{PAPERS[paper].short}, Table {table}, CIFAR-10 ResNet-50 row"
    cells = [{"row": "CIFAR-10, ResNet-50", "dataset": "cifar10", "model": "resnet50", "method": ours, "metric": "ece",
              "post": post, "setting": "", "value": col[printed]}
             for post, col in what.items() for ours, printed in ours_of(col).items()]
    return Exact(pd.DataFrame(cells), source, names())


# ----------------------------------------------------------------------------- Kendall's tau
def readings(printed, ours) -> list[dict]:
    """Every way of matching the printed methods with ours: a list of ``{our key: printed key}``
    (one dict when each printed method stands for at most one of ours)."""
    choices = [[(m.key, p) for m in ours if m.compared_with == p] for p in printed]
    choices = [c for c in choices if c]
    return [dict(combo) for combo in itertools.product(*choices)] if choices else [{}]


def our_agreement(ranked: pd.DataFrame, printed: dict, mapping: dict, level: float = 0.95) -> dict:
    """Kendall's tau-b between our ranking (``ranked``, a :func:`ranks` frame with
    ``attrs["ranks"]``, the ranks on every resample of the noise model) of the methods of
    ``mapping`` (``{our key: printed key}``) and the printed values (lower = better in both),
    with the ``level`` interval over the resamples (tau depends only on the order, which the
    restriction to the shared methods keeps); ``methods`` lists the shared methods (ours)."""
    keys = [k for k in mapping if k in set(ranked.method) and mapping[k] in printed]
    pos = [list(ranked.method).index(k) for k in keys]
    a, b = ranked["rank"].to_numpy()[pos], np.array([printed[mapping[k]] for k in keys])
    reps = ranked.attrs["ranks"][:, pos] if "ranks" in ranked.attrs and keys else None
    out = stats.kendall_tau(a, b, reps, level) if keys else {
        "tau": math.nan, "p": math.nan, "n": 0, "low": math.nan, "high": math.nan, "reason": "no shared methods"}
    return {**out, "methods": keys}


def agreement(ev: RunsEvidence, methods, known: dict | None = None) -> pd.DataFrame:
    """Kendall's tau between our ranking and each paper's printed CIFAR-10 ResNet-50 ranking of
    the methods it shares with us, per column of :data:`.plan.AGREEMENT_COLUMNS`: one row per
    (paper, column, reading of the printed AdaFocal), columns ``paper, column, reading, n,
    tau, low, high, p, methods, our_setting, our_metric, note``; ``known``: rank frames already
    computed, by (setting, metric)."""
    got, rows = dict(known or {}), []
    for paper, columns in AGREEMENT_COLUMNS.items():
        for label, metric, scaled, setting, ours, our_metric in columns:
            printed = printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
            if (ours, our_metric) not in got:
                got[(ours, our_metric)] = ranks(ev, [m.key for m in methods], our_metric, ours)
            for mapping in readings(printed, methods):
                res = our_agreement(got[(ours, our_metric)], printed, mapping)
                rows.append({"paper": paper, "column": label, "n": res["n"], "tau": res["tau"], "low": res["low"],
                             "reading": "; ".join(f"ours: {name(k)}" for k, v in mapping.items() if k != v),
                             "high": res["high"], "p": res["p"], "methods": ", ".join(name(k) for k in res["methods"]),
                             "our_setting": ours, "our_metric": our_metric, "note": res["reason"]})
    cols = ["paper", "column", "reading", "n", "tau", "low", "high", "p", "methods", "our_setting", "our_metric", "note"]
    return pd.DataFrame(rows, columns=cols)


def paper_columns(label: str) -> dict:
    """``{paper: {printed key: value}}`` of the column ``label`` of :data:`.plan.AGREEMENT_COLUMNS`
    (e.g. "post-T ECE") for every paper that prints it (excluded methods left out)."""
    return {paper: printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
            for paper, columns in AGREEMENT_COLUMNS.items()
            for lab, metric, scaled, setting, _, _ in columns if lab == label}


#: Two printed numbers closer than this are "identical" (the papers print two decimals).
IDENTICAL_TOL = 0.005


def papers_pairs(columns: dict) -> pd.DataFrame:
    """Every pair of papers of ``columns`` (``{paper: {method: value}}``, in
    :data:`replicate.papers.PAPERS` order): shared methods, Kendall's tau-b of their printed
    values on them, how many shared numbers are identical, and a note when every shared number
    is (the later paper reprints the earlier one's: the agreement is then trivial) or some are."""
    order = [p for p in PAPERS if p in columns]
    rows = []
    for p, q in itertools.combinations(order, 2):
        shared = [m for m in columns[p] if m in columns[q]]
        a, b = [columns[p][m] for m in shared], [columns[q][m] for m in shared]
        same = int(sum(abs(x - y) < IDENTICAL_TOL for x, y in zip(a, b)))
        res = stats.kendall_tau(a, b) if shared else {"tau": math.nan, "p": math.nan, "reason": "no shared methods"}
        if shared and same == len(shared):
            note = (f"all {same} shared numbers identical: {PAPERS[q].short} reprints {PAPERS[p].short}'s numbers, "
                    f"so the agreement is trivial")
        else:
            note = f"{same} of {len(shared)} shared numbers identical (reprinted)" if same else res.get("reason") or ""
        rows.append({"paper_a": p, "paper_b": q, "n": len(shared), "methods": ", ".join(shared), "tau": res["tau"],
                     "p": res["p"], "identical": same, "note": note})
    return pd.DataFrame(rows, columns=["paper_a", "paper_b", "n", "methods", "tau", "p", "identical", "note"])


def between_papers() -> pd.DataFrame:
    """Every pair of papers, per printed column they share (pre-T ECE, post-T ECE) and, with
    the FTS paper's equal-mass ECE after TS, the other papers' post-T AdaECE (:func:`papers_pairs`)."""
    frames = [papers_pairs(paper_columns(label)).assign(column=label) for label in ("pre-T ECE", "post-T ECE")]
    adaece = {p: printed_column(p, "adaece", True) for p in HEADLINE}
    adaece[FTS_PAPER] = printed_column(FTS_PAPER, "adaece", True, FTS_SETTING, exclude=excluded(FTS_PAPER))
    frames.append(papers_pairs(adaece).assign(column="post-T AdaECE (FTS: equal-mass ECE after TS)"))
    return pd.concat(frames, ignore_index=True)


# ----------------------------------------------------------------------------- the claims and the report
def decide(p: cmp.Plan, runs: dict | None, fitted: dict | None = None, papers=tuple(PAPERS),
           cal: dict | None = None) -> dict:
    """``{paper: ClaimLog}``: each paper's headline claims (:func:`.claims.definitions`) on our
    runs (``{(method, seed): Run}`` widened to every seed in the store, calibrated with
    ``fitted`` (:func:`fits`) or ``cal`` (:func:`calibrated`); or why they are missing) and on
    the paper's printed row. A claim beyond the paper is not tested on the paper's side."""
    if runs:
        wide = rpt.with_store_seeds(runs, p.group("image"))
        if cal is None or not all((m, s, post) in cal for m, s in wide for post in POSTHOC):
            fitted = fitted if fitted is not None and all(r.key in fitted for r in wide.values()) else fits(wide)
            cal = calibrated(wide, fitted)
        ours = our_evidence(wide, cal, p.profile)
    else:
        from ...runs import damage

        ours = Missing("ours", p.profile, damage.reason(p.configs()) or NOT_IN_STORE.format(p.profile))
    methods = [m.key for m in p.methods["image"]]
    out = {}
    for paper in papers:
        printed = paper_side(paper)
        beyond = Missing("paper", printed.source, "a statement the book adds: the paper trains none of the "
                         "leaderboard's other models")
        log = ClaimLog(paper, CHAPTER, kind="experiment", section=SECTION)
        for c in definitions(paper, methods):
            log.extend(claims_log(paper, CHAPTER, [c], [ours, beyond if c.beyond else printed], SECTION, names()))
        out[paper] = log
    return out


def report(p: cmp.Plan, runs: dict) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{"image": {(method, seed): Run}}``)."""
    from ...book.scale import ScaleBox
    from ...comparison import scale

    image = runs["image"]
    wide = rpt.with_store_seeds(image, p.group("image"))
    keys = [m.key for m in p.methods["image"]]
    held: dict = {}

    def cal(r):                         # every run calibrated three ways, once per process
        if "cal" not in held:
            held["cal"] = calibrated(wide, r["fits"])
        return held["cal"]

    def shown(r):                       # the runs the chapter shows, as the noise model's evidence
        if "ev" not in held:
            held["ev"] = our_evidence(image, cal(r), p.profile)
        return held["ev"]

    sections = {
        "fits": lambda r: fits(wide),
        "evaluation": lambda r: evaluate_board({k: c for k, c in cal(r).items() if k[:2] in image}),
        "summary": lambda r: summarise_board(r["evaluation"]),
        "ranks": lambda r: {t: ranks(shown(r), keys, m, s) for t, (m, s) in RANK_PANELS.items()},
        "agreement": lambda r: agreement(shown(r), p.methods["image"], {
            (s, m): r["ranks"][t] for t, (m, s) in RANK_PANELS.items()}),
        "claims": lambda r: decide(p, image, cal=cal(r)),
        "scale_box": lambda r: ScaleBox(scale.describe(runs)),
    }
    return rpt.Report(CHAPTER, p.profile, rpt.keys_of(wide), sections)


_REPORTS: dict = {}     # report folder -> Report: the five builders of one process read one report


def claims(profile: str = "cpu", paper: str = "mukhoti2020") -> ClaimLog:
    """The registered claims of ``paper``: the chapter's default plan at ``profile``, its runs
    read from the store (never trained), from the report's ``claims`` section."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p)
    if runs is None:
        return decide(p, None, papers=(paper,))[paper]
    r = report(p, runs)
    return _REPORTS.setdefault(str(r.folder), r).claims[paper]


def _builder(paper: str):
    def build(profile: str = "cpu") -> ClaimLog:
        return claims(profile, paper)
    build.__name__ = build.__qualname__ = f"claims_{paper}"
    build.__doc__ = f":func:`claims` of {paper} (registered in :data:`replicate.claims.SOURCES`)."
    return build


def __getattr__(name_: str):
    """``claims_<paper key>``: the registered builder of that paper (:func:`claims` of it), for
    every paper of :data:`replicate.papers.PAPERS` (the registry names them; no list here)."""
    paper = name_.removeprefix("claims_")
    if name_.startswith("claims_") and paper in PAPERS:
        return _builder(paper)
    raise AttributeError(f"module {__name__!r} has no attribute {name_!r}")
