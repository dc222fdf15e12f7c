"""What the papers' public code does that their text does not say, and its defects (issue #24,
item 6): the rows of the book's page *The authors' code: behaviours and defects*.

The five papers report numbers produced by code that differs from their text in ways that
move the numbers. The project read that code (Mukhoti et al.'s repository, which AdaFocal,
Dual Focal Loss and focal temperature scaling forked, and the FCL authors' code) and wrote
down what it does; this module is the book's copy of those notes, for readers who never see
the project's notes. Each :class:`Behaviour` says

- ``what`` the code does (and, for a defect, why it matters),
- ``found``: how it was found (reading which part of the code, or a cross-check on trained
  models),
- ``book``: what this book does by default,
- ``option``: the option of this package that reproduces the code's behaviour, written as
  ``module.object:parameter`` (empty where the behaviour is not reproduced; ``why_not``
  says why), and
- ``shown``: the chapter (and section) that shows its effect.

The behaviours where the code departs from the text are the protocol chapter's
:data:`replicate.protocol.DEVIATIONS` (one source); :data:`DEFECTS` adds the defects of the
public code. :func:`check_options` verifies that every named option exists (the test-suite
runs it), so the page cannot name an option the package does not have.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from . import DEVIATIONS

__all__ = ["Behaviour", "DEFECTS", "behaviours", "check_options", "frame", "markdown"]

#: How the behaviours of the protocol chapter's table were found.
_READ = "the project's reading of the authors' public code ({where})"
#: Where in the code each deviation of :data:`replicate.protocol.DEVIATIONS` sits (by topic).
_WHERE = {
    "Loss reduction": "the loss classes of Mukhoti et al.'s repository and its forks; FCL's training script",
    "Brier score": "Mukhoti et al.'s Brier loss",
    "MMCE": "Mukhoti et al.'s MMCE loss (after Kumar et al.)",
    "Gradient clipping": "the training loops of Mukhoti et al., AdaFocal and DFL; FCL's training script",
    "Learning-rate decay points": "Mukhoti et al.'s training loop, which steps the scheduler before each epoch",
    "Validation split": "Mukhoti et al.'s CIFAR data loaders",
    "Which model is evaluated": "Mukhoti et al.'s training and evaluation scripts",
    "AdaECE bins": "Mukhoti et al.'s Metrics/metrics.py, reused by AdaFocal, DFL and FCL",
    "Classwise-ECE": "Mukhoti et al.'s Metrics/metrics.py",
    "Temperature grid": "Mukhoti et al.'s temperature-scaling code and the FTS authors' search",
    "CIFAR-100 test normalisation": "Mukhoti et al.'s CIFAR-100 test loader",
    "AdaFocal update": "the AdaFocal authors' final code",
    "Label smoothing 0.05": "Mukhoti et al.'s repository (no such loss; the paper's numbers come from checkpoints)",
    "ResNet-110": "the network definitions of Mukhoti et al.'s repository",
    "FCL protocol": "the FCL authors' training script",
}
#: The chapter (and section) where each deviation's effect is shown, by topic.
_SHOWN = {
    "AdaFocal update": ("exp_adafocal", "The methods"),
    "AdaECE bins": ("measuring_calibration", "The estimators"),
    "Temperature grid": ("exp_fts", "Two temperature grids"),
    "FCL protocol": ("exp_fcl", "The methods"),
    "Learning-rate decay points": ("protocol", "Training loop and profiles"),
}


@dataclass(frozen=True)
class Behaviour:
    """One behaviour of the authors' code (see the module docstring)."""

    topic: str
    papers: str
    what: str
    found: str
    book: str
    option: str = ""
    why_not: str = ""
    shown: tuple[str, str] = ("protocol", "Where the code differs from the text")
    defect: bool = False


#: The defects of the public code: behaviours no paper describes that change or invalidate
#: a number (from the project's notes on the authors' code, "known defects").
DEFECTS: tuple[Behaviour, ...] = (
    Behaviour(
        topic="FTS's AdaFocal baseline", papers="Komisarenko & Kull (FTS)",
        what="the AdaFocal loss is rebuilt at every batch, so its per-bin gammas never leave their initial 1: "
             "the model the FTS paper calls AdaFocal is focal loss with gamma 1 in effect (which likely explains "
             "why that paper could not reproduce AdaFocal's ECE)",
        found="the project's reading of the FTS authors' training code",
        book="trains AdaFocal with both of its update rules and sets the FTS paper's AdaFocal row beside each, "
             "with this note; focal loss with gamma 1 (FL-1), which is what that baseline trained, is trained too",
        option="replicate.losses.focal.Focal:gamma",
        shown=("exp_fts", "The models"), defect=True),
    Behaviour(
        topic="FTS's focal link overflow guard", papers="Komisarenko & Kull (FTS)",
        what="the guard against overflow in multi_focal_link indexes p[rows, argmax] with an argmax taken over "
             "all rows, which broadcasts and overwrites the wrong entries; selection by validation log-loss then "
             "always picks the smallest T of the grid, and selection by equal-mass ECE often another T than the "
             "intended map would",
        found="the project's reading of the FTS authors' multi_focal_link, then a cross-check that fits both "
              "maps to trained models",
        book="computes the intended map; the authors' link, with its guard, is an option whose effect the "
             "chapter shows",
        option="replicate.posthoc.fit_focal_temperature:link",
        shown=("exp_fts", "The authors' focal link and its overflow guard"), defect=True),
    Behaviour(
        topic="FTS's probability clamp", papers="Komisarenko & Kull (FTS)",
        what="probabilities are clipped to [1e-12, 1 - 1e-12] before the focal map; for gamma_ev < 0 this moves "
             "calibrated probabilities by up to about 6e-4",
        found="the project's reading of the FTS authors' focal map",
        book="computes the map exactly; the clamp is an option",
        option="replicate.posthoc.fit_focal_temperature:clamp",
        shown=("exp_fts", "The authors' focal link and its overflow guard"), defect=True),
    Behaviour(
        topic="AdaFocal's float32 validation bins", papers="Ghosh et al. (AdaFocal)",
        what="validation confidences and the equal-mass bin edges are computed in float32; when many confidences "
             "saturate at 1.0 several top edges coincide, bins go empty and the gammas differ from a float64 "
             "computation",
        found="the project's reading of the AdaFocal authors' final code, step by step",
        book="float64 bins in which every sample falls in exactly one bin; the authors' bins are an option",
        option="replicate.losses.adaptive.AdaFocal:bin_rule",
        shown=("exp_adafocal", "The methods"), defect=True),
    Behaviour(
        topic="AdaFocal's released main script", papers="Ghosh et al. (AdaFocal)",
        what="the released training script fails at launch, so the paper's runs cannot be repeated from it",
        found="the project's reading of the AdaFocal authors' released code",
        book="implements the update from the paper and from the authors' final loss code, both named",
        why_not="a script that does not run has no behaviour to reproduce",
        shown=("exp_adafocal", "The methods"), defect=True),
    Behaviour(
        topic="FCL's training protocol", papers="Liang et al. (FCL)",
        what="trains on all 50,000 training images (no validation split), selects its checkpoint by the TEST ECE "
             "and fits the temperature on the training data",
        found="the project's reading of the FCL authors' training script",
        book="not inherited: FCL is trained and evaluated under the common protocol of every other method",
        why_not="selecting on the test set would make the test numbers meaningless",
        shown=("exp_fcl", "The methods"), defect=True),
    Behaviour(
        topic="DFL's reported weights", papers="Tao et al. (DFL)",
        what="the networks behind the paper's numbers come from a pipeline that is not released; the README gives "
             "a gamma per data set and network",
        found="the project's reading of the DFL authors' repository and README",
        book="trains DFL with the README's gamma for the network, or the catalogue's value for other networks",
        option="replicate.losses.dual.DUAL_FOCAL_GAMMAS:('cifar10', 'resnet50')",
        shown=("exp_dual_focal", "The methods"), defect=True),
)


def _from_deviation(row: dict) -> Behaviour:
    return Behaviour(topic=row["topic"], papers="Mukhoti et al. and the forks" if row["topic"] not in
                     ("AdaFocal update", "FCL protocol") else
                     ("Ghosh et al. (AdaFocal)" if row["topic"] == "AdaFocal update" else "Liang et al. (FCL)"),
                     what=row["code"] + f" (the text: {row['text']})",
                     found=_READ.format(where=_WHERE.get(row["topic"], "the authors' repositories")),
                     book=row["book"], option=row["option"],
                     shown=_SHOWN.get(row["topic"], ("protocol", "Where the code differs from the text")))


def behaviours() -> list[Behaviour]:
    """The departures of :data:`replicate.protocol.DEVIATIONS` (FCL's protocol row left to
    :data:`DEFECTS`, which covers it) followed by :data:`DEFECTS`."""
    return [_from_deviation(r) for r in DEVIATIONS if r["topic"] != "FCL protocol"] + list(DEFECTS)


def _resolve(path: str):
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _has(obj, name: str) -> bool:
    if isinstance(obj, dict):
        import ast

        try:
            return ast.literal_eval(name) in obj
        except (ValueError, SyntaxError):
            return name in obj
    if inspect.isclass(obj) and name in getattr(obj, "__dataclass_fields__", {}):
        return True
    try:
        return name in inspect.signature(obj).parameters or hasattr(obj, name)
    except (TypeError, ValueError):
        return hasattr(obj, name)


def check_options() -> list[str]:
    """The ``option`` of every behaviour that does not exist in the package (empty when all
    do), and every behaviour that names neither an option nor why it has none."""
    bad = []
    for b in behaviours():
        if not b.option:
            if not b.why_not:
                bad.append(f"{b.topic}: no option and no reason")
            continue
        target, _, name = b.option.partition(":")
        try:
            ok = _has(_resolve(target), name)
        except (ImportError, AttributeError):
            ok = False
        if not ok:
            bad.append(b.option)
    return bad


def _link(chapter: str, section: str) -> str:
    """A MyST link to ``section`` of ``chapter`` (the claims ledger's slugs: the strict build
    fails on a heading that does not exist)."""
    from ..claims.ledger import link

    return f"[{chapter} › {section}]({link(chapter, section)})"


def frame(defects: bool | None = None):
    """The behaviours as a pandas DataFrame (columns topic, papers, what the code does, how it
    was found, this book, option); ``defects`` True / False keeps only defects / departures."""
    import pandas as pd

    rows = [{"topic": b.topic, "papers": b.papers, "what the code does": b.what, "how it was found": b.found,
             "this book": b.book, "option that reproduces it": b.option or f"none: {b.why_not}"}
            for b in behaviours() if defects is None or b.defect == defects]
    return pd.DataFrame(rows)


def markdown(defects: bool | None = None) -> str:
    """The behaviours as MyST markdown for a page of ``book/chapters/``: one entry per
    behaviour (what, how found, the book's default, the option, where its effect is shown)."""
    out = []
    for b in behaviours():
        if defects is not None and b.defect != defects:
            continue
        option = f"`{b.option}`" if b.option else f"none ({b.why_not})"
        out.append(f"**{b.topic}** ({b.papers}).\n\n"
                   f"- *What the code does*: {b.what}.\n"
                   f"- *How it was found*: {b.found}.\n"
                   f"- *This book*: {b.book}.\n"
                   f"- *Option that reproduces it*: {option}.\n"
                   f"- *Shown in*: {_link(*b.shown)}.\n")
    return "\n".join(out)
