"""Execute chapters with papermill and build the book.

A chapter's source is a MyST-markdown notebook ``notebooks/NAME.md``; the book reads
its executed copy ``book/chapters/NAME.ipynb`` (listed in ``_toc.yml``). Execution:

1. read the ``.md`` with jupytext (papermill cannot read MyST) into a NotebookNode;
2. validate the requested parameters against the chapter's ``parameters`` cell
   (names, types) and the profile against :mod:`replicate.profiles`, *before* any
   kernel starts;
3. execute with papermill, kernel ``python3``, working directory the repository root;
4. tag the injected-parameters cell ``hide-cell``, record provenance in
   ``metadata.replicate`` (commit, package hash, parameters, profile, device,
   versions, wall time, input hash) and write the notebook atomically.

A chapter whose input hash (source, package source, parameters) matches the executed
copy is skipped. The book is then built by ``jupyter-book build`` with execution off
and warnings as errors.

Which profile the book shows (``replicate book`` without ``--profile``, i.e. ``make
book``): an experiment chapter is executed at the largest profile of
:data:`BOOK_PROFILES` whose plan at the chapter's default parameters validates and has
every run in the committed ``results/`` store (:func:`showable_profile`), and at its own
default (``cpu``) otherwise - so the book shows ResNet-50 numbers wherever they were
committed, and never trains to show them. The choice is logged, and the executed
notebook's provenance (the reproducibility page) records the profile.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import config, provenance

CHAPTER_DIR = Path("book") / "chapters"
#: Profiles ``make book`` may show instead of a chapter's default, largest first.
BOOK_PROFILES = ("paper", "gpu")
SOURCE_DIR = Path("notebooks")
KERNEL = "python3"
BOOK_DIR_ENV = "REPLICATE_BOOK_DIR"


class ChapterError(RuntimeError):
    """A chapter failed to execute; the message names the chapter, cell and error."""


def quiet_kernel_manager():
    """The kernel manager papermill starts each chapter's kernel with: jupyter_client's
    ``AsyncKernelManager`` talking to the kernel over local IPC sockets (files in Jupyter's
    runtime folder, readable by this user only, removed at shutdown; TCP as before where
    that folder's path is too long for a socket) instead of TCP on 127.0.0.1, so the kernel
    has no reason to warn "Kernel is running over TCP without encryption", and not
    interrupting the kernel when it shuts it down (jupyter_client sends SIGINT first, which
    an idle kernel logs as "KeyboardInterrupt caught in kernel"); the shutdown request and,
    after a second, the kill are unchanged. Kernel messages that matter are kept."""
    import uuid

    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.paths import jupyter_runtime_dir

    class QuietKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            # an absolute socket path: the kernel runs in another folder than this process
            runtime = Path(jupyter_runtime_dir())
            base = runtime / f"kernel-{uuid.uuid4().hex[:12]}-ipc"
            if len(str(base)) < 96:              # a Unix socket path holds at most 107 bytes
                runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
                self.transport, self.ip = "ipc", str(base)

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return QuietKernelManager


@dataclass(frozen=True)
class Chapter:
    """One executable chapter: its name, MyST source and executed target."""

    name: str
    source: Path
    target: Path


# --------------------------------------------------------------------------- TOC
def _toc_files(node) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if key in node and isinstance(node[key], str):
                out.append(node[key])
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []) or []:
                out.extend(_toc_files(child))
    elif isinstance(node, list):
        for child in node:
            out.extend(_toc_files(child))
    return out


def toc_chapters(root: Path | None = None) -> list[Chapter]:
    """The executable chapters listed in ``_toc.yml``, in book order."""
    import yaml

    root = Path(root or config.repo_root())
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    chapters = []
    for entry in _toc_files(toc):
        path = Path(entry).with_suffix("")
        if path.parent != CHAPTER_DIR:
            continue
        source = root / SOURCE_DIR / f"{path.name}.md"
        if not source.exists():
            raise FileNotFoundError(f"_toc.yml lists {entry!r} but its source {source} does not exist")
        chapters.append(Chapter(path.name, source, root / CHAPTER_DIR / f"{path.name}.ipynb"))
    return chapters


def resolve_notebook(notebook: str | Path, root: Path | None = None) -> Path:
    """Accept ``notebooks/NAME.md``, ``NAME.md`` or ``NAME`` and return the source path."""
    root = Path(root or config.repo_root())
    p = Path(notebook)
    for cand in (p, root / p, root / SOURCE_DIR / p, root / SOURCE_DIR / f"{p.name}.md",
                 root / SOURCE_DIR / f"{p.stem}.md"):
        if cand.is_file():
            return cand.resolve()
    names = sorted(q.stem for q in (root / SOURCE_DIR).glob("*.md"))
    raise FileNotFoundError(f"notebook {str(notebook)!r} not found; chapters: {', '.join(names)}")


# -------------------------------------------------------------------- parameters
def read_notebook(source: Path):
    """Read a MyST-markdown chapter into a NotebookNode with kernel ``python3``."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
    return nb


def default_parameters(nb) -> dict:
    """Names and default values of the chapter's ``parameters`` cell (literal assignments)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            params = {}
            for stmt in ast.parse(cell.source).body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            try:
                                params[t.id] = ast.literal_eval(stmt.value)
                            except ValueError:
                                params[t.id] = None
            return params
    return {}


def parse_value(text: str):
    """Parse a CLI value: a Python literal when it is one (``3``, ``0.5``, ``[1, 2]``, ``True``), else a string."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _type_ok(value, default) -> bool:
    if default is None or value is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def validate_parameters(name: str, defaults: dict, given: dict, profile: str | None) -> dict:
    """Check names, types and the profile before anything executes; return the merged overrides."""
    from . import profiles

    merged = dict(given)
    if profile is not None:
        merged["profile"] = profile
    for key, value in merged.items():
        if key not in defaults:
            allowed = ", ".join(f"{k} ({type(v).__name__})" for k, v in defaults.items()) or "none"
            raise ValueError(f"chapter {name!r} has no parameter {key!r}; allowed parameters: {allowed}")
        if not _type_ok(value, defaults[key]):
            raise ValueError(f"chapter {name!r}: parameter {key!r} expects {type(defaults[key]).__name__} "
                             f"(default {defaults[key]!r}), got {value!r} ({type(value).__name__})")
    if "profile" in merged:
        profiles.get_profile(merged["profile"])  # ValueError listing the profiles
    return merged


# --------------------------------------------------------------------- execution
def input_hash(source: Path, parameters: dict) -> str:
    """Hash of everything a chapter's output depends on: its source, the package source, parameters."""
    h = hashlib.sha256()
    h.update(source.read_bytes())
    h.update(provenance.package_hash().encode())
    h.update(json.dumps(parameters, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _always_execute(nb) -> bool:
    return bool(nb.metadata.get("replicate", {}).get("always_execute", False))


def is_up_to_date(target: Path, digest: str) -> bool:
    """True when ``target`` exists and was produced from inputs with hash ``digest``."""
    if not target.exists():
        return False
    try:
        meta = json.loads(target.read_text()).get("metadata", {}).get("replicate", {})
    except (OSError, json.JSONDecodeError):
        return False
    return meta.get("input_hash") == digest


def _atomic_write_notebook(nb, target: Path) -> None:
    import nbformat

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            nbformat.write(nb, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _parameters(source: Path, parameters: dict | None, profile: str | None):
    """``(notebook, overrides, effective parameters)`` of a chapter, validated."""
    nb = read_notebook(source)
    defaults = default_parameters(nb)
    overrides = validate_parameters(Path(source).stem, defaults,
                                    {k: parse_value(v) for k, v in (parameters or {}).items()}, profile)
    return nb, overrides, {**defaults, **overrides}


def will_skip(source: Path, target: Path, parameters: dict | None = None, profile: str | None = None,
              force: bool = False) -> bool:
    """True when :func:`execute` would skip the chapter (its executed copy is up to date)."""
    nb, _, effective = _parameters(Path(source), parameters, profile)
    return not force and not _always_execute(nb) and is_up_to_date(Path(target), input_hash(Path(source), effective))


def data_needs(source: Path, parameters: dict | None = None, profile: str | None = None) -> dict:
    """The data sets the chapter ``source`` needs when executed with ``parameters`` at
    ``profile``, as ``{data set: (options, why)}`` for
    :func:`replicate.data.availability.require`; reads the run store, loads nothing.

    - the data sets named by the parameters the chapter lists in its metadata
      (``replicate: data_parameters: [dataset]``: a chapter that shows the data itself);
    - for a chapter that trains (:data:`replicate.experiments.CHAPTERS`), the data sets of
      the runs of its plan that no store holds (they would be trained), and of the runs it
      holds that record no data copy and are not CIFAR-10 (the chapter names their data by
      loading it, :func:`replicate.comparison.data_name`).
    """
    from . import experiments
    from .data.availability import needed_by_runs

    source = Path(source)
    name = source.stem
    nb, _, effective = _parameters(source, parameters, profile)
    out = {}
    for param in nb.metadata.get("replicate", {}).get("data_parameters", []):
        if param not in effective:
            raise ValueError(f"chapter {name!r} lists data parameter {param!r}, which is not one of its parameters: "
                             f"{', '.join(effective)}")
        out[effective[param]] = ({}, f"{name} (shows the data)")
    if name in experiments.CHAPTERS:
        allowed = set(experiments.plan_parameters(name))
        plan = experiments.chapter_plan(name, **{k: v for k, v in effective.items() if k in allowed})
        absent = plan.missing()
        for ds, (options, why) in needed_by_runs(absent.values(), name).items():
            out.setdefault(ds, (options, why))
        from .runs import find

        unnamed = [cfg for key, cfg in plan.configs().items() if key not in absent
                   and (run := find(cfg)) is not None and not run.data.get("name")]
        for ds, (options, _) in needed_by_runs(unnamed).items():
            out.setdefault(ds, (options, f"{name} (its runs record no data copy; it names it by loading the data)"))
    return out


def execute(source: Path, target: Path, parameters: dict | None = None, profile: str | None = None,
            force: bool = False, log=print) -> Path:
    """Execute one chapter into ``target``; return the path. Skips when inputs are unchanged."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    source, target = Path(source), Path(target)
    name = source.stem
    nb, overrides, effective = _parameters(source, parameters, profile)
    digest = input_hash(source, effective)
    if not force and not _always_execute(nb) and is_up_to_date(target, digest):
        log(f"[replicate] {name}: unchanged, skipped ({target})")
        return target
    log(f"[replicate] {name}: executing with {json.dumps(overrides, default=str)}")
    root = config.repo_root()
    start = time.perf_counter()
    try:
        out = papermill.execute_notebook(nb, None, parameters=overrides, kernel_name=KERNEL,
                                         progress_bar=False, log_output=False, cwd=str(root),
                                         kernel_manager_class=quiet_kernel_manager())
    except PapermillExecutionError as err:
        raise ChapterError(f"chapter {name!r} failed in cell {err.exec_count}: {err.ename}: {err.evalue}") from None
    wall = time.perf_counter() - start
    for cell in out.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "hide-cell" not in tags:
            cell.metadata["tags"] = [*tags, "hide-cell"]
    meta = dict(out.metadata.get("replicate", {}))
    meta.update(provenance.collect(effective.get("device") if effective.get("device") not in (None, "auto") else None))
    meta.update({"chapter": name, "source": str(source.relative_to(root)) if source.is_relative_to(root) else str(source),
                 "parameters": effective, "profile": effective.get("profile"), "input_hash": digest,
                 "wall_time_s": round(wall, 2)})
    out.metadata["replicate"] = meta
    _atomic_write_notebook(out, target)
    log(f"[replicate] {name}: done in {wall:.1f} s -> {target}")
    return target


# --------------------------------------------------------------------------- book
def default_output(source: Path, profile: str | None, parameters: dict) -> Path:
    """Where ``replicate run`` (and ``replicate sweep``) write an executed chapter by default:
    ``_build/executed/NAME[-PROFILE]-HASH.ipynb``, the hash of the profile and parameters."""
    tag = hashlib.sha256(json.dumps([profile, sorted(parameters.items())], default=str).encode()).hexdigest()[:8]
    suffix = f"-{profile}" if profile else ""
    return config.repo_root() / "_build" / "executed" / f"{Path(source).stem}{suffix}-{tag}.ipynb"


def _copy_book_sources(root: Path, workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, workdir / name)
    shutil.copytree(root / "book", workdir / "book", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("chapters"))


def showable_profile(source: Path, defaults: dict) -> tuple[str | None, str]:
    """The largest profile of :data:`BOOK_PROFILES` at which every run the chapter ``source``
    plans with ``defaults`` (its parameters cell) is in ``results/``, and why; ``(None,
    reason)`` when there is none or the chapter trains nothing. Reads the store only."""
    from . import experiments

    name = Path(source).stem
    if name not in experiments.CHAPTERS:
        return None, "trains nothing"
    allowed = set(experiments.plan_parameters(name))
    notes = []
    for prof in BOOK_PROFILES:
        params = {k: v for k, v in defaults.items() if k in allowed}
        params["profile"] = prof
        try:
            plan = experiments.chapter_plan(name, **params)
        except ValueError as err:
            notes.append(f"{prof}: plan does not validate ({err})")
            continue
        total, missing = len(plan.configs()), len(plan.missing("results"))
        if not missing:
            return prof, f"all {total} runs of profile {prof} are in results/"
        notes.append(f"{prof}: {total - missing}/{total} runs in results/")
    return None, "; ".join(notes)


def build(profile: str | None = None, workdir: Path | None = None, force: bool = False,
          strict: bool = True, log=print) -> Path:
    """Execute every chapter of ``_toc.yml`` and build the HTML book; return ``index.html``.

    With ``workdir`` the book sources are copied there and the executed chapters and the
    build go there too (used by the smoke test, so the checkout is left untouched).
    Without ``profile`` each experiment chapter shows the largest profile whose runs are
    all committed (:func:`showable_profile`), else its default.
    """
    root = config.repo_root()
    chapters = toc_chapters(root)
    if profile is not None:
        from . import profiles

        profiles.get_profile(profile)  # refuse an unknown profile before any chapter runs
    base = root
    if workdir is not None:
        base = Path(workdir).resolve()
        _copy_book_sources(root, base)
    os.environ[BOOK_DIR_ENV] = str(base)  # the reproducibility page reads the executed chapters here
    plan = []
    for ch in chapters:
        chosen = profile
        if profile is None:
            shown, why = showable_profile(ch.source, default_parameters(read_notebook(ch.source)))
            if shown is not None:
                chosen = shown
                log(f"[replicate] {ch.name}: showing profile {shown} ({why})")
            elif why != "trains nothing":
                log(f"[replicate] {ch.name}: showing its default profile ({why})")
        plan.append((ch, chosen, base / CHAPTER_DIR / f"{ch.name}.ipynb"))
    check_data([(ch.source, chosen) for ch, chosen, target in plan
                if not will_skip(ch.source, target, profile=chosen, force=force)], purpose="replicate book")
    for ch, chosen, target in plan:
        execute(ch.source, target, profile=chosen, force=force, log=log)
    return build_html(base, strict=strict, log=log)


def check_data(chapters, purpose: str = "replicate book", data_dir=None, probe=None) -> dict:
    """Before any of ``chapters`` (``(source, profile)`` pairs) executes: the data sets they
    need (:func:`data_needs`); ``FileNotFoundError``, one line for all, when any is missing
    and cannot be downloaded (:func:`replicate.data.availability.require`). Returns the
    needs (``{data set: (options, why)}``, the reasons of several chapters joined)."""
    from .data import availability

    needs: dict = {}
    for source, prof in chapters:
        for ds, (options, why) in data_needs(source, profile=prof).items():
            if ds in needs:
                needs[ds] = (needs[ds][0], f"{needs[ds][1]}, {why}")
            else:
                needs[ds] = (options, why)
    availability.require(needs, data_dir=data_dir, purpose=purpose,
                         **({"probe": probe} if probe is not None else {}))
    return needs


def build_html(base: Path, strict: bool = True, log=print) -> Path:
    """Run ``jupyter-book build`` on ``base`` with execution off (and ``-W`` when strict)."""
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(base), "--builder", "html"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    log(f"[replicate] building the book: jupyter-book {' '.join(cmd[1:])}")
    proc = subprocess.run(cmd, cwd=base, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
        raise ChapterError(f"jupyter-book build failed (exit {proc.returncode}):\n{tail}")
    index = base / "_build" / "html" / "index.html"
    log(f"[replicate] book built: {index}")
    return index


def provenance_table(root: Path | None = None):
    """One row per executed chapter: profile, device, wall time, commit, package hash, lock file
    digest (:func:`replicate.provenance.lock_digest`), executed at."""
    import pandas as pd

    root = Path(root or config.repo_root())
    base = Path(os.environ.get(BOOK_DIR_ENV, root))
    rows = []
    for ch in toc_chapters(root):
        target = base / CHAPTER_DIR / f"{ch.name}.ipynb"
        if not target.exists():
            continue
        meta = json.loads(target.read_text()).get("metadata", {}).get("replicate", {})
        if meta.get("always_execute"):
            continue  # pages such as this table itself, rebuilt every time
        commit = str(meta.get("commit", ""))
        short = commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")
        rows.append({"chapter": ch.name, "profile": meta.get("profile"), "device": meta.get("device"),
                     "wall time (s)": round(float(meta.get("wall_time_s", float("nan"))), 1), "commit": short,
                     "package hash": meta.get("package_hash"), "lock": meta.get("lock_sha256"),
                     "executed (UTC)": meta.get("timestamp")})
    return pd.DataFrame(rows)
