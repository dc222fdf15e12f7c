"""Conventions for the arrays of scores the package's public functions take (issue #31, item 2).

* **numpy in, numpy out; tensor in, tensor out.** A function that takes scores (logits,
  probabilities, confidences) and returns arrays returns them in the container of its
  *first* argument: numpy arrays (or nested lists) give numpy arrays, a torch tensor gives
  torch tensors on that tensor's device. Functions whose answer is one number (the
  calibration metrics of :mod:`replicate.metrics`) return a Python ``float`` for either.
  :func:`numpy_native` and :func:`torch_native` wrap a function written for one of the
  two so that it obeys the rule.
* **Probabilities where logits are expected.** Rows that all lie in ``[0, 1]`` and sum to 1
  within :data:`PROBS_ATOL` are almost never logits; a function that expects logits
  raises a one-line ValueError (:func:`reject_probs`) unless it offers ``is_probs=True``
  and is given it.

Imports torch only when a tensor is actually seen.
"""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["PROBS_ATOL", "ProbabilitiesAsLogitsError", "is_tensor", "looks_like_probs", "reject_probs",
           "numpy_native", "torch_native"]

#: Rows summing to 1 within this (and every entry in [0, 1]) look like probabilities.
PROBS_ATOL = 1e-6


class ProbabilitiesAsLogitsError(ValueError):
    """Probabilities were given where logits are expected (:func:`reject_probs`)."""


def is_tensor(x) -> bool:
    """True for a ``torch.Tensor`` (without importing torch when it was never imported).

    Parameters
    ----------
    x : object
        Anything.

    Example
    -------
    >>> import numpy as np; from replicate.array_io import is_tensor
    >>> is_tensor(np.zeros(3))
    False
    """
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "device")


def looks_like_probs(scores) -> bool:
    """True when ``scores`` is an (N, K) array (N >= 1, K >= 2) whose entries all lie in
    ``[0, 1]`` and whose rows all sum to 1 within :data:`PROBS_ATOL` (sums in float64).

    Parameters
    ----------
    scores : array_like or torch.Tensor
        What a function received where it expects logits.

    Example
    -------
    >>> import numpy as np; from replicate.array_io import looks_like_probs
    >>> looks_like_probs(np.array([[0.2, 0.8], [0.5, 0.5]])), looks_like_probs(np.array([[2.0, -1.0]]))
    (True, False)
    """
    if is_tensor(scores):
        import torch

        t = scores.detach()
        if t.dim() != 2 or t.shape[0] < 1 or t.shape[1] < 2 or not t.is_floating_point():
            return False
        lo, hi = torch.aminmax(t)
        if not (bool(lo >= 0) and bool(hi <= 1)):
            return False
        return bool(((t.to(torch.float64).sum(dim=1) - 1).abs() <= PROBS_ATOL).all())
    a = np.asarray(scores)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2 or a.dtype.kind != "f":
        return False
    with np.errstate(invalid="ignore"):
        if not (a.min() >= 0 and a.max() <= 1):
            return False
        return bool(np.all(np.abs(a.sum(axis=1, dtype=np.float64) - 1) <= PROBS_ATOL))


def reject_probs(scores, name: str = "logits", *, where: str, hint: str = "pass is_probs=True") -> None:
    """Raise a one-line ValueError when ``scores``, given where logits are expected,
    :func:`looks like probabilities <looks_like_probs>`.

    Parameters
    ----------
    scores : array_like or torch.Tensor
        The argument that should hold logits.
    name : str
        Its parameter name, for the message.
    where : str
        The function or loss receiving it, for the message.
    hint : str
        What to do instead.

    Example
    -------
    >>> import numpy as np; from replicate.array_io import reject_probs
    >>> reject_probs(np.array([[0.2, 0.8]]), where="f")
    Traceback (most recent call last):
    ...
    replicate.array_io.ProbabilitiesAsLogitsError: f: logits look like probabilities (every entry in [0, 1], every row summing to 1 within 1e-06); pass is_probs=True
    """
    if looks_like_probs(scores):
        raise ProbabilitiesAsLogitsError(f"{where}: {name} look like probabilities (every entry in [0, 1], every "
                                         f"row summing to 1 within {PROBS_ATOL:g}); {hint}")


def _to_numpy(x):
    x = x.detach().cpu()
    if x.is_floating_point() and x.dtype.itemsize < 4:
        x = x.float()  # float16 / bfloat16 have no exact numpy twin
    return x.numpy()


def numpy_native(fn):
    """Wrap ``fn``, written for numpy arrays, so that a tensor as first argument gets tensors back.

    Every tensor among the arguments is handed to ``fn`` as a numpy array; when the first
    argument is a tensor, every numpy array in the result (itself, or inside a tuple or
    dict) comes back as a tensor on that argument's device (float64 stays float64).

    Parameters
    ----------
    fn : callable
        A function whose first parameter holds scores.

    Example
    -------
    >>> import numpy as np, torch; from replicate.array_io import numpy_native
    >>> double = numpy_native(lambda x: 2 * np.asarray(x))
    >>> type(double(torch.ones(2))).__name__, type(double(np.ones(2))).__name__
    ('Tensor', 'ndarray')
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not any(is_tensor(a) for a in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        first = args[0] if args else None
        args = tuple(_to_numpy(a) if is_tensor(a) else a for a in args)
        kwargs = {k: _to_numpy(v) if is_tensor(v) else v for k, v in kwargs.items()}
        out = fn(*args, **kwargs)
        if not is_tensor(first):
            return out
        import torch

        def back(v):
            return torch.from_numpy(np.ascontiguousarray(v)).to(first.device) if isinstance(v, np.ndarray) else v
        return _map(out, back)
    return wrapper


def torch_native(fn):
    """Wrap ``fn``, written for torch tensors, so that numpy input gets numpy back.

    The scores are the first argument that is an array (numpy, list or tensor; a method's
    ``self`` is skipped). Every numpy array among the arguments is handed to ``fn`` as a
    tensor (on the device of the first tensor argument, if any); when the scores are a
    numpy array (or a list), every tensor in the result (itself, or inside a tuple or
    dict) comes back as a numpy array, computed without autograd.

    Parameters
    ----------
    fn : callable
        A function or method taking scores.

    Example
    -------
    >>> import numpy as np, torch; from replicate.array_io import torch_native
    >>> double = torch_native(lambda x: 2 * x)
    >>> type(double(np.ones(2))).__name__, type(double(torch.ones(2))).__name__
    ('ndarray', 'Tensor')
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        i = next((j for j, a in enumerate(args) if isinstance(a, (np.ndarray, list)) or is_tensor(a)), None)
        if i is None or (is_tensor(args[i]) and not any(isinstance(a, np.ndarray)
                                                         for a in (*args, *kwargs.values()))):
            return fn(*args, **kwargs)
        import torch

        scores = args[i]
        device = next((a.device for a in (*args, *kwargs.values()) if is_tensor(a)), torch.device("cpu"))

        def conv(v):
            return torch.as_tensor(np.require(v, requirements='W'), device=device) if isinstance(v, np.ndarray) else v
        args = (*args[:i], conv(np.asarray(scores)) if isinstance(scores, list) else conv(scores),
                *(conv(a) for a in args[i + 1:]))
        kwargs = {k: conv(v) for k, v in kwargs.items()}
        if is_tensor(scores):
            return fn(*args, **kwargs)
        with torch.no_grad():
            out = fn(*args, **kwargs)
        return _map(out, lambda v: _to_numpy(v) if is_tensor(v) else v)
    return wrapper


def _map(out, f):
    if isinstance(out, tuple):
        return tuple(_map(v, f) for v in out)
    if isinstance(out, dict):
        return {k: _map(v, f) for k, v in out.items()}
    return f(out)
