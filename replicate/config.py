"""Where things live: the repository root, the data directory, the run stores, and the
package's own source (:func:`source_hash`, what a result computed by this code is keyed by).

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
