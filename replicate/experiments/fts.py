"""The experiment chapter of Komisarenko & Kull (2024), ``exp_fts``: focal temperature
scaling (FTS) against temperature scaling (TS) on the models of Sec. 5.1, and the paper's
conclusions (Sec. 5.2, Sec. 6, Fig. 8) as rules.

Models (Sec. 5.1): cross-entropy, focal loss with gamma_tr 1, 2, 3, 5, 7, FLSD-53 and
AdaFocal. The paper's "AdaFocal" was focal loss with gamma 1 in effect (PROTOCOL.md, known
defects); we train both AdaFocal rules of the catalogue (``adafocal_code``,
``adafocal_paper``) and set the paper's AdaFocal row beside each, with that note. Every
model is calibrated post hoc by :func:`replicate.comparison.evaluate_posthoc`: TS and FTS
(gamma_ev grid of Sec. 5.1) on one temperature grid, chosen by validation log-loss for the
log-loss column and by validation equal-mass ECE (15 bins, the paper's "ECE") for the ECE
column.

The claims are tested on a summary frame of :func:`replicate.comparison.summarise_posthoc`
with a ``block`` column (the data set): ours has one block, the paper's Table 1 three
(CIFAR-100, CIFAR-10, TinyImageNet), and a claim about "all models" must hold in every block.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import comparison as cmp
from ..claims import ClaimLog, conditional, readings, untested
from .mukhoti import HISTORY_METHODS

PAPER = "komisarenko2024"
CHAPTER = "exp_fts"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = "Verdict"
METHOD_KEYS = ("cross_entropy", "fl1", "fl2", "fl3", "fl5", "fl7", "flsd53", "adafocal_code", "adafocal_paper")
#: focal-loss models and their training gamma (gamma_tr)
GAMMA_TR = {"fl1": 1.0, "fl2": 2.0, "fl3": 3.0, "fl5": 5.0, "fl7": 7.0}
#: The methods trained at the ``smoke`` profile: enough for every table, figure and verdict to run.
SMOKE_METHODS = ("cross_entropy", "fl1", "fl3")
SEEDS = (1, 2, 3)
SMOKE_SEEDS = (1, 2)
T_GRIDS = tuple(cmp.GRIDS)
#: the paper's note beside every AdaFocal row
ADAFOCAL_NOTE = ("FTS's own 'AdaFocal' was focal loss with gamma 1 in effect: the authors' code rebuilds the "
                 "AdaFocal loss every batch, so its gammas never leave 1 (PROTOCOL.md, known defects)")
#: Data the paper uses that is not available offline: data set -> reason.
UNREACHABLE = {
    "cifar100": "CIFAR-100 is not in the offline data directory; the loader exists (replicate.data.DATASETS), "
                "so plan(dataset='cifar100') trains it once the archive is there",
    "tiny_imagenet": "TinyImageNet is not in the offline data directory; the loader exists, "
                     "plan(dataset='tiny_imagenet') trains it once the archive is there",
}


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all of :data:`METHOD_KEYS`."""
    from ..profiles import get_profile

    return SMOKE_METHODS if get_profile(profile).name == "smoke" else METHOD_KEYS


def default_seeds(profile: str) -> tuple[int, ...]:
    """:data:`SMOKE_SEEDS` at ``smoke``, else :data:`SEEDS` (the paper: 5 seeds)."""
    from ..profiles import get_profile

    return SMOKE_SEEDS if get_profile(profile).name == "smoke" else SEEDS


def check_grid(grid) -> str:
    """``grid`` as one of :data:`T_GRIDS` ("code": 0.05..5.00, "paper": 0.01..5.00, "ts": 0.1..10.0)."""
    if grid not in T_GRIDS:
        raise ValueError(f"grid must be one of {', '.join(T_GRIDS)}; got {grid!r}")
    return grid


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=None, methods=None,
         grid: str = "code", device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    One group, ``image``. ``seeds`` None: :func:`default_seeds`; ``methods`` None:
    :func:`default_methods`; ``grid``: the temperature grid of the tables (:func:`check_grid`;
    it changes no run). Each bad parameter raises a ValueError naming it and the allowed values.
    """
    from .. import training
    from ..profiles import get_profile
    from ..runs import dataset_kind

    prof = get_profile(profile)
    seeds = cmp.check_seeds(default_seeds(prof.name) if seeds is None else seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    check_grid(grid)
    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set (the paper's are CIFAR-10/100 and TinyImageNet); "
                         f"got {dataset!r}")
    dev = str(training.select_device(device))
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    # the Mukhoti chapter's runs of these methods record per-epoch metrics: the same options make the same runs
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=HISTORY_METHODS)
    p.add("image", chosen, image)
    p.references[dataset] = cmp.paper_reference(dataset, next(iter(image.values())).resolve()["model"], PAPER)
    return p


# ----------------------------------------------------------------------------- evidence frames
#: label of the paper's evidence (all three data sets of Table 1)
PAPER_LABEL = "paper: Table 1 (CIFAR-100, CIFAR-10, TinyImageNet; ResNet-50)"


def ours_frame(runs: dict, block: str, grid: str = "code", link: str = "intended", log=None) -> pd.DataFrame:
    """Our evidence for the rules: :func:`replicate.comparison.summarise_posthoc` of the runs
    ``{(method, seed): Run}`` (TS and FTS, chosen by validation log-loss and by equal-mass
    ECE on ``grid``) with ``block`` (the data set), plus Fig. 8's rows (``posthoc`` "path",
    ``metric`` "T"): per focal-loss model and gamma_ev, the T chosen by validation
    equal-mass ECE, mean and sd over seeds."""
    frame = cmp.summarise_posthoc(cmp.evaluate_posthoc(runs, grid=check_grid(grid), link=link, log=log))
    paths = cmp.optimal_temperatures({k: r for k, r in runs.items() if k[0] in GAMMA_TR}, "adaece", grid=grid,
                                     link=link)
    if len(paths):
        g = paths.groupby(["method", "gamma"], sort=False)["T"]
        p = g.agg(mean="mean", std="std").reset_index().assign(posthoc="path", select="adaece", link=link,
                                                               metric="T", n_seeds=g.size().to_numpy())
        p["T"], p["T_std"] = p["mean"], p["std"]
        frame = pd.concat([frame, p], ignore_index=True)
    return frame.assign(block=block)


def paper_frame() -> pd.DataFrame:
    """The paper's Table 1 (all three data sets) in the layout of :func:`ours_frame` (``block`` = data set)."""
    df = cmp.paper_posthoc(PAPER)
    return df.assign(block=df["dataset"])


# ----------------------------------------------------------------------------- rule helpers
def _v(f, block, method, posthoc, select, metric, col="mean") -> float:
    r = f[(f["block"] == block) & (f["method"] == method) & (f["posthoc"] == posthoc) & (f["select"] == select)
          & (f["metric"] == metric)]
    return float(r[col].iloc[0]) if len(r) and pd.notna(r[col].iloc[0]) else math.nan


def _blocks(f) -> list:
    return list(dict.fromkeys(f["block"]))


def _models(f, block) -> list:
    return list(dict.fromkeys(f.loc[(f["block"] == block) & (f["posthoc"] == "ts"), "method"]))


def _kendall(x, y) -> float:
    """Kendall's tau (scipy's tau-b; NaN when either sequence is constant)."""
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic) if len(x) > 1 else math.nan


def _over_blocks(ok: dict) -> object:
    """holds in every block; holds with conditions (naming the blocks) in some; fails in none."""
    good = [b for b, v in ok.items() if v]
    if len(good) == len(ok) or not good:
        return bool(good)
    return conditional(False, True, f"on {', '.join(good)} only")


def _gamma_tr_rows(f, block):
    return [k for k in GAMMA_TR if k in _models(f, block)]


def _name(key: str) -> str:
    """The short label of a method; the full label where two methods share a short one (AdaFocal's rules)."""
    if key not in cmp.METHODS:
        return {"adafocal": "AdaFocal"}.get(key, key)
    m = cmp.METHODS[key]
    return m.label if sum(o.short == m.short for o in cmp.METHODS.values()) > 1 else m.short


# ----------------------------------------------------------------------------- the paper's conclusions
def _fts_improves_ece(f):
    parts, ok = [], {}
    for b in _blocks(f):
        pairs = {m: (_v(f, b, m, "ts", "adaece", "adaece"), _v(f, b, m, "fts", "adaece", "adaece"))
                 for m in _models(f, b)}
        pairs = {m: p for m, p in pairs.items() if not any(math.isnan(x) for x in p)}
        if not pairs:
            continue
        better = [m for m, (ts, fts) in pairs.items() if fts < ts]
        worse = [f"{_name(m)} {fts:.2f} vs {ts:.2f}" for m, (ts, fts) in pairs.items() if fts >= ts]
        parts.append(f"{b}: FTS below TS for {len(better)} of {len(pairs)} models"
                     + (f" (not: {'; '.join(worse)})" if worse else ""))
        ok[b] = len(better) == len(pairs)
    return ("; ".join(parts) or "–"), (None if not ok else all(ok.values()))


def _keeps_accuracy(tol):
    def rule(f):
        parts, ok = [], {}
        for b in _blocks(f):
            diffs = {m: max(abs(_v(f, b, m, "fts", s, "accuracy") - _v(f, b, m, "ts", s, "accuracy"))
                            for s in ("nll", "adaece")) for m in _models(f, b)}
            diffs = {m: d for m, d in diffs.items() if not math.isnan(d)}
            if diffs:
                parts.append(f"{b}: largest |FTS - TS| accuracy {max(diffs.values()):.2g} points over "
                             f"{len(diffs)} models")
                ok[b] = max(diffs.values()) <= tol
        return ("; ".join(parts) or "–"), (None if not ok else all(ok.values()))
    return rule


def _log_loss_close(max_share):
    def rule(f):
        parts, ok, no_spread = [], {}, False
        for b in _blocks(f):
            rows = []
            for m in _models(f, b):
                ts, fts = _v(f, b, m, "ts", "nll", "nll"), _v(f, b, m, "fts", "nll", "nll")
                sd = max(_v(f, b, m, "ts", "nll", "nll", "std"), _v(f, b, m, "fts", "nll", "nll", "std"))
                if not (math.isnan(ts) or math.isnan(fts)):
                    rows.append((m, ts, fts, sd))
            if not rows:
                continue
            losses = [(m, fts - ts, sd) for m, ts, fts, sd in rows if fts > ts]
            no_spread |= any(math.isnan(sd) for _, _, sd in losses)
            big = [f"{_name(m)} +{d:.3f} (sd {sd:.3f})" for m, d, sd in losses if not d <= 2 * sd]
            parts.append(f"{b}: FTS log-loss above TS for {len(losses)} of {len(rows)} models"
                         + (f", beyond 2 sd: {'; '.join(big)}" if big else ""))
            ok[b] = len(losses) <= max_share * len(rows) and not big
        if not ok:
            return "–", None
        if no_spread:
            return "; ".join(parts), untested("one seed: no standard deviation to judge 'marginally'")
        return "; ".join(parts), all(ok.values())
    return rule


def _t_decreases_with_gamma_tr(f):
    parts, res = [], {}
    for sel, name in (("nll", "by_log_loss"), ("adaece", "by_ECE")):
        ok = {}
        for b in _blocks(f):
            keys = _gamma_tr_rows(f, b)
            temps = [_v(f, b, k, "ts", sel, "nll" if sel == "nll" else "adaece", "T") for k in keys]
            if len(keys) < 2 or any(math.isnan(t) for t in temps):
                continue
            tau = _kendall([GAMMA_TR[k] for k in keys], temps)
            parts.append(f"{b} T by {'log-loss' if sel == 'nll' else 'ECE'}: "
                         + ", ".join(f"{_name(k)} {t:.2f}" for k, t in zip(keys, temps)) + f" (tau {tau:+.2f})")
            ok[b] = tau < 0
        if ok:
            res[name] = _over_blocks(ok)
    if len(res) < 2:
        return "; ".join(parts) or "–", None
    return "; ".join(parts), readings(**res)


def _gamma_tr_tradeoff(f):
    parts, res = [], {}
    for setting, name in (("ts", "after_TS"), ("fts", "after_FTS")):
        ok = {}
        for b in _blocks(f):
            keys = _gamma_tr_rows(f, b)
            acc = [_v(f, b, k, setting, "adaece", "accuracy") for k in keys]
            ece = [_v(f, b, k, setting, "adaece", "adaece") for k in keys]
            if len(keys) < 2 or any(math.isnan(v) for v in acc + ece):
                continue
            g = [GAMMA_TR[k] for k in keys]
            t_acc, t_ece = _kendall(g, acc), _kendall(g, ece)
            parts.append(f"{b} {setting.upper()}: accuracy tau {t_acc:+.2f}, ECE tau {t_ece:+.2f}")
            ok[b] = t_acc < 0 and t_ece < 0
        if ok:
            res[name] = _over_blocks(ok)
    if len(res) < 2:
        return "; ".join(parts) or "–", None
    return "; ".join(parts), readings(**res)


def _selection_gain(metric, other, bounds):
    """Mean relative gain in test ``metric`` from choosing by ``metric`` instead of ``other``."""
    lo, hi = bounds

    def rule(f):
        gains = {"TS": [], "FTS": []}
        for b in _blocks(f):
            for m in _models(f, b):
                for setting in ("ts", "fts"):
                    own, alt = _v(f, b, m, setting, metric, metric), _v(f, b, m, setting, other, metric)
                    if not (math.isnan(own) or math.isnan(alt)) and alt > 0:
                        gains[setting.upper()].append((alt - own) / alt)
        if not gains["TS"] or not gains["FTS"]:
            return "–", untested(f"needs test {metric} under both selections; the paper prints only "
                                 f"{metric} chosen by {metric}")
        text = "; ".join(f"{k}: mean {100 * np.mean(v):+.1f} % (min {100 * min(v):+.1f} %, {len(v)} models)"
                         for k, v in gains.items())
        checks = {}
        for k, v in (("FTS", gains["FTS"]), ("TS_and_FTS", gains["TS"] + gains["FTS"])):
            mean = float(np.mean(v))
            checks[k] = (mean >= lo and (hi is None or mean <= hi)) and (hi is None or min(v) >= 0)
        return text, readings(**checks)
    return rule


def _close_to_linear(min_r2):
    def r2(x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        if len(x) < 3 or np.ptp(y) == 0:
            return 1.0 if len(x) >= 3 else math.nan
        fit = np.polyval(np.polyfit(x, y, 1), x)
        return 1 - np.sum((y - fit) ** 2) / np.sum((y - y.mean()) ** 2)

    def rule(f):
        paths = f[f["posthoc"] == "path"]
        if paths.empty:
            return "–", untested("Fig. 8 prints no numbers (the paper's text only says 'close to linear')")
        res, parts = {}, []
        for what, fn in (("T", lambda t: t), ("inverse_T", lambda t: 1 / t)):
            scores = {m: r2(g["gamma"], fn(g["mean"])) for m, g in paths.groupby("method", sort=False)}
            parts.append(f"R² of {what.replace('_', ' ')} on gamma_ev: "
                         + ", ".join(f"{_name(m)} {v:.2f}" for m, v in scores.items()))
            res[what] = all(v >= min_r2 for v in scores.values())
        return "; ".join(parts), readings(**res)
    return rule


def _focal_t_near_one(tol):
    def rule(f):
        res, parts = {}, []
        for sel, name in (("nll", "by_log_loss"), ("adaece", "by_ECE")):
            temps = {(b, k): _v(f, b, k, "ts", sel, sel, "T") for b in _blocks(f) for k in _gamma_tr_rows(f, b)
                     if GAMMA_TR[k] <= 3}
            temps = {k: t for k, t in temps.items() if not math.isnan(t)}
            if not temps:
                continue
            parts.append(f"T by {'log-loss' if sel == 'nll' else 'ECE'}: "
                         + ", ".join(f"{b} {_name(k)} {t:.2f}" for (b, k), t in temps.items()))
            res[name] = all(abs(t - 1) <= tol + 1e-9 for t in temps.values())
        if len(res) < 2:
            return "; ".join(parts) or "–", None
        return "; ".join(parts), readings(**res)
    return rule


def rules(acc_tol: float = 1e-6, max_loss_share: float = 0.5, ece_gain: float = 0.15, nll_gain_max: float = 0.03,
          min_r2: float = 0.9, t_tolerance: float = 0.25) -> tuple[cmp.Claim, ...]:
    """The conclusions of Komisarenko & Kull (2024), Sec. 4.1, 5.2, 6 and Fig. 8, as rules on
    :func:`ours_frame` / :func:`paper_frame`. Thresholds (each stated in the claims table):
    ``acc_tol`` accuracy points for "the same accuracy"; "occasionally marginally losing"
    on log-loss = at most ``max_loss_share`` of the models lose, each by at most two
    standard deviations over seeds; "an extra 20 %" = a mean relative gain of at least
    ``ece_gain``; "minor but consistent, around 1 %" = no model loses and the mean gain is
    at most ``nll_gain_max``; "close to linear" = R² of a straight line at least ``min_r2``
    for every model; "about 1" = within ``t_tolerance`` of 1 (focal models with gamma_tr <= 3,
    the commonly used values)."""
    for name, v in (("acc_tol", acc_tol), ("max_loss_share", max_loss_share), ("ece_gain", ece_gain),
                    ("nll_gain_max", nll_gain_max), ("min_r2", min_r2), ("t_tolerance", t_tolerance)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return (
        cmp.Claim("FTS improves (equal-mass) ECE over TS for every baseline model", "Sec. 5.2, Sec. 6, abstract",
                  _fts_improves_ece, "test ECE after FTS < after TS, both chosen by validation ECE, every model "
                                     "and data set"),
        cmp.Claim("FTS keeps the accuracy of TS", "Sec. 5.2, Sec. 6 ('unchanged by design')", _keeps_accuracy(acc_tol),
                  f"|accuracy after FTS - after TS| <= {acc_tol:g} points, every model and selection"),
        cmp.Claim("FTS only occasionally and marginally loses to TS on log-loss", "Sec. 5.2, Sec. 6",
                  _log_loss_close(max_loss_share),
                  f"FTS log-loss > TS log-loss (both chosen by validation log-loss) for at most "
                  f"{max_loss_share:.0%} of the models, each loss within 2 sd over seeds"),
        cmp.Claim("The optimal temperature decreases as gamma_tr grows", "Sec. 5.2", _t_decreases_with_gamma_tr,
                  "Kendall tau of gamma_tr and the TS temperature < 0 (focal-loss models), T chosen by log-loss "
                  "and by ECE"),
        cmp.Claim("Higher gamma_tr gives better ECE but worse accuracy", "Sec. 5.2", _gamma_tr_tradeoff,
                  "Kendall tau of gamma_tr with accuracy < 0 and with ECE < 0 (focal-loss models), after TS and "
                  "after FTS"),
        cmp.Claim("Choosing the parameters by validation ECE gives an extra ~20 % relative ECE improvement",
                  "Sec. 5.2", _selection_gain("adaece", "nll", (ece_gain, None)),
                  f"mean relative test-ECE gain of selection by validation ECE over selection by validation "
                  f"log-loss >= {ece_gain:.0%} (FTS; TS and FTS together); the paper does not print this comparison"),
        cmp.Claim("For log-loss, choosing by validation log-loss gives a minor but consistent ~1 % improvement",
                  "Sec. 5.2", _selection_gain("nll", "adaece", (0.0, nll_gain_max)),
                  f"relative test log-loss gain of selection by log-loss over selection by ECE >= 0 for every "
                  f"model, mean <= {nll_gain_max:.0%}"),
        cmp.Claim("The optimal T is close to linear in gamma_ev for every model (Fig. 8)", "Sec. 5.2, Fig. 8, Sec. 6",
                  _close_to_linear(min_r2),
                  f"per focal-loss model, T chosen by validation ECE for each gamma_ev of the grid: R² of a straight "
                  f"line >= {min_r2:g} (T, and 1/T)"),
        cmp.Claim("The post-hoc temperature of focal-loss models is about 1", "Sec. 4.1",
                  _focal_t_near_one(t_tolerance),
                  f"|T - 1| <= {t_tolerance:g} for the TS temperature of focal models with gamma_tr <= 3"),
    )


def evidence(p: cmp.Plan, runs: dict | None, grid: str = "code", log=None) -> tuple[dict, dict]:
    """``({label: frame}, {label: reason})``: our runs (:func:`ours_frame`) and the paper's
    Table 1 (:func:`paper_frame`); ``runs`` None (not in the store) makes ours missing."""
    summaries, missing = {}, {}
    dataset = next(iter(p.image.values())).dataset
    if runs is not None:
        summaries[cmp.evidence_label(runs["image"])] = ours_frame(runs["image"], dataset, grid, log=log)
    else:
        missing[f"ours: {p.profile}, {dataset}"] = (f"the chapter's {p.profile} runs are not in the run store "
                                                    f"(execute the chapter at that profile)")
    summaries[PAPER_LABEL] = paper_frame()
    return summaries, missing


def claims_log(summaries: dict, missing: dict | None = None) -> ClaimLog:
    """The chapter's claims table from :func:`evidence`'s output."""
    log = ClaimLog(PAPER, CHAPTER, kind="experiment", section=SECTION)
    return cmp.log_claims(log, rules(), summaries, missing)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained) and the paper's Table 1."""
    p = plan(profile, device="cpu")
    return claims_log(*evidence(p, cmp.load(p)))
