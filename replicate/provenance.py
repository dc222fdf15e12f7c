"""Provenance: which code, packages and machine produced a result.

Every executed chapter and every training run records this dictionary, so each
number in the book can be traced to a commit, a hash of the ``replicate/`` source,
package versions and a device.
"""
from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

PACKAGES = ("torch", "torchvision", "numpy", "scipy", "pandas", "matplotlib", "seaborn",
            "scikit-learn", "papermill", "jupytext", "jupyter-book")


def package_hash() -> str:
    """SHA-256 (first 16 hex digits) over every ``*.py`` file of the ``replicate`` package.

    Files are visited in sorted order and their relative paths are hashed with their
    bytes, so the hash changes exactly when the package's source changes
    (:func:`replicate.config.source_hash`).
    """
    from .config import source_hash

    return source_hash()


def git_commit(cwd: str | Path | None = None) -> str:
    """The current git commit (with ``-dirty`` when the work tree differs), or ``unknown``."""
    cwd = cwd or Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def versions(packages=PACKAGES) -> dict[str, str]:
    """Installed versions of the packages that shape the results (missing ones omitted)."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def versions_frame(packages=PACKAGES):
    """:func:`versions` as a pandas DataFrame with columns ``package`` and ``version``, sorted
    by package name (the software table of the reproducibility chapter)."""
    import pandas as pd

    return pd.DataFrame(sorted(versions(packages).items()), columns=["package", "version"])


#: The lock file `make book` and `make test` install from (repository root; `make lock` writes it).
LOCK_FILE = "requirements.lock"


def lock_digest(root: str | Path | None = None) -> str | None:
    """SHA-256 (first 16 hex digits) of the repository's lock file, or None without one."""
    from . import config

    path = Path(root or config.repo_root()) / LOCK_FILE
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None


def lock_pins(root: str | Path | None = None) -> dict[str, str]:
    """``{package: version}`` of the lock file for this interpreter and platform (entries whose
    environment marker does not hold here are left out). Needs ``packaging`` (the book's extra)."""
    import re

    from packaging.markers import Marker
    from packaging.utils import canonicalize_name

    from . import config

    text = (Path(root or config.repo_root()) / LOCK_FILE).read_text().replace("\\\n", " ")
    pins = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)\s*(?:;\s*(.*?))?\s*(?:--hash|$)", line.strip())
        if m and (not m.group(3) or Marker(m.group(3)).evaluate()):
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def lock_report(root: str | Path | None = None) -> dict:
    """Which lock file this environment was installed from: its name, digest, the number of
    packages it pins here, and those installed at another version (or missing)."""
    pins = lock_pins(root)
    differ = {}
    for name, want in pins.items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have is None or have.split("+")[0] != want.split("+")[0]:
            differ[name] = {"locked": want, "installed": have}
    return {"lock_file": LOCK_FILE, "sha256": lock_digest(root), "packages": len(pins), "differ": differ}


def device_description(device: str | None = None) -> str:
    """A human-readable name of the compute device (``cpu (N threads)`` or the CUDA device name)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return "cpu"
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if str(dev).startswith("cuda") and torch.cuda.is_available():
        return f"{dev} ({torch.cuda.get_device_name(torch.device(dev))})"
    n = torch.get_num_threads()
    return f"cpu ({n} thread{'' if n == 1 else 's'}, {platform.machine()})"


def collect(device: str | None = None) -> dict:
    """Everything above in one JSON-serialisable dictionary, with a UTC timestamp."""
    return {
        "commit": git_commit(),
        "package_hash": package_hash(),
        "versions": versions(),
        "lock_sha256": lock_digest(),
        "device": device_description(device),
        "platform": platform.platform(),
        "python_executable": sys.executable,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
