"""Where data files are found, where decoded arrays are cached, and safe archive handling.

* Data files are looked up in the data directory (``replicate.config.data_dir()``,
  environment variable ``REPLICATE_DATA``).
* Decoded arrays are cached as ``.npz`` files in the data directory when it is writable,
  else in ``replicate.config.cache_dir() / "data"`` (the data directory may be a
  read-only shared mount). Both places are searched when loading a cache.
* Every cache file is written atomically (temporary file in the same folder, then
  ``os.replace``), so an interrupted decode never leaves a half-written cache.
* Archives are extracted into a temporary folder next to the destination and renamed
  into place only when the extraction succeeded; a truncated or corrupted archive
  raises :class:`DataArchiveError` and leaves nothing behind.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .. import config

CACHE_VERSION = 1
OFFLINE_ENV = "REPLICATE_OFFLINE"
ARCHIVE_ERRORS = (tarfile.TarError, EOFError, zlib.error, zipfile.BadZipFile, OSError)


class DataArchiveError(RuntimeError):
    """A data archive is truncated or corrupted (nothing was cached or extracted)."""


def root_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$REPLICATE_DATA``, else ``<repo>/data``."""
    return config.data_dir(data_dir)


def is_writable(folder: Path) -> bool:
    """True when ``folder`` exists, is writable, and its mode has a write bit.

    The mode bits are honoured even for the super-user, so a folder marked read-only
    (e.g. a shared data mount, mode 0555) is never written into.
    """
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK) and bool(mode & 0o222)


def writable_dir(root: Path) -> Path:
    """``root`` if it is (or can be made) a writable folder, else ``cache_dir()/data``."""
    try:
        if not root.exists():
            root.mkdir(parents=True, exist_ok=True)
        if is_writable(root):
            return root
    except OSError:
        pass
    fallback = config.cache_dir() / "data"
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def search_dirs(root: Path) -> list[Path]:
    """Folders searched for data and caches: the data directory, then ``cache_dir()/data``."""
    dirs = [root, config.cache_dir() / "data"]
    return [d for i, d in enumerate(dirs) if d not in dirs[:i]]


def find_first(root: Path, *relative: str) -> Path | None:
    """The first existing ``dir / rel`` over :func:`search_dirs` and the given relative paths."""
    for d in search_dirs(root):
        for rel in relative:
            if (d / rel).exists():
                return d / rel
    return None


def download_allowed(download: bool) -> bool:
    """Downloads happen only when asked for and ``$REPLICATE_OFFLINE`` is not set."""
    return bool(download) and not os.environ.get(OFFLINE_ENV)


def missing_data_error(dataset: str, expected: list[str], root: Path, url: str,
                       note: str = "") -> FileNotFoundError:
    """A FileNotFoundError naming the expected files, where to put them and their source."""
    lines = [f"{dataset}: data not found. Expected one of:"]
    lines += [f"  - {root / e}" for e in expected]
    lines.append(f"Put the files in the data directory {root} (set REPLICATE_DATA or pass "
                 f"data_dir= to choose another folder). Official source: {url}")
    if note:
        lines.append(note)
    return FileNotFoundError("\n".join(lines))


def archive_error(path: Path, exc: BaseException, url: str = "") -> DataArchiveError:
    """The error raised for a truncated/corrupted archive."""
    hint = f" Download it again from {url}." if url else " Replace it with a complete copy."
    return DataArchiveError(f"archive {path} is truncated or corrupted ({type(exc).__name__}: "
                            f"{exc}); nothing was cached or extracted.{hint}")


def fingerprint(*paths: Path) -> str:
    """Identity of source files (name, size, mtime) plus the cache format version."""
    parts = [f"v{CACHE_VERSION}"]
    for p in paths:
        st = p.stat()
        parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def load_cached(root: Path, filename: str, key: str) -> dict[str, np.ndarray] | None:
    """Arrays of the first cache ``filename`` whose stored key equals ``key``, else None."""
    for d in search_dirs(root):
        path = d / filename
        if not path.is_file():
            continue
        try:
            with np.load(path, allow_pickle=False) as z:
                if str(z["__key__"]) != key:
                    continue
                return {k: z[k] for k in z.files if k != "__key__"}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            continue
    return None


def save_cached(root: Path, filename: str, key: str, arrays: dict[str, np.ndarray]) -> Path:
    """Write ``arrays`` (plus ``key``) to ``writable_dir(root)/filename`` atomically."""
    folder = writable_dir(root)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, __key__=np.array(key), **arrays)
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / filename)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return folder / filename


def extract_tar_atomic(archive: Path, dest: Path, required: tuple[str, ...], url: str = "") -> Path:
    """Extract ``archive`` so that ``dest`` appears complete or not at all.

    The archive is unpacked into a temporary folder beside ``dest`` (same file system),
    the ``required`` top-level entries are checked, and the folder is renamed to ``dest``.
    On any failure the temporary folder is removed and :class:`DataArchiveError` raised.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.tmp-"))
    try:
        try:
            with tarfile.open(archive, "r:*") as tf:
                tf.extractall(tmp, filter="data")
        except ARCHIVE_ERRORS as exc:
            raise archive_error(archive, exc, url) from exc
        missing = [r for r in required if not (tmp / r).exists()]
        if missing:
            raise DataArchiveError(f"archive {archive} lacks {missing}; expected top-level "
                                   f"entries {list(required)}.")
        os.chmod(tmp, 0o755)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def decode_images(blobs: list[bytes]) -> np.ndarray:
    """Decode JPEG byte strings to an N x 3 x H x W uint8 array (greyscale -> RGB).

    Uses ``torchvision.io.decode_jpeg`` on the whole list (one C++ call, libjpeg-turbo;
    about 0.05 ms per 32 x 32 image) when available, else PIL; both give identical
    pixels. All images must have the same size. Raises ValueError on an undecodable
    image or mixed sizes.
    """
    try:
        import torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torchvision >= 0.29 notice
            from torchvision.io import ImageReadMode, decode_jpeg
            imgs = decode_jpeg([torch.frombuffer(bytearray(b), dtype=torch.uint8) for b in blobs],
                               mode=ImageReadMode.RGB)
        arrays = [t.numpy() for t in imgs]
    except ImportError:
        from PIL import Image
        arrays = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB")).transpose(2, 0, 1)
                  for b in blobs]
    except RuntimeError as exc:
        raise ValueError(f"undecodable image: {exc}") from exc
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"images of several sizes {sorted(shapes)}")
    return np.stack(arrays)
