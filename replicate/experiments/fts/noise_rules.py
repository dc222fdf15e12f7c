"""The FTS chapter's claims decided on our runs within their noise (a split of the rules
role, :mod:`.rules`): tests of :mod:`replicate.comparison.noise` on the runs' TS and FTS
calibrations (:func:`.evidence.run_evidence`, settings ``"ts:SELECT"`` / ``"fts:SELECT"``).

Per model, FTS against TS is the paired comparison of the same run calibrated two ways (the
paired t-test over three or more seeds, else a paired bootstrap over the test examples), and
"every model" is counted by :func:`replicate.comparison.noise.tally`; a temperature "about 1"
is the book's one reading (:data:`replicate.comparison.wording.T_NEAR_ONE`), its interval
over the seeds' temperatures.
"""
from __future__ import annotations

import math

from ...comparison import noise
from .plan import GAMMA_TR
from .rules import _name


def _models(ev) -> list:
    return list(dict.fromkeys(m for (m, _, st) in ev.board if st.startswith("ts:")))


def _pair(ev, method: str, select: str) -> dict:
    return {**{("fts", s): c for (m, s), c in ev.setting(f"fts:{select}").items() if m == method},
            **{("ts", s): c for (m, s), c in ev.setting(f"ts:{select}").items() if m == method}}


def _count(parts: dict, what: str) -> noise.Resolution:
    outcome = noise.tally(parts, len(parts), "models")
    test = next(iter(parts.values())).test
    text = f"{what} ({test}): " + "; ".join(f"{k} {p.estimate:+.3g} [{p.low:.3g}, {p.high:.3g}] {p.verdict}"
                                            for k, p in parts.items())
    return noise.Resolution(math.nan, math.nan, math.nan, test, outcome.note if outcome.verdict == "inconclusive"
                            else "", outcome, text, {"parts": parts})


def fts_improves_ece():
    """Sec. 5.2: FTS's test ECE (equal-mass, AdaECE) below TS's for every model, both chosen
    by validation equal-mass ECE."""
    def test(ev) -> noise.Resolution:
        parts = {_name(m): ev.memo(("fts_ece", m), lambda m=m: noise.compare(
            _pair(ev, m, "adaece"), "fts", "ts", "adaece", "lower", labels={"fts": "FTS", "ts": "TS"}))
            for m in _models(ev)}
        return _count(parts, "AdaECE % after FTS − after TS")
    return test


def keeps_accuracy(tol: float):
    """Sec. 5.2: FTS's test error within ``tol`` points of TS's, both ways, for every model
    and selection (the interval of the difference inside [-tol, tol])."""
    def test(ev) -> noise.Resolution:
        parts = {}
        for m in _models(ev):
            for select in ("nll", "adaece"):
                cells = _pair(ev, m, select)
                r = ev.memo(("fts_err", m, select), lambda cells=cells: noise.compare(
                    cells, "fts", "ts", "error", "lower", labels={"fts": "FTS", "ts": "TS"}))
                needs = f"seeds or a larger test set: [{r.low:.3g}, {r.high:.3g}] straddles ±{tol:g}"
                o = noise.decide_within(r.low, r.high, -tol, tol, needs)
                parts[f"{_name(m)} by {select}"] = noise.Resolution(r.estimate, r.low, r.high, r.test, o.note, o,
                                                                    r.text)
        return _count(parts, "error % after FTS − after TS")
    return test


def focal_t_near_one():
    """Sec. 4.1: the TS temperature of the focal models with gamma_tr <= 3 about 1 (the
    book's "close to 1"), T chosen by validation log-loss and by equal-mass ECE: each model's
    interval of the mean T over its seeds inside the range."""
    def by(select):
        def test(ev) -> noise.Resolution:
            keys = [k for k in GAMMA_TR if GAMMA_TR[k] <= 3 and k in ev.methods]
            if not keys:
                return noise.not_tested(f"no focal model with gamma_tr <= 3 in {ev.name}")
            few = [k for k in keys if len(ev.temperatures(k, select)) < noise.MIN_SEEDS]
            if few:
                return noise.not_tested(f"{', '.join(map(_name, few))} have fewer than {noise.MIN_SEEDS} seeds: the "
                                        f"interval of a T chosen by {select} needs seeds")
            return noise.all_of(*(noise.near_one(k, select) for k in keys))(ev)
        return test
    return noise.readings_of(by_log_loss=by("nll"), by_ECE=by("adaece"))

