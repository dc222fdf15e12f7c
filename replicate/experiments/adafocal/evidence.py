"""The evidence the AdaFocal chapter's claims are decided on, from the paper's printed tables
or from our runs, in one shape (:class:`Evidence`), so that one rule reads either.

- ``tables``: every table number over (data set, network) rows and settings in the long
  form of :mod:`replicate.comparison.layouts` (the paper's side by
  :func:`~replicate.comparison.layouts.paper_rows`) - the main tables (setting ""),
  OOD AUROC ("ood=SVHN", "ood=CIFAR-10-C"), Table 9's bins ("bins=N") and App. L's
  gamma_max ("gamma_max=V"); AdaFocal is method ``adafocal``.
- ``per_seed``: one value per run (Fig. 14, App. L: ECE over seeds).
- ``bins``: the final model's 15 equal-mass validation bins per method (Fig. 1, 5a, Sec. 4).
- ``gammas``: the final per-bin gammas of the AdaFocal runs (Fig. 5a, App. L).

The paper prints the last three only as figures: its evidence has them as None, with the
reason, and a rule that needs them answers "not tested".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...comparison import ood as cood
from ...comparison.layouts import paper_long, paper_rows, rename_method, summary_long
from .plan import ADAFOCAL_KEYS, FIG1_METHODS, PAPER, RULE_NAMES, history_run, setting_of

#: Metrics of Tables 1-8 (and MCE, NLL, which the paper does not print); T by validation ECE.
TABLE_METRICS = ("ece", "adaece", "classwise_ece", "mce", "nll", "error", "debiased_ece", "debiased_ece_30",
                 "sweep_ece", "sweep_ece_mass")
#: AdaFocal selects T by validation ECE for every table (Table 3's baselines reuse Table 1's T).
T_SELECTED_BY = {m: "ece" for m in TABLE_METRICS}
#: Table 9's metrics (pre-T, no temperature scaling).
TABLE9_METRICS = ("ece", "adaece", "debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")
FIGURE_ONLY = "the paper shows this only in a figure and prints no numbers for it"


@dataclass
class Evidence:
    """The numbers of one side (paper or ours); see the module docstring. ``missing`` maps a
    part (``per_seed``, ``bins``, ``gammas``, ``ood``, ``svhn``) to why it is absent."""

    tables: pd.DataFrame
    per_seed: pd.DataFrame | None = None
    bins: pd.DataFrame | None = None
    gammas: pd.DataFrame | None = None
    missing: dict = field(default_factory=dict)

    def why(self, part: str) -> str:
        return self.missing.get(part, FIGURE_ONLY)


def table9_rows() -> pd.DataFrame:
    """The paper's Table 9 (AdaFocal, CIFAR-10 ResNet-50, bins=N, pre-T) in long form."""
    return paper_long(PAPER, "table9")


def paper_evidence() -> Evidence:
    """The paper's printed Tables 1-10, every row; figures are not numbers (None)."""
    tables = paper_rows(PAPER, settings=("", *cood.OOD_SETTINGS.values()))
    return Evidence(pd.concat([tables, table9_rows()], ignore_index=True), missing={
        "fixed_gamma": "the paper's tables print no fixed-γ focal loss ECE (Mukhoti et al.'s do: see that chapter)",
        "calfocal": "the paper shows CalFocal only in Fig. 3 and Fig. 13 and prints no numbers for it",
        "imagenet": "the paper shows this only in Fig. 5(b) and Fig. 8 and prints no numbers for it",
        "moving_average": "the paper shows this only in Fig. 15 and Fig. 16 and prints no numbers for it"})


def evidence_label(runs: dict) -> str:
    return cmp.evidence_label(runs["image"])


def row_name(run) -> str:
    """How our row is named: "cifar10, tiny_cnn (cpu)"."""
    return f"{run.resolved['dataset']}, {run.resolved['model']} ({run.config.profile})"


def our_rows(summary: pd.DataFrame, run, table: str, setting="") -> pd.DataFrame:
    """A :func:`replicate.comparison.summarise` frame of runs like ``run`` as the long-form
    lines of one of our rows (:func:`row_name`) beside the paper's ``table``."""
    return summary_long(summary, table, row_name(run), run.resolved["dataset"], run.resolved["model"], setting)


def our_tables(p: cmp.Plan, runs: dict) -> dict:
    """Every table of our runs, evaluated once: ``image``/``text`` (per-run frames of
    :func:`replicate.comparison.evaluate_runs`), ``seeds``, ``bins``, ``gamma_max`` and
    ``ood`` (``{set: frame}`` of :func:`replicate.comparison.ood.evaluate_ood`)."""
    out = {}
    for group in ("image", "text", "seeds"):
        if runs.get(group):
            out[group] = cmp.evaluate_runs(runs[group], metrics=TABLE_METRICS, t_selected_by=T_SELECTED_BY)
    for group in ("bins", "gamma_max"):
        if runs.get(group):
            f = cmp.evaluate_runs(runs[group], metrics=TABLE9_METRICS, t_selected_by=T_SELECTED_BY)
            out[group] = f.assign(setting=[setting_of(group, k) for k in f.method])
    out["ood"] = {name: cood.evaluate_ood(runs["image"], name) for name in cood.OOD_SETTINGS}
    return out


def final_bins(run) -> pd.DataFrame:
    """The final model's validation bins (15 equal-mass, AdaFocal's binning): from the last
    per-epoch record when the run has one (with C_train), else from its validation logits."""
    import torch

    from ...training.diagnostics import validation_bins

    last = run.history[-1] if run.history else {}
    rec = last.get("val_bins")
    if rec is None:
        z, y = run.logits("val")
        rec = validation_bins(torch.as_tensor(z), torch.as_tensor(y))
    f = pd.DataFrame({k: np.asarray(v, dtype=float) for k, v in rec.items() if k != "edges"})
    f = f.astype(float)
    f.insert(0, "bin", np.arange(len(f)))
    if "train_confidence" not in f:
        f["train_confidence"] = np.nan
    return f


def final_gammas(run) -> np.ndarray:
    """The per-bin gammas of an AdaFocal run after its last update."""
    return np.asarray(run.history[-1]["loss_state"]["gamma"], dtype=float)


def _bins_frame(runs: dict, rule: str, seed: int) -> pd.DataFrame | None:
    frames = []
    for key in (*FIG1_METHODS, rule):
        run = history_run(runs, key, seed) or runs.get("image", {}).get((key, seed))
        if run is not None:
            frames.append(final_bins(run).assign(method="adafocal" if key == rule else key))
    return pd.concat(frames, ignore_index=True) if frames else None


def _gammas_frame(runs: dict, rule: str) -> pd.DataFrame | None:
    """Final per-bin gammas of ``rule``'s runs: its main runs (every seed, gamma_max 20) and
    its gamma_max ablation runs, one entry per distinct run."""
    frames, seen = [], set()
    for group in ("image", "seeds", "gamma_max"):
        for (key, seed), run in runs.get(group, {}).items():
            if not key.startswith(rule) or run.key in seen:
                continue
            seen.add(run.key)
            g = final_gammas(run)
            frames.append(pd.DataFrame({"setting": setting_of("gamma_max", key), "seed": seed,
                                        "bin": np.arange(g.size), "gamma": g}))
    return pd.concat(frames, ignore_index=True) if frames else None


def our_evidence(p: cmp.Plan, runs: dict, ours: dict, rule: str) -> Evidence:
    """Our runs as :class:`Evidence`, AdaFocal being ``rule`` (renamed ``adafocal``, the
    other rule left out)."""
    other = [k for k in ADAFOCAL_KEYS if k != rule]
    frames, missing = [], {}
    for group in ("image", "text"):
        if group in ours:
            first = next(iter(runs[group].values()))
            summ = cmp.summarise(ours[group])
            frames.append(our_rows(summ, first, ""))
    image_first = next(iter(runs["image"].values()))
    for name, setting in cood.OOD_SETTINGS.items():
        f = ours["ood"][name]
        if len(f):
            frames.append(our_rows(cmp.summarise(f), image_first, "table10", setting))
        lacking = f.attrs.get("missing", [])
        if lacking:
            missing[name] = (f"{len(lacking)} run(s) recorded without {name} logits: "
                             f"{', '.join(sorted({cmp.short(k) for k, _ in lacking}))}")
    if not len(ours["ood"]["svhn"]):
        missing["svhn"] = "the SVHN files are not in the data directory, so no run was scored on SVHN"
    for group in ("bins", "gamma_max"):
        if group in ours:
            f = ours[group]
            mine = f[f.method.str.startswith(rule)].assign(method="adafocal")
            for setting, g in mine.groupby("setting", sort=False):
                frames.append(our_rows(cmp.summarise(g), image_first, "table9" if group == "bins" else "",
                                       setting))
    tables = rename_method(pd.concat(frames, ignore_index=True), rule, "adafocal", drop=other)
    per_seed = []
    if "seeds" in ours:
        per_seed.append(rename_method(ours["seeds"], rule, "adafocal", drop=other).assign(setting=""))
    if "gamma_max" in ours:
        g = ours["gamma_max"]
        per_seed.append(g[g.method.str.startswith(rule)].assign(method="adafocal"))
    seed = p.seeds[0]
    ablated = [v.key for v in p.methods.get("bins", [])]
    missing.update({
        "imagenet": "ImageNet is not available offline (not replicated here)",
        "moving_average": "the moving-average update of App. K is not implemented in the package (not run)",
        "calfocal": "CalFocal is not among this plan's methods", "fixed_gamma": "FL-3/4/5 are not among this "
                                                                                "plan's methods",
        "bins_ablation": (f"the bins ablation ran for {RULE_NAMES[ablated[0].split('_bins')[0]]}, not this rule, or "
                          f"without settings below 10, in 10-20 and above 20") if ablated else "no bins ablation",
        "per_seed": "no runs over several seeds in this plan", "bins": "no runs with validation bins",
        "gammas": "no AdaFocal runs of this rule"})
    return Evidence(tables, pd.concat(per_seed, ignore_index=True) if per_seed else None,
                    _bins_frame(runs, rule, seed), _gammas_frame(runs, rule), missing)



def run_rows(runs: dict, ours: dict, rule: str) -> dict:
    """Our runs of each table row (image, text) as the claims' noise tests read them
    (``{row name: RunEvidence}``, :func:`row_name`), AdaFocal being ``rule`` (renamed
    ``adafocal`` in the runs and in the frame whose T the post-T numbers used; the other
    rule left out)."""
    from ...comparison import noise

    other = [k for k in ADAFOCAL_KEYS if k != rule]
    rows = {}
    for group in ("image", "text"):
        if group not in ours or not runs.get(group):
            continue
        mine = {("adafocal" if m == rule else m, s): r for (m, s), r in runs[group].items() if m not in other}
        frame = rename_method(ours[group], rule, "adafocal", drop=other)
        rows[row_name(next(iter(runs[group].values())))] = noise.RunEvidence(mine, frame,
                                                                          row_name(next(iter(mine.values()))))
    return rows
