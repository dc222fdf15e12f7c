"""replicate: the shared package of the executable book on focal-loss calibration.

Modules are named by concept; import the package once and reach them as attributes::

    import replicate as rp
    rp.metrics.ece(probs, labels)

Submodules are imported lazily so that ``import replicate`` stays fast and chapters that
need no torch-heavy code do not pay for it.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "config", "metrics", "posthoc", "theory", "data", "models", "losses", "training",
    "runs", "profiles", "plots", "paper_tables", "runner", "synthetic", "provenance",
)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'replicate' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
