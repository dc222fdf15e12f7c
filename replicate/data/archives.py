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
* A data directory holding the marker file :data:`GENERATED_MARKER` holds generated
  test data (:mod:`replicate.data.generated`): its fallback folder is its own (generated
  and real files never mix), nothing is ever downloaded into it, and ``data.load``
  labels what it reads "(generated test data)".
* Every error message here is one line naming the file, what it should be and where
  it comes from, so that the command line can print it as ``replicate: error: ...``.
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import shutil
import struct
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
GENERATED_MARKER = "GENERATED_TEST_DATA.txt"
#: What reading a truncated or corrupted tar/gzip/zip archive raises (gzip.BadGzipFile is an OSError).
ARCHIVE_ERRORS = (tarfile.TarError, EOFError, zlib.error, zipfile.BadZipFile, OSError)
#: What decoding a damaged data file may raise besides: pickle (CIFAR batches), scipy.io
#: (SVHN ``.mat``: OSError, ValueError, TypeError), missing keys or members, bad shapes.
DECODE_ERRORS = ARCHIVE_ERRORS + (pickle.UnpicklingError, ValueError, KeyError, IndexError, TypeError,
                                  AttributeError, struct.error, MemoryError, UnicodeDecodeError)


class DataArchiveError(RuntimeError):
    """A data file or archive is truncated, corrupted or incomplete (nothing was cached or extracted)."""


def root_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$REPLICATE_DATA``, else the default
    (:func:`replicate.config.data_dir`: ``data/`` in the checkout, or in the per-user folder)."""
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


def fallback_dir(root: Path) -> Path:
    """Where files for the data directory ``root`` go when it is read-only: ``cache_dir()/data``,
    or for a generated data directory a folder of its own below it (generated and real
    files never share a folder)."""
    base = config.cache_dir() / "data"
    if is_generated(root):
        return base / f"generated-{hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:12]}"
    return base


def writable_dir(root: Path) -> Path:
    """``root`` if it is (or can be made) a writable folder, else :func:`fallback_dir`."""
    try:
        if not root.exists():
            root.mkdir(parents=True, exist_ok=True)
        if is_writable(root):
            return root
    except OSError:
        pass
    fallback = fallback_dir(root)
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def is_generated(root: str | os.PathLike) -> bool:
    """True when ``root`` holds generated test data (the marker file :data:`GENERATED_MARKER`)."""
    return (Path(root) / GENERATED_MARKER).is_file()


def search_dirs(root: Path) -> list[Path]:
    """Folders searched for data files and decoded caches: the data directory, then
    :func:`fallback_dir` (where downloads, extractions and caches go when the data
    directory is read-only)."""
    dirs = [root, fallback_dir(root)]
    return [d for i, d in enumerate(dirs) if d not in dirs[:i]]


def find_first(root: Path, *relative: str) -> Path | None:
    """The first existing ``dir / rel`` over :func:`search_dirs` and the given relative paths."""
    for d in search_dirs(root):
        for rel in relative:
            if (d / rel).exists():
                return d / rel
    return None


def download_allowed(download: bool, root: Path | None = None) -> bool:
    """Downloads happen only when asked for, ``$REPLICATE_OFFLINE`` is not set and the data
    directory ``root`` does not hold generated test data."""
    return bool(download) and not os.environ.get(OFFLINE_ENV) and not (root is not None and is_generated(root))


def one_line(text) -> str:
    """``text`` with every run of whitespace (newlines included) made one space."""
    return re.sub(r"\s+", " ", str(text)).strip()


def missing_data_error(dataset: str, expected: list[str], root: Path, url: str,
                       note: str = "", lacking: str = "") -> FileNotFoundError:
    """A one-line FileNotFoundError naming the expected files, where to put them and their source.

    ``lacking`` says what was found incomplete (e.g. a folder without one of its files).
    """
    found = f"{lacking}; " if lacking else ""
    where = " or ".join(str(root / e) for e in expected)
    msg = (f"{dataset}: data not found: {found}expected {where}. Put the files in the data directory "
           f"{root} (or choose another folder with REPLICATE_DATA, --data-dir or data_dir=); "
           f"official source: {url}")
    if is_generated(root):
        msg += f" ({root} holds generated test data: nothing is downloaded into it)"
    if note:
        msg += f". {note}"
    return FileNotFoundError(one_line(msg))


def lacking_files(folder: Path | None, files) -> list[str]:
    """Names of ``files`` that are not regular files in ``folder`` (all of them if it is None)."""
    return [f for f in files if folder is None or not (folder / f).is_file()]


def archive_error(path: Path, exc: BaseException, url: str = "", what: str = "") -> DataArchiveError:
    """The one-line error for a data file that cannot be read: names the file, the low-level
    error, what the file should be (``what``) and where it comes from (``url``)."""
    msg = f"{path} is truncated, corrupted or unreadable ({type(exc).__name__}: {exc})"
    if what:
        msg += f"; it should be {what}"
    msg += "; nothing was cached or extracted. "
    msg += f"Download it again from {url}." if url else "Replace it with a complete copy."
    return DataArchiveError(one_line(msg))


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


def extract_tar_atomic(archive: Path, dest: Path, required: tuple[str, ...], url: str = "",
                       what: str = "") -> Path:
    """Extract ``archive`` so that ``dest`` appears complete or not at all.

    The archive is unpacked into a temporary folder beside ``dest`` (same file system),
    the ``required`` top-level entries are checked, and the folder is renamed to ``dest``.
    On any failure the temporary folder is removed and :class:`DataArchiveError` raised
    (``what``: what the archive should be, for the message). An existing non-empty
    ``dest`` (an earlier extraction that lost part of its content) is never overwritten:
    the error says to remove it.
    """
    if dest.is_dir() and any(dest.iterdir()):
        raise DataArchiveError(f"{dest} (extracted from {archive}) lacks some of {list(required)}; "
                               f"remove it so that the archive is extracted again.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.tmp-"))
    try:
        try:
            with tarfile.open(archive, "r:*") as tf:
                tf.extractall(tmp, filter="data")
        except ARCHIVE_ERRORS as exc:
            raise archive_error(archive, exc, url, what) from exc
        missing = [r for r in required if not (tmp / r).exists()]
        if missing:
            raise DataArchiveError(one_line(f"archive {archive} lacks {missing}; expected top-level entries "
                                            f"{list(required)}" + (f" ({what})" if what else "")
                                            + "; nothing was extracted."))
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
    image (torchvision's RuntimeError, PIL's OSError) or mixed sizes.
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
        try:
            arrays = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB")).transpose(2, 0, 1)
                      for b in blobs]
        except OSError as exc:  # PIL.UnidentifiedImageError and truncated files
            raise ValueError(f"undecodable image: {exc}") from exc
    except RuntimeError as exc:
        raise ValueError(f"undecodable image: {exc}") from exc
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"images of several sizes {sorted(shapes)}")
    return np.stack(arrays)
