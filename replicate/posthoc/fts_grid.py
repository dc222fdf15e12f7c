"""The validation scores of focal temperature scaling on a grid of ``(gamma_ev, T)``.

:func:`grid_scores` scores the focal calibration map of Komisarenko & Kull (2024), Eq. (1),
after temperature scaling (:mod:`replicate.posthoc.fts`) at every pair of the grid: the
log-loss, the equal-mass ECE and the equal-width ECE of the validation set. The fit
(:func:`replicate.posthoc.fit_focal_temperatures`) takes the first minimum, so every score
must be the same number, to the last bit, however it is computed: the book's verdicts
depend on which pair wins.

The intended map is computed here class-major, every array ``(C, T, N)``: each class is one
contiguous slice, and the sums over classes, which numpy computes row by row with its
pairwise summation (:func:`class_sum`), are done slice by slice in the same order, so that
they give the same numbers as ``x.sum(axis=-1)`` on the ``(T, N, C)`` layout of
:func:`replicate.posthoc.fts._parts` (``tests/test_fts_grid.py`` checks the scores against
that row-major computation bit for bit, on ties, large logits and 2 to 200 classes). The
predicted class is the top logit's wherever the
map keeps it strictly on top (it does unless two classes round to the same weight: then
``argmax`` decides, as before), and the binned ECEs of every temperature are read from one
``bincount``, which adds each bin's examples in the same order as one row at a time.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import binning as _b
from .fts import _authors_block, _authors_softmaxes

__all__ = ["grid_scores", "class_sum"]

_CHUNK = 1 << 17            # elements of the (classes, temperatures, N) blocks (1 MB each: near the core's L2)
_SCORED = 1 << 17           # elements of the (temperatures, N) blocks scored by one bincount per gamma
_PW_BLOCK = 128             # numpy's pairwise-summation block (PW_BLOCKSIZE of its loops)


def class_sum(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=0)`` of a class-major array ``(C, ...)``, added in the order numpy's
    pairwise summation adds a contiguous row of ``C`` numbers (``y.sum(axis=-1)`` of the
    transposed array): one by one below 8 terms, in eight interleaved partial sums up to
    128, halves (rounded to a multiple of 8) above. Bit for bit the row sums of the
    class-last layout, at the speed of whole-slice additions."""
    return _pairwise(x, 0, x.shape[0])   # for terms >= 0 (exp): the order of numpy's, its zeros' signs aside


def _pairwise(x: np.ndarray, lo: int, n: int) -> np.ndarray:
    if n < 8:
        out = x[lo] + 0.0                                  # numpy starts from 0. (so -0. becomes 0.)
        for i in range(lo + 1, lo + n):
            out += x[i]
        return out
    if n <= _PW_BLOCK:
        if n >= 16:                                        # the eight partial sums (of non-negative terms)
            r = [x[lo + j] + x[lo + 8 + j] for j in range(8)]
            i = 16
        else:
            r = [x[lo + j] for j in range(8)]             # views: only read below
            i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += x[lo + i + j]
            i += 8
        out, t = r[0] + r[1], r[2] + r[3]
        out += t
        np.add(r[4], r[5], out=t)
        t += r[6] + r[7]
        out += t                                           # ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(i, n):
            out += x[lo + i]
        return out
    half = n // 2
    half -= half % 8
    return _pairwise(x, lo, half) + _pairwise(x, lo + half, n - half)


def _at(x: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """``x[cls, t, i]`` of a class-major block for the flat indices ``cls * T * N + t * N + i``."""
    return x.reshape(-1)[flat]


def _parts(zt: np.ndarray, ztop: np.ndarray, top_at: np.ndarray, temps: np.ndarray, clamp):
    """``(log q, log(1-q), h(q))`` of ``softmax(z / T)`` for every T of ``temps``, class-major
    ``(C, T, N)``: the numbers of :func:`replicate.posthoc.fts._parts` (which is ``(T, N, C)``),
    computed by the same operations. ``zt`` is ``z.T`` (C, N), ``ztop`` the top logit of each
    example, ``top_at`` the flat indices of the top class (:func:`_at`)."""
    zs = zt[:, None, :] / temps[None, :, None]
    zs_top = ztop[None, :] / temps[:, None]                               # == zs at the top class
    d = zs - zs_top[None]                                                 # <= 0, top entry 0
    others = d.copy()
    others.reshape(-1)[top_at] = -np.inf
    m2 = others.max(axis=0)                                               # second-largest gap
    np.subtract(others, m2[None], out=others)
    np.exp(others, out=others)
    ls = m2 + np.log(class_sum(others))                                   # log s, finite
    log1ps = np.logaddexp(0.0, ls)                                        # log(1 + s)
    logq = d - log1ps[None]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        if clamp is None:
            q = np.exp(logq)
            logc = np.log1p(-q)                                           # exact for q <= 1/2
            h = -q * logq / (1 - q)                                       # 0 where q underflows
            s = np.exp(ls)                                                # s < 1 <=> q_top > 1/2
            near1 = s < 1
            h_top = np.where(s > 0, log1ps / np.where(s > 0, s, 1.0), 1.0)
            logc_top = ls - log1ps
            logc.reshape(-1)[top_at] = np.where(near1, logc_top, _at(logc, top_at).reshape(near1.shape)).ravel()
            h.reshape(-1)[top_at] = np.where(near1, h_top, _at(h, top_at).reshape(near1.shape)).ravel()
        else:
            q = np.clip(np.exp(logq), clamp, 1 - clamp)
            logq = np.log(q)
            logc = np.log1p(-q)
            h = -q * logq / (1 - q)
    return logq, logc, h


def _top_of_map(parts, gamma: float, buf: np.ndarray, tmp: np.ndarray, top_at: np.ndarray, y_at: np.ndarray,
                top: np.ndarray):
    """``(log p_y, argmax p, max p)`` of the focal map with ``gamma`` for every T of ``parts``
    (class-major), each ``(T, N)``: ``log w = log q - gamma log(1-q) - log(1 + gamma h)``
    (Eq. 1 in log space), ``max p = 1 / sum exp(log w - max log w)`` and ``log p_y = log w_y
    - max log w - log sum exp(log w - max log w)``, computed in ``buf`` (``tmp``: scratch of
    the same shape). The argmax is the top logit's class (``top``) where every other entry is
    strictly below it, else ``argmax`` over the classes (the first maximum, or the first NaN)."""
    logq, logc, h = parts
    shape = buf.shape[1:]
    if gamma == 0.0:
        np.copyto(buf, logq)
    else:
        np.multiply(h, gamma, out=buf)
        np.log1p(buf, out=buf)
        np.subtract(logq, buf, out=buf)
        np.multiply(gamma, logc, out=tmp)
        buf -= tmp
    mx = _at(buf, top_at).reshape(shape)
    below = tmp.reshape(-1).view(bool)[: buf.size]
    np.less(buf, mx[None], out=below.reshape(buf.shape))
    pred = np.broadcast_to(top, shape)                                     # the top logit's class ...
    # ... unless a row has a tie or NaN: every top entry is False (x < x, NaN < NaN), so all
    # others are below their top exactly when the count of True is the number of others
    if np.count_nonzero(below) != buf.size - mx.size:
        below[top_at] = True
        odd = np.unique(np.flatnonzero(~below) % mx.size)                  # those rows: argmax decides
        sub = buf.reshape(len(buf), -1)[:, odd]
        first = sub.argmax(axis=0)                                         # the first maximum (or NaN)
        pred, mx = pred.copy(), mx.copy()
        pred.reshape(-1)[odd] = first
        mx.reshape(-1)[odd] = sub[first, np.arange(odd.size)]
    wy = _at(buf, y_at).reshape(shape) - mx if y_at is not None else None
    buf -= mx[None]
    np.exp(buf, out=buf)
    total = class_sum(buf)
    return (wy - np.log(total) if wy is not None else None), pred, 1.0 / total


def _binned(conf: np.ndarray, hit: np.ndarray, kind: str, n_bins: int) -> np.ndarray:
    """ECE (``kind="ece"``, equal-width bins) or AdaECE (``"adaece"``, equal-mass bins,
    :func:`replicate.binning.mass_edges`) of each row of ``conf`` (T, N) against ``hit``,
    as :mod:`replicate.metrics` computes one: every row's bin sums from one ``bincount``
    (each bin's terms added in the order of the row)."""
    rows, n = conf.shape
    if kind == "ece":
        idx = _b.bin_index(conf, _b.width_edges(n_bins), "right", uniform=True)
    else:
        s = np.sort(conf, axis=1)
        sizes = np.full(n_bins, n // n_bins, dtype=np.intp)
        sizes[: n % n_bins] += 1
        cut = np.cumsum(sizes)[:-1]
        inner = np.ones((rows, n_bins - 1))
        ok = cut < n
        inner[:, ok] = (s[:, cut[ok] - 1] + s[:, cut[ok]]) / 2.0
        idx = np.zeros(conf.shape, dtype=np.uint8 if n_bins < 256 else np.intp)   # searchsorted(inner, x, "left")
        for k in range(n_bins - 1):
            idx += inner[:, k:k + 1] < conf
        idx = idx.astype(np.intp)
    flat = (idx + (n_bins + 1) * np.arange(rows)[:, None]).ravel()
    m = rows * (n_bins + 1)
    sc = np.bincount(flat, weights=conf.ravel(), minlength=m).reshape(rows, n_bins + 1)[:, :n_bins]
    # the hits of a bin are whole numbers: their float sum is their count, exactly
    sh = np.bincount(flat[np.asarray(hit, dtype=bool).ravel()], minlength=m).astype(np.float64)
    sh = sh.reshape(rows, n_bins + 1)[:, :n_bins]
    return np.abs(sh - sc).sum(axis=1) / n


def _binned_rows(conf: np.ndarray, hit: np.ndarray, kind: str, n_bins: int, paper_compat: bool, dtype) -> np.ndarray:
    """ECE (equal-width) or AdaECE (equal-mass) of each row of ``conf``, one row at a time
    (the bins of the released code, ``paper_compat``, and the authors' float32 link)."""
    out = np.empty(conf.shape[0])
    for i, (c, h) in enumerate(zip(conf, hit)):
        if kind == "ece":
            e = _b.width_edges(n_bins)
            idx = _b.bin_index(c, e, "right", uniform=True)
        elif paper_compat:
            e = _b.paper_adaptive_edges(c.astype(dtype), n_bins)
            idx = _b.bin_index(c, e, "right", drop_outside=True)
        else:
            e = _b.mass_edges(c, n_bins)
            idx = _b.bin_index(c, e, "right")
        cnt, sc, sh = _b.bin_sums(idx, n_bins, c, h)
        out[i] = float(np.abs(sh - sc).sum() / c.size)
    return out


def _scores(logp_y, pred, conf, y, metrics, n_bins, paper_compat, dtype) -> dict:
    hit = pred == y[None, :]
    out = {}
    for m in metrics:
        if m == "nll":
            with np.errstate(invalid="ignore"):
                out[m] = -logp_y.mean(axis=1)          # NaN/inf rows: not finite, never chosen
        elif not paper_compat and n_bins >= 2:             # float32 maps too: their confidences are float64 numbers
            out[m] = _binned(conf, hit, m, n_bins)
        else:
            out[m] = _binned_rows(conf, hit, m, n_bins, paper_compat, dtype)
    return out


def grid_scores(z: np.ndarray, y: np.ndarray, gammas, temps: np.ndarray, metrics=("nll",), *, link="intended",
                clamp=None, n_bins=15, paper_compat=False) -> pd.DataFrame:
    """Validation score of every ``(gamma, T)`` (gamma in the given order, T ascending): a
    frame with ``gamma, T``, one column per metric and ``overflowed`` (the number of rows
    the authors' guard rewrote; 0 for the intended map). Inputs already validated by the
    caller (:func:`replicate.posthoc.fit_focal_temperature`): ``z`` (N, C) float64, ``y``
    (N,) int, ``temps`` float64 ascending."""
    n, c = z.shape
    step = max(1, _CHUNK // (n * c))
    top, rows = z.argmax(axis=1), np.arange(n)
    cols = {(g, m): np.empty(len(temps)) for g in gammas for m in (*metrics, "overflowed")}
    if link != "intended":
        for a in range(0, len(temps), step):
            tb = temps[a:a + step]
            soft = _authors_softmaxes(z, tb, np.float32, clamp)            # the same for every gamma
            for g in gammas:
                p, bad = _authors_block(z, tb, g, np.float32, clamp, "broadcast", soft)
                with np.errstate(divide="ignore"):
                    logp_y = np.log(p[:, rows, y].astype(np.float64))
                got = _scores(logp_y, p.argmax(axis=2), p.max(axis=2).astype(np.float64), y, metrics, n_bins,
                              paper_compat, np.float32)
                got["overflowed"] = bad.sum(axis=1)
                for m, v in got.items():
                    cols[(g, m)][a:a + step] = v
        return _frame(cols, gammas, temps, metrics)
    zt, ztop = np.ascontiguousarray(z.T), z[rows, top]
    flat: dict = {}                     # chunk length -> its flat indices and scratch (the same for every full chunk)
    block = max(step, _SCORED // n)     # temperatures scored together (each map computed ``step`` at a time)
    nll = "nll" in metrics
    for b0 in range(0, len(temps), block):
        tblock = temps[b0:b0 + block]
        held = {g: (np.empty((len(tblock), n)) if nll else None, np.empty((len(tblock), n), dtype=np.intp),
                    np.empty((len(tblock), n))) for g in gammas}           # log p_y, prediction, confidence
        for a in range(0, len(tblock), step):
            tb = tblock[a:a + step]
            if len(tb) not in flat:
                cell = np.arange(len(tb))[:, None] * n + rows[None, :]             # (T, N): t * N + i
                flat[len(tb)] = ((top[None, :] * (len(tb) * n) + cell).ravel(),
                                 (y[None, :] * (len(tb) * n) + cell).ravel(),
                                 np.empty((c, len(tb), n)), np.empty((c, len(tb), n)))
            top_at, y_at, buf, tmp = flat[len(tb)]
            parts = _parts(zt, ztop, top_at, tb, clamp)
            for g in gammas:
                for kept, v in zip(held[g], _top_of_map(parts, g, buf, tmp, top_at, y_at if nll else None, top)):
                    if kept is not None:
                        kept[a:a + len(tb)] = v
        for g in gammas:
            got = _scores(*held[g], y, metrics, n_bins, paper_compat, np.float64)
            got["overflowed"] = np.zeros(len(tblock))
            for m, v in got.items():
                cols[(g, m)][b0:b0 + block] = v
    return _frame(cols, gammas, temps, metrics)


def _frame(cols: dict, gammas, temps: np.ndarray, metrics) -> pd.DataFrame:
    return pd.DataFrame({"gamma": np.repeat(np.asarray(gammas, dtype=np.float64), len(temps)),
                         "T": np.tile(temps, len(gammas)),
                         **{m: np.concatenate([cols[(g, m)] for g in gammas]) for m in (*metrics, "overflowed")}})
