"""The focal risk and its minimiser (Mukhoti et al. 2020, {cite}`mukhoti2020focal`, App. H).

- :func:`focal_expected_loss`: ``FL_gamma(p, q) = -sum_i (1 - q_i)^gamma p_i log q_i``;
- :func:`focal_kl_bound`: the App. H lower bound ``KL(p||q) + H(p) - gamma H(q)``;
- :func:`bernoulli_step`: the first step of the App. H derivation, ``-sum_i (1 - gamma q_i) p_i log q_i``;
- :func:`focal_risk_minimizer`: Eq. (13), the prediction minimising the focal risk
  (their Fig. 7), for any number of classes;
- :func:`entropy`: Shannon entropy (nats) along the last axis.

The focal loss is convex in ``q`` because ``-dl/dq = g(q, gamma)/q =: phi(q)`` decreases
strictly from ``+inf`` to 0 on (0, 1); the risk minimiser solves ``eta_i phi(q_i) = nu``
for a Lagrange multiplier ``nu``, found by a bracketed (monotone) Newton search. No library
minimises this risk, hence the hand-written solver (checked against mpmath and scipy in
the tests).
"""
from __future__ import annotations

import numpy as np

from ... import checks

__all__ = ["focal_expected_loss", "focal_kl_bound", "bernoulli_step", "focal_risk_minimizer", "entropy"]


def _softplus(t):
    return np.logaddexp(0.0, t)


def _log_phi(t: np.ndarray, g: float) -> tuple[np.ndarray, np.ndarray]:
    """``log phi`` and its ``t``-derivative, ``phi(q) = g(q, gamma)/q``, ``q = sigmoid(t)``.

    ``phi`` is minus the derivative of ``-(1-q)^gamma log q``. With ``h = e^t softplus(-t)``
    (``= -q log q / (1-q)``, ``dh/dt = h - q``):
    ``log phi = softplus(-t) - gamma softplus(t) + log(1 + gamma h)``.
    """
    sp_neg = _softplus(-t)  # -log q
    q = np.exp(-sp_neg)
    h = np.exp(t + np.log(sp_neg))
    val = sp_neg - g * _softplus(t) + np.log1p(g * h)
    der = -(1.0 - q) - g * q + g * (h - q) / (1.0 + g * h)
    return val, der


def _safeguarded_newton(fun, lo, hi, x, iters: int, ftol=0.0):
    """Vectorised Newton-bisection for a decreasing ``fun`` with a root in ``[lo, hi]``.

    ``fun(x)`` returns ``(value, derivative)``. The bracket shrinks with every step; a
    Newton step leaving it is replaced by the midpoint, so convergence is guaranteed. The
    loop stops when every entry has ``|value| <= ftol`` (the rounding level of ``fun``) or
    a step below float64 resolution.
    """
    eps = np.finfo(float).eps
    for _ in range(int(iters)):
        val, der = fun(x)
        right = val > 0  # decreasing function: the root lies to the right of x
        lo = np.where(right, x, lo)
        hi = np.where(right, hi, x)
        if np.all((np.abs(val) <= ftol) | (hi - lo <= 4 * eps * np.maximum(1.0, np.abs(x)))):
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - val / der
        bad = ~np.isfinite(step) | (step < lo) | (step > hi)
        x = np.where(val == 0, x, np.where(bad, 0.5 * (lo + hi), step))
    return x


def focal_risk_minimizer(eta, gamma, iters: int = 200):
    """The prediction ``q`` minimising the conditional focal risk (Mukhoti et al. Eq. 13).

    ``q(eta) = argmin_{q in simplex} sum_i eta_i * (-(1 - q_i)^gamma log q_i)``, the
    population-optimal output when the class posterior is ``eta``. Stationarity gives
    ``eta_i phi(q_i) = nu`` with ``phi(q) = g(q, gamma)/q`` strictly decreasing, so each
    ``q_i`` is a monotone function of the multiplier ``nu``. We parametrise ``nu`` by the
    logit ``t_m`` of the largest-posterior class (``q_m`` lies in [1/K, 1)), solve every
    other ``q_i`` on its logit, and search ``t_m`` until ``sum_i q_i = 1``; both searches
    are bracketed Newton iterations that fall back to bisection (monotone, always converge).
    Classes with ``eta_i = 0`` get ``q_i = 0``; the top class is set to
    ``1 - sum of the others`` so that rows sum to 1 exactly.

    Parameters
    ----------
    eta : array_like, shape (..., K), K >= 2
        Class posteriors (rows sum to 1 within 1e-6).
    gamma : float, >= 0
        Focal parameter; ``gamma = 0`` returns ``eta`` (cross-entropy is proper).
    iters : int
        Maximum safeguarded-Newton steps of each of the two nested searches (they stop
        early once every row has converged to float64 resolution).

    Example
    -------
    >>> from replicate.theory import focal_risk_minimizer
    >>> focal_risk_minimizer([0.7, 0.2, 0.1], gamma=2.0).round(4)
    array([0.5352, 0.2927, 0.1721])
    """
    e = checks.simplex(eta)
    g = float(checks.gammas(gamma))
    e = e / e.sum(-1, keepdims=True)
    if g == 0.0:
        return e.copy()
    shape = e.shape
    e2 = e.reshape(-1, shape[-1])
    n, k = e2.shape
    m = np.argmax(e2, axis=1)
    rows = np.arange(n)
    eta_m = e2[rows, m][:, None]
    pos = e2 > 0
    with np.errstate(divide="ignore"):
        log_ratio = np.where(pos, np.log(eta_m) - np.log(np.where(pos, e2, 1.0)), np.inf)
    others = pos.copy()
    others[rows, m] = False

    def solve_others(tm: np.ndarray):
        """Logits of every class given the top-class logit ``tm`` (shape (n,))."""
        lp_m, d_m = _log_phi(tm, g)
        target = np.where(others, lp_m[:, None] + log_ratio, lp_m[:, None])
        lo = np.minimum(-np.abs(target) - g * np.log(2.0) - 1.0, tm[:, None])
        hi = np.broadcast_to(tm[:, None], lo.shape).copy()
        x0 = np.where(others, np.clip(-target, lo, hi), hi)  # top class: exactly t_m

        def fun(t):
            v, d = _log_phi(t, g)
            return v - target, d

        ftol = 16 * np.finfo(float).eps * np.maximum(1.0, np.abs(target))
        t = _safeguarded_newton(fun, lo, hi, x0, iters, ftol)
        return t, d_m

    def excess(tm: np.ndarray):
        """``sum_i q_i - 1`` (increasing in ``tm``) and its derivative, returned negated."""
        t, d_m = solve_others(tm)
        q = np.where(others, 1.0 / (1.0 + np.exp(-t)), 0.0)
        qm = 1.0 / (1.0 + np.exp(-tm))
        _, d_i = _log_phi(t, g)
        # implicit function theorem: dt_i/dt_m = log_phi'(t_m) / log_phi'(t_i)
        dsum = qm * (1 - qm) + np.where(others, q * (1 - q) * d_m[:, None] / d_i, 0.0).sum(1)
        return -(q.sum(1) + qm - 1.0), -dsum

    lo = np.full(n, -np.log(k - 1.0)) - 1e-9  # q_m >= 1/K
    hi = np.full(n, 40.0)
    tm = _safeguarded_newton(excess, lo, hi, np.log(eta_m[:, 0] / (1 - eta_m[:, 0] + 1e-300)).clip(lo, hi),
                             iters, 4 * k * np.finfo(float).eps)
    q = np.where(others, 1.0 / (1.0 + np.exp(-solve_others(tm)[0])), 0.0)
    q[rows, m] = np.maximum(1.0 - q.sum(1), 0.0)
    return q.reshape(shape)


def focal_expected_loss(p, q, gamma):
    """``FL_gamma(p, q) = -sum_i (1 - q_i)^gamma p_i log q_i`` (Mukhoti et al. App. H).

    ``p`` (target distribution) and ``q`` (prediction) have the classes on the last axis;
    terms with ``p_i = 0`` count as 0.
    """
    p, q = checks.simplex(p, "p"), checks.simplex(q, "q")
    g = checks.gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -np.power(1.0 - q, g) * p * np.log(q), 0.0)
    return terms.sum(-1)


def entropy(p) -> np.ndarray:
    """Shannon entropy ``-sum_i p_i log p_i`` (nats) along the last axis (``0 log 0 = 0``)."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(-1)


def focal_kl_bound(p, q, gamma):
    """The App. H lower bound ``KL(p||q) + H(p) - gamma H(q)`` (= ``CE(p, q) - gamma H(q)``).

    Mukhoti et al. derive ``FL_gamma(p, q) >= KL(p||q) + H(p) - gamma H(q)`` for
    ``gamma >= 1`` (Bernoulli's inequality); since ``H(p) >= 0`` it implies
    ``FL >= KL(p||q) - gamma H(q)``, the form quoted by AdaFocal.
    """
    p, q = checks.simplex(p, "p"), checks.simplex(q, "q")
    g = checks.gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        ce = np.where(p > 0, -p * np.log(q), 0.0).sum(-1)
    return ce - g * entropy(q)


def bernoulli_step(p, q, gamma):
    """The first step of the App. H derivation: ``-sum_i (1 - gamma q_i) p_i log q_i``.

    The paper bounds ``FL_gamma(p, q)`` from below by this with Bernoulli's inequality
    ``(1 - q)^gamma >= 1 - gamma q``, valid for ``gamma >= 1``; for ``0 < gamma < 1`` the
    inequality reverses.
    """
    p, q = checks.simplex(p, "p"), checks.simplex(q, "q")
    g = checks.gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -(1.0 - g * q) * p * np.log(q), 0.0).sum(-1)
