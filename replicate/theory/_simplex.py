"""Brute-force minimisation of a function over the probability simplex (K = 2, 3, 4).

Used where no theorem may be assumed about the minimiser, e.g. to test the claim that the
dual focal risk (Tao et al. 2023, Eq. 4) has an order-preserving minimiser: a dense
lattice over the whole simplex picks the basin, then a vectorised pattern search refines
it (halving the step on failure). The search directions are all integer vectors with
entries in ``[-(K-1), K-1]`` summing to zero; adding the same multiple of the step to
tied coordinates keeps them exactly tied, so minimisers that sit on a tie (as the dual
focal risk's often do: it jumps where two probabilities cross) are refined too. Nothing
in the search depends on the order of the posterior, on smoothness or on convexity.
"""
from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

__all__ = ["simplex_lattice", "minimize_on_simplex"]

_DEFAULT_RESOLUTION = {2: 2400, 3: 240, 4: 48}  # divisible by K: exact ties


def simplex_lattice(k: int, n: int) -> np.ndarray:
    """All points ``a / n`` with ``a`` a composition of ``n`` into ``k`` non-negative parts.

    Returns an array of shape ``(C(n + k - 1, k - 1), k)``.
    """
    if k < 2 or n < 1:
        raise ValueError(f"simplex_lattice needs k >= 2 and n >= 1, got k={k}, n={n}")
    # stars and bars: choose k-1 bar positions among n + k - 1 slots
    bars = np.array(list(itertools.combinations(range(n + k - 1), k - 1)), dtype=np.int64)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars,
                            np.full((len(bars), 1), n + k - 1)], axis=1)
    counts = np.diff(edges, axis=1) - 1
    return counts / float(n)


def minimize_on_simplex(risk: Callable[[np.ndarray, np.ndarray], np.ndarray], params: np.ndarray,
                        k: int, *, resolution: int | None = None, tol: float = 1e-12,
                        max_iter: int = 400, chunk: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Global minimiser of ``risk(q, params)`` over the simplex, for each row of ``params``.

    Parameters
    ----------
    risk : callable
        ``risk(q, p)`` with ``q`` of shape ``(N, M, K)`` and ``p`` of shape ``(N, 1, ...)``
        returns the risks, shape ``(N, M)``; ``inf`` where undefined.
    params : ndarray, shape (N, ...)
        One parameter row per problem (e.g. a class posterior).
    k : int, 2..4
        Number of classes.
    resolution : int, optional
        Lattice resolution ``n`` (spacing ``1/n``); defaults to 2400, 240, 48 for K = 2, 3, 4 (multiples of
        K, so that the lattice holds the uniform point and every tie pattern).
    tol : float
        Final pattern-search step.

    Returns
    -------
    q : ndarray (N, K)
        Minimisers.
    value : ndarray (N,)
        Risks at the minimisers.
    """
    if k not in _DEFAULT_RESOLUTION:
        raise ValueError(f"k must be 2, 3 or 4 for the brute-force search, got {k}")
    n = int(resolution or _DEFAULT_RESOLUTION[k])
    params = np.asarray(params, dtype=np.float64)
    grid = simplex_lattice(k, n)
    best_q = np.empty((len(params), k))
    for s in range(0, len(params), chunk):
        p = params[s:s + chunk, None]
        vals = risk(np.broadcast_to(grid, (len(p),) + grid.shape), p)
        vals = np.where(np.isfinite(vals), vals, np.inf)
        best_q[s:s + chunk] = grid[np.argmin(vals, axis=1)]
    span = range(-(k - 1), k)
    dirs = np.array([d for d in itertools.product(span, repeat=k) if any(d) and sum(d) == 0],
                    dtype=np.float64)
    x = best_q.copy()
    fx = risk(x[:, None, :], params[:, None])[:, 0]
    step = np.full(len(x), 1.0 / n)
    for _ in range(int(max_iter)):
        active = step > tol
        if not active.any():
            break
        cand = x[:, None, :] + step[:, None, None] * dirs[None]
        ok = (cand >= 0).all(-1)
        vals = risk(np.where(ok[..., None], cand, x[:, None, :]), params[:, None])
        vals = np.where(ok & np.isfinite(vals), vals, np.inf)
        j = np.argmin(vals, axis=1)
        fj = vals[np.arange(len(x)), j]
        better = active & (fj < fx)
        x = np.where(better[:, None], cand[np.arange(len(x)), j], x)
        fx = np.where(better, fj, fx)
        step = np.where(better | ~active, step, step / 2.0)
    return x, fx
