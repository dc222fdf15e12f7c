"""The leaderboard chapter, ``exp_leaderboard``: every training method of the five papers
trained under one protocol, evaluated under three post-hoc settings, with seeds, error
bars, rank intervals, paired tests, rank agreement with each paper, and each paper's
headline claim restated on the common protocol.

The methods (:data:`METHOD_KEYS`, from :data:`replicate.comparison.METHODS`): cross-entropy,
Brier, MMCE, LS-0.05, focal loss with gamma 1/2/3/5/7, FLS-531, FLSD-53 (Mukhoti et al.),
AdaFocal with both update rules (Ghosh et al.), inverse focal loss, Dual Focal Loss and
AdaDualFocal (Tao et al.), FCL (Liang et al.); focal temperature scaling (Komisarenko &
Kull) is one of the three post-hoc settings of :mod:`replicate.comparison.board`.

Runs are shared with the experiment chapters (same configuration, same key); a run another
chapter trained with per-epoch records stands in for the same run without them
(:func:`replicate.comparison.plan.reuse_finished`). Paper-specific choices live here as
data read from :mod:`replicate.paper_tables`: which printed column each paper's ranking is
read from (:data:`AGREEMENT_COLUMNS`), which printed method is not ours (:func:`excluded`),
and each paper's headline table (:data:`HEADLINE`).
"""
from __future__ import annotations

import math

import pandas as pd

from .. import comparison as cmp
from ..claims import ClaimLog, beyond, check, readings, untested
from ..comparison import agreement as agr
from ..comparison import board
from ..papers import PAPERS

CHAPTER = "exp_leaderboard"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = "Headline claims on the common protocol"
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "fl1", "fl2", "fl3", "fl5", "fl7", "fls531", "flsd53",
               "adafocal_paper", "adafocal_code", "inverse_focal", "dual_focal", "adadual_focal", "fcl")
#: The methods trained at the ``smoke`` profile: enough for every table, figure and statistic to run.
SMOKE_METHODS = ("cross_entropy", "fl3", "flsd53")
SEEDS = (1, 2, 3)
#: paper -> (its method's printed key, the table of its headline comparison on CIFAR-10 ResNet-50)
HEADLINE = {"mukhoti2020": ("flsd53", "1"), "ghosh2022": ("adafocal", "1"), "tao2023": ("dual_focal", "1"),
            "liang2024": ("fcl", "1")}
#: paper -> printed columns compared with ours: (label, paper metric, post-T?, paper setting, our setting, our metric)
AGREEMENT_COLUMNS = {
    **{p: (("pre-T ECE", "ece", False, "", "none", "ece"), ("post-T ECE", "ece", True, "", "ts", "ece"))
       for p in ("mukhoti2020", "ghosh2022", "tao2023", "liang2024")},
    "komisarenko2024": (("post-TS equal-mass ECE", "adaece", True, "posthoc=ts,select=adaece", "ts", "adaece"),
                        ("post-FTS equal-mass ECE", "adaece", True, "posthoc=fts,select=adaece", "fts", "adaece")),
}
#: paper -> printed method keys that stand for none of our methods (the reason is the paper table's note)
EXCLUDED = {"komisarenko2024": ("adafocal",)}
#: The FTS paper's claim: FTS lowers the ECE of every model of its Table 1 (read from its TS rows).
FTS_PAPER, FTS_SETTING = "komisarenko2024", "posthoc=ts,select=adaece"


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all of :data:`METHOD_KEYS`."""
    from ..profiles import get_profile

    return SMOKE_METHODS if get_profile(profile).name == "smoke" else METHOD_KEYS


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=SEEDS, methods=None,
         device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    One group, ``image``: every method of ``methods`` (None: :func:`default_methods`; any
    method of the catalogue :data:`replicate.comparison.METHODS` may be added) at every seed, on ``dataset`` with ``model`` (None: the profile's network). A run another chapter
    trained with per-epoch records is reused. Each bad parameter raises a ValueError naming
    it and the allowed values.
    """
    from .. import training
    from ..profiles import get_profile
    from ..runs import dataset_kind

    prof = get_profile(profile)
    seeds = cmp.check_seeds(seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods)
    if len(chosen) < 2:
        raise ValueError(f"methods must name at least two methods to rank; got {methods!r}")
    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set; got {dataset!r}")
    dev = str(training.select_device(device))
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    p.add("image", chosen, cmp.reuse_finished(cmp.configs(chosen, dataset, model, prof.name, seeds)))
    return p


# ----------------------------------------------------------------------------- evaluation
def evaluate(runs: dict, log=None) -> tuple[dict, pd.DataFrame]:
    """``(calibrated, frame)``: every run of ``{(method, seed): Run}`` under the three post-hoc
    settings, and every metric of :data:`replicate.comparison.board.BOARD_METRICS` per run."""
    calibrated = board.calibrate_runs(runs, log=log)
    return calibrated, board.evaluate_board(calibrated)


def labels(methods=None) -> dict:
    """``{method key: label}`` of the catalogue (all methods by default): the short label, or
    the full one where two methods share a short label (the two AdaFocal rules)."""
    every = list(cmp.METHODS.values())
    shared = {m.short for m in every if sum(o.short == m.short for o in every) > 1}
    return {m.key: m.label if m.short in shared else m.short for m in (methods or every)}


def name(key: str) -> str:
    """The label of a method key (:func:`labels`); the key itself when unknown."""
    return labels().get(key, key)


def excluded(paper: str) -> dict:
    """``{printed key: reason}`` of the printed methods of ``paper`` left out of the rank
    comparisons; the reason is the paper table's own note on the method."""
    from .. import paper_tables

    notes = paper_tables.paper_info(paper).get("method_notes", {})
    return {k: notes.get(k, "not one of our methods") for k in EXCLUDED.get(paper, ())}


def agreement(calibrated: dict, methods, n_boot: int = 200, seed: int = 0, ranks: dict | None = None
              ) -> pd.DataFrame:
    """Kendall's tau between our ranking and each paper's printed CIFAR-10 ResNet-50 ranking of
    the methods it shares with us, for each column of :data:`AGREEMENT_COLUMNS`: one row per
    (paper, column, reading of the printed AdaFocal). Columns ``paper, column, reading, n,
    tau, low, high, p, methods, our_setting, our_metric, note``; ``attrs["ranks"]`` holds our
    rank frames by (setting, metric); ``ranks`` passes frames already computed (same keys)."""
    ranks, rows = dict(ranks or {}), []
    for paper, columns in AGREEMENT_COLUMNS.items():
        for label, metric, scaled, setting, ours, our_metric in columns:
            printed = agr.printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
            if (ours, our_metric) not in ranks:
                ranks[(ours, our_metric)] = board.rank_intervals(calibrated, our_metric, ours, n_boot, seed)
            for mapping in agr.readings(printed, methods):
                res = agr.our_agreement(ranks[(ours, our_metric)], printed, mapping)
                choice = [f"ours: {name(k)}" for k, v in mapping.items() if k != v]
                rows.append({"paper": paper, "column": label, "reading": "; ".join(choice), "n": res["n"],
                             "tau": res["tau"], "low": res["low"], "high": res["high"], "p": res["p"],
                             "methods": ", ".join(name(k) for k in res["methods"]), "our_setting": ours,
                             "our_metric": our_metric, "note": res["reason"]})
    out = pd.DataFrame(rows)
    out.attrs["ranks"] = ranks
    return out


def paper_columns(label: str) -> dict:
    """``{paper: {printed key: value}}`` of the column ``label`` of :data:`AGREEMENT_COLUMNS`
    (e.g. "post-T ECE") for every paper that prints it (excluded methods left out)."""
    out = {}
    for paper, columns in AGREEMENT_COLUMNS.items():
        for lab, metric, scaled, setting, _, _ in columns:
            if lab == label:
                out[paper] = agr.printed_column(paper, metric, scaled, setting, exclude=excluded(paper))
    return out


def between_papers() -> pd.DataFrame:
    """Every pair of papers, per printed column they share (pre-T ECE, post-T ECE) and, with
    the FTS paper's equal-mass ECE after TS, the other papers' post-T AdaECE: Kendall's tau of
    their printed values on the shared methods, and how many of those numbers are identical."""
    frames = []
    for label in ("pre-T ECE", "post-T ECE"):
        frames.append(agr.between_papers(paper_columns(label)).assign(column=label))
    adaece = {p: agr.printed_column(p, "adaece", True) for p in HEADLINE}
    adaece[FTS_PAPER] = agr.printed_column(FTS_PAPER, "adaece", True, FTS_SETTING, exclude=excluded(FTS_PAPER))
    frames.append(agr.between_papers(adaece).assign(column="post-T AdaECE (FTS: equal-mass ECE after TS)"))
    return pd.concat(frames, ignore_index=True)


def best(summary: pd.DataFrame, metric: str = "ece", setting: str = "none") -> dict:
    """The method with the best mean ``metric`` after ``setting`` (lowest; highest for the
    AUROC) and the runner-up: ``{"key", "label", "mean", "sd", "text", "second", "second_text"}``."""
    part = summary[(summary.metric == board.check_metric(metric)) & (summary.setting == board.check_setting(setting))]
    part = part.dropna(subset=["mean"]).sort_values("mean", ascending=metric not in board.HIGHER_IS_BETTER)
    if part.empty:
        return {"key": None, "label": "not available", "mean": math.nan, "sd": math.nan, "text": "not available",
                "second": "not available", "second_text": "not available"}

    def text(r):
        sd = f" ± {r['sd']:.2f}" if math.isfinite(r["sd"]) else ""
        return f"{name(r['method'])} ({r['mean']:.2f}{sd})"

    top = part.iloc[0]
    second = part.iloc[1] if len(part) > 1 else None
    return {"key": top.method, "label": name(top.method), "mean": float(top["mean"]), "sd": float(top["sd"]),
            "text": text(top), "second": name(second.method) if second is not None else "none",
            "second_text": text(second) if second is not None else "none"}


def printed(paper: str, method: str, metric: str = "ece", scaled: bool = False) -> str:
    """One printed number of ``paper``'s CIFAR-10 ResNet-50 row as text ("not printed" when absent)."""
    v = agr.printed_column(paper, metric, scaled).get(method)
    return "not printed" if v is None else f"{v:.2f}"


def neighbours_overlap(ranks: pd.DataFrame) -> tuple[int, int]:
    """``(overlapping, pairs)``: of the methods next to each other in the order of their rank,
    how many pairs have overlapping bootstrap rank intervals (cannot be told apart)."""
    f = ranks.sort_values(["rank", "mean_rank"]).reset_index(drop=True)
    over = sum(f.rank_high[i] >= f.rank_low[i + 1] for i in range(len(f) - 1))
    return int(over), max(len(f) - 1, 0)


def identical_models(runs: dict) -> list[tuple[str, str]]:
    """Pairs of methods whose runs have identical test logits at every seed (e.g. the two
    AdaFocal rules when no gamma reaches a bound, where the rules coincide): the same
    model trained twice under two names."""
    import numpy as np

    methods = list(dict.fromkeys(m for m, _ in runs))
    seeds = sorted({s for _, s in runs})
    z = {k: r.logits("test")[0] for k, r in runs.items()}
    return [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:]
            if all((a, s) in z and (b, s) in z and np.array_equal(z[(a, s)], z[(b, s)]) for s in seeds)]


def agreement_summary(table: pd.DataFrame) -> dict:
    """Counts for the prose from :func:`agreement`: comparisons, how many have a positive tau,
    how many have an interval above 0, and the range of tau."""
    t = table.dropna(subset=["tau"])
    return {"n": len(t), "positive": int((t.tau > 0).sum()), "above_zero": int((t.low > 0).sum()),
            "below_zero": int((t.high < 0).sum()),
            "range": f"{t.tau.min():.2f} to {t.tau.max():.2f}" if len(t) else "not available"}


# ----------------------------------------------------------------------------- headline claims
def _headline_set(paper: str) -> tuple[str, list[str]]:
    """The paper's method (printed key) and every printed method of its headline table (pre-T ECE)."""
    own, table = HEADLINE[paper]
    ref = cmp.paper_reference("cifar10", "resnet50", paper)
    vals = cmp.paper_values(ref, ["ece"])
    rows = vals[(~vals.temperature_scaled) & vals.tables.map(lambda t: table in t.split(", "))]
    return own, list(dict.fromkeys(rows.method))


def _lowest_rule(paper: str, scaled: bool, alpha: float):
    setting = "ts" if scaled else "none"

    def rule(frame: pd.DataFrame):
        own, printed = _headline_set(paper)
        ours = [m for m in cmp.METHODS.values() if m.compared_with in printed]
        outcomes, texts = {}, []
        for mapping in agr.readings(printed, ours):
            mine = next((k for k, v in mapping.items() if v == own), None)
            keys = list(mapping)
            have = set(frame[(frame.setting == setting) & (frame.metric == "ece")].method)
            missing = [name(k) for k in keys if k not in have]
            if mine is None or missing:
                return "–", untested(f"not trained in this plan: {', '.join(missing) or own}")
            vals = board.seed_values(frame, "ece", setting)[keys]
            means = vals.mean()
            best = means.idxmin()
            tests = {k: cmp.stats.paired_comparison(vals[mine], vals[k]) for k in keys if k != mine}
            sig = all(t["p"] < alpha and t["diff"] < 0 for t in tests.values())     # NaN p: not significant
            rank = int(means.rank(method="min")[mine])
            other = best if best != mine else means.drop(mine).idxmin()      # the lowest, or the runner-up
            text = (f"{name(mine)} {means[mine]:.2f} (rank {rank} of {len(keys)}); "
                    f"{'lowest' if best != mine else 'next'} {name(other)} {means[other]:.2f}")
            if len(vals) > 1:
                t = tests[other]
                need = cmp.stats.seeds_needed(t["diff"], float((vals[mine] - vals[other]).std(ddof=1)))
                text += f"; difference p = {t['p']:.2g}" + (f", ~{need} seeds to detect" if need else "")
            full = cmp.METHODS[mine].label
            outcomes[f"{full}: lowest mean"] = bool(best == mine)
            if len(vals) > 1:                      # one seed: no paired test, one reading less
                outcomes[f"{full}: significantly lowest"] = sig
            texts.append(text)
        n = frame.seed.nunique()
        head = f"ECE % {'post' if scaled else 'pre'} T, mean of {n} seed{'s' if n > 1 else ''}: "
        return head + " | ".join(texts), (readings(**outcomes) if len(outcomes) > 1 else
                                          check(next(iter(outcomes.values()))))
    return rule


def _fts_rule(alpha: float, every_model: bool):
    def rule(frame: pd.DataFrame):
        part = frame[frame.metric == "ece"]
        if every_model:
            keys = list(dict.fromkeys(part.method))
        else:
            printed = agr.printed_column(FTS_PAPER, "adaece", True, FTS_SETTING, exclude=excluded(FTS_PAPER))
            keys = [m.key for m in cmp.METHODS.values() if m.compared_with in printed]
        have = set(part[part.setting == "ts"].method) & set(part[part.setting == "fts"].method)
        missing = [name(k) for k in keys if k not in have]
        if missing:
            return "–", untested(f"not trained in this plan: {', '.join(missing)}")
        ts, fts = board.seed_values(frame, "ece", "ts")[keys], board.seed_values(frame, "ece", "fts")[keys]
        lower = [k for k in keys if fts[k].mean() < ts[k].mean()]
        sig = [k for k in keys if len(ts) > 1 and (r := cmp.stats.paired_comparison(fts[k], ts[k]))["p"] < alpha
               and r["diff"] < 0]
        text = (f"ECE % after FTS below after TS (mean of {len(ts)} seeds) for {len(lower)} of {len(keys)} models"
                f"{': not ' + ', '.join(name(k) for k in keys if k not in lower) if len(lower) < len(keys) else ''}"
                f"; significantly (paired t-test, p < {alpha:g}) for {len(sig)}")
        if every_model:
            return text, beyond(len(lower) == len(keys))
        return text, readings(lower_mean_for_every_model=len(lower) == len(keys),
                              significantly_lower_for_every_model=len(sig) == len(keys))
    return rule


def rules(paper: str, alpha: float = 0.05) -> tuple[cmp.Claim, ...]:
    """``paper``'s headline claim restated on the common protocol, as rules on the per-seed
    frame of :func:`evaluate` (columns ``method, seed, setting, metric, value``). Each is read
    two ways: the paper's method has the lowest *mean* over seeds, and it is *significantly*
    lower than every other method of the paper's table (paired t-test over seeds, p <
    ``alpha``, no correction for the several tests); the verdict depends on the reading when
    the two disagree. The FTS paper's claim is about post-hoc calibration: FTS lowers the ECE
    of every model of its Table 1 (plus, beyond the paper, of every model of the leaderboard)."""
    from ..papers import get_paper

    get_paper(paper)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    if paper == FTS_PAPER:
        how = "test ECE after FTS vs after TS, both chosen by validation ECE on T = 0.1..10.0"
        return (cmp.Claim("FTS gives a lower ECE than TS for every model of the paper's Table 1", "Sec. 5.2, Sec. 6",
                          _fts_rule(alpha, False), how + " (the paper: equal-mass ECE, T = 0.01..5)"),
                cmp.Claim("FTS gives a lower ECE than TS for every model of the leaderboard", "(the book)",
                          _fts_rule(alpha, True), how))
    own = next(m.short for m in cmp.METHODS.values() if m.compared_with == HEADLINE[paper][0])
    how = ("mean test ECE (15 equal-width bins) over seeds of every method of the paper's Table 1 row we train; "
           f"reading 2: paired t-test against each, p < {alpha:g}")
    return tuple(cmp.Claim(f"{own} has the lowest ECE of the methods of the paper's Table 1, {when} temperature "
                           f"scaling", f"Table {HEADLINE[paper][1]}", _lowest_rule(paper, scaled, alpha),
                           how + (" (T by validation ECE)" if scaled else ""))
                 for scaled, when in ((False, "before"), (True, "after")))


def claims_log(paper: str, frame: pd.DataFrame | None, label: str, missing_reason: str = "") -> ClaimLog:
    """``paper``'s headline claims on the common protocol, decided on ``frame`` (:func:`evaluate`)
    labelled ``label``; ``frame`` None: "not tested" with ``missing_reason``."""
    log = ClaimLog(paper, CHAPTER, kind="experiment", section=SECTION)
    if frame is None:
        return cmp.log_claims(log, rules(paper), {}, {label: missing_reason})
    return cmp.log_claims(log, rules(paper), {label: frame})


def headline_claims(frame: pd.DataFrame, label: str) -> tuple[list[ClaimLog], pd.DataFrame]:
    """Every paper's :func:`claims_log` on ``frame`` and their rows in one frame (papers in
    book order)."""
    logs = [claims_log(p, frame, label) for p in PAPERS]
    return logs, pd.concat([log.frame() for log in logs], ignore_index=True)


_EVALUATED: dict = {}   # run keys -> evaluation frame (the five papers' builders share one evaluation)


def claims(profile: str = "cpu", paper: str = "mukhoti2020") -> ClaimLog:
    """The registered claims of ``paper`` (one builder per paper, :data:`BUILDERS`): the
    chapter's default plan at ``profile``, its runs read from the store (never trained)."""
    p = plan(profile, device="cpu")
    runs = cmp.load(p)
    if runs is None:
        return claims_log(paper, None, f"ours: {p.profile}, cifar10",
                          f"the chapter's {p.profile} runs are not all in the run store (execute the chapter)")
    image = runs["image"]
    key = tuple(sorted(r.key for r in image.values()))
    if key not in _EVALUATED:
        _EVALUATED[key] = board.evaluate_board(board.calibrate_runs(image), metrics=("ece",))
    return claims_log(paper, _EVALUATED[key], cmp.evidence_label(image))


def _builder(paper: str):
    def build(profile: str = "cpu") -> ClaimLog:
        return claims(profile, paper)
    build.__name__ = build.__qualname__ = f"claims_{paper}"
    build.__doc__ = f":func:`claims` of {paper} (registered in :data:`replicate.claims.SOURCES`)."
    return build


claims_mukhoti2020 = _builder("mukhoti2020")
claims_ghosh2022 = _builder("ghosh2022")
claims_tao2023 = _builder("tao2023")
claims_liang2024 = _builder("liang2024")
claims_komisarenko2024 = _builder("komisarenko2024")
BUILDERS = {p: f"replicate.experiments.leaderboard:claims_{p}" for p in PAPERS}
