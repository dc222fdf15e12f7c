"""Executing one chapter with papermill (:func:`execute`).

The chapter is read and its parameters validated (:mod:`.chapters`), then executed with
papermill, kernel ``python3``, working directory the repository root; the
injected-parameters cell is tagged ``hide-cell``, provenance is recorded in
``metadata.replicate`` (commit, package hash, parameters, profile, device, versions, wall
time, input hash) and the notebook written atomically. A chapter whose input hash (source,
package source, parameters) matches the executed copy is skipped (:func:`will_skip`).
:func:`data_needs` names the data sets a chapter needs before it runs.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from .. import config, provenance
from .chapters import KERNEL, default_parameters, parse_value, read_notebook, validate_parameters


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
    from .. import experiments
    from ..data.availability import needed_by_runs

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
        from ..runs import find

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


def default_output(source: Path, profile: str | None, parameters: dict) -> Path:
    """Where ``replicate run`` (and ``replicate sweep``) write an executed chapter by default:
    ``_build/executed/NAME[-PROFILE]-HASH.ipynb``, the hash of the profile and parameters."""
    tag = hashlib.sha256(json.dumps([profile, sorted(parameters.items())], default=str).encode()).hexdigest()[:8]
    suffix = f"-{profile}" if profile else ""
    return config.repo_root() / "_build" / "executed" / f"{Path(source).stem}{suffix}-{tag}.ipynb"
