"""Figures of the papers' experiments drawn from recorded runs, one module per paper
(:mod:`.adafocal`: Ghosh et al. 2022; :mod:`.dual_focal`: Tao et al. 2023; :mod:`.fcl`:
Liang et al., Focal Calibration Loss; :mod:`.leaderboard`: every method of the five papers
under one protocol). Mukhoti et al.'s figures are in
:mod:`replicate.training_plots`."""
from __future__ import annotations

import importlib
import importlib.util


def __getattr__(name: str):
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'replicate.figures' has no attribute {name!r}")
