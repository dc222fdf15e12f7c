"""The experimental claims of Komisarenko & Kull (2024), ``exp_fts``: each conclusion of
Sec. 4.1, 5.2 and 6, where the paper makes it, its one test (:mod:`replicate.claims.tests`)
and the rows it covers, in :func:`definitions`. The same test decides each claim on the
paper's Table 1 (all three data sets, every printed model) and on our runs (every model,
every stored seed, within the noise model of :mod:`replicate.comparison.noise`); :mod:`.report`
applies them.

A row is one data set and network (the paper's Table 1 has three: CIFAR-100, CIFAR-10,
TinyImageNet); every claim covers every row (``Over("every")``), and the paper's own
quantifier applies to the *models* of a row, as it words them (Sec. 5.2, 6):

- FTS improves ECE "among all baseline models" and keeps "the same accuracy": every model;
- FTS is "occasionally marginally losing on log-loss": at most ``loss_share`` of the models
  lose (at least half do not, :func:`definitions`), and every loss is marginal - at most
  ``minor`` relative, the paper's own scale for a log-loss change it calls "rather minor
  ... around 1 %" (Sec. 5.2);
- the optimal temperature "generally decreases" with gamma_tr, and higher gamma_tr gives
  "generally" better ECE but worse accuracy: most steps from one gamma_tr to the next;
- choosing by validation ECE gains "an extra 20 % relative improvement in average": the
  mean over the models of the relative gain at least ``ece_gain``; for log-loss the gain is
  "rather minor but consistent: around 1 %": every model gains, the mean at most ``minor``;
- Fig. 8's relation is "close to linear for all trained models": every focal model's R² of
  a straight line at least ``min_r2`` (Fig. 8 prints no numbers: not tested on the paper);
- the temperature of focal models is "frequently close to 1" (Sec. 4.1): most of the focal
  models with the commonly used gamma_tr <= 3, "close to 1" read as the whole book reads it
  (:data:`replicate.claims.wording.T_NEAR_ONE`).

A model counts once: where two variants' runs have identical test logits (the two AdaFocal
rules at the cpu profile) the second is left out, and the row says so (:class:`Models`).
:class:`Models` (with :class:`EachModel`, :class:`Steps`, :class:`MeanGain`) and the two
statistics :class:`Relative` and :class:`Gap` are the chapter's small additions to the
library of claim tests.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ...claims import wording
from ...claims.claim import Claim
from ...claims.decide import OP_WORDS, not_tested
from ...claims.evidence import Cell, Named
from ...claims.tests import AllOf, Count, Difference, Readings, Statistic, Test, Value, near_one
from .plan import GAMMA_TR

#: Every model a row of either side may hold (the paper's "adafocal", our two AdaFocal rules).
MODELS = ("cross_entropy", "fl1", "fl2", "fl3", "fl5", "fl7", "flsd53", "adafocal", "adafocal_code",
          "adafocal_paper")
#: The focal-loss models in the order of their gamma_tr.
FOCAL = tuple(GAMMA_TR)
#: The selection criterion of a cell (its table setting): validation log-loss or equal-mass ECE.
BY = {"nll": "by log-loss", "adaece": "by ECE"}
POST_NAMES = {"ts": "TS", "fts": "FTS"}


def cell(method: str, metric: str, post: str, by: str) -> Cell:
    """``metric`` of ``method`` after ``post`` ("ts", "fts") with the parameters chosen by
    validation ``by`` ("nll", "adaece")."""
    return Cell(method, metric, post, BY[by])


@functools.lru_cache(maxsize=1)
def names():
    """The display names of the chapter's claims: the book's (:func:`replicate.comparison.report.names`),
    the two AdaFocal rules by their full labels, and the metrics as the paper names them
    (its "ECE" is equal-mass, its "log-loss" the NLL, in the book's unit: nats x100)."""
    from ...comparison.report import names as book_names

    n = book_names()
    n.methods.update({"adafocal_code": "AdaFocal (authors' code)", "adafocal_paper": "AdaFocal (Eq. 4)"})
    n.metrics.update({"adaece": "equal-mass ECE", "nll": "log-loss (x100)"})
    return n


def temperature(method: str, by: str) -> Named:
    """The TS temperature of ``method`` chosen by validation ``by`` (mean over seeds)."""
    return Named(f"T {by} {method}", f"{names().method(method)} T ({BY[by]})")


def r2(method: str, what: str = "T") -> Named:
    """R² of the straight line through Fig. 8's points of ``method`` (``what`` "T" or "inverse_T")."""
    return Named(f"r2 {what} {method}",
                 f"{names().method(method)} R² of {'1/T' if what == 'inverse_T' else 'T'} on γ_ev")


# ----------------------------------------------------------------------------- the chapter's tests
class Relative(Statistic):
    """``100 (a - b) / b`` ``op`` ``threshold``: a relative difference in percent ("FTS's
    log-loss at most 3 % above TS's")."""

    def __init__(self, a, b, op: str, threshold: float):
        super().__init__(lambda x, y: 100 * (x - y) / y, (a, b), op, threshold, pairs=((a, b),))
        self.a, self.b = a, b

    def statement(self, names) -> str:
        return f"({self.a.label(names)} − {self.b.label(names)}) / {self.b.label(names)}, %"


class Gap(Statistic):
    """``|a - b|`` ``op`` ``threshold`` ("the same accuracy": at most a tolerance apart)."""

    def __init__(self, a, b, op: str, threshold: float):
        super().__init__(lambda x, y: np.abs(x - y), (a, b), op, threshold, pairs=((a, b),))
        self.a, self.b = a, b

    def statement(self, names) -> str:
        return f"|{self.a.label(names)} − {self.b.label(names)}|"


class Models(Test):
    """A test over the models a row has: the ``candidates`` whose ``probe`` quantity the row
    holds, in order, each distinct model once - a model whose runs have the same test logits
    as an earlier one's (:meth:`replicate.claims.evidence.Evidence.identical`) is left out and
    named. Subclasses build the test on those models (:meth:`build`)."""

    least = 1

    def __init__(self, candidates, probe):
        self.candidates, self.probe = tuple(candidates), probe
        if not self.candidates:
            raise ValueError("candidates must name at least one model")

    def models(self, ev, row: str):
        """``(models, notes)``: the row's distinct models and what was left out; or a string,
        why the row has too few."""
        got = {k: ev.draws(row, self.probe(k)) for k in self.candidates}
        kept, notes = [], []
        for k in (k for k, d in got.items() if not isinstance(d, str)):
            why = next(filter(None, (ev.identical(row, self.probe(j), self.probe(k)) for j in kept)), None)
            if why:
                notes.append(f"counted once, the same model at this profile: {why}")
            else:
                kept.append(k)
        if not kept:
            return next(iter(got.values()))
        if len(kept) < self.least:
            return f"{len(kept)} model in {row}; the comparison needs {self.least}"
        return kept, notes

    def build(self, models, names) -> Test:
        raise NotImplementedError

    def quantities(self) -> tuple:
        return tuple(self.probe(k) for k in self.candidates)

    def run(self, ev, row: str):
        got = self.models(ev, row)
        if isinstance(got, str):
            return not_tested(got)
        kept, notes = got
        res = self.build(tuple(kept), ev.names)(ev, row)
        if notes and res.text not in ("", "–"):
            res = replace(res, text=f"{res.text} ({'; '.join(notes)})")
        return res


class EachModel(Models):
    """``quantifier`` of the row's models pass ``item(model)``: counted by
    :class:`replicate.claims.tests.Count` ("every model", "at least half of the models")."""

    def __init__(self, item, quantifier="every", candidates=MODELS, probe=None):
        wording.needed(quantifier, 1)
        super().__init__(candidates, probe or (lambda k: next(iter(item(k).quantities()))))
        self.item, self.quantifier = item, quantifier

    def build(self, models, names) -> Test:
        return Count({names.method(k): self.item(k) for k in models}, self.quantifier, "models")

    def how(self, names) -> str:
        return (f"in {wording.quantifier_text(self.quantifier, 'models')} of the row, each distinct model once: "
                f"{self.item(self.candidates[0]).how(names)}, ...")


class Steps(Models):
    """``quantifier`` of the steps from one model to the next (``candidates`` in the order of
    a parameter, here gamma_tr) pass ``item(before, after)``: a trend read as "generally"."""

    least = 2

    def __init__(self, item, quantifier="most", candidates=FOCAL, probe=None):
        wording.needed(quantifier, 1)
        super().__init__(candidates, probe)
        self.item, self.quantifier = item, quantifier

    def build(self, models, names) -> Test:
        return Count({f"{names.method(a)} → {names.method(b)}": self.item(a, b) for a, b in zip(models, models[1:])},
                     self.quantifier, "steps")

    def how(self, names) -> str:
        order = ", ".join(names.method(k) for k in self.candidates)
        return (f"in {wording.quantifier_text(self.quantifier, 'steps')} from one model to the next of those the row "
                f"has ({order}): {self.item(*self.candidates[:2]).how(names)}, ...")


class MeanGain(Models):
    """The mean over the row's items of the relative gain ``(other - own) / other`` ``op``
    ``threshold``: ``pairs(model)`` gives the item's ``(other, own)`` cells (several per
    model: TS and FTS)."""

    def __init__(self, pairs, op: str, threshold: float, candidates=MODELS):
        first = lambda k: pairs(k)[0][0]  # noqa: E731
        super().__init__(candidates, first)
        self.pairs, self.op, self.threshold = pairs, op, float(threshold)

    def models(self, ev, row: str):
        got = super().models(ev, row)
        if isinstance(got, str):
            return got
        kept = [k for k in got[0] if all(not isinstance(ev.draws(row, q), str) for p in self.pairs(k) for q in p)]
        return (kept, got[1]) if kept else f"no model in {row} has both cells of the comparison"

    def _text(self, names, models=None) -> str:
        other, own = self.pairs(self.candidates[0])[0]
        posts = "/".join(POST_NAMES[p.post] for p, _ in self.pairs(self.candidates[0]))
        over = f"{len(models)} models" if models else "the row's models"
        return (f"mean over {over} of (X {other.setting} − X {own.setting}) / X {other.setting} in %, "
                f"X = {names.metric(own.metric)} after {posts}")

    def build(self, models, names) -> Test:
        qs = [q for k in models for p in self.pairs(k) for q in p]

        def fn(*xs):
            xs = np.broadcast_arrays(*xs)
            return 100 * np.mean([(xs[i] - xs[i + 1]) / xs[i] for i in range(0, len(xs), 2)], axis=0)
        return Statistic(fn, qs, self.op, self.threshold, self._text(names, models))

    def how(self, names) -> str:
        return f"{self._text(names)} {OP_WORDS[self.op]} {self.threshold:g}"


# ----------------------------------------------------------------------------- the claims
def _number(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
        raise ValueError(f"{name} must be a number >= 0; got {v!r}")
    return float(v)


def definitions(acc_tol: float = 1e-6, loss_share: float = 0.5, minor: float = 0.03, ece_gain: float = 0.15,
                min_r2: float = 0.9) -> tuple[Claim, ...]:
    """The conclusions of Komisarenko & Kull (2024), Sec. 4.1, 5.2 and 6, each with its test.

    ``acc_tol``: accuracy points for "the same accuracy"; ``loss_share``: the share of models
    that may lose on log-loss for "occasionally" (at least ``1 - loss_share`` do not);
    ``minor``: the largest relative log-loss change that is "marginal" / "minor"; ``ece_gain``:
    the mean relative ECE gain that is "an extra ~20 %"; ``min_r2``: R² of "close to linear"."""
    acc_tol, minor, ece_gain, min_r2 = (_number(n, v) for n, v in (("acc_tol", acc_tol), ("minor", minor),
                                                                  ("ece_gain", ece_gain), ("min_r2", min_r2)))
    minor_pc, gain_pc = 100 * minor, 100 * ece_gain
    if isinstance(loss_share, bool) or not isinstance(loss_share, (int, float)) or not 0 <= loss_share < 1:
        raise ValueError(f"loss_share must be a number in [0, 1); got {loss_share!r}")
    keep = 1.0 - float(loss_share)

    def by_both(make):
        return Readings(by_log_loss=make("nll"), by_ECE=make("adaece"))

    def after_both(make):
        return Readings(after_TS=make("ts"), after_FTS=make("fts"))

    def acc(k):
        return AllOf(*(Gap(cell(k, "accuracy", "fts", by), cell(k, "accuracy", "ts", by), "<=", acc_tol)
                       for by in BY))

    def nll(k, post, by="nll"):
        return cell(k, "nll", post, by)

    def gains(metric, posts):
        other = "nll" if metric == "adaece" else "adaece"
        return lambda k: [(cell(k, metric, p, other), cell(k, metric, p, metric)) for p in posts]

    def trend(metric, post):
        return Steps(lambda a, b: Difference(cell(b, metric, post, "adaece"), cell(a, metric, post, "adaece"), "<"),
                     "most", probe=lambda k: cell(k, metric, post, "adaece"))

    focal3 = tuple(k for k in FOCAL if GAMMA_TR[k] <= 3)
    return (
        Claim("FTS improves (equal-mass) ECE over TS for every baseline model", "Sec. 5.2, Sec. 6, abstract",
              EachModel(lambda k: Difference(cell(k, "adaece", "fts", "adaece"), cell(k, "adaece", "ts", "adaece"),
                                             "<"), "every")),
        Claim("FTS keeps the accuracy of TS", "Sec. 5.2, Sec. 6 ('unchanged by design')",
              EachModel(acc, "every", probe=lambda k: cell(k, "accuracy", "ts", "adaece"))),
        Claim("FTS only occasionally and marginally loses to TS on log-loss", "Sec. 5.2, Sec. 6",
              AllOf(EachModel(lambda k: Difference(nll(k, "fts"), nll(k, "ts"), "<=", 0.0), keep),
                    EachModel(lambda k: Relative(nll(k, "fts"), nll(k, "ts"), "<=", minor_pc), "every"))),
        Claim("The optimal temperature decreases as gamma_tr grows", "Sec. 5.2",
              by_both(lambda by: Steps(lambda a, b: Difference(temperature(b, by), temperature(a, by), "<"), "most",
                                       probe=lambda k: temperature(k, by)))),
        Claim("Higher gamma_tr gives better ECE but worse accuracy", "Sec. 5.2",
              after_both(lambda post: AllOf(trend("adaece", post), trend("accuracy", post)))),
        Claim("Choosing the parameters by validation ECE gives an extra ~20 % relative ECE improvement",
              "Sec. 5.2", Readings(FTS=MeanGain(gains("adaece", ("fts",)), ">=", gain_pc),
                                   TS_and_FTS=MeanGain(gains("adaece", ("ts", "fts")), ">=", gain_pc))),
        Claim("For log-loss, choosing by validation log-loss gives a minor but consistent ~1 % improvement",
              "Sec. 5.2",
              Readings(**{name: AllOf(EachModel(lambda k, ps=posts: AllOf(*(Difference(a, b, ">=", 0.0)
                                                                            for a, b in gains("nll", ps)(k))),
                                                "every", probe=lambda k: cell(k, "nll", "fts", "adaece")),
                                      MeanGain(gains("nll", posts), "<=", minor_pc))
                          for name, posts in (("FTS", ("fts",)), ("TS_and_FTS", ("ts", "fts")))})),
        Claim("The optimal T is close to linear in gamma_ev for every model (Fig. 8)", "Sec. 5.2, Fig. 8, Sec. 6",
              Readings(T=EachModel(lambda k: Value(r2(k), ">=", min_r2), "every", FOCAL),
                       inverse_T=EachModel(lambda k: Value(r2(k, "inverse_T"), ">=", min_r2), "every", FOCAL))),
        Claim("The post-hoc temperature of focal-loss models is about 1", "Sec. 4.1",
              by_both(lambda by: EachModel(lambda k: near_one(temperature(k, by)), "most", focal3))),
    )


__all__ = ["definitions", "names", "cell", "temperature", "r2", "MODELS", "FOCAL", "BY", "Relative", "Gap", "Models",
           "EachModel", "Steps", "MeanGain"]
