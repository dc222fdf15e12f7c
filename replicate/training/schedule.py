"""Optimiser and learning-rate schedule of the papers' protocol (the book's page "The authors' code").

Mukhoti et al. (2020), Appendix D: SGD, momentum 0.9, lr 0.1 for the first 150 epochs,
0.01 for the next 100 and 0.001 for the last 100 (of 350), weight decay 5e-4. Milestones
are given here as fractions of the total number of epochs, ``m_i = max(1, round(f_i * E))``,
so that a shortened run keeps the schedule's shape (and the first epoch always runs at the
initial rate).

The learning rate of 0-based epoch ``e`` is ``lr * decay ** #{i : m_i <= e + s}``, where
``s = 0`` for a scheduler stepped after each epoch (the PyTorch convention) and ``s = 1``
for Mukhoti's loop, which calls ``scheduler.step()`` at the *start* of each epoch so that
every decay lands one epoch early (``lr_step_at_epoch_start=True``). The rate is a pure
function of the epoch, so a resumed run needs no scheduler state.
"""
from __future__ import annotations

import torch

OPTIMIZERS = ("sgd", "adam")


def milestone_epochs(milestones, epochs: int) -> list[int]:
    """Milestone fractions in (0, 1] turned into epoch indices ``max(1, round(f * epochs))``."""
    out = []
    for f in milestones:
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 < float(f) <= 1.0:
            raise ValueError(f"milestones must be fractions in (0, 1], got {f!r}")
        out.append(max(1, int(round(float(f) * epochs))))
    if out != sorted(out):
        raise ValueError(f"milestones must be increasing, got {tuple(milestones)!r}")
    return out


def lr_at_epoch(epoch: int, *, lr: float, epochs: int, milestones=(), lr_decay: float = 0.1,
                lr_step_at_epoch_start: bool = False) -> float:
    """Learning rate of 0-based ``epoch`` under the multistep schedule (module docstring)."""
    shift = 1 if lr_step_at_epoch_start else 0
    n = sum(1 for m in milestone_epochs(milestones, epochs) if m <= epoch + shift)
    out = float(lr)
    for _ in range(n):  # repeated multiplication, bit-for-bit as torch's MultiStepLR does it
        out *= float(lr_decay)
    return out


def make_optimizer(params, *, optimizer: str = "sgd", lr: float = 0.1, momentum: float = 0.9,
                   weight_decay: float = 5e-4, nesterov: bool = False,
                   betas=(0.9, 0.999)) -> torch.optim.Optimizer:
    """SGD (the image protocol) or Adam (Mukhoti's 20 Newsgroups protocol)."""
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay,
                               nesterov=nesterov)
    if optimizer == "adam":
        return torch.optim.Adam(params, lr=lr, betas=tuple(betas), weight_decay=weight_decay)
    raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Set the learning rate of every parameter group."""
    for group in optimizer.param_groups:
        group["lr"] = lr
