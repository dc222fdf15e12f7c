"""CIFAR-10 and CIFAR-100 (Krizhevsky 2009) in the official format or the offline JPEG copy.

CIFAR-10 is searched for, in order:

1. the official python version, ``<data>/cifar-10-batches-py/`` (``data_batch_1..5``,
   ``test_batch``, ``batches.meta``; the layout ``torchvision.datasets.CIFAR10`` uses);
2. the offline JPEG image-folder archive ``<data>/cifar10-jpeg.tar.gz``
   (``cifar10-jpeg/{train,test}/<class>/NNNN.jpg``, quality 75). It is lossy, so its
   display name is "CIFAR-10 (JPEG q75)" and its numbers are not comparable to the
   official data set. Class folders are mapped to the official label order by name
   (airplane=0 ... truck=9), and images are ordered by (class, file name), which is not
   the official order, so the seed-1 validation split selects other images than the
   reference code does on the official files;
3. a download of the official archive with torchvision (when ``download`` is allowed);

and otherwise a FileNotFoundError says what to put where. CIFAR-100 is read from
``<data>/cifar-100-python/`` (``train``, ``test``, ``meta``) or downloaded.
Decoded arrays are cached as ``.npz`` (see :mod:`replicate.data.archives`).
"""
from __future__ import annotations

import pickle
import tarfile
from pathlib import Path

import numpy as np

from . import archives as ar

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")
CIFAR_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR_STD = (0.2023, 0.1994, 0.2010)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR100_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
CIFAR10_DIR = "cifar-10-batches-py"
CIFAR100_DIR = "cifar-100-python"
JPEG_ARCHIVE = "cifar10-jpeg.tar.gz"
CIFAR10_FILES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch", "batches.meta")
CIFAR100_FILES = ("train", "test", "meta")


CIFAR10_WHAT = "an official CIFAR-10 python batch (pickle) from cifar-10-python.tar.gz"
CIFAR100_WHAT = "an official CIFAR-100 python file (pickle) from cifar-100-python.tar.gz"
JPEG_WHAT = ("the offline CIFAR-10 JPEG q75 image-folder archive (gzip tar of "
             "cifar10-jpeg/{train,test}/<class>/NNNN.jpg, re-encoded from the official CIFAR-10, "
             f"{CIFAR10_URL})")


def _unpickle(path: Path, url: str = "", what: str = "") -> dict:
    """The dict of one official pickle file (bytes keys decoded); DataArchiveError if damaged."""
    try:
        with open(path, "rb") as f:
            d = pickle.load(f, encoding="bytes")
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in d.items()}
    except ar.DECODE_ERRORS as exc:
        raise ar.archive_error(path, exc, url, what) from exc


def _names(values) -> tuple[str, ...]:
    return tuple(v.decode() if isinstance(v, bytes) else str(v) for v in values)


def read_batches(folder: Path, files: list[str], label_key: str, url: str = "",
                 what: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Images (N x 3 x 32 x 32 uint8) and labels of official CIFAR pickle batches.

    Each batch row holds 1024 red, 1024 green, then 1024 blue values in row-major
    order, so a reshape to (N, 3, 32, 32) is the channel-first image. A damaged file
    raises :class:`DataArchiveError` naming it (``url``/``what`` complete the message).
    """
    xs, ys = [], []
    for name in files:
        d = _unpickle(folder / name, url, what)
        try:
            xs.append(np.asarray(d["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(d[label_key], dtype=np.int64))
            if len(xs[-1]) != len(ys[-1]):
                raise ValueError(f"{len(xs[-1])} images but {len(ys[-1])} labels")
        except ar.DECODE_ERRORS as exc:
            raise ar.archive_error(folder / name, exc, url, what) from exc
    return np.concatenate(xs), np.concatenate(ys)


def _official_cifar10(folder: Path) -> dict[str, np.ndarray]:
    xtr, ytr = read_batches(folder, [f"data_batch_{i}" for i in range(1, 6)], "labels", CIFAR10_URL, CIFAR10_WHAT)
    xte, yte = read_batches(folder, ["test_batch"], "labels", CIFAR10_URL, CIFAR10_WHAT)
    meta = _unpickle(folder / "batches.meta", CIFAR10_URL, CIFAR10_WHAT)
    names = _names(meta.get("label_names", ()))
    if names != CIFAR10_CLASSES:
        raise ar.DataArchiveError(f"{folder / 'batches.meta'} lists classes {names}, expected {CIFAR10_CLASSES} "
                                  f"(the official CIFAR-10 meta file, {CIFAR10_URL})")
    return {"x_train": xtr, "y_train": ytr, "x_test": xte, "y_test": yte}


def decode_jpeg_archive(archive: Path, classes: tuple[str, ...] = CIFAR10_CLASSES) -> dict[str, np.ndarray]:
    """Decode an image-folder archive ``<top>/{train,test}/<class>/<file>.jpg`` to arrays.

    Members are read in one streaming pass; images are ordered by (label, file name)
    and decoded in one batched call (:func:`archives.decode_images`). Labels follow
    ``classes`` by folder name; an unknown folder name, a missing split, or a truncated
    archive or JPEG raises an error.
    """
    entries: dict[str, list[tuple[int, str, bytes]]] = {"train": [], "test": []}
    index = {c: i for i, c in enumerate(classes)}
    try:
        with tarfile.open(archive, "r:gz") as tf:
            for m in tf:
                parts = m.name.split("/")
                if not m.isfile() or len(parts) != 4 or not parts[3].lower().endswith((".jpg", ".jpeg")):
                    continue
                _, split, cls, fname = parts
                if split not in entries:
                    continue
                if cls not in index:
                    raise ValueError(f"{archive}: class folder {cls!r} is not one of {classes}")
                entries[split].append((index[cls], fname, tf.extractfile(m).read()))
    except ar.ARCHIVE_ERRORS as exc:
        raise ar.archive_error(archive, exc, what=JPEG_WHAT) from exc
    out = {}
    for split, items in entries.items():
        if not items:
            raise ar.DataArchiveError(f"{archive}: no images under */{split}/<class>/; it should be {JPEG_WHAT}")
        items.sort(key=lambda t: (t[0], t[1]))
        try:
            out[f"x_{split}"] = ar.decode_images([b for _, _, b in items])
        except ValueError as exc:
            raise ar.archive_error(archive, exc, what=JPEG_WHAT) from exc
        out[f"y_{split}"] = np.array([t[0] for t in items], dtype=np.int64)
    return out


def _try_download(cls_name: str, root: Path) -> str:
    """Download with ``torchvision.datasets.<cls_name>``; '' on success, else the reason."""
    import torchvision
    try:
        getattr(torchvision.datasets, cls_name)(root=str(ar.writable_dir(root)), train=True,
                                                download=True)
    except (OSError, RuntimeError) as exc:
        return f" (The download failed: {type(exc).__name__}: {exc})"
    return ""


def _have(folder: Path | None, files) -> bool:
    return folder is not None and all((folder / f).is_file() for f in files)


def _lacking_note(folder: Path | None, files) -> str:
    """'<folder> lacks a, b' for a folder that exists but misses some files, else ''."""
    lacking = ar.lacking_files(folder, files) if folder is not None else []
    return f"{folder} lacks {', '.join(lacking)}" if lacking else ""


def load_cifar10(root: Path, download: bool, source: str = "auto") -> tuple[dict, dict]:
    """Arrays and provenance of CIFAR-10 (see module docstring for the search order).

    ``source``: ``"auto"`` (official, else JPEG archive, else download), ``"official"``
    or ``"jpeg"`` to insist on one of them. Returns (arrays, meta) where meta has
    ``source``, ``display_name`` and ``notes``.
    """
    allowed = ("auto", "official", "jpeg")
    if source not in allowed:
        raise ValueError(f"source must be one of {allowed}, got {source!r}")
    folder = ar.find_first(root, CIFAR10_DIR)
    jpeg = ar.find_first(root, JPEG_ARCHIVE)
    why = ""
    wants_official = source == "official" or (source == "auto" and jpeg is None)
    if wants_official and not _have(folder, CIFAR10_FILES) and ar.download_allowed(download, root):
        why = _try_download("CIFAR10", root)
        folder = ar.find_first(root, CIFAR10_DIR)
    if source in ("auto", "official") and _have(folder, CIFAR10_FILES):
        files = [folder / f for f in CIFAR10_FILES]
        key = ar.fingerprint(*files)
        arrays = ar.load_cached(root, "cifar10-official.npz", key)
        if arrays is None:
            arrays = _official_cifar10(folder)
            ar.save_cached(root, "cifar10-official.npz", key, arrays)
        return arrays, {"source": f"official python batches ({folder})", "display_name": "CIFAR-10",
                        "notes": ()}
    if source in ("auto", "jpeg") and jpeg is not None:
        key = ar.fingerprint(jpeg)
        arrays = ar.load_cached(root, "cifar10-jpeg.npz", key)
        if arrays is None:
            arrays = decode_jpeg_archive(jpeg)
            ar.save_cached(root, "cifar10-jpeg.npz", key, arrays)
        note = ("JPEG q75 re-encoding of CIFAR-10 (offline copy): lossy, not numerically "
                "comparable to official CIFAR-10; official train/test split, but images are "
                "ordered by (class, file), so the seed-1 validation split selects other images "
                "than the reference code")
        return arrays, {"source": f"JPEG image-folder archive ({jpeg})",
                        "display_name": "CIFAR-10 (JPEG q75)", "notes": (note,)}
    expected = []
    if source != "jpeg":
        expected.append(f"{CIFAR10_DIR}/{{{','.join(CIFAR10_FILES)}}}")
    if source != "official":
        expected.append(f"{JPEG_ARCHIVE} (offline JPEG copy, cifar10-jpeg/{{train,test}}/<class>/NNNN.jpg)")
    note = ("Extract the official archive so that cifar-10-batches-py/ sits in the data directory"
            if source != "jpeg" else "The JPEG copy is an offline re-encoding of the official data set")
    raise ar.missing_data_error("CIFAR-10", expected, root, CIFAR10_URL, note + why,
                                lacking=_lacking_note(folder, CIFAR10_FILES) if source != "jpeg" else "")


def load_cifar100(root: Path, download: bool) -> tuple[dict, dict]:
    """Arrays and provenance of CIFAR-100 (fine labels) from ``cifar-100-python/``."""
    folder = ar.find_first(root, CIFAR100_DIR)
    why = ""
    if not _have(folder, CIFAR100_FILES) and ar.download_allowed(download, root):
        why = _try_download("CIFAR100", root)
        folder = ar.find_first(root, CIFAR100_DIR)
    if not _have(folder, CIFAR100_FILES):
        raise ar.missing_data_error("CIFAR-100", [f"{CIFAR100_DIR}/{{train,test,meta}}"], root,
                                    CIFAR100_URL, "Extract the official archive so that "
                                    "cifar-100-python/ sits in the data directory" + why,
                                    lacking=_lacking_note(folder, CIFAR100_FILES))
    files = [folder / f for f in CIFAR100_FILES]
    key = ar.fingerprint(*files)
    arrays = ar.load_cached(root, "cifar100-official.npz", key)
    if arrays is None:
        xtr, ytr = read_batches(folder, ["train"], "fine_labels", CIFAR100_URL, CIFAR100_WHAT)
        xte, yte = read_batches(folder, ["test"], "fine_labels", CIFAR100_URL, CIFAR100_WHAT)
        meta = _unpickle(folder / "meta", CIFAR100_URL, CIFAR100_WHAT)
        if "fine_label_names" not in meta:
            raise ar.archive_error(folder / "meta", KeyError("fine_label_names"), CIFAR100_URL, CIFAR100_WHAT)
        classes = np.array(_names(meta["fine_label_names"]))
        arrays = {"x_train": xtr, "y_train": ytr, "x_test": xte, "y_test": yte, "classes": classes}
        ar.save_cached(root, "cifar100-official.npz", key, arrays)
    return arrays, {"source": f"official python batches ({folder})", "display_name": "CIFAR-100",
                    "notes": ()}
