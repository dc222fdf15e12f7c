"""The rules that decide the experimental claims of Komisarenko & Kull (2024), ``exp_fts``.

Each rule reads a frame of :mod:`.evidence` - ours (one ``block``, our data set) or the
paper's Table 1 (three blocks) - and returns ``(numbers, outcome)``; a claim about "all
models" must hold in every block, and one that holds in some blocks only holds with
conditions naming them. A rule whose numbers the paper does not print is "not tested" with
the reason. The list of claims, each with its rule and thresholds, is
:func:`replicate.experiments.fts.claims.rules`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...claims import conditional, readings, untested
from .plan import GAMMA_TR


# ----------------------------------------------------------------------------- helpers
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
def fts_improves_ece(f):
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


def keeps_accuracy(tol):
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


def log_loss_close(max_share):
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


def t_decreases_with_gamma_tr(f):
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


def gamma_tr_tradeoff(f):
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


def selection_gain(metric, other, bounds):
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


def close_to_linear(min_r2):
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


def focal_t_near_one(tol):
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
