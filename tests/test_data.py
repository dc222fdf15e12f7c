"""Tests for replicate.data: loaders on small files generated in the official formats,
archive safety, the reference split, augmentation and the Gaussian-noise corruption."""
from __future__ import annotations

import io
import os
import pickle
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from scipy.stats import norm

import replicate as rp
from replicate.data import DataArchiveError, augment, load, normalize
from replicate.data.base import balanced_order, split_indices
from replicate.data.cifar import CIFAR10_CLASSES, CIFAR_MEAN, CIFAR_STD

CLASSES = CIFAR10_CLASSES


pytestmark = pytest.mark.usefixtures("private_cache")     # tests/conftest.py


# ---------------------------------------------------------------- official-format writers
def cifar_row(img_hwc: np.ndarray) -> np.ndarray:
    """The official CIFAR row: 1024 red, 1024 green, 1024 blue values, each row-major."""
    return np.concatenate([img_hwc[:, :, c].ravel() for c in range(3)])


def write_cifar10(folder: Path, per_batch=4, n_test=6, seed=0):
    rng = np.random.default_rng(seed)
    d = folder / "cifar-10-batches-py"
    d.mkdir(parents=True)
    imgs, labels = [], []
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        n = n_test if name == "test_batch" else per_batch
        hwc = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        y = list(rng.integers(0, 10, n))
        batch = {b"batch_label": name.encode(), b"labels": y,
                 b"data": np.stack([cifar_row(h) for h in hwc]),
                 b"filenames": [f"{i}.png".encode() for i in range(n)]}
        with open(d / name, "wb") as f:
            pickle.dump(batch, f, protocol=2)
        imgs.append(hwc)
        labels.append(y)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({b"label_names": [c.encode() for c in CLASSES], b"num_vis": 3072}, f)
    xtr = np.concatenate(imgs[:5]).transpose(0, 3, 1, 2)
    ytr = np.concatenate(labels[:5])
    return xtr, ytr, imgs[5].transpose(0, 3, 1, 2), np.array(labels[5])


def reference_permutation(n, seed=1):
    """Mukhoti et al. Data/cifar10.py: np.random.seed(seed); np.random.shuffle(list(range(n)))."""
    indices = list(range(n))
    np.random.seed(seed)
    np.random.shuffle(indices)
    return np.array(indices)


def jpeg_bytes(rgb, quality=95, mode="RGB"):
    buf = io.BytesIO()
    img = Image.fromarray(rgb) if mode == "RGB" else Image.fromarray(rgb[..., 0], "L")
    img.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def add_bytes(tf, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def write_cifar_jpeg_archive(path: Path, n_train=2, n_test=1, seed=0):
    """cifar10-jpeg/{train,test}/<class>/NNNN.jpg, classes added in reverse order."""
    rng = np.random.default_rng(seed)
    with tarfile.open(path, "w:gz") as tf:
        for split, n in (("test", n_test), ("train", n_train)):
            for cls in reversed(CLASSES):
                for i in reversed(range(n)):
                    img = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
                    add_bytes(tf, f"cifar10-jpeg/{split}/{cls}/{i:04d}.jpg", jpeg_bytes(img, 75))
    return path


def files_under(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# ---------------------------------------------------------------- CIFAR-10 official
def test_cifar10_official_batches_layout_split_and_cache(tmp_path):
    xtr, ytr, xte, yte = write_cifar10(tmp_path / "data")
    s = load("cifar10", data_dir=tmp_path / "data", val_size=5, download=False)
    perm = reference_permutation(20)
    assert torch.equal(s.val[0], torch.from_numpy(xtr[perm[:5]]))
    assert torch.equal(s.train[0], torch.from_numpy(xtr[perm[5:]]))
    assert torch.equal(s.train[1], torch.from_numpy(ytr[perm[5:]]).long())
    assert torch.equal(s.test[0], torch.from_numpy(xte)) and torch.equal(s.test[1], torch.from_numpy(yte))
    assert s.train[0].dtype == torch.uint8 and s.train[1].dtype == torch.int64
    info = s.info
    assert (info.name, info.display_name, info.num_classes, info.kind, info.image_size) == \
        ("cifar10", "CIFAR-10", 10, "image", 32)
    assert info.classes == CLASSES and info.mean == CIFAR_MEAN and info.std == CIFAR_STD
    assert (tmp_path / "data" / "cifar10-official.npz").is_file()
    assert not [f for f in files_under(tmp_path / "data") if f.endswith(".tmp")]
    again = load("cifar10", data_dir=tmp_path / "data", val_size=5, download=False)
    assert torch.equal(again.train[0], s.train[0])


def test_read_only_data_dir_caches_in_cache_dir(tmp_path):
    write_cifar10(tmp_path / "data")
    os.chmod(tmp_path / "data", 0o555)
    try:
        load("cifar10", data_dir=tmp_path / "data", val_size=5, download=False)
        assert not [f for f in files_under(tmp_path / "data") if f.endswith((".npz", ".tmp"))]
        assert (tmp_path / "cache" / "data" / "cifar10-official.npz").is_file()
    finally:
        os.chmod(tmp_path / "data", 0o755)


# ---------------------------------------------------------------- CIFAR-10 JPEG archive
def test_cifar10_jpeg_archive_class_order_and_pixels(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    archive = write_cifar_jpeg_archive(data / "cifar10-jpeg.tar.gz")
    s = load("cifar10", data_dir=data, split="none", download=False)
    assert s.info.display_name == "CIFAR-10 (JPEG q75)"
    assert any("not numerically comparable" in n for n in s.info.notes)
    # oracle: PIL decode of each member, ordered by official label index then file name
    with tarfile.open(archive) as tf:
        members = {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}
    for split, x, y, n in (("train", *s.train, 2), ("test", *s.test, 1)):
        assert torch.equal(y, torch.arange(10).repeat_interleave(n))
        for k, cls in enumerate(CLASSES):
            for i in range(n):
                img = np.asarray(Image.open(io.BytesIO(members[f"cifar10-jpeg/{split}/{cls}/{i:04d}.jpg"])))
                assert torch.equal(x[k * n + i], torch.from_numpy(img.transpose(2, 0, 1).copy()))
    assert (data / "cifar10-jpeg.npz").is_file()


def test_official_files_take_precedence_over_jpeg(tmp_path):
    write_cifar10(tmp_path / "data")
    write_cifar_jpeg_archive(tmp_path / "data" / "cifar10-jpeg.tar.gz")
    assert load("cifar10", data_dir=tmp_path / "data", val_size=5, download=False).info.display_name == "CIFAR-10"
    s = load("cifar10", data_dir=tmp_path / "data", split="none", download=False, source="jpeg")
    assert s.info.display_name == "CIFAR-10 (JPEG q75)"


def test_truncated_archive_clear_error_and_no_cache(tmp_path):
    good = write_cifar_jpeg_archive(tmp_path / "good.tar.gz")
    data = tmp_path / "data"
    data.mkdir()
    raw = good.read_bytes()
    (data / "cifar10-jpeg.tar.gz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataArchiveError, match="truncated, corrupted"):
        load("cifar10", data_dir=data, download=False)
    assert files_under(data) == ["cifar10-jpeg.tar.gz"]
    assert not [f for f in files_under(tmp_path / "cache") if "npz" in f or "tmp" in f]


def test_truncated_text_archive_leaves_no_extraction(tmp_path):
    good = write_news_archive(tmp_path / "good.tar.gz")
    data = tmp_path / "data"
    data.mkdir()
    raw = good.read_bytes()
    (data / "20news-bydate.tar.gz").write_bytes(raw[: len(raw) * 2 // 3])
    with pytest.raises(DataArchiveError, match="20news-bydate.tar.gz"):
        load("20newsgroups", data_dir=data, download=False)
    assert files_under(data) == ["20news-bydate.tar.gz"]


@pytest.mark.parametrize("name,needle", [
    ("cifar10", "cifar-10-batches-py"), ("cifar100", "cifar-100-python"),
    ("svhn", "train_32x32.mat"), ("tiny_imagenet", "tiny-imagenet-200.zip"),
    ("cifar10c", "cifar10-jpeg.tar.gz"), ("20newsgroups", "20news-bydate.tar.gz")])
def test_missing_data_error_names_files_place_and_source(tmp_path, name, needle):
    with pytest.raises(FileNotFoundError) as err:
        load(name, data_dir=tmp_path / "empty", download=False)
    msg = str(err.value)
    assert needle in msg and str(tmp_path / "empty") in msg and "http" in msg and "REPLICATE_DATA" in msg


# ---------------------------------------------------------------- CIFAR-100, SVHN, Tiny-ImageNet
def test_cifar100_official_format_and_reference_bug_option(tmp_path):
    rng = np.random.default_rng(1)
    d = tmp_path / "data" / "cifar-100-python"
    d.mkdir(parents=True)
    names = [f"class{i:03d}" for i in range(100)]
    arrays = {}
    for split, n in (("train", 12), ("test", 4)):
        hwc = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        fine = list(rng.integers(0, 100, n))
        with open(d / split, "wb") as f:
            pickle.dump({b"data": np.stack([cifar_row(h) for h in hwc]), b"fine_labels": fine,
                         b"coarse_labels": [v // 5 for v in fine]}, f, protocol=2)
        arrays[split] = (hwc.transpose(0, 3, 1, 2), np.array(fine))
    with open(d / "meta", "wb") as f:
        pickle.dump({b"fine_label_names": [n.encode() for n in names],
                     b"coarse_label_names": [b"c"] * 20}, f)
    s = load("cifar100", data_dir=tmp_path / "data", val_size=3, download=False)
    perm = reference_permutation(12)
    assert torch.equal(s.val[0], torch.from_numpy(arrays["train"][0][perm[:3]]))
    assert torch.equal(s.test[1], torch.from_numpy(arrays["test"][1]))
    assert s.info.num_classes == 100 and s.info.classes == tuple(names)
    assert s.info.test_stats == (CIFAR_MEAN, CIFAR_STD)
    bug = load("cifar100", data_dir=tmp_path / "data", val_size=3, download=False,
               test_normalization="reference_bug")
    assert bug.info.test_stats == ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    with pytest.raises(ValueError, match="reference_bug"):
        load("cifar100", data_dir=tmp_path / "data", download=False, test_normalization="imagenet")


def test_svhn_mat_format(tmp_path):
    from scipy.io import savemat
    rng = np.random.default_rng(2)
    (tmp_path / "data" / "svhn").mkdir(parents=True)
    truth = {}
    for split, n in (("train", 10), ("test", 5)):
        X = rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8)
        y = rng.integers(1, 11, (n, 1)).astype(np.uint8)  # 10 stands for digit 0
        savemat(tmp_path / "data" / "svhn" / f"{split}_32x32.mat", {"X": X, "y": y})
        truth[split] = (X, y.ravel())
    s = load("svhn", data_dir=tmp_path / "data", split="none", download=False)
    X, y = truth["train"]
    for i in range(10):
        assert torch.equal(s.train[0][i], torch.from_numpy(X[:, :, :, i].transpose(2, 0, 1).copy()))
        assert s.train[1][i].item() == (0 if y[i] == 10 else y[i])
    assert s.test[0].shape == (5, 3, 32, 32) and s.info.classes == tuple("0123456789")


def test_tiny_imagenet_zip_layout(tmp_path):
    wnids = ["n03", "n01", "n02"]  # unsorted on purpose: labels follow the sorted wnids
    colors = {"n01": (200, 30, 30), "n02": (30, 200, 30), "n03": (30, 30, 200)}
    data = tmp_path / "data"
    data.mkdir()
    root = "tiny-imagenet-200"
    with zipfile.ZipFile(data / "tiny-imagenet-200.zip", "w") as zf:
        zf.writestr(f"{root}/wnids.txt", "\n".join(wnids) + "\n")
        zf.writestr(f"{root}/words.txt", "n01\tgoldfish, Carassius\nn02\tsalamander\nn03\tbus\nn09\tother\n")
        for w in wnids:
            for i in range(4):
                img = np.full((64, 64, 3), colors[w], np.uint8)
                grey = w == "n02" and i == 0
                zf.writestr(f"{root}/train/{w}/images/{w}_{i}.JPEG",
                            jpeg_bytes(img, mode="L" if grey else "RGB"))
            zf.writestr(f"{root}/train/{w}/{w}_boxes.txt", "")
        ann = []
        for i, w in enumerate(["n02", "n03", "n01", "n02"]):
            zf.writestr(f"{root}/val/images/val_{i}.JPEG", jpeg_bytes(np.full((64, 64, 3), colors[w], np.uint8)))
            ann.append(f"val_{i}.JPEG\t{w}\t0\t0\t63\t63")
        zf.writestr(f"{root}/val/val_annotations.txt", "\n".join(ann) + "\n")
    s = load("tiny_imagenet", data_dir=data, val_size=3, download=False)
    assert s.info.classes == ("goldfish", "salamander", "bus") and s.info.image_size == 64
    assert torch.equal(s.test[1], torch.tensor([1, 2, 0, 1]))
    assert torch.equal(torch.bincount(s.val[1], minlength=3), torch.tensor([1, 1, 1]))  # per-class val
    assert torch.equal(torch.bincount(s.train[1], minlength=3), torch.tensor([3, 3, 3]))
    x = torch.cat([s.train[0], s.val[0]]).float()
    y = torch.cat([s.train[1], s.val[1]])
    for k, w in enumerate(sorted(wnids)):
        mean_rgb = x[y == k].mean(dim=(0, 2, 3))
        if w == "n02":  # includes one greyscale JPEG, decoded to three equal channels
            grey = ((x[y == k][:, 0] == x[y == k][:, 1]) & (x[y == k][:, 1] == x[y == k][:, 2]))
            assert grey.flatten(1).all(1).sum() == 1
        else:
            assert torch.allclose(mean_rgb, torch.tensor(colors[w], dtype=torch.float), atol=4)


def test_tiny_imagenet_corrupted_zip(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "tiny-imagenet-200.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(DataArchiveError, match="tiny-imagenet-200.zip"):
        load("tiny_imagenet", data_dir=data, download=False)


# ---------------------------------------------------------------- 20 Newsgroups
NEWS = {
    "train": {"comp.graphics": ["From: a@b\nSubject: x\n\nThe cat, the DOG; the cat's hat.",
                                "Header: y\n\nrender the image"],
              "alt.atheism": ["Path: z\n\ndog dog image-processing"]},
    "test": {"comp.graphics": ["Subject: t\n\nthe unknownword cat"],
             "alt.atheism": ["H: u\n\nhat hat hat the dog cat render image"]},
}


def write_news_archive(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for split, groups in NEWS.items():
            for g, docs in groups.items():
                for i, doc in enumerate(docs):
                    add_bytes(tf, f"20news-bydate-{split}/{g}/{51000 + i}", doc.encode("latin-1"))
    return path


def test_20newsgroups_tokens_vocab_and_padding(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_news_archive(data / "20news-bydate.tar.gz")
    s = load("20newsgroups", data_dir=data, split="none", download=False, max_len=6)
    # training tokens (headers dropped, lowercased, punctuation split, apostrophe kept):
    # alt.atheism: dog dog image processing | comp.graphics: the cat the dog the cat's hat /
    # render the image. Counts: the 4, dog 3, image 2, then 1 each in first-use order.
    vocab = ("<pad>", "the", "dog", "image", "processing", "cat", "cat's", "hat", "render")
    assert s.info.vocab == vocab and s.info.kind == "text"
    assert s.info.classes == ("alt.atheism", "comp.graphics")
    ids = {w: i for i, w in enumerate(vocab)}
    expect_train = [[0, 0] + [ids[w] for w in "dog dog image processing".split()],
                    [ids[w] for w in "cat the dog the cat's hat".split()],  # 'pre' keeps the last 6
                    [0, 0, 0] + [ids[w] for w in "render the image".split()]]
    assert s.train[0].tolist() == expect_train
    assert s.train[1].tolist() == [0, 1, 1]
    assert s.test[0].tolist() == [[ids[w] for w in "hat the dog cat render image".split()],
                                  [0, 0, 0, 0, ids["the"], ids["cat"]]]  # OOV word dropped
    assert s.test[0].dtype == torch.int64
    post = load("20newsgroups", data_dir=data, split="none", download=False, max_len=6,
                padding="post", truncating="post", max_vocab=4)
    assert post.info.vocab == vocab[:4]
    assert post.test[0].tolist() == [[ids["the"], ids["dog"], ids["image"], 0, 0, 0], [ids["the"], 0, 0, 0, 0, 0]]
    assert (data / "20news-bydate" / "20news-bydate-train").is_dir()


# ---------------------------------------------------------------- splits and options
def test_reference_split_is_numpy_seed1_shuffle():
    y = np.repeat(np.arange(10), 5000)
    train, val = split_indices(y, "reference", 5000, 1)
    perm = reference_permutation(50000)
    assert np.array_equal(val, perm[:5000]) and np.array_equal(train, perm[5000:])


def test_stratified_and_none_splits():
    y = np.random.default_rng(0).integers(0, 10, 1000)
    train, val = split_indices(y, "stratified", 100, 3)
    assert np.all(np.bincount(y[val], minlength=10) == 10)
    assert np.array_equal(np.sort(np.r_[train, val]), np.arange(1000))
    train, val = split_indices(y, "none", 100, 3)
    assert len(val) == 0 and len(train) == 1000


def test_subset_is_class_balanced(tmp_path):
    write_cifar10(tmp_path / "data", per_batch=40, n_test=30)
    s = load("cifar10", data_dir=tmp_path / "data", val_size=50, download=False)
    sub = s.subset(n_train=40, n_test=17, seed=3)
    assert len(sub.train[1]) == 40 and len(sub.test[1]) == 17 and torch.equal(sub.val[0], s.val[0])
    for part in ("train", "test"):
        counts = torch.bincount(getattr(sub, part)[1], minlength=10)
        full = torch.bincount(getattr(s, part)[1], minlength=10)
        # round-robin: each class has all its samples or is within one of the fullest class
        assert torch.all((counts == full) | (counts >= counts.max() - 1))
    rows = {tuple(r.flatten()[:16].tolist()) for r in s.train[0]}
    assert all(tuple(r.flatten()[:16].tolist()) in rows for r in sub.train[0])
    assert "subset" in sub.info.notes[-1]


def test_balanced_order_round_robin():
    y = np.array([0] * 6 + [1] * 3 + [2] * 1)
    order = balanced_order(y, 0)
    assert sorted(order.tolist()) == list(range(10))
    assert sorted(y[order[:3]].tolist()) == [0, 1, 2]
    assert sorted(y[order[3:5]].tolist()) == [0, 1] and sorted(y[order[5:7]].tolist()) == [0, 1]


@pytest.mark.parametrize("kwargs,needle", [
    ({"name": "imagenet"}, "cifar10"), ({"name": "cifar10", "split": "random"}, "stratified"),
    ({"name": "cifar10", "severity": 3}, "source"), ({"name": "cifar10c", "severity": 6}, "1..5"),
    ({"name": "cifar10c", "scales": "big"}, "imagenet_c"), ({"name": "cifar10", "source": "web"}, "jpeg")])
def test_bad_arguments_raise_value_error(tmp_path, kwargs, needle):
    if "source" in kwargs:
        write_cifar10(tmp_path / "data")
    with pytest.raises(ValueError, match=needle):
        load(data_dir=tmp_path / "data", download=False, **kwargs)


def test_cifar10c_uses_cifar10_train_and_generated_test(tmp_path):
    xtr, ytr, xte, yte = write_cifar10(tmp_path / "data")
    clean = load("cifar10", data_dir=tmp_path / "data", val_size=5, download=False)
    c = load("cifar10c", data_dir=tmp_path / "data", val_size=5, download=False, severity=3)
    assert torch.equal(c.train[0], clean.train[0]) and torch.equal(c.val[0], clean.val[0])
    assert torch.equal(c.test[1], clean.test[1]) and not torch.equal(c.test[0], clean.test[0])
    assert c.info.generated and "generated" in c.info.display_name
    assert "hendrycks2019benchmarking" in c.info.citations
    expected = rp.data.gaussian_noise(xte, 3, seed=0)
    assert torch.equal(c.test[0], torch.from_numpy(expected))


# ---------------------------------------------------------------- corruption statistics
def floor_clip_moments(v, sigma):
    """E and Var of F = floor(clip(v + sigma Z, 0, 255)) from P(F >= k) = P(v + sigma Z >= k)."""
    k = np.arange(1, 256)
    tail = norm.sf((k - v) / sigma)
    m1 = tail.sum()
    m2 = ((2 * k - 1) * tail).sum()
    return m1, m2 - m1 ** 2


@pytest.mark.parametrize("severity", [1, 5])
@pytest.mark.parametrize("v", [0, 3, 128, 250, 255])
def test_gaussian_noise_matches_closed_form(severity, v):
    x = np.full((200, 3, 32, 32), v, np.uint8)  # 614,400 pixels
    out = rp.data.gaussian_noise(x, severity, seed=severity).astype(np.float64)
    sigma = 255 * rp.data.GAUSSIAN_NOISE_SCALES["cifar10c"][severity - 1]
    mean, var = floor_clip_moments(v, sigma)
    se = np.sqrt(var / out.size)
    assert abs(out.mean() - mean) < 5 * se
    assert abs(out.var() / var - 1) < 0.02


def test_gaussian_noise_published_scales_seed_and_dtype():
    assert rp.data.GAUSSIAN_NOISE_SCALES["cifar10c"] == (0.04, 0.06, 0.08, 0.09, 0.10)
    assert rp.data.GAUSSIAN_NOISE_SCALES["imagenet_c"] == (0.08, 0.12, 0.18, 0.26, 0.38)
    x = np.random.default_rng(0).integers(0, 256, (5, 3, 8, 8), dtype=np.uint8)
    a = rp.data.gaussian_noise(x, 2, seed=7)
    assert a.dtype == np.uint8 and np.array_equal(a, rp.data.gaussian_noise(x, 2, seed=7))
    assert not np.array_equal(a, rp.data.gaussian_noise(x, 2, seed=8))
    # the published recipe, per image, with the same random stream
    rng = np.random.RandomState(7)
    ref = np.uint8(np.clip(x / 255.0 + rng.normal(size=x.shape, scale=0.06), 0, 1) * 255)
    assert np.array_equal(a, ref)


# ---------------------------------------------------------------- normalize / augment
def test_normalize_matches_torchvision():
    from torchvision.transforms import Normalize
    x = torch.randint(0, 256, (4, 3, 6, 6), dtype=torch.uint8)
    expected = Normalize(CIFAR_MEAN, CIFAR_STD)(x.float() / 255)
    out = normalize(x, CIFAR_MEAN, CIFAR_STD)
    assert out.dtype == torch.float32 and torch.allclose(out, expected, atol=1e-6)
    with pytest.raises(ValueError, match="channels"):
        normalize(x, (0.5,), (0.5,))


def test_augment_is_a_zero_padded_shifted_window_possibly_mirrored():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(1, 256, (300, 3, 32, 32), dtype=torch.uint8)  # no zeros in the images
    out = augment(x, generator=g, pad=4)
    assert out.shape == x.shape and out.dtype == torch.uint8
    padded = torch.nn.functional.pad(x, (4, 4, 4, 4))
    hits, flips = torch.zeros(9, 9), 0
    for i in range(len(x)):  # brute-force oracle over all 81 windows and both mirrorings
        found = [(dy, dx, f) for dy in range(9) for dx in range(9) for f in (0, 1)
                 if torch.equal(out[i], padded[i, :, dy:dy + 32, dx:dx + 32].flip(-1) if f
                                else padded[i, :, dy:dy + 32, dx:dx + 32])]
        assert len(found) == 1
        hits[found[0][0], found[0][1]] += 1
        flips += found[0][2]
    assert abs(flips - 150) < 4 * np.sqrt(75)
    assert hits.sum(0).min() > 10 and hits.sum(1).min() > 10  # every row and column offset occurs


def test_augment_determinism_flip_only_and_device_generator():
    x = torch.randint(0, 256, (64, 3, 8, 8), dtype=torch.uint8)
    a = augment(x, torch.Generator().manual_seed(5))
    assert torch.equal(a, augment(x, torch.Generator().manual_seed(5)))
    assert not torch.equal(a, augment(x, torch.Generator().manual_seed(6)))
    f = augment(x.float(), torch.Generator().manual_seed(1), pad=0)
    same = (f == x.float()).flatten(1).all(1)
    mirrored = (f == x.float().flip(-1)).flatten(1).all(1)
    assert torch.all(same | mirrored) and 0 < same.sum() < 64
    assert torch.equal(augment(x, torch.Generator().manual_seed(1), pad=0, flip=False), x)
    with pytest.raises(ValueError, match="B x C x H x W"):
        augment(x[0])


# ---------------------------------------------------------------- the real shared archive
def test_real_cifar10_jpeg_archive_if_available(monkeypatch):
    env = os.environ.get("REPLICATE_DATA")
    if not env or not (Path(env) / "cifar10-jpeg.tar.gz").is_file():
        pytest.skip("REPLICATE_DATA does not point to a folder with cifar10-jpeg.tar.gz")
    monkeypatch.delenv("REPLICATE_CACHE")  # use the shared decode cache (<repo>/.cache/data)
    s = load("cifar10", download=False)
    assert s.info.display_name == "CIFAR-10 (JPEG q75)"
    assert (len(s.train[1]), len(s.val[1]), len(s.test[1])) == (45000, 5000, 10000)
    y_all = torch.cat([s.train[1], s.val[1]])
    assert torch.all(torch.bincount(y_all) == 5000) and torch.all(torch.bincount(s.test[1]) == 1000)
    mean = torch.cat([s.train[0], s.val[0]]).float().mean(dim=(0, 2, 3)) / 255
    assert torch.allclose(mean, torch.tensor(CIFAR_MEAN), atol=0.003)


# ---------------------------------------------------------------- generated test data
def test_generated_official_files_read_by_torchvision_as_by_us(tmp_path, monkeypatch):
    """Independent oracle: torchvision's CIFAR-10/100 and SVHN readers (md5 checks off, the
    files being generated) see the same images and labels as ``load``."""
    import torchvision.datasets as tvd
    import torchvision.datasets.cifar as tv_cifar
    import torchvision.datasets.svhn as tv_svhn

    from replicate.data import generated

    for module in (tv_cifar, tv_svhn):
        monkeypatch.setattr(module, "check_integrity", lambda *a, **k: True)
    root = generated.write_data_dir(tmp_path / "gen", ("cifar10",))
    generated.write_cifar100(root, n_train=30, n_test=10)
    generated.write_svhn(root, n_train=30, n_test=10)
    for name, ours, theirs in (
            ("cifar10", load("cifar10", split="none", data_dir=root), tvd.CIFAR10(str(root), train=False)),
            ("cifar100", load("cifar100", split="none", data_dir=root), tvd.CIFAR100(str(root), train=False)),
            ("svhn", load("svhn", split="none", data_dir=root), tvd.SVHN(str(root / "svhn"), split="test"))):
        x = theirs.data if name == "svhn" else theirs.data.transpose(0, 3, 1, 2)
        y = theirs.labels if name == "svhn" else theirs.targets
        assert torch.equal(ours.test[0], torch.from_numpy(np.ascontiguousarray(x))), name
        assert torch.equal(ours.test[1], torch.as_tensor(y, dtype=torch.int64)), name
        if name != "svhn":
            assert ours.info.classes == tuple(theirs.classes)


def test_generated_data_are_labelled_and_never_downloaded(tmp_path, monkeypatch):
    from replicate.data import archives, cifar, generated

    monkeypatch.delenv("REPLICATE_OFFLINE")
    root = generated.write_data_dir(tmp_path / "gen", ("cifar10",))
    s = load("cifar10", data_dir=root)
    assert s.info.display_name == "CIFAR-10 (generated test data)" and s.info.generated
    assert "generated test data" in s.info.notes[0]
    assert "(generated test data)" in load("cifar10c", data_dir=root).info.display_name
    assert archives.download_allowed(True, tmp_path) and not archives.download_allowed(True, root)
    monkeypatch.setattr(cifar, "_try_download", lambda *a: pytest.fail("a download was attempted"))
    with pytest.raises(FileNotFoundError, match="holds generated test data"):
        load("cifar100", data_dir=root, download=True)


def test_generated_data_dir_never_mixes_with_real_files(tmp_path):
    """A real copy in the cache folder is found for a real data directory, never for a generated one."""
    from replicate.data import generated

    write_cifar10(tmp_path / "cache" / "data")  # e.g. downloaded there earlier
    assert load("cifar10", data_dir=tmp_path / "empty", val_size=5, download=False).info.display_name == "CIFAR-10"
    root = tmp_path / "gen"
    root.mkdir()
    generated.write_marker(root, ())
    with pytest.raises(FileNotFoundError, match="CIFAR-10"):
        load("cifar10", data_dir=root, download=False)


def test_read_only_generated_dir_extracts_and_caches_in_a_folder_of_its_own(tmp_path):
    from replicate.data import archives, generated

    root = tmp_path / "gen"
    root.mkdir()
    generated.write_marker(root, ("20newsgroups",))
    generated.write_20newsgroups(root, train_per_group=2, test_per_group=1)
    os.chmod(root, 0o555)
    try:
        for _ in range(2):  # the second load finds the extraction and the cache
            s = load("20newsgroups", data_dir=root, split="none", max_len=20)
            assert s.info.generated and len(s.train[1]) == 40
    finally:
        os.chmod(root, 0o755)
    own = archives.fallback_dir(root)
    assert own.parent == tmp_path / "cache" / "data" and own.name.startswith("generated-")
    assert files_under(tmp_path / "cache" / "data") == [own.name] + [f"{own.name}/{f}" for f in files_under(own)]
    assert (own / "20news-bydate" / "20news-bydate-train").is_dir()


def test_write_data_dir_refuses_folders_that_may_hold_real_data(tmp_path):
    from replicate.data import generated

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "cifar10-jpeg.tar.gz").write_bytes(b"real")
    with pytest.raises(ValueError, match="not an empty or generated data directory"):
        generated.write_data_dir(tmp_path / "real")
    with pytest.raises(ValueError, match="tiny_imagenet"):
        generated.write_data_dir(tmp_path / "new", ("imagenet",))
    root = generated.write_data_dir(tmp_path / "new", ("cifar10",))
    assert generated.write_data_dir(root, ("cifar10",)) == root  # a generated folder may be rewritten


def test_generated_data_are_learnable(tmp_path):
    """Nearest class mean on the images, multinomial naive Bayes on the token ids: both well above chance."""
    from sklearn.naive_bayes import MultinomialNB

    from replicate.data import generated

    root = tmp_path / "gen"
    generated.write_20newsgroups(root, train_per_group=20, test_per_group=10)
    generated.write_cifar10(root, n_train=500, n_test=200)
    s = load("cifar10", data_dir=root, split="none")
    x_tr, y_tr = s.train[0].float().mean((2, 3)), s.train[1]
    means = torch.stack([x_tr[y_tr == k].mean(0) for k in range(10)])
    pred = torch.cdist(s.test[0].float().mean((2, 3)), means).argmin(1)
    assert (pred == s.test[1]).float().mean() > 0.9
    t = load("20newsgroups", data_dir=root, split="none", max_len=100)

    def bag(x):
        return np.stack([np.bincount(r, minlength=len(t.info.vocab))[1:] for r in x.numpy()])

    nb = MultinomialNB().fit(bag(t.train[0]), t.train[1].numpy())
    assert (nb.predict(bag(t.test[0])) == t.test[1].numpy()).mean() > 0.9


def test_cli_generate_then_check(tmp_path, capsys, monkeypatch):
    from replicate import cli

    monkeypatch.setenv("REPLICATE_DATA", str(tmp_path / "unused"))  # restored after --data-dir sets it
    assert cli.main(["data", "generate", str(tmp_path / "gen"), "--datasets", "cifar10"]) == 0
    assert "generated test data (cifar10)" in capsys.readouterr().out
    assert cli.main(["data", "check", "cifar10", "--data-dir", str(tmp_path / "gen")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cifar10: CIFAR-10 (generated test data): 1000 train / 5000 validation / 500 test")
    with pytest.raises(SystemExit):  # argparse: invalid choice
        cli.main(["data", "generate", str(tmp_path / "gen2"), "--datasets", "mnist"])


def test_session_data_directory(data_directory):
    """Tests run offline on the session's data directory: the real one, else generated test data."""
    from replicate import config
    from replicate.data import archives

    assert os.environ.get("REPLICATE_OFFLINE") and config.data_dir() == data_directory
    if archives.is_generated(data_directory):
        assert load("cifar10").info.display_name == "CIFAR-10 (generated test data)"
