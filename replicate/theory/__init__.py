"""Theory: every proposition of the five papers as an executable function.

One folder per chapter, named as its notebook (``theory_<name>``); each holds the chapter's
core modules (named by concept), ``claims`` (the registered builder: every check of the
chapter, ``claims(profile)`` and ``report(profile)``) and ``figures``:

- :mod:`.focal_loss` -- Mukhoti et al. 2020: the gradient factor (``gradient``), the
  Lambert-W gamma (``lambert``), the focal risk minimiser and the KL bound (``risk``), Prop. 1
  by autograd (``autograd``), the linear-model experiment of Appendix G
  (``linear_experiment``); the package itself is one name space over them.
- :mod:`.adafocal` -- Ghosh et al. 2022: CalFocal's loss shape and the gamma dynamics
  (``dynamics``).
- :mod:`.dual_focal` -- Tao et al. 2023: phi, the under-confidence region and the risks
  (``loss``), the printed proof steps (``proofs``), the studies the chapter shows (``study``).
- :mod:`.fcl` -- Liang et al.: the focal calibration loss and its risk minimiser (``loss``),
  properness (``properness``), the post-processing gap and smooth calibration error
  (``postprocessing``), the studies (``study``).
- :mod:`.fts` -- Komisarenko & Kull 2024: the focal calibration map and temperature bounds
  (``calibration_map``), the bounds against temperature scaling (``bounds``), the closest
  temperatures and their fits (``fits``).

Shared by the chapters: :mod:`.report` (what a chapter's checks return), :mod:`._simplex`
(brute force over the probability simplex), :mod:`.curve_shape`. The public names below
are re-exported lazily from the chapters' modules.
"""
from __future__ import annotations

import importlib

from .. import lazy_submodules

_EXPORTS = {
    "focal_gradient_factor": "focal_loss.gradient",
    "gradient_threshold": "focal_loss.gradient",
    "gradient_shrink_threshold": "focal_loss.gradient",
    "lambert_w_gamma": "focal_loss.lambert",
    "focal_risk_minimizer": "focal_loss.risk",
    "focal_calibration_map": "fts.calibration_map",
    "temperature_bounds": "fts.calibration_map",
    "dual_focal_phi": "dual_focal.loss",
    "under_confidence_threshold": "dual_focal.loss",
    "fcl_risk_minimizer": "fcl.loss",
}
#: The core functions (the book's API reference documents these).
__all__ = list(_EXPORTS)
_submodule, __dir__ = lazy_submodules(__name__, __path__, _EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    return _submodule(name)
