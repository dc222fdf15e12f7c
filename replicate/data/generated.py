"""Small generated data sets in the official file formats, for tests and offline trials.

Nothing here is real data. :func:`write_data_dir` fills a folder with files that the
loaders of :mod:`replicate.data` read exactly as they read the official ones, plus the
marker file :data:`~replicate.data.archives.GENERATED_MARKER`; ``data.load`` labels
everything read from such a folder "(generated test data)" and never downloads into it.
The test session uses it when no real data directory is set (``tests/conftest.py``);
``replicate data generate DIR`` writes one by hand (e.g. to try ``replicate book
--profile smoke`` without the data).

=================  ==================================================================
``cifar10``        ``cifar-10-batches-py/`` (python pickles ``data_batch_1..5``,
                   ``test_batch``, ``batches.meta``)
``cifar10_jpeg``   ``cifar10-jpeg.tar.gz`` (``cifar10-jpeg/{train,test}/<class>/NNNN.jpg``,
                   JPEG quality 75: the layout of the offline copy)
``cifar100``       ``cifar-100-python/{train,test,meta}``
``svhn``           ``svhn/{train,test}_32x32.mat`` (MATLAB v5, label 10 = digit 0)
``tiny_imagenet``  ``tiny-imagenet-200.zip`` (wnids, words, train/val folders)
``20newsgroups``   ``20news-bydate.tar.gz`` (the 20 official group names)
=================  ==================================================================

The data are learnable on purpose, so that the smoke runs of the chapters train
something: each image class has its own colour, plus pixel noise (images
``0.5 * colour + 64 + U{-87..87}``, clipped; the noise has standard deviation 50), and
each newsgroup has its own keywords mixed into common words. Default sizes exceed each data set's reference validation size
(``data.DEFAULT_VAL_SIZE``) by the smoke profile's 1,000 training samples.
"""
from __future__ import annotations

import io
import pickle
import struct
import tarfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import archives as ar
from .cifar import CIFAR10_CLASSES

GENERATABLE = ("cifar10", "cifar10_jpeg", "cifar100", "svhn", "tiny_imagenet", "20newsgroups")
#: What a test session writes when no real data directory is set: what the chapters use.
CHAPTER_DATASETS = ("cifar10", "20newsgroups")
NEWSGROUPS = ("alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
              "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
              "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
              "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
              "talk.politics.misc", "talk.religion.misc")


# ---------------------------------------------------------------- images and labels
def balanced_labels(n: int, num_classes: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` labels, each class ``n // K`` or ``n // K + 1`` times, in a random order."""
    return rng.permutation(np.arange(n) % num_classes).astype(np.int64)


def class_colours(num_classes: int, seed: int = 0) -> np.ndarray:
    """One RGB colour per class (K x 3 floats in [0, 255)), the same for train and test."""
    return np.random.default_rng([seed, num_classes]).uniform(0, 255, (num_classes, 3))


def class_images(labels: np.ndarray, colours: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """N x 3 x size x size uint8 images: half the class colour plus 64, plus uniform integer
    noise in [-87, 87] (standard deviation 50), clipped to [0, 255]."""
    x = rng.integers(-87, 88, (len(labels), 3, size, size), dtype=np.int16)
    x += np.round(colours[labels] * 0.5 + 64).astype(np.int16)[:, :, None, None]
    return np.clip(x, 0, 255).astype(np.uint8)


def _image_set(n: int, num_classes: int, size: int, seed: int, split: int):
    rng = np.random.default_rng([seed, split])
    y = balanced_labels(n, num_classes, rng)
    return class_images(y, class_colours(num_classes, seed), size, rng), y


def jpeg_bytes(image_chw: np.ndarray, quality: int = 75) -> bytes:
    """JPEG encoding (PIL) of one 3 x H x W uint8 image."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image_chw.transpose(1, 2, 0))).save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def _add_bytes(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tf.addfile(info, io.BytesIO(data))


class Py2Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes ``bytes`` as Python 2 ``str`` (opcodes SHORT_BINSTRING,
    BINSTRING), as Python 2's cPickle wrote the official CIFAR files: the result loads with
    ``encoding="bytes"`` (this package) and ``encoding="latin1"`` (torchvision) alike,
    the keys then being bytes or str. Python 3's pickler has no such mode."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_py2_str(self, obj: bytes) -> None:
        n = len(obj)
        self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj if n < 256
                   else pickle.BINSTRING + struct.pack("<i", n) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_py2_str


def _pickle(path: Path, obj: dict) -> None:
    with open(path, "wb") as f:
        Py2Pickler(f, protocol=2).dump(obj)


# ---------------------------------------------------------------- writers, one per format
def write_cifar10(folder: Path, n_train: int = 6000, n_test: int = 500, seed: int = 0) -> Path:
    """``folder/cifar-10-batches-py/``: five training batches, the test batch and the meta file."""
    d = Path(folder) / "cifar-10-batches-py"
    d.mkdir(parents=True, exist_ok=True)
    x, y = _image_set(n_train, 10, 32, seed, 0)
    for i, idx in enumerate(np.array_split(np.arange(n_train), 5), start=1):
        _pickle(d / f"data_batch_{i}", {b"batch_label": f"training batch {i} of 5".encode(),
                                        b"labels": y[idx].tolist(), b"data": x[idx].reshape(len(idx), -1),
                                        b"filenames": [f"gen_{j}.png".encode() for j in idx]})
    xt, yt = _image_set(n_test, 10, 32, seed, 1)
    _pickle(d / "test_batch", {b"batch_label": b"testing batch 1 of 1", b"labels": yt.tolist(),
                               b"data": xt.reshape(n_test, -1),
                               b"filenames": [f"gen_{j}.png".encode() for j in range(n_test)]})
    _pickle(d / "batches.meta", {b"label_names": [c.encode() for c in CIFAR10_CLASSES],
                                 b"num_cases_per_batch": -(-n_train // 5), b"num_vis": 3072})
    return d


def write_cifar10_jpeg(folder: Path, n_train: int = 6000, n_test: int = 500, seed: int = 0) -> Path:
    """``folder/cifar10-jpeg.tar.gz``: ``cifar10-jpeg/{train,test}/<class>/NNNN.jpg`` at quality 75."""
    path = Path(folder) / "cifar10-jpeg.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for split, n, code in (("train", n_train, 0), ("test", n_test, 1)):
            x, y = _image_set(n, 10, 32, seed, code)
            count = np.zeros(10, int)
            for img, label in zip(x, y):
                _add_bytes(tf, f"cifar10-jpeg/{split}/{CIFAR10_CLASSES[label]}/{count[label]:04d}.jpg",
                           jpeg_bytes(img))
                count[label] += 1
    return path


def write_cifar100(folder: Path, n_train: int = 6000, n_test: int = 500, seed: int = 0) -> Path:
    """``folder/cifar-100-python/{train,test,meta}`` with 100 fine classes ``class_00 ..`` (20 coarse)."""
    d = Path(folder) / "cifar-100-python"
    d.mkdir(parents=True, exist_ok=True)
    for split, n, code in (("train", n_train, 0), ("test", n_test, 1)):
        x, y = _image_set(n, 100, 32, seed, code)
        _pickle(d / split, {b"filenames": [f"gen_{j}.png".encode() for j in range(n)], b"batch_label": split.encode(),
                            b"fine_labels": y.tolist(), b"coarse_labels": (y // 5).tolist(),
                            b"data": x.reshape(n, -1)})
    _pickle(d / "meta", {b"fine_label_names": [f"class_{i:02d}".encode() for i in range(100)],
                         b"coarse_label_names": [f"superclass_{i:02d}".encode() for i in range(20)]})
    return d


def write_svhn(folder: Path, n_train: int = 8400, n_test: int = 500, seed: int = 0) -> Path:
    """``folder/svhn/{train,test}_32x32.mat``: X 32 x 32 x 3 x N uint8, y N x 1 (digit 0 stored as 10)."""
    from scipy.io import savemat

    d = Path(folder) / "svhn"
    d.mkdir(parents=True, exist_ok=True)
    for split, n, code in (("train", n_train, 0), ("test", n_test, 1)):
        x, y = _image_set(n, 10, 32, seed, code)
        y_mat = np.where(y == 0, 10, y).astype(np.uint8)[:, None]
        savemat(d / f"{split}_32x32.mat", {"X": x.transpose(2, 3, 1, 0), "y": y_mat}, do_compression=True)
    return d


def write_tiny_imagenet(folder: Path, num_classes: int = 200, train_per_class: int = 55,
                        val_per_class: int = 5, seed: int = 0) -> Path:
    """``folder/tiny-imagenet-200.zip`` in the official layout, 64 x 64 JPEGs, wnids ``n9000000..``."""
    path = Path(folder) / "tiny-imagenet-200.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    wnids = [f"n{9000000 + i:08d}" for i in range(num_classes)]
    top = "tiny-imagenet-200"
    with zipfile.ZipFile(path, "w") as zf:  # JPEGs are stored, as in the official zip's bulk
        zf.writestr(f"{top}/wnids.txt", "\n".join(wnids) + "\n")
        zf.writestr(f"{top}/words.txt", "".join(f"{w}\tgenerated class {i}\n" for i, w in enumerate(wnids)))
        x, y = _image_set(num_classes * train_per_class, num_classes, 64, seed, 0)
        count = np.zeros(num_classes, int)
        for img, label in zip(x, y):
            w = wnids[label]
            zf.writestr(f"{top}/train/{w}/images/{w}_{count[label]}.JPEG", jpeg_bytes(img))
            count[label] += 1
        for w in wnids:
            zf.writestr(f"{top}/train/{w}/{w}_boxes.txt", "")
        x, y = _image_set(num_classes * val_per_class, num_classes, 64, seed, 1)
        ann = []
        for i, (img, label) in enumerate(zip(x, y)):
            zf.writestr(f"{top}/val/images/val_{i}.JPEG", jpeg_bytes(img))
            ann.append(f"val_{i}.JPEG\t{wnids[label]}\t0\t0\t63\t63\n")
        zf.writestr(f"{top}/val/val_annotations.txt", "".join(ann))
    return path


def _words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, rng.integers(3, 9))) for _ in range(n)]


def write_20newsgroups(folder: Path, train_per_group: int = 100, test_per_group: int = 25,
                       seed: int = 0) -> Path:
    """``folder/20news-bydate.tar.gz``: ``20news-bydate-{train,test}/<group>/<id>`` messages.

    Each message has a header (dropped by the loader's default ``strip_headers``) and a
    body of 40 to 120 words, each one of its group's 25 keywords with probability 0.3,
    else one of 400 common words.
    """
    rng = np.random.default_rng([seed, 20])
    vocab = _words(400 + 25 * len(NEWSGROUPS), rng)
    common, keywords = vocab[:400], [vocab[400 + 25 * g: 425 + 25 * g] for g in range(len(NEWSGROUPS))]
    path = Path(folder) / "20news-bydate.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc_id = 10000
    with tarfile.open(path, "w:gz") as tf:
        for split, n in (("train", train_per_group), ("test", test_per_group)):
            for g, group in enumerate(NEWSGROUPS):
                lengths = rng.integers(40, 121, n)
                pool = np.where(rng.random(lengths.sum()) < 0.3, np.array(keywords[g])[rng.integers(0, 25, lengths.sum())],
                                np.array(common)[rng.integers(0, 400, lengths.sum())])
                for body in np.split(pool, np.cumsum(lengths)[:-1]):
                    text = (f"From: user{doc_id}@example.org\nSubject: generated message {doc_id}\n"
                            f"Organization: generated test data\nLines: 1\n\n{' '.join(body)}\n")
                    _add_bytes(tf, f"20news-bydate-{split}/{group}/{doc_id}", text.encode("latin-1"))
                    doc_id += 1
    return path


WRITERS = {"cifar10": write_cifar10, "cifar10_jpeg": write_cifar10_jpeg, "cifar100": write_cifar100,
           "svhn": write_svhn, "tiny_imagenet": write_tiny_imagenet, "20newsgroups": write_20newsgroups}


def write_marker(folder: Path, datasets) -> Path:
    """Write the marker file that makes the loaders label ``folder``'s data as generated."""
    path = Path(folder) / ar.GENERATED_MARKER
    path.write_text(f"Generated test data, written by replicate.data.generated on "
                    f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}: {', '.join(datasets)}.\n"
                    "Small synthetic data sets in the official file formats, not the real data. The loaders "
                    "label everything read from this folder '(generated test data)' and never download "
                    "into it.\n")
    return path


def write_data_dir(folder, datasets=CHAPTER_DATASETS, seed: int = 0) -> Path:
    """Write generated ``datasets`` (names of :data:`GENERATABLE`) and the marker into ``folder``.

    ``folder`` must be new, empty, or an earlier generated data directory: a folder with
    other content may hold real data, which the marker would mislabel. Returns the folder.
    """
    datasets = (datasets,) if isinstance(datasets, str) else tuple(datasets)
    unknown = [d for d in datasets if d not in GENERATABLE]
    if unknown or not datasets:
        raise ValueError(f"datasets must be names from {GENERATABLE}; got {list(datasets)!r}")
    folder = Path(folder).expanduser().resolve()
    if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not ar.is_generated(folder))):
        raise ValueError(f"folder {folder} exists and is not an empty or generated data directory; "
                         f"choose a new folder (real data must never be mixed with generated data)")
    folder.mkdir(parents=True, exist_ok=True)
    write_marker(folder, datasets)
    for name in datasets:
        WRITERS[name](folder, seed=seed)
    return folder
