"""Theory of focal loss for calibration (Mukhoti et al. 2020, {cite}`mukhoti2020focal`).

Focal loss for one sample is ``L_f = -(1 - p)^gamma log p`` with ``p`` the predicted
probability of the true class (Lin et al. 2017). This module turns the paper's
statements into functions:

- Prop. 1 / App. B Prop. 3: ``dL_f/dw = g(p, gamma) dL_c/dw`` with
  ``g(p, gamma) = (1-p)^gamma - gamma p (1-p)^(gamma-1) log p``
  (:func:`focal_gradient_factor`, checked with autograd by :func:`gradient_factor_autograd`).
- Prop. 2 / App. B Prop. 4: the ``gamma*`` with ``g(p0, gamma*) = 1`` in closed form through
  the lower Lambert-W branch (:func:`lambert_w_gamma`, both branches raw in
  :func:`lambert_w_gamma_branches`), and the inverse map ``gamma -> p0``
  (:func:`gradient_threshold`).
- App. H: ``FL_gamma(p, q) >= KL(p||q) + H(p) - gamma H(q)``
  (:func:`focal_expected_loss`, :func:`focal_kl_bound`) and Eq. (13), the prediction that
  minimises the focal risk (:func:`focal_risk_minimizer`, their Fig. 7).

Numerics. We write ``g(p, gamma) = (1-p)^gamma (1 + gamma h(p))`` with
``h(p) = -p log p / (1-p)`` (``h(0) = 0``, ``h(1) = 1``), which is exact at both ends.
The focal loss is convex in ``q`` because ``-dl/dq = g(q, gamma)/q =: phi(q)`` decreases
strictly from ``+inf`` to 0 on (0, 1); the risk minimiser solves ``eta_i phi(q_i) = nu``
for a Lagrange multiplier ``nu``, found by a bracketed (monotone) Newton search.

The Appendix G experiment (logistic regression with cross-entropy vs focal loss) lives in
:mod:`replicate.theory.linear_experiment`.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import lambertw

__all__ = [
    "focal_gradient_factor",
    "gradient_threshold",
    "lambert_w_gamma",
    "lambert_w_gamma_branches",
    "focal_risk_minimizer",
    "focal_expected_loss",
    "focal_kl_bound",
    "gradient_factor_autograd",
    "lambert_w_gamma_rootfind",
    "SIZES",
]

#: Grid sizes per profile: a theory chapter scales only its grids with the profile.
SIZES = {
    "smoke": dict(n_p0=50, n_grid=201, n_random=2_000, n_autograd=16, n_autograd_all=4),
    "cpu": dict(n_p0=500, n_grid=2001, n_random=20_000, n_autograd=64, n_autograd_all=8),
    "gpu": dict(n_p0=500, n_grid=2001, n_random=20_000, n_autograd=64, n_autograd_all=8),
    "paper": dict(n_p0=2000, n_grid=4001, n_random=100_000, n_autograd=128, n_autograd_all=16),
}


def _probs(p, name: str = "p") -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64)
    if not np.all((arr >= 0) & (arr <= 1)):
        raise ValueError(f"{name} must hold probabilities in [0, 1] (finite, no NaN)")
    return arr


def _gammas(gamma, *, strict: bool = False) -> np.ndarray:
    try:
        g = np.asarray(gamma, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a real number or array, got {gamma!r}") from None
    ok = np.isfinite(g) & ((g > 0) if strict else (g >= 0))
    if not np.all(ok):
        raise ValueError(f"gamma must be finite and {'> 0' if strict else '>= 0'}, got {gamma!r}")
    return g


def _h(p: np.ndarray) -> np.ndarray:
    """``h(p) = -p log p / (1 - p)`` with its limits ``h(0) = 0`` and ``h(1) = 1``."""
    inner = (p > 0) & (p < 1)
    safe = np.where(inner, p, 0.5)
    return np.where(inner, -safe * np.log(safe) / (1.0 - safe), np.where(p >= 1, 1.0, 0.0))


def focal_gradient_factor(p, gamma):
    """``g(p, gamma)`` of Mukhoti et al. Prop. 1: the factor relating focal and CE gradients.

    ``g(p, gamma) = (1-p)^gamma - gamma p (1-p)^(gamma-1) log p``, evaluated as
    ``(1-p)^gamma (1 + gamma h(p))``. ``g(0, gamma) = 1``, ``g(1, gamma) = 0`` for
    ``gamma > 0`` and ``g = 1`` everywhere for ``gamma = 0`` (cross-entropy).

    Parameters
    ----------
    p : array_like, values in [0, 1]
        Predicted probability of the true class.
    gamma : float or array_like, >= 0
        Focal parameter; broadcast against ``p``.
    """
    p = _probs(p)
    g = _gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.power(1.0 - p, g) * (1.0 + g * _h(p))
    return out[()] if out.ndim == 0 else out


def _log_g(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return g * np.log1p(-p) + np.log1p(g * _h(p))


def gradient_threshold(gamma, iters: int = 200):
    """The ``p0`` in (0, 1/2) with ``g(p0, gamma) = 1``: the inverse of :func:`lambert_w_gamma`.

    For ``gamma > 0``, ``g(., gamma)`` rises from 1 at ``p = 0`` to a maximum and then falls
    to 0 (Mukhoti et al. App. B), so it crosses 1 exactly once; above that point focal
    loss has smaller gradients than cross-entropy. Solved by bisection on ``log p``
    (vectorised). ``gamma = 1`` gives ``1/e`` exactly; ``p0 -> 1/2`` as ``gamma -> 0``.

    Parameters
    ----------
    gamma : float or array_like, > 0
    iters : int
        Bisection steps (200 reach float64 resolution).
    """
    g = _gammas(gamma, strict=True)
    lo = np.full(g.shape, np.log(1e-300))
    hi = np.full(g.shape, np.log(0.5))
    for _ in range(int(iters)):
        mid = 0.5 * (lo + hi)
        above = _log_g(np.exp(mid), g) > 0  # still left of the crossing
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    out = np.exp(0.5 * (lo + hi))
    return out[()] if out.ndim == 0 else out


def _polish_lambert(d: np.ndarray, w_scipy: np.ndarray, lower: bool) -> np.ndarray:
    """Real ``W_k(z)`` for ``z = -exp(-1 - d)``, ``d >= 0``, accurate up to the branch point.

    Writes ``w = -1 - s`` (lower branch, ``s >= 0``) or ``w = -1 + s`` (principal branch,
    ``0 <= s < 1``); taking logs of ``w e^w = z`` gives ``s - log(1 + s) = d`` or
    ``-s - log(1 - s) = d``, both convex and increasing in ``s``, solved by Newton steps
    from scipy's value (``d > 0.5``) or the branch-point series ``s ~ sqrt(2d) +/- 2d/3``.
    """
    series = np.sqrt(2 * d) + (2 * d / 3 if lower else -2 * d / 3)
    start = -1.0 - w_scipy if lower else 1.0 + w_scipy
    s = np.where((d > 0.5) & np.isfinite(start), start, series)
    s = s if lower else np.clip(s, 0.0, 1.0 - 1e-16)
    for _ in range(60):
        with np.errstate(divide="ignore", invalid="ignore"):
            if lower:
                step = (s - np.log1p(s) - d) * (1.0 + s) / s
            else:
                step = (-s - np.log1p(-s) - d) * (1.0 - s) / s
        step = np.where(s > 0, step, 0.0)
        new = s - step
        new = np.maximum(new, 0.5 * s) if lower else np.clip(new, 0.5 * s, 0.5 * (1.0 + s))
        done = np.all(np.abs(new - s) <= 4 * np.finfo(float).eps * np.maximum(s, 1e-300))
        s = new
        if done:
            break
    s = np.where(d == 0, 0.0, s)
    return -1.0 - s if lower else -1.0 + s


def lambert_w_gamma_branches(p0):
    """Both real solutions of Mukhoti et al. Eq. (10)-(12), as the raw closed form.

    With ``a = 1 - p0``, ``b = p0 log p0`` and ``z = -(a^(1 - a/b) / b) log a``, returns
    ``(gamma_lower, gamma_principal) = a/b + W_k(z) / log a`` for ``k = -1`` and ``k = 0``.
    One of the two is always the trivial root ``gamma = 0`` (``g(p0, 0) = 1``): the
    principal branch for ``p0 < 1/2`` and the lower branch for ``p0 > 1/2``.

    Numerics: ``log(-z) = -1 - d`` is evaluated in the log domain. ``scipy.special.lambertw``
    loses accuracy near the branch point ``z = -1/e`` (at ``p0 = 0.49999`` its ``W_{-1}`` is
    off by ~2e-5, which halves ``gamma*``), so both branches are polished by Newton steps
    on the logarithmic form of ``w e^w = z`` (:func:`_polish_lambert`); ``gamma*`` then has
    an absolute error below about 1e-9 even next to ``p0 = 1/2``.

    Parameters
    ----------
    p0 : array_like, values in (0, 1)
    """
    p = _probs(p0, "p0")
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p0 must lie in the open interval (0, 1)")
    a, loga = 1.0 - p, np.log1p(-p)
    b = p * np.log(p)
    ab = a / b
    log_minus_z = (1.0 - ab) * loga + np.log(-loga) - np.log(-b)
    d = np.maximum(-(log_minus_z + 1.0), 0.0)
    z = -np.exp(-1.0 - d)
    w_low = _polish_lambert(d, lambertw(z, -1).real, lower=True)
    w_princ = _polish_lambert(d, lambertw(z, 0).real, lower=False)
    low = ab + w_low / loga
    princ = ab + w_princ / loga
    if low.ndim == 0:
        return low[()], princ[()]
    return low, princ


def lambert_w_gamma(p0):
    """``gamma*`` of Mukhoti et al. Prop. 2: the positive ``gamma`` with ``g(p0, gamma) = 1``.

    ``gamma* = a/b + W_{-1}(-(a^(1 - a/b) / b) log a) / log a`` with ``a = 1 - p0``,
    ``b = p0 log p0`` and ``W_{-1}`` the lower Lambert-W branch
    (``scipy.special.lambertw(., k=-1)``, Corless et al. 1996). For ``gamma >= gamma*``,
    ``g(p, gamma) <= 1`` for every ``p >= p0``.

    Where no positive solution exists the result is ``nan``: for ``p0 >= 1/2`` every
    ``gamma > 0`` already has ``g(p0, gamma) < 1`` and the formula's lower branch returns
    only the trivial root 0 (``gamma* -> 0`` as ``p0 -> 1/2`` from below). Near
    ``p0 = 1/2`` the Lambert-W argument approaches its branch point ``-1/e``, where the
    closed form is ill-conditioned; after the polishing described in
    :func:`lambert_w_gamma_branches` the absolute error stays below about 1e-9.

    Parameters
    ----------
    p0 : array_like, values in (0, 1)
        Threshold probability. ``p0 -> 0`` gives ``gamma* -> inf``.
    """
    low, _ = lambert_w_gamma_branches(p0)
    p = np.asarray(p0, dtype=np.float64)
    out = np.where(p < 0.5, low, np.nan)
    return out[()] if out.ndim == 0 else out


def lambert_w_gamma_rootfind(p0) -> np.ndarray:
    """Reference for :func:`lambert_w_gamma`: the positive root of ``g(p0, gamma) = 1`` by Brent.

    Solves ``(gamma - 1) log(1 - p0) + log(1 - p0 - gamma p0 log p0) = 0`` (the log of
    ``g = 1``, concave in ``gamma`` with the trivial root 0) on ``[1e-12, upper]`` where
    ``upper`` is doubled until the sign changes. One scalar solve per element; ``nan``
    for ``p0 >= 1/2``.
    """
    p = np.atleast_1d(_probs(p0, "p0"))
    out = np.full(p.shape, np.nan)
    for i, v in enumerate(p):
        if not 0 < v < 0.5:
            continue
        a, b = 1.0 - v, v * np.log(v)

        def f(gam, a=a, b=b):
            return (gam - 1.0) * np.log(a) + np.log(a - gam * b)

        lo = 1e-12 if f(1e-12) > 0 else 1e-15
        hi = 1.0
        while f(hi) > 0:
            hi *= 2.0
        out[i] = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return out.reshape(np.shape(p0))


# ----------------------------------------------------------------------------- risk
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


def _check_simplex(eta, name: str = "eta") -> np.ndarray:
    e = np.asarray(eta, dtype=np.float64)
    if e.ndim < 1 or e.shape[-1] < 2:
        raise ValueError(f"{name} must have the classes on the last axis (>= 2 classes), "
                         f"got shape {e.shape}")
    if not np.all((e >= 0) & (e <= 1)):
        raise ValueError(f"{name} must hold probabilities in [0, 1] (finite, no NaN)")
    if np.any(np.abs(e.sum(-1) - 1.0) > 1e-6):
        raise ValueError(f"{name} must sum to 1 along the last axis (within 1e-6)")
    return e


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
    """
    e = _check_simplex(eta)
    g = float(_gammas(gamma))
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
    p, q = _check_simplex(p, "p"), _check_simplex(q, "q")
    g = _gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -np.power(1.0 - q, g) * p * np.log(q), 0.0)
    return terms.sum(-1)


def _entropy(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0).sum(-1)


def focal_kl_bound(p, q, gamma):
    """The App. H lower bound ``KL(p||q) + H(p) - gamma H(q)`` (= ``CE(p, q) - gamma H(q)``).

    Mukhoti et al. derive ``FL_gamma(p, q) >= KL(p||q) + H(p) - gamma H(q)`` for
    ``gamma >= 1`` (Bernoulli's inequality); since ``H(p) >= 0`` it implies
    ``FL >= KL(p||q) - gamma H(q)``, the form quoted by AdaFocal.
    """
    p, q = _check_simplex(p, "p"), _check_simplex(q, "q")
    g = _gammas(gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        ce = np.where(p > 0, -p * np.log(q), 0.0).sum(-1)
    return ce - g * _entropy(q)


# ----------------------------------------------------------------------------- autograd
def gradient_factor_autograd(model, x, y, gamma: float, *, params: str = "fc") -> dict:
    """Per-sample gradients of focal loss and CE by autograd (the Prop. 1 check).

    The model must expose ``model.features(x)`` (penultimate features) and ``model.fc``
    (the last ``nn.Linear``) with ``model(x) == model.fc(model.features(x))``. Works on a
    float64 copy in eval mode. For every sample ``n`` it differentiates
    ``-(1-p)^gamma log p`` and ``-log p`` (``p = softmax(model(x_n))[y_n]``) with respect to
    the fc weight and bias (``params="fc"``, the paper's statement) or every parameter of
    the network (``params="all"``).

    Returns a dict of numpy arrays: ``grad_focal`` and ``grad_ce`` (shape (N, P), flattened
    gradients), ``p`` (N,) and ``ratio`` = ``<grad_focal, grad_ce> / |grad_ce|^2`` (N,).
    """
    import copy

    import torch
    from torch.func import functional_call, grad, vmap

    if params not in ("fc", "all"):
        raise ValueError(f"params must be 'fc' or 'all', got {params!r}")
    gamma = float(_gammas(gamma))
    net = copy.deepcopy(model).double().eval()
    x = torch.as_tensor(x).double()
    y = torch.as_tensor(y).long()
    with torch.no_grad():
        feats = net.features(x)
        full = net(x)
        if not torch.allclose(net.fc(feats), full, rtol=1e-9, atol=1e-9):
            raise ValueError("model must satisfy model(x) == model.fc(model.features(x))")
    module, inputs = (net.fc, feats) if params == "fc" else (net, x)
    prm = {k: v.detach() for k, v in module.named_parameters()}

    def loss(pr, inp, yy, focal: bool):
        logp = torch.log_softmax(functional_call(module, pr, (inp[None],))[0], -1)
        lp = logp.gather(0, yy[None])[0]
        if not focal:
            return -lp
        return -(1.0 - lp.exp()) ** gamma * lp

    def per_sample(focal: bool):
        gd = vmap(grad(lambda pr, inp, yy: loss(pr, inp, yy, focal)), (None, 0, 0))(prm, inputs, y)
        return torch.cat([gd[k].reshape(gd[k].shape[0], -1) for k in sorted(gd)], 1)

    g_f, g_c = per_sample(True), per_sample(False)
    with torch.no_grad():
        p = torch.softmax(full, -1).gather(1, y[:, None])[:, 0]
    ratio = (g_f * g_c).sum(1) / (g_c * g_c).sum(1)
    return {"grad_focal": g_f.numpy(), "grad_ce": g_c.numpy(), "p": p.numpy(),
            "ratio": ratio.numpy()}
