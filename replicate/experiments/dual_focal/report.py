"""Everything the Dual Focal Loss chapter (``exp_dual_focal``) computes from its plan and runs,
once, as the sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``evaluation``
    our numbers of the paper's Tables 1-13 in the long form of
    :mod:`replicate.comparison.layouts` (``tables``), the per-seed evaluation of the image and
    text runs (``raw``; every post-T number at the temperature chosen by validation ECE, as
    the paper's tables say) and the run groups that are missing (``missing``);
``figures``
    the numbers behind Figs. 2 and 4 (first seed: :mod:`.figures` draws them);
``intervals``
    the 95 % interval of each of our cells of Tables 1, 2 and 5-8 (noise model);
``claims``
    the claims' verdicts on both sides (:func:`decide`): the paper's printed tables and our
    runs (every seed the store holds of the chapter's configurations);
``identical``
    which of the chapter's runs have identical test logits (:func:`replicate.comparison.noise.fingerprint`);
``scale_box``
    the box atop the page.

Our side (:func:`ours`) is one :class:`replicate.comparison.noise.RunsEvidence` row per data set: the
image row holds the seven methods, Table 3's AdaFocal and AdaDualFocal, Table 4's dual
terms (setting: the printed row; method ``dual_focal`` or ``dual_focal_code`` by reading),
Table 13's gammas (``gamma=g``) and the same runs again under Tables 3 and 12 (a run under two
settings is computed once: :class:`Ours`), and the Named numbers behind the figures
(:func:`.figures.figure_numbers`), resampled with the noise model's own draws. The paper's side
(:func:`paper_side`) is Tables 1-13 as printed, laid out in the same rows and settings.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Cell, Draws, Missing
from ...comparison import chapter, layouts
from ...comparison import report as rpt
from ...comparison.noise import RowRuns, RunsEvidence
from . import claims as cl
from . import figures as fig
from . import plan as dfl

PAPER_SOURCE = "Tao et al. (2023), Tables 1-13, every printed row"
PAPER_TABLES = ("table1", "table2", "table3", "table4", "table5", "table6", "table7", "table8", "table9",
                "table10", "table10_kde", "table11", "table12", "table13")
#: Tables 1, 2, 5-8 (and 11): our metric -> the paper's table; the tables' metrics.
MAIN_TABLES = {"ece": "table1", "error": "table2", "adaece": "table5", "classwise_ece": "table6", "mce": "table7",
               "nll": "table8", "rbs": "table11"}
MAIN_METRICS = ("ece", "adaece", "classwise_ece", "mce", "nll", "error")
#: Every table of the DFL paper reports post-T numbers at the temperature chosen by validation ECE.
T_SELECTED_BY = {k: "ece" for k in (*MAIN_METRICS, "T")}
OOD_SETTINGS = {v: k for k, v in cl.OOD.items()}                  # our OOD set -> Table 9's setting
#: Table -> the setting its cells take in the rows of Table 1 (Tables 4, 9, 13 carry their own).
SETTINGS = {"table3": cl.T3, "table10": cl.T10, "table10_kde": cl.T10, "table12": cl.T12}
METRIC_LABELS = {"rbs": "RBS", "ece_kde": "ECE_KDE"}
METHOD_LABELS = {"kde_xe": "KDE-XE", "dual_focal_code": "DFL (the authors' code)"}


def names():
    """The book's display names, with this chapter's metrics and methods."""
    n = rpt.names()
    n.metrics.update(METRIC_LABELS)
    n.methods.update(METHOD_LABELS)
    return n


# ----------------------------------------------------------------------------- the paper's side
def paper_long() -> pd.DataFrame:
    """The paper's Tables 1-13 in long form, in the rows of Table 1 (Tables 3 and 10 print
    their own row labels of the same networks) with each non-main table's setting; Table 9
    one row per (network, OOD set), its cases."""
    f = layouts.paper_long(dfl.PAPER, PAPER_TABLES)
    t1 = {(r.dataset_key, r.model_key): r.row for r in f[f.table == "table1"].itertuples()}
    row = [t1.get((d, m), r) for d, m, r in zip(f.dataset_key, f.model_key, f.row)]
    ood = f.table == "table9"
    row = [f"{r}, OOD {s.removeprefix('ood=')}" if o else r for r, s, o in zip(row, f.setting, ood)]
    setting = [SETTINGS.get(t, s) for t, s in zip(f.table, f.setting)]
    return f.assign(row=row, setting=setting)


def paper_named(long: pd.DataFrame) -> dict:
    """The Named numbers of the claims that compare the paper's rows (:data:`.claims.ROWS_ONLY`),
    from the printed cells: ``{(row, key): value}``."""
    t1 = long[(long.table == "table1") & (long.metric == "ece")]
    pre = t1[~t1.temperature_scaled.astype(bool)].set_index(["dataset_key", "model_key", "method"])["mean"]
    post = t1[t1.temperature_scaled.astype(bool)].set_index(["dataset_key", "model_key", "method"])["mean"]
    t3 = long[long.table == "table3"].set_index(["dataset_key", "model_key", "method"])["mean"]
    out = {}
    for q in cl.named():
        prefix, *parts = q.key.split("|")
        if prefix not in cl.ROWS_ONLY:
            continue
        ds, net = parts[:2]
        if prefix == "table1":
            here = post.xs((ds, net), level=(0, 1)).reindex(cl.SEVEN)
            value = here[cl.IFL] - here.drop(cl.IFL).min()
        elif prefix == "table3":
            value = t3.get((ds, net, parts[2]), math.nan)
        elif parts[2] == "mean":
            value = pre.xs((ds, net), level=(0, 1)).reindex(cl.SEVEN).mean()
        else:
            value = pre.get((ds, net, parts[2]), math.nan)
        if np.isfinite(value):
            out[(cl.COMPARED["table3" if prefix == "table3" else "table1"], q.key)] = float(value)
    return out


def paper_side():
    """The paper's printed Tables 1-13 as evidence without noise; the figures' numbers absent."""
    long = paper_long()
    absent = {q.key: f"{cl.FIGURES[q.key.split('|')[0]]} prints no numbers: the claim is tested on our runs only"
              for q in cl.named() if q.key.split("|")[0] in cl.FIGURES}
    absent["dual_focal_code"] = ("the paper prints each row of Table 4 once, under its label: the code reading is a "
                                 "reading of what our runs train")
    ev = rpt.paper_evidence(long, PAPER_SOURCE, paper_named(long), absent)
    ev.names = names()
    return ev


# ----------------------------------------------------------------------------- our side
class Ours(RunsEvidence):
    """:class:`replicate.comparison.noise.RunsEvidence` with three additions (for the library to take
    over): a run set standing under several (method, setting) keys of a row is resampled once
    (the first key stands for the others); ``absent`` ``{method, metric or setting: reason}``
    says why a cell has no run (as :class:`~replicate.claims.evidence.Exact` does); and the
    metric ``rbs`` is the root of the Brier score's resamples (Table 11)."""

    def __init__(self, rows, source, names_=None, absent=None, **kw):
        super().__init__(rows, source, names_, **kw)
        self.absent, self._same = dict(absent or {}), {}

    def canonical(self, row: str, q):
        if not isinstance(q, Cell) or q.setting in cl.OOD:
            return q
        if row not in self._same:
            r, first, self._same[row] = self.row(row), {}, {}
            for m, st in dict.fromkeys((m, st) for m, st, _ in r.runs):
                keys = tuple((s, r.runs[(m, st, s)].key) for s in r.seeds(m, st))
                self._same[row][(m, st)] = first.setdefault(keys, (m, st))
        m, st = self._same[row].get((q.method, q.setting), (q.method, q.setting))
        return replace(q, method=m, setting=st)

    def draws(self, row: str, q):
        c = self.canonical(row, q)
        if isinstance(c, Cell) and c.metric == "rbs":
            d = super().draws(row, replace(c, metric="brier"))
            if not isinstance(d, str):
                d = Draws(math.sqrt(d.point / 100), np.sqrt(d.reps / 100), d.noise, d.used)
        else:
            d = super().draws(row, c)
        if isinstance(d, str) and isinstance(q, Cell):
            return next((self.absent[w] for w in (q.metric, q.method, q.setting) if w in self.absent), d)
        return d

    def identical(self, row: str, a, b):
        return super().identical(row, self.canonical(row, a), self.canonical(row, b))


def _reason(p: cmp.Plan, group: str) -> str:
    if group not in p.groups:
        return f"the {group} runs are not planned ({'text_dataset=None' if group == 'text' else 'ablations=False'})"
    return (f"the chapter's {p.profile} runs of group {group!r} are not all in the run store (execute the chapter "
            f"at profile {p.profile})")


def _image_runs(p: cmp.Plan, runs: dict, every_seed: bool) -> dict:
    """``{(method, setting, seed): Run}`` of the image row (see the module docstring)."""
    def wide(g):
        return rpt.with_store_seeds(runs[g], p.group(g)) if every_seed else dict(runs[g])
    image = wide("image")
    out = {(m, "", s): r for (m, s), r in image.items()}
    if "table3" in runs:
        t3 = wide("table3")
        out.update({(dfl.TABLE3_RENAME.get(m, m), "", s): r for (m, s), r in t3.items() if m in dfl.TABLE3_KEYS})
        out.update({(dfl.TABLE3_RENAME.get(m, m), cl.T3, s): r for (m, s), r in t3.items()})
    out.update({(m, cl.T12, s): r for (m, s), r in image.items()})
    if "dual_logit" in runs:
        rows = {k: (setting, dfl.READINGS[reading]) for k, setting, reading, _ in dfl.DUAL_LOGIT_ROWS}
        for (m, s), r in wide("dual_logit").items():
            if m in rows:
                out[(rows[m][1], rows[m][0], s)] = r
            else:
                for name in dfl.READINGS.values():
                    out[(name, dfl.FL_ROW if m == cl.FL else dfl.DFL_ROW, s)] = r
    if "gamma" in runs:
        for (m, s), r in wide("gamma").items():
            out[(cl.DFL, f"gamma={r.config.loss_params['gamma']:g}", s)] = r
    return out


def ours(p: cmp.Plan, runs: dict, every_seed: bool = True, figures: bool = True) -> Ours | None:
    """Our side of the claims: the image row and the text row of ``runs`` (``{group: {(key,
    seed): Run}}``), widened to every seed in the store (``every_seed``), with the figures'
    Named numbers (``figures``); None without image runs."""
    if not runs.get("image"):
        return None
    absent = {"kde_xe": cl.KDE_XE, "ece_kde": cl.KDE_XE, cl.T10: cl.KDE_XE}
    for group, what in (("table3", ("adafocal", "adadual_focal")), ("dual_logit", dfl.TABLE4_SETTINGS),
                        ("gamma", [f"gamma={g:g}" for g in dfl.GAMMAS])):
        if group not in runs:
            absent.update(dict.fromkeys(what, _reason(p, group)))
    unavailable = {q.key: cl.ROWS_ONLY[q.key.split("|")[0]] for q in cl.named() if q.key.split("|")[0] in cl.ROWS_ONLY}
    image = _image_runs(p, runs, every_seed)
    first = next(iter(image.values())).resolved
    named = dict(unavailable)
    if figures:
        history = rpt.with_store_seeds(runs["history"], p.group("history")) if "history" in runs else None
        named.update(fig.figure_numbers(image, history, f"{first['dataset']}, {first['model']}",
                                        _reason(p, "history")))
    seeds = sorted({s for (m, st, s) in image if (m, st) == (cl.DFL, "")})
    named["runs|repeated"] = Draws(float(len(seeds)), None, "a count of the stored seeds (no noise)",
                                   ((f"{first['dataset']}, {first['model']}", "DFL", tuple(seeds)),))
    rows = [RowRuns(f"{first['dataset']}, {first['model']}", first["dataset"], first["model"], image,
                    t_selected_by=T_SELECTED_BY, ood_settings=cl.OOD, named=named)]
    if runs.get("text"):
        text = rpt.with_store_seeds(runs["text"], p.group("text")) if every_seed else dict(runs["text"])
        rows.append(rpt.row(text, t_selected_by=T_SELECTED_BY, named=unavailable))
    return Ours(rows, p.profile, names(), absent)


def decide(p: cmp.Plan, runs: dict | None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`.claims.definitions` on our runs (every
    seed the store holds; or why they are missing) and on the paper's printed tables."""
    side = ours(p, runs or {})
    side = side or Missing("ours", p.profile, chapter.not_in_store(p.profile, p))
    return claims_log(dfl.PAPER, dfl.CHAPTER, cl.definitions(), [side, *chapter.damaged_sides(p, runs), paper_side()],
                      dfl.SECTION, names())


# ----------------------------------------------------------------------------- our tables
def evaluate(runs: dict, metric_names=MAIN_METRICS) -> pd.DataFrame:
    """:func:`replicate.comparison.evaluate_runs` with every temperature chosen by validation ECE."""
    return cmp.evaluate_runs(runs, metrics=metric_names, t_selected_by={k: "ece" for k in MAIN_METRICS})


def _rbs_frame(runs: dict) -> pd.DataFrame:
    """RBS of every run's test logits (no temperature scaling, as in Table 11; not x100)."""
    from ... import metrics

    return pd.DataFrame([{"method": k, "seed": s, "metric": "rbs", "temperature_scaled": False,
                          "value": metrics.root_brier_score(*r.logits("test"), is_probs=False), "T": np.nan,
                          "T_selected_by": ""} for (k, s), r in runs.items()])


def _ood_frame(runs: dict) -> pd.DataFrame:
    """Entropy AUROC (%) of every run on each OOD set it recorded, pre and post its
    validation-ECE temperature, with Table 9's setting."""
    from ... import metrics

    rows = []
    for (k, s), r in runs.items():
        z_in = r.logits("test")[0]
        for name in r.ood_sets:
            if name not in OOD_SETTINGS:
                continue
            z_out = r.logits(f"ood:{name}")[0]
            for scaled, T in ((False, 1.0), (True, r.temperature)):
                auroc = metrics.ood_auroc(metrics.probs_from_logits(z_in, T), metrics.probs_from_logits(z_out, T),
                                          validate=False)
                rows.append({"method": k, "seed": s, "setting": OOD_SETTINGS[name], "metric": "auroc",
                             "temperature_scaled": scaled, "value": 100 * auroc, "T": T if scaled else np.nan,
                             "T_selected_by": "ece" if scaled else ""})
    return pd.DataFrame(rows, columns=["method", "seed", "setting", "metric", "temperature_scaled", "value", "T",
                                       "T_selected_by"])


def _where(group_runs: dict) -> tuple[str, str, str]:
    r = next(iter(group_runs.values())).resolved
    return f"ours: {r['dataset']}, {r['model']}", r["dataset"], r["model"]


def _main(runs: dict) -> tuple[list, pd.DataFrame]:
    row, d, m = _where(runs)
    raw = evaluate(runs)
    s = cmp.summarise(pd.concat([raw, _rbs_frame(runs)], ignore_index=True))
    out = [layouts.summary_long(s, t, row, d, m, metrics=[k]) for k, t in MAIN_TABLES.items()]
    cells = pd.concat([s[(s.metric == k) & (s.temperature_scaled == (post == "ts"))] for k, post in cl.TABLE12])
    out.append(layouts.summary_long(cells, "table12", row, d, m))
    ood = _ood_frame(runs)
    for setting in cl.OOD:
        f = ood[ood.setting == setting].drop(columns="setting")
        if len(f):
            out.append(layouts.summary_long(cmp.summarise(f), "table9", row, d, m, setting=setting))
    return out, raw


def _dual_logit(runs: dict, smoke: bool) -> list:
    row, d, m = _where(runs)
    s = cmp.summarise(evaluate(runs, ("ece", "adaece")))
    s = s[~s.temperature_scaled]
    out = []
    for reading, name in dfl.READINGS.items():
        setting = {cl.FL: dfl.FL_ROW, cl.DFL: dfl.DFL_ROW,
                   **{meth.key: sett for meth, sett, rd in dfl.dual_logit_methods(smoke) if rd == reading}}
        f = s[s.method.isin(tuple(setting))]
        if f.method.nunique() > 2:
            out.append(layouts.summary_long(f, "table4", row, d, m, setting=setting, rename={k: name for k in setting}))
    return out


def _gamma(runs: dict) -> pd.DataFrame:
    row, d, m = _where(runs)
    s = cmp.summarise(evaluate(runs, ("ece", "adaece", "classwise_ece", "error")))
    acc = s[s.metric == "error"].assign(metric="accuracy", mean=lambda f: 100 - f["mean"])
    s = pd.concat([s[s.metric != "error"], acc[~acc.temperature_scaled]], ignore_index=True)
    gammas = {k: f"gamma={r.config.loss_params['gamma']:g}" for (k, _), r in runs.items()}
    return layouts.summary_long(s, "table13", row, d, m, setting=gammas, rename={k: cl.DFL for k in gammas})


def evaluation(p: cmp.Plan, runs: dict) -> dict:
    """Our numbers of Tables 1-13 (the runs the chapter shows): ``{"tables": long frame,
    "raw": {"image", "text": per-seed frames}, "missing": {group: reason}}``."""
    frames, raw = [], {}
    missing = {g: _reason(p, g) for g in ("image", "history", "table3", "dual_logit", "gamma", "text")
               if g not in runs}
    if "image" in runs:
        got, raw["image"] = _main(runs["image"])
        frames += got
    if "table3" in runs:
        row, d, m = _where(runs["table3"])
        s = cmp.summarise(evaluate(runs["table3"], ("ece",)))
        frames.append(layouts.summary_long(s, "table3", row, d, m, rename=dfl.TABLE3_RENAME))
    if "dual_logit" in runs:
        frames += _dual_logit(runs["dual_logit"], p.profile == "smoke")
    if "gamma" in runs:
        frames.append(_gamma(runs["gamma"]))
    if "text" in runs:
        row, d, m = _where(runs["text"])
        raw["text"] = evaluate(runs["text"])
        s = cmp.summarise(raw["text"])
        frames += [layouts.summary_long(s, MAIN_TABLES[k], row, d, m, metrics=[k]) for k in ("ece", "error")]
    tables = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=layouts.LONG)
    return {"tables": tables, "raw": raw, "missing": missing}


def intervals(p: cmp.Plan, runs: dict) -> dict:
    """``{group: {metric: {(method, post T): {"mean", "low", "high", "how"}}}}``: the 95 %
    interval of each of our cells of Tables 1, 2 and 5-8 (the seeds the chapter shows),
    from the noise model (:func:`replicate.comparison.report.table_intervals`)."""
    ev = ours(p, {g: runs[g] for g in ("image", "text") if g in runs}, every_seed=False, figures=False)
    out = {}
    for group, metrics in (("image", MAIN_METRICS), ("text", ("ece", "error"))):
        if group in runs:
            row = rpt.row(runs[group]).name
            out[group] = rpt.table_intervals(ev, [m.key for m in p.methods[group]], metrics, row_name=row)
    return out


def identical(runs: dict) -> dict:
    """The chapter's distinct runs whose test logits are identical: ``{"groups": [[(group,
    method, seed), ...], ...], "n_runs": distinct runs compared}``
    (:func:`replicate.comparison.noise.fingerprint`)."""
    from ...comparison.noise import fingerprint

    seen, by_print = {}, {}
    for g, group in runs.items():
        for (k, s), r in group.items():
            if r.key not in seen:
                seen[r.key] = (g, k, s)
                by_print.setdefault(fingerprint(r), []).append(seen[r.key])
    return {"groups": [v for v in by_print.values() if len(v) > 1], "n_runs": len(seen)}


def report(p: cmp.Plan, runs: dict) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{group: {(key, seed): Run}}``)."""
    from ...book.scale import ScaleBox
    from ...comparison import scale

    wide = {g: rpt.with_store_seeds(runs[g], p.group(g)) for g in runs}
    sections = {
        "evaluation": lambda r: evaluation(p, runs),
        "figures": lambda r: fig.frames(p, runs),
        "intervals": lambda r: intervals(p, runs),
        "claims": lambda r: decide(p, runs),
        "identical": lambda r: identical(runs),
        "scale_box": lambda r: ScaleBox(scale.describe(runs)),
    }
    return rpt.Report(dfl.CHAPTER, p.profile, rpt.keys_of(wide), sections)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained), decided on both sides."""
    p = dfl.plan(profile, device="cpu")
    runs = cmp.load_groups(p)
    return report(p, runs).claims if runs.get("image") else decide(p, None)
