"""Focal loss and cross-entropy on a linear model (Mukhoti et al. 2020, Appendix G).

Setup of the appendix: binary labels, 2-D inputs, each class made of two Gaussian clusters
whose means sit on vertices of the square ``[-1, 1]^2`` so that the means are linearly
separable; 10% of the labels are flipped; the model is a bias-free logistic regression
``f_w(x) = sigmoid(w1 x1 + w2 x2)`` trained by full-batch gradient descent with
cross-entropy and with focal loss (``gamma = 1``) for 50,000 iterations. The appendix
reports that the norms of the weights and logits grow much more under cross-entropy
(Fig. 5), that both losses give the same decision boundary, and that cross-entropy
misclassifies "almost always with greater than 90% confidence" while focal loss does
so with much lower confidence (Fig. 6).

The paper gives neither the cluster spread, the number of points, the learning rate nor
the exact vertices; the defaults below are our choices and are parameters.

The focal gradient uses Prop. 1 directly: ``dFL/dz = g(p_t, gamma) dCE/dz`` with
``dCE/dz = -s (1 - p_t)``, ``s = +1`` for label 1 and ``-1`` for label 0, ``p_t`` the
probability of the observed label (see :func:`replicate.theory.focal_loss.focal_gradient_factor`).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

from ... import checks

__all__ = ["make_clusters", "linear_loss_and_grad", "train_linear", "misclassified_confidence",
           "appendix_g", "spread_row", "spread_table", "LOSSES"]

LOSSES = ("ce", "focal")

#: Cluster means: class 0 on the left edge of the square, class 1 on the right edge.
DEFAULT_CENTERS = (((-1.0, -1.0), (-1.0, 1.0)), ((1.0, -1.0), (1.0, 1.0)))


def make_clusters(n_per_cluster: int = 100, std: float = 0.5, flip: float = 0.1, seed: int = 0,
                  centers=DEFAULT_CENTERS):
    """Sample the Appendix G data: two Gaussian clusters per class, a fraction of labels flipped.

    Parameters
    ----------
    n_per_cluster : int, >= 1
        Points per cluster (4 clusters).
    std : float, > 0
        Isotropic standard deviation of every cluster.
    flip : float in [0, 1)
        Fraction of points whose label is flipped; exactly ``round(flip * N)`` points,
        chosen at random.
    seed : int
        Seed of ``numpy.random.default_rng``.
    centers : ((2 means of class 0), (2 means of class 1))

    Returns
    -------
    X : ndarray (N, 2), y : ndarray (N,) of 0/1 (observed, after flipping),
    flipped : ndarray (N,) bool.
    """
    n_per_cluster = checks.positive_int("n_per_cluster", n_per_cluster)
    if not (np.isfinite(std) and std > 0):
        raise ValueError(f"std must be a finite number > 0, got {std!r}")
    if not (0 <= flip < 1):
        raise ValueError(f"flip must lie in [0, 1), got {flip!r}")
    c = np.asarray(centers, dtype=np.float64)
    if c.shape != (2, 2, 2):
        raise ValueError(f"centers must have shape (2 classes, 2 clusters, 2 coordinates), got {c.shape}")
    n = int(n_per_cluster)
    rng = np.random.default_rng(seed)
    means = c.reshape(4, 2).repeat(n, axis=0)
    X = means + std * rng.standard_normal(means.shape)
    clean = np.repeat([0, 0, 1, 1], n)
    flipped = np.zeros(len(clean), dtype=bool)
    flipped[rng.choice(len(clean), size=int(round(flip * len(clean))), replace=False)] = True
    y = np.where(flipped, 1 - clean, clean)
    return X, y, flipped


def _check_loss(loss: str) -> str:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def _log_sigmoid(z):
    return -np.logaddexp(0.0, -z)


def linear_loss_and_grad(w, X, y, loss: str = "ce", gamma: float = 1.0):
    """Mean loss and its gradient for ``f_w(x) = sigmoid(w . x)`` (no bias).

    ``loss="ce"``: ``-log p_t``; ``loss="focal"``: ``-(1 - p_t)^gamma log p_t``, where
    ``p_t`` is the predicted probability of the observed label. The gradient is
    ``X^T dL/dz / N`` with ``dL/dz`` from Prop. 1 (module docstring).
    """
    _check_loss(loss)
    gamma = checks.gamma(gamma)
    w = np.asarray(w, dtype=np.float64)
    s = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    zt = s * (X @ w)  # logit of the observed label
    log_pt = _log_sigmoid(zt)
    pt = np.exp(log_pt)
    one_m = np.exp(_log_sigmoid(-zt))  # 1 - p_t without cancellation
    dce = -s * one_m
    if loss == "ce":
        per, dz = -log_pt, dce
    else:
        per = -np.power(one_m, gamma) * log_pt
        h = pt * np.logaddexp(0.0, -zt) / np.maximum(one_m, 1e-300)  # -p log p / (1 - p)
        dz = np.power(one_m, gamma) * (1.0 + gamma * h) * dce
    return float(per.mean()), X.T @ dz / len(s)


def train_linear(X, y, loss: str = "ce", gamma: float = 1.0, lr: float = 0.5, iters: int = 50_000,
                 record_every: int = 100, w0=(0.0, 0.0), tol: float = 1e-14) -> dict:
    """Full-batch gradient descent on the Appendix G model; returns the trajectory.

    Parameters
    ----------
    X, y : the data of :func:`make_clusters`.
    loss : ``"ce"`` or ``"focal"``; gamma : focal parameter (the appendix uses 1).
    lr : float, > 0
        Step size (on the mean loss).
    iters : int, >= 1
        Gradient steps (the appendix runs 50,000).
    record_every : int, >= 1
        Record the state every this many steps (and at step 0 and the last step).
    w0 : initial weights.
    tol : float, >= 0
        Stop once a step changes every weight by at most ``tol * max(1, |w|)``; the
        remaining records then repeat the final weights (``tol=0`` runs every step).

    Returns
    -------
    dict with ``w`` (final weights), ``steps`` (recorded step numbers), ``weights``
    (recorded weights, shape (R, 2)), ``weight_norm`` and ``logit_norm`` (Euclidean norm of
    ``w`` and of the training logits ``X w``), ``loss`` (mean training loss) and
    ``grad_norm`` (norm of the final gradient).
    """
    _check_loss(loss)
    if not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    iters, record_every = checks.positive_int("iters", iters), checks.positive_int("record_every", record_every)
    gamma = checks.gamma(gamma)
    X = np.asarray(X, dtype=np.float64)
    sX = (2.0 * np.asarray(y, dtype=np.float64) - 1.0)[:, None] * X  # z_t = sX @ w
    sXT_n = np.ascontiguousarray(sX.T) / len(sX)
    w = np.asarray(w0, dtype=np.float64).copy()
    steps, weights = [], []
    focal, g = loss == "focal", float(gamma)
    for t in range(int(iters) + 1):
        if t % record_every == 0 or t == iters:
            steps.append(t)
            weights.append(w.copy())
        if t == iters:
            break
        zt = sX @ w
        one_m = expit(-zt)  # 1 - p_t
        if focal:  # dFL/dz_t = g(p_t, gamma) dCE/dz_t (Prop. 1), h = -p log p / (1 - p)
            h = expit(zt) * np.logaddexp(0.0, -zt) / np.maximum(one_m, 1e-300)
            one_m = one_m ** (g + 1.0) * (1.0 + g * h)
        step = lr * (sXT_n @ one_m)
        w = w + step
        if np.all(np.abs(step) <= tol * np.maximum(1.0, np.abs(w))):
            # converged: the remaining steps change w by less than float64 noise
            rest = [s for s in range(t + 1, int(iters) + 1) if s % record_every == 0 or s == iters]
            steps.extend(rest)
            weights.extend(w.copy() for _ in rest)
            break
    weights = np.array(weights)
    value, grad = linear_loss_and_grad(w, X, y, loss, gamma)
    losses = [linear_loss_and_grad(wi, X, y, loss, gamma)[0] for wi in weights]
    return {"w": w, "steps": np.array(steps), "weights": weights,
            "weight_norm": np.linalg.norm(weights, axis=1),
            "logit_norm": np.linalg.norm(X @ weights.T, axis=0),
            "loss": np.array(losses), "grad_norm": float(np.linalg.norm(grad))}


def misclassified_confidence(w, X, y) -> np.ndarray:
    """Confidence ``max(f_w(x), 1 - f_w(x))`` of the points whose prediction differs from ``y``."""
    z = np.asarray(X, dtype=np.float64) @ np.asarray(w, dtype=np.float64)
    pred = (z > 0).astype(int)
    conf = np.exp(_log_sigmoid(np.abs(z)))
    return conf[pred != np.asarray(y)]


def appendix_g(std: float = 0.5, n_per_cluster: int = 100, flip: float = 0.1, gamma: float = 1.0,
               lr: float = 0.1, iters: int = 50_000, record_every: int = 10, seeds=(0, 1)) -> dict:
    """The Appendix G experiment at one cluster spread: train on ``seeds[0]``, test on ``seeds[1]``.

    Returns ``X, y`` (training data), ``Xt, yt`` (test data), ``flipped_test`` (which test labels
    were flipped), ``runs`` (``{"ce", "focal"}`` ->
    :func:`train_linear` output) and ``mistakes`` (loss -> confidences of the misclassified
    test points, :func:`misclassified_confidence`).
    """
    X, y, _ = make_clusters(n_per_cluster, std, flip, seed=seeds[0])
    Xt, yt, flipped_test = make_clusters(n_per_cluster, std, flip, seed=seeds[1])
    runs = {name: train_linear(X, y, loss=name, gamma=gamma, lr=lr, iters=iters, record_every=record_every)
            for name in LOSSES}
    mistakes = {name: misclassified_confidence(r["w"], Xt, yt) for name, r in runs.items()}
    return {"X": X, "y": y, "Xt": Xt, "yt": yt, "flipped_test": flipped_test, "runs": runs, "mistakes": mistakes}


def spread_row(res: dict, std: float) -> dict:
    """One row of :func:`spread_table` from an :func:`appendix_g` result at cluster sd ``std``."""
    mis, runs = res["mistakes"], res["runs"]
    return {"cluster sd": float(std), "‖w‖ ce": float(np.linalg.norm(runs["ce"]["w"])),
            "‖w‖ focal": float(np.linalg.norm(runs["focal"]["w"])), "mistakes ce": len(mis["ce"]),
            "mistakes focal": len(mis["focal"]), "share > 0.9 ce": float(np.mean(mis["ce"] > 0.9)),
            "share > 0.9 focal": float(np.mean(mis["focal"] > 0.9)), "median ce": float(np.median(mis["ce"])),
            "median focal": float(np.median(mis["focal"])), "grad norm": max(r["grad_norm"] for r in runs.values())}


def spread_table(stds=(0.2, 0.5, 1.0), known: dict | None = None, **kwargs):
    """One row per cluster spread: final weight norms, misclassified test points, the share of
    them above 0.9 confidence and their median confidence, for CE and focal loss.

    ``known`` maps a spread to an :func:`appendix_g` result already computed (not rerun);
    ``kwargs`` go to :func:`appendix_g` (``record_every`` defaults to ``iters``: no trajectory).
    Returns a pandas DataFrame with columns ``cluster sd``, ``‖w‖ ce``, ``‖w‖ focal``,
    ``mistakes ce``, ``mistakes focal``, ``share > 0.9 ce``, ``share > 0.9 focal``,
    ``median ce``, ``median focal`` and ``grad norm`` (the larger final gradient norm of the fits).
    """
    import pandas as pd

    known = known or {}
    kwargs.setdefault("record_every", kwargs.get("iters", 50_000))
    return pd.DataFrame([spread_row(known[sd] if sd in known else appendix_g(std=sd, **kwargs), sd)
                         for sd in stds])
