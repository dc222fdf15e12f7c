"""Where things live: the repository root, the data directory, the run stores.

The data directory is resolved, in order, from an explicit argument, the environment
variable ``REPLICATE_DATA``, and the default ``data/`` folder at the repository root
(git-ignored). Nothing in the package names any other location.
"""
from __future__ import annotations

import os
from pathlib import Path

DATA_ENV = "REPLICATE_DATA"
CACHE_ENV = "REPLICATE_CACHE"
RESULTS_ENV = "REPLICATE_RESULTS"


def repo_root() -> Path:
    """The repository root: the folder holding ``_toc.yml`` above this package.

    Falls back to the current working directory when the package is installed
    outside a checkout.
    """
    here = Path(__file__).resolve().parent.parent
    if (here / "_toc.yml").exists():
        return here
    return Path.cwd()


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path`` if given, else ``$REPLICATE_DATA``, else ``<repo>/data``."""
    if path is not None:
        return Path(path).expanduser().resolve()
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return repo_root() / "data"


def cache_dir() -> Path:
    """Local cache for runs not worth committing and decoded data: ``$REPLICATE_CACHE`` or ``<repo>/.cache``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser().resolve() if env else repo_root() / ".cache"


def results_dir() -> Path:
    """The committed results store: ``$REPLICATE_RESULTS`` or ``<repo>/results``."""
    env = os.environ.get(RESULTS_ENV)
    return Path(env).expanduser().resolve() if env else repo_root() / "results"
