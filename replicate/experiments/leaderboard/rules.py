"""Each paper's headline claim as a rule on the leaderboard's per-seed frame
(:func:`.evidence.evaluate`): the paper's method lowest, by mean and by paired t-tests over
seeds (:func:`lowest_rule`), and FTS below TS for every model (:func:`fts_rule`); and the
same claims decided within the runs' noise (:func:`lowest_test`: bootstrap rank intervals
over seeds and test examples, :func:`replicate.comparison.noise.best_of`;
:func:`fts_test`: the paired test over seeds of FTS against TS for each model,
:func:`replicate.comparison.noise.compare`, the models counted by
:func:`replicate.comparison.noise.tally`). The claims that use them are listed in
:mod:`.claims`."""
from __future__ import annotations

import math

import pandas as pd

from ... import comparison as cmp
from ...claims import beyond, check, readings, untested
from ...comparison import agreement as agr
from ...comparison import board, noise
from .evidence import excluded, name
from .plan import FTS_PAPER, FTS_SETTING, HEADLINE


def headline_set(paper: str) -> tuple[str, list[str]]:
    """The paper's method (printed key) and every printed method of its headline table (pre-T ECE)."""
    own, table = HEADLINE[paper]
    ref = cmp.paper_reference("cifar10", "resnet50", paper)
    vals = cmp.paper_values(ref, ["ece"])
    rows = vals[(~vals.temperature_scaled) & vals.tables.map(lambda t: table in t.split(", "))]
    return own, list(dict.fromkeys(rows.method))


def lowest_rule(paper: str, scaled: bool, alpha: float):
    setting = "ts" if scaled else "none"

    def rule(frame: pd.DataFrame):
        own, printed = headline_set(paper)
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


def fts_rule(alpha: float, every_model: bool):
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


# ----------------------------------------------------------------------------- within the runs' noise
def _printed_keys(paper: str):
    """``[(our key of the paper's method, [our keys of its table])]``, one per reading of the
    printed methods (the two AdaFocal rules)."""
    own, printed = headline_set(paper)
    ours = [m for m in cmp.METHODS.values() if m.compared_with in printed]
    out = []
    for mapping in agr.readings(printed, ours):
        mine = next((k for k, v in mapping.items() if v == own), None)
        if mine is not None:
            out.append((mine, list(mapping)))
    return out


def lowest_test(paper: str, scaled: bool):
    """The noise test of :func:`lowest_rule`: the paper's method is the best of its table's
    methods by ECE (rank interval [1, 1] over bootstrap resamples of seeds and test
    examples); one verdict per reading of the printed methods, combined by
    :func:`replicate.claims.readings`."""
    def test(ev) -> noise.Resolution:
        parts = {cmp.METHODS[mine].label: noise.best(mine, keys, scaled=scaled, labels=_labels())(ev)
                 for mine, keys in _printed_keys(paper)}
        if len(parts) == 1:
            return next(iter(parts.values()))
        outcome = readings(**{k: p.outcome for k, p in parts.items()})
        res = list(parts.values())
        return noise.Resolution(math.nan, math.nan, math.nan, res[0].test, outcome.note if outcome.verdict ==
                                "inconclusive" else "", outcome, " | ".join(f"{k}: {p.text}" for k, p in parts.items()),
                                {"parts": parts})
    return test


def _labels() -> dict:
    from .evidence import labels

    return labels()


def fts_test(every_model: bool):
    """The noise test of :func:`fts_rule`: for each model, the paired comparison (over seeds,
    :func:`replicate.comparison.noise.compare`) of its ECE after FTS against after TS;
    "every model" counted by :func:`replicate.comparison.noise.tally`."""
    def test(ev) -> noise.Resolution:
        ts, fts = ev.setting("ts"), ev.setting("fts")
        if every_model:
            keys = list(dict.fromkeys(m for m, _ in ts))
        else:
            printed = agr.printed_column(FTS_PAPER, "adaece", True, FTS_SETTING, exclude=excluded(FTS_PAPER))
            keys = [m.key for m in cmp.METHODS.values() if m.compared_with in printed]
        parts = {}
        for k in keys:
            cells = {**{("fts", s): c for (m, s), c in fts.items() if m == k},
                     **{("ts", s): c for (m, s), c in ts.items() if m == k}}
            parts[name(k)] = ev.memo(("fts", k), lambda cells=cells: noise.compare(
                cells, "fts", "ts", labels={"fts": "FTS", "ts": "TS"}))
        outcome = noise.tally(parts, len(parts), "models")
        test = next(iter(parts.values())).test
        text = f"ECE % after FTS − after TS ({test}): " + "; ".join(
            f"{k} {p.estimate:+.2f} [{p.low:.2f}, {p.high:.2f}] {p.verdict}" for k, p in parts.items())
        return noise.Resolution(math.nan, math.nan, math.nan, test, outcome.note if outcome.verdict ==
                                "inconclusive" else "", outcome, text, {"parts": parts})
    return test
