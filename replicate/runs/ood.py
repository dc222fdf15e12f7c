"""Out-of-distribution sets evaluated when an image run finishes.

Runs keep no checkpoints, so everything a chapter will ask of a model must be computed
when it finishes. The OOD experiments of the papers (AdaFocal Table 10 and Fig. 6, Dual
Focal Loss Table 9, FCL's AUROC table) score a CIFAR model on its test set against a
shifted set by the entropy of its softmax. For every CIFAR-10/100 run the store records
the logits of:

``cifar10c_gaussian5``
    the run's own test images with Gaussian noise at severity 5 of CIFAR-10-C
    (scale 0.10 on the [0, 1] pixel scale, Hendrycks & Dietterich 2019; see
    :mod:`replicate.data.corruptions`), noise seed 0 - generated here, labelled so;
``svhn``
    the SVHN test set (a class-balanced subset of the run's test size), only when the
    SVHN files are in the data directory (never downloaded here).

Both pass through the in-distribution normalisation, as in the papers' code. Which sets a
run holds is in its record (``record["ood"]``); the set evaluated does not change how the
model was trained, so it is not part of the run's key.
"""
from __future__ import annotations

import numpy as np
import torch

#: OOD sets per in-distribution data set, in the order they are evaluated
OOD_SETS = {"cifar10": ("cifar10c_gaussian5", "svhn"), "cifar100": ("cifar10c_gaussian5", "svhn")}
SEVERITY, NOISE_SEED = 5, 0
_SVHN: dict = {}      # data directory -> loaded SVHN splits or None (absent), one load per process


def _gaussian(splits):
    from ..data.corruptions import gaussian_noise, noise_scale

    x = gaussian_noise(splits.test[0].numpy(), SEVERITY, seed=NOISE_SEED)
    return torch.from_numpy(x), splits.test[1], (
        f"the run's {len(x)} test images with Gaussian noise, CIFAR-10-C severity {SEVERITY} "
        f"(scale {noise_scale(SEVERITY):g}), noise seed {NOISE_SEED}; generated")


def _svhn(splits, resolved, data_dir):
    from .. import data
    from ..data.archives import DataArchiveError

    from ..config import data_dir as resolve_dir

    where = str(resolve_dir(data_dir))
    if where not in _SVHN:
        try:
            _SVHN[where] = data.load("svhn", data_dir=data_dir, download=False)
        except (FileNotFoundError, DataArchiveError, OSError):
            _SVHN[where] = None
    svhn = _SVHN[where]
    if svhn is None:
        return None
    n = len(splits.test[1])
    svhn = svhn.subset(None, None, n, seed=resolved.get("subset_seed", 0))
    return svhn.test[0], svhn.test[1], f"{len(svhn.test[1])} SVHN test images ({svhn.info.display_name})"


def ood_inputs(resolved: dict, splits, data_dir=None) -> dict:
    """``{name: (images, labels, description)}`` of the OOD sets of this run's data set."""
    out = {}
    for name in OOD_SETS.get(resolved["dataset"], ()):
        got = _gaussian(splits) if name == "cifar10c_gaussian5" else _svhn(splits, resolved, data_dir)
        if got is not None:
            out[name] = got
    return out


def ood_logits(model, resolved: dict, splits, data_dir=None) -> dict:
    """``{name: (logits float32 CPU tensor, labels, description)}`` of the finished ``model``
    on the OOD sets of its data set (empty for other data sets)."""
    from ..training.diagnostics import predict

    out = {}
    for name, (x, y, what) in ood_inputs(resolved, splits, data_dir).items():
        lg = predict(model, x, splits.info, split="test", precision=resolved["train"]["precision"])
        out[name] = (lg.cpu(), torch.as_tensor(y).long(), what)
    return out


def entropy_auroc(in_logits: np.ndarray, out_logits: np.ndarray, T: float = 1.0) -> float:
    """AUROC of softmax entropy separating OOD (positive) from in-distribution samples
    (:func:`replicate.metrics.ood_auroc`), at temperature ``T``."""
    from .. import metrics

    return metrics.ood_auroc(metrics.probs_from_logits(in_logits, T), metrics.probs_from_logits(out_logits, T))
