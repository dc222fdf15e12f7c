"""The papers' names of data sets and networks, mapped to ours, so that tables of different
papers (and our runs) can be joined: ``"ResNet 50"``, ``"ResNet-50"`` -> ``resnet50``.

A paper module may add its own spellings in ``PAPER["dataset_keys"]`` /
``PAPER["model_keys"]``. A label that nothing maps keeps a slug of itself (lower case,
non-alphanumerics as ``_``); the tests require every stored label to be mapped.
"""
from __future__ import annotations

import re

#: Printed data set names -> our data set keys (``replicate.data.DATASETS`` where we have a loader).
DATASET_KEYS = {
    "CIFAR-10": "cifar10", "CIFAR10": "cifar10", "CIFAR-100": "cifar100", "CIFAR100": "cifar100",
    "Tiny-ImageNet": "tiny_imagenet", "Tiny ImageNet": "tiny_imagenet", "TinyImageNet": "tiny_imagenet",
    "ImageNet": "imagenet", "SVHN": "svhn", "20 Newsgroups": "20newsgroups", "20 Newsgroup": "20newsgroups",
    "20Newsgroups": "20newsgroups", "SST Binary": "sst_binary", "SST": "sst_binary",
    "CIFAR-10-C": "cifar10c", "CIFAR-10C": "cifar10c", "CIFAR10-C": "cifar10c",
}
#: Printed network names -> our model keys (``replicate.models.MODELS`` where we have one).
MODEL_KEYS = {
    "ResNet 50": "resnet50", "ResNet-50": "resnet50", "ResNet50": "resnet50", "R50": "resnet50",
    "ResNet 110": "resnet110", "ResNet-110": "resnet110", "ResNet110": "resnet110", "R110": "resnet110",
    "Wide ResNet 26-10": "wide_resnet26_10", "Wide-ResNet-26-10": "wide_resnet26_10", "WRN-26-10": "wide_resnet26_10",
    "Wide ResNet": "wide_resnet26_10", "WideResNet": "wide_resnet26_10", "WRN": "wide_resnet26_10",
    "DenseNet 121": "densenet121", "DenseNet-121": "densenet121", "DenseNet121": "densenet121",
    "DN121": "densenet121", "ResNet 18": "resnet18", "ResNet-18": "resnet18",
    "Resnet-50": "resnet50", "Resnet50": "resnet50", "Resnet-110": "resnet110", "Resnet110": "resnet110",
    "Wide-ResNet26-10": "wide_resnet26_10", "WideResnet": "wide_resnet26_10", "Densenet121": "densenet121",
    "Densenet-121": "densenet121",
    "Global Pooling CNN": "text_cnn", "Global-pool CNN": "text_cnn", "CNN": "text_cnn", "Tree LSTM": "tree_lstm", "Tree-LSTM": "tree_lstm",
}


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def dataset_key(label: str, extra: dict | None = None) -> str:
    """Our key of the printed data set name ``label`` (a slug of it when unknown)."""
    return {**DATASET_KEYS, **(extra or {})}.get(label, _slug(label))


def model_key(label: str, extra: dict | None = None) -> str:
    """Our key of the printed network name ``label`` (a slug of it when unknown)."""
    return {**MODEL_KEYS, **(extra or {})}.get(label, _slug(label))


def is_mapped(label: str, kind: str, extra: dict | None = None) -> bool:
    """Whether ``label`` (kind "dataset" or "model") has an explicit mapping."""
    table = {"dataset": DATASET_KEYS, "model": MODEL_KEYS}[kind]
    return label in {**table, **(extra or {})}
