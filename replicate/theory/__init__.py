"""Theory: every proposition of the five papers as an executable function.

Submodules, one per paper:

- :mod:`replicate.theory.focal` -- Mukhoti et al. 2020 (gradient factor, Lambert-W gamma,
  focal risk minimiser, the KL bound; one name space over ``focal_gradient``,
  ``focal_lambert``, ``focal_risk``, ``focal_autograd``), the linear-model experiment of
  Appendix G (``linear_experiment``), the claims (``focal_claims``) and figures
  (``focal_figures``).
- :mod:`replicate.theory.adafocal` -- Ghosh et al. 2022 (CalFocal loss shape, gamma
  dynamics), with ``adafocal_claims`` and ``adafocal_figures``.
- :mod:`replicate.theory.dual_focal` -- Tao et al. 2023 (phi, eta-under-confidence region).
- :mod:`replicate.theory.fcl` -- Liang et al. (focal calibration loss risk, post-processing gap).
- :mod:`replicate.theory.fts` -- Komisarenko & Kull 2024 (focal calibration map, temperature bounds).

The public names below are re-exported lazily from those submodules.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

_EXPORTS = {
    "focal_gradient_factor": "focal_gradient",
    "gradient_threshold": "focal_gradient",
    "gradient_shrink_threshold": "focal_gradient",
    "lambert_w_gamma": "focal_lambert",
    "focal_risk_minimizer": "focal_risk",
    "focal_calibration_map": "fts",
    "temperature_bounds": "fts",
    "dual_focal_phi": "dual_focal",
    "under_confidence_threshold": "dual_focal",
    "fcl_risk_minimizer": "fcl",
}
#: The core functions (the book's API reference documents these).
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'replicate.theory' has no attribute {name!r}")


def __dir__():
    subs = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return sorted(set(globals()) | set(_EXPORTS) | subs)
