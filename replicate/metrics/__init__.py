"""Calibration and accuracy metrics of the five papers (a package; the code is still all in
:mod:`replicate.metrics.binned`, whose docstring describes the inputs and the bins, and is
carved into modules by concept in the next commits)."""
from .binned import *  # noqa: F401,F403
from .binned import __all__, _log_softmax  # noqa: F401
