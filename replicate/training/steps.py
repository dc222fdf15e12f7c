"""The training steps of one epoch: eager, or on static buffers replayed as one CUDA graph.

Issue #13 measured the eager loop on one H100 (ResNet-50, CIFAR-10, batch 128): the step
is bound by the CPU's kernel launches, not by the GPU. The ``graph`` engine removes that
overhead: the whole training step - gather of the batch from the device-resident data set,
crop/flip augmentation, normalisation, forward, loss, backward, gradient clipping and the
SGD step, plus the epoch's running loss and accuracy sums - is captured once as a CUDA
graph on *static* buffers and replayed for every full batch. Per step the host only
copies the batch's indices into the index buffer, draws the augmentation offsets into
their buffers (from the run's augmentation generator, in the eager loop's order) and
launches the graph. The mathematics is the eager loop's, step for step:

- the same permutation (CPU generator), the same augmentation draws (device generator,
  same order), the same summed or averaged loss, SGD with momentum and weight decay,
  clipping at ``clip_grad_norm``;
- loss state that changes between epochs (AdaFocal's per-bin gammas and bin edges, the
  scheduled FLS gamma) lives in buffers that the loss updates *in place*, so the replayed
  graph reads the current values; data-dependent choices (FLSD's gamma, DFL's ``p_j``,
  MMCE's empty-class case, AdaFocal's bin lookup) are written branch-free with
  ``bucketize``/``where``/``topk``, so nothing in a step synchronises with the host
  (:attr:`CalibrationLoss.graph_safe <replicate.losses.base.CalibrationLoss.graph_safe>`);
- the learning rate is a constant of the captured SGD kernels, so the graph is captured
  again whenever the schedule changes the rate (twice per run);
- the last, smaller batch of an epoch runs eagerly on the same parameters, gradients and
  momentum buffers (a graph has fixed shapes);
- the first :data:`WARMUP_STEPS` steps of a process run eagerly on a side stream before
  the first capture (CUDA's requirement: lazy initialisations must not be captured).

``static`` runs the same code - static buffers, in-place accumulators, the capture and
re-capture bookkeeping - without capturing, on any device. On the CPU it is bit-identical
to ``eager`` (tests/test_fast_step.py), which is how the CPU tests check everything of
the graph engine except the capture itself (``benchmarks/gpu_check.py`` checks that).

Which engine runs is an execution choice, not part of a run's key
(:data:`replicate.runs.spec.EXECUTION_ONLY`): it changes what the host does, not the
arithmetic. ``memory_format`` is the same kind of choice: ``channels_last`` lets cuDNN
pick NHWC kernels, which round differently (like any change of convolution algorithm)
but compute the same convolutions. ``precision`` (bf16 autocast) does change the
arithmetic and is part of the key.
"""
from __future__ import annotations

import torch

from ..data.transforms import crop_flip, crop_flip_draws, normalize
from .diagnostics import forward_logits, prepare

ENGINES = ("auto", "eager", "static", "graph")
MEMORY_FORMATS = ("auto", "contiguous", "channels_last")
#: Eager steps on a side stream before the first capture of a process (PyTorch's CUDA-graph
#: recipe uses three).
WARMUP_STEPS = 3
#: Whether the captured step has passed ``benchmarks/gpu_check.py`` on a real GPU. Until it
#: has, ``engine="auto"`` runs the same step uncaptured (``static``) on CUDA, and the
#: CUDA-graph capture is opt-in (``engine="graph"``). Set it True in the commit that records
#: a passing check in ``benchmarks/README.md``.
GRAPH_VERIFIED_ON_GPU = False
#: The augmentation of the reference code (RandomCrop(32, padding=4) + RandomHorizontalFlip).
PAD = 4


def _info(info, key, default=None):
    return info.get(key, default) if isinstance(info, dict) else getattr(info, key, default)


def choose_engine(engine: str, device: torch.device, *, optimizer: str, loss) -> tuple[str, str]:
    """The engine that runs, and why: ``auto`` is ``graph`` on CUDA once the capture is
    verified on a GPU (:data:`GRAPH_VERIFIED_ON_GPU`; until then ``static``, the same step
    uncaptured) and ``eager`` on the CPU.

    ``graph`` needs CUDA (else ValueError); it falls back to ``eager`` - with the reason
    returned - for an optimiser other than SGD (Adam's state would need ``capturable``) or
    a loss whose :attr:`graph_safe` is False.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    if engine == "graph" and device.type != "cuda":
        raise ValueError(f"engine 'graph' needs a CUDA device, got {device.type!r}; use 'auto', 'eager' or 'static'")
    if engine == "auto":
        if device.type != "cuda":
            return "eager", "auto: no CUDA device"
        if not GRAPH_VERIFIED_ON_GPU:
            return "static", ("auto: the CUDA-graph capture has not yet passed benchmarks/gpu_check.py on a GPU; "
                              "engine='graph' opts in")
        engine = "graph"
    if engine == "graph":
        if optimizer != "sgd":
            return "eager", f"optimizer {optimizer!r} is not captured (only SGD is)"
        if not getattr(loss, "graph_safe", False):
            reason = getattr(loss, "graph_unsafe_reason", "") or "the loss does not declare itself graph-safe"
            return "eager", f"loss {getattr(loss, 'name', type(loss).__name__)!r}: {reason}"
        return "graph", "whole step captured as a CUDA graph"
    return engine, "requested"


def choose_memory_format(memory_format: str, device: torch.device, precision: str, kind: str) -> str:
    """``auto``: ``channels_last`` for image data on CUDA under bf16 autocast, else ``contiguous``."""
    if memory_format not in MEMORY_FORMATS:
        raise ValueError(f"memory_format must be one of {', '.join(MEMORY_FORMATS)}; got {memory_format!r}")
    if memory_format == "auto":
        return "channels_last" if (device.type == "cuda" and precision == "bf16" and kind == "image") else "contiguous"
    return memory_format


def _to_format(xb: torch.Tensor, memory_format: str) -> torch.Tensor:
    if memory_format == "channels_last" and xb.dim() == 4:
        return xb.contiguous(memory_format=torch.channels_last)
    return xb


class EpochSteps:
    """The training steps of every epoch of one :func:`replicate.training.train` call.

    ``run(perm, lr)`` performs one epoch's steps over the permutation ``perm`` (on the
    device) at learning rate ``lr`` (already set in the optimiser) and returns the
    on-device ``(loss sum, correct count)`` and the number of batches.
    """

    def __init__(self, model, loss, opt, x, y, info, settings, g_aug, device, *, engine: str = "eager",
                 memory_format: str = "contiguous"):
        if engine not in ("eager", "static", "graph"):
            raise ValueError(f"EpochSteps: engine must be eager, static or graph; got {engine!r}")
        self.model, self.loss, self.opt = model, loss, opt
        self.x, self.y, self.info, self.settings = x, y, info, settings
        self.g_aug, self.device = g_aug, device
        self.engine, self.memory_format = engine, memory_format
        self.image = _info(info, "kind", "image") == "image"
        self.params = [p for p in model.parameters()]
        b = settings.batch_size
        self.acc_loss = torch.zeros((), device=device, dtype=torch.float64)
        self.acc_correct = torch.zeros((), device=device, dtype=torch.int64)
        if engine != "eager":
            self.idx = torch.zeros(b, dtype=torch.int64, device=device)
            gdev = g_aug.device if g_aug is not None else device
            self.draws = (torch.zeros(b, dtype=torch.int64, device=gdev),
                          torch.zeros(b, dtype=torch.int64, device=gdev),
                          torch.zeros(b, dtype=torch.float32, device=gdev))
            if self.image:
                self.mean = torch.tensor(_info(info, "mean"), dtype=torch.float32, device=device)
                self.std = torch.tensor(_info(info, "std"), dtype=torch.float32, device=device)
        self.graph = None
        self._static_grads: list = []
        self.graph_lr = None
        self.captures = 0       # graphs captured (static: captures that graph mode would make)
        self.warm = 0           # eager warm-up steps done before the first capture
        self._capturing = False

    # ------------------------------------------------------------------ eager
    def _eager_epoch(self, perm):
        s = self.settings
        loss_sum = torch.zeros((), device=self.device, dtype=torch.float64)
        correct = torch.zeros((), device=self.device, dtype=torch.int64)
        batches = 0
        for start in range(0, perm.shape[0], s.batch_size):
            idx = perm[start:start + s.batch_size]
            xb = _to_format(prepare(self.x[idx], self.info, augment=s.augment, generator=self.g_aug),
                            self.memory_format)
            yb = self.y[idx]
            logits = forward_logits(self.model, xb, self.device, s.precision)
            value = self.loss(logits, yb)
            self.opt.zero_grad(set_to_none=True)
            value.backward()
            if s.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(self.params, s.clip_grad_norm)
            self.opt.step()
            loss_sum += value.detach()
            correct += (logits.detach().argmax(1) == yb).sum()
            batches += 1
        return loss_sum, correct, batches

    # ------------------------------------------------------------------ static / graph
    def _fill(self, perm, start: int, n: int):
        """Indices and augmentation draws of the batch ``perm[start:start + n]``: written into
        the static buffers for a full batch, fresh tensors for the last, smaller one."""
        idx = perm[start:start + n]
        if n == self.settings.batch_size:
            self.idx.copy_(idx)
            if self.image and self.settings.augment:
                crop_flip_draws(n, self.g_aug, PAD, True, out=self.draws)
            return self.idx, self.draws
        draws = None
        if self.image and self.settings.augment:
            gdev = self.g_aug.device if self.g_aug is not None else self.device
            draws = (torch.empty(n, dtype=torch.int64, device=gdev), torch.empty(n, dtype=torch.int64, device=gdev),
                     torch.empty(n, dtype=torch.float32, device=gdev))
            crop_flip_draws(n, self.g_aug, PAD, True, out=draws)
        return idx, draws

    def _step(self, idx, draws, set_to_none: bool | None):
        """One training step on ``idx``/``draws``; ``set_to_none`` None leaves the gradients
        alone (a capture: backward then *writes* the graph's own gradient tensors)."""
        s = self.settings
        xb, yb = self.x.index_select(0, idx), self.y.index_select(0, idx)
        if self.image:
            if s.augment:
                dy, dx, u = draws
                xb = crop_flip(xb, dy, dx, u < 0.5, PAD)
            xb = _to_format(normalize(xb, self.mean, self.std), self.memory_format)
        logits = forward_logits(self.model, xb, self.device, s.precision, cache=not self._capturing)
        value = self.loss(logits, yb)
        if set_to_none is not None:
            self.opt.zero_grad(set_to_none=set_to_none)
        value.backward()
        if s.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.params, s.clip_grad_norm)
        self.opt.step()
        self.acc_loss.add_(value.detach())
        self.acc_correct.add_((logits.detach().argmax(1) == yb).sum())

    def _warmup_step(self, idx, draws):
        """An eager step before the first capture; on CUDA on a side stream (PyTorch's recipe)."""
        self.warm += 1
        if self.engine != "graph":
            return self._step(idx, draws, set_to_none=True)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._step(idx, draws, set_to_none=True)
        torch.cuda.current_stream(self.device).wait_stream(side)

    def _capture(self, lr: float) -> None:
        """Capture one step on the static buffers (the buffers already hold this step's batch)."""
        self.graph, self._static_grads = None, []  # release the previous graph and its gradients
        self.graph_lr = lr
        self.captures += 1
        if self.engine != "graph":
            return
        self.opt.zero_grad(set_to_none=True)  # backward in the capture allocates the graph's own gradients
        graph = torch.cuda.CUDAGraph()
        self._capturing = True
        try:
            with torch.cuda.graph(graph):
                self._step(self.idx, self.draws, set_to_none=None)
        finally:
            self._capturing = False
        self.graph = graph
        self._static_grads = [p.grad for p in self.params]  # keep them alive with the graph

    def _replay(self) -> None:
        if self.graph is not None:
            self.graph.replay()
        else:  # static: what the graph would do - overwrite the gradients, step
            self._step(self.idx, self.draws, set_to_none=True)

    def _static_epoch(self, perm, lr: float):
        b = self.settings.batch_size
        n = perm.shape[0]
        full = n // b
        self.acc_loss.zero_()
        self.acc_correct.zero_()
        for i in range(full):
            idx, draws = self._fill(perm, i * b, b)
            if self.graph_lr != lr:
                if self.captures == 0 and self.warm < WARMUP_STEPS:
                    self._warmup_step(idx, draws)
                    continue
                self._capture(lr)
            self._replay()
        if n > full * b:
            idx, draws = self._fill(perm, full * b, n - full * b)
            # with a live graph the gradients are its static tensors: zero them in place
            self._step(idx, draws, set_to_none=self.graph is None)
        return self.acc_loss, self.acc_correct, full + (1 if n > full * b else 0)

    def run(self, perm: torch.Tensor, lr: float):
        """One epoch's steps over ``perm`` at learning rate ``lr``."""
        self.model.train()
        if self.engine == "eager":
            return self._eager_epoch(perm)
        return self._static_epoch(perm, lr)
