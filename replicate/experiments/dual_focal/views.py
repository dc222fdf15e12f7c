"""What the Dual Focal Loss chapter shows: each of the paper's tables with ours beside it, the
figures, and the texts glued into its prose, read from one :class:`Chapter` (the plan, its
runs and their :mod:`.report`). Nothing here trains or decides a claim.

Every table's caption says where its numbers come from: the paper's table and row, and our
profile, data, network, schedule and seeds (:func:`replicate.comparison.describe_runs`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from ... import comparison as cmp
from ...comparison import layouts as lay
from . import plan as exp
from . import report as rep

#: Tables 1, 2 and 5-8: our metric -> the paper's table
MAIN = {"ece": "table1", "error": "table2", "adaece": "table5", "classwise_ece": "table6", "mce": "table7",
        "nll": "table8"}
TABLE12_CELLS = [("ece", False, "ECE"), ("ece", True, "ECE(T)"), ("adaece", False, "AdaECE"),
                 ("classwise_ece", False, "classwise ECE")]
#: The sides of the verdict prose (:func:`replicate.claims.verdict_counts`).
VERDICT_SIDES = {"ours": "ours", "paper": "paper"}
#: What the chapter cannot replicate offline, the paper's tables it concerns, and why.
NOT_REPLICATED = (
    ("CIFAR-100 rows", "Tables 1-3, 5-8, 11", "CIFAR-100 is not in the offline data directory; dataset='cifar100' "
     "runs the chapter on it once its files are there (replicate.data loads them)"),
    ("Tiny-ImageNet row", "Tables 1, 2, 5-8", "Tiny-ImageNet is not in the offline data directory; "
     "dataset='tiny_imagenet' runs the chapter on it once its files are there"),
    ("SVHN as OOD set", "Table 9", "SVHN is not in the offline data directory; runs record SVHN logits "
     "automatically when its files are present at training time"),
    ("the paper's four networks at cpu", "Tables 1-13", "the cpu profile trains tiny_cnn on 3,000 images for 20 "
     "epochs; the gpu and paper profiles (model=resnet50, resnet110, wide_resnet26_10, densenet121) plan the "
     "papers' networks and schedules"),
    ("KDE-XE comparison", "Table 10", "KDE-XE (Popordanoska et al. 2022) and its training setting (ResNet-110sd, "
     "DenseNet-40) are not implemented here"),
    ("GloVe embeddings for 20 Newsgroups", "Tables 1, 2", "GloVe is not available offline; the text network's "
     "frozen embeddings are word2vec vectors trained on the training documents (GloVe is used when its file "
     "glove.6B.100d.txt is in the data directory)"),
)


def paper_tables() -> pd.DataFrame:
    """The paper's Tables 1-13 as printed, in long form."""
    return lay.paper_long(exp.PAPER, rep.PAPER_TABLES)


@dataclass
class Chapter:
    """The chapter's plan, its runs (``{group: {(key, seed): Run}}``) and their report."""

    plan: cmp.Plan
    runs: dict
    report: object

    @cached_property
    def ours(self) -> dict:
        """Our numbers (the report's ``evaluation``: ``tables``, ``raw``, ``missing``)."""
        return self.report["evaluation"]

    @cached_property
    def paper(self) -> pd.DataFrame:
        return paper_tables()

    @property
    def image(self) -> dict:
        return self.runs["image"]

    @cached_property
    def first(self):
        return next(iter(self.image.values()))

    @property
    def dataset(self) -> str:
        return self.first.resolved["dataset"]

    @property
    def net(self) -> str:
        return self.first.resolved["model"]

    @property
    def ref(self):
        return self.plan.references[self.dataset]

    @property
    def paper_row(self) -> str:
        return lay.row_label(self.ref.dataset, self.ref.model)

    @property
    def methods(self) -> list:
        return self.plan.methods["image"]

    @property
    def labels(self) -> dict:
        return {m.key: m.short for m in self.methods}

    @property
    def mine(self) -> pd.DataFrame:
        """Our long-form numbers on the image data set (the text row left out)."""
        t = self.ours["tables"]
        return t[t.dataset_key == self.dataset]

    @cached_property
    def data_name(self) -> str:
        return cmp.data_name(self.first)

    def source(self, group: str = "image") -> str:
        """The caption text of our runs of ``group``."""
        return cmp.describe_runs(self.runs[group], self.data_name if group != "text" else
                                 cmp.data_name(next(iter(self.runs[group].values()))))

    def caption(self) -> str:
        """The figure caption of the first seed's image runs."""
        from ...plots import caption

        return caption(profile=self.plan.profile, dataset=self.data_name, seed=self.plan.seeds[0], model=self.net)


def chapter(p: cmp.Plan, runs: dict, report=None) -> Chapter:
    """The :class:`Chapter` of plan ``p``, its trained or loaded ``runs`` and their report
    (:func:`.report.report` when not given)."""
    if "image" not in runs:
        raise ValueError("runs must hold the image group (train the plan first)")
    return Chapter(p, runs, report if report is not None else rep.report(p, runs))


def styled(frame: pd.DataFrame, caption: str, hide_index: bool = False):
    """``frame`` as a Styler with ``caption`` underneath (the comparison tables' style)."""
    s = frame.style.set_caption(caption).set_table_styles(
        [{"selector": "caption", "props": "caption-side: bottom; font-size: small; text-align: left;"}])
    return s.hide(axis="index") if hide_index else s


# ----------------------------------------------------------------------------- the setting
def gammas() -> pd.DataFrame:
    """DFL's gamma per network (the authors' README), one row."""
    per = cmp.METHODS["dual_focal"].per_model
    return pd.DataFrame({f"{d}, {m}": [v["gamma"]] for (d, m), v in per.items()}, index=["DFL gamma"])


def methods(p: cmp.Plan):
    """The plan's image methods with their loss parameters on its network."""
    r = next(iter(p.image.values())).resolve()
    return cmp.methods_frame(p.methods["image"], "image", r["dataset"], r["model"]).style.hide(axis="index")


def run_costs(runs: dict) -> pd.DataFrame:
    """What each run cost when it was trained: ``group, method, seed, key, store, seconds``
    (the record's wall time: data, training and evaluation) of ``{group: {(key, seed): Run}}``;
    a run shared by two groups is listed under the first."""
    rows, seen = [], set()
    for g, group in runs.items():
        for (k, s), r in group.items():
            if r.key not in seen:
                seen.add(r.key)
                rows.append({"group": g, "method": k, "seed": s, "key": r.key, "store": r.store,
                             "seconds": r.wall_time})
    return pd.DataFrame(rows, columns=["group", "method", "seed", "key", "store", "seconds"])


def costs(c: Chapter):
    """Wall time of the distinct runs per group, as recorded when each was trained."""
    per = run_costs(c.runs).groupby("group", sort=False).seconds.agg(["count", "sum", "median"])
    per = per.set_axis(["runs", "total (s)", "median per run (s)"], axis=1).rename_axis("group").reset_index()
    return styled(per, f"wall time (s) of the distinct runs per group, recorded when each was trained; "
                       f"profile {c.plan.profile}, seeds {', '.join(map(str, c.plan.seeds))}", hide_index=True).format(
        {"group": lambda g: f"<code>{g}</code>", "total (s)": "{:.1f}", "median per run (s)": "{:.1f}"}, escape=None)


def notes(tables, rows=None):
    """The recorded defects of the paper's ``tables`` (cell notes of ``rows`` only)."""
    return lay.table_notes(exp.PAPER, tables, rows=rows).style.hide(axis="index")


def noted_rows(table: str) -> int:
    """How many printed rows of ``table`` carry a cell note in its recorded defects
    (:func:`replicate.comparison.layouts.table_notes`): distinct (data set, network,
    setting) among the noted cells."""
    t = lay.table_notes(exp.PAPER, table)
    cells = [c for c in t["cell"] if c != "table"]
    return len({", ".join(part.split(", ")[:3]) for c in cells for part in c.split("; ")})


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def noted_rows_text(table: str) -> str:
    """:func:`noted_rows` of ``table`` as the start of a sentence: "two rows", "one row"."""
    n = noted_rows(table)
    word = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return f"{word} row{'' if n == 1 else 's'}"


def not_replicated() -> pd.DataFrame:
    """:data:`NOT_REPLICATED` as a table."""
    return pd.DataFrame(NOT_REPLICATED, columns=["what", "paper tables", "why"])


def identical_runs(c: Chapter) -> str:
    """Which of the chapter's variants are the same model (identical test logits) at its
    profile: the sentence the prose glues (the report's ``identical`` section)."""
    got = c.report["identical"]
    if not got["groups"]:
        return (f"no two of the {got['n_runs']} distinct runs of this chapter at profile {c.plan.profile} have "
                f"identical test logits: every variant is its own model")
    name = {**{m.key: m.short for g in c.plan.methods.values() for m in g}}
    parts = ["; ".join(f"{name.get(k, k)} ({g}, seed {s})" for g, k, s in group) for group in got["groups"]]
    return (f"at profile {c.plan.profile}, {len(parts)} set{'s' if len(parts) > 1 else ''} of the "
            f"{got['n_runs']} distinct runs have identical test logits and are one model each: "
            + " | ".join(parts))


# ----------------------------------------------------------------------------- the tables
def main_tables(c: Chapter, group: str = "image") -> list:
    """Tables 1, 2, 5-8 (only 1 and 2 for the text group): ours beside the paper's row,
    every post-T number at the temperature chosen by validation ECE; each of our cells
    carries its 95 % interval on hover (the noise model, the report's ``intervals``)."""
    if group not in c.runs:
        return []
    ref = c.plan.references[next(iter(c.runs[group].values())).resolved["dataset"]]
    paper = cmp.paper_values(ref)
    keys = MAIN if group == "image" else {k: MAIN[k] for k in ("ece", "error")}
    iv = c.report["intervals"][group]
    return [cmp.styled_table(c.ours["raw"][group], paper, m, c.plan.methods[group], ref, c.source(group),
                             intervals=iv[m], selected_by="ece") for m in keys]


def table3(c: Chapter):
    """Table 3: FLSD-53, AdaFocal (our Eq. 4 rule), DFL, AdaDualFocal pre-T ECE beside the
    paper's CIFAR-10 ResNet-50 row; None without the table3 group."""
    if "table3" not in c.runs:
        return None
    keys = {exp.TABLE3_RENAME.get(m.key, m.key): m.label for m in c.plan.methods["table3"]}
    t = lay.methods_side_by_side(c.mine, c.paper, "table3", ["ece"], keys, "CIFAR-10, Resnet50")
    return styled(t, f"ECE (%) pre T; paper: Table 3, CIFAR-10 ResNet-50; {c.source('table3')}")


def printed_table3(c: Chapter):
    """Table 3 as printed (rows as labelled; see its notes for the swapped labels), each
    method headed by its label."""
    return lay.by_label(lay.pivot(c.paper, "table3", "ece"), "paper row", caption="Table 3 as printed, ECE (%) pre T")


def dual_logit_rows():
    """Table 4's rows and the loss variant each is trained with, in both readings."""
    rows = pd.DataFrame(exp.DUAL_LOGIT_ROWS, columns=["key", "printed row", "reading", "loss parameters"])
    rows["printed row"] = rows["printed row"].str.split(": ", n=1).str[1]
    return rows.style.hide(axis="index")


def table4(c: Chapter):
    """Table 4: every dual logit, ours in both readings beside the paper's."""
    if "dual_logit" not in c.runs:
        return None
    cols = {"dual_focal": "ours, label", "dual_focal_code": "ours, code"}
    t = lay.settings_side_by_side(c.mine, c.paper, "table4", ["ece", "adaece"], exp.TABLE4_SETTINGS, cols,
                                  "dual_focal")
    return styled(t, f"ECE and AdaECE (%) pre T; paper: Table 4, CIFAR-10 ResNet-50; {c.source('dual_logit')}")


def table9(c: Chapter) -> list:
    """Table 9, one table per OOD set: entropy AUROC pre and post T beside the paper's
    ResNet-50 row (ours: the runs that recorded that set, mean over their seeds)."""
    out = []
    for setting in rep.OOD_SETTINGS.values():
        t = lay.methods_side_by_side(c.mine, c.paper, "table9", ["auroc", ("auroc", True)], c.labels,
                                     "CIFAR-10, ResNet-50", setting=setting)
        out.append(styled(t, f"AUROC (%), {setting}; paper: Table 9, ResNet-50; ours: the runs that recorded "
                             f"it, {c.source()}"))
    return out


def roc(c: Chapter, ood_set: str = "cifar10c_gaussian5"):
    """ROC curves of the first seed's runs on ``ood_set`` (None when no run recorded it)."""
    from . import figures as fig

    s = c.plan.seeds[0]
    frame = fig.roc_frame({m.short: c.image[(m.key, s)] for m in c.methods if (m.key, s) in c.image}, ood_set)
    title = {"cifar10c_gaussian5": "CIFAR-10 test vs CIFAR-10-C Gaussian noise 5 (generated)",
             "svhn": "CIFAR-10 test vs SVHN test"}[ood_set]
    return fig.roc_figure(frame, title, c.caption()) if len(frame) else None


def table11(c: Chapter):
    """Table 11: RBS beside the paper's row (a score, 4 decimals, no temperature scaling)."""
    t = lay.methods_side_by_side(c.mine, c.paper, "table11", ["rbs"], c.labels, c.paper_row, digits=4)
    return styled(t, f"RBS (root Brier score, plug-in estimator; not %); paper: Table 11, {c.paper_row}; "
                     f"{c.source()}")


def rbs_bounds(paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """Can Table 11's printed RBS values belong to the models of Table 2? Per (row, method)
    with both numbers: the printed RBS, the printed error, the smallest RBS a model with
    that error can have (:func:`replicate.metrics.root_brier_lower_bound`, ``sqrt(e / 2)``)
    and the smallest Brier score (``e / 2``), and whether the printed value respects each."""
    from ... import metrics

    t = paper_tables() if paper is None else paper
    rbs = t[(t.table == "table11") & (t.metric == "rbs")].set_index(["row", "method"])["mean"]
    err = t[(t.table == "table2") & (t.metric == "error")].set_index(["row", "method"])["mean"]
    both = rbs.to_frame("printed").join(err.to_frame("error_pct"), how="inner").dropna().reset_index()
    both["rbs_at_least"] = [metrics.root_brier_lower_bound(e / 100) for e in both["error_pct"]]
    both["brier_at_least"] = both["error_pct"] / 200
    both["fits_rbs"] = both["printed"] >= both["rbs_at_least"]
    both["fits_brier"] = both["printed"] >= both["brier_at_least"]
    return both


def _of(k: int, n: int) -> str:
    """``k`` of ``n`` in words: "all 48", "none of the 48", "only 3 of the 48" (fewer than
    half), "30 of the 48"."""
    if k == n:
        return f"all {n}"
    if k == 0:
        return f"none of the {n}"
    return f"{'only ' if 2 * k < n else ''}{k} of the {n}"


def rbs_sentence(bounds: pd.DataFrame) -> str:
    """What :func:`rbs_bounds` (the frame :func:`rbs_check` counts) says, in one sentence
    whose counts and conclusion are read from it: how many printed values respect the
    smallest RBS and the smallest Brier score of Table 2's errors, and which reading of
    Table 11 that leaves (Brier scores printed as RBS; either; neither)."""
    n, root, brier = len(bounds), int(bounds.fits_rbs.sum()), int(bounds.fits_brier.sum())
    if n == 0:
        return "No printed value of Table 11 has an error printed in Table 2 beside it: the bounds check nothing."
    head = (f"{_of(root, n).capitalize()} printed values {'is' if root == 1 else 'are'} at least the smallest "
            f"RBS of a model with the error printed in Table 2, and {_of(brier, n)} "
            f"{'respects' if brier == 1 else 'respect'} the Brier-score bound")
    if brier == n and root < n:
        return head + ": if these are the models of Table 2, Table 11 prints Brier scores (squared), not their roots."
    if root == n:
        return head + ": the bounds cannot tell RBS from Brier scores here."
    return head + (": the values below the Brier-score bound cannot belong to the models of Table 2 under "
                   "either reading.")


def _mukhoti_plan(plan: cmp.Plan) -> cmp.Plan:
    """The Mukhoti chapter's default plan for the text data set of ``plan``, at its profile
    and first seed (the seed of the text group)."""
    from ..focal_loss import plan as mukhoti

    text = plan.group("text")
    if not text:
        return mukhoti.plan(plan.profile, seeds=plan.seeds[:1], text_dataset=None, device="cpu")
    return mukhoti.plan(plan.profile, seeds=plan.seeds[:1], text_dataset=next(iter(text.values())).dataset,
                        device="cpu")


def text_runs_sentence(plan: cmp.Plan, other: cmp.Plan) -> str:
    """Which of ``plan``'s text runs ``other`` (the Mukhoti chapter's plan at the same
    profile) already holds, by run key, in one sentence: "The DFL and inverse focal runs
    are the 2 this chapter adds to the 5 of the Mukhoti chapter it reuses"."""
    ours, theirs = plan.group("text"), {cfg.key for cfg in other.group("text").values()}
    if not ours:
        return "The chapter trains no text runs (text_dataset = None)."
    labels = {m.key: m.short for m in plan.methods["text"]}
    new = [labels[k] for (k, _), cfg in ours.items() if cfg.key not in theirs]
    shared = len(ours) - len(new)

    def runs(names):
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]

    if not new:
        return (f"All {len(ours)} text runs are the Mukhoti chapter's, reused." if len(ours) > 1
                else "The text run is the Mukhoti chapter's, reused.")
    if not shared:
        return "None of the text runs is the Mukhoti chapter's: the chapter trains them all."
    return (f"The {runs(new)} run{'s are' if len(new) > 1 else ' is'} the {len(new)} this chapter adds to the "
            f"{shared} of the Mukhoti chapter it reuses.")


def rbs_check(c: Chapter) -> pd.DataFrame:
    """Table 11's printed values against the smallest RBS / Brier score of Table 2's error
    rates, counted per data set."""
    b = rbs_bounds(c.paper)
    n = b.groupby(b.row.str.split(",").str[0].rename("data set"))[["fits_rbs", "fits_brier"]].agg(["sum", "count"])
    words = {"fits_rbs": "at least the smallest RBS", "fits_brier": "at least the smallest Brier score"}
    out = pd.DataFrame({"printed values": n[("fits_rbs", "count")],
                        **{w: n[(k, "sum")] for k, w in words.items()}}).reset_index()
    return out.style.hide(axis="index")


def table12(c: Chapter):
    """Table 12: means ± standard errors over runs, the paper's and ours over our seeds."""
    t = lay.spread_side_by_side(c.mine, c.paper, "table12", TABLE12_CELLS, c.labels)
    return styled(t, f"mean ± standard error (%); paper: Table 12, CIFAR-10 ResNet-50; {c.source()}")


def table13(c: Chapter):
    """Table 13: DFL at gamma 2, 3, 4, 5, 10 beside the paper's."""
    if "gamma" not in c.runs:
        return None
    settings = [f"gamma={g:g}" for g in exp.GAMMAS]
    t = lay.settings_side_by_side(c.mine, c.paper, "table13", ["accuracy", "ece", ("ece", True), "adaece",
                                  "classwise_ece"], settings, {"dual_focal": "ours"}, "dual_focal", digits=3)
    return styled(t, f"DFL at a fixed gamma (%); paper: Table 13, CIFAR-10 ResNet-50; {c.source('gamma')}")


# ----------------------------------------------------------------------------- figures
def figure2(c: Chapter):
    """Fig. 2: reliability diagrams of cross-entropy, LS-0.05, FLSD-53 and DFL (first seed)."""
    from . import figures as fig

    s = c.plan.seeds[0]
    four = {c.labels[k]: c.image[(k, s)] for k in exp.FIG2_METHODS if (k, s) in c.image}
    return fig.figure2(four, caption_text=c.caption())


def figure3(c: Chapter):
    """Fig. 3: bars of the means over the seeds with their 95 % intervals (noise model)."""
    from . import figures as fig

    frame = fig.interval_frame(c.report["intervals"]["image"])
    return fig.figure3(frame, c.labels, caption_text=c.source())


def figure4(c: Chapter):
    """Fig. 4a-c (None without the per-epoch records of the history group)."""
    from . import figures as fig

    f = c.report["figures"]
    if "fig4a" not in f:
        return None
    named = {k: v.assign(method=v.method.map(c.labels)) for k, v in f.items() if k != "fig2"}
    return fig.figure4(named["fig4a"], named["fig4b"], named["fig4c"], caption_text=c.caption())


# ----------------------------------------------------------------------------- glued texts
def texts(c: Chapter) -> dict:
    """Every text the chapter's prose glues: ``{key: text}``."""
    from ...data.corruptions import noise_scale

    cost = run_costs(c.runs)
    out = {"n_runs": str(len(cost)), "train_minutes": f"{cost.seconds.sum() / 60:.1f}",
           "run_seconds": f"{cost.seconds.median():.0f}", "noise_scale": f"{noise_scale(5):g}",
           "identical_runs": identical_runs(c), "shown_seeds": ", ".join(map(str, c.plan.seeds))}
    summary, paper = cmp.summarise(c.ours["raw"]["image"]), cmp.paper_values(c.ref)
    for key, name in (("cross_entropy", "ce"), ("flsd53", "fl"), ("dual_focal", "dfl")):
        for frame, who in ((summary, "ours"), (paper, "paper")):
            out[f"{who}_{name}_ece"] = cmp.quote(frame, key, "ece")
            out[f"{who}_{name}_T"] = cmp.quote(frame, key, "ece", True, "T", digits=1)
            out[f"{who}_{name}_err"] = cmp.quote(frame, key, "error")
    have = {s for r in c.image.values() for s in r.ood_sets}
    out["svhn_status"] = ("SVHN logits are recorded and evaluated below." if "svhn" in have else
                          "SVHN is not in the data directory: its rows stay the paper's alone.")
    b = rbs_bounds(c.paper)
    out.update(rbs_cells=str(len(b)), rbs_fit_root=str(int(b.fits_rbs.sum())),
               rbs_fit_brier=str(int(b.fits_brier.sum())), rbs_sentence=rbs_sentence(b))
    out["text_runs"] = text_runs_sentence(c.plan, _mukhoti_plan(c.plan))
    out["table9_noted_rows"] = noted_rows_text("table9")
    return out
