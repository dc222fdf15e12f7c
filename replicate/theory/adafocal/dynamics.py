"""Theory of AdaFocal (Ghosh, Schaaf & Gormley 2022, {cite}`ghosh2022adafocal`).

- CalFocal (Sec. 5.1, Eq. 1): ``L = -(1 - p)^gamma_n log p`` with
  ``gamma_n = exp(lam (p - A_val,b))``. :func:`calfocal_loss_curve` evaluates the loss of
  ``replicate.losses`` (``get_loss("calfocal", case=1)``) as a function of ``p`` with every
  validation-bin accuracy set to ``A_val`` (their Fig. 3a); :func:`calfocal_slopes`
  separates the slope of that curve from the gradient training actually uses (gamma is
  detached from the graph).
- AdaFocal (Sec. 5.2, Eq. 3 / Eq. 4 and the authors' code): the per-bin gamma update lives
  in :func:`replicate.losses.adafocal_gamma_update`; :func:`simulate_gamma` iterates it over
  a given sequence of calibration gaps ``E_t = C_val - A_val`` and
  :func:`simulate_closed_loop` over gaps produced by a response ``E(gamma)``.
  :func:`gap_scenarios` builds the gap sequences shown in the chapter. For a closed loop,
  :func:`fixed_point` finds the gamma with zero gap and :func:`linearised_factor` the
  factor by which the distance to it shrinks per epoch near it.
"""
from __future__ import annotations

import numpy as np

from ... import checks
from ..focal_loss.gradient import focal_gradient_factor

__all__ = ["calfocal_gamma", "calfocal_loss_curve", "calfocal_slopes", "simulate_gamma",
           "simulate_closed_loop", "gap_scenarios", "fixed_point", "linearised_factor",
           "UNBOUNDED_GAMMA_MAX"]

#: A ``gamma_max`` that never binds in a simulation of a few hundred epochs with
#: ``|E| <= 1``: it turns Eq. 4 (capped) into Eq. 3 (uncapped) with the shared update rule.
UNBOUNDED_GAMMA_MAX = 1e300


def _lam(lam) -> float:
    try:
        v = float(lam)
    except (TypeError, ValueError):
        raise ValueError(f"lam must be a real number >= 0, got {lam!r}") from None
    if not (np.isfinite(v) and v >= 0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    return v


def calfocal_gamma(gap, lam):
    """CalFocal's gamma ``exp(lam * gap)``: Eq. 1 with ``gap = p_n - A_val,b``, Eq. 2 with
    ``gap = C_val,b - A_val,b`` (values in [-1, 1])."""
    e = np.asarray(gap, dtype=np.float64)
    if not np.all(np.abs(e) <= 1):
        raise ValueError("gap must hold differences of probabilities, in [-1, 1]")
    return np.exp(_lam(lam) * e)


def calfocal_loss_curve(p, a_val: float = 0.8, lam: float = 10.0):
    """CalFocal loss (Eq. 1) of ``replicate.losses`` as a function of ``p`` (their Fig. 3a).

    Builds ``get_loss("calfocal", case=1, lam=lam, reduction="none")``, sets every
    validation-bin accuracy to ``a_val`` and evaluates the per-sample loss on two-class
    logits ``(log p, log(1-p))`` with target 0. The loss module caps gamma at its
    ``gamma_max`` (1e6 by default) against overflow; the cap changes the curve by less
    than ``(1-p)^1e6``.
    """
    import torch

    import replicate.losses as losses

    p = checks.probabilities(p)
    if not np.all((p > 0) & (p < 1)):
        raise ValueError("p must lie in the open interval (0, 1)")
    a = float(checks.probabilities(a_val, "a_val"))
    loss = losses.get_loss("calfocal", case=1, lam=_lam(lam))
    loss.acc.fill_(a)
    flat = torch.as_tensor(p.reshape(-1), dtype=torch.float64)
    logits = torch.stack([torch.log(flat), torch.log1p(-flat)], 1)
    with torch.no_grad():
        out = loss.per_sample(logits, torch.zeros(len(flat), dtype=torch.long))
    return out.numpy().reshape(p.shape)


def calfocal_slopes(p, a_val: float = 0.8, lam: float = 10.0) -> dict:
    """Slope of the CalFocal curve versus the gradient used in training, both ``d/dp``.

    With ``gamma = exp(lam (p - a))`` the curve ``L(p) = -(1-p)^gamma log p`` has
    ``dL/dp = -g(p, gamma)/p - lam gamma (1-p)^gamma log(1-p) log p`` (``curve``), whereas
    a detached gamma (the losses module, the book's page "The authors' code") trains with the first term only,
    ``-g(p, gamma)/p`` (``detached``; Mukhoti et al. Prop. 1). Also returns ``gamma``.
    """
    p = checks.probabilities(p)
    gam = calfocal_gamma(p - float(checks.probabilities(a_val, "a_val")), lam)
    lam = _lam(lam)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        detached = -focal_gradient_factor(p, gam) / p
        extra = -lam * gam * np.power(1.0 - p, gam) * np.log1p(-p) * np.log(p)
    extra = np.where(np.isfinite(extra), extra, 0.0)
    return {"gamma": gam, "detached": detached, "curve": detached + extra}


def _gaps(gaps) -> np.ndarray:
    e = np.asarray(gaps, dtype=np.float64)
    if e.ndim not in (1, 2):
        raise ValueError(f"gaps must have shape (epochs,) or (epochs, bins), got {e.shape}")
    if np.any(np.abs(e[np.isfinite(e)]) > 1) or np.any(np.isinf(e)):
        raise ValueError("gaps must be calibration gaps C_val - A_val in [-1, 1] (NaN = empty bin)")
    return e


def simulate_gamma(gaps, gamma0=1.0, **update) -> np.ndarray:
    """Iterate :func:`replicate.losses.adafocal_gamma_update` over a sequence of gaps.

    Parameters
    ----------
    gaps : array_like, shape (T,) or (T, bins)
        ``E_t = C_val,t - A_val,t`` per epoch (and bin); NaN marks an empty bin.
    gamma0 : float or array_like (bins,)
        Initial gamma (Algorithm 1 starts at 1).
    **update : keyword arguments of ``adafocal_gamma_update`` (``lam``, ``gamma_min``,
        ``gamma_max``, ``variant``, ``switch``). ``gamma_max=UNBOUNDED_GAMMA_MAX`` with
        ``variant="paper"`` and ``lam=1`` is Eq. 3.

    Returns
    -------
    ndarray, shape (T + 1,) or (T + 1, bins): ``gamma_0, ..., gamma_T``.
    """
    from replicate.losses import adafocal_gamma_update

    e = _gaps(gaps)
    g = np.broadcast_to(np.asarray(gamma0, dtype=np.float64), e.shape[1:]).astype(np.float64)
    out = [g.copy()]
    for et in e:
        g = np.asarray(adafocal_gamma_update(g, et, **update), dtype=np.float64)
        out.append(g.copy())
    return np.array(out)


def simulate_closed_loop(response, gamma0: float = 1.0, epochs: int = 100, **update) -> dict:
    """AdaFocal's update fed by a stylised model: the gap is a function of the current gamma.

    ``response(gamma) -> E`` returns the validation gap a bin would show when trained with
    ``gamma`` (a scalar in, a scalar in [-1, 1] out). Each epoch applies
    ``adafocal_gamma_update`` once. Returns ``{"gamma": (epochs+1,), "gap": (epochs,)}``.
    """
    from replicate.losses import adafocal_gamma_update

    epochs = checks.positive_int("epochs", epochs)
    g = np.array([float(gamma0)])
    gammas, gaps = [g[0]], []
    for _ in range(int(epochs)):
        e = float(response(float(g[0])))
        gaps.append(e)
        g = np.asarray(adafocal_gamma_update(g, np.array([e]), **update), dtype=np.float64)
        gammas.append(float(g[0]))
    return {"gamma": np.array(gammas), "gap": np.array(gaps)}


def gap_scenarios(epochs: int = 60, seed: int = 0) -> dict:
    """Named sequences of calibration gaps ``E_t`` (one bin) used by the chapter.

    - ``"over-confident"``: a persistent gap of +0.10;
    - ``"over, then under"``: +0.30 for the first half, -0.10 for the second;
    - ``"under-confident"``: a persistent gap of -0.10;
    - ``"noisy around 0"``: i.i.d. normal gaps with mean 0 and sd 0.05 (clipped to [-1, 1]).
    """
    t = checks.positive_int("epochs", epochs, lo=2)
    half = t // 2
    rng = np.random.default_rng(seed)
    return {
        "over-confident": np.full(t, 0.10),
        "over, then under": np.r_[np.full(half, 0.30), np.full(t - half, -0.10)],
        "under-confident": np.full(t, -0.10),
        "noisy around 0": np.clip(0.05 * rng.standard_normal(t), -1, 1),
    }


def fixed_point(response, lo: float, hi: float) -> float:
    """The ``gamma`` in ``[lo, hi]`` with ``response(gamma) = 0`` (Brent; needs a sign change)."""
    from scipy.optimize import brentq

    f_lo, f_hi = float(response(lo)), float(response(hi))
    if not f_lo * f_hi < 0:
        raise ValueError(f"response must change sign on [lo, hi]; got {f_lo:.3g} and {f_hi:.3g}")
    return float(brentq(response, lo, hi, xtol=1e-14, rtol=1e-14))


def linearised_factor(response, gamma_star: float, lam: float = 1.0, h: float = 1e-5) -> float:
    """Per-epoch contraction factor of AdaFocal's update near a fixed point ``gamma_star > 0``.

    In ``u = log gamma`` the positive-gamma update is ``u <- u + lam E(e^u)``, whose
    derivative at the fixed point is ``1 + lam gamma* E'(gamma*)`` (``E'`` by a central
    difference of step ``h``). ``|factor| < 1``: local convergence, monotone when the factor
    is positive and oscillating when negative; ``|factor| > 1``: the fixed point repels.
    """
    d = (float(response(gamma_star + h)) - float(response(gamma_star - h))) / (2 * h)
    return 1.0 + _lam(lam) * gamma_star * d

