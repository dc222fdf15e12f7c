"""Normalisation and training augmentation as batched tensor operations (CPU or GPU).

The reference code (Mukhoti et al. 2020, ``Data/cifar10.py``) applies, to training
images only, ``RandomCrop(32, padding=4)`` (zero padding = black pixels) and
``RandomHorizontalFlip()`` on the PIL image, then ``ToTensor`` and
``Normalize(mean, std)``. :func:`augment` does the same crop and flip for a whole batch
at once, so call it on the uint8 (or [0, 1]) images *before* :func:`normalize` to pad
with black exactly as the reference does.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F


def normalize(x: torch.Tensor, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """``(x / 255 - mean) / std`` per channel, as float32 on ``x``'s device.

    ``x`` is uint8 in [0, 255] (any float input is taken to be in [0, 1] already) with
    channels on dimension 1 (B x C x H x W) or 0 (C x H x W). ``mean``/``std`` are
    sequences or float32 tensors on ``x``'s device.
    """
    if len(mean) != len(std):
        raise ValueError(f"mean and std must have the same length, got {len(mean)} and {len(std)}")
    xf = x.float() / 255.0 if x.dtype == torch.uint8 else x.float()
    shape = [1] * xf.dim()
    cdim = 1 if xf.dim() == 4 else 0
    if xf.shape[cdim] != len(mean):
        raise ValueError(f"x has {xf.shape[cdim]} channels but mean/std have {len(mean)} entries")
    shape[cdim] = len(mean)
    # as_tensor: a float32 tensor already on x's device is used as it is (no host-to-device
    # copy, so a captured CUDA graph can normalise with precomputed statistics)
    m = torch.as_tensor(mean, dtype=torch.float32, device=x.device).view(shape)
    s = torch.as_tensor(std, dtype=torch.float32, device=x.device).view(shape)
    return (xf - m) / s


def crop_flip_draws(batch: int, generator: torch.Generator | None = None, pad: int = 4, flip: bool = True,
                    device=None, out: tuple | None = None):
    """The random draws of :func:`augment` for ``batch`` images: ``(dy, dx, mirror)``.

    ``dy``, ``dx`` are int64 offsets uniform on ``{0, ..., 2 * pad}`` and ``mirror`` a bool
    mask drawn as ``uniform(0, 1) < 0.5`` (all False without ``flip``, and then nothing is
    drawn for it). They are drawn in this order from ``generator`` on its device (or on
    ``device`` when there is no generator). ``out = (dy, dx, u)`` writes the draws into
    existing tensors instead (int64, int64 and float32 of length ``batch`` on the
    generator's device; ``u`` receives the uniforms) - the static buffers of a captured
    training step - consuming the generator exactly as the allocating form does.
    """
    if not isinstance(pad, int) or pad < 0:
        raise ValueError(f"pad must be a non-negative int, got {pad!r}")
    gdev = generator.device if generator is not None else (torch.device(device) if device is not None else None)
    if out is not None:
        dy, dx, u = out
        torch.randint(0, 2 * pad + 1, (batch,), generator=generator, out=dy)
        torch.randint(0, 2 * pad + 1, (batch,), generator=generator, out=dx)
        if flip:
            torch.rand(batch, generator=generator, out=u)
            return dy, dx, u < 0.5
        return dy, dx, torch.zeros(batch, dtype=torch.bool, device=dy.device)
    dy = torch.randint(0, 2 * pad + 1, (batch,), generator=generator, device=gdev)
    dx = torch.randint(0, 2 * pad + 1, (batch,), generator=generator, device=gdev)
    if flip:
        mirror = torch.rand(batch, generator=generator, device=gdev) < 0.5
    else:
        mirror = torch.zeros(batch, dtype=torch.bool, device=dy.device)
    return dy, dx, mirror


def crop_flip(x: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor, mirror: torch.Tensor, pad: int = 4) -> torch.Tensor:
    """Cut the H x W window at offsets ``(dy, dx)`` out of each zero-padded image and mirror
    it left-right where ``mirror`` is True: one gather, no per-sample loop, no host sync
    (so it can run inside a captured CUDA graph). Output dtype = input dtype."""
    if x.dim() != 4:
        raise ValueError(f"x must be a B x C x H x W batch, got shape {tuple(x.shape)}")
    b, c, h, w = x.shape
    dy, dx, mirror = dy.to(x.device), dx.to(x.device), mirror.to(x.device)
    padded = F.pad(x, (pad, pad, pad, pad)) if pad else x
    ar_h = torch.arange(h, device=x.device)
    ar_w = torch.arange(w, device=x.device)
    rows = dy[:, None] + ar_h[None, :]                                   # B x H
    cols_src = torch.where(mirror[:, None], (w - 1) - ar_w[None, :], ar_w[None, :])
    cols = dx[:, None] + cols_src                                        # B x W
    wp = w + 2 * pad
    flat = padded.reshape(b, c, -1)
    index = (rows[:, :, None] * wp + cols[:, None, :]).reshape(b, 1, h * w).expand(b, c, h * w)
    return torch.gather(flat, 2, index).reshape(b, c, h, w)


def augment(x: torch.Tensor, generator: torch.Generator | None = None, pad: int = 4,
            flip: bool = True) -> torch.Tensor:
    """Random crop with ``pad`` pixels of zero padding and random horizontal flip, batched.

    Each image of the B x C x H x W batch is padded by ``pad`` zeros on every side, an
    H x W window at offsets ``(dy, dx)`` uniform on ``{0, ..., 2 * pad}`` is cut out, and
    with probability 1/2 (``flip=True``) it is mirrored left-right; this is the law of
    torchvision's ``RandomCrop(H, padding=pad)`` followed by ``RandomHorizontalFlip()``.
    All draws come from ``generator`` (any device; the draws are moved to ``x``'s
    device), so the result is a deterministic function of the generator state. The
    crop and flip are one gather: no per-sample Python loop. Output dtype = input dtype.
    It is :func:`crop_flip_draws` followed by :func:`crop_flip`.
    """
    if x.dim() != 4:
        raise ValueError(f"x must be a B x C x H x W batch, got shape {tuple(x.shape)}")
    if not isinstance(pad, int) or pad < 0:
        raise ValueError(f"pad must be a non-negative int, got {pad!r}")
    dy, dx, mirror = crop_flip_draws(x.shape[0], generator, pad, flip, device=x.device)
    return crop_flip(x, dy, dx, mirror, pad)
