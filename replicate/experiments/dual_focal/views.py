"""What the Dual Focal Loss chapter shows: each of the paper's tables with ours beside it,
the figures, and the texts glued into its prose, built from one :class:`Chapter` (the plan,
its runs and both sides' :class:`~replicate.experiments.dual_focal.evidence.Evidence`).

Every table's caption says where its numbers come from: the paper's table and row, and our
profile, data, network, schedule and seeds (:func:`replicate.comparison.describe_runs`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from ... import comparison as cmp
from ...comparison import layouts as lay
from . import evidence as ev
from . import plan as exp

#: Tables 1, 2 and 5-8: our metric -> the paper's table
MAIN = {"ece": "table1", "error": "table2", "adaece": "table5", "classwise_ece": "table6", "mce": "table7",
        "nll": "table8"}
TABLE12_CELLS = [("ece", False, "ECE"), ("ece", True, "ECE(T)"), ("adaece", False, "AdaECE"),
                 ("classwise_ece", False, "classwise ECE")]
#: The sides of the verdict prose (:func:`replicate.comparison.chapter.verdict_counts`).
VERDICT_SIDES = {"ours": "ours", "paper": "paper"}


@dataclass
class Chapter:
    """The chapter's plan, its runs (``{group: {(key, seed): Run}}``) and both evidences."""

    plan: cmp.Plan
    runs: dict
    ours: ev.Evidence
    paper: ev.Evidence

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
        return self.ours.tables[self.ours.tables.dataset_key == self.dataset]

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


def chapter(p: cmp.Plan, runs: dict) -> Chapter:
    """The :class:`Chapter` of plan ``p`` and its trained or loaded ``runs``."""
    if "image" not in runs:
        raise ValueError("runs must hold the image group (train the plan first)")
    return Chapter(p, runs, ev.our_evidence(p, runs), ev.paper_evidence())


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


def costs(c: Chapter):
    """Wall time of the distinct runs per group, as recorded when each was trained."""
    per = ev.run_costs(c.runs).groupby("group", sort=False).seconds.agg(["count", "sum", "median"])
    return styled(per.round(1), f"wall time (s) of the distinct runs per group, recorded when each was trained; "
                                f"profile {c.plan.profile}, seeds {', '.join(map(str, c.plan.seeds))}")


def notes(tables, rows=None):
    """The recorded defects of the paper's ``tables`` (cell notes of ``rows`` only)."""
    return lay.table_notes(exp.PAPER, tables, rows=rows).style.hide(axis="index")


# ----------------------------------------------------------------------------- the tables
def main_tables(c: Chapter, group: str = "image") -> list:
    """Tables 1, 2, 5-8 (only 1 and 2 for the text group): ours beside the paper's row,
    every post-T number at the temperature chosen by validation ECE; each of our cells
    carries its 95 % interval on hover (the t interval over the seeds, or a bootstrap over
    the test examples with one seed: :func:`replicate.comparison.noise.cell_intervals`)."""
    if group not in c.runs:
        return []
    ref = c.plan.references[next(iter(c.runs[group].values())).resolved["dataset"]]
    paper = cmp.paper_values(ref)
    keys = MAIN if group == "image" else {k: MAIN[k] for k in ("ece", "error")}
    iv = cmp.noise.cell_intervals(c.runs[group], c.ours.raw[group], list(keys))
    return [cmp.styled_table(c.ours.raw[group], paper, m, c.plan.methods[group], ref, c.source(group),
                             intervals=iv[m], selected_by="ece") for m in keys]


def table3(c: Chapter):
    """Table 3: FLSD-53, AdaFocal (our Eq. 4 rule), DFL, AdaDualFocal pre-T ECE beside the
    paper's CIFAR-10 ResNet-50 row; None without the table3 group."""
    if "table3" not in c.runs:
        return None
    keys = {exp.TABLE3_RENAME.get(m.key, m.key): m.label for m in c.plan.methods["table3"]}
    t = lay.methods_side_by_side(c.mine, c.paper.tables, "table3", ["ece"], keys, "CIFAR-10, Resnet50")
    return styled(t, f"ECE (%) pre T; paper: Table 3, CIFAR-10 ResNet-50; {c.source('table3')}")


def printed_table3(c: Chapter) -> pd.DataFrame:
    """Table 3 as printed (rows as labelled; see its notes for the swapped labels)."""
    return lay.pivot(c.paper.tables, "table3", "ece")


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
    t = lay.settings_side_by_side(c.mine, c.paper.tables, "table4", ["ece", "adaece"], exp.TABLE4_SETTINGS,
                                  cols, "dual_focal")
    return styled(t, f"ECE and AdaECE (%) pre T; paper: Table 4, CIFAR-10 ResNet-50; {c.source('dual_logit')}")


def table9(c: Chapter) -> list:
    """Table 9, one table per OOD set: entropy AUROC pre and post T beside the paper's
    ResNet-50 row (ours: the runs that recorded that set, mean over their seeds)."""
    out = []
    for setting in ev.OOD_SETTINGS.values():
        t = lay.methods_side_by_side(c.mine, c.paper.tables, "table9", ["auroc", ("auroc", True)], c.labels,
                                     "CIFAR-10, ResNet-50", setting=setting)
        out.append(styled(t, f"AUROC (%), {setting}; paper: Table 9, ResNet-50; ours: the runs that recorded "
                             f"it, {c.source()}"))
    return out


def roc(c: Chapter, ood_set: str = "cifar10c_gaussian5"):
    """ROC curves of the first seed's runs on ``ood_set`` (None when no run recorded it)."""
    from . import figures as fig

    s = c.plan.seeds[0]
    frame = ev.roc_frame({m.short: c.image[(m.key, s)] for m in c.methods if (m.key, s) in c.image}, ood_set)
    title = {"cifar10c_gaussian5": "CIFAR-10 test vs CIFAR-10-C Gaussian noise 5 (generated)",
             "svhn": "CIFAR-10 test vs SVHN test"}[ood_set]
    return fig.roc_figure(frame, title, c.caption()) if len(frame) else None


def table11(c: Chapter):
    """Table 11: RBS beside the paper's row (a score, 4 decimals, no temperature scaling)."""
    t = lay.methods_side_by_side(c.mine, c.paper.tables, "table11", ["rbs"], c.labels, c.paper_row, digits=4)
    return styled(t, f"RBS (root Brier score, plug-in estimator; not %); paper: Table 11, {c.paper_row}; "
                     f"{c.source()}")


def rbs_check(c: Chapter) -> pd.DataFrame:
    """Table 11's printed values against the smallest RBS / Brier score of Table 2's error
    rates, counted per data set."""
    b = ev.rbs_bounds(c.paper)
    return b.groupby(b.row.str.split(",").str[0])[["fits_rbs", "fits_brier"]].agg(["sum", "count"])


def table12(c: Chapter):
    """Table 12: means ± standard errors over runs, the paper's and ours over our seeds."""
    t = lay.spread_side_by_side(c.mine, c.paper.tables, "table12", TABLE12_CELLS, c.labels)
    return styled(t, f"mean ± standard error (%); paper: Table 12, CIFAR-10 ResNet-50; {c.source()}")


def table13(c: Chapter):
    """Table 13: DFL at gamma 2, 3, 4, 5, 10 beside the paper's."""
    if "gamma" not in c.runs:
        return None
    settings = [f"gamma={g:g}" for g in exp.GAMMAS]
    t = lay.settings_side_by_side(c.mine, c.paper.tables, "table13", ["accuracy", "ece", ("ece", True), "adaece",
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
    """Fig. 3: bars with 95 % t intervals over the seeds."""
    from . import figures as fig

    return fig.figure3(ev.interval_frame(c.ours.raw["image"]), c.labels, caption_text=c.source())


def figure4(c: Chapter):
    """Fig. 4a-c (None without the per-epoch records of the history group)."""
    from . import figures as fig

    f = c.ours.figures
    if "fig4a" not in f:
        return None
    named = {k: v.assign(method=v.method.map(c.labels)) for k, v in f.items()}
    return fig.figure4(named["fig4a"], named["fig4b"], named["fig4c"], caption_text=c.caption())


# ----------------------------------------------------------------------------- glued texts
def texts(c: Chapter) -> dict:
    """Every text the chapter's prose glues: ``{key: text}``."""
    from ...data.corruptions import noise_scale

    cost = ev.run_costs(c.runs)
    out = {"n_runs": str(len(cost)), "train_minutes": f"{cost.seconds.sum() / 60:.1f}",
           "run_seconds": f"{cost.seconds.median():.0f}", "noise_scale": f"{noise_scale(5):g}"}
    summary, paper = cmp.summarise(c.ours.raw["image"]), cmp.paper_values(c.ref)
    for key, name in (("cross_entropy", "ce"), ("flsd53", "fl"), ("dual_focal", "dfl")):
        for frame, who in ((summary, "ours"), (paper, "paper")):
            out[f"{who}_{name}_ece"] = cmp.quote(frame, key, "ece")
            out[f"{who}_{name}_T"] = cmp.quote(frame, key, "ece", True, "T", digits=1)
            out[f"{who}_{name}_err"] = cmp.quote(frame, key, "error")
    have = {s for r in c.image.values() for s in r.ood_sets}
    out["svhn_status"] = ("SVHN logits are recorded and evaluated below." if "svhn" in have else
                          "SVHN is not in the data directory: its rows stay the paper's alone.")
    b = ev.rbs_bounds(c.paper)
    out.update(rbs_cells=str(len(b)), rbs_fit_root=str(int(b.fits_rbs.sum())),
               rbs_fit_brier=str(int(b.fits_brier.sum())))
    return out
