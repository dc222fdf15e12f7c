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
- ``source``: links to the repository, commit, file and lines where the behaviour lives
  (``https://github.com/OWNER/REPO/blob/COMMIT/PATH#Lx-Ly``), or, where the project could not
  locate the code in a public repository, ``source_note`` says so (and why),
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

__all__ = ["Behaviour", "DEFECTS", "NOT_LOCATED", "SOURCES", "SOURCE_NOTES", "behaviours", "check_options",
           "check_sources", "frame", "github", "markdown"]

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

#: The public repositories read (owner/name, as GitHub spells it).
MUKHOTI = "torrvision/focal_calibration"
ADAFOCAL = "3mcloud/adafocal"
DFL = "Linwei94/ICML2023-DualFocalLoss"
FTS = "slavikkom/focal_temperature_scaling"


def github(repo: str, commit: str, path: str, first: int, last: int | None = None) -> str:
    """The permanent link to lines ``first``-``last`` of ``path`` in ``repo`` at ``commit``
    (a 40-hex SHA), e.g. ``https://github.com/o/r/blob/<sha>/f.py#L3-L5``."""
    lines = f"#L{first}" if last is None or last == first else f"#L{first}-L{last}"
    return f"https://github.com/{repo}/blob/{commit}/{path.replace(' ', '%20')}{lines}"


_M_LOSS = "1fd2aafde5965e0125ec1dff47d409240b2af9f7"      # torrvision Losses/loss.py
_M_8239 = "8239b9b2453b44f1d950143b7f8d3cce845c0cdf"      # torrvision data, nets, Brier, MMCE
_M_TRAIN = "0c2ae916683ed9dff07e146f5d5494cb2c888a3b"     # torrvision train.py
_M_UTILS = "987cfd1446818528926a7de6d3671944eefdcd0f"     # torrvision train_utils.py
_M_METRICS = "35efa40faa92ef911ce63d6b02446ecf3c87c448"   # torrvision Metrics/metrics.py
_M_TS = "1f582d34910758a273d850fcdfff606421c435db"        # torrvision temperature_scaling.py
_M_EVAL = "8129860c4e2fc73b6dcb46f65bab6a03f2bd0af2"      # torrvision evaluate_scripts/cifar10.sh
_A = "3e1a38d94194de8e572072c93e1034a273cf4b26"           # 3mcloud/adafocal (its one stored commit)
_D = "cb1ea6d1401db68534b93aae8d2412f573ba3c71"           # Linwei94/ICML2023-DualFocalLoss
_F = "7dbbd59a0a47fa9ceee57b2525bda7cae9fb418b"           # slavikkom/focal_temperature_scaling

#: Where each behaviour lives in the authors' public code, by topic: permanent links to the
#: lines (repository, commit, file, lines), read by the project in the stored copies of the
#: repositories. A topic missing here has a :data:`SOURCE_NOTES` entry instead.
SOURCES: dict[str, tuple[str, ...]] = {
    "Loss reduction": (
        github(MUKHOTI, "6f4c3c73adb07627c975c4ce3bd9df81dcf5ed05", "Losses/focal_loss.py", 30, 32),
        github(MUKHOTI, _M_LOSS, "Losses/loss.py", 18, 19)),
    "Brier score": (github(MUKHOTI, _M_8239, "Losses/brier_score.py", 23, 27),),
    "MMCE": (
        github(MUKHOTI, _M_UTILS, "train_utils.py", 47, 48),
        github(MUKHOTI, _M_LOSS, "Losses/loss.py", 37, 40),
        github(MUKHOTI, _M_8239, "Losses/mmce.py", 82, 83),
        github(MUKHOTI, _M_8239, "Losses/mmce.py", 135, 140)),
    "Gradient clipping": (
        github(MUKHOTI, _M_UTILS, "train_utils.py", 55, 56),
        github(ADAFOCAL, _A, "utils/train_utils.py", 28, 29),
        github(DFL, _D, "train_utils.py", 76, 77)),
    "Learning-rate decay points": (
        github(MUKHOTI, _M_TRAIN, "train.py", 235),
        github(MUKHOTI, _M_TRAIN, "train.py", 277, 278)),
    "Validation split": (
        github(MUKHOTI, _M_TRAIN, "train.py", 256, 261),
        github(MUKHOTI, _M_8239, "Data/cifar100.py", 84, 92)),
    "Which model is evaluated": (github(MUKHOTI, _M_EVAL, "evaluate_scripts/cifar10.sh", 3, 8),),
    "AdaECE bins": (github(MUKHOTI, _M_METRICS, "Metrics/metrics.py", 199, 221),),
    "Classwise-ECE": (github(MUKHOTI, _M_METRICS, "Metrics/metrics.py", 239, 245),),
    "Temperature grid": (
        github(MUKHOTI, _M_TS, "temperature_scaling.py", 69, 90),
        github(FTS, _F, "temperature_scaling.py", 123, 152)),
    "CIFAR-100 test normalisation": (github(MUKHOTI, _M_8239, "Data/cifar100.py", 143, 146),),
    "AdaFocal update": (
        github(ADAFOCAL, _A, "losses/adafocal.py", 33, 50),
        github(ADAFOCAL, _A, "losses/adafocal.py", 59, 72),
        github(ADAFOCAL, _A, "main.py", 53, 59)),
    "Label smoothing 0.05": (
        github(MUKHOTI, _M_TRAIN, "train.py", 25, 28),
        github(MUKHOTI, _M_EVAL, "evaluate_scripts/cifar10.sh", 73, 78)),
    "ResNet-110": (github(MUKHOTI, _M_8239, "Net/resnet.py", 119, 121),),
    "FTS's AdaFocal baseline": (github(FTS, _F, "Losses/loss.py", 46, 48),),
    "FTS's focal link overflow guard": (github(FTS, _F, "temperature_scaling.py", 29, 45),),
    "FTS's probability clamp": (github(FTS, _F, "temperature_scaling.py", 17, 19),),
    "AdaFocal's float32 validation bins": (github(ADAFOCAL, _A, "utils/metrics.py", 106, 127),),
    "AdaFocal's released main script": (github(ADAFOCAL, _A, "main.py", 104, 108),),
}
#: What the links show, where a reader needs more than the lines (by topic), and, for the
#: behaviours whose code the project could not locate in a public repository, that it could
#: not ("source not located ...") and what was found instead.
SOURCE_NOTES: dict[str, str] = {
    "Loss reduction": "the summing losses are Mukhoti et al.'s; the FCL authors' mean reduction: source not "
                      "located in a public repository",
    "MMCE": "the training loop multiplies the loss by the batch size; MMCE_weighted averages the kernel "
            "products (torch.mean) and then divides by m*m, n*n and m*n again",
    "Gradient clipping": "Mukhoti et al., AdaFocal, DFL; that FCL's code does not clip: source not located in a "
                         "public repository",
    "Learning-rate decay points": "MultiStepLR built with the milestones, then scheduler.step() as the first "
                                  "statement of each epoch",
    "Validation split": "random_seed=1 passed to the loader, which shuffles with np.random.seed and keeps the "
                        "first 10 % for validation (the CIFAR-100 loader shown)",
    "Which model is evaluated": "the evaluation scripts load the checkpoint saved after epoch 350",
    "Temperature grid": "Mukhoti et al.'s grid (strict '>' keeps the smaller T on ties), then the FTS authors' "
                        "grid of 0.05 steps",
    "AdaFocal update": "the update with its sign switch and clipping; the per-sample gamma by the bin of p_true; "
                       "the defaults gamma in [-2, 20] and switch point 0.2",
    "Label smoothing 0.05": "the image training script imports no smoothed loss, while the evaluation scripts "
                            "evaluate a cross_entropy_smoothed_smoothing_0.05 checkpoint (the repository's "
                            "Losses/cross_entropy_smoothed.py arrived with its NLP scripts)",
    "FTS's focal link overflow guard": "the argmax over all rows and the indexing with it; a later commit "
                                       "of the repository rewrote the guard",
    "AdaFocal's float32 validation bins": "torch.FloatTensor of the confidences, and the equal-mass edges "
                                          "from them",
    "AdaFocal's released main script": "torch.manual_seed(args.seed) runs before args is assigned, so the "
                                       "script stops with a NameError",
    "FCL's training protocol": "source not located in a public repository: the index of public code holds "
                               "EagleAdelaide/Focal-Calibration-Loss-FCL, a later self-adaptive FCL repository "
                               "whose training scripts keep a 5,000-image validation split, so it is not the "
                               "code these notes describe",
    "DFL's reported weights": "source not located in a public repository: the stored versions of the DFL "
                              "repository's README that the project read give no gamma per data set and "
                              "network",
}
#: The prefix of every note that says a source was not located.
NOT_LOCATED = "source not located in a public repository"


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
    source: tuple[str, ...] = ()
    source_note: str = ""


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
    import dataclasses

    rows = [_from_deviation(r) for r in DEVIATIONS if r["topic"] != "FCL protocol"] + list(DEFECTS)
    return [b if b.source or b.source_note else
            dataclasses.replace(b, source=SOURCES.get(b.topic, ()), source_note=SOURCE_NOTES.get(b.topic, ""))
            for b in rows]


def check_sources() -> list[str]:
    """The behaviours without a source: no link and no note saying it was not located, or a
    link that is not ``https://github.com/OWNER/REPO/blob/<40-hex commit>/PATH#Lx[-Ly]``
    (empty when every behaviour has one)."""
    import re

    form = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+#L\d+(-L\d+)?")
    bad = []
    for b in behaviours():
        if not b.source and NOT_LOCATED not in b.source_note:
            bad.append(f"{b.topic}: no source and no note that it was not located")
        bad += [f"{b.topic}: {url}" for url in b.source if not form.fullmatch(url)]
    return bad


def _source_text(b: Behaviour) -> str:
    """The links of ``b`` as MyST markdown (``repo path Lx-Ly``), followed by its note."""
    links = []
    for url in b.source:
        rest = url.removeprefix("https://github.com/")
        owner, repo, _, commit, path = rest.split("#")[0].split("/", 4)
        lines = url.rsplit("#", 1)[1].replace("L", "")
        links.append(f"[{owner}/{repo} `{path.replace('%20', ' ')}` lines {lines} @ {commit[:7]}]({url})")
    text = "; ".join(links)
    if b.source_note:
        text = f"{text} ({b.source_note})" if text else b.source_note
    return text


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
    was found, this book, option, source); ``defects`` True / False keeps only defects / departures."""
    import pandas as pd

    rows = [{"topic": b.topic, "papers": b.papers, "what the code does": b.what, "how it was found": b.found,
             "this book": b.book, "option that reproduces it": b.option or f"none: {b.why_not}",
             "source": "; ".join(b.source) or b.source_note}
            for b in behaviours() if defects is None or b.defect == defects]
    return pd.DataFrame(rows)


def markdown(defects: bool | None = None) -> str:
    """The behaviours as MyST markdown for a page of ``book/chapters/``: one entry per
    behaviour (what, how found, its source in the authors' code, the book's default, the option,
    where its effect is shown)."""
    out = []
    for b in behaviours():
        if defects is not None and b.defect != defects:
            continue
        option = f"`{b.option}`" if b.option else f"none ({b.why_not})"
        out.append(f"**{b.topic}** ({b.papers}).\n\n"
                   f"- *What the code does*: {b.what}.\n"
                   f"- *How it was found*: {b.found}.\n"
                   f"- *Source*: {_source_text(b)}.\n"
                   f"- *This book*: {b.book}.\n"
                   f"- *Option that reproduces it*: {option}.\n"
                   f"- *Shown in*: {_link(*b.shown)}.\n")
    return "\n".join(out)
