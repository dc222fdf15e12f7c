"""The lock file (issue #23, item 6): ``make book`` and ``make test`` install the exact
versions of ``requirements.lock``; ``pyproject.toml`` keeps the loose ranges for library users.

The lock must still satisfy ``pyproject.toml`` (a dependency added to ``pyproject.toml``
without ``make lock`` fails here, not as an ImportError somewhere else), pin every package to
one version per environment, with hashes, and be what this environment was installed from
where ``make`` installed it.
"""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from replicate import provenance

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
SELF = "focal-calibration"


def lock_entries() -> list[tuple[str, Version, str, list[str]]]:
    """``(name, version, marker text, hashes)`` for every pinned entry of the lock."""
    text = LOCK.read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?:\s*;\s*(.*?))?\s+(--hash=.*)?$", line.strip() + " ")
        if m:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", m.group(4) or "")
            out.append((canonicalize_name(m.group(1)), Version(m.group(2)), (m.group(3) or "").strip(), hashes))
    return out


def pinned_here() -> dict[str, Version]:
    """The lock's version of each package for this interpreter and platform."""
    return {name: Version(v) for name, v in provenance.lock_pins(ROOT).items()}


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return [r for r in reqs if canonicalize_name(r.name) != SELF]


def test_every_locked_package_has_a_version_and_hashes():
    entries = lock_entries()
    assert len(entries) > 100
    assert all(hashes for *_, hashes in entries), [e[0] for e in entries if not e[3]]
    assert LOCK.read_text().count("make lock") >= 1  # how to regenerate it, in its header


def test_the_lock_satisfies_every_requirement_of_pyproject():
    pins, env = pinned_here(), default_environment()
    problems = []
    for req in project_requirements():
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        version = pins.get(canonicalize_name(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req} (lock: {version})")
    assert not problems, f"requirements.lock is stale (run make lock): {problems}"


def test_the_lock_pins_each_package_once_for_this_environment():
    env, seen = default_environment(), {}
    for name, version, marker, _ in lock_entries():
        if not marker or Requirement(f"x; {marker}").marker.evaluate(env):
            assert name not in seen, f"{name} pinned twice for this environment ({seen[name]}, {version})"
            seen[name] = version
    assert {n: v for n, v in seen.items()} == pinned_here()


def test_this_environment_was_installed_from_the_lock_when_make_installed_it():
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not the environment `make` installs from the lock (.venv) but {sys.prefix}")
    report = provenance.lock_report(ROOT)
    assert report["sha256"] and report["packages"] > 100
    assert not report["differ"], report["differ"]
