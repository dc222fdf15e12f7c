"""What the FCL chapter shows beside its tables: the paper's recorded defects, Dual Focal
Loss's own numbers next to FCL's retrained Dual Focal column, our AUROC beside Table 4,
the data we do not have, what the runs cost, and which of its variants are the same model.
Nothing here trains or decides a claim (the claims and their tests are in :mod:`.claims`,
computed once in :mod:`.report`).
"""
from __future__ import annotations

import itertools
import math

import pandas as pd

from ... import comparison as cmp
from . import plan as fcl

#: The Dual Focal Loss paper's printed numbers, as a row of its own (FCL's column is a retrain).
DFL_OWN = cmp.Method("dual_focal_tao", "DFL as printed by Tao et al.", "dual_focal", paper_key="dual_focal_tao")
#: The sides of the verdict prose (:func:`replicate.claims.verdict_counts`).
VERDICT_SIDES = {"ours": "ours", "paper": "paper"}


def rule_texts() -> dict:
    """The thresholds of the chapter's tests, for its verdict prose: ``t_rule`` (the book's
    "close to 1")."""
    from ...claims import wording

    return {"t_rule": wording.near_one_text()}


def slow_metrics(metrics) -> list[str]:
    """The ``metrics`` whose intervals rest on the noise model's first
    :data:`~replicate.comparison.noise.N_BOOT_SLOW` resamples only: found by asking the
    noise model itself (:func:`replicate.comparison.noise.scores.replicated`) for each
    metric on all :data:`~replicate.comparison.noise.N_BOOT` resamples of a small probe and
    keeping those that return fewer."""
    import numpy as np

    from ...comparison import noise
    from ...comparison.noise import scores

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=30)
    labels = rng.integers(0, 3, size=30)
    probe = scores.Scored(probs, labels, np.log(probs[np.arange(30), labels]))
    w = noise.weights(30, noise.N_BOOT)
    return [m for m in metrics if len(scores.replicated(probe, m, w)) < noise.N_BOOT]


#: How the prose names a metric whose resamples are fewer.
SLOW_NAMES = {"smece": "the smooth ECE", "adaece": "the AdaECE", "smce": "the Lipschitz smCE",
              "debiased_ece": "the debiased ECE", "debiased_ece_30": "the debiased ECE (30 bins)",
              "sweep_ece": "the ECE-sweep", "sweep_ece_mass": "the equal-mass ECE-sweep"}


def resample_note(metrics) -> str:
    """The sentence on the resamples behind the intervals of ``metrics`` (the tables'
    metrics): "The intervals of the smooth ECE and the AdaECE, recomputed on each resample,
    rest on its first 200 resamples; the others on all 1,000." for those :func:`slow_metrics`
    finds, "Every interval rests on all 1,000 resamples." when none."""
    from ...comparison import noise

    slow = [SLOW_NAMES.get(m, m) for m in slow_metrics(metrics)]
    if not slow:
        return f"Every interval rests on all {noise.N_BOOT:,} resamples."
    listed = slow[0] if len(slow) == 1 else ", ".join(slow[:-1]) + " and " + slow[-1]
    return (f"The interval{'s' if len(slow) > 1 else ''} of {listed}, recomputed on each resample, "
            f"rest{'' if len(slow) > 1 else 's'} on its first {noise.N_BOOT_SLOW} resamples; the others on all "
            f"{noise.N_BOOT:,}.")


def with_dfl_own(paper: pd.DataFrame, dataset: str, model: str) -> pd.DataFrame:
    """``paper`` (FCL's :func:`replicate.comparison.paper_values`) plus the Dual Focal Loss
    paper's own DFL numbers of its row for ``(dataset, model)`` as method ``dual_focal_tao``."""
    ref = cmp.paper_reference(dataset, model, "tao2023")
    own = cmp.paper_values(ref)
    own = own[own.method == "dual_focal"].assign(method=DFL_OWN.key)
    return pd.concat([paper, own], ignore_index=True) if len(own) else paper


def paper_notes(tables=("table1", "table2", "table3", "table4", "table6", "table7", "table8"),
                rows=None, whole: bool = True) -> pd.DataFrame:
    """The recorded defects of the paper's ``tables``
    (:func:`replicate.comparison.layouts.table_notes`): each table's note (``whole``) and
    every noted cell of the printed rows ``rows`` (``(dataset, model)`` pairs; None: all),
    one line per distinct note: ``table, cell, printed, note``."""
    labels = None if rows is None else [cmp.layouts.row_label(d, m) for d, m in rows]
    return cmp.layouts.table_notes(fcl.PAPER, tables, rows=labels, whole=whole)


def auroc_frame(runs: dict) -> pd.DataFrame:
    """Our entropy AUROC (%) per run and OOD set, pre and post TS (T by validation ECE, as
    recorded by the run store): ``method, seed, ood_set, temperature_scaled, value, T``."""
    rows = []
    for (key, seed), run in runs.items():
        for name, vals in run.metrics.get("ood_auroc", {}).items():
            for scaled in (False, True):
                rows.append({"method": key, "seed": seed, "ood_set": name, "temperature_scaled": scaled,
                             "value": 100 * vals["post" if scaled else "pre"],
                             "T": run.temperature if scaled else math.nan})
    return pd.DataFrame(rows, columns=["method", "seed", "ood_set", "temperature_scaled", "value", "T"])


def auroc_table(ours: pd.DataFrame, methods, model: str = "ResNet-50") -> pd.DataFrame:
    """Table 4's layout: a row per method; per OOD set and Pre/Post T the paper's number (its
    ``model`` row) and ours (mean over seeds; "–" where a run holds no logits of the set)."""
    from ... import paper_tables

    t4 = paper_tables.get(fcl.PAPER, "table4")
    t4 = t4[t4.model == model]
    table = {}
    for m in methods:
        row = {}
        for name, printed in (("cifar10c_gaussian5", "CIFAR-10/CIFAR-10-C"), ("svhn", "CIFAR-10/SVHN")):
            for scaled, phase in ((False, "Pre T"), (True, "Post T")):
                p = t4[(t4.dataset == printed) & (t4.method == m.key) & (t4.temperature_scaled == scaled)]
                o = ours[(ours.method == m.key) & (ours.ood_set == name) & (ours.temperature_scaled == scaled)]
                row[(printed, phase, "paper")] = f"{p.value.iloc[0]:.2f}" if len(p) else "–"
                row[(printed, phase, "ours")] = f"{o.value.mean():.2f}" if len(o) else "–"
        table[m.label] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "method"
    return frame


def norm_table(ours: pd.DataFrame, ref: cmp.PaperReference) -> pd.DataFrame:
    """Table 8's layout for our ``norm`` group (:func:`replicate.comparison.evaluate_runs` of
    ``fcl`` and ``fcl_l1``, pre-T ECE and test error) beside the paper's row of ``ref``'s
    data set and network (its closest row when ours is not printed)."""
    from ... import paper_tables

    t8 = paper_tables.get(fcl.PAPER, "table8")
    sel = t8[(t8.dataset == ref.dataset) & (t8.model_key == paper_tables.labels.model_key(ref.model))]
    s = cmp.summarise(ours[~ours.temperature_scaled])
    table = {}
    for key, setting, name in (("fcl", "norm=l2", "L2 (squared Euclidean)"), ("fcl_l1", "norm=l1", "L1")):
        row = {}
        for metric in ("error", "ece"):
            p = sel[(sel.setting == setting) & (sel.metric == metric)]
            o = cmp.value(s, key, metric)
            row[(metric, "paper")] = f"{p.value.iloc[0]:.2f}" if len(p) else "–"
            row[(metric, "ours")] = "–" if math.isnan(o) else f"{o:.2f}"
        table[name] = row
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = f"calibration term (paper: {ref.dataset}, {ref.model})"
    return frame


#: Data of the paper that this book cannot reach offline, how the chapter would use it.
UNREACHABLE = (
    ("cifar100", "CIFAR-100", "Tables 1-3, 6-8", "dataset='cifar100'"),
    ("tiny_imagenet", "Tiny-ImageNet", "Tables 1-3, 6, 7", "dataset='tiny_imagenet' (model='resnet50')"),
    ("svhn", "SVHN (OOD set of Table 4)", "Table 4", "none: the run store scores SVHN when its files are present"),
    (None, "AG News", "Tables 1-3, 6, 7", "needs a loader in replicate.data (none yet), then text_dataset='ag_news'"),
    (None, "FinSen", "Tables 1-3, 6, 7", "needs a loader in replicate.data (none yet), then text_dataset='finsen'"),
    (None, "ChestX-ray14 (CheXNet)", "Table 9, Fig. 1, Sec. 5.3", "needs a loader and a DenseNet-121 multi-label "
                                                                  "set-up; not planned"),
    ("glove", "GloVe (glove.6B.100d)", "the text rows", "none: the 20 Newsgroups loader uses it when present "
                                                       "(embeddings='auto'); offline it trains word2vec instead"),
)


def unreachable() -> pd.DataFrame:
    """:data:`UNREACHABLE` with whether each data set's files are found now (tried through
    :func:`replicate.data.load` without downloading, for those with a loader)."""
    from ... import config, data

    rows = []
    for key, name, where, how in UNREACHABLE:
        if key is None:
            status = "not available offline; no loader in this package" if "loader" in how else \
                "not available offline"
        elif key == "glove":
            found = data.embeddings.find_glove(config.data_dir(), 100)
            status = "found in the data directory" if found else "not found in the data directory"
        else:
            try:
                data.load(key, download=False)
                status = "found in the data directory"
            except (FileNotFoundError, data.DataArchiveError, OSError) as err:
                status = f"not found in the data directory ({type(err).__name__})"
        rows.append({"data": name, "in the paper": where, "status here": status, "how to run it": how})
    return pd.DataFrame(rows)


def run_costs(p: cmp.Plan, runs: dict) -> pd.DataFrame:
    """Per group: runs, of which distinct, and their training minutes when they were trained."""
    rows, seen = [], set()
    for g, got in runs.items():
        keys = {r.key: r for r in got.values()}
        new = {k: r for k, r in keys.items() if k not in seen}
        seen |= set(keys)
        rows.append({"group": g, "runs": len(got), "not counted before": len(new),
                     "training minutes": sum(r.wall_time for r in new.values()) / 60})
    return pd.DataFrame(rows)


def coincidences(p: cmp.Plan, runs: dict) -> str:
    """The sentence the prose glues on identical evidence at ``p``'s profile, from the test
    logits of ``runs`` (``{group: {(method, seed): Run}}``, every stored seed): which
    different variants - what a claim may compare - have identical test logits (a claim
    comparing them says "the same model at this profile"), which variants are one run under
    several names (by design), and which methods were trained twice (other record options)
    with identical test logits."""
    from ...comparison.noise import fingerprint

    label = {m.key: m.label for g in p.groups for m in p.methods.get(g, [])}
    label.update({m.key: f"FCL with λ = {m.loss_params['lam']:g}" for m in p.methods.get("lambda", [])})
    label["fcl_l1"] = "FCL with the L1 term"
    names, prints = {}, {}
    for got in runs.values():
        for (m, s), run in got.items():
            names.setdefault(run.key, set()).add(m)
            prints.setdefault((s, fingerprint(run)), set()).add(run.key)

    def called(key):
        ms = sorted(names[key], key=lambda m: label.get(m, m))
        return label.get(ms[0], ms[0]) + (f" (= {', '.join(label.get(m, m) for m in ms[1:])})" if ms[1:] else "")
    same, twice = {}, set()
    for (s, _), keys in prints.items():
        for a, b in itertools.combinations(sorted(keys), 2):
            if names[a] & names[b]:                    # one method trained twice
                twice |= names[a] & names[b]
            else:                                      # two different variants
                same.setdefault(" and ".join(sorted((called(a), called(b)))), []).append(s)
    shared = sorted(" and ".join(sorted(label.get(m, m) for m in ms)) for ms in
                    {frozenset(v) for v in names.values() if len(v) > 1})
    out = [f"at the {p.profile} profile, " + ("; ".join(
        f"{who} have identical test logits (seed{'s' if len(ss) > 1 else ''} {', '.join(map(str, sorted(ss)))})"
        for who, ss in sorted(same.items())) if same else
        "no two different variants of the chapter have identical test logits")]
    if shared:
        out.append("by design, " + "; ".join(f"{x} are one run" for x in shared) + " (the same configuration)")
    if twice:
        out.append(f"the runs of {', '.join(sorted(label.get(m, m) for m in twice))} trained again with per-epoch "
                   f"records have the same test logits as the table's runs of the same seed")
    return "; ".join(out)


#: The two-moons study's columns (:func:`replicate.toy2d.study`) in words, with their decimals.
TOY_COLUMNS = {"error": ("test error (%)", 2), "ece": ("ECE (%)", 2), "nll": ("NLL", 3),
               "boundary_length": ("boundary length", 2), "uncertain_share": ("uncertain share (%)", 1)}


def toy_table(toy: pd.DataFrame, caption: str = ""):
    """The two-moons study's means over its seeds, a row per method, headed in words
    (issue #32, item 1)."""
    cols = [c for c in TOY_COLUMNS if c in toy]
    mean = toy.groupby("method", sort=False)[cols].mean().reset_index()
    mean = mean.rename(columns={c: TOY_COLUMNS[c][0] for c in cols})
    s = mean.style.hide(axis="index").format({TOY_COLUMNS[c][0]: f"{{:.{TOY_COLUMNS[c][1]}f}}" for c in cols})
    return s.set_caption(caption) if caption else s


def temperature_changes(ours: pd.DataFrame) -> pd.DataFrame:
    """Per method key: the test ECE ``pre`` and ``post`` temperature scaling, ``T`` and the
    ``change`` (post minus pre, points of ECE), smallest change first."""
    rows = ours[ours.metric == "ece"]
    ece = rows.pivot_table(index="method", columns="temperature_scaled", values="value")
    out = pd.DataFrame({"pre": ece[False], "post": ece[True],
                        "T": rows[rows.temperature_scaled].groupby("method")["T"].mean().reindex(ece.index)})
    out["change"] = out["post"] - out["pre"]
    return out.reindex(out["change"].abs().sort_values().index)


def temperature_table(changes: pd.DataFrame):
    """:func:`temperature_changes` headed in words, a row per method label (issue #32, item 1)."""
    out = changes.rename(columns={"pre": "ECE (%) pre T", "post": "ECE (%) post T", "change": "change (points)"})
    out = out.rename(index=cmp.short).rename_axis("method").reset_index()
    return out.style.hide(axis="index").format(precision=2, na_rep="–")


def toy_setting(profile: str) -> str:
    """The two-moons study's sizes at ``profile`` in words, from the arguments
    :func:`.plan.toy_study` passes to :func:`replicate.toy2d.study` (its defaults where the
    profile sets none): "500 training points, 5,000 test points per seed, full-batch Adam for
    500 epochs, learning rate 0.01, seeds 0 to 4"."""
    import inspect

    from ... import toy2d
    from ...profiles import get_profile

    d = {k: v.default for k, v in inspect.signature(toy2d.study).parameters.items()}
    d.update(fcl.TOY.get(get_profile(profile).name, fcl.TOY["default"]))
    seeds = list(d["seeds"])
    span = (f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]} to {seeds[-1]}"
            if seeds == list(range(seeds[0], seeds[-1] + 1)) else "seeds " + ", ".join(map(str, seeds)))
    return (f"{d['n_train']:,} training points, {d['n_test']:,} test points per seed, full-batch Adam for "
            f"{d['epochs']} epochs, learning rate {d['lr']:g}, {span}")
