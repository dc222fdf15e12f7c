"""The training engine: optimiser and schedule of the papers' protocol, resumable loop,
per-epoch diagnostics (the book's page "The authors' code"; Mukhoti et al. 2020, Appendix D).

Reach it as ``rp.training``; runs are normally trained through :mod:`replicate.runs`,
which builds data, model and loss from a configuration and stores the record.
"""
from .checkpoint import atomic_save, deterministic_mode
from .diagnostics import (GRAD_LOG10_EDGES, fc_weight_norm, grad_norm_histogram, last_layer_grad_norms,
                          norm_histogram, predict, split_summary)
from .engine import TrainingDiverged, TrainingPaused, TrainResult, TrainSettings, select_device, train
from .progress import Reporter, in_notebook
from .schedule import lr_at_epoch, make_optimizer, milestone_epochs
from .steps import ENGINES, MEMORY_FORMATS, choose_engine

__all__ = ["TrainSettings", "TrainResult", "TrainingDiverged", "TrainingPaused", "train", "ENGINES",
           "MEMORY_FORMATS", "choose_engine", "select_device", "lr_at_epoch",
           "milestone_epochs", "make_optimizer", "predict", "split_summary", "grad_norm_histogram",
           "last_layer_grad_norms", "norm_histogram", "fc_weight_norm", "GRAD_LOG10_EDGES", "atomic_save",
           "deterministic_mode", "Reporter", "in_notebook"]
