"""SVHN (Netzer et al. 2011), cropped digits, from the official ``.mat`` files.

Files ``train_32x32.mat`` and ``test_32x32.mat`` (MATLAB v5, variables ``X`` of shape
32 x 32 x 3 x N and ``y`` of shape N x 1 with digit 0 stored as label 10) are looked
up in ``<data>/svhn/`` and ``<data>/``, or downloaded by ``torchvision.datasets.SVHN``.
Label 10 becomes 0, as in torchvision. Mukhoti et al.'s ``Data/svhn.py`` normalises
SVHN with the CIFAR-10 statistics and holds out ``floor(0.1 * 73257) = 7325`` training
images (numpy seed-1 shuffle) for validation.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import archives as ar

SVHN_URL = "http://ufldl.stanford.edu/housenumbers/"
SVHN_FILES = ("train_32x32.mat", "test_32x32.mat")
SVHN_WHAT = ("an official SVHN cropped-digits file (MATLAB .mat with X: 32 x 32 x 3 x N uint8 "
             "and y: N x 1 labels)")


def read_mat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Images (N x 3 x 32 x 32 uint8) and labels (int64, 10 -> 0) of an SVHN ``.mat`` file.

    A truncated or malformed file raises :class:`DataArchiveError` naming it.
    """
    from scipy.io import loadmat
    try:
        d = loadmat(path)
        x = np.ascontiguousarray(np.asarray(d["X"], dtype=np.uint8).transpose(3, 2, 0, 1))
        y = np.asarray(d["y"], dtype=np.int64).ravel() % 10
        if len(x) != len(y):
            raise ValueError(f"{len(x)} images but {len(y)} labels")
    except ar.DECODE_ERRORS as exc:
        raise ar.archive_error(path, exc, SVHN_URL, SVHN_WHAT) from exc
    return x, y


def _folder(root: Path) -> Path | None:
    for d in ar.search_dirs(root):
        for sub in (d / "svhn", d):
            if all((sub / f).is_file() for f in SVHN_FILES):
                return sub
    return None


def load_svhn(root: Path, download: bool) -> tuple[dict, dict]:
    """Arrays and provenance of SVHN (train / test; the ``extra`` set is not used)."""
    folder = _folder(root)
    why = ""
    if folder is None and ar.download_allowed(download, root):
        import torchvision
        target = ar.writable_dir(root) / "svhn"
        try:
            for split in ("train", "test"):
                torchvision.datasets.SVHN(root=str(target), split=split, download=True)
        except (OSError, RuntimeError) as exc:
            why = f" (The download failed: {type(exc).__name__}: {exc})"
        folder = _folder(root)
    if folder is None:
        partial = [sub for sub in (root / "svhn", root) if any((sub / f).is_file() for f in SVHN_FILES)]
        lacking = (f"{partial[0]} lacks {', '.join(ar.lacking_files(partial[0], SVHN_FILES))}"
                   if partial else "")
        raise ar.missing_data_error("SVHN", [f"svhn/{{{','.join(SVHN_FILES)}}}"], root, SVHN_URL,
                                    "Use the cropped-digits format (train_32x32.mat, "
                                    "test_32x32.mat)" + why, lacking=lacking)
    files = [folder / f for f in SVHN_FILES]
    key = ar.fingerprint(*files)
    arrays = ar.load_cached(root, "svhn.npz", key)
    if arrays is None:
        xtr, ytr = read_mat(files[0])
        xte, yte = read_mat(files[1])
        arrays = {"x_train": xtr, "y_train": ytr, "x_test": xte, "y_test": yte}
        ar.save_cached(root, "svhn.npz", key, arrays)
    return arrays, {"source": f"official .mat files ({folder})", "display_name": "SVHN", "notes": ()}
