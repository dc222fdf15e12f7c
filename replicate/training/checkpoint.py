"""Atomic checkpoints, random-number-generator states and deterministic mode.

A checkpoint is written to a temporary file in the target's folder, flushed to disk and
moved over the target with :func:`os.replace`, which is atomic on POSIX and Windows: a
process killed at any moment leaves either the previous checkpoint or the new one, never
a torn file. Together with the saved generator states this makes a resumed run finish
exactly like an uninterrupted one.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import torch


def atomic_save(obj, path: str | os.PathLike) -> Path:
    """``torch.save(obj)`` to ``path`` atomically (temporary file, fsync, ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def load(path: str | os.PathLike):
    """Load a checkpoint written by :func:`atomic_save` onto the CPU (None if absent)."""
    path = Path(path)
    if not path.exists():
        return None
    return torch.load(path, map_location="cpu", weights_only=False)


def rng_state(generators: dict[str, torch.Generator], device: torch.device) -> dict:
    """States of the named generators, the global CPU generator and the CUDA generator in use."""
    out = {"generators": {k: g.get_state() for k, g in generators.items()},
           "torch": torch.get_rng_state()}
    if device.type == "cuda":
        out["cuda"] = torch.cuda.get_rng_state(device)
    return out


def set_rng_state(state: dict, generators: dict[str, torch.Generator], device: torch.device) -> None:
    """Restore what :func:`rng_state` saved."""
    for key, g in generators.items():
        g.set_state(state["generators"][key])
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


@contextlib.contextmanager
def deterministic_mode(enabled: bool = True):
    """Deterministic algorithms (and cuDNN settings) inside the block, restored afterwards.

    CPU kernels are deterministic for a fixed thread count, so a CPU run is bit-identical
    to its repetition. On CUDA the few operations without a deterministic kernel (e.g. the
    backward pass of adaptive average pooling) warn instead of failing (``warn_only``),
    and cuBLAS needs ``CUBLAS_WORKSPACE_CONFIG=:4096:8``, set here if absent (it must be in
    place before the process's first cuBLAS call).
    """
    if not enabled:
        yield
        return
    previous = (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
        torch.backends.cudnn.deterministic = previous[2]
        torch.backends.cudnn.benchmark = previous[3]
