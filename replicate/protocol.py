"""Where the papers' public code differs from their text, and which choice this book makes.

Source: the authors' repositories as summarised in the project's protocol notes (Mukhoti et
al. wrote the base code; AdaFocal, Dual Focal Loss and focal temperature scaling forked it).
Each entry names the option of this package that switches the behaviour, written as
``module.object:parameter``; :func:`check_options` verifies that every named option exists,
so this table cannot drift from the code (it is run by the test-suite).
"""
from __future__ import annotations

import importlib
import inspect

#: One row per deviation: topic, what the papers' text says, what their public code does,
#: this book's default, and the option that selects the other behaviour.
DEVIATIONS: tuple[dict, ...] = (
    {"topic": "Loss reduction",
     "text": "a per-sample loss, averaged implicitly",
     "code": "losses SUMMED over the batch (CE, focal, FLSD, AdaFocal, DFL); FCL uses the mean",
     "book": "as the code (sum; FCL mean)",
     "option": "replicate.losses.base.CalibrationLoss:reduction"},
    {"topic": "Brier score",
     "text": "squared error between softmax and one-hot",
     "code": "per-batch MEAN of sum_k (p_k - y_k)^2, i.e. about 128x smaller steps than the summed losses",
     "book": "as the code",
     "option": "replicate.losses.base.CalibrationLoss:reduction"},
    {"topic": "MMCE",
     "text": "cross-entropy plus lambda x MMCE (Kumar et al. 2018)",
     "code": "N x (CE_mean + lambda x MMCE_weighted), the kernel sums normalised twice",
     "book": "as the code; Kumar's normalisation as an option",
     "option": "replicate.losses.standard.MMCE:normalization"},
    {"topic": "Gradient clipping",
     "text": "not mentioned",
     "code": "gradient norm clipped at 2 every step (Mukhoti, AdaFocal, DFL); none in FCL's code",
     "book": "clipping at 2 in every profile",
     "option": "replicate.profiles.Profile:clip_grad_norm"},
    {"topic": "Learning-rate decay points",
     "text": "x0.1 at epochs 150 and 250",
     "code": "scheduler stepped at the start of each epoch, so each decay lands one epoch early",
     "book": "early decay only in the `paper` profile; milestones as fractions elsewhere",
     "option": "replicate.profiles.Profile:lr_step_at_epoch_start"},
    {"topic": "Validation split",
     "text": "a held-out validation set of 5,000 images",
     "code": "numpy seed-1 permutation of the 50k; the first 5,000 validate (not stratified)",
     "book": "as the code",
     "option": "replicate.data.load:split"},
    {"topic": "Which model is evaluated",
     "text": "unspecified",
     "code": "the model after the LAST epoch, not the best on validation",
     "book": "last epoch (text CNN: best validation accuracy, as in Appendix D)",
     "option": "replicate.profiles.Profile:select"},
    {"topic": "AdaECE bins",
     "text": "equal-mass bins",
     "code": "edges by np.interp of the sorted confidences; (lower, upper] drops the minimum sample, ties give empty bins",
     "book": "every sample in exactly one bin; the code's quirks as an option",
     "option": "replicate.metrics.adaptive_ece:paper_compat"},
    {"topic": "Classwise-ECE",
     "text": "mean over classes of the per-class ECE",
     "code": "per-class (lower, upper] bins: a probability exactly 0 falls in no bin",
     "book": "0 in the first bin; the code's quirk as an option",
     "option": "replicate.metrics.classwise_ece:paper_compat"},
    {"topic": "Temperature grid",
     "text": "T by validation ECE (Mukhoti: grid 0-10 step 0.1; FTS text: 0.01-5 step 0.01)",
     "code": "T = 0.1..10.0 step 0.1 by validation ECE, ties keep the smaller T; FTS: 0.05..5.00 step 0.05",
     "book": "as the code",
     "option": "replicate.posthoc.fit_temperature:grid"},
    {"topic": "CIFAR-100 test normalisation",
     "text": "CIFAR statistics",
     "code": "the test loader normalises with ImageNet statistics (a bug)",
     "book": "correct statistics; the bug only on purpose",
     "option": "replicate.data.DatasetInfo:test_stats"},
    {"topic": "AdaFocal update",
     "text": "Eq. 4: gamma <- gamma x exp(lambda x gap), clipped at gamma_max",
     "code": "sign switch to inverse focal below |gamma| = 0.2, gamma in [-2, 20], training samples binned by p_true",
     "book": "the code's variant, named; the paper's as an option",
     "option": "replicate.losses.adaptive.AdaFocal:variant"},
    {"topic": "Label smoothing 0.05",
     "text": "a baseline in the tables",
     "code": "not implemented in Mukhoti's repository (numbers from released checkpoints)",
     "book": "standard (1 - eps) one-hot + eps / K",
     "option": "replicate.losses.standard.LabelSmoothing:smoothing"},
    {"topic": "ResNet-110",
     "text": "ResNet-110 (He et al. 2016)",
     "code": "the 4-stage bottleneck family with blocks [3, 4, 26, 3], not He et al.'s 3-stage network",
     "book": "as the code",
     "option": "replicate.models.MODELS:resnet110"},
    {"topic": "FCL protocol",
     "text": "standard train / validation / test protocol",
     "code": "trains on all 50k images, selects the checkpoint by TEST ECE, fits T on training data",
     "book": "not inherited: the common protocol above",
     "option": "replicate.losses.focal.FocalCalibration:brier_scale"},
)


def _resolve(path: str):
    module, _, attr = path.partition(":")[0].rpartition(".")
    obj = importlib.import_module(module)
    return getattr(obj, attr)


def check_options() -> list[str]:
    """The options of :data:`DEVIATIONS` that do not exist in the code (empty when all do)."""
    missing = []
    for row in DEVIATIONS:
        target, _, name = row["option"].partition(":")
        try:
            obj = _resolve(target)
        except (ImportError, AttributeError):
            missing.append(row["option"])
            continue
        if isinstance(obj, dict):
            ok = name in obj
        elif inspect.isclass(obj) and hasattr(obj, "__dataclass_fields__") and name in obj.__dataclass_fields__:
            ok = True
        else:
            try:
                ok = name in inspect.signature(obj).parameters or hasattr(obj, name)
            except (TypeError, ValueError):
                ok = hasattr(obj, name)
        if not ok:
            missing.append(row["option"])
    return missing


def deviations_frame():
    """:data:`DEVIATIONS` as a pandas DataFrame (for the protocol chapter)."""
    import pandas as pd

    return pd.DataFrame(list(DEVIATIONS)).rename(columns={
        "topic": "topic", "text": "papers' text", "code": "authors' public code",
        "book": "this book", "option": "option"})
