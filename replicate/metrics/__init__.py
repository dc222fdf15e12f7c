"""Calibration and accuracy metrics of the five papers (a package; the binned ECE family and,
for now, the scores and ``evaluate`` are in :mod:`replicate.metrics.binned`, whose docstring
describes the inputs and the bins; carved into modules by concept in the next commits)."""
from .binned import (ReliabilityBins, _log_softmax, adaptive_ece, brier, classwise_ece, debiased_ece,  # noqa: F401
                     ece, ece_sweep, error_rate, evaluate, mce, nll, ood_auroc, probs_from_logits,
                     reliability_bins, rms_calibration_error, root_brier_lower_bound, root_brier_score, s99)
from .smooth import smooth_ece

__all__ = [
    "ReliabilityBins", "probs_from_logits", "reliability_bins", "ece", "adaptive_ece",
    "classwise_ece", "mce", "rms_calibration_error", "nll", "brier", "root_brier_score",
    "root_brier_lower_bound", "error_rate",
    "smooth_ece", "debiased_ece", "ece_sweep", "s99", "ood_auroc", "evaluate",
]
