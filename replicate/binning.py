"""Binning core and input checks shared by every binned calibration metric.

One float64 core bins a vector of scores ``x`` (top-label confidences, or one class's
probabilities) against ``n_bins + 1`` edges ``e_0 <= ... <= e_n``:

* ``closed="right"`` (default, as in Guo et al. 2017 and Mukhoti et al. 2020 Eq. 1):
  bin ``b`` is ``(e_b, e_{b+1}]``, except that the first bin also holds ``e_0`` (a score
  of exactly 0 lands in bin 0);
* ``closed="left"``: bin ``b`` is ``[e_b, e_{b+1})``, except that the last bin also holds
  ``e_n`` (a score of exactly 1 lands in the last bin).

Every sample lands in exactly one bin. Repeated edges (ties in equal-mass binning) give
empty bins. Edges:

* ``"width"``: ``e_b = b / n_bins`` (correctly rounded float64, as ``i * 1.0 / n`` in
  Kumar et al. 2019's ``calibration`` package);
* ``"mass"``: the equal-mass rule of Kumar et al. (2019, ``get_equal_bins``): split the
  sorted scores into ``n_bins`` chunks whose sizes differ by at most one
  (``np.array_split``) and put each inner edge halfway between the last score of one chunk
  and the first of the next; ``e_0 = 0``, ``e_n = 1``. Ties straddling a split make two
  equal edges (an empty bin) instead of splitting tied samples; with ``N < n_bins`` the
  surplus edges sit at 1 and their bins are empty.

The released code of Mukhoti et al. (torrvision/focal_calibration, ``Metrics/metrics.py``)
uses other edges and drops samples; :func:`paper_adaptive_edges`, :func:`paper_width_edges`
and ``drop_outside=True`` reproduce it (see :mod:`replicate.metrics`).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .checks import positive_int

BINNINGS = ("width", "mass")
CLOSED = ("right", "left")
SUM_TOL = 1e-3  # rows of float32 softmax sum to 1 within ~1e-6; 1e-3 leaves room
_CHUNK = 1 << 16  # elements per chunk in the (N, K) passes: temporaries stay in cache


# ----------------------------------------------------------------------------- checks
def check_choice(name: str, value, allowed) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def check_n_bins(n_bins) -> int:
    return positive_int("n_bins", n_bins)


def to_numpy(x, name: str) -> np.ndarray:
    """numpy view of a numpy array, torch tensor or nested sequence (no copy when possible)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor, imported lazily
        import torch

        x = x.detach().cpu()
        if x.is_floating_point() and x.dtype not in (torch.float32, torch.float64):
            x = x.to(torch.float32)  # float16 / bfloat16 have no (exact) numpy twin
        x = x.numpy()
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array-like of numbers; got {type(x).__name__}") from err


def as_matrix(x, name: str) -> np.ndarray:
    """(N, K) float32/float64 array with N >= 1 and K >= 2 (other dtypes become float64)."""
    a = to_numpy(x, name)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2:
        raise ValueError(f"{name} must have shape (N, K) with N >= 1 samples and K >= 2 classes; "
                         f"got shape {a.shape}")
    if a.dtype.kind == "b" or a.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers (float32/float64); got dtype {a.dtype}")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return a


_TORCH_MIN = 1 << 22  # from this many elements, torch's reductions beat numpy's


def _use_torch(a: np.ndarray) -> bool:
    # torch.from_numpy warns on read-only arrays (np.load(mmap_mode="r"), ...): use numpy there
    return a.size >= _TORCH_MIN and a.flags.writeable


def _min_max(a: np.ndarray) -> tuple[float, float]:
    """(min, max), NaN if any entry is NaN."""
    if not _use_torch(a):
        return float(a.min()), float(a.max())
    import torch

    mn, mx = torch.aminmax(torch.from_numpy(np.ascontiguousarray(a)))  # one threaded pass
    return float(mn), float(mx)


def check_finite(a: np.ndarray, name: str) -> None:
    mn, mx = _min_max(a)
    if not (np.isfinite(mn) and np.isfinite(mx)):
        raise ValueError(f"{name} must be finite; it contains NaN or inf")


def as_probs(x, name: str = "probs", validate: bool = True) -> np.ndarray:
    """Probabilities (N, K): finite, in [0, 1], rows summing to 1 within ``SUM_TOL``."""
    a = as_matrix(x, name)
    if validate:
        mn, mx = _min_max(a)
        if np.isnan(mn) or np.isnan(mx):
            raise ValueError(f"{name} must be finite probabilities; it contains NaN")
        if mn < 0.0 or mx > 1.0:
            raise ValueError(f"{name} must be probabilities in [0, 1]; got values in [{mn}, {mx}]"
                             " (pass is_probs=False for logits)")
        # row sums at the input's precision: float32 error ~1e-6 << SUM_TOL
        if not _use_torch(a):
            rs = a.sum(axis=1)
        else:
            import torch

            rs = torch.from_numpy(np.ascontiguousarray(a)).sum(dim=1).numpy()
        worst = float(np.abs(rs - 1.0).max())
        if worst > SUM_TOL:
            raise ValueError(f"rows of {name} must sum to 1 within {SUM_TOL}; worst row is off by "
                             f"{worst:.3g} (pass is_probs=False for logits)")
    return a


def as_labels(labels, n: int, k: int, name: str = "labels") -> np.ndarray:
    """Integer class labels (N,) in [0, K), as intp."""
    y = to_numpy(labels, name)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must have shape (N,) = ({n},) to match the scores; got {y.shape}")
    if y.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integers in [0, {k}); got dtype {y.dtype}")
    lo, hi = int(y.min()), int(y.max())
    if lo < 0 or hi >= k:
        raise ValueError(f"{name} must be integers in [0, {k}) (K = {k} classes); "
                         f"got values in [{lo}, {hi}]")
    return y.astype(np.intp, copy=False)


def top_label(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence (float64) and prediction; ties go to the lowest class index.

    numpy's SIMD argmax plus a gather beats ``torch.max(dim=1)`` here, threads or not.
    """
    pred = p.argmax(axis=1)
    return p[np.arange(p.shape[0]), pred].astype(np.float64), pred.astype(np.intp, copy=False)


# ----------------------------------------------------------------------------- edges
@lru_cache(maxsize=64)
def _width_edges(n_bins: int) -> np.ndarray:
    e = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    e.flags.writeable = False
    return e


def width_edges(n_bins: int) -> np.ndarray:
    """Equal-width edges ``b / n_bins``, b = 0..n_bins (float64, correctly rounded)."""
    return _width_edges(check_n_bins(n_bins))


def mass_edges(x: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges of Kumar et al. (2019): midpoints between ``np.array_split`` chunks."""
    n_bins = check_n_bins(n_bins)
    s = np.sort(np.asarray(x, dtype=np.float64))
    n = s.size
    sizes = np.full(n_bins, n // n_bins, dtype=np.intp)
    sizes[: n % n_bins] += 1
    cut = np.cumsum(sizes)[:-1]  # first index of chunks 1..n_bins-1
    inner = np.ones(n_bins - 1)
    ok = cut < n
    inner[ok] = (s[cut[ok] - 1] + s[cut[ok]]) / 2.0
    return np.concatenate(([0.0], inner, [1.0]))


def paper_adaptive_edges(x: np.ndarray, n_bins: int) -> np.ndarray:
    """AdaECE edges of the released code: ``np.interp(linspace(0, N, n+1), arange(N), sort(x))``.

    The grid runs to N while the sorted scores sit at 0..N-1, so the last edge is the
    maximum and the first the minimum. The code compares float32 confidences with these
    float64 edges through torch, which rounds each edge to float32 first; float32 input
    therefore gets float32-rounded edges here too (float64 input keeps float64 edges).
    """
    n_bins = check_n_bins(n_bins)
    n = x.shape[0]
    e = np.interp(np.linspace(0, n, n_bins + 1), np.arange(n), np.sort(x))
    if x.dtype == np.float32:
        e = e.astype(np.float32)
    return e.astype(np.float64)


def paper_width_edges(n_bins: int) -> np.ndarray:
    """Equal-width edges of the released code: ``torch.linspace(0, 1, n+1)`` in float32."""
    import torch

    n_bins = check_n_bins(n_bins)
    return torch.linspace(0, 1, n_bins + 1).numpy().astype(np.float64)


# ----------------------------------------------------------------------------- assignment
def bin_index(x: np.ndarray, edges: np.ndarray, closed: str = "right", *,
              drop_outside: bool = False, uniform: bool = False) -> np.ndarray:
    """Bin of each score in ``x`` (any shape); ``n_bins`` marks a dropped sample.

    ``uniform=True`` promises edges close to ``b / n_bins`` (within a fraction of a bin) and
    takes the arithmetic first guess ``floor(x n)``, corrected by one comparison with the
    true edges on each side: the same answer as ``np.searchsorted`` on the inner edges,
    faster. ``drop_outside=True`` applies the interval rule to the end bins too (no
    special case for ``e_0`` / ``e_n``): samples outside every bin get index ``n_bins``,
    as in the released code of Mukhoti et al.
    """
    edges = np.asarray(edges, dtype=np.float64)
    n = edges.size - 1
    x = np.asarray(x, dtype=np.float64)
    right = check_choice("closed", closed, CLOSED) == "right"
    if uniform:  # first guess floor(x n), then at most one step to either side
        b = np.multiply(x, n).astype(np.intp)  # truncation == floor for x >= 0
        np.clip(b, 0, n - 1, out=b)
        if n > 1:
            if np.array_equal(edges, _width_edges(n)):
                lo, hi = b / n, (b + 1) / n  # == edges[b], edges[b+1]: same rounded division
            else:
                lo, hi = edges[b], edges[b + 1]
            down = (x <= lo) if right else (x < lo)
            down &= b > 0
            up = (x > hi) if right else (x >= hi)
            up &= b < n - 1
            if down.any():
                b[down] -= 1
            if up.any():
                b[up] += 1
    else:
        b = np.searchsorted(edges[1:-1], x, side="left" if right else "right").astype(np.intp)
    if drop_outside:
        out = ((x <= edges[0]) | (x > edges[-1])) if right else ((x < edges[0]) | (x >= edges[-1]))
        b[out] = n
    return b


def bin_sums(idx: np.ndarray, n_bins: int, conf: np.ndarray, hit: np.ndarray):
    """Per-bin count, confidence sum and hit sum (float64 accumulation), dropped index ignored.

    Parameters
    ----------
    idx : numpy.ndarray
        Bin of each sample (:func:`bin_index`), shape (N,), or (R, N) for R sets of N
        samples at once (e.g. one row per temperature); ``n_bins`` marks a dropped sample.
    n_bins : int
        Number of bins.
    conf, hit : numpy.ndarray
        Confidences and hits (bool or 0/1), the shape of ``idx``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(count, sum of conf, sum of hit)``, each of shape (n_bins,) or (R, n_bins); the
        sums of a row are accumulated in the same order as for that row alone.
    """
    m = n_bins + 1
    if np.ndim(idx) == 2:
        rows = idx.shape[0]
        flat = (idx + m * np.arange(rows)[:, None]).ravel()
        out = (np.bincount(flat, minlength=rows * m),
               np.bincount(flat, weights=np.asarray(conf, dtype=np.float64).ravel(), minlength=rows * m),
               np.bincount(flat, weights=np.asarray(hit, dtype=np.float64).ravel(), minlength=rows * m))
        return tuple(a.reshape(rows, m)[:, :n_bins] for a in out)
    count = np.bincount(idx, minlength=m)[:n_bins]
    s_conf = np.bincount(idx, weights=conf, minlength=m)[:n_bins]
    s_hit = np.bincount(idx, weights=np.asarray(hit, dtype=np.float64), minlength=m)[:n_bins]
    return count, s_conf, s_hit


def classwise_sums(p: np.ndarray, y: np.ndarray, edges: np.ndarray, closed: str = "right", *,
                   n_classes: int | None = None, drop_outside: bool = False):
    """(K, n_bins) count, sum of p_k and sum of 1[y = k] per class and equal-width bin.

    One chunked pass over the (N, K) matrix; the hit sums need only the N true-class
    entries, since 1[y = k] is zero elsewhere.
    """
    nb = edges.size - 1
    k = p.shape[1] if n_classes is None else n_classes
    count = np.zeros(k * (nb + 1), dtype=np.int64)
    s_conf = np.zeros(k * (nb + 1))
    off = np.arange(k, dtype=np.intp) * (nb + 1)
    rows = max(1, _CHUNK // max(k, 1))
    for a in range(0, p.shape[0], rows):
        blk = np.asarray(p[a:a + rows, :k], dtype=np.float64)
        idx = bin_index(blk, edges, closed, drop_outside=drop_outside, uniform=True)
        idx += off
        count += np.bincount(idx.ravel(), minlength=count.size)
        s_conf += np.bincount(idx.ravel(), weights=blk.ravel(), minlength=count.size)
    keep = y < k
    yk = y[keep]
    p_true = p[np.flatnonzero(keep), yk]
    it = bin_index(p_true, edges, closed, drop_outside=drop_outside, uniform=True)
    s_hit = np.bincount(it + off[yk], minlength=count.size).astype(np.float64)
    shape = (k, nb + 1)
    return (count.reshape(shape)[:, :nb], s_conf.reshape(shape)[:, :nb],
            s_hit.reshape(shape)[:, :nb])


# ----------------------------------------------------------------------------- sweep
def sweep(conf: np.ndarray, hit: np.ndarray, binning: str, closed: str = "right",
          p: float = 1.0) -> tuple[float, int]:
    """Monotonic-sweep calibration error of Roelofs et al. (2022, Sec. 4), and its bin count.

    For b = 2, 3, ..., N-1 bins, keep the largest b before the first b whose non-empty
    bins' accuracies are not non-decreasing; return the L_p binned error with that b
    (one bin when N <= 2 or when already b = 2 breaks monotonicity). As in the authors'
    code (google-research ``caltrain``), ``"mass"`` bins are rank-based: after a stable
    sort, sample of rank r goes to bin floor(r b / N) (exact integers here), so tied
    scores may be split; ``"width"`` bins are the equal-width bins of this module
    (``closed="left"`` is caltrain's ``floor(x b)`` rule with 1 in the last bin).
    Each step costs O(b log N) through cumulative sums over the sorted scores.
    """
    order = np.argsort(conf, kind="stable")
    return sweep_sorted(conf[order], np.asarray(hit, dtype=np.float64)[order], binning, closed, p)


def sweep_sorted(xs: np.ndarray, hs: np.ndarray, binning: str, closed: str = "right",
                 p: float = 1.0) -> tuple[float, int]:
    """:func:`sweep` of scores already in stable-sorted order ``xs`` with their outcomes ``hs``
    in the same order (float64)."""
    check_choice("binning", binning, BINNINGS)
    right = check_choice("closed", closed, CLOSED) == "right"
    n = xs.size
    cx = np.concatenate(([0.0], np.cumsum(xs)))
    cy = np.concatenate(([0.0], np.cumsum(hs)))

    def bounds(b: int) -> np.ndarray:
        j = np.arange(b + 1, dtype=np.int64)
        if binning == "mass":
            return -((-j * n) // b)  # ceil(j N / b): first rank of bin j
        inner = np.searchsorted(xs, np.arange(1, b) / b, side="right" if right else "left")
        return np.concatenate(([0], inner, [n]))

    def stats(b: int):
        bd = bounds(b)
        size = np.diff(bd)
        nz = size > 0
        acc = (cy[bd[1:]] - cy[bd[:-1]])[nz] / size[nz]
        cf = (cx[bd[1:]] - cx[bd[:-1]])[nz] / size[nz]
        return size[nz], acc, cf

    best = 1
    for b in range(2, n):
        _, acc, _ = stats(b)
        if np.any(np.diff(acc) < 0):
            break
        best = b
    size, acc, cf = stats(best)
    err = float(np.sum(size * np.abs(acc - cf) ** p) / n) ** (1.0 / p)
    return err, best
