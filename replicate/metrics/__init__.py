"""Calibration and accuracy metrics of the five papers (a package; the binned ECE family and,
for now, ``evaluate`` are in :mod:`replicate.metrics.binned`, whose docstring
describes the inputs and the bins; carved into modules by concept in the next commits)."""
from ._inputs import _log_softmax, probs_from_logits  # noqa: F401
from .binned import (ReliabilityBins, adaptive_ece, classwise_ece, debiased_ece, ece, ece_sweep, evaluate, mce,
                     reliability_bins, rms_calibration_error)
from .scores import brier, error_rate, nll, ood_auroc, root_brier_lower_bound, root_brier_score, s99
from .smooth import smooth_ece

__all__ = [
    "ReliabilityBins", "probs_from_logits", "reliability_bins", "ece", "adaptive_ece",
    "classwise_ece", "mce", "rms_calibration_error", "nll", "brier", "root_brier_score",
    "root_brier_lower_bound", "error_rate",
    "smooth_ece", "debiased_ece", "ece_sweep", "s99", "ood_auroc", "evaluate",
]
