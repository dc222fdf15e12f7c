"""The scale of a chapter's runs, said on the chapter's first screen (issue #24, item 3): the
numbers of the box that :mod:`replicate.book.scale` draws.

Every experiment chapter opens with a box, built here from the runs the chapter shows and
the profile they were trained at, that says how large the experiment is and what it can
decide: training images, epochs and SGD steps, augmentation, network, test error, test-set
size, and the ECE that a *perfectly calibrated* model would show at that test-set size.

That last number is the noise floor of the ECE. The chapter *Measuring calibration*
shows that the binned ECE of a calibrated predictor is not 0 but grows like
``1/sqrt(N)`` as the test set shrinks. Here the floor is computed for the chapter's own
models: each run's *calibrated twin* (:class:`CalibratedTwin`) keeps the run's test
probabilities and draws each label from them, so its confidences mean exactly what they
say; :func:`replicate.synthetic.estimator_study` (the Monte Carlo loop of that chapter)
draws ``reps`` such test sets and averages their ECE (15 equal-width bins, the papers'
metric). :func:`clt_floor` is the chapter's central-limit prediction of the same number,
``sum_b sqrt(2 v_b / pi) / N`` with ``v_b`` the summed ``c (1 - c)`` of bin ``b``.

- :func:`describe` -> :class:`Scale`, the numbers (the data's name from :func:`data_name`, which
  the chapters' captions use too, as :func:`replicate.comparison.data_name`);
- the box itself, a MyST admonition (``text/markdown``, for ``{glue:md}`` at the top of the
  chapter) with the same text as HTML (``text/html``, for the cross-page ``{glue:any}`` of
  the book's introduction), is :class:`replicate.book.scale.ScaleBox` of a :class:`Scale`:
  each chapter's report makes it.

What the box says a profile can and cannot decide is :data:`replicate.book.scale.VERDICT_SCOPE`,
one entry per profile, so a chapter rendered at ``gpu`` says so with its own numbers.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import binning as _b
from .. import metrics
from ..profiles import get_profile
from ..synthetic import as_generator, estimator_study

#: Training images of the official training split, for runs that train on all of it
#: (``n_train`` None): the validation images are taken out of these.
OFFICIAL_TRAIN = {"cifar10": 50_000, "cifar100": 50_000, "svhn": 73_257, "tiny_imagenet": 100_000,
                  "20newsgroups": 11_314}
#: Simulated test sets per run for the noise floor.
FLOOR_REPS = 100
N_BINS = 15

__all__ = ["OFFICIAL_TRAIN", "CalibratedTwin", "calibrated_ece", "clt_floor", "Rows", "Scale", "data_name",
           "describe", "describe_rows"]


# ----------------------------------------------------------------------------- noise floor
class CalibratedTwin:
    """A perfectly calibrated model with the test probabilities ``probs`` (N x K) of a run:
    :meth:`sample_probs` returns the probabilities and labels drawn from them (row by row),
    so that for every row the top-1 prediction is right with probability its confidence.
    A sample of another size resamples the rows with replacement."""

    def __init__(self, probs):
        p = np.asarray(probs, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] < 2 or not len(p):
            raise ValueError(f"probs must have shape (N, K) with N >= 1, K >= 2; got {p.shape}")
        if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0, atol=1e-3):
            raise ValueError("probs must be finite, non-negative rows that sum to 1")
        self.probs = p / p.sum(axis=1, keepdims=True)

    def sample_probs(self, n: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        g = as_generator(rng)
        p = self.probs if n == len(self.probs) else self.probs[g.integers(0, len(self.probs), size=n)]
        cdf = np.cumsum(p, axis=1)
        labels = (cdf < g.random(len(p))[:, None] * cdf[:, -1:]).sum(axis=1)
        return p, np.minimum(labels, p.shape[1] - 1).astype(np.int64)


def calibrated_ece(probs, n_bins: int = N_BINS, reps: int = FLOOR_REPS, rng=0) -> tuple[float, float]:
    """Mean and standard deviation of the ECE (fractions; ``n_bins`` equal-width bins) of the
    :class:`CalibratedTwin` of ``probs`` over ``reps`` test sets of ``len(probs)`` labels."""
    twin = CalibratedTwin(probs)
    study = estimator_study(twin, {"ECE": lambda p, y: metrics.ece(p, y, n_bins=n_bins, validate=False)},
                            [len(twin.probs)], reps, rng=rng)
    return float(study.estimate.mean()), float(study.estimate.std(ddof=1)) if reps > 1 else math.nan


def clt_floor(probs, n_bins: int = N_BINS) -> float:
    """Central-limit prediction of :func:`calibrated_ece`'s mean (a fraction): for a
    calibrated predictor ``E|S_b| = sqrt(2 v_b / pi)`` with ``v_b = sum c (1 - c)`` over the
    bin's samples (the chapter *Measuring calibration*, ``BetaModel.expected_binned_ece``).

    Parameters
    ----------
    probs : array_like
        Probabilities (N, K).
    n_bins : int
        Equal-width bins, binned as :func:`replicate.metrics.ece` (:func:`replicate.binning.bin_index`).
    """
    conf = np.asarray(probs, dtype=np.float64).max(axis=1)
    idx = _b.bin_index(conf, _b.width_edges(n_bins), "right", uniform=True)   # the bins of metrics.ece
    v = np.bincount(idx, weights=conf * (1 - conf), minlength=n_bins)
    return float(np.sqrt(2 * v / np.pi).sum() / len(conf))


# ----------------------------------------------------------------------------- the numbers
def _runs(runs) -> list:
    """The image runs of ``runs``: a mapping of runs (any keys), or of such mappings
    (``{"image": {...}, "text": {...}}`` as :func:`replicate.comparison.train` returns)."""
    if isinstance(runs, Mapping):
        values = list(runs.values())
        if values and all(isinstance(v, Mapping) for v in values):
            return _runs(runs["image"]) if "image" in runs else [r for v in values for r in _runs(v)]
    else:
        values = list(runs)
    out = [r for r in values if r.resolved.get("kind", "image") == "image"]
    if not out:
        raise ValueError("runs must hold at least one image run")
    return out


def _network(resolved: dict) -> str:
    params = ", ".join(f"{k}={v}" for k, v in sorted(resolved.get("model_params", {}).items()))
    return resolved["model"] + (f" ({params})" if params else "")


@dataclass(frozen=True)
class Scale:
    """The scale of a set of runs (see :func:`describe`); errors and floors in percent."""

    profile: str
    data: str
    networks: tuple[str, ...]
    n_runs: int
    seeds: tuple[int, ...]
    n_train: int
    n_val: int
    n_test: int
    epochs: tuple[int, ...]
    batch_size: int
    steps: tuple[int, ...]
    augment: bool
    precision: str
    error: tuple[float, float]
    floor: tuple[float, float]
    floor_reps: int
    paper_n_train: int
    paper_epochs: int
    paper_steps: int
    rows: tuple = ()

    @property
    def profiles(self) -> tuple[str, ...]:
        """Every profile of :attr:`rows` (the image rows' first), else :attr:`profile`."""
        return tuple(dict.fromkeys([self.profile, *(r.profile for r in self.rows)]))

    @property
    def floor_text(self) -> str:
        lo, hi = self.floor
        return f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}-{hi:.1f}"


def _n_train(resolved: dict) -> int:
    if resolved.get("n_train"):
        return int(resolved["n_train"])
    total = OFFICIAL_TRAIN.get(resolved["dataset"])
    if total is None:
        raise ValueError(f"the training-set size of {resolved['dataset']!r} is not known here; add it to OFFICIAL_TRAIN")
    return total - int(resolved.get("data", {}).get("val_size", 0))


def data_name(run) -> str:
    """The display name of the data copy a run was trained on (e.g. "CIFAR-10 (JPEG q75)"):
    from its record (:attr:`replicate.runs.Run.data`); for 20 Newsgroups, whose one copy the
    package reads, its name; else from the data set loaded now."""
    recorded = run.data.get("name")
    if recorded:
        return recorded
    from ..runs.build import display_name

    return display_name(run.resolved)


#: :func:`data_name` under a name that :func:`describe`'s argument ``data_name`` does not hide
_recorded_name = data_name


def _every_run(runs) -> list:
    """Every run of ``runs``: a mapping of runs, of such mappings (groups), or a sequence."""
    values = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    every = [r for v in values for r in (_every_run(v) if isinstance(v, Mapping) else [v])]
    return list({getattr(r, "key", None) or id(r): r for r in every}.values())      # a run shown twice is one


@dataclass(frozen=True)
class Rows:
    """What one kind of a chapter's rows rests on (:func:`describe_rows`): the ``kind`` of data
    (image, text), the ``profile`` its runs were trained at, the data copies, networks, epochs,
    seeds and number of runs, and the sizes of the training, validation and test splits
    (images or documents)."""

    kind: str
    profile: str
    data: tuple[str, ...]
    networks: tuple[str, ...]
    epochs: tuple[int, ...]
    seeds: tuple[int, ...]
    n_runs: int
    n_train: tuple[int, ...]
    n_val: tuple[int, ...]
    n_test: tuple[int, ...]

    @property
    def unit(self) -> str:
        return "documents" if self.kind == "text" else "images"


def _n_val(resolved: dict) -> int:
    asked, held = resolved.get("n_val"), resolved.get("data", {}).get("val_size")
    return int(min(x for x in (asked, held) if x) if (asked or held) else 0)


def describe_rows(runs, data_name: str | None = None) -> tuple[Rows, ...]:
    """One :class:`Rows` per kind of data and profile of every run of ``runs`` (every group:
    a chapter may show its image rows at one profile and its text rows at another), image rows
    first. ``data_name`` names the image rows' data (else each run's recorded copy). The test
    size is that of the run's test logits; the training size as in :class:`Scale`; the
    validation size the smaller of the planned ``n_val`` and the split's ``val_size``."""
    every = _every_run(runs)
    if not every:
        raise ValueError("runs must hold at least one run")
    kinds: dict = {}
    for r in every:
        kinds.setdefault((r.resolved.get("kind", "image"), r.config.profile), []).append(r)
    out = []
    for (kind, profile), chosen in sorted(kinds.items(), key=lambda kv: (kv[0][0] != "image", kv[0])):
        res = [r.resolved for r in chosen]
        names = sorted({data_name if data_name and kind == "image" else _recorded_name(r) for r in chosen})
        out.append(Rows(kind=kind, profile=profile, data=tuple(names),
                        networks=tuple(sorted({_network(x) for x in res})),
                        epochs=tuple(sorted({int(x["train"]["epochs"]) for x in res})),
                        seeds=tuple(sorted({int(x["train"]["seed"]) for x in res})), n_runs=len(chosen),
                        n_train=tuple(sorted({_n_train(x) for x in res})),
                        n_val=tuple(sorted({_n_val(x) for x in res})),
                        n_test=tuple(sorted({len(r.logits("test")[1]) for r in chosen}))))
    return tuple(out)


def describe(runs, data_name: str | None = None, reps: int = FLOOR_REPS, rng=0) -> Scale:
    """The :class:`Scale` of the image runs of ``runs`` (see :func:`_runs`): profile, data
    (``data_name``, else the runs' recorded data copy), networks, seeds, split sizes, epochs,
    SGD steps (``epochs * ceil(n_train / batch)``), augmentation, precision, the range of
    test errors, and the range over runs of the noise floor (:func:`calibrated_ece`). The
    papers' training-set size, epochs and steps come from the ``paper`` profile; ``rows``
    describes every run of ``runs``, of every group and kind (:func:`describe_rows`)."""
    chosen = _runs(runs)
    profiles = sorted({r.config.profile for r in chosen})
    if len(profiles) != 1:
        raise ValueError(f"runs must come from one profile; got {profiles}")
    res = [r.resolved for r in chosen]
    train = [x["train"] for x in res]
    n_train = sorted({_n_train(x) for x in res})
    batch = sorted({t["batch_size"] for t in train})
    if len(n_train) != 1 or len(batch) != 1:
        raise ValueError(f"runs must share the training-set size and batch size; got {n_train} and {batch}")
    epochs = tuple(sorted({int(t["epochs"]) for t in train}))
    per_epoch = math.ceil(n_train[0] / batch[0])
    test = [r.logits("test") for r in chosen]
    g = as_generator(rng)
    floors = [100 * calibrated_ece(metrics.probs_from_logits(z), reps=reps, rng=g)[0] for z, _ in test]
    errors = [100 * float(np.mean(np.argmax(z, axis=1) != y)) for z, y in test]
    if data_name is None:
        data_name = _recorded_name(chosen[0])
    paper = get_profile("paper")
    paper_train = _n_train({**res[0], "n_train": None})
    return Scale(
        profile=profiles[0], data=data_name, networks=tuple(sorted({_network(x) for x in res})),
        n_runs=len(chosen), seeds=tuple(sorted({int(t["seed"]) for t in train})), n_train=n_train[0],
        n_val=int(res[0].get("n_val") or res[0].get("data", {}).get("val_size", 0)),
        n_test=len(test[0][1]), epochs=epochs, batch_size=batch[0], steps=tuple(e * per_epoch for e in epochs),
        augment=all(bool(t["augment"]) for t in train), precision=str(train[0].get("precision", "float32")),
        error=(min(errors), max(errors)), floor=(min(floors), max(floors)), floor_reps=reps,
        paper_n_train=paper_train, paper_epochs=paper.epochs,
        paper_steps=paper.epochs * math.ceil(paper_train / paper.batch_size), rows=describe_rows(runs, data_name))
