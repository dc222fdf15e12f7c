"""A run's metrics on every resample of the test examples, vectorised where they are sums.

:class:`Scored` is one run after one post-hoc setting: its test probabilities, the
log-probability of each test label, and its probabilities on the out-of-distribution sets it
recorded. :func:`replicated` gives a metric (percent, as the papers print them) on each row
of a weight matrix (:func:`replicate.comparison.noise.resampling.weights`):

- sums of per-example terms are one matrix product ``W @ terms``: the test error, NLL, Brier
  score, |S99| and the accuracy on S99 (ratios of two such sums), and the binned ECE family
  on fixed equal-width bins - ECE and MCE from the signed residual ``hit - confidence`` of
  each example in its bin (``W @ R``, ``R`` sparse ``n x bins``), classwise ECE from the
  residual of every class in its class's bin;
- the AUROC of the entropy (in-distribution test images against their out-of-distribution
  copies, resampled with the same indices) from one sort: each resample's weighted
  Mann-Whitney count is a cumulative sum of its weights in score order;
- the equal-mass ECE (AdaECE) and Kumar et al.'s debiased error (15 and 30 equal-mass bins)
  from one sort: each resample's equal-mass edges are read from its cumulative weights in
  confidence order, its bin sums from cumulative weighted sums;
- the smooth ECE (Blasiok & Nakkiran) from the weighted residuals splatted on relplot's grid,
  the Gaussian smoothing as one batch of FFTs and relplot's bisection on the bandwidth run
  for all resamples in step;
- every other metric (the sweep ECEs, smCE) is recomputed on each of the first
  :data:`~replicate.comparison.noise.resampling.N_BOOT_SLOW` resamples, as the plain loop does.

:func:`plain` is that plain loop for any metric: the tests check the vectorised path
against it on fixed draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ... import binning as _b
from ... import metrics as _m
from . import resampling
from .resampling import N_BOOT_SLOW, indices, matmul

N_BINS = 15
_BLOCK = 1 << 18            # elements of a block of resamples (2 MB: it stays in cache)
#: Metrics computed for all resamples at once (the equal-mass ECEs and the smooth ECE on the
#: first :data:`~replicate.comparison.noise.resampling.N_BOOT_SLOW` of them: their bins move with the resample).
VECTORISED = ("ece", "mce", "classwise_ece", "error", "accuracy", "nll", "brier", "s99_fraction", "s99_accuracy",
              "auroc", "adaece", "debiased_ece", "debiased_ece_30", "smece")


def _smce(p, y):
    from ... import smce

    return smce.top_label_smce(p, y, validate=False)


#: metric -> fraction of (probs, labels) for the metrics recomputed per resample.
SLOW = {
    "sweep_ece": lambda p, y: _m.ece_sweep(p, y, validate=False),
    "sweep_ece_mass": lambda p, y: _m.ece_sweep(p, y, binning="mass", validate=False),
    "smce": _smce,
}
METRICS = (*VECTORISED, *SLOW)


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    return metric


@dataclass
class Scored:
    """One run after one post-hoc setting: ``probs`` (n x K), ``labels``, ``logp_y`` (the
    log-probability of each label), ``ood`` (``{set: probs}`` of its out-of-distribution
    copies), and the fitted ``T`` and ``gamma``. Per-example terms are computed once."""

    probs: np.ndarray
    labels: np.ndarray
    logp_y: np.ndarray
    ood: dict = field(default_factory=dict)
    T: float = 1.0
    gamma: float = math.nan
    _terms: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.labels)

    def top(self):
        if "top" not in self._terms:
            conf, pred = _b.top_label(self.probs)
            self._terms["top"] = (conf, (pred == self.labels).astype(np.float64))
        return self._terms["top"]

    def terms(self, metric: str, ood_set: str = ""):
        """The per-example terms ``metric`` sums (see the module docstring), cached."""
        key = (metric, ood_set)
        if key not in self._terms:
            self._terms[key] = _terms(self, metric, ood_set)
        return self._terms[key]


def _terms(s: Scored, metric: str, ood_set: str):
    n, (conf, hit) = s.n, s.top()
    if metric in ("error", "accuracy"):
        return 1.0 - hit if metric == "error" else hit
    if metric == "nll":
        return -np.asarray(s.logp_y, dtype=np.float64)
    if metric == "brier":
        q = np.asarray(s.probs, dtype=np.float64).copy()
        q[np.arange(n), s.labels] -= 1.0
        return np.einsum("ij,ij->i", q, q)
    if metric in ("s99_fraction", "s99_accuracy"):
        sel = (conf >= 0.99).astype(np.float64)
        return np.stack([sel, sel * hit], axis=1)
    if metric in ("ece", "mce"):
        b = _b.bin_index(conf, _b.width_edges(N_BINS), "right", uniform=True)
        rows = np.arange(n)
        res = sparse.csr_matrix((hit - conf, (rows, b)), shape=(n, N_BINS))
        cnt = sparse.csr_matrix((np.ones(n), (rows, b + N_BINS)), shape=(n, 2 * N_BINS))
        return sparse.hstack([res, cnt[:, N_BINS:]]).tocsr()
    if metric == "classwise_ece":
        p = np.asarray(s.probs, dtype=np.float64)
        k = p.shape[1]
        b = _b.bin_index(p, _b.width_edges(N_BINS), "right", uniform=True)
        cols = (b + N_BINS * np.arange(k)[None, :]).ravel()
        vals = ((s.labels[:, None] == np.arange(k)[None, :]).astype(np.float64) - p).ravel()
        return sparse.csr_matrix((vals, (np.repeat(np.arange(n), k), cols)), shape=(n, k * N_BINS))
    if metric == "auroc":
        if ood_set not in s.ood:
            raise ValueError(f"the run has no out-of-distribution probabilities of set {ood_set!r}; "
                             f"it has: {', '.join(s.ood) or 'none'}")
        h_in, h_out = (_entropy(p) for p in (s.probs, s.ood[ood_set]))
        order = np.argsort(h_in, kind="stable")
        srt = h_in[order]
        return order, np.searchsorted(srt, h_out, "left"), np.searchsorted(srt, h_out, "right")
    raise ValueError(f"metric {metric!r} has no per-example terms")


def _entropy(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)


def _auroc(w: np.ndarray, order, lo, hi) -> np.ndarray:
    """Weighted Mann-Whitney AUROC, P(H_out > H_in) + P(H_out = H_in) / 2, per resample:
    an in-example and an out-example count with the product of their weights."""
    out = np.empty(w.shape[0])
    cum = np.zeros((min(100, w.shape[0]), w.shape[1] + 1))      # column 0: nothing below the lowest score
    for a in range(0, w.shape[0], 100):
        blk = np.asarray(w[a:a + 100], dtype=np.float64)
        c = cum[:blk.shape[0]]
        np.cumsum(blk[:, order], axis=1, out=c[:, 1:])
        below, upto = c[:, lo], c[:, hi]
        out[a:a + 100] = (blk * (below + 0.5 * (upto - below))).sum(axis=1) / (blk.sum(axis=1) ** 2)
    return out


def replicated(s: Scored, metric: str, w: np.ndarray, ood_set: str = "") -> np.ndarray:
    """``metric`` (percent) of ``s`` on each resample (row) of the weights ``w``; metrics
    outside :data:`VECTORISED` on the first :data:`N_BOOT_SLOW` rows only."""
    check_metric(metric)
    w = np.asarray(w)
    if w.ndim != 2 or w.shape[1] != s.n:
        raise ValueError(f"w must be a (resamples, {s.n}) weight matrix; got shape {w.shape}")
    if metric in ("sweep_ece", "sweep_ece_mass"):
        return _sweeps(s, w[:N_BOOT_SLOW], "mass" if metric.endswith("_mass") else "width")
    if metric in SLOW:
        return np.array([100 * SLOW[metric](s.probs[i], s.labels[i]) for i in map(indices, w[:N_BOOT_SLOW])])
    if metric == "adaece":
        return _adaece(s, w[:N_BOOT_SLOW])
    if metric in ("debiased_ece", "debiased_ece_30"):
        return _debiased(s, w[:N_BOOT_SLOW], 30 if metric.endswith("_30") else N_BINS)
    if metric == "smece":
        return _smece(s, w[:N_BOOT_SLOW])
    total = resampling.totals(w)
    t = s.terms(metric, ood_set)
    if metric in ("error", "accuracy", "nll", "brier"):
        return 100 * matmul(w, t) / total
    if metric in ("s99_fraction", "s99_accuracy"):
        sums = matmul(w, t)
        if metric == "s99_fraction":
            return 100 * sums[:, 0] / total
        with np.errstate(invalid="ignore", divide="ignore"):
            return 100 * sums[:, 1] / sums[:, 0]
    if metric == "auroc":
        return 100 * _auroc(w, *t)
    sums = matmul(w, t)
    if metric == "ece":
        return 100 * np.abs(sums[:, :N_BINS]).sum(axis=1) / total
    if metric == "mce":
        gap, cnt = np.abs(sums[:, :N_BINS]), sums[:, N_BINS:]
        with np.errstate(invalid="ignore", divide="ignore"):
            return 100 * np.nanmax(np.where(cnt > 0, gap / cnt, np.nan), axis=1)
    k = s.probs.shape[1]
    return 100 * np.abs(sums).sum(axis=1) / (total * k)


def _sweeps(s: Scored, w: np.ndarray, binning: str) -> np.ndarray:
    """ECE-sweep (percent, :func:`replicate.metrics.ece_sweep`) on each row of ``w``: each
    resample's confidences in sorted order are the whole set's, sorted once, each repeated as
    often as drawn (ties in the order of the examples, as a stable sort of the resample
    leaves them), so no resample is gathered or sorted."""
    conf, hit = s.top()
    o = np.argsort(conf, kind="stable")
    xs, hs = conf[o], hit[o]
    return np.array([100 * _b.sweep_sorted(np.repeat(xs, k), np.repeat(hs, k), binning)[0]
                     for k in np.asarray(w, dtype=np.int64)[:, o]])


def point(s: Scored, metric: str, ood_set: str = "") -> float:
    """``metric`` (percent) of ``s`` on all its test examples."""
    return float(replicated(s, metric, np.ones((1, s.n)), ood_set)[0])


def plain(s: Scored, metric: str, w: np.ndarray, ood_set: str = "") -> np.ndarray:
    """The plain loop: each resample's examples gathered by index and scored by the
    package's metric functions (:mod:`replicate.metrics`) - the oracle of :func:`replicated`."""
    out = []
    for i in map(indices, np.asarray(w)):
        p, y = s.probs[i], s.labels[i]
        if metric == "auroc":
            v = _m.ood_auroc(p, s.ood[ood_set][i], validate=False)
        elif metric == "nll":
            v = -float(np.mean(s.logp_y[i]))
        elif metric in SLOW:
            v = SLOW[metric](p, y)
        elif metric in ("adaece", "smece"):
            v = (_m.adaptive_ece if metric == "adaece" else _m.smooth_ece)(p, y, validate=False)
        elif metric in ("debiased_ece", "debiased_ece_30"):
            v = _m.debiased_ece(p, y, n_bins=30 if metric.endswith("_30") else 15, validate=False)
        else:
            v = {"ece": lambda: _m.ece(p, y, validate=False), "mce": lambda: _m.mce(p, y, validate=False),
                 "classwise_ece": lambda: _m.classwise_ece(p, y, validate=False),
                 "error": lambda: _m.error_rate(p, y, validate=False),
                 "accuracy": lambda: 1 - _m.error_rate(p, y, validate=False),
                 "brier": lambda: _m.brier(p, y, validate=False),
                 "s99_fraction": lambda: _m.s99(p, y, validate=False)[0],
                 "s99_accuracy": lambda: _m.s99(p, y, validate=False)[1]}[check_metric(metric)]()
        out.append(100 * v)
    return np.array(out)


def _smece(s: Scored, w: np.ndarray) -> np.ndarray:
    """The smooth ECE (percent, :func:`replicate.metrics.smooth_ece`) of ``s`` on every row of
    the weights ``w`` at once: the weighted residuals and counts splatted onto relplot's grid
    and reflected at 0 and 1 once per grid size (their FFTs kept for the whole bisection), the
    Gaussian smoothing as one batch of FFTs, and relplot's bisection on the bandwidth run for
    all rows in step. Equal to :func:`plain` on the same rows, to rounding."""
    from scipy import fft

    conf, hit = s.top()
    r, w = conf - hit, np.asarray(w, dtype=np.float64)
    spectra: dict = {}

    def spectrum(m):                   # FFTs of the reflected splats of the residuals and counts
        if m not in spectra:
            pos = conf * (m - 1)
            i = np.clip(pos.astype(np.intp), 0, m - 2)
            frac, idx = pos - i, np.arange(conf.size)
            a = sparse.csr_matrix((np.r_[1 - frac, frac], (np.r_[idx, idx], np.r_[i, i + 1])), shape=(conf.size, m))
            size = fft.next_fast_len(3 * m - 2, real=True)     # circular: no wrap reaches the kept part
            out = []
            for v in (np.asarray((a.T @ (w * r).T).T), np.asarray((a.T @ w.T).T)):
                ext = np.concatenate([v[:, ::-1][:, :-1], v, v[:, ::-1][:, 1:]], axis=1)
                out.append(fft.rfft(ext, size, axis=1))
            spectra[m] = (size, out)
        return spectra[m]

    def value(sig, rows):
        out = np.empty(rows.size)
        ms = np.maximum(2000, np.round(20 / sig)).astype(int) // 2 + 1
        for m in set(ms.tolist()):
            k = np.flatnonzero(ms == m)
            g = np.linspace(0, 1, m)
            # one kernel per bandwidth: the bisection's first steps try one or a few for all rows
            u, inv = np.unique(sig[k], return_inverse=True)
            ker = np.exp(-(g[None] - 0.5) ** 2 / (2 * u[:, None] ** 2)) / (np.sqrt(2 * np.pi) * u[:, None])
            size, spec = spectrum(m)
            kf = fft.rfft(ker, size, axis=1)[inv]
            sm = [fft.irfft(x[rows[k]] * kf, size, axis=1)[:, m - 1 + m // 2:][:, :m] for x in spec]
            nts = np.maximum(np.round(10 / sig[k]), 200).astype(int)
            for nt in set(nts.tolist()):
                kk = np.flatnonzero(nts == nt)
                t = np.linspace(0, 1, nt)
                j = np.clip((t * (m - 1)).astype(np.intp), 0, m - 2)
                f = (t - j / (m - 1)) * (m - 1)
                ys, dens = (x[kk][:, j] * (1 - f) + x[kk][:, j + 1] * f for x in sm)
                dens = dens + 1e-4
                out[k[kk]] = np.sum(np.abs(ys / dens) * dens, axis=1) / np.sum(dens, axis=1)
        return out

    def too_small(sig, rows):
        out = sig < 1e-3
        live = np.flatnonzero(~out)
        out[live] = sig[live] < value(sig[live], rows[live])
        return out

    every = np.arange(w.shape[0])
    lo, hi = np.ones(every.size), np.zeros(every.size)
    go = ~too_small(lo, every)
    for _ in range(10):
        mid = (lo + hi) / 2
        small = np.zeros(every.size, dtype=bool)
        small[go] = too_small(mid[go], every[go])
        hi, lo = np.where(go & small, mid, hi), np.where(go & ~small, mid, lo)
    return 100 * value(lo, every)


def width_sums(probs, labels, w: np.ndarray, n_bins: int = N_BINS):
    """The equal-width bins of the top-label confidence (the reliability diagram's, closed
    on the right, :func:`replicate.metrics.reliability_bins`) on every row of the weights ``w``
    at once: ``(count, sum of confidences, sum of hits)``, each ``(B, n_bins)``, one product
    of ``w`` with each example's indicator, confidence and hit in its bin."""
    conf, pred = _b.top_label(np.asarray(probs))
    hit = (pred == np.asarray(labels)).astype(np.float64)
    n = conf.size
    b = _b.bin_index(conf, _b.width_edges(n_bins), "right", uniform=True)
    terms = sparse.csr_matrix((np.r_[np.ones(n), conf, hit], (np.tile(np.arange(n), 3),
                                                             np.r_[b, b + n_bins, b + 2 * n_bins])),
                              shape=(n, 3 * n_bins))
    sums = matmul(np.asarray(w), terms)
    return sums[:, :n_bins], sums[:, n_bins:2 * n_bins], sums[:, 2 * n_bins:]


def _mass_sums(s: Scored, w: np.ndarray, n_bins: int = N_BINS):
    """:func:`mass_sums` of the top-label confidences and hits of ``s``."""
    return mass_sums(*s.top(), w, n_bins)


def mass_sums(conf: np.ndarray, hit: np.ndarray, w: np.ndarray, n_bins: int = N_BINS):
    """Each resample's equal-mass bins (:func:`replicate.binning.mass_edges` of its
    confidences, with duplicates) as ``(count, sum of confidences, sum of hits)``, each
    ``(B, n_bins)``, for every row of the weights ``w`` at once: the examples sorted by
    confidence once, each resample's edges read from its cumulative weights, its bin sums
    from cumulative weighted sums (differences of the running sums at the bin bounds, the
    sums of :func:`replicate.binning.bin_sums` up to rounding), a block of rows at a time."""
    o = np.argsort(conf, kind="stable")
    srt, hit_o, w = conf[o], np.asarray(hit, dtype=np.float64)[o], np.asarray(w)
    b, n = w.shape
    sizes = np.full(n_bins, n // n_bins)
    sizes[: n % n_bins] += 1
    cut = np.cumsum(sizes)[:-1]
    at = np.concatenate([cut - 1, cut])                      # the sorted positions either side of each inner edge
    out = np.empty((3, b, n_bins))
    step = max(1, _BLOCK // max(n, 1))
    for a in range(0, b, step):
        ws = np.asarray(w[a:a + step], dtype=np.float64)[:, o]
        m = len(ws)
        run = np.cumsum(ws, axis=1)                           # whole numbers: exact
        v = srt[np.stack([np.searchsorted(c, at, "right") for c in run])]   # the resample's values there
        inner = (v[:, : n_bins - 1] + v[:, n_bins - 1:]) / 2.0
        q = np.stack([np.searchsorted(srt, e, "right") for e in inner])     # bin starts in sorted order
        bounds = np.concatenate([np.zeros((m, 1), dtype=np.intp), q, np.full((m, 1), n)], axis=1)
        out[0, a:a + m] = _between(run, bounds)
        for k, x in ((1, srt), (2, hit_o)):
            np.multiply(ws, x, out=run)
            np.cumsum(run, axis=1, out=run)
            out[k, a:a + m] = _between(run, bounds)
    return out[0], out[1], out[2]


def _between(run: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The sums between consecutive ``bounds`` (positions, per row) from the running sums
    ``run`` of each row: ``run[b_{k+1} - 1] - run[b_k - 1]``, the running sum before position
    0 being 0."""
    idx = bounds - 1
    got = np.take_along_axis(run, np.maximum(idx, 0), 1)
    got[idx < 0] = 0.0
    return np.diff(got, axis=1)


def _adaece(s: Scored, w: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """AdaECE (percent, :func:`replicate.metrics.adaptive_ece`) of ``s`` on every row of the
    weights ``w`` at once (:func:`_mass_sums`). Equal to :func:`plain` on the same rows, to
    rounding."""
    count, sc, sh = _mass_sums(s, w, n_bins)
    return 100 * np.abs(sh - sc).sum(axis=1) / count.sum(axis=1)


def _debiased(s: Scored, w: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """The debiased L2 calibration error of Kumar et al. (percent,
    :func:`replicate.metrics.debiased_ece`, equal-mass bins) on every row of ``w`` at once
    (:func:`_mass_sums`; bins with fewer than two examples count 0). Equal to :func:`plain`
    on the same rows, to rounding."""
    count, sc, sh = _mass_sums(s, w, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        a, cf = sh / count, sc / count
        term = np.where(count >= 2, count * ((a - cf) ** 2 - a * (1 - a) / (count - 1)), 0.0)
    return 100 * np.sqrt(np.maximum(term.sum(axis=1) / count.sum(axis=1), 0.0))