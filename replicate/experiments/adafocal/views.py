"""What the AdaFocal chapter shows, built from its runs so that its cells stay short: labels,
the Table 9 and Table 10 layouts, the gamma_max runs, which variants trained the same model
and the numbers glued in its prose. Nothing here trains or decides a claim (the claims and
their tests are in :mod:`.claims`, computed once in :mod:`.report`)."""
from __future__ import annotations

import re

import pandas as pd

from ... import comparison as cmp
from ...comparison import layouts
from ...comparison import ood as cood
from .plan import ADAFOCAL_KEYS, MAIN_GAMMA_MAX, RULE_NAMES, history_run, setting_of

#: The paper's Table 10 rows (it trained no ResNet-50 for OOD detection).
OOD_MODELS = ("ResNet-110", "Wide-ResNet-26-10")


def verdict_sides(profile: str) -> dict:
    """The sides of the verdict prose (:func:`replicate.claims.verdict_counts`) by the start
    of their evidence labels: our runs under each AdaFocal rule at ``profile`` and the
    paper's tables."""
    from .report import source

    return {"eq4": f"ours: {source(profile, 'adafocal_paper')}", "code": f"ours: {source(profile, 'adafocal_code')}",
            "paper": "paper"}


def labels() -> dict:
    """``{method key: label}``: the catalogue's short labels, AdaFocal's rules by name."""
    return {**{k: m.short for k, m in cmp.METHODS.items()}, **RULE_NAMES}


def seeds_table(seeds: pd.DataFrame, caption: str = ""):
    """Fig. 14's numbers: a row per method (its label) of test ECE and test error, mean ± sd
    over the seeds, before and after temperature scaling, with the mean T and the number of
    seeds; headed in words, no index (issue #32, item 1)."""
    summary = cmp.summarise(seeds)
    lab, rows = labels(), []
    for method, part in summary.groupby("method", sort=False):
        row = {"method": lab.get(method, method)}
        for metric in ("ece", "error"):
            for scaled in (False, True):
                r = part[(part.metric == metric) & (part.temperature_scaled == scaled)]
                if len(r):
                    r = r.iloc[0]
                    sd = "" if pd.isna(r["std"]) else f" ± {r['std']:.2f}"
                    row[layouts.heading(metric, scaled)] = f"{r['mean']:.2f}{sd}"
                    if scaled and not pd.isna(r["T"]):
                        row["T"] = f"{r['T']:.1f}"
        row["seeds"] = int(part["n_seeds"].max())
        rows.append(row)
    return pd.DataFrame(rows).style.hide(axis="index").format(na_rep="–").set_caption(caption)


def by_label(frame: pd.DataFrame, index: str = "row", digits: int = 2):
    """``frame`` (methods as columns, by key) headed by the methods' labels, no pandas index
    (:func:`replicate.comparison.layouts.by_label`)."""
    return layouts.by_label(frame, index, digits)


def runs_by_label(runs: dict, keys, seed: int, history: bool = True) -> dict:
    """``{label: Run}`` of ``keys`` at ``seed`` (with per-epoch records when ``history``)."""
    lab, out = labels(), {}
    for k in keys:
        run = history_run(runs, k, seed) if history else runs.get("image", {}).get((k, seed))
        if run is not None:
            out[lab[k]] = run
    return out


def table9(ours: dict):
    """Table 9 (validation bins of the ablation rule) beside the paper's, pre-T."""
    from .report import TABLE9_METRICS, table9_rows

    f = ours["bins"]
    by_key = dict(zip(f.method, f.setting))
    mine = layouts.summary_long(cmp.summarise(f), "table9", "ours", "", "", setting=by_key,
                                rename=dict.fromkeys(by_key, "adafocal"))
    paper = table9_rows()
    settings = sorted(set(mine.setting) | set(paper.setting), key=lambda s: int(s.split("=")[1]))
    return layouts.settings_side_by_side(mine, paper, "table9", TABLE9_METRICS, settings, {"adafocal": "ours"},
                                         "adafocal")


def ood_tables(ours: dict, methods, source: str) -> list:
    """Table 10 per OOD set: our AUROC beside the paper's ResNet-110 and Wide-ResNet rows."""
    out = []
    for name, setting in cood.OOD_SETTINGS.items():
        papers = {f"paper {m}": cmp.paper_values(cmp.PaperReference("CIFAR-10", m, True, m, "ghosh2022"),
                                                 ["auroc"], setting=setting) for m in OOD_MODELS}
        frame = cood.ood_side_by_side(ours["ood"][name], papers, methods)
        out.append(frame.style.set_caption(
            f"AUROC (%) of softmax entropy, CIFAR-10 test vs {setting[4:]}; Post T: T by validation ECE. "
            f"Paper: Ghosh et al. Table 10. {source}."))
    return out


def svhn_status(ours: dict) -> str:
    """Whether SVHN was scored (its files in the data directory), for the prose."""
    if len(ours["ood"]["svhn"]):
        return "present: the SVHN rows below are ours beside the paper's"
    return "missing from the data directory: the SVHN rows stay the paper's alone"


def gamma_max_runs(runs: dict, rule: str) -> dict:
    """``{"<rule>, γmax V": Run}`` of the gamma_max group, in the plan's order."""
    return {f"{RULE_NAMES[rule]}, γmax {setting_of('gamma_max', k).split('=')[1]}": r
            for (k, _), r in runs.get("gamma_max", {}).items()}


def largest_gamma(runs: dict) -> float:
    """The largest ``|gamma|`` any AdaFocal run of ``{label: Run}`` reached in training."""
    return max(abs(x) for r in runs.values() for row in r.history for x in row["loss_state"]["gamma"])


def bound_note(largest: float) -> str:
    return ("below 20, so no bound was ever active and the three settings trained the same model"
            if largest < MAIN_GAMMA_MAX else "above 20: the bounds were active")


def twin_flsd(runs: dict, seed: int) -> dict:
    """The two FLSD-53 runs at ``seed`` (the tables' and the one with per-epoch records): test
    ECE (%) and device (with thread count) of each, as text for the prose, and ``twin_note``,
    the sentence that compares them: recording changes nothing at one thread count, while
    another thread count sums in another order and ends as another model (the sentence
    says which of the two the runs show, so that a retraining cannot make it false)."""
    twins = {"flsd_table": runs["image"].get(("flsd53", seed)),
             "flsd_history": runs.get("seeds", {}).get(("flsd53", seed))}
    out = {}
    for name, run in twins.items():
        out[f"{name}_ece"] = "not available" if run is None else f"{100 * run.metrics['test']['ece']:.2f}"
        out[f"{name}_device"] = "not available" if run is None else run.provenance["device"]
    out["twin_note"] = twin_note(seed, *(twins[k] for k in ("flsd_table", "flsd_history")))
    return out


def twin_note(seed: int, table, history) -> str:
    """One sentence on the two seed-``seed`` FLSD-53 runs (see :func:`twin_flsd`)."""
    if table is None or history is None:
        return f"One of the two seed-{seed} FLSD-53 runs is not available at this profile."
    dev = [re.sub(r"\b1 threads\b", "1 thread", r.provenance["device"]) for r in (table, history)]  # older records
    ece = [100 * r.metrics["test"]["ece"] for r in (table, history)]
    if dev[0] == dev[1] and f"{ece[0]:.2f}" == f"{ece[1]:.2f}":
        return (f"Our two seed-{seed} FLSD-53 runs were both trained on {dev[0]} and end at the same test ECE, "
                f"{ece[0]:.2f} %.")
    why = ("the number of CPU threads changes the order of the floating-point sums, and over a run's epochs a "
           "small network turns that into" if dev[0] != dev[1] else "yet they end at")
    return (f"Our two seed-{seed} FLSD-53 runs were trained on {dev[0]} and on {dev[1]}: {why} test ECEs of "
            f"{ece[0]:.2f} % (the tables' run) and {ece[1]:.2f} % (the run with records). Read single-seed "
            f"differences of this size as noise.")


def rule_pair(runs: dict, seed: int) -> list:
    """The two AdaFocal rules' main runs at ``seed`` (None where missing)."""
    return [runs["image"].get((k, seed)) for k in ADAFOCAL_KEYS]


# ----------------------------------------------------------------------------- the same model twice
def _seeds_text(seeds) -> str:
    seeds = list(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))


def same_sentence(profile: str, pairs) -> str:
    """What the prose says of the variants that trained the same model at ``profile``
    (``pairs`` from :func:`replicate.experiments.adafocal.report.same_models`)."""
    same = [f"{a} and {b} on {r} ({_seeds_text(s)})" for a, b, r, seeds, s in pairs if s and s == seeds]
    part = [f"{a} and {b} on {r} at {_seeds_text(s)} of {_seeds_text(seeds)}" for a, b, r, seeds, s in pairs
            if s and s != seeds]
    apart: dict = {}
    for a, b, r, seeds, s in pairs:
        if not s:
            apart.setdefault((b, r), []).append(a)
    differ = [f"{', '.join(a)} from {b} on {r}" for (b, r), a in apart.items()]
    out = []
    if same or part:
        out.append(f"At the {profile} profile these variants trained the same model (identical test logits): "
                   + "; ".join(same + part) + ". Each such pair is one model, counted once by the verdicts")
    if differ:
        out.append(("These differ" if out else f"At the {profile} profile no two variants trained the same model")
                   + ": " + "; ".join(differ))
    return ". ".join(out) + "." if out else f"At the {profile} profile no variant has a twin to compare."


def printed_ada_runs(table: str = "table1") -> str:
    """How many runs the paper's AdaFocal cells of ``table`` average, as its caption prints it
    ("For AdaFocal, the values are averaged over 5 runs": ``"5"``), read from the stored
    caption (:func:`replicate.paper_tables.list_tables`); ValueError when it says none."""
    from ... import paper_tables
    from .plan import PAPER

    t = paper_tables.list_tables(PAPER).set_index("table")
    m = re.search(r"averaged over (\d+) runs", t.loc[table, "caption"])
    if m is None:
        raise ValueError(f"the caption of {PAPER} {table} names no number of runs")
    return m.group(1)
