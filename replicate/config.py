"""Where things live: the package's checkout, the data directory, the run stores, and the
package's own source (:func:`source_hash`, what a result computed by this code is keyed by).

Each location is resolved, in order, from an explicit argument (the data directory only),
its environment variable (``REPLICATE_DATA``, ``REPLICATE_CACHE``, ``REPLICATE_RESULTS``)
and a default. The defaults depend on where the package lies:

* inside its own checkout (the folder holding ``_toc.yml`` above the package: a clone,
  an editable install), the book's layout: ``data/``, ``.cache/`` and ``results/`` at the
  checkout's root (:func:`checkout`);
* anywhere else (installed from a wheel), a per-user cache folder
  (:func:`user_dir`, platformdirs' ``user_cache_path("focal-calibration")``, e.g.
  ``~/.cache/focal-calibration`` on Linux) holding ``data/``, ``cache/`` and ``results/``:
  the library never writes into the folder it is run from.

Nothing in the package names any other location.
"""
from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "REPLICATE_DATA"
CACHE_ENV = "REPLICATE_CACHE"
RESULTS_ENV = "REPLICATE_RESULTS"
#: The distribution's name: the per-user folder's name (:func:`user_dir`).
APP_NAME = "focal-calibration"


def checkout() -> Path | None:
    """The package's own checkout: the folder above this package holding ``_toc.yml`` (a
    clone of the repository, or an editable install of it), or None when the package is
    installed elsewhere (a wheel in site-packages).

    Returns
    -------
    Path or None
        The checkout's root, or None.
    """
    here = Path(__file__).resolve().parent.parent
    return here if (here / "_toc.yml").is_file() else None


def repo_root() -> Path:
    """The repository root (:func:`checkout`); the current working directory when the
    package is installed outside a checkout (only the book's commands read it then, and
    they need a checkout's ``_toc.yml`` and ``notebooks/``; the stores and the data do not
    default to it, see :func:`default_dir`)."""
    return checkout() or Path.cwd()


def user_dir() -> Path:
    """The per-user cache folder of the package when it is installed outside its checkout:
    ``platformdirs.user_cache_path("focal-calibration")`` (``~/.cache/focal-calibration``
    on Linux, ``~/Library/Caches/focal-calibration`` on macOS, ``%LOCALAPPDATA%`` on
    Windows). Not created here: the first run or data set written creates it."""
    import platformdirs

    return Path(platformdirs.user_cache_path(APP_NAME, appauthor=False))


#: The default folder of each location: (inside the checkout, in :func:`user_dir`).
DEFAULTS = {"data": ("data", "data"), "cache": (".cache", "cache"), "results": ("results", "results")}


def default_dir(what: str) -> Path:
    """The default folder of ``what`` ("data", "cache" or "results") when its environment
    variable is unset: below the checkout (``data/``, ``.cache/``, ``results/``) when the
    package lies in one, else below :func:`user_dir` (``data/``, ``cache/``, ``results/``).

    Parameters
    ----------
    what : str
        One of :data:`DEFAULTS`.

    Returns
    -------
    Path
        The folder (not created).
    """
    if what not in DEFAULTS:
        raise ValueError(f"what must be one of {', '.join(DEFAULTS)}; got {what!r}")
    inside, outside = DEFAULTS[what]
    root = checkout()
    return root / inside if root is not None else user_dir() / outside


def _from_env(name: str, what: str) -> Path:
    env = os.environ.get(name)
    return Path(env).expanduser().resolve() if env else default_dir(what)


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path`` if given, else ``$REPLICATE_DATA``, else
    :func:`default_dir` ("data": ``<checkout>/data``, or ``data/`` in :func:`user_dir`)."""
    if path is not None:
        return Path(path).expanduser().resolve()
    return _from_env(DATA_ENV, "data")


def cache_dir() -> Path:
    """Local cache for runs not worth committing, checkpoints, kept reports and decoded
    data: ``$REPLICATE_CACHE``, else :func:`default_dir` ("cache": ``<checkout>/.cache``, or
    ``cache/`` in :func:`user_dir`)."""
    return _from_env(CACHE_ENV, "cache")


def results_dir() -> Path:
    """The results store (committed in the checkout): ``$REPLICATE_RESULTS``, else
    :func:`default_dir` ("results": ``<checkout>/results``, or ``results/`` in :func:`user_dir`)."""
    return _from_env(RESULTS_ENV, "results")


def source_hash() -> str:
    """SHA-256 (first 16 hex digits) over every ``*.py`` file of the ``replicate`` package:
    files in sorted order, each relative path hashed with its bytes, so the hash changes
    exactly when the package's source changes (:func:`replicate.provenance.package_hash`)."""
    import hashlib

    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]
