"""What the optional extras of the distribution bring, and the one-line error when one is missing.

The core install (``pip install focal-calibration``) holds the losses, metrics, post-hoc
calibration, theory functions and the run store. Plotting, the text data sets, parallel
sweeps and the book's toolchain need an extra (:data:`EXTRAS`). A module of this package that
imports a library of an extra that is not installed stops with :class:`MissingExtraError`,
one line naming the module, the library and the extra to install::

    replicate.plots needs matplotlib, which is not installed: it comes with the extra "book",
    pip install "focal-calibration[book]"

(one line, wrapped here). :func:`install` puts a finder at the end of ``sys.meta_path``
(``import replicate`` does it): it is asked only after every other finder has failed to find
a module, and it answers only for the top-level modules of :data:`EXTRAS` imported by a
module of this package, so no import that succeeds, and no import by another package,
changes. :class:`MissingExtraError` is a ``ModuleNotFoundError``: ``except ImportError``
still catches it.
"""
from __future__ import annotations

import sys

#: The distribution's name, as ``pip install`` spells it.
DISTRIBUTION = "focal-calibration"

#: ``{top-level module: (distribution that provides it, extra that installs it)}`` for every
#: library outside the core dependencies that a module of the package imports.
EXTRAS = {
    "matplotlib": ("matplotlib", "book"),
    "contourpy": ("contourpy", "book"),
    "seaborn": ("seaborn", "book"),
    "sympy": ("sympy", "book"),
    "relplot": ("relplot", "book"),
    "jupytext": ("jupytext", "book"),
    "papermill": ("papermill", "book"),
    "nbformat": ("nbformat", "book"),
    "jupyter_client": ("jupyter-client", "book"),
    "jupyter_core": ("jupyter-core", "book"),
    "IPython": ("ipython", "book"),
    "yaml": ("pyyaml", "book"),
    "myst_nb": ("myst-nb", "book"),
    "myst_parser": ("myst-parser", "book"),
    "markdown_it": ("markdown-it-py", "book"),
    "sphinx": ("sphinx", "book"),
    "docutils": ("docutils", "book"),
    "bs4": ("beautifulsoup4", "book"),
    "mathjax": ("django-static-mathjax", "book"),
    "packaging": ("packaging", "book"),
    "sklearn": ("scikit-learn", "text"),
    "gensim": ("gensim", "text"),
    "submitit": ("submitit", "sweep"),
    "numba": ("numba", "fast"),
    "playwright": ("playwright", "test"),
}


class MissingExtraError(ModuleNotFoundError):
    """A library of an extra is not installed. The message is one line: the module of the
    package that needs it, the library, and ``pip install "focal-calibration[EXTRA]"``."""


def message(module: str, needed_by: str = "this feature") -> str:
    """The one-line message for the missing library ``module`` (a top-level name of
    :data:`EXTRAS`) imported by ``needed_by`` (a module of the package).

    Parameters
    ----------
    module : str
        The missing top-level module, a key of :data:`EXTRAS`.
    needed_by : str
        The module of the package that imports it.

    Returns
    -------
    str
        One line naming ``needed_by``, the library and the extra to install.
    """
    if module not in EXTRAS:
        raise ValueError(f"module must be one of {', '.join(sorted(EXTRAS))}; got {module!r}")
    dist, extra = EXTRAS[module]
    what = module if dist.replace("-", "_").lower() == module.lower() else f"{dist} (module {module})"
    return (f"{needed_by} needs {what}, which is not installed: it comes with the extra \"{extra}\", "
            f"pip install \"{DISTRIBUTION}[{extra}]\"")


def _importer() -> str | None:
    """The module (``__name__``) whose code runs the import being resolved: the first frame
    above the import machinery; None when it cannot be told."""
    getframe = getattr(sys, "_getframe", None)
    if getframe is None:            # pragma: no cover - not CPython
        return None
    frame = getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<frozen importlib") or name.endswith(("importlib/__init__.py", __file__))):
            return frame.f_globals.get("__name__")
        frame = frame.f_back
    return None


class _Finder:
    """The last finder of ``sys.meta_path``: a library of :data:`EXTRAS` that no other finder
    found, imported by a module of this package, raises :class:`MissingExtraError`."""

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or fullname not in EXTRAS:
            return None                 # a submodule, or not a library of an extra: not ours to say
        who = _importer()
        if who is None or not (who == "replicate" or who.startswith("replicate.")):
            return None
        raise MissingExtraError(message(fullname, who), name=fullname)

    def invalidate_caches(self):
        pass


def install() -> None:
    """Append the finder of :class:`MissingExtraError` to ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


def uninstall() -> None:
    """Remove the finder (for tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
