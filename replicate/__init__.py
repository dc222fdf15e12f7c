"""replicate: the shared package of the executable book on focal-loss calibration.

Modules are named by concept; import the package once and reach them as attributes::

    import replicate as rp
    rp.metrics.ece(probs, labels)

Submodules are imported lazily so that ``import replicate`` stays fast and chapters that
need no torch-heavy code do not pay for it. A module that needs a library of an optional
extra that is not installed (matplotlib for the plots, scikit-learn for the text data, ...)
stops with one line naming the extra to install (:mod:`replicate.extras`).
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from . import extras as _extras

__version__ = "0.1.0"
_extras.install()   # a missing library of an optional extra: one line naming the extra (replicate.extras)


def lazy_submodules(package: str, path, names=()):
    """``(__getattr__, __dir__)`` for the package ``package`` (its ``__name__``) at ``path``
    (its ``__path__``): a submodule is imported the first time it is reached as an
    attribute (``rp.experiments.adafocal.figures``), so importing a package stays cheap.
    ``names`` are further public names the package defines, listed by ``dir``."""

    def __getattr__(name: str):
        if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        subs = {m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_")}
        return sorted(set(names) | subs)

    return __getattr__, __dir__


__getattr__, _dir = lazy_submodules(__name__, __path__)


def __dir__():
    return sorted(set(globals()) | set(_dir()))
