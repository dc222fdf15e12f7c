"""A noisy two-dimensional classification set and a small network trained on it, for the
decision boundaries of focal loss and FCL (Liang et al., App. A.11, Fig. 7).

The paper trains "a simple feedforward neural network with two hidden layers of 10 units"
with Adam for 500 epochs on "a noisy, hard-to-classify synthetic dataset" generated "with
noise=0.2", focal loss and FCL with the same gamma (printed "= 10"; the symbol was lost)
and FCL's lambda printed 1.5. It names neither the generator nor the sizes. We use
scikit-learn's ``make_moons(noise=0.2)`` (two interleaved half circles with Gaussian
noise of standard deviation 0.2: the classic noisy two-dimensional set whose argument is
called ``noise``), full-batch Adam, and the package's losses (:mod:`replicate.losses`).

:func:`study` trains both losses on several seeds and measures on fresh samples of the
same generator: error, ECE, NLL, the length of the decision boundary (the 0.5 level set of
``p(class 1 | x)`` inside the data's box, :func:`boundary_length`; a wiggly boundary that
bends around hard samples is longer) and the share of the box where the prediction is
uncertain (``0.25 < p < 0.75``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import positive_int

#: The paper's settings (App. A.11) and ours where it states none.
DEFAULTS = {"noise": 0.2, "n_train": 500, "n_test": 5000, "hidden": (10, 10), "epochs": 500, "lr": 0.01,
            "gamma": 10.0, "lam": 1.5}
#: The box the boundary is measured in (make_moons' points lie inside it at noise 0.2).
BOX = (-2.0, 3.0, -1.5, 2.0)


def moons(n: int, noise: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of scikit-learn's two moons with Gaussian ``noise`` (float32 (n, 2)) and
    their labels (int64), shuffled, from ``seed``."""
    from sklearn.datasets import make_moons

    n = positive_int("n", n)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0:
        raise ValueError(f"noise must be a number >= 0; got {noise!r}")
    x, y = make_moons(n_samples=n, noise=float(noise), shuffle=True, random_state=int(seed))
    return x.astype(np.float32), y.astype(np.int64)


def mlp(hidden=(10, 10), seed: int = 0):
    """A ReLU network 2 -> hidden... -> 2 (logits), initialised from ``seed``."""
    import torch

    sizes = [positive_int("hidden", h) for h in hidden]
    torch.manual_seed(int(seed))
    layers, width = [], 2
    for h in sizes:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 2))


def train(x, y, loss: str = "focal", loss_params: dict | None = None, hidden=(10, 10), epochs: int = 500,
          lr: float = 0.01, seed: int = 0):
    """Train :func:`mlp` on ``(x, y)`` with full-batch Adam for ``epochs`` steps on the
    package loss ``loss`` (batch mean); returns the network in eval mode."""
    import torch

    from .losses import get_loss

    epochs = positive_int("epochs", epochs)
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError(f"lr must be a number > 0; got {lr!r}")
    crit = get_loss(loss, **{**(loss_params or {}), "reduction": "mean"})
    net = mlp(hidden, seed)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    opt = torch.optim.Adam(net.parameters(), lr=float(lr))
    # one intra-op thread: a network this small gains nothing from more, and on a busy
    # machine loses much to them (two seeds of study(): 3.4 s against 9.3 s with two
    # threads while two other processes ran); the caller's setting is restored
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(epochs):
            opt.zero_grad()
            crit(net(xt), yt).backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
    crit.check_finite()
    return net.eval()


def probabilities(net, x) -> np.ndarray:
    """Softmax probabilities (float64, (n, 2)) of ``net`` at the points ``x``."""
    import torch

    with torch.no_grad():
        z = net(torch.as_tensor(np.asarray(x, dtype=np.float32))).double()
    return torch.softmax(z, dim=1).numpy()


def grid(net, box=BOX, n: int = 201) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xs, ys, p)``: an ``n`` x ``n`` grid over ``box`` = (x0, x1, y0, y1) and ``p(class 1)``
    on it (``p[i, j]`` at ``(xs[j], ys[i])``)."""
    n = positive_int("n", n)
    xs, ys = np.linspace(box[0], box[1], n), np.linspace(box[2], box[3], n)
    gx, gy = np.meshgrid(xs, ys)
    p = probabilities(net, np.c_[gx.ravel(), gy.ravel()])[:, 1].reshape(gy.shape)
    return xs, ys, p


def boundary_length(xs, ys, p, level: float = 0.5) -> float:
    """Total length of the ``level`` set of ``p`` on the grid ``(xs, ys)`` (contourpy's
    marching squares, the algorithm matplotlib draws contours with)."""
    import contourpy

    gen = contourpy.contour_generator(np.asarray(xs), np.asarray(ys), np.asarray(p, dtype=np.float64),
                                      line_type=contourpy.LineType.Separate)
    return float(sum(np.hypot(*np.diff(seg, axis=0).T).sum() for seg in gen.lines(level)))


def study(seeds=(0, 1, 2, 3, 4), gamma: float = DEFAULTS["gamma"], lam: float = DEFAULTS["lam"],
          noise: float = DEFAULTS["noise"], n_train: int = DEFAULTS["n_train"], n_test: int = DEFAULTS["n_test"],
          hidden=DEFAULTS["hidden"], epochs: int = DEFAULTS["epochs"], lr: float = DEFAULTS["lr"],
          grid_size: int = 201, keep_test: bool = False) -> tuple:
    """Focal loss (``gamma``) and FCL (``gamma``, ``lam``) on the same data for each seed
    (seed s: training set ``moons(n_train, noise, s)``, test set ``moons(n_test, noise,
    1000 + s)``, network initialisation s). Returns a frame ``seed, method, error, ece,
    nll, boundary_length, uncertain_share`` (percent where the papers print percent) and
    ``{(method, seed): (xs, ys, p, x_train, y_train)}`` for drawing; with ``keep_test``
    also ``{(method, seed): (test probabilities, test labels)}`` (what a resampling of the
    test points needs)."""
    from . import metrics

    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    losses = {"FL": ("focal", {"gamma": float(gamma)}), "FCL": ("fcl", {"gamma": float(gamma), "lam": float(lam)})}
    rows, grids, tests = [], {}, {}
    for s in seeds:
        x, y = moons(n_train, noise, s)
        xt, yt = moons(n_test, noise, 1000 + s)
        for name, (loss, params) in losses.items():
            net = train(x, y, loss, params, hidden, epochs, lr, seed=s)
            pt = probabilities(net, xt)
            xs, ys, p = grid(net, BOX, grid_size)
            rows.append({"seed": s, "method": name, "error": 100 * metrics.error_rate(pt, yt),
                         "ece": 100 * metrics.ece(pt, yt), "nll": metrics.nll(np.log(pt), yt),
                         "boundary_length": boundary_length(xs, ys, p),
                         "uncertain_share": 100 * float(((p > 0.25) & (p < 0.75)).mean())})
            grids[(name, s)] = (xs, ys, p, x, y)
            tests[(name, s)] = (pt, yt)
    return (pd.DataFrame(rows), grids, tests) if keep_test else (pd.DataFrame(rows), grids)
