"""Tiny-ImageNet (200 classes, 64 x 64) from the official ``tiny-imagenet-200.zip``.

Official layout (read straight from the zip, or from the extracted folder)::

    tiny-imagenet-200/wnids.txt                 200 WordNet ids
    tiny-imagenet-200/words.txt                 wnid <TAB> names
    tiny-imagenet-200/train/<wnid>/images/<wnid>_<i>.JPEG     500 per class
    tiny-imagenet-200/val/images/val_<i>.JPEG                 10,000
    tiny-imagenet-200/val/val_annotations.txt   file <TAB> wnid <TAB> box
    tiny-imagenet-200/test/images/...           unlabelled (not used)

Labels are the indices of the *sorted* wnids (as Mukhoti et al.'s
``Data/tiny_imagenet.py``); some images are greyscale and are converted to RGB. As in
the papers' protocol the official validation set is the test set, and 50 training
images per class (10,000) are held out for validation (seeded, per class).
Normalisation uses the ImageNet statistics, as the reference loader.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from . import archives as ar

TINY_URL = "http://cs231n.stanford.edu/tiny-imagenet-200.zip"
TINY_ZIP = "tiny-imagenet-200.zip"
TINY_DIR = "tiny-imagenet-200"
TINY_WHAT = ("the official Tiny-ImageNet zip (tiny-imagenet-200/ with wnids.txt, words.txt, "
             "train/<wnid>/images/*.JPEG, val/images/*.JPEG and val/val_annotations.txt)")
TINY_FILES = ("wnids.txt", "words.txt", "val/val_annotations.txt")


class _Zip:
    def __init__(self, path: Path):
        self.zf = zipfile.ZipFile(path)
        self.names = self.zf.namelist()

    def read(self, rel: str) -> bytes:
        return self.zf.read(f"{TINY_DIR}/{rel}")

    def files(self, prefix: str) -> list[str]:
        p = f"{TINY_DIR}/{prefix}"
        return [n[len(TINY_DIR) + 1:] for n in self.names if n.startswith(p) and not n.endswith("/")]


class _Folder:
    def __init__(self, path: Path):
        self.path = path

    def read(self, rel: str) -> bytes:
        return (self.path / rel).read_bytes()

    def files(self, prefix: str) -> list[str]:
        return sorted(str(p.relative_to(self.path)).replace("\\", "/")
                      for p in (self.path / prefix).rglob("*") if p.is_file())


def read_tiny_imagenet(src) -> dict[str, np.ndarray]:
    """Decode train and val (as test) of a zip or folder source to arrays.

    Errors (a missing member, an unknown wnid, an undecodable image) propagate as
    KeyError, ValueError, OSError ...; :func:`load_tiny_imagenet` turns them into
    :class:`DataArchiveError` naming the zip or folder.
    """
    wnids = sorted(w.strip() for w in src.read("wnids.txt").decode().split() if w.strip())
    index = {w: i for i, w in enumerate(wnids)}
    words = {}
    for line in src.read("words.txt").decode("utf-8", "replace").splitlines():
        if "\t" in line:
            w, names = line.split("\t", 1)
            words[w] = names.split(",")[0].strip()
    train = sorted(r for r in src.files("train/") if r.lower().endswith(".jpeg") and "/images/" in r)
    ytr = np.array([index[r.split("/")[1]] for r in train], dtype=np.int64)
    ann = {}
    for line in src.read("val/val_annotations.txt").decode().splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            ann[parts[0]] = index[parts[1]]
    val = sorted(r for r in src.files("val/images/") if r.lower().endswith(".jpeg"))
    yte = np.array([ann[r.rsplit("/", 1)[1]] for r in val], dtype=np.int64)
    if not train or not val:
        raise ValueError("no train or val images found in the official layout")
    x_train = ar.decode_images([src.read(r) for r in train])
    x_test = ar.decode_images([src.read(r) for r in val])
    return {"x_train": x_train, "y_train": ytr, "x_test": x_test, "y_test": yte,
            "classes": np.array([words.get(w, w) for w in wnids]), "wnids": np.array(wnids)}


def load_tiny_imagenet(root: Path, download: bool) -> tuple[dict, dict]:
    """Arrays and provenance of Tiny-ImageNet (zip, extracted folder, or download)."""
    zpath = ar.find_first(root, TINY_ZIP)
    folder = ar.find_first(root, TINY_DIR)
    why = ""
    if zpath is None and folder is None and ar.download_allowed(download, root):
        from torchvision.datasets.utils import download_url
        try:
            download_url(TINY_URL, str(ar.writable_dir(root)), TINY_ZIP)
        except (OSError, RuntimeError) as exc:
            why = f" (The download failed: {type(exc).__name__}: {exc})"
        zpath = ar.find_first(root, TINY_ZIP)
    if zpath is None and folder is None:
        raise ar.missing_data_error("Tiny-ImageNet", [TINY_ZIP, f"{TINY_DIR}/ (extracted zip)"],
                                    root, TINY_URL, why.strip())
    if zpath is None and ar.lacking_files(folder, TINY_FILES):
        raise ar.missing_data_error("Tiny-ImageNet", [TINY_ZIP, f"{TINY_DIR}/ (extracted zip)"], root, TINY_URL,
                                    lacking=f"{folder} lacks {', '.join(ar.lacking_files(folder, TINY_FILES))}")
    key = ar.fingerprint(zpath) if zpath is not None else ar.fingerprint(folder / "wnids.txt")
    arrays = ar.load_cached(root, "tiny-imagenet.npz", key)
    if arrays is None:
        src = zpath if zpath is not None else folder
        try:
            arrays = read_tiny_imagenet(_Zip(zpath) if zpath is not None else _Folder(folder))
        except ar.DECODE_ERRORS + (RuntimeError,) as exc:  # RuntimeError: e.g. an encrypted zip member
            raise ar.archive_error(src, exc, TINY_URL, TINY_WHAT) from exc
        ar.save_cached(root, "tiny-imagenet.npz", key, arrays)
    return arrays, {"source": f"official zip layout ({zpath or folder})",
                    "display_name": "Tiny-ImageNet", "notes": ()}
