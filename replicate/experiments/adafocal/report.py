"""Everything the AdaFocal chapter (``exp_adafocal``) computes from its plan and runs, once,
as the sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``evaluation``
    every table of our runs (:func:`our_tables`): the main groups' metrics pre and post T
    (T by validation ECE for every table, as the paper), the ablations and OOD AUROC;
``intervals``
    the 95 % interval of each of our CIFAR-10 table cells, from the noise model;
``claims``
    the claims' verdicts (:func:`decide`) on our runs under each AdaFocal rule and on the
    paper's printed Tables 1-10 (every row);
``same_models``
    which variants of our runs are the same model at this profile (identical test logits);
``scale_box``
    the box atop the page.

Our side (:func:`ours_side`) is one :class:`replicate.comparison.noise.RunsEvidence` per AdaFocal rule,
``adafocal`` being that rule's runs, over every seed the store holds of the chapter's
configurations: the CIFAR-10 row holds the tables' runs (setting ""), the runs of Fig. 14
(setting "Fig. 14", the ``seeds`` group), Table 9's and App. L's ablations ("bins=N",
"gamma_max=V", the ablation's settings at the seeds they share, so that two settings
that train one model are seen to) and the chapter's :class:`~replicate.claims.evidence.Named`
quantities, computed when a claim first reads them: the final validation bins (a bootstrap
over the validation examples, seeds resampled first), AdaFocal's final gammas and C_train
(states of a run, no resampling) and the ECE of each App. L run (the bootstrap over the test
examples at that seed).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import comparison as cmp
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Cell, Draws, Missing, Names
from ...comparison import chapter
from ...comparison import ood as cood
from ...comparison import report as rpt
from ...comparison.layouts import paper_long, paper_rows
from . import claims as cl
from .plan import ADAFOCAL_KEYS, CHAPTER, FIG1_METHODS, PAPER, RULE_NAMES, SECTION, plan, setting_of

#: Metrics of Tables 1-8 (and MCE, NLL, which the paper does not print); T by validation ECE.
TABLE_METRICS = ("ece", "adaece", "classwise_ece", "mce", "nll", "error", "debiased_ece", "debiased_ece_30",
                 "sweep_ece", "sweep_ece_mass")
#: AdaFocal selects T by validation ECE for every table (Table 3's baselines reuse Table 1's T).
T_SELECTED_BY = {m: "ece" for m in (*TABLE_METRICS, "auroc", "T")}
#: Table 9's metrics (pre-T, no temperature scaling).
TABLE9_METRICS = cl.TABLE9
#: The metrics of the chapter's CIFAR-10 tables that show an interval on each of our cells.
SHOWN = ("ece", "error", "adaece", "classwise_ece", "mce", "nll")
PAPER_SOURCE = "Ghosh et al. (2022), Tables 1-10, every printed row"


def names() -> Names:
    """The book's display names, and MA-alpha's."""
    n = rpt.names()
    return Names({**n.methods, "ma_alpha": "MA-α"}, {**n.metrics, **cl.METRIC_LABELS})


def source(profile: str, rule: str) -> str:
    """How our side under ``rule`` is labelled: ``"cpu, AdaFocal Eq. 4"`` (its evidence
    labels start ``"ours: cpu, AdaFocal Eq. 4"``)."""
    return f"{profile}, {RULE_NAMES[rule]}"


# ----------------------------------------------------------------------------- the tables
def our_tables(p: cmp.Plan, runs: dict) -> dict:
    """Every table of our runs, evaluated once: ``image``/``text``/``seeds`` (per-run frames of
    :func:`replicate.comparison.evaluate_runs`), ``bins`` and ``gamma_max`` (with their
    ``setting``) and ``ood`` (``{set: frame}`` of :func:`replicate.comparison.ood.evaluate_ood`)."""
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


def table9_rows():
    """The paper's Table 9 (AdaFocal, CIFAR-10 ResNet-50, bins=N, pre-T) in long form."""
    return paper_long(PAPER, "table9")


def paper_side():
    """The paper's printed Tables 1-10, every row (Table 10 under its OOD settings, Table 9
    under ``bins=N``), as evidence without noise; what it shows only in figures is absent."""
    import pandas as pd

    long = pd.concat([paper_rows(PAPER, settings=("", *cood.OOD_SETTINGS.values())), table9_rows()],
                     ignore_index=True)
    ev = rpt.paper_evidence(long, PAPER_SOURCE, absent=cl.paper_absent())
    ev.names = names()
    return ev


# ----------------------------------------------------------------------------- our side
def _wide(p: cmp.Plan, runs: dict, group: str) -> dict:
    return rpt.with_store_seeds(runs.get(group, {}), p.group(group)) if runs.get(group) else {}


def _as_rule(runs: dict, rule: str, setting: str = "") -> dict:
    """``{(method, setting, seed): Run}`` with ``rule`` as ``adafocal``, the other rule left out."""
    return {("adafocal" if m == rule else m, setting, s): r for (m, s), r in runs.items()
            if m not in ADAFOCAL_KEYS or m == rule}


def _ablation(p: cmp.Plan, runs: dict, group: str, rule: str) -> dict:
    """``rule``'s ablation runs as ``adafocal`` under their settings, at the seeds every setting has."""
    wide = {k: r for k, r in _wide(p, runs, group).items() if k[0].startswith(rule)}
    by_key: dict = {}
    for (k, s) in wide:
        by_key.setdefault(k, set()).add(s)
    common = set.intersection(*by_key.values()) if by_key else set()
    return {("adafocal", setting_of(group, k), s): r for (k, s), r in wide.items() if s in common}


def _temperatures(frames, group: str, rule: str, setting: str = "") -> dict:
    if not frames or group not in frames:
        return {}
    return {("adafocal" if m == rule else m, st, s, sel): T for (m, st, s, sel), T in
            rpt.temperatures(frames[group], setting).items() if m not in ADAFOCAL_KEYS or m == rule}


def ours_side(p: cmp.Plan, runs: dict | None, rule: str, frames: dict | None = None):
    """Our runs with AdaFocal = ``rule`` as a :class:`replicate.comparison.noise.RunsEvidence` (every
    stored seed; the post-T cells at the temperatures of ``frames``, the chapter's
    evaluation, where given), or :class:`~replicate.claims.evidence.Missing` with the reason."""
    from ...comparison.noise import RunsEvidence

    label = source(p.profile, rule)
    if not runs or not runs.get("image"):
        return Missing("ours", label, chapter.not_in_store(p.profile, p))
    if rule not in {m.key for m in p.methods["image"]}:
        return Missing("ours", label, f"{RULE_NAMES[rule]} is not among this plan's methods")
    ood = {v: k for k, v in cood.OOD_SETTINGS.items()}
    image = {**_as_rule(_wide(p, runs, "image"), rule), **_as_rule(_wide(p, runs, "seeds"), rule, "Fig. 14"),
             **_ablation(p, runs, "bins", rule), **_ablation(p, runs, "gamma_max", rule)}
    first = next(iter(runs["image"].values()))
    rows = [_row(first, image, _temperatures(frames, "image", rule), ood)]
    if runs.get("text") and any(m == rule for m, _ in runs["text"]):
        text = _as_rule(_wide(p, runs, "text"), rule)
        rows.append(_row(next(iter(runs["text"].values())), text, _temperatures(frames, "text", rule), {}))
    ev = RunsEvidence(rows, label, names())
    rows[0].named = _Lazy(_named_builders(ev, rows[0]))
    return ev


def _row(first, runs: dict, temps: dict, ood: dict):
    from ...comparison.noise import RowRuns

    ds, model = first.resolved["dataset"], first.resolved["model"]
    return RowRuns(f"{ds}, {model}", ds, model, runs, temps, dict(T_SELECTED_BY), ood)


class _Lazy(dict):
    """The Named quantities of a row, each group computed when a claim first reads one of
    its keys (``builders``: ``{key: build}``, ``build() -> {key: Draws or reason}``)."""

    def __init__(self, builders: dict):
        super().__init__()
        self._builders = builders

    def get(self, key, default=None):
        if key not in self and key in self._builders:
            self.update(self._builders[key]())
        return super().get(key, default)


def _span(seeds) -> str:
    seeds = list(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))


def _named_builders(ev, r) -> dict:
    """The chapter's Named quantities of CIFAR-10 row ``r`` (:mod:`.claims`), by key."""
    out = {}
    for m in (*FIG1_METHODS, "adafocal"):
        if r.seeds(m):
            build = functools.cache(functools.partial(_bins, ev, r, m))
            for b in range(cl.VAL_BINS):
                for q in (cl.e_val, cl.abs_e_val, cl.c_val, cl.c_train):
                    out[q(m, b).key] = build
            out[cl.val_adaece(m).key] = build
    for setting, st in (("gamma_max=20", ""), ("gamma_max=unbounded", "gamma_max=unbounded")):
        if r.seeds("adafocal", st):
            build = functools.cache(functools.partial(_gammas, r, setting, st))
            for which in ("lowest bin", "highest bin", "largest bin", "three lowest bins", "three highest bins"):
                out[cl.final_gamma(which, setting).key] = build
    for setting, st in (("gamma_max=20", ""), ("gamma_max=50", "gamma_max=50"),
                        ("gamma_max=unbounded", "gamma_max=unbounded")):
        if r.seeds("adafocal", st):
            build = functools.cache(functools.partial(_run_eces, ev, r, setting, st))
            for s in cl.RUNS:
                out[cl.run_ece(setting, s).key] = build
            out[cl.ece_sd(setting).key] = build
    return out


def run_bins(run, w: np.ndarray) -> dict:
    """``run``'s 15 equal-mass validation bins (AdaFocal's binning) on the resamples ``w`` of
    its validation examples, the edges held at their values on the whole set: ``{kind:
    (point, reps)}`` for ``C_val``, ``E_val``, ``|E_val|`` (percent, per bin: arrays of 15
    and ``(B, 15)``) and ``adaece`` (percent)."""
    import torch
    from scipy import sparse

    from ...comparison.noise.resampling import matmul
    from ...training.diagnostics import validation_bins

    z, y = run.logits("val")
    p = torch.softmax(torch.as_tensor(z).double(), dim=1).numpy()     # as the loss and its records bin it
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == np.asarray(y)).astype(np.float64)
    edges = np.asarray(validation_bins(torch.as_tensor(z), torch.as_tensor(np.asarray(y)),
                                       n_bins=cl.VAL_BINS)["edges"])
    idx = np.searchsorted(edges[1:-1], conf, side="right")
    n, k = len(conf), cl.VAL_BINS
    rows = np.tile(np.arange(n), 3)
    cols = np.concatenate([idx, idx + k, idx + 2 * k])
    terms = sparse.csr_matrix((np.concatenate([np.ones(n), conf, hit]), (rows, cols)), shape=(n, 3 * k))
    sums = matmul(np.vstack([np.ones((1, n)), w]), terms)
    cnt, cs, acc = sums[:, :k], sums[:, k:2 * k], sums[:, 2 * k:]
    with np.errstate(invalid="ignore", divide="ignore"):
        c, e = 100 * cs / cnt, 100 * (cs - acc) / cnt
    ada = 100 * np.abs(cs - acc).sum(axis=1) / cnt.sum(axis=1)
    return {"C_val": (c[0], c[1:]), "E_val": (e[0], e[1:]), "|E_val|": (np.abs(e[0]), np.abs(e[1:])),
            "adaece": (ada[0], ada[1:])}


def _bins(ev, r, m: str) -> dict:
    from ...comparison.noise.resampling import over_seeds, weights

    seeds = r.seeds(m)
    runs = [r.runs[(m, "", s)] for s in seeds]
    n = len(runs[0].logits("val")[1])
    got = [run_bins(run, weights(n, ev.n_boot, ev.seed, "val")) for run in runs]
    who = ev.names.method(m)
    what = (f"the {n:,} validation examples (the same draws for every method), each run's equal-mass bin edges held "
            f"at their values on the whole validation set")
    noise = (f"bootstrap over {what} ({ev.n_boot:,} resamples); one seed: the training noise is not measured"
             if len(seeds) == 1 else f"two-level bootstrap ({ev.n_boot:,} resamples): the {len(seeds)} seeds "
                                     f"resampled, then {what}")
    used = ((r.name, who, tuple(seeds)),)

    def draws(kind, b=None):
        pts = np.array([g[kind][0] if b is None else g[kind][0][b] for g in got])
        reps = np.stack([g[kind][1] if b is None else g[kind][1][:, b] for g in got])
        return Draws(float(pts.mean()), over_seeds(reps, ev.seed), noise, used)

    out = {cl.val_adaece(m).key: draws("adaece")}
    for b in range(cl.VAL_BINS):
        for kind, q in (("C_val", cl.c_val), ("E_val", cl.e_val), ("|E_val|", cl.abs_e_val)):
            out[q(m, b).key] = draws(kind, b)
    recorded = [(s, run) for s, run in zip(seeds, runs) if run.history and "val_bins" in run.history[-1]
                and "train_confidence" in run.history[-1]["val_bins"]]
    for b in range(cl.VAL_BINS):
        key = cl.c_train(m, b).key
        if not recorded:
            out[key] = f"no run of {who} in {r.name} recorded C_train (per-epoch validation bins)"
            continue
        v = [run.history[-1]["val_bins"]["train_confidence"][b] for _, run in recorded]
        out[key] = Draws(100 * float(np.mean([np.nan if x is None else x for x in v])), None,
                         f"C_train, recorded by the engine at the last epoch ({_span(s for s, _ in recorded)}): the "
                         f"training set's logits are not stored, so it has no resampling",
                         ((r.name, who, tuple(s for s, _ in recorded)),))
    return out


def final_gammas(run) -> np.ndarray:
    """The per-bin gammas of an AdaFocal run after its last update."""
    return np.asarray(run.history[-1]["loss_state"]["gamma"], dtype=float)


def _gammas(r, setting: str, st: str) -> dict:
    seeds = r.seeds("adafocal", st)
    g = np.array([final_gammas(r.runs[("adafocal", st, s)]) for s in seeds])
    noise = (f"the final per-bin γ of training runs ({_span(seeds)}; means over seeds, the largest over runs for "
             f"three bins): a state of each run, not a sample statistic, so no resampling")
    used = ((r.name, "AdaFocal" + (f" ({st})" if st else ""), tuple(seeds)),)
    mean = g.mean(axis=0)
    values = {"lowest bin": mean[0], "highest bin": mean[-1], "largest bin": mean.max(),
              "three lowest bins": g[:, :3].max(), "three highest bins": g[:, -3:].max()}
    return {cl.final_gamma(w, setting).key: Draws(float(v), None, noise, used) for w, v in values.items()}


def _run_eces(ev, r, setting: str, st: str) -> dict:
    """The pre-T ECE of each AdaFocal run of ``setting`` (its seed's bootstrap over the test
    examples) and their standard deviation over seeds."""
    seeds = r.seeds("adafocal", st)
    per = ev.per_seed(r.name)
    out, points = {}, []
    for s in seeds:
        one = per[s] if isinstance(per, dict) else ev
        d = one.draws(r.name, Cell("adafocal", "ece", "none", st))
        out[cl.run_ece(setting, s).key] = d
        points.append(d.point)
    key = cl.ece_sd(setting).key
    if len(seeds) < 2:
        out[key] = (f"a spread over seeds needs at least two runs; AdaFocal ({setting}) has one in {r.name} "
                    f"({_span(seeds)})")
    else:
        out[key] = Draws(float(np.std(points, ddof=1)), None,
                         f"the standard deviation of the runs' ECE over {_span(seeds)}: a spread of the seeds "
                         f"themselves, no resampling (a bootstrap of {len(seeds)} seeds cannot measure it)",
                         ((r.name, "AdaFocal" + (f" ({st})" if st else ""), tuple(seeds)),))
    return out


def twins(p: cmp.Plan, runs: dict | None) -> dict:
    """``{row: why}``: the rows where the code rule's runs are the Eq. 4 runs (identical test
    logits at every seed, :meth:`replicate.comparison.noise.RunsEvidence.identical`)."""
    from ...comparison.noise import RunsEvidence

    rows = []
    for group in ("image", "text"):
        both = {k: r for k, r in _wide(p, runs or {}, group).items() if k[0] in ADAFOCAL_KEYS}
        if {m for m, _ in both} == set(ADAFOCAL_KEYS):
            rows.append(_row(next(iter(both.values())), {(m, "", s): r for (m, s), r in both.items()}, {}, {}))
    if not rows:
        return {}
    ev = RunsEvidence(rows, p.profile, Names(dict(RULE_NAMES)))
    out = {r.name: ev.identical(r.name, Cell("adafocal_code"), Cell("adafocal_paper")) for r in rows}
    return {k: v for k, v in out.items() if v}


# ----------------------------------------------------------------------------- the verdicts
def decide(p: cmp.Plan, runs: dict | None, frames: dict | None = None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`.claims.definitions` on our runs
    under AdaFocal Eq. 4, under the code rule (:class:`.claims.RuleTwin`: not tested where
    it trained the same model) and on the paper's printed rows, one row each in that order."""
    defs = cl.definitions()
    same = twins(p, runs)
    sides = [(defs, ours_side(p, runs, "adafocal_paper", frames)),
             ([cl.twin(c, same) for c in defs], ours_side(p, runs, "adafocal_code", frames)),
             (defs, paper_side())]
    logs = [claims_log(PAPER, CHAPTER, cs, [ev], SECTION, names()) for cs, ev in sides]
    out = ClaimLog(PAPER, CHAPTER, kind="experiment", section=SECTION)
    out.rows = [row for trio in zip(*(log.rows for log in logs)) for row in trio]
    return out


def _intervals(p: cmp.Plan, image: dict, frames: dict) -> dict:
    shown = rpt.runs_evidence(p, {"image": image}, ("image",), frames, every_seed=False, t_selected_by=T_SELECTED_BY)
    return rpt.table_intervals(shown, [m.key for m in p.methods["image"]], SHOWN)


def same_models(p: cmp.Plan, runs: dict) -> list:
    """Which variants of ``runs`` trained the same model (identical test logits,
    :func:`replicate.comparison.noise.fingerprint`) at the seeds both have: the two AdaFocal rules in
    each group, and each ablation setting against the main run, as ``(variant,
    reference, row, seeds compared, seeds identical)``; ``sentence``: what the prose says."""
    from ...comparison import report as rpt
    from ...comparison.noise import fingerprint

    def row(run):
        return f"{run.resolved['dataset']}, {run.resolved['model']}"

    pairs = []
    for group in ("image", "text"):
        if not runs.get(group):
            continue
        wide = rpt.with_store_seeds(runs[group], p.group(group))
        a, b = ({s: r for (k, s), r in wide.items() if k == key} for key in ADAFOCAL_KEYS)
        seeds = sorted(set(a) & set(b))
        if seeds:
            pairs.append((RULE_NAMES["adafocal_code"], RULE_NAMES["adafocal_paper"], row(a[seeds[0]]), seeds,
                          [s for s in seeds if fingerprint(a[s]) == fingerprint(b[s])]))
    for group in ("gamma_max", "bins"):
        if not runs.get(group):
            continue
        wide = rpt.with_store_seeds(runs[group], p.group(group))
        main = {s: r for (k, s), r in wide.items() if k in ADAFOCAL_KEYS}
        for key in dict.fromkeys(k for k, _ in wide if k not in ADAFOCAL_KEYS):
            mine = {s: r for (k, s), r in wide.items() if k == key}
            seeds = sorted(set(mine) & set(main))
            if seeds:
                name = setting_of(group, key).replace("gamma_max=", "γmax ").replace("bins=", "") + \
                    (" bins" if group == "bins" else "")
                ref = "γmax 20" if group == "gamma_max" else "15 bins"
                pairs.append((name, ref, row(main[seeds[0]]), seeds,
                              [s for s in seeds if fingerprint(mine[s]) == fingerprint(main[s])]))
    return pairs



def report(p: cmp.Plan, runs: dict) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{group: {(method, seed): Run}}``)."""
    from ...book.scale import ScaleBox
    from ...comparison import scale

    wide = {g: rpt.with_store_seeds(runs[g], p.group(g)) for g in runs}
    sections = {
        "evaluation": lambda r: our_tables(p, runs),
        "intervals": lambda r: _intervals(p, runs["image"], {"image": r["evaluation"]["image"]}),
        "claims": lambda r: decide(p, runs),
        "same_models": lambda r: same_models(p, runs),
        "scale_box": lambda r: ScaleBox(scale.describe(runs)),
    }
    return rpt.Report(CHAPTER, p.profile, rpt.keys_of(wide), sections)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained; the text row is left out when
    its runs are missing), decided on both sides."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p, [g for g in p.groups if g != "text"])
    if runs is None:
        return decide(p, None)
    text = cmp.load(p, "text") if "text" in p.groups else None
    return report(p, {**runs, **(text or {})}).claims

