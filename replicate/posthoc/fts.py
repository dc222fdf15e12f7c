"""Focal temperature scaling on a grid: the intended map, the probability clamp, and the
authors' focal link as an off-by-default option.

Komisarenko & Kull {cite}`komisarenko2024fts`, Sec. 4.2: ``q = softmax(z / T)``, then the
focal calibration map of Eq. (1), ``p_i proportional to 1 / f'(q_i)`` with
``f'(q) = (1-q)^gamma (gamma log q / (1-q) - 1/q)``; ``(gamma_ev, T)`` is chosen on a grid
by a validation metric. :mod:`replicate.posthoc` fits it; this module holds the maps,
:mod:`replicate.posthoc.fts_grid` the grid's validation scores.

**The intended map** (:func:`fts_log_probs`) is computed in log space from the scaled logits:
``log w(q) = log q - gamma log(1-q) - log(1 + gamma h(q))`` with ``h(q) = -q log q / (1-q)``
(``w = 1 / (-f')``), and ``log p = log w - logsumexp(log w)``. With
``s = sum_{k != top} exp(z_k - z_top)``, ``log q_i = z_i - z_top - log1p(s)``; when the top
class has ``q > 1/2`` (``s < 1``) its ``log(1-q) = log s - log1p(s)`` and ``h = log1p(s) / s``:
exact even when ``q`` rounds to 1; every other entry uses ``log1p(-q)``, exact for
``q <= 1/2`` (tied logits get bit-identical weights, so the predicted class never changes).
No probability becomes 0 before the log: the test log-loss stays finite at any T.

**The probability clamp** (``clamp``): the authors' code clips ``q`` to
``[1e-12, 1 - 1e-12]`` (:data:`AUTHORS_CLAMP`) before the map. ``clamp=None`` (default)
computes the map exactly; ``clamp=eps`` clips to ``[eps, 1 - eps]`` first, in float64.

**The authors' focal link** (:func:`authors_focal_link`, ``link="authors"``), reproduced from
the description in the book's page "The authors' code" (its defects); the public ``multi_focal_link`` of the
authors' repository (``temperature_scaling.py``, read through a code index, not copied)
matches it. On the logits ``x = z / T`` in float32 (their tensors are float32), with torch's
own operations (so that rows at the edge of float32 round as theirs do):

1. ``q = softmax(x)``; ``q = clip(q, 1e-12, 1 - 1e-12)`` - in float32 ``1 - 1e-12`` rounds
   to 1, so only the lower clip acts;
2. ``p = (1 / f'(q)) / sum_k (1 / f'(q_k))`` typed out in float32: a row whose top
   probability is exactly 1 in float32 gets ``0 / 0`` in ``log q / (1-q)``, i.e. NaN
   (``(1-q)^gamma`` under- or overflow gives inf / inf, also NaN);
3. the overflow guard: a row is *overflowed* when any entry is not strictly between the
   float32 minimum and maximum (NaN, +-inf); every entry of such a row is set to
   ``1e-5 / C``, then the entries ``p[overflowed rows, argmax]`` are set to ``1 - 1e-5``
   where ``argmax`` is the predicted class of **every** row of the evaluated set (an
   ``(N, 1)`` index broadcast against the ``(K,)`` overflowed-row index): in each
   overflowed row, every column that is any row's predicted class gets ``1 - 1e-5``. The
   rows no longer sum to 1, and with many rows every class is someone's prediction, so
   an overflowed row scores log-loss ``-log(1 - 1e-5)`` whatever its label.

``guard="row"`` applies the guard as meant (each overflowed row's own predicted class),
``guard="none"`` leaves the NaN rows. Scores of the authors' link are computed from its
``p`` as their evaluation does: log-loss ``-mean log p_y``, predicted class ``argmax p``
(NumPy ties go to the lowest class; torch on a GPU does not promise which) and
confidence ``max p``. The authors' T loop adds 0.05 a hundred times in floating point
(``0.15000000000000002``, ...); we use the rounded grid.
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from ..array_io import numpy_native, reject_probs

__all__ = ["PAPER_T_GRID", "FTS_T_GRID", "FTS_GAMMAS", "AUTHORS_CLAMP", "LINKS", "GUARDS", "SELECT_METRICS",
           "check_clamp", "fts_log_probs", "authors_focal_link", "fts_probs"]

#: FTS paper text (Sec. 5.1): T = 0.01, 0.02, ..., 5.00.
PAPER_T_GRID = np.round(np.arange(1, 501) * 0.01, 10)
#: FTS authors' code: T = 0.05, 0.10, ..., 5.00.
FTS_T_GRID = np.round(np.arange(1, 101) * 0.05, 10)
#: FTS paper Sec. 5.1: the gamma_ev grid.
FTS_GAMMAS = (-0.5, -0.25, 0.05, 0.25, 0.37, 0.5, 0.75, 1.0, 5.0)
#: The authors' code clips probabilities to [1e-12, 1 - 1e-12] before the focal map.
AUTHORS_CLAMP = 1e-12
LINKS = ("intended", "authors")
GUARDS = ("broadcast", "row", "none")
#: Validation metrics that can choose (gamma_ev, T): log-loss, equal-mass ECE, equal-width ECE.
SELECT_METRICS = ("nll", "adaece", "ece")
_GUARD_LOW, _GUARD_HIGH = 1e-5, 1 - 1e-5


def check_clamp(clamp) -> float | None:
    """``clamp`` as None or a float in (0, 0.5); else a one-line ValueError."""
    if clamp is None:
        return None
    if isinstance(clamp, bool) or not isinstance(clamp, (int, float, np.floating)) or not 0 < clamp < 0.5:
        raise ValueError(f"clamp must be None (no clamp) or a number in (0, 0.5), e.g. {AUTHORS_CLAMP}; "
                         f"got {clamp!r}")
    return float(clamp)


def _check_link(link: str) -> str:
    if link not in LINKS:
        raise ValueError(f"link must be one of {', '.join(LINKS)}; got {link!r}")
    return link


def _check_T(T) -> float:
    if isinstance(T, bool) or not isinstance(T, (int, float, np.floating)) or not (math.isfinite(T) and T > 0):
        raise ValueError(f"T must be a finite number > 0; got {T!r}")
    return float(T)


def _as_logits(logits, where: str) -> np.ndarray:
    z = np.asarray(logits)
    if z.ndim != 2 or z.shape[1] < 2 or z.shape[0] < 1 or z.dtype.kind not in "fiu":
        raise ValueError(f"logits must be a real array of shape (n_samples, n_classes >= 2); got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits must be finite (no NaN or inf)")
    reject_probs(z, where=where, hint="pass logits (np.log(probs) will do)")
    return z


# ----------------------------------------------------------------------------- intended map
def _parts(z: np.ndarray, top: np.ndarray, temps: np.ndarray, clamp: float | None):
    """``(log q, log(1-q), h(q))`` of ``softmax(z / T)`` for every T of ``temps``, each of shape
    (len(temps), N, C), float64 (module docstring); they do not depend on gamma."""
    zs = z[None, :, :] / temps[:, None, None]
    d = zs - np.take_along_axis(zs, top[None, :, None], axis=2)          # <= 0, top entry 0
    others = d.copy()
    np.put_along_axis(others, top[None, :, None], -np.inf, axis=2)
    m2 = others.max(axis=2, keepdims=True)                                # second-largest gap
    ls = m2[..., 0] + np.log(np.exp(others - m2).sum(axis=2))             # log s, finite
    log1ps = np.logaddexp(0.0, ls)                                        # log(1 + s)
    logq = d - log1ps[..., None]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        if clamp is None:
            q = np.exp(logq)
            logc = np.log1p(-q)                                           # exact for q <= 1/2
            h = -q * logq / (1 - q)                                       # 0 where q underflows
            s = np.exp(ls)                                                # s < 1 <=> q_top > 1/2
            near1 = (s < 1)[..., None]                                    # elsewhere the generic formulas are exact
            h_top = np.where(s > 0, log1ps / np.where(s > 0, s, 1.0), 1.0)[..., None]
            logc_top = (ls - log1ps)[..., None]
            i = top[None, :, None]
            np.put_along_axis(logc, i, np.where(near1, logc_top, np.take_along_axis(logc, i, axis=2)), axis=2)
            np.put_along_axis(h, i, np.where(near1, h_top, np.take_along_axis(h, i, axis=2)), axis=2)
        else:
            q = np.clip(np.exp(logq), clamp, 1 - clamp)
            logq = np.log(q)
            logc = np.log1p(-q)
            h = -q * logq / (1 - q)
    return logq, logc, h


def _log_map(parts, gamma: float) -> np.ndarray:
    """log p of the focal map from :func:`_parts`: ``log w - logsumexp(log w)``."""
    logq, logc, h = parts
    if gamma == 0.0:
        logw = logq.copy()
    else:
        logw = logq - gamma * logc - np.log1p(gamma * h)
    mx = logw.max(axis=2, keepdims=True)
    logw -= mx + np.log(np.exp(logw - mx).sum(axis=2, keepdims=True))
    return logw


@numpy_native
def fts_log_probs(logits, T, gamma, clamp=None) -> np.ndarray:
    """log of the intended focal temperature scaling, ``log map(softmax(z / T), gamma)``
    (Eq. 1 after temperature scaling), float64, shape of ``logits``.

    Parameters
    ----------
    logits : array_like or torch.Tensor
        Shape (N, K), not probabilities; numpy in, numpy out; tensor in, tensor out.
    T : float
        Temperature > 0.
    gamma : float
        ``gamma_ev > -1``.
    clamp : float, optional
        None (exact) or clip ``q`` to ``[clamp, 1 - clamp]`` before the map (the authors use 1e-12).
    """
    z = _as_logits(logits, "fts_log_probs").astype(np.float64)
    t, g, c = _check_T(T), checks.gamma(gamma, lo=-1.0, strict=True), check_clamp(clamp)
    return _log_map(_parts(z, z.argmax(axis=1), np.array([t]), c), g)[0]


# ----------------------------------------------------------------------------- authors' link
def _authors_block(z: np.ndarray, temps: np.ndarray, gamma: float, dtype, clamp: float | None, guard: str,
                   softmaxes=None):
    """The authors' link for every T: p (len(temps), N, C) in ``dtype`` and the overflowed rows
    (len(temps), N). Computed with torch's own float32 (or float64) operations, as their code
    does (CPU kernels; borderline rows may round differently on a GPU). ``softmaxes``: the
    :func:`_authors_softmaxes` of the same ``z``, ``temps``, ``dtype`` and ``clamp`` (a grid
    computes them once for all its gammas: they do not depend on gamma)."""
    import torch

    dt = np.dtype(dtype)
    tdt = torch.float32 if dt == np.float32 else torch.float64
    pred, qs = softmaxes if softmaxes is not None else _authors_softmaxes(z, temps, dtype, clamp)
    p = np.empty((len(temps), *z.shape), dtype=dt)
    for i, q in enumerate(qs):
        with torch.no_grad():
            fprime = (1 - q) ** gamma * (gamma * torch.log(q) / (1 - q) - 1 / q)
            inv = 1 / fprime
            p[i] = (inv / torch.sum(inv, dim=-1, keepdim=True)).numpy()
    fi = torch.finfo(tdt)
    with np.errstate(invalid="ignore"):
        bad = ~((p > fi.min) & (p < fi.max)).all(axis=2)
    if guard != "none" and bad.any():
        n_classes = p.shape[2]
        p[bad] = dt.type(_GUARD_LOW / n_classes)
        if guard == "broadcast":                      # every row's prediction, in every overflowed row
            for i in range(p.shape[0]):
                rows = np.flatnonzero(bad[i])
                p[i][np.ix_(rows, np.unique(pred[i]))] = dt.type(_GUARD_HIGH)
        else:                                         # the guard as meant: the row's own prediction
            ti, ri = np.nonzero(bad)
            p[ti, ri, pred[ti, ri]] = dt.type(_GUARD_HIGH)
    return p, bad


def _authors_softmaxes(z: np.ndarray, temps: np.ndarray, dtype, clamp: float | None):
    """``(pred, [q per T])`` of the authors' link before its focal step: ``pred`` (len(temps),
    N) the argmax of ``z / T`` (what their guard uses, every row) and ``q`` the torch tensor
    ``softmax(z / T)`` in ``dtype``, clamped to ``[clamp, 1 - clamp]`` when ``clamp`` is set."""
    import torch

    dt = np.dtype(dtype)
    zt = torch.from_numpy(np.ascontiguousarray(z, dtype=dt))
    pred = np.empty((len(temps), z.shape[0]), dtype=np.intp)
    qs = []
    for i, t in enumerate(temps):
        with torch.no_grad():
            x = zt / float(t)
            pred[i] = torch.argmax(x, dim=1).numpy()          # the argmax their guard uses: of x, every row
            q = torch.softmax(x, dim=-1)
            if clamp is not None:
                q = torch.clamp(q, min=clamp, max=1 - clamp)     # float32: 1 - 1e-12 rounds to 1
            qs.append(q)
    return pred, qs


@numpy_native
def authors_focal_link(logits, T, gamma, *, dtype="float32", clamp=AUTHORS_CLAMP, guard: str = "broadcast"):
    """The authors' ``multi_focal_link(z / T, gamma)`` (module docstring): ``(p, overflowed)``,
    ``p`` (N, C) as float64 (rows of overflowed rows do not sum to 1), ``overflowed`` (N,) bool.

    Parameters
    ----------
    logits : array_like or torch.Tensor
        Shape (N, K), not probabilities; numpy in, numpy out; tensor in, tensor out.
    T : float
        Temperature > 0.
    gamma : float
        ``gamma_ev > -1``.
    dtype : {"float32", "float64"}
        The arithmetic (their tensors: float32).
    clamp : float, optional
        The clip of ``q`` (theirs: 1e-12; None: none).
    guard : {"broadcast", "row", "none"}
        Their code's guard, the guard as meant, or none.
    """
    z = _as_logits(logits, "authors_focal_link").astype(np.float64)
    t, g, c = _check_T(T), checks.gamma(gamma, lo=-1.0, strict=True), check_clamp(clamp)
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {', '.join(GUARDS)}; got {guard!r}")
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype!r}")
    p, bad = _authors_block(z, np.array([t]), g, dtype, c, guard)
    return p[0].astype(np.float64), bad[0]


@numpy_native
def fts_probs(logits, T, gamma, link: str = "intended", clamp=None) -> np.ndarray:
    """Calibrated probabilities (N, C) float64: the intended map (``clamp`` as in
    :func:`fts_log_probs`) or ``link="authors"`` (:func:`authors_focal_link` with its
    defaults; ``clamp`` must then be None or :data:`AUTHORS_CLAMP`).

    Parameters
    ----------
    logits : array_like or torch.Tensor
        Shape (N, K), not probabilities; numpy in, numpy out; tensor in, tensor out.
    T, gamma, clamp
        As :func:`fts_log_probs`.
    link : {"intended", "authors"}
        The focal map.
    """
    if _check_link(link) == "intended":
        return np.exp(fts_log_probs(logits, T, gamma, clamp))
    if clamp not in (None, AUTHORS_CLAMP):
        raise ValueError(f"clamp must be None or {AUTHORS_CLAMP} with link='authors' (their code's clamp); "
                         f"got {clamp!r}")
    return authors_focal_link(logits, T, gamma)[0]
