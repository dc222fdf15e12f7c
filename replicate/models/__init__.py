"""Networks of the five papers (CIFAR variants, the book's page "The authors' code") and small CPU networks.

``get_model(name, num_classes, **kw)`` builds a network from the registry :data:`MODELS`:

=====================  ==============================================================
``resnet50``           CIFAR bottleneck ResNet [3, 4, 6, 3] (He et al. 2016)
``resnet110``          the papers' "ResNet-110": bottleneck [3, 4, 26, 3]
``resnet18``           CIFAR basic-block ResNet [2, 2, 2, 2] - the ``gpu`` profile
``wide_resnet26_10``   post-activation WRN-26-10, no dropout (Zagoruyko & Komodakis 2016)
``densenet121``        CIFAR DenseNet-121, growth 32 (Huang et al. 2017)
``resnet8``            He et al.'s CIFAR ResNet-8 (option A) - CPU profiles
``resnet20``           He et al.'s CIFAR ResNet-20 (option A, 0.27M) - CPU profiles
``tiny_cnn``           3-layer CNN, not from the papers - smoke/CPU profiles
``text_cnn``           global-pooling CNN for 20 Newsgroups (kw ``vocab_size`` required)
=====================  ==============================================================

Every model has ``model.fc`` (the final ``nn.Linear``) and ``model.features(x)`` (the
penultimate features), and ``model(x) == model.fc(model.features(x))``.
"""
from __future__ import annotations

from collections.abc import Callable

import torch.nn as nn

from .densenet import DenseNet, densenet121
from .resnet import BasicResNet, BottleneckResNet, CifarResNet, resnet8, resnet18, resnet20, resnet50, resnet110
from .small import TinyCNN
from .text_cnn import TextCNN
from .wide_resnet import WideResNet, wide_resnet26_10

MODELS: dict[str, Callable[..., nn.Module]] = {
    "resnet50": resnet50,
    "resnet110": resnet110,
    "resnet18": resnet18,
    "wide_resnet26_10": wide_resnet26_10,
    "densenet121": densenet121,
    "resnet8": resnet8,
    "resnet20": resnet20,
    "tiny_cnn": TinyCNN,
    "text_cnn": TextCNN,
}

__all__ = ["MODELS", "get_model", "count_parameters", "BasicResNet", "BottleneckResNet", "CifarResNet",
           "WideResNet", "DenseNet", "TinyCNN", "TextCNN"]


def get_model(name: str, num_classes: int, **kw) -> nn.Module:
    """Build model ``name`` (a key of :data:`MODELS`) with ``num_classes`` outputs.

    Extra keywords go to the constructor: ``tiny_cnn`` takes ``width``; ``text_cnn``
    takes ``vocab_size`` (required), ``embed_dim=100``, ``dropout=0.3``, ``embedding``,
    ``freeze_embedding``. The image models take no extra keywords.
    """
    if name not in MODELS:
        raise ValueError(f"name must be one of {tuple(MODELS)}, got {name!r}")
    if not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an int >= 2, got {num_classes!r}")
    if name == "text_cnn" and "vocab_size" not in kw:
        raise ValueError("text_cnn needs vocab_size= (e.g. len(splits.info.vocab))")
    try:
        return MODELS[name](num_classes=num_classes, **kw)
    except TypeError as exc:
        raise ValueError(f"bad keyword for model {name!r}: {exc}") from exc


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters (BN running statistics are buffers, not counted)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
