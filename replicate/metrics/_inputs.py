"""The inputs every metric starts from, shared by the modules of :mod:`replicate.metrics`.

Logits and labels are checked by :mod:`replicate.binning` (shapes, label range, finite
values); :func:`probs_from_logits` is the float64 softmax the ``is_probs=False`` option
uses; ``_prepare`` returns checked probabilities and labels, ``_top`` the top-label
confidence and correctness of each sample. Imports only :mod:`replicate.binning`.
"""
from __future__ import annotations

import inspect
import textwrap

import numpy as np

from .. import binning as _b
from ..array_io import numpy_native, reject_probs

__all__ = ["probs_from_logits"]

#: The parameters the metrics share, described once: ``name: (type, description)``.
#: :func:`documented` writes them into each function's ``Parameters`` section.
SHARED = {
    "probs": ("array_like or torch.Tensor",
              "Predicted probabilities, shape ``(N, K)``, each row summing to 1 (float32 or float64; "
              "logits with ``is_probs=False``)."),
    "labels": ("array_like or torch.Tensor", "Integer class labels in ``[0, K)``, shape ``(N,)``."),
    "logits": ("array_like or torch.Tensor",
               "Unnormalised scores, shape ``(N, K)``; probabilities given here raise a ValueError."),
    "n_bins": ("int", "Number of bins, ``>= 1`` (the papers use 15)."),
    "binning": ('{"width", "mass"}', "Equal-width bins (edges ``b / n_bins``) or equal-mass bins "
                                     "(edges at the confidences' quantiles)."),
    "closed": ('{"right", "left"}', "``\"right\"``: bins ``(lower, upper]`` with 0 in the first "
                                    "(Guo et al.; the papers); ``\"left\"``: ``[lower, upper)`` with 1 in "
                                    "the last (torchmetrics)."),
    "paper_compat": ("bool", "True reproduces the released code of Mukhoti et al. (its binning and "
                             "what it drops), as listed above; False: every sample in exactly one bin."),
    "is_probs": ("bool", "False: the first argument holds logits, turned into float64 probabilities by "
                         ":func:`probs_from_logits` (probabilities given then raise a ValueError)."),
    "validate": ("bool", "True checks that the probabilities are finite, in [0, 1] and that rows sum to 1 "
                         "within 1e-3; False skips these O(NK) checks (shapes and labels are always "
                         "checked)."),
}


def documented(**own):
    """Decorator: add a numpydoc ``Parameters`` section for every parameter of the function, in
    the signature's order, before its first section (``Returns``, ``Example``). Each entry is
    ``own[name]`` (a ``(type, description)`` pair) or :data:`SHARED`'s, followed by the default
    the signature gives."""

    def decorate(func):
        if func.__doc__ is None:       # python -OO strips docstrings
            return func
        entries = []
        for name, param in inspect.signature(func).parameters.items():
            kind, text = own.get(name) or SHARED[name]
            if param.default is not param.empty:
                kind, text = f"{kind}, optional", f"{text} Default ``{param.default!r}``."
            entries.append(f"{name} : {kind}\n" + textwrap.indent(textwrap.fill(text, 88), "    "))
        section = "Parameters\n----------\n" + "\n".join(entries) + "\n\n"
        doc = func.__doc__
        for head in ("Returns", "Example"):
            at = doc.find(f"\n    {head}\n    ---")
            if at >= 0:
                break
        else:
            raise ValueError(f"{func.__qualname__}: no Returns or Example section to put the parameters before")
        func.__doc__ = doc[:at + 1] + textwrap.indent(section, "    ") + doc[at + 1:]
        return func

    return decorate


def _logits(x, name: str = "logits", where: str = "replicate.metrics") -> np.ndarray:
    """Checked (N, K) logits; probabilities given as logits raise (one line, naming ``where``)."""
    a = _b.as_matrix(x, name)
    _b.check_finite(a, name)
    reject_probs(a, name, where=where, hint="pass probabilities to a metric with is_probs=True")
    return a


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)  # always a fresh float64 copy
    z -= z.max(axis=1, keepdims=True)
    z -= np.log(np.exp(z).sum(axis=1, keepdims=True))
    return z


@numpy_native
def probs_from_logits(logits, temperature: float = 1.0):
    """Float64 softmax of ``logits / temperature`` (max-shifted, so it never overflows).

    Parameters
    ----------
    logits : array_like or torch.Tensor
        Shape (N, K), not probabilities (ValueError); numpy in, numpy out; tensor in,
        tensor out (float64, same device).
    temperature : float
        Finite and > 0.

    Example
    -------
    >>> import numpy as np; from replicate.metrics import probs_from_logits
    >>> probs_from_logits(np.array([[2.0, 0.0]]), temperature=2.0).round(4)
    array([[0.7311, 0.2689]])
    """
    return _probs(logits, temperature, where="probs_from_logits")


def _probs(logits, temperature: float = 1.0, where: str = "replicate.metrics") -> np.ndarray:
    """:func:`probs_from_logits` for the package's own numpy code (always numpy)."""
    if not (isinstance(temperature, (int, float, np.floating)) and np.isfinite(temperature)
            and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0; got {temperature!r}")
    z = _logits(logits, where=where).astype(np.float64) / float(temperature)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def _prepare(probs, labels, is_probs: bool, validate: bool, name: str = "probs"):
    if not isinstance(is_probs, (bool, np.bool_)):
        raise ValueError(f"is_probs must be True or False; got {is_probs!r}")
    p = _b.as_probs(probs, name, validate) if is_probs else _probs(probs)
    return p, _b.as_labels(labels, p.shape[0], p.shape[1])


def _top(probs, labels, is_probs, validate):
    p, y = _prepare(probs, labels, is_probs, validate)
    conf, pred = _b.top_label(p)
    return conf, pred == y
