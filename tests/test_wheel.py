"""The wheel (issue #31, item 5): built from the checkout, it holds every module and static
asset of the package and nothing else (no tests, results, notebooks, book pages), declares
the distribution's metadata (core dependencies, the extras, the ``replicate`` command), and,
unpacked outside the checkout, imports and keeps its stores in the per-user folder.

The wheel is built with pip (always in the environment) from a copy of the checkout, with
the build backend of the environment (``--no-build-isolation``: no network), so the
checkout itself gets no ``build/`` or ``*.egg-info``. ``make dist`` builds the sdist and the
wheel with ``python -m build`` and runs ``twine check`` on them.
"""
from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow      # a wheel built by pip: about 20 s

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "replicate"
#: Folders at the root of a checkout that are not sources (local or built), left out of the copy.
NOT_SOURCES = {".git", ".venv", "_build", "build", "dist", "data", ".cache", ".pytest_cache", ".gpu-carry",
               "gpu-out", ".twin", ".whl"}


def _package_files() -> set[str]:
    """Every file of the package in the checkout (modules and static assets), as the wheel names them."""
    return {str(p.relative_to(REPO)) for p in PACKAGE.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def _copy_checkout(dest: Path) -> Path:
    """The checkout's sources copied to ``dest`` (one committed run of ``results/``, so that the
    wheel is shown to leave the store out, not merely to find none)."""
    kept_run = next(p.name for p in sorted((REPO / "results" / "runs").iterdir()) if p.is_dir())

    def ignore(folder, names):
        here = Path(folder)
        out = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
        if here == REPO:
            out |= {n for n in names if n in NOT_SOURCES}
        if here == REPO / "results" / "runs":
            out |= {n for n in names if n != kept_run}
        return out

    shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = _copy_checkout(tmp / "src")
    assert (src / "tests").is_dir() and (src / "notebooks").is_dir() and any((src / "results" / "runs").iterdir())
    out = tmp / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--wheel-dir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    wheels = list(out.glob("focal_calibration-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_holds_every_module_and_static_asset_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    info = {n for n in names if n.split("/")[0].endswith(".dist-info")}
    package = names - info
    expected = _package_files()
    assert {n for n in expected if n.endswith(".py")} and {n for n in expected if "/static/" in n}
    assert sorted(expected - package) == []                         # every module and asset
    assert sorted(package - expected) == []                         # and nothing else
    assert all(n.startswith("replicate/") for n in package)
    for other in ("tests/", "results/", "notebooks/", "book/", "benchmarks/"):
        assert not any(n.startswith(other) for n in names), other
    assert {n.split("/", 1)[1] for n in info} >= {"METADATA", "WHEEL", "RECORD", "entry_points.txt"}


def test_the_wheel_declares_the_distribution(wheel):
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    z = zipfile.ZipFile(wheel)
    dist_info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.parser.Parser().parsestr(z.read(f"{dist_info}/METADATA").decode())
    assert (meta["Name"], meta["Version"]) == (project["name"], project["version"])
    requires = meta.get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    assert sorted(core) == sorted(project["dependencies"])          # platformdirs among them
    assert any(r.startswith("platformdirs") for r in core)
    assert set(meta.get_all("Provides-Extra")) == set(project["optional-dependencies"])
    entry_points = z.read(f"{dist_info}/entry_points.txt").decode()
    assert "[console_scripts]" in entry_points and "replicate = replicate.cli:main" in entry_points


def test_the_unpacked_wheel_imports_outside_the_checkout_and_keeps_to_the_user_folder(wheel, tmp_path):
    site, cwd = tmp_path / "site", tmp_path / "cwd"
    cwd.mkdir()
    zipfile.ZipFile(wheel).extractall(site)                         # a pure-Python wheel's install
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPLICATE_") and k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "xdg"), REPLICATE_OFFLINE="1")
    code = ("import replicate, replicate.config as c, replicate.book.tables as t, replicate.runs as r; "
            "print(replicate.__file__); print(c.checkout()); print(c.results_dir()); "
            "print(all((t.STATIC_DIR / n).is_file() for n in ('sortable/sortable.js', 'reader/tables.css'))); "
            "print(len(r.list_runs()))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, checkout, results, assets, n_runs = proc.stdout.split("\n")[:5]
    assert Path(where).is_relative_to(site)
    assert checkout == "None"
    if sys.platform.startswith("linux"):                            # platformdirs follows XDG there
        assert results == str(tmp_path / "xdg" / "focal-calibration" / "results")
    assert (assets, n_runs) == ("True", "0")
    assert list(cwd.iterdir()) == []
