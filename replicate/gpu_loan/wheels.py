"""The Python wheels the GPU job carries to the lent GPU machine (issue #20).

The machine's Python 3.12 holds PyTorch and the scientific stack but none of the Jupyter
stack, and it reaches no package index. Two things need what it lacks:

- the job itself: :func:`replicate.gpu_loan.queue.build` reads every chapter's parameters
  cell with jupytext (``runner.read_notebook``) - the ``job`` wheels;
- executing the Mukhoti chapter there (``replicate run exp_focal_loss --profile gpu``,
  :func:`replicate.gpu_loan.device_chapter.chapter_step`): papermill, an ipykernel kernel, myst_nb's
  glue - the ``chapter`` wheels;
- the 20 Newsgroups runs (queue step d): their word vectors are word2vec trained with
  gensim - the ``text`` wheels, carried with that data set's archive.

The pinned list is ``benchmarks/gpu_wheels.txt`` (:func:`read_list`). On the development
machine :func:`download` fetches the wheels for CPython 3.12 on manylinux x86-64 into
``.gpu-carry/wheels/`` (``replicate gpu-job --check-travel [--with-chapter]``), skipping
those already there, and :func:`unmet` lists the wheels' requirements that are neither
carried, nor on the GPU image, nor left out on purpose. On the machine :func:`install`
puts them into a ``--target`` folder (no index, no dependencies, once per set of wheels)
and :func:`activate` puts that folder first on ``sys.path`` and ``PYTHONPATH``, so the
job's worker processes and the chapter's kernel see them too; :func:`check_installed`
compares the carried wheels' requirements with what is installed there.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .travel import CARRY

LIST = Path("benchmarks") / "gpu_wheels.txt"
#: The carried folder, relative to the repository root (inside the git-ignored ``.gpu-carry/``).
CARRY_DIR = Path(CARRY) / "wheels"
TIERS = ("job", "chapter", "text")
#: The machine's interpreter and platform, as ``pip download`` names them.
PYTHON_VERSION = "3.12"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")
#: The environment markers of the machine (Requires-Dist lines are evaluated against it).
MACHINE_MARKERS = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
                   "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}
_MARKER = ".installed.json"


def normalize(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    """One carried wheel: distribution name, version, tier (one of :data:`TIERS`) and why."""

    name: str
    version: str
    tier: str
    why: str = ""

    @property
    def spec(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class WheelList:
    pins: tuple[Pin, ...]
    left_out: dict          # {normalized name: why}
    image: frozenset        # normalized names of the GPU image's packages

    def wanted(self, tiers=TIERS) -> list[Pin]:
        bad = [t for t in tiers if t not in TIERS]
        if bad:
            raise ValueError(f"wheel tiers must be among {', '.join(TIERS)}; got {bad}")
        return [p for p in self.pins if p.tier in tiers]


def read_list(path: Path | None = None) -> WheelList:
    """Parse ``benchmarks/gpu_wheels.txt``: sections ``[job]``, ``[chapter]`` and ``[text]`` of
    ``NAME==VERSION  # why`` lines, ``[left out]`` of ``NAME  # why`` and ``[image]`` of
    names; ``#`` starts a comment."""
    from .. import config

    path = Path(path) if path is not None else config.repo_root() / LIST
    pins, left_out, image, section = [], {}, set(), None
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        text, _, why = raw.partition("#")
        text, why = text.strip(), why.strip()
        if not text:
            continue
        if text.startswith("[") and text.endswith("]"):
            section = text[1:-1]
            if section not in (*TIERS, "left out", "image"):
                raise ValueError(f"{path}:{number}: unknown section [{section}]")
            continue
        if section in TIERS:
            name, sep, version = text.partition("==")
            if not sep or not name.strip() or not version.strip() or " " in version.strip():
                raise ValueError(f"{path}:{number}: expected NAME==VERSION, got {text!r}")
            pins.append(Pin(normalize(name.strip()), version.strip(), section, why))
        elif section == "left out":
            left_out[normalize(text)] = why
        elif section == "image":
            image.update(normalize(n) for n in text.split())
        else:
            raise ValueError(f"{path}:{number}: {text!r} outside a section")
    names = [p.name for p in pins]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{path}: listed more than once: {', '.join(twice)} (two versions stop the whole install)")
    return WheelList(tuple(pins), left_out, frozenset(image))


def wheel_id(path: Path) -> tuple[str, str]:
    """``(normalized name, version)`` of a wheel file, from its name."""
    parts = Path(path).name.split("-")
    return normalize(parts[0]), parts[1]


def fits_machine(path: Path) -> bool:
    """Whether the wheel file installs on the machine (CPython 3.12, manylinux x86-64)."""
    from packaging import tags
    from packaging.utils import parse_wheel_filename

    platforms = [*PLATFORMS, "any"]
    version = tuple(int(x) for x in PYTHON_VERSION.split("."))
    machine = {*tags.cpython_tags(python_version=version, abis=[f"cp{version[0]}{version[1]}", "abi3", "none"],
                                  platforms=PLATFORMS),
               *tags.compatible_tags(python_version=version, interpreter=f"cp{version[0]}{version[1]}",
                                     platforms=platforms)}
    try:
        return bool(parse_wheel_filename(Path(path).name)[3] & machine)
    except ValueError:
        return False


def carried(folder: Path) -> dict:
    """``{normalized name: Path}`` of the wheels in ``folder``."""
    folder = Path(folder)
    return {wheel_id(p)[0]: p for p in sorted(folder.glob("*.whl"))} if folder.is_dir() else {}


def tiers_carried(folder: Path, wheel_list: WheelList | None = None) -> tuple[str, ...]:
    """The tiers every pinned wheel of which (at its version) is in ``folder``."""
    wl = wheel_list or read_list()
    have = {wheel_id(p) for p in carried(folder).values()}
    return tuple(t for t in TIERS if all((p.name, p.version) in have for p in wl.wanted((t,))))


def tier_sizes(folder: Path, wheel_list: WheelList | None = None) -> dict:
    """``{tier: MiB}`` of the pinned wheels of each tier that are in ``folder``."""
    wl = wheel_list or read_list()
    files = {wheel_id(p): p for p in carried(folder).values()}
    out = {}
    for pin in wl.pins:
        path = files.get((pin.name, pin.version))
        if path is not None:
            out[pin.tier] = out.get(pin.tier, 0.0) + path.stat().st_size / 2**20
    return out


def download(folder: Path, tiers=("job",), python: str | None = None, wheel_list: WheelList | None = None,
             log=print) -> list[Path]:
    """Put the wheels of ``tiers`` into ``folder`` for the machine (CPython 3.12, manylinux
    x86-64, ``pip download --no-deps --only-binary=:all:``), skipping those already there,
    and remove every other wheel there (another version, another tier, a build for another
    Python or platform): one version of each, only what is asked for. Returns the wheels
    in ``folder``."""
    wl = wheel_list or read_list()
    want = wl.wanted(tiers)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    keep = {(p.name, p.version) for p in want}
    for path in folder.glob("*.whl"):
        if wheel_id(path) not in keep or not fits_machine(path):
            path.unlink()
    have = {wheel_id(p) for p in folder.glob("*.whl")}
    todo = [p for p in want if (p.name, p.version) not in have]
    if todo:
        cmd = [python or sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "--python-version", PYTHON_VERSION, "--implementation", "cp",
               *[a for plat in PLATFORMS for a in ("--platform", plat)], "-d", str(folder), *[p.spec for p in todo]]
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            tail = "\n".join(line for line in done.stderr.splitlines() if "WARNING" not in line)[-2000:]
            raise RuntimeError(f"pip download of {len(todo)} wheels failed (exit {done.returncode}):\n{tail}")
        log(f"wheels: downloaded {len(todo)} ({time.monotonic() - t0:.0f} s): {' '.join(p.spec for p in todo)}")
    got = {wheel_id(p) for p in folder.glob("*.whl")}
    lost = [p.spec for p in want if (p.name, p.version) not in got]
    if lost:
        raise RuntimeError(f"pip download did not produce {', '.join(lost)} in {folder}")
    return sorted(folder.glob("*.whl"))


def _requires(metadata: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]


def wheel_requires(path: Path) -> list[str]:
    """The Requires-Dist lines of a wheel file."""
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return _requires(zf.read(name).decode("utf-8", "replace"))


def _applies(req) -> bool:
    return req.marker is None or req.marker.evaluate(MACHINE_MARKERS)


def unmet(folder: Path, wheel_list: WheelList | None = None) -> dict:
    """The carried wheels' requirements (on the machine: Python 3.12, Linux x86-64, no
    extras) that the carried wheels do not meet: ``{"missing": [(wheel, requirement)],
    "version": [(wheel, requirement, carried version)], "image": {name: [wheel, ...]},
    "left_out": {name: [wheel, ...]}}``. ``image`` and ``left_out`` are met by the GPU
    image (versions checked on the machine, :func:`check_installed`) or left out on
    purpose; ``missing`` and ``version`` would break the install or the import."""
    from packaging.requirements import Requirement

    wl = wheel_list or read_list()
    wheels = carried(folder)
    versions = {n: wheel_id(p)[1] for n, p in wheels.items()}
    out = {"missing": [], "version": [], "image": {}, "left_out": {}}
    for name, path in wheels.items():
        for line in wheel_requires(path):
            req = Requirement(line)
            if not _applies(req):
                continue
            dep = normalize(req.name)
            if dep in versions:
                if req.specifier and not req.specifier.contains(versions[dep], prereleases=True):
                    out["version"].append((name, line, versions[dep]))
            elif dep in wl.image:
                out["image"].setdefault(dep, []).append(name)
            elif dep in wl.left_out:
                out["left_out"].setdefault(dep, []).append(name)
            else:
                out["missing"].append((name, line))
    return out


def _fingerprint(wheels) -> str:
    return hashlib.sha256("\n".join(sorted(p.name for p in wheels)).encode()).hexdigest()[:16]


def lacking(folder: Path) -> tuple[list[Path], list[Path]]:
    """``(to install, unusable)``: the wheels of ``folder`` whose distribution this Python
    lacks at the wheel's version, split into those that install here and those built for
    another Python or platform. On the machine that is every carried wheel; where the
    Jupyter stack is installed at the lock's versions (the development machine's .venv),
    none, so a rehearsal there changes nothing."""
    from importlib import metadata

    from packaging import tags
    from packaging.utils import parse_wheel_filename

    here = set(tags.sys_tags())
    todo, unusable = [], []
    for name, path in carried(folder).items():
        try:
            if metadata.version(name) == wheel_id(path)[1]:
                continue
        except metadata.PackageNotFoundError:
            pass
        (todo if parse_wheel_filename(path.name)[3] & here else unusable).append(path)
    return todo, unusable


def install(folder: Path, target: Path, python: str | None = None, timeout: float = 120.0, files=None) -> dict:
    """Install the wheels of ``folder`` (or only ``files``) into ``target`` (``pip install
    --no-index --no-deps --no-compile --target``), unless ``target`` already holds exactly
    this set. Returns ``{"wheels": n, "seconds": s, "installed": bool}`` (``installed``
    False when nothing was to do). Raises RuntimeError when pip fails."""
    wheels = sorted(Path(folder).glob("*.whl")) if Path(folder).is_dir() else []
    if files is not None:
        wheels = sorted(Path(f) for f in files)
    target = Path(target)
    if not wheels:
        return {"wheels": 0, "seconds": 0.0, "installed": False}
    marker = target / _MARKER
    stamp = _fingerprint(wheels)
    if marker.is_file() and json.loads(marker.read_text()).get("fingerprint") == stamp:
        return {"wheels": len(wheels), "seconds": 0.0, "installed": False}
    t0 = time.monotonic()
    cmd = [python or sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
           "--no-cache-dir", "--upgrade", "--disable-pip-version-check", "--target", str(target), *map(str, wheels)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        tail = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if "WARNING" not in line)[-2000:]
        raise RuntimeError(f"pip install of {len(wheels)} carried wheels failed (exit {done.returncode}):\n{tail}")
    marker.write_text(json.dumps({"fingerprint": stamp, "wheels": [p.name for p in wheels]}, indent=1))
    return {"wheels": len(wheels), "seconds": time.monotonic() - t0, "installed": True}


def activate(target: Path) -> None:
    """Put ``target`` first on this process's ``sys.path`` and on ``PYTHONPATH`` (for the
    processes it starts: the job's workers, the engine check, the chapter and its kernel)."""
    target = str(Path(target))
    if target not in sys.path:
        sys.path.insert(0, target)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != target]
    os.environ["PYTHONPATH"] = os.pathsep.join([target, *parts])
    importlib.invalidate_caches()


def check_installed(folder: Path, wheel_list: WheelList | None = None) -> list[str]:
    """On the machine, after :func:`activate`: the carried wheels' requirements that the
    installed distributions (carried or the image's) do not meet, one text each (the
    requirements left out on purpose are not checked)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    wl = wheel_list or read_list()
    problems = []
    for name, path in carried(folder).items():
        for line in wheel_requires(path):
            req = Requirement(line)
            if not _applies(req) or normalize(req.name) in wl.left_out:
                continue
            try:
                have = metadata.version(req.name)
            except metadata.PackageNotFoundError:
                problems.append(f"{name} needs {line}: not installed")
                continue
            if req.specifier and not req.specifier.contains(have, prereleases=True):
                problems.append(f"{name} needs {line}: {have} installed")
    return problems
