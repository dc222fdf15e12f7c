"""The leaderboard's claims: each paper's headline claim restated on the common protocol, its
one test (:mod:`replicate.claims.tests`) and the rows it covers
(:class:`replicate.claims.claim.Over`), in :func:`definitions`. :mod:`.report` decides them on
both sides - the paper's printed cells and our runs (every committed seed, within the noise
model of :mod:`replicate.comparison.noise`) - one registered builder per paper.

The rows, in the paper's and the chapter's words. Each headline is restated for the
leaderboard's one data set, CIFAR-10, and compared with the paper's row for that data set and
the network the papers train there, ResNet-50 (the row of Table 1 each paper's headline
comparison prints; the ``paper`` profile trains exactly that setting): every claim covers the
CIFAR-10 rows of a side, ``Over("every", datasets=("cifar10",))`` - our one row, and the
paper's CIFAR-10 ResNet-50 row of its Table 1 (:func:`.report.paper_side`).

- Mukhoti, Ghosh, Tao and Liang: "<method> has the lowest ECE of the methods of the paper's
  Table 1, before / after temperature scaling" - :class:`~replicate.claims.tests.Lowest` of
  the paper's method among every method its Table 1 prints in that row (our keys of them:
  :func:`headline_set`). The printed "AdaFocal" stands for both of our AdaFocal rules (the
  paper's Eq. 4 and its authors' code), so Ghosh's claim is read with each
  (:class:`~replicate.claims.tests.Readings`), the other rule left out of the rivals.
- Komisarenko & Kull, Sec. 5.2: focal temperature scaling "could noticeably improve ECE among
  all baseline models" - for every model of its Table 1 (our keys of its printed models but
  its AdaFocal, which is focal loss with gamma 1 in effect: :data:`.plan.EXCLUDED`), the ECE
  after FTS below the ECE after TS (a :class:`~replicate.claims.tests.Difference` per model,
  all of them counted by :class:`~replicate.claims.tests.Count`); and, beyond the paper, the
  same for every model of the leaderboard. The paper's "ECE" is equal-mass with 15 bins
  (AdaECE) and its TS and FTS choose T (and gamma_ev) by it on T = 0.01..5; ours is the ECE
  with 15 equal-width bins, both settings choosing by validation ECE on T = 0.1..10.0.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims.claim import Claim, Over
from ...claims.evidence import Cell
from ...claims.tests import Count, Difference, Lowest, Readings
from ...papers import get_paper
from .plan import EXCLUDED, FTS_PAPER, FTS_SETTING, HEADLINE, METHOD_KEYS

#: The rows every claim covers: the CIFAR-10 row of each side.
OVER = Over("every", datasets=("cifar10",))


def labels(methods=None) -> dict:
    """``{method key: label}`` of the catalogue (all methods by default): the short label, or
    the full one where two methods share a short label (the two AdaFocal rules)."""
    every = list(cmp.METHODS.values())
    shared = {m.short for m in every if sum(o.short == m.short for o in every) > 1}
    return {m.key: m.label if m.short in shared else m.short for m in (methods or every)}


def name(key: str) -> str:
    """The label of a method key (:func:`labels`); the key itself when unknown."""
    return labels().get(key, key)


def ours_of(printed) -> dict:
    """``{our key: printed key}`` of every catalogue method compared with one of the printed
    method keys ``printed`` (both AdaFocal rules for the printed "adafocal")."""
    printed = set(printed)
    return {m.key: m.compared_with for m in cmp.METHODS.values() if m.compared_with in printed}


def headline_set(paper: str) -> tuple[str, list[str]]:
    """The paper's method (printed key) and every printed method of its headline table
    (:data:`.plan.HEADLINE`) in its CIFAR-10 ResNet-50 row, pre-T ECE, in printed order."""
    own, table = HEADLINE[paper]
    ref = cmp.paper_reference("cifar10", "resnet50", paper)
    vals = cmp.paper_values(ref, ["ece"])
    rows = vals[(~vals.temperature_scaled.astype(bool)) & vals.tables.map(lambda t: table in t.split(", "))]
    return own, list(dict.fromkeys(rows.method))


def fts_models() -> list[str]:
    """Our keys of the models of the FTS paper's Table 1 (CIFAR-10 ResNet-50, its AdaFocal left out)."""
    vals = cmp.paper_values(cmp.paper_reference("cifar10", "resnet50", FTS_PAPER), ["adaece"], setting=FTS_SETTING)
    return list(ours_of(m for m in dict.fromkeys(vals.method) if m not in EXCLUDED.get(FTS_PAPER, ())))


def _lowest(paper: str, post: str):
    own, printed = headline_set(paper)
    keys = ours_of(printed)
    mine = [k for k, v in keys.items() if v == own]
    if not mine:
        raise ValueError(f"{paper}: none of our methods stands for its printed {own!r}")

    def one(k):
        rivals = [Cell(r, "ece", post) for r in keys if r not in mine]
        return Lowest(Cell(k, "ece", post), [Cell(k, "ece", post), *rivals])
    if len(mine) == 1:
        return one(mine[0])
    return Readings(**{name(k): one(k) for k in mine})


def _fts_below_ts(models) -> Count:
    return Count({name(k): Difference(Cell(k, "ece", "fts"), Cell(k, "ece", "ts"), "<") for k in models}, "every",
                 "models")


def definitions(paper: str, methods=METHOD_KEYS) -> tuple[Claim, ...]:
    """``paper``'s headline claims restated on the common protocol, each with its test
    (``methods``: the leaderboard's models, for the FTS claim beyond the paper)."""
    get_paper(paper)
    if paper == FTS_PAPER:
        return (Claim("FTS gives a lower ECE than TS for every model of the paper's Table 1", "Sec. 5.2, Sec. 6",
                      _fts_below_ts(fts_models()), OVER),
                Claim("FTS gives a lower ECE than TS for every model of the leaderboard", "(the book)",
                      _fts_below_ts([m.key for m in cmp.resolve_methods(methods)]), OVER, beyond=True))
    own = next(m.short for m in cmp.METHODS.values() if m.compared_with == HEADLINE[paper][0])
    return tuple(Claim(f"{own} has the lowest ECE of the methods of the paper's Table 1, {when} temperature scaling",
                       f"Table {HEADLINE[paper][1]}", _lowest(paper, post), OVER)
                 for post, when in (("none", "before"), ("ts", "after")))
