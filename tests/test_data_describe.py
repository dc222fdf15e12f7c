"""What the chapters say about the loaded copy of a data set is true for each copy: the
official files, the JPEG q75 re-encoding and generated test data, each written here in its
real file format and read by the real loader."""
from __future__ import annotations

import pytest

from replicate import data
from replicate.data import generated


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """CIFAR-10 loaded from three data directories: official batches, the JPEG archive, and a
    generated data directory (marker file)."""
    root = tmp_path_factory.mktemp("copies")
    generated.write_cifar10(root / "official", n_train=300, n_test=50)
    generated.write_cifar10_jpeg(root / "jpeg", n_train=300, n_test=50)
    generated.write_data_dir(root / "gen", ("cifar10",))
    return {name: data.load("cifar10", data_dir=root / name, val_size=100, download=False)
            for name in ("official", "jpeg", "gen")}


def test_each_copy_is_described_by_what_was_loaded(copies):
    official, jpeg, gen = (copies[k].info for k in ("official", "jpeg", "gen"))
    assert (official.generated, official.notes, official.display_name) == (False, (), "CIFAR-10")
    text = data.describe_copy(official)
    assert text.startswith("CIFAR-10, the official files") and "not numerically" not in text
    assert "JPEG" not in text and "generated" not in text

    assert not jpeg.generated and jpeg.notes
    text = data.describe_copy(jpeg)
    assert text.startswith("CIFAR-10 (JPEG q75), a copy that differs from the official files")
    assert "not numerically comparable to the papers'" in text and "generated" not in text
    assert all(note.rstrip(".") in text for note in jpeg.notes)

    assert gen.generated
    text = data.describe_copy(gen)
    assert text.startswith("CIFAR-10 (generated test data), which is not the real data set")
    assert "say nothing about the papers' claims" in text and "the official files, as" not in text
    assert all(note.rstrip(".") in text for note in gen.notes)
    for info in (official, jpeg, gen):
        assert data.describe_copy(info).endswith(".") and "\n" not in data.describe_copy(info)


def test_describe_copy_rejects_other_objects():
    with pytest.raises(ValueError, match="info must be a replicate.data.DatasetInfo; got str"):
        data.describe_copy("CIFAR-10")


def test_split_sizes_count_each_split(copies):
    s = copies["official"]
    frame = data.split_sizes(s)
    assert list(frame.split) == ["train", "validation", "test"]
    assert list(frame.images) == [200, 100, 50]                  # 300 training images, 100 validate
    assert list(frame.images) == [int(s.train[0].shape[0]), int(s.val[0].shape[0]), int(s.test[0].shape[0])]
    with pytest.raises(ValueError, match="splits must be a replicate.data.Splits"):
        data.split_sizes(s.info)
