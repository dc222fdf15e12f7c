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

:func:`stored_study` keeps a study's outputs, like a finished run of the run store: the
book's ``cpu`` study is committed under ``<results>/toy2d/`` (:func:`replicate.config.results_dir`),
so that neither ``make book`` nor ``replicate claims`` trains; a study asked for with other
settings is trained once and written there (or under the local cache).
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from pathlib import Path

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
    xs, ys = _axes(box, positive_int("n", n))
    gx, gy = np.meshgrid(xs, ys)
    p = probabilities(net, np.c_[gx.ravel(), gy.ravel()])[:, 1].reshape(gy.shape)
    return xs, ys, p


def _axes(box, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` grid points along each side of ``box`` = (x0, x1, y0, y1) (:func:`grid`)."""
    return np.linspace(box[0], box[1], n), np.linspace(box[2], box[3], n)


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


# ----------------------------------------------------------------------------- kept studies
_STUDY = study          # whose settings key a kept study
#: The folder of kept studies inside a store (``<results>/toy2d/<key>.npz``).
STUDY_DIR = "toy2d"
#: Bumped when :func:`study` computes something else from the same settings.
STUDY_VERSION = 1
_FRAME = ("seed", "method", "error", "ece", "nll", "boundary_length", "uncertain_share")


def study_settings(**settings) -> dict:
    """Every setting of :func:`study` (its defaults where ``settings`` names none), as plain
    JSON values: what a kept study is keyed by (``keep_test`` aside)."""
    import inspect

    full = {k: v.default for k, v in inspect.signature(_STUDY).parameters.items() if k != "keep_test"}
    unknown = sorted(set(settings) - set(full))
    if unknown:
        raise ValueError(f"settings must be among {', '.join(full)}; got {', '.join(unknown)}")
    full.update(settings)
    full["seeds"] = [int(s) for s in full["seeds"]]
    full["hidden"] = [int(h) for h in full["hidden"]]
    return {k: (float(v) if k in ("gamma", "lam", "noise", "lr") else v) for k, v in full.items()}


def study_key(**settings) -> str:
    """The name of the kept study of ``settings`` (:func:`study_settings`): 16 hex digits of
    the SHA-256 of the settings as canonical JSON and :data:`STUDY_VERSION`."""
    blob = json.dumps({"settings": study_settings(**settings), "version": STUDY_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def save_study(path, result: tuple, **settings) -> Path:
    """Write a :func:`study` result made with ``keep_test`` (``(frame, grids, tests)``) to
    ``path`` (compressed ``.npz``, written under a temporary name and renamed): the frame and
    the test probabilities as computed, the grids' probabilities in float32 (they are drawn,
    never scored: the frame's boundary lengths and uncertain shares were measured on the
    float64 grids), the training points, the settings and the versions that trained it."""
    import sklearn
    import torch

    frame, grids, tests = result
    keys = list(grids)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"frame_{c}": frame[c].to_numpy() for c in _FRAME}
    arrays["frame_method"] = frame["method"].to_numpy().astype(str)
    arrays.update(keys=np.array([f"{m}:{s}" for m, s in keys]),
                  grid_p=np.stack([grids[k][2] for k in keys]).astype(np.float32),
                  train_x=np.stack([grids[k][3] for k in keys]), train_y=np.stack([grids[k][4] for k in keys]),
                  test_p=np.stack([tests[k][0] for k in keys]), test_y=np.stack([tests[k][1] for k in keys]),
                  settings=np.array(json.dumps(study_settings(**settings), sort_keys=True)),
                  versions=np.array(json.dumps({"torch": torch.__version__, "scikit-learn": sklearn.__version__,
                                                "numpy": np.__version__, "study_version": STUDY_VERSION})))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    os.replace(tmp, path)
    return path


def load_study(path, keep_test: bool = False) -> tuple:
    """A study written by :func:`save_study`: ``(frame, grids)``, with ``keep_test`` also
    ``tests``, as :func:`study` returns them (the grids' ``p`` in float32). An unreadable file
    raises ``ValueError`` naming it and the fix."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            got = {k: z[k] for k in z.files}
        settings = json.loads(str(got["settings"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as err:
        raise ValueError(f"{path}: unreadable two-moons study ({type(err).__name__}: {err}); delete the file "
                         f"to train the study again") from None
    frame = pd.DataFrame({c: got[f"frame_{c}"] for c in _FRAME})
    xs, ys = _axes(BOX, settings["grid_size"])              # the grid study() drew them on
    grids, tests = {}, {}
    for i, key in enumerate(got["keys"].tolist()):
        method, seed = key.split(":")
        k = (method, int(seed))
        grids[k] = (xs, ys, got["grid_p"][i], got["train_x"][i], got["train_y"][i])
        tests[k] = (got["test_p"][i], got["test_y"][i])
    return (frame, grids, tests) if keep_test else (frame, grids)


def stored_study(store: str = "results", keep_test: bool = False, **settings) -> tuple:
    """:func:`study` of ``settings``, read from ``<store>/toy2d/<key>.npz`` (:func:`study_key`;
    ``store`` "results", the committed store, or "cache") when it is there, else trained once
    and written there first."""
    from . import config

    if store not in ("results", "cache"):
        raise ValueError(f"store must be one of results, cache; got {store!r}")
    key = study_key(**settings)
    path = (config.results_dir() if store == "results" else config.cache_dir()) / STUDY_DIR / f"{key}.npz"
    if path.exists():
        return load_study(path, keep_test)
    result = study(**settings, keep_test=True)
    save_study(path, result, **settings)
    return load_study(path, keep_test)
