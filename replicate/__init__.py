"""replicate: the shared package of the executable book on focal-loss calibration.

Modules are named by concept; import the package once and reach them as attributes::

    import replicate as rp
    rp.metrics.ece(probs, labels)

Submodules are imported lazily so that ``import replicate`` stays fast and chapters that
need no torch-heavy code do not pay for it.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

__version__ = "0.1.0"


def _submodules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def __getattr__(name: str):
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'replicate' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_submodules()))
