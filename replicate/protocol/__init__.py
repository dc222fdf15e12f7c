"""The experimental protocol: where the papers' public code differs from their text, the
networks of each profile, the gpu profile's pilot, and the chapter's first experiment;
:mod:`.authors_code` holds the book's page of the authors' code's behaviours and defects.

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


def gpu_pilot():
    """The committed cross-entropy pilot of the ``gpu`` profile (issue #20): every finished
    ``gpu`` run of cross-entropy on CIFAR-10 at seed 1 in ``results/``, one row per
    (network, epochs), with test error, ECE (15 bins) before and after temperature
    scaling, T, training seconds, the device, and whether it is the profile's own setting.
    These runs chose the profile's network and length (:mod:`replicate.profiles`)."""
    import pandas as pd

    from .. import runs
    from ..profiles import get_profile

    gpu = get_profile("gpu")
    frame = runs.list_runs("results")
    pick = frame[(frame.profile == "gpu") & (frame.loss == "cross_entropy") & (frame.dataset == "cifar10")
                 & (frame.seed == 1)]
    rows = []
    for key in pick.key:
        run = runs.load(key, store="results")
        r, m = run.resolved, run.metrics["test"]
        rows.append({"network": r["model"], "epochs": r["train"]["epochs"], "test error": m["error"],
                     "ECE": m["ece"], "ECE after TS": run.metrics["test_ts"]["ece"], "T": run.temperature,
                     "train s": run.record.get("train_seconds"), "device": run.provenance.get("device", ""),
                     "profile's setting": r["model"] == gpu.model and r["train"]["epochs"] == gpu.epochs,
                     "key": key})
    columns = ["network", "epochs", "test error", "ECE", "ECE after TS", "T", "train s", "device",
               "profile's setting", "key"]
    return pd.DataFrame(rows, columns=columns).sort_values(["network", "epochs"], ignore_index=True)


#: The papers' regime the ``gpu`` profile aims its cross-entropy model at: test error at
#: most ``max_error`` and ECE (15 bins) before temperature scaling at least ``min_ece``.
#: Mukhoti et al. (2020) print 4.95 % error (Table 3) and 4.35 % ECE (Table 1) for their
#: CIFAR-10 ResNet-50; the bounds leave room for a shorter schedule.
GPU_REGIME = {"max_error": 0.08, "min_ece": 0.02}


def gpu_regime(pilot=None) -> dict:
    """The pilot (:func:`gpu_pilot`) read against :data:`GPU_REGIME` and the paper.

    Returns the profile's setting (``network``, ``epochs``, ``error``, ``ece``), whether it
    meets each bound (``error_ok``, ``ece_ok``), the paper's CIFAR-10 ResNet-50
    cross-entropy error and ECE as printed (Mukhoti et al. 2020, Tables 3 and 1:
    ``paper_error``, ``paper_ece``, in %), the ratio of the two errors, and the candidate
    with the lowest error (``best``: network, epochs, error, whether it meets the error
    bound, and the training seconds it took)."""
    from .. import paper_tables

    pilot = gpu_pilot() if pilot is None else pilot
    own = pilot[pilot["profile's setting"]]
    if len(own) != 1:
        raise ValueError(f"the pilot has {len(own)} runs of the gpu profile's own setting; expected 1")
    own = own.iloc[0]

    def paper(table: str, metric: str) -> float:
        t = paper_tables.get("mukhoti2020", table)
        cell = t[(t.dataset_key == "cifar10") & (t.model_key == "resnet50") & (t.method == "cross_entropy")
                 & (t.metric == metric) & ~t.temperature_scaled]
        return float(cell.value.iloc[0])

    best = pilot.loc[pilot["test error"].idxmin()]
    paper_error = paper("table3", "error")
    return {"network": own.network, "epochs": int(own.epochs), "error": float(own["test error"]),
            "ece": float(own.ECE), "error_ok": bool(own["test error"] <= GPU_REGIME["max_error"]),
            "ece_ok": bool(own.ECE >= GPU_REGIME["min_ece"]), "paper_error": paper_error,
            "paper_ece": paper("table1", "ece"), "error_ratio": float(100 * own["test error"] / paper_error),
            "best": {"network": best.network, "epochs": int(best.epochs), "error": float(best["test error"]),
                     "error_ok": bool(best["test error"] <= GPU_REGIME["max_error"]),
                     "train_s": float(best["train s"])}}


def gpu_regime_text(regime: dict) -> str:
    """One sentence saying which bound of :data:`GPU_REGIME` the profile's setting meets,
    from :func:`gpu_regime`'s dict, and, when it misses the error bound, how close the
    pilot's best candidate came."""
    err, ece = f"{100 * GPU_REGIME['max_error']:g} %", f"{100 * GPU_REGIME['min_ece']:g} %"
    ok, miss = [], []
    (ok if regime["ece_ok"] else miss).append(f"the ECE bound (at least {ece})")
    (ok if regime["error_ok"] else miss).append(f"the error bound (at most {err})")
    if not miss:
        return f"It meets both bounds we aimed for: {ok[1]} and {ok[0]}."
    head = (f"It meets {ok[0]} but not {miss[0]}" if ok
            else f"It meets neither {miss[0]} nor {miss[1]}")
    if regime["error_ok"]:
        return head + "."
    b = regime["best"]
    same = (b["network"], b["epochs"]) == (regime["network"], regime["epochs"])
    if same:
        return head + ": no candidate of the pilot came closer."
    return (head + f": the pilot's most accurate candidate, {b['network']} for {b['epochs']} epochs "
            f"({b['train_s'] / 60:.1f} min of training), reached {100 * b['error']:.1f} %"
            + ("." if b["error_ok"] else ", still above it."))


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
