"""The experimental protocol: where the papers' public code differs from their text, the
networks of each profile, and the chapter's first experiment; :mod:`.authors_code` holds
the book's page of the authors' code's behaviours and defects, :mod:`.gpu_profile` the gpu
profile's pilot and the regime it aims at.

Deviations (:data:`DEVIATIONS`, :func:`deviations_frame`). Source: the authors' repositories
as summarised in the project's protocol notes (Mukhoti et al. wrote the base code; AdaFocal,
Dual Focal Loss and focal temperature scaling forked it). Each entry names the option of this
package that switches the behaviour, written as ``module.object:parameter``;
:func:`check_options` verifies that every named option exists, so this table cannot drift
from the code (it is run by the test-suite).

Networks (:func:`networks_frame`): every image network of :data:`replicate.models.MODELS`
with the settings and parameter count each profile trains it with.

The first experiment (:data:`FIRST_EXPERIMENT`, :func:`experiment_configs`,
:func:`train_or_load`, :func:`split_panels`, :func:`metrics_table`): a few losses trained
with per-epoch evaluation at one profile, read back from the run store.
"""
from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping

from .gpu_profile import (GPU_REGIME, gpu_pilot, gpu_regime, gpu_regime_text, pilot_cost_text,  # noqa: F401 - API
                          pilot_confidence_text, pilot_trend_text, protocol_text)

#: One row per deviation: topic, what the papers' text says, what their public code does,
#: this book's default, and the option that selects the other behaviour.
DEVIATIONS: tuple[dict, ...] = (
    {"topic": "Loss reduction",
     "text": "a per-sample loss, averaged implicitly",
     "code": "losses SUMMED over the batch (CE, focal, FLSD, AdaFocal, DFL); FCL uses the mean",
     "book": "as the code (sum; FCL mean), passed explicitly by every run; the library's default is the mean",
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
     "book": "as the code, passed explicitly (method='grid', metric='ece'); the library's default is Guo et "
             "al.'s continuous NLL fit",
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


def augmentation_text(profile: str) -> str:
    """One sentence: the profiles that augment (random crop and flip) as the reference code
    does, and whether ``profile`` does."""
    from ..profiles import PROFILES, get_profile

    prof = get_profile(profile)
    on = [p.name for p in PROFILES.values() if p.augment]
    off = [p.name for p in PROFILES.values() if not p.augment]
    both = (f"The profiles {', '.join(on)} augment as the reference code does"
            + (f"; {', '.join(off)} {'does' if len(off) == 1 else 'do'} not" if off else ""))
    here = ("so this chapter's runs (profile {p}) train on cropped and flipped images" if prof.augment else
            "so this chapter's runs (profile {p}) never see a cropped or flipped image (the profile's "
            "setting augment is off)").format(p=prof.name)
    return f"{both}, {here}."


# ----------------------------------------------------------------------------- networks
#: What each image network is (the registry :data:`replicate.models.MODELS`).
NETWORKS = {
    "tiny_cnn": "3 conv-BN-ReLU layers and a linear layer; not from the papers",
    "resnet8": "He et al.'s CIFAR ResNet-8 (option A)",
    "resnet20": "He et al.'s CIFAR ResNet-20 (option A)",
    "resnet18": "CIFAR basic-block ResNet [2, 2, 2, 2] (He et al. 2016): the gpu profile's network",
    "resnet50": "CIFAR bottleneck ResNet [3, 4, 6, 3] (He et al. 2016)",
    "resnet110": "the papers' 'ResNet-110': bottleneck blocks [3, 4, 26, 3]",
    "wide_resnet26_10": "Wide-ResNet-26-10, no dropout (Zagoruyko & Komodakis 2016)",
    "densenet121": "CIFAR DenseNet-121, growth 32 (Huang et al. 2017)",
}
#: Networks whose parameters are not counted at the smoke profile (building them takes seconds).
LARGE_NETWORKS = ("resnet18", "resnet50", "resnet110", "wide_resnet26_10", "densenet121")


def _settings(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"


def network_uses() -> list[tuple[str, dict, tuple[str, ...]]]:
    """``(network, model_params, profiles)`` for every image network of :data:`NETWORKS`: the
    profiles that train it with those keyword arguments (a profile's ``model_params`` apply to
    its default ``model`` only, as in :func:`replicate.runs.spec.resolve`); a network no
    profile trains appears once with ``{}`` and no profiles."""
    from ..profiles import PROFILES

    uses: dict[tuple[str, str], tuple[str, dict, list]] = {}
    for net in NETWORKS:
        for prof in PROFILES.values():
            if net in prof.models or net == prof.model:
                params = dict(prof.model_params) if net == prof.model else {}
                uses.setdefault((net, _settings(params)), (net, params, []))[2].append(prof.name)
        if not any(k[0] == net for k in uses):
            uses[(net, "defaults")] = (net, {}, [])
    return [(net, params, tuple(profs)) for net, params, profs in uses.values()]


def networks_frame(profile: str = "cpu", num_classes: int = 10):
    """The image networks (rows: network and settings) with their parameter count for
    ``num_classes`` classes, the profiles that train them and what they are. At ``profile``
    ``"smoke"`` the networks of :data:`LARGE_NETWORKS` are listed without being built (their
    count says so). Columns: network, settings, parameters, profiles, what."""
    import pandas as pd

    from ..models import count_parameters, get_model
    from ..profiles import get_profile

    get_profile(profile)                                  # one-line ValueError for a bad name
    rows = []
    for net, params, profs in network_uses():
        if profile == "smoke" and net in LARGE_NETWORKS:
            count = "(not built at profile smoke)"
        else:
            count = f"{count_parameters(get_model(net, num_classes=num_classes, **params)):,}"
        rows.append({"network": net, "settings": _settings(params), "parameters": count,
                     "profiles": ", ".join(profs) or "none (available)", "what": NETWORKS[net]})
    return pd.DataFrame(rows)


def profile_network(profile: str) -> str:
    """The default image network of ``profile`` with its settings, e.g. ``"tiny_cnn (width=32)"``."""
    from ..profiles import get_profile

    p = get_profile(profile)
    return p.model + (f" ({_settings(p.model_params)})" if p.model_params else "")


# ----------------------------------------------------------------------------- first experiment
#: The chapter's first experiment: label -> (loss, loss parameters).
FIRST_EXPERIMENT = {"cross-entropy": ("cross_entropy", {}), "focal (γ = 3)": ("focal", {"gamma": 3.0})}
#: Its learning curves: history column -> panel title.
LEARNING_CURVES = {"train/nll": "training NLL", "test/nll": "test NLL", "test/error": "test error",
                   "test/ece": "test ECE"}


def experiment_configs(methods: Mapping[str, tuple], dataset: str = "cifar10", profile: str = "cpu",
                       seed: int = 1) -> dict:
    """``label -> RunConfig`` for ``methods`` (``label -> (loss, loss parameters)``), each
    evaluated after every epoch (option ``eval_every_epoch``); validated before any data is read."""
    from ..runs import RunConfig

    if not isinstance(methods, Mapping) or not methods:
        raise ValueError("methods must be a non-empty mapping label -> (loss, loss parameters)")
    configs = {}
    for label, method in methods.items():
        if not (isinstance(method, tuple) and len(method) == 2 and isinstance(method[1], dict)):
            raise ValueError(f"methods[{label!r}] must be a pair (loss name, dict of loss parameters); "
                             f"got {method!r}")
        loss, params = method
        configs[label] = RunConfig(dataset=dataset, loss=loss, loss_params=params, profile=profile,
                                   seed=seed, options={"eval_every_epoch": True})
        configs[label].resolve()
    return configs


def train_or_load(methods: Mapping[str, tuple] = FIRST_EXPERIMENT, dataset: str = "cifar10",
                  profile: str = "cpu", seed: int = 1, store: str = "auto", log=print) -> dict:
    """``label -> Run`` of :func:`experiment_configs`: loaded when the run store holds the
    run, else trained (:func:`replicate.runs.get_or_train`); ``log`` (or None) gets one line
    per run."""
    from ..runs import get_or_train

    runs = {}
    for label, cfg in experiment_configs(methods, dataset, profile, seed).items():
        runs[label] = get_or_train(cfg, store=store)
        if log is not None:
            log(f"{label} -> {runs[label]}")
    return runs


def split_panels(runs: Mapping[str, object], split: str = "test") -> dict:
    """``label -> (probabilities, labels)`` from each run's stored logits of ``split`` ("val" or
    "test"), for :func:`replicate.plots.reliability_grid`."""
    from ..metrics import probs_from_logits

    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    panels = {}
    for label, run in runs.items():
        logits, labels = run.logits(split)
        panels[label] = (probs_from_logits(logits), labels)
    return panels


def metrics_table(runs: Mapping[str, object]):
    """One row per run: its recorded test error, test ECE and test ECE after temperature
    scaling, in percent. Columns: method, test error (%), test ECE (%), after TS (%)."""
    import pandas as pd

    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must be a non-empty mapping label -> Run")
    rows = [{"method": label, "test error (%)": 100 * r.metrics["test"]["error"],
             "test ECE (%)": 100 * r.metrics["test"]["ece"],
             "after TS (%)": 100 * r.metrics["test_ts"]["ece"]} for label, r in runs.items()]
    return pd.DataFrame(rows)


from . import authors_code  # noqa: E402 - the page of the authors' code's behaviours (reads DEVIATIONS above)
