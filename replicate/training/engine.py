"""The training loop of the papers' protocol, lean and resumable.

One call of :func:`train` runs Mukhoti et al.'s (2020) loop (the book's page "The authors' code"): per
epoch, the lr of the multistep schedule, the loss's ``on_epoch_start`` (scheduled FLS
gammas), shuffled mini-batches with on-device augmentation and normalisation, optional
gradient-norm clipping, then - for losses that need it (AdaFocal, Ghosh et al. 2022,
Sec. 4; AdaDualFocal) - the once-per-epoch update from the validation set with the model
in eval mode. The model is evaluated at the last epoch (or, for ``select =
"best_val_accuracy"``, at the epoch with the best validation accuracy, Mukhoti et al.'s
text protocol), optionally after every epoch as well (``eval_every_epoch``: metrics of
the train - un-augmented, eval mode -, validation and test sets, the last layer's weight
norm and per-sample gradient-norm histogram; see :mod:`.diagnostics`).

Design: the data stay on the device as tensors; shuffling and augmentation draw from
explicit ``torch.Generator`` objects; loss and accuracy are summed on the device and
read once per epoch, which is also when NaN is detected. After every epoch a checkpoint
(model, optimiser, loss buffers, generator states, history) is written atomically, so a
run killed at any point resumes and finishes exactly as an uninterrupted one would
(bit-identical on the CPU in deterministic mode). A ``deadline`` stops the run cleanly
*before* an epoch that would not finish in time (:class:`TrainingPaused`): on a machine
whose commands are cut off after a few minutes, the same command run again resumes
from the checkpoint.

The steps of an epoch run in one of the engines of :mod:`.steps` (``settings.engine``):
``eager`` (a plain loop), ``graph`` (the whole step captured as a CUDA graph and
replayed: the fast mode on a GPU) or ``static`` (the graph engine's code without the
capture, for the CPU tests); ``auto`` is ``graph`` on CUDA and ``eager`` on the CPU.
The engine and ``memory_format`` are execution choices, outside a run's key.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..array_io import ProbabilitiesAsLogitsError
from ..profiles import Protocol
from . import checkpoint as ckpt
from .diagnostics import (fc_weight_norm, last_layer_grad_norms, loss_reduction, norm_histogram, predict,
                          split_summary, train_reliability, validation_bins)
from .progress import Reporter, resolve_mode
from .schedule import OPTIMIZERS, lr_at_epoch, make_optimizer, milestone_epochs, set_lr
from .steps import ENGINES, MEMORY_FORMATS, EpochSteps, choose_engine, choose_memory_format

SELECT = ("last", "best_val_accuracy")
PRECISIONS = ("float32", "bf16")
#: Settings that choose how a run executes, not what it computes: left out of a checkpoint's
#: fingerprint (a run may resume under another engine) and of a run's key.
EXECUTION_FIELDS = ("engine", "memory_format")


class TrainingDiverged(RuntimeError):
    """The run produced a non-finite loss or parameter, or an AdaFocal gamma exploded."""


class TrainingPaused(RuntimeError):
    """The run stopped before an epoch that would have passed its ``deadline``; its checkpoint
    holds every finished epoch, and the same call resumes it."""

    def __init__(self, message: str, epochs_done: int = 0, epochs: int = 0):
        super().__init__(message)
        self.epochs_done, self.epochs = epochs_done, epochs


@dataclass(frozen=True)
class TrainSettings(Protocol):
    """Everything the loop needs besides model, loss and data: the protocol's fields
    (:class:`replicate.profiles.Protocol`, defaults: the paper protocol) and the loop's own."""

    nesterov: bool = False
    betas: tuple = (0.9, 0.999)
    seed: int = 1
    eval_batch_size: int = 500
    gamma_limit: float = 1e6
    engine: str = "auto"
    memory_format: str = "auto"

    def validate(self) -> "TrainSettings":
        """Raise ValueError naming the first bad setting and its allowed values."""
        def integer(name, lo):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")

        def number(name, lo, hi, lo_open=False, hi_open=False, none_ok=False):
            v = getattr(self, name)
            if v is None and none_ok:
                return
            ok = not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v)
            ok = ok and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
            if not ok:
                rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
                raise ValueError(f"{name} must be a number in {rng}{' or None' if none_ok else ''}, got {v!r}")

        for name, lo in (("epochs", 1), ("batch_size", 1), ("eval_batch_size", 1), ("seed", 0)):
            integer(name, lo)
        number("lr", 0, math.inf, lo_open=True, hi_open=True)
        number("gamma_limit", 0, math.inf, lo_open=True, hi_open=True)
        number("momentum", 0, 1, hi_open=True)
        number("weight_decay", 0, math.inf, hi_open=True)
        number("lr_decay", 0, 1, lo_open=True)
        number("clip_grad_norm", 0, math.inf, lo_open=True, hi_open=True, none_ok=True)
        for name in ("nesterov", "lr_step_at_epoch_start", "augment", "eval_every_epoch"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name, allowed in (("optimizer", OPTIMIZERS), ("select", SELECT), ("precision", PRECISIONS),
                              ("engine", ENGINES), ("memory_format", MEMORY_FORMATS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")
        if not isinstance(self.betas, (tuple, list)) or len(self.betas) != 2 or \
                not all(isinstance(b, (int, float)) and 0 <= b < 1 for b in self.betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        if not isinstance(self.milestones, (tuple, list)):
            raise ValueError(f"milestones must be a list of fractions in (0, 1], got {self.milestones!r}")
        milestone_epochs(self.milestones, self.epochs)
        return self

    def fingerprint(self) -> str:
        """Hash of the settings a checkpoint must share to be resumed (not the execution choices)."""
        d = {k: v for k, v in asdict(self).items() if k not in EXECUTION_FIELDS}
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class TrainResult:
    """What :func:`train` returns: the evaluated model, its logits and the per-epoch history."""

    model: torch.nn.Module
    history: list
    logits: dict = field(default_factory=dict)  # split -> (logits float32 CPU, labels int64 CPU)
    selected_epoch: int = -1
    resumed_from: int = 0
    wall_time: float = 0.0
    device: str = "cpu"
    engine: str = "eager"
    engine_note: str = ""
    memory_format: str = "contiguous"


def select_device(device: str | torch.device | None = None) -> torch.device:
    """``None``/``"auto"``: CUDA when present, else the CPU; otherwise the named device, checked."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available; use 'auto' or 'cpu'")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N'; got {device!r}")
    return dev


def _diag_to_json(diag: dict) -> dict:
    return {k: (np.asarray(v).tolist() if np.ndim(v) else float(v) if np.isscalar(v) else v)
            for k, v in (diag or {}).items()}


def _check_loss(loss, epoch: int, settings: TrainSettings, diag: dict | None) -> None:
    where = f"epoch {epoch + 1}/{settings.epochs}"
    if diag and "gamma" in diag:
        gamma = np.asarray(diag["gamma"], dtype=float)
        if not np.all(np.isfinite(gamma)) or np.abs(gamma).max() > settings.gamma_limit:
            raise TrainingDiverged(
                f"AdaFocal gamma exploded at {where}: gamma per bin = {np.round(gamma, 3).tolist()} "
                f"(limit |gamma| <= {settings.gamma_limit:g}); lower the update rate lambda or bound gamma_max")
    if hasattr(loss, "check_finite"):
        try:
            ok = loss.check_finite()
        except ProbabilitiesAsLogitsError:
            raise
        except (ValueError, RuntimeError) as err:
            raise TrainingDiverged(f"loss state not finite at {where}: {err}") from err
        if ok is False:
            raise TrainingDiverged(f"loss state (buffers) not finite at {where}")


def _resume(state, *, checkpoint, fingerprint, device, model, opt, loss, gens):
    """Load a checkpoint's state into the run; returns ``(history, best, next epoch)``."""
    if state.get("fingerprint") != fingerprint:
        raise ValueError(f"checkpoint {checkpoint} belongs to another run "
                         f"({state.get('fingerprint')} != {fingerprint}); delete it to start afresh")
    if state["device_type"] != device.type:
        raise ValueError(f"checkpoint {checkpoint} was written on {state['device_type']}; resume it "
                         f"there or delete it to start afresh on {device.type}")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    if isinstance(loss, torch.nn.Module):
        loss.load_state_dict(state["loss"])
    ckpt.set_rng_state(state["rng"], gens, device)
    return state["history"], state["best"], state["epoch"] + 1


def _evaluate_epoch(model, loss, xs, ys, info, settings: TrainSettings, epoch: int, row: dict) -> None:
    """Everything measured after an epoch's steps, added to ``row``: validation accuracy (when
    needed), the loss's validation update and health check, and the optional full metrics."""
    kw = dict(batch_size=settings.eval_batch_size, precision=settings.precision)
    needs_val = bool(getattr(loss, "needs_validation", False))
    val_logits = None
    if needs_val or settings.eval_every_epoch or settings.select != "last":
        val_logits = predict(model, xs["val"], info, split="val", **kw)
        row["val_accuracy"] = float((val_logits.argmax(1) == ys["val"]).float().mean())
    diag = None
    if needs_val:
        diag = loss.update_from_validation(val_logits, ys["val"])
        row["loss_state"] = _diag_to_json(diag)
    _check_loss(loss, epoch, settings, diag)
    if settings.eval_every_epoch:
        norms, train_logits = last_layer_grad_norms(model, loss, xs["train"], ys["train"], info,
                                                    return_logits=True, **kw)
        row["grad_norms"] = norm_histogram(norms)
        for split, lg in (("train", train_logits), ("val", val_logits),
                          ("test", predict(model, xs["test"], info, split="test", **kw))):
            row[split] = split_summary(lg, ys[split])
        row["train_reliability"] = train_reliability(train_logits, ys["train"])
        row["val_bins"] = validation_bins(val_logits, ys["val"], train_logits, ys["train"])


def train(model: torch.nn.Module, loss, splits, settings: TrainSettings, *, device=None,
          deterministic: bool = False, checkpoint: str | Path | None = None, key: str = "",
          progress: str = "auto", label: str = "", on_epoch_end=None, deadline: float | None = None) -> TrainResult:
    """Train ``model`` with ``loss`` on ``splits`` (``.train/.val/.test`` tensors, ``.info``).

    ``checkpoint``: a file path; if it exists and belongs to this run (same ``key`` and
    settings), training resumes after its epoch; it is rewritten atomically after every
    epoch. ``on_epoch_end(epoch, row)`` is called after each checkpoint. ``deadline``: a
    :func:`time.monotonic` time; an epoch starts only if the longest epoch of this call
    (or, for the first, the last one recorded) would end before it, else
    :class:`TrainingPaused` is raised (with a checkpoint, the same call resumes). Raises
    :class:`TrainingDiverged` on NaN or an exploding AdaFocal gamma.

    Parameters
    ----------
    model : torch.nn.Module
        The network (``.features`` and ``.fc`` for the diagnostics).
    loss : callable
        The training loss; its ``reduction`` must be ``"sum"`` or ``"mean"`` (ValueError
        otherwise). The book's runs pass the papers' reduction explicitly
        (:func:`replicate.runs.resolve`); a :class:`replicate.losses.CalibrationLoss` checks
        its inputs on the device during the steps (``deferred_checks``) and raises
        :class:`replicate.array_io.ProbabilitiesAsLogitsError` at the epoch's end when the
        network's outputs were probabilities.
    splits : replicate.data.Splits
        Train, validation and test tensors and ``.info``.
    settings : TrainSettings
        The protocol.
    device, deterministic, checkpoint, key, progress, label, on_epoch_end, deadline
        As described above (``device`` None: the best available; ``key``: the run key
        that a checkpoint must match; ``progress``/``label``: the progress display).
    """
    settings.validate()
    resolve_mode(progress)
    device = select_device(device)
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, (int, float))):
        raise ValueError(f"deadline must be a time.monotonic() value or None; got {deadline!r}")
    t_start = time.perf_counter()
    fingerprint = f"{key}:{settings.fingerprint()}"
    xs = {s: getattr(splits, s)[0].to(device) for s in ("train", "val", "test")}
    ys = {s: getattr(splits, s)[1].to(device).long() for s in ("train", "val", "test")}
    n_train = xs["train"].shape[0]
    if n_train == 0 or xs["val"].shape[0] == 0:
        raise ValueError("the training and validation sets must not be empty")
    reduction = loss_reduction(loss)
    if reduction not in ("sum", "mean"):
        raise ValueError(f"the training loss's reduction must be one of ['sum', 'mean'] (a scalar to "
                         f"differentiate); got {reduction!r}")
    fork_devices = [device.index or 0] if device.type == "cuda" else []
    with ckpt.deterministic_mode(deterministic), torch.random.fork_rng(devices=fork_devices):
        torch.manual_seed(settings.seed)
        g_perm = torch.Generator().manual_seed(settings.seed)
        g_aug = torch.Generator(device=device).manual_seed(settings.seed + (1 << 32))
        gens = {"perm": g_perm, "aug": g_aug}
        model.to(device)
        if isinstance(loss, torch.nn.Module):
            loss.to(device)
        engine, engine_note = choose_engine(settings.engine, device, optimizer=settings.optimizer, loss=loss)
        kind = getattr(splits.info, "kind", "image") if not isinstance(splits.info, dict) else \
            splits.info.get("kind", "image")
        memory_format = choose_memory_format(settings.memory_format, device, settings.precision, kind)
        if memory_format == "channels_last":
            model.to(memory_format=torch.channels_last)  # before the optimiser sees the parameters
        opt = make_optimizer(model.parameters(), optimizer=settings.optimizer, lr=settings.lr,
                             momentum=settings.momentum, weight_decay=settings.weight_decay,
                             nesterov=settings.nesterov, betas=settings.betas)
        history, best, start = [], None, 0
        state = ckpt.load(checkpoint) if checkpoint else None
        if state is not None:
            history, best, start = _resume(state, checkpoint=checkpoint, fingerprint=fingerprint, device=device,
                                           model=model, opt=opt, loss=loss, gens=gens)
        steps = EpochSteps(model, loss, opt, xs["train"], ys["train"], splits.info, settings, g_aug, device,
                           engine=engine, memory_format=memory_format)
        reporter = Reporter(progress, settings.epochs, label=label, initial=start)
        longest = history[-1]["seconds"] if history and "seconds" in history[-1] else 0.0
        deferred = getattr(loss, "deferred_checks", None)
        if deferred is not None:  # the loss's input checks stay on the device during the steps
            loss.deferred_checks = True
        try:
            for epoch in range(start, settings.epochs):
                if deadline is not None and time.monotonic() + longest > deadline:
                    raise TrainingPaused(
                        f"paused before epoch {epoch + 1}/{settings.epochs}: it would not finish before the deadline "
                        f"(an epoch takes up to {longest:.1f}s); "
                        + ("the checkpoint holds the finished epochs - run the same command again to resume"
                           if checkpoint else "no checkpoint was kept, so nothing is saved"),
                        epochs_done=epoch, epochs=settings.epochs)
                t0 = time.perf_counter()
                lr = lr_at_epoch(epoch, lr=settings.lr, epochs=settings.epochs, milestones=settings.milestones,
                                 lr_decay=settings.lr_decay, lr_step_at_epoch_start=settings.lr_step_at_epoch_start)
                set_lr(opt, lr)
                if hasattr(loss, "on_epoch_start"):
                    loss.on_epoch_start(epoch, settings.epochs)
                perm = torch.randperm(n_train, generator=g_perm).to(device)
                loss_sum, correct, batches = steps.run(perm, lr)
                total = float(loss_sum)  # the epoch's one host synchronisation
                if not math.isfinite(total):
                    raise TrainingDiverged(f"non-finite training loss ({total}) at epoch {epoch + 1}/"
                                           f"{settings.epochs} (lr {lr:g}); the run is stopped, not recorded")
                row = {"epoch": epoch + 1, "lr": lr,
                       "train_loss": total / (n_train if reduction == "sum" else batches),
                       "train_accuracy": int(correct) / n_train, "fc_weight_norm": fc_weight_norm(model)}
                if not math.isfinite(row["fc_weight_norm"]):
                    raise TrainingDiverged(f"non-finite weights at epoch {epoch + 1}/{settings.epochs}")
                _evaluate_epoch(model, loss, xs, ys, splits.info, settings, epoch, row)
                if settings.select == "best_val_accuracy" and (best is None or row["val_accuracy"] > best["score"]):
                    best = {"epoch": epoch, "score": row["val_accuracy"],
                            "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}}
                row["seconds"] = time.perf_counter() - t0
                longest = max(longest, row["seconds"])
                history.append(row)
                if checkpoint:
                    ckpt.atomic_save({"fingerprint": fingerprint, "epoch": epoch, "device_type": device.type,
                                      "model": model.state_dict(), "optimizer": opt.state_dict(),
                                      "loss": loss.state_dict() if isinstance(loss, torch.nn.Module) else {},
                                      "rng": ckpt.rng_state(gens, device), "history": history, "best": best},
                                     checkpoint)
                reporter.update(epoch, row)
                if on_epoch_end is not None:
                    on_epoch_end(epoch, row)
        finally:
            reporter.close()
            if deferred is not None:
                loss.deferred_checks = deferred
        selected = settings.epochs - 1
        if best is not None:
            model.load_state_dict(best["model"])
            selected = best["epoch"]
        logits = {}
        for split in ("val", "test"):
            lg = predict(model, xs[split], splits.info, split=split, batch_size=settings.eval_batch_size,
                         precision=settings.precision)
            logits[split] = (lg.cpu(), ys[split].cpu())
        if not all(torch.isfinite(lg).all() for lg, _ in logits.values()):
            raise TrainingDiverged("non-finite logits at the final evaluation")
    return TrainResult(model=model, history=history, logits=logits, selected_epoch=selected + 1,
                       resumed_from=start, wall_time=time.perf_counter() - t_start, device=str(device),
                       engine=engine, engine_note=engine_note, memory_format=memory_format)
