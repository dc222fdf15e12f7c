"""Data sets of the five papers, loaded as tensors with the reference train/validation split.

``load(name)`` returns :class:`Splits` (train / val / test ``(x, y)`` tensor pairs and a
:class:`DatasetInfo`). Images are uint8 N x C x H x W, text is int64 N x L token ids,
labels are int64. Normalise with :func:`normalize` and augment training batches with
:func:`augment` (batched crop + flip; run it before ``normalize``), on any device.

Data are found through ``replicate.config.data_dir()`` (``$REPLICATE_DATA``; by default
``data/`` in the checkout, or in the per-user cache folder of an installed package). Decoded
arrays are cached as ``.npz`` in the data directory when it is writable, otherwise in
``replicate.config.cache_dir() / "data"``; the first load decodes, later loads read the
cache. Missing data raise FileNotFoundError naming the files, where to put them and
their official URL; truncated or corrupted files raise :class:`DataArchiveError` naming
the file, what it should be and where it comes from (both one line).

A data directory written by :func:`replicate.data.generated.write_data_dir` (small data
sets in the official formats, for tests and offline trials) carries a marker file; data
loaded from it are labelled: ``DatasetInfo.display_name`` ends in "(generated test data)",
``generated`` is True and the first note says what they are.

Data sets (protocol: the book's protocol chapter and its page "The authors' code"; citations are ``book/references.bib`` keys):

=================  =====================================================================
``cifar10``        official batches, else offline JPEG q75 archive, else download
``cifar100``       official ``cifar-100-python``; option ``test_normalization``
``svhn``           official ``.mat`` files
``tiny_imagenet``  official ``tiny-imagenet-200.zip`` layout; val = 50 train images/class
``cifar10c``       CIFAR-10 train/val; test = CIFAR-10 test + generated Gaussian noise
                   (options ``severity`` 1..5, ``scales``, ``corruption_seed``)
``20newsgroups``   by-date train/test; options ``max_len``, ``max_vocab``, ``embeddings``
                   (:mod:`replicate.data.embeddings`), ...
=================  =====================================================================
"""
from __future__ import annotations

import dataclasses

from . import archives, embeddings
from .archives import DataArchiveError
from .base import SPLITS, DatasetInfo, Splits, make_splits, split_indices
from .cifar import CIFAR10_CLASSES, CIFAR_MEAN, CIFAR_STD, IMAGENET_MEAN, IMAGENET_STD
from .corruptions import GAUSSIAN_NOISE_SCALES, gaussian_noise
from .describe import describe_copy, split_sizes
from .transforms import augment, normalize

DATASETS = ("cifar10", "cifar100", "svhn", "tiny_imagenet", "cifar10c", "20newsgroups")

OPTIONS = {
    "cifar10": {"source": "auto"},
    "cifar100": {"test_normalization": "correct"},
    "svhn": {},
    "tiny_imagenet": {},
    "cifar10c": {"severity": 5, "scales": "cifar10c", "corruption_seed": 0, "source": "auto"},
    "20newsgroups": {"max_len": 1000, "max_vocab": 20000, "strip_headers": True,
                     "padding": "pre", "truncating": "pre", "embeddings": "auto", "embed_dim": 100,
                     "word2vec": dict(embeddings.WORD2VEC)},
}

DEFAULT_VAL_SIZE = {"cifar10": 5000, "cifar100": 5000, "cifar10c": 5000, "svhn": 7325,
                    "tiny_imagenet": 10000, "20newsgroups": 900}

GENERATED_LABEL = "(generated test data)"
GENERATED_NOTE = ("generated test data (replicate.data.generated): small synthetic data sets written in "
                  "the official file formats (image classes differ by colour, newsgroups by keywords); "
                  "numbers computed on them test the code and say nothing about the papers' claims")

__all__ = ["load", "resolve_options", "DATASETS", "OPTIONS", "DEFAULT_VAL_SIZE", "SPLITS", "Splits", "DatasetInfo",
           "DataArchiveError", "GENERATED_LABEL", "normalize", "augment", "gaussian_noise", "split_indices",
           "CIFAR10_CLASSES", "CIFAR_MEAN", "CIFAR_STD", "IMAGENET_MEAN", "IMAGENET_STD",
           "GAUSSIAN_NOISE_SCALES", "describe_copy", "split_sizes"]


def _image_info(name, meta, classes, mean, std, size, citations, **kw) -> DatasetInfo:
    return DatasetInfo(name=name, display_name=meta["display_name"], num_classes=len(classes),
                       classes=tuple(classes), kind="image", mean=mean, std=std, image_size=size,
                       notes=tuple(meta["notes"]), source=meta["source"], citations=citations, **kw)


def resolve_options(name: str, options: dict, data_dir=None) -> dict:
    """``options`` of data set ``name`` checked, with data-dependent choices made: for
    20 Newsgroups the ``word2vec`` settings are completed and ``embeddings="auto"`` becomes
    ``"glove"`` (GloVe file in the data directory) or ``"word2vec"``. Reads no data."""
    if name != "20newsgroups":
        return dict(options)
    out = dict(options)
    out["word2vec"] = embeddings.check_options(out["embeddings"], out["embed_dim"], out["word2vec"])
    out["embeddings"] = embeddings.resolve(out["embeddings"], out["embed_dim"], archives.root_dir(data_dir))
    return out


def _raw(name: str, root, download: bool, opts: dict, fit_split: tuple = ("none", 0, 1)):
    """(train arrays, test arrays, info) of data set ``name`` before the validation split."""
    from . import cifar, svhn, text, tiny_imagenet

    if name in ("cifar10", "cifar10c"):
        arrays, meta = cifar.load_cifar10(root, download, source=opts["source"])
        info = _image_info("cifar10", meta, CIFAR10_CLASSES, CIFAR_MEAN, CIFAR_STD, 32,
                           ("krizhevsky2009cifar",))
        if name == "cifar10c":
            sev, scales, seed = opts["severity"], opts["scales"], opts["corruption_seed"]
            x_test = gaussian_noise(arrays["x_test"], sev, seed=seed, scales=scales)
            note = (f"generated corruption: Gaussian noise severity {sev} "
                    f"(sigma {GAUSSIAN_NOISE_SCALES[scales][sev - 1]} on [0,1], {scales} scales, "
                    f"numpy seed {seed}) applied to the {info.display_name} test set with the "
                    f"published CIFAR-10-C recipe; not the released CIFAR-10-C file")
            info = dataclasses.replace(
                info, name="cifar10c", generated=True, notes=info.notes + (note,),
                display_name=f"CIFAR-10-C Gaussian noise s{sev} (generated"
                             + (", from JPEG q75)" if "JPEG" in info.display_name else ")"),
                citations=info.citations + ("hendrycks2019benchmarking",))
            return (arrays["x_train"], arrays["y_train"]), (x_test, arrays["y_test"]), info
    elif name == "cifar100":
        allowed = ("correct", "reference_bug")
        if opts["test_normalization"] not in allowed:
            raise ValueError(f"test_normalization must be one of {allowed}, "
                             f"got {opts['test_normalization']!r}")
        arrays, meta = cifar.load_cifar100(root, download)
        extra = {}
        if opts["test_normalization"] == "reference_bug":
            extra = {"test_mean": IMAGENET_MEAN, "test_std": IMAGENET_STD}
            meta["notes"] = meta["notes"] + ("test set normalised with ImageNet statistics "
                                             "(reference-code bug, switched on on purpose)",)
        info = _image_info("cifar100", meta, [str(c) for c in arrays["classes"]], CIFAR_MEAN,
                           CIFAR_STD, 32, ("krizhevsky2009cifar",), **extra)
    elif name == "svhn":
        arrays, meta = svhn.load_svhn(root, download)
        info = _image_info("svhn", meta, [str(d) for d in range(10)], CIFAR_MEAN, CIFAR_STD, 32, ())
    elif name == "tiny_imagenet":
        arrays, meta = tiny_imagenet.load_tiny_imagenet(root, download)
        info = _image_info("tiny_imagenet", meta, [str(c) for c in arrays["classes"]],
                           IMAGENET_MEAN, IMAGENET_STD, int(arrays["x_train"].shape[-1]), ())
    else:
        arrays, meta = text.load_20newsgroups(root, download, fit_split=fit_split, **opts)
        classes = tuple(str(c) for c in arrays["classes"])
        info = DatasetInfo(name=name, display_name=meta["display_name"], num_classes=len(classes),
                           classes=classes, kind="text", vocab=tuple(str(w) for w in arrays["vocab"]),
                           embedding=arrays.get("embedding"),
                           notes=meta["notes"], source=meta["source"],
                           citations=("lang1995newsgroups",))
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"]), info


def load(name: str, data_dir=None, split: str = "reference", val_size: int | None = None,
         split_seed: int = 1, download: bool = True, **options) -> Splits:
    """Load data set ``name`` with its train / validation / test splits.

    Parameters
    ----------
    name : one of :data:`DATASETS`.
    data_dir : data folder (default ``replicate.config.data_dir()``).
    split : ``"reference"`` (numpy seed-``split_seed`` shuffle of the official training
        set, first ``val_size`` = validation; for Tiny-ImageNet 50 images per class),
        ``"stratified"`` (same count per class) or ``"none"`` (no validation set).
    val_size : validation size; ``None`` = the reference value (:data:`DEFAULT_VAL_SIZE`:
        5,000 for CIFAR, 7,325 for SVHN, 10,000 for Tiny-ImageNet, 900 for 20 Newsgroups).
    download : try the official download when the files are absent (never when the
        environment variable ``REPLICATE_OFFLINE`` is set, nor into a generated data directory).
    options : per data set, see :data:`OPTIONS` (defaults shown there).
    """
    if name not in DATASETS:
        raise ValueError(f"name must be one of {DATASETS}, got {name!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    unknown = set(options) - set(OPTIONS[name])
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} for {name!r}; "
                         f"allowed: {sorted(OPTIONS[name]) or 'none'}")
    opts = {**OPTIONS[name], **options}
    if name == "cifar10c":
        from .corruptions import noise_scale
        noise_scale(opts["severity"], opts["scales"])  # validates before any loading
    root = archives.root_dir(data_dir)
    if val_size is None:
        val_size = DEFAULT_VAL_SIZE[name]
    opts = resolve_options(name, opts, root)
    # text: the vocabulary and the word embeddings are fitted on the training documents only
    train, test, info = _raw(name, root, download, opts, (split, val_size, split_seed))
    if archives.is_generated(root):
        info = dataclasses.replace(info, display_name=f"{info.display_name} {GENERATED_LABEL}", generated=True,
                                   notes=(GENERATED_NOTE,) + info.notes)
    if name == "tiny_imagenet" and split == "reference":
        split = "stratified"
    info = dataclasses.replace(info, options=opts)
    return make_splits(train, test, info, split, val_size, split_seed)
