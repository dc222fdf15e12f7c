"""Brute-force minimisation of a function over the probability simplex (K = 2, 3, 4), and the
grids over it the chapters evaluate on (:func:`simplex_lattice`, :func:`simplex_grid`).

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

__all__ = ["simplex_lattice", "simplex_grid", "minimize_on_simplex", "pattern_search", "pairwise_directions"]

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
                        max_iter: int = 400, chunk: int = 64,
                        lattice_risk: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
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
    lattice_risk : callable, optional
        ``lattice_risk(grid, p)`` with ``grid`` of shape ``(M, K)`` and ``p`` of shape
        ``(N, ...)`` returns the ``(N, M)`` risks of every lattice point for every row at
        once (e.g. as a matrix product when the risk is linear in the parameters); it must
        equal ``risk`` on the lattice. Without it ``risk`` is evaluated in chunks of rows.

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
        p = params[s:s + chunk]
        if lattice_risk is None:
            vals = risk(np.broadcast_to(grid, (len(p),) + grid.shape), p[:, None])
        else:
            vals = lattice_risk(grid, p)
        vals = np.where(np.isfinite(vals), vals, np.inf)
        best_q[s:s + chunk] = grid[np.argmin(vals, axis=1)]
    span = range(-(k - 1), k)
    dirs = np.array([d for d in itertools.product(span, repeat=k) if any(d) and sum(d) == 0],
                    dtype=np.float64)
    return pattern_search(risk, best_q, params, dirs, step=1.0 / n, tol=tol, max_iter=max_iter)


def pairwise_directions(k: int) -> np.ndarray:
    """The ``k (k - 1)`` directions ``e_i - e_j`` (move mass from class ``j`` to ``i``)."""
    eye = np.eye(k)
    return np.array([eye[i] - eye[j] for i in range(k) for j in range(k) if i != j])


def pattern_search(risk: Callable[[np.ndarray, np.ndarray], np.ndarray], x0: np.ndarray,
                   params: np.ndarray, dirs: np.ndarray | None = None, *, step: float = 1e-2,
                   tol: float = 1e-12, max_iter: int = 400,
                   stop_below: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised compass search on the simplex from the rows of ``x0`` (any K).

    Each iteration tries ``x + step * d`` for every direction ``d`` (rows of ``dirs``,
    summing to zero; default :func:`pairwise_directions`), keeps the best if it lowers
    ``risk`` and stays in the simplex, and halves the row's step otherwise, until the step
    is below ``tol``. ``risk(q, p)`` as in :func:`minimize_on_simplex`. Returns the points
    and their risks; it only ever moves downhill, so a returned risk below a reference value
    certifies that the reference point is not a minimiser (``stop_below``: per-row values
    at which a row stops searching, for such certificates).
    """
    x = np.array(x0, dtype=np.float64)
    params = np.asarray(params, dtype=np.float64)
    dirs = pairwise_directions(x.shape[-1]) if dirs is None else np.asarray(dirs, dtype=np.float64)
    fx = risk(x[:, None, :], params[:, None])[:, 0]
    steps = np.full(len(x), float(step))
    rows = np.arange(len(x))
    for _ in range(int(max_iter)):
        active = steps > tol
        if stop_below is not None:
            active &= ~(fx < stop_below)
        if not active.any():
            break
        cand = x[:, None, :] + steps[:, None, None] * dirs[None]
        ok = (cand >= 0).all(-1)
        vals = risk(np.where(ok[..., None], cand, x[:, None, :]), params[:, None])
        vals = np.where(ok & np.isfinite(vals), vals, np.inf)
        j = np.argmin(vals, axis=1)
        fj = vals[rows, j]
        better = active & (fj < fx)
        x = np.where(better[:, None], cand[rows, j], x)
        fx = np.where(better, fj, fx)
        steps = np.where(better | ~active, steps, steps / 2.0)
    return x, fx


def simplex_grid(resolution: int, *, interior: bool = True):
    """Points ``a / resolution`` of the 3-class simplex (strictly inside if ``interior``)."""
    i, j = np.meshgrid(np.arange(resolution + 1), np.arange(resolution + 1), indexing="ij")
    k = resolution - i - j
    keep = (k >= 0) & ((i > 0) & (j > 0) & (k > 0) if interior else True)
    return np.stack([i[keep], j[keep], k[keep]], -1) / resolution
