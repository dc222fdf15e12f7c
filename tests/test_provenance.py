"""Provenance tables against the installed distributions (importlib.metadata, platform)."""
from __future__ import annotations

import platform
from importlib import metadata

from replicate import provenance


def test_versions_frame_lists_the_installed_versions_sorted():
    frame = provenance.versions_frame()
    assert list(frame.columns) == ["package", "version"]
    assert list(frame.package) == sorted(frame.package)
    rows = dict(zip(frame.package, frame.version))
    assert rows["python"] == platform.python_version()
    for name in ("numpy", "pandas", "scipy"):
        assert rows[name] == metadata.version(name)
    assert "no-such-distribution-xyz" not in set(provenance.versions_frame(("no-such-distribution-xyz",)).package)
