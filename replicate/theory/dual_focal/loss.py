"""Dual focal loss theory: Tao, Dong & Xu (2023), Sec. 4 and Appendices A-B.

The dual focal loss (DFL, Eq. 3) for a prediction ``q`` and ground-truth class ``gt`` is
``-(1 - q_gt + q_j)^gamma log q_gt`` with ``q_j = max{q_i : q_i < q_gt}`` (0 if no class
is strictly below). Its conditional risk (Eq. 4) is ``R(q; eta) = sum_i eta_i * loss_i``.

Section 4 studies the function (Lemma 1, App. B)

    phi(v) = (1 - v + C)^gamma - gamma (1 - v + C)^(gamma - 1) v log v,   C = q_j,

(``phi = 1`` for the class ``j`` itself). ``C = 0`` gives the focal-loss function of
Charoenphakdee et al. (2021). Lemma 1: ``phi(0) = (1 + C)^gamma``, ``phi(1) = C^gamma`` and
``phi`` rises to a unique maximum at ``v_m`` then falls. The paper's over-confidence region
is ``(0, v_m]``; the under-confidence region is ``[v', 1)`` for FL, with
``phi(v') = (1 + C)^gamma``, and ``[v_uc, 1)`` for DFL, with ``phi(v_uc) = 1``.

This module gives ``phi``, its derivative (App. B, Eq. 25), the points ``v_m, v', v_uc``,
the conditional risks of FL and DFL, a brute-force global minimiser of the DFL risk (no
assumption on order or smoothness: the DFL risk is discontinuous where two
probabilities tie), the exact stationarity posterior of a DFL point and the paper's
Eq. 9 map, so that the chapter can test Theorem 1 and Eqs. 9-11 against each other.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from ... import checks
from .._simplex import minimize_on_simplex

__all__ = [
    "dual_focal_phi",
    "dual_focal_phi_derivative",
    "phi_argmax",
    "phi_level_crossing",
    "under_confidence_threshold",
    "phi_key_points",
    "dual_focal_conditional_risk",
    "focal_conditional_risk",
    "dual_focal_risk_minimizer",
    "focal_risk_minimizer_bruteforce",
    "order_report",
    "dfl_stationary_posterior",
    "paper_eq9_posterior",
]

_BISECT = 200
#: gamma of phi: > 0 (checks.gammas), since phi is constant 1 at gamma = 0
_gamma = functools.partial(checks.gammas, strict=True, why=" (phi is constant 1 at gamma = 0)")


def _dual(c, *, name: str = "c") -> np.ndarray:
    cc = np.asarray(c, dtype=np.float64)
    if not np.all(np.isfinite(cc)) or np.any((cc < 0) | (cc >= 1)):
        raise ValueError(f"{name} (the dual probability q_j) must lie in [0, 1), got {c!r}")
    return cc


def _xlogx(v: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)


def dual_focal_phi(v, gamma, c):
    """``phi(v) = (1-v+c)^gamma - gamma (1-v+c)^(gamma-1) v log v`` (Tao et al. Sec. 4).

    All arguments broadcast. ``v log v`` is 0 at ``v = 0`` and the second term is 0 at
    ``v = 1`` with ``c = 0`` (its limit), so ``phi(0) = (1+c)^gamma`` and ``phi(1) = c^gamma``.

    Parameters
    ----------
    v : array_like in [0, 1]
        The probability of the class (``q_m`` in Ineq. 11).
    gamma : array_like, > 0
        Focal parameter.
    c : array_like in [0, 1)
        The dual probability ``C = q_j``; ``c = 0`` is focal loss.

    Example
    -------
    >>> from replicate.theory import dual_focal_phi
    >>> round(float(dual_focal_phi(0.5, gamma=2.0, c=0.1)), 4)
    0.7759
    """
    v, g, c = np.broadcast_arrays(checks.probabilities(v, "v"), _gamma(gamma), _dual(c))
    b = 1.0 - v + c
    with np.errstate(divide="ignore", invalid="ignore"):
        second = np.where(b > 0, g * b ** (g - 1.0) * _xlogx(v), 0.0)
    out = b ** g - second
    return out[()] if out.ndim == 0 else out


def _s(v, g, c):
    """The bracket of App. B Eq. 25: ``s(v) = 2(v-1-C) + gamma v log v - (1+C) log v``."""
    return 2.0 * (v - 1.0 - c) + g * _xlogx(v) - (1.0 + c) * np.log(v)


def dual_focal_phi_derivative(v, gamma, c):
    """``d phi / dv = gamma (1-v+C)^(gamma-2) s(v)`` for ``v`` in (0, 1) (App. B, Eq. 25)."""
    v, g, c = np.broadcast_arrays(checks.probabilities(v, "v"), _gamma(gamma), _dual(c))
    if np.any((v <= 0) | (v >= 1)):
        raise ValueError("v must lie in the open interval (0, 1) for the derivative")
    out = g * (1.0 - v + c) ** (g - 2.0) * _s(v, g, c)
    return out[()] if out.ndim == 0 else out


def phi_argmax(gamma, c=0.0):
    """``v_m``: the unique maximiser of ``phi`` on (0, 1) (Lemma 1), by bisection on ``s``.

    ``s`` is convex with ``s(0+) = +inf`` and ``s < 0`` just left of 1, so its only root
    in (0, 1) is where ``s`` changes sign from + to -. Bisection runs on ``log v``.
    """
    g, c = np.broadcast_arrays(_gamma(gamma), _dual(c))
    lo = np.full(g.shape, -745.0)        # log of the smallest positive double
    hi = np.full(g.shape, np.log1p(-1e-12))
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        pos = _s(np.exp(mid), g, c) > 0
        lo = np.where(pos, mid, lo)
        hi = np.where(pos, hi, mid)
    out = np.exp(0.5 * (lo + hi))
    return out[()] if out.ndim == 0 else out


def phi_level_crossing(level, gamma, c=0.0):
    """The ``v`` in ``(v_m, 1)`` with ``phi(v) = level`` (phi decreases there).

    Requires ``c^gamma < level < phi(v_m)``; otherwise the crossing does not exist and a
    ``ValueError`` names the offending inputs.
    """
    lv, g, c = np.broadcast_arrays(np.asarray(level, dtype=np.float64), _gamma(gamma), _dual(c))
    vm = np.asarray(phi_argmax(g, c))
    top = np.asarray(dual_focal_phi(vm, g, c))
    if np.any(~(lv < top)) or np.any(~(lv > c ** g)):
        raise ValueError("level must lie strictly between phi(1) = c**gamma and phi(v_m) for "
                         "every (gamma, c); got a level outside that range")
    lo, hi = vm.copy(), np.ones_like(vm)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        above = dual_focal_phi(mid, g, c) > lv
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    out = 0.5 * (lo + hi)
    return out[()] if out.ndim == 0 else out


def under_confidence_threshold(gamma, c=0.0):
    """``v_uc``: the start of the eta-under-confidence region ``[v_uc, 1)``.

    ``phi(v_uc) = 1`` on the falling branch of ``phi`` (Tao et al. Sec. 4.2). With
    ``c = 0`` this is focal loss, where ``v_uc = v'`` since ``(1 + 0)^gamma = 1``; with
    ``c = q_j > 0`` it is the dual focal loss threshold. Broadcasts over ``gamma`` and ``c``.

    Parameters
    ----------
    gamma : array_like, > 0
        The focal parameter.
    c : array_like in [0, 1)
        The dual probability ``C = q_j`` (default 0: focal loss).

    Example
    -------
    >>> from replicate.theory import under_confidence_threshold
    >>> round(float(under_confidence_threshold(2.0)), 4)
    0.2976
    """
    g, c = np.broadcast_arrays(_gamma(gamma), _dual(c))
    return phi_level_crossing(np.ones(g.shape), g, c)


def phi_key_points(gamma, c=0.0) -> dict:
    """``v_m``, ``phi(v_m)``, ``v'``, ``v_uc`` and the two region reductions, broadcast.

    ``reduction_paper = v_uc - v'`` is the paper's ``phi^{-1}(1) - phi^{-1}((1+C)^gamma)``
    (both inverses of the DFL ``phi``); ``reduction_vs_focal = v_uc(c) - v_uc(0)`` compares
    the DFL region with focal loss's region at the same gamma.
    """
    g, c = np.broadcast_arrays(_gamma(gamma), _dual(c))
    vm = phi_argmax(g, c)
    vp = phi_level_crossing((1.0 + c) ** g, g, c)
    vuc = under_confidence_threshold(g, c)
    vuc_fl = under_confidence_threshold(g, np.zeros_like(c))
    return {"gamma": g, "c": c, "v_m": vm, "phi_max": dual_focal_phi(vm, g, c), "v_prime": vp,
            "v_uc": vuc, "v_uc_focal": vuc_fl, "reduction_paper": vuc - vp,
            "reduction_vs_focal": vuc - vuc_fl}


# ----------------------------------------------------------------------------- risks
def _dual_probability(q: np.ndarray, eta: np.ndarray | None, ties: str) -> np.ndarray:
    """``c_i``: the largest ``q_k < q_i`` (0 if none); under ``ties="limit"`` a tied class
    that is not its group's designated lowest member (largest ``eta``) gets ``c_i = q_i``."""
    below = q[..., None, :] < q[..., :, None]                 # [..., i, k]: q_k < q_i
    c = np.where(below, q[..., None, :], 0.0).max(-1)
    if ties == "strict":
        return c
    k = q.shape[-1]
    same = (q[..., None, :] == q[..., :, None]) & ~np.eye(k, dtype=bool)
    e_i, e_k = eta[..., :, None], eta[..., None, :]
    idx = np.arange(k)
    outranks = (e_i > e_k) | ((e_i == e_k) & (idx[:, None] < idx[None, :]))
    lowest = np.where(same, outranks, True).all(-1)
    return np.where(same.any(-1) & ~lowest, q, c)


def _per_class_loss(q: np.ndarray, gamma: float, c) -> np.ndarray:
    """``-(1 - q_i + c_i)^gamma log q_i``."""
    with np.errstate(divide="ignore"):
        return -(1.0 - q + c) ** gamma * np.log(q)


_TIES = ("strict", "limit")


def dual_focal_conditional_risk(q, eta, gamma, *, ties: str = "strict"):
    """DFL conditional risk ``sum_i eta_i (-(1 - q_i + q_j(i))^gamma log q_i)`` (Eq. 4).

    ``q_j(i)`` is the largest probability strictly below ``q_i`` (0 if none), as in Eq. 3 and
    the authors' code. The risk jumps where two probabilities cross. ``ties`` chooses its
    value on a tie:

    - ``"strict"`` (Eq. 3 literally): tied classes both skip each other, so each takes the
      next strictly lower probability; a tie is then never worse than its neighbourhood.
    - ``"limit"``: the smallest limit from tie-free predictions (the upper tied classes see
      the tied value, ``c_i = q_i``; the tied class with the largest ``eta`` sees the next
      lower one). Minimising this gives the infimum over predictions without ties, i.e. what
      a gradient method, which never sits exactly on a tie, can approach.

    Classes with ``eta_i = 0`` contribute 0. Broadcasts over leading axes.
    """
    q, eta = checks.simplex(q, "q", normalised=False), checks.simplex(eta, "eta", normalised=False)
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")
    g = float(_gamma(gamma))
    q, eta = np.broadcast_arrays(q, eta)
    loss = _per_class_loss(q, g, _dual_probability(q, eta, ties))
    return np.where(eta > 0, eta * loss, 0.0).sum(-1)


def focal_conditional_risk(q, eta, gamma):
    """Focal conditional risk ``sum_i eta_i (-(1 - q_i)^gamma log q_i)`` (Eq. 4, first line)."""
    q, eta = checks.simplex(q, "q", normalised=False), checks.simplex(eta, "eta", normalised=False)
    g = float(_gamma(gamma))
    loss = _per_class_loss(q, g, 0.0)
    return np.where(eta > 0, eta * loss, 0.0).sum(-1)


def _minimize(risk, eta, resolution, lattice_risk=None):
    eta = checks.simplex(eta, "eta", normalised=False)
    shape = eta.shape
    q, _ = minimize_on_simplex(risk, eta.reshape(-1, shape[-1]), shape[-1], resolution=resolution,
                               lattice_risk=lattice_risk)
    return q.reshape(shape)


def _linear_risks(losses, eta):
    """``sum_i eta_i L_i`` for every lattice point (``losses`` (M, K)) and posterior (N, K);
    a class with ``eta_i = 0`` contributes 0 even where its loss is infinite."""
    finite = np.isfinite(losses)
    out = eta @ np.where(finite, losses, 0.0).T
    edge = np.flatnonzero(~finite.all(1))               # lattice points with some q_i = 0
    if edge.size:
        hit = (eta[:, None, :] > 0) & ~finite[None, edge, :]
        out[:, edge] = np.where(hit.any(-1), np.inf, out[:, edge])
    return out


def _lattice_risks(grid, eta, g: float, ties: str, same_order: bool):
    """DFL risks of every lattice point for every posterior at once (the risk is linear in
    ``eta``). ``ties="limit"``: the smallest limit from tie-free predictions is the minimum,
    over the orders in which the tied classes can be split, of the risk of that split."""
    k = grid.shape[-1]
    strict = _dual_probability(grid, None, "strict")
    variants = [strict]
    if ties == "limit":
        tied = (grid[:, None, :] == grid[:, :, None]) & ~np.eye(k, dtype=bool)   # [m, i, l]
        variants = []
        for order in itertools.permutations(range(k)):
            rank = np.argsort(order)                    # rank[i]: place of class i in the split
            above = tied & (rank[None, None, :] < rank[None, :, None])   # a tied class l below i
            variants.append(np.where(above.any(-1), grid, strict))
    risks = _linear_risks(_per_class_loss(grid, g, variants[0]), eta)
    for c in variants[1:]:
        np.minimum(risks, _linear_risks(_per_class_loss(grid, g, c), eta), out=risks)
    if same_order:
        bad = np.zeros(risks.shape, dtype=bool)
        for a, b in itertools.permutations(range(k), 2):
            bad |= (eta[:, a] < eta[:, b])[:, None] & (grid[:, a] > grid[:, b])[None, :]
        risks = np.where(bad, np.inf, risks)
    return risks


def dual_focal_risk_minimizer(eta, gamma, *, ties: str = "strict", same_order: bool = False,
                              resolution: int | None = None):
    """Global minimiser of the DFL conditional risk, by lattice search + pattern search.

    Works for K = 2, 3, 4 classes (last axis). It assumes nothing about the order of the
    minimiser (Theorem 1 is what it is used to test). ``ties`` as in
    :func:`dual_focal_conditional_risk`. ``same_order=True`` restricts the search to
    predictions ordered like ``eta`` (``eta_a < eta_b`` implies ``q_a <= q_b``): the best
    prediction Theorem 1 allows, to compare with the unrestricted minimiser.
    """
    g = float(_gamma(gamma))
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {ties!r}")

    def risk(q, p):
        r = dual_focal_conditional_risk(q, p, g, ties=ties)
        if same_order:
            bad = ((p[..., :, None] < p[..., None, :]) & (q[..., :, None] > q[..., None, :])).any((-1, -2))
            r = np.where(bad, np.inf, r)
        return r

    return _minimize(risk, eta, resolution,
                     lambda grid, p: _lattice_risks(grid, p, g, ties, same_order))


def focal_risk_minimizer_bruteforce(eta, gamma, *, resolution: int | None = None):
    """The same brute-force search for the focal-loss conditional risk (K = 2, 3, 4)."""
    g = float(_gamma(gamma))
    return _minimize(lambda q, p: focal_conditional_risk(q, p, g), eta, resolution)


def order_report(q, eta, *, atol: float = 1e-9) -> dict:
    """Per row: ties in the prediction, violations of strict order preservation, Bayes class.

    - ``top_tie``: the largest predicted probability is shared (within ``atol``);
    - ``any_tie``: some two predicted probabilities are equal;
    - ``order_violation``: some ``q_a < q_b`` with ``eta_a >= eta_b`` (Theorem 1 fails);
    - ``bayes_recovered``: the prediction's argmax is unique and is a Bayes class.
    """
    q, eta = checks.simplex(q, "q", normalised=False), checks.simplex(eta, "eta", normalised=False)
    s = np.sort(q, -1)
    gaps = np.diff(s, axis=-1)
    viol = ((q[..., :, None] < q[..., None, :] - atol)
            & (eta[..., :, None] >= eta[..., None, :])).any((-1, -2))
    top_tie = gaps[..., -1] <= atol
    m = np.argmax(q, -1)[..., None]
    bayes = np.take_along_axis(eta, m, -1)[..., 0] >= eta.max(-1) - 1e-12
    return {"top_tie": top_tie, "any_tie": (gaps <= atol).any(-1), "order_violation": viol,
            "bayes_recovered": bayes & ~top_tie}


def dfl_stationary_posterior(q, gamma):
    """The unique posterior ``eta`` for which ``q`` is a stationary point of the DFL risk.

    Exact first-order condition (not the paper's Eq. 9). Sort ``q`` decreasingly,
    ``q_(1) > ... > q_(K)``, with ``b_r = 1 - q_(r) + q_(r+1)`` (``q_(K+1) = 0``). Class
    ``r`` enters its own term and, as the dual probability, the term of class ``r - 1``:

        dR/dq_(r) = eta_(r) A_r + eta_(r-1) B_r,
        A_r = gamma b_r^(gamma-1) log q_(r) - b_r^gamma / q_(r)  (< 0),
        B_r = -gamma b_(r-1)^(gamma-1) log q_(r-1)               (>= 0, B_1 = 0).

    Setting every ``dR/dq_(r)`` equal to ``-nu`` gives a bidiagonal linear system, solved
    forward and normalised. ``q`` must have distinct, positive entries (the risk is not
    differentiable at ties).
    """
    q = checks.simplex(q, "q", normalised=False)
    g = float(_gamma(gamma))
    order = np.argsort(-q, axis=-1)
    qs = np.take_along_axis(q, order, -1)
    if np.any(qs <= 0) or np.any(np.diff(qs, axis=-1) >= 0):
        raise ValueError("q must have distinct, positive entries")
    nxt = np.concatenate([qs[..., 1:], np.zeros(qs.shape[:-1] + (1,))], -1)
    b = 1.0 - qs + nxt
    a = g * b ** (g - 1.0) * np.log(qs) - b ** g / qs
    bterm = -g * b ** (g - 1.0) * np.log(qs)          # B_{r+1}, indexed by r
    eta = np.empty_like(qs)
    eta[..., 0] = 1.0 / -a[..., 0]
    for r in range(1, qs.shape[-1]):                  # K steps, vectorised over rows
        eta[..., r] = (1.0 + eta[..., r - 1] * bterm[..., r - 1]) / -a[..., r]
    eta = eta / eta.sum(-1, keepdims=True)
    out = np.empty_like(eta)
    np.put_along_axis(out, order, eta, -1)
    return out


def paper_eq9_posterior(q, gamma):
    """The paper's Eq. 9: ``eta_i = (q_i / phi(q_i)) / sum_k (q_k / phi(q_k))``.

    As written in Sec. 4.1-4.2 and App. A: ``C = q_j`` is the second-largest probability
    (the dual of the top class), ``phi = 1`` for the class ``j`` itself and
    ``phi = phi_C`` for every other class.
    """
    q = checks.simplex(q, "q", normalised=False)
    g = float(_gamma(gamma))
    order = np.argsort(-q, axis=-1)
    c = np.take_along_axis(q, order[..., 1:2], -1)
    phi = np.asarray(dual_focal_phi(q, g, np.broadcast_to(c, q.shape)))
    is_j = np.zeros(q.shape, dtype=bool)
    np.put_along_axis(is_j, order[..., 1:2], True, -1)
    h = q / np.where(is_j, 1.0, phi)
    return h / h.sum(-1, keepdims=True)
