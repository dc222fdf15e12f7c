"""Containers for loaded data sets and the train/validation splits.

The default split reproduces the reference code of Mukhoti et al. (2020), forked by
AdaFocal, DFL and FTS (``Data/cifar10.py``): ``np.random.seed(1)``, shuffle the
indices ``0..N-1`` of the official training set, the first ``val_size`` shuffled
indices are the validation set and the rest the training set (not stratified).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import torch

SPLITS = ("reference", "stratified", "none")


@dataclass(frozen=True)
class DatasetInfo:
    """What a loaded data set is.

    ``kind`` is ``"image"`` (x: uint8 N x C x H x W) or ``"text"`` (x: int64 N x L token
    ids, 0 = padding). ``mean``/``std`` are the per-channel normalisation statistics the
    reference code uses (images only); ``test_mean``/``test_std`` differ from them only
    when a reference bug is switched on on purpose (CIFAR-100 option
    ``test_normalization="reference_bug"``). ``embedding`` (text) is the
    ``len(vocab) x d`` matrix of pre-trained word vectors, or None. ``notes`` state caveats a chapter must
    repeat (lossy copies, generated data); ``generated`` is True for data produced here.
    """

    name: str
    display_name: str
    num_classes: int
    classes: tuple[str, ...]
    kind: str
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    image_size: int | None = None
    vocab: tuple[str, ...] | None = None
    notes: tuple[str, ...] = ()
    source: str = ""
    generated: bool = False
    split: str = ""
    citations: tuple[str, ...] = ()
    test_mean: tuple[float, ...] | None = None
    test_std: tuple[float, ...] | None = None
    options: dict = field(default_factory=dict)
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def test_stats(self) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
        """(mean, std) to normalise the test set with (equal to ``mean``/``std`` by default)."""
        return (self.test_mean or self.mean, self.test_std or self.std)


Pair = tuple[torch.Tensor, torch.Tensor]


@dataclass
class Splits:
    """Train, validation and test sets as ``(x, y)`` tensor pairs, and the data set's info."""

    train: Pair
    val: Pair
    test: Pair
    info: DatasetInfo

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}={tuple(getattr(self, k)[0].shape)}" for k in ("train", "val", "test"))
        return f"Splits({self.info.display_name}: {shapes})"

    def subset(self, n_train: int | None = None, n_val: int | None = None,
               n_test: int | None = None, seed: int = 0) -> "Splits":
        """A smaller copy for CPU profiles: class-balanced seeded samples of each split.

        For each split given an ``n``, the samples are ranked by a seeded random
        permutation, classes are visited round-robin (every class contributes its first
        ranked sample, then its second, ...), and the first ``n`` are kept, so each class
        gets ``n // K`` or ``n // K + 1`` samples while it has them. Kept samples stay in
        their original order. ``None`` keeps a split whole.
        """
        parts = {}
        for k, (name, n) in enumerate((("train", n_train), ("val", n_val), ("test", n_test))):
            x, y = getattr(self, name)
            if n is None:
                parts[name] = (x, y)
                continue
            if not isinstance(n, (int, np.integer)) or n < 0:
                raise ValueError(f"n_{name} must be a non-negative int or None, got {n!r}")
            idx = torch.from_numpy(balanced_order(y.numpy(), seed + k)[: min(n, len(y))])
            idx = idx.sort().values
            parts[name] = (x[idx], y[idx])
        note = (f"subset n_train={n_train}, n_val={n_val}, n_test={n_test} "
                f"(class-balanced, seed {seed})")
        info = dataclasses.replace(self.info, notes=self.info.notes + (note,))
        return Splits(parts["train"], parts["val"], parts["test"], info)


def balanced_order(y: np.ndarray, seed: int) -> np.ndarray:
    """Indices of ``y`` ordered round-robin over classes, in a seeded random order within class."""
    y = np.asarray(y)
    perm = np.random.RandomState(seed).permutation(len(y))
    yp = y[perm]
    order = np.argsort(yp, kind="stable")
    ys = yp[order]
    starts = np.flatnonzero(np.r_[True, ys[1:] != ys[:-1]])
    counts = np.diff(np.r_[starts, len(ys)])
    rank_sorted = np.arange(len(ys)) - np.repeat(starts, counts)
    rank = np.empty_like(rank_sorted)
    rank[order] = rank_sorted
    return perm[np.lexsort((np.arange(len(y)), rank))]


def split_indices(y: np.ndarray, split: str, val_size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, val) indices into the official training set.

    * ``"reference"``: ``np.random.seed(seed); np.random.shuffle(range(N))``, first
      ``val_size`` to validation (Mukhoti et al.'s ``Data/cifar10.py``).
    * ``"stratified"``: the same number per class (``val_size // K``, the remainder to
      the classes first in a seeded order), chosen by a seeded permutation.
    * ``"none"``: no validation set (FCL's released code trains on all 50k images).
    """
    n = len(y)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if split == "none":
        return np.arange(n), np.arange(0)
    if not isinstance(val_size, (int, np.integer)) or not 0 <= val_size < n:
        raise ValueError(f"val_size must be an int in [0, {n}), got {val_size!r}")
    if split == "reference":
        perm = np.random.RandomState(seed).permutation(n)
        return perm[val_size:], perm[:val_size]
    val = np.sort(balanced_order(y, seed)[:val_size])
    mask = np.ones(n, bool)
    mask[val] = False
    return np.flatnonzero(mask), val


def make_splits(train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray],
                info: DatasetInfo, split: str, val_size: int, seed: int) -> Splits:
    """Assemble :class:`Splits` (torch tensors, labels int64) from official train/test arrays."""
    x, y = train
    tr, va = split_indices(y, split, val_size, seed)
    desc = {"reference": f"reference: numpy seed-{seed} shuffle of the {len(y)} training "
                         f"samples, first {len(va)} = validation (not stratified)",
            "stratified": f"stratified: {len(va)} validation samples balanced over classes "
                          f"(numpy seed {seed})",
            "none": "none: no validation set, all training samples used"}[split]

    def pair(xa, ya):
        return torch.from_numpy(np.ascontiguousarray(xa)), torch.from_numpy(np.asarray(ya, np.int64))

    info = dataclasses.replace(info, split=desc)
    return Splits(pair(x[tr], y[tr]), pair(x[va], y[va]), pair(*test), info)
