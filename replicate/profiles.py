"""Profiles: how much data, which network and how long a schedule a chapter uses.

Every training chapter runs at one of four profiles, defined here and nowhere else:

``smoke``
    tests only: a tiny CNN on about a thousand images for one epoch (seconds);
``cpu``
    the default of ``make book`` and a reader's laptop: a 15,000-image CIFAR-10 subset,
    the full validation split (5,000) and the full test set (10,000), a small CNN
    (``tiny_cnn``, width 32), 15 epochs, no augmentation - about a minute per run on two
    CPU cores. Chosen by measurement (``benchmarks/cpu_profile.py``, issue #25; table in
    ``benchmarks/README.md``): of the candidates whose runs take at most about 60 s, the one
    with the lowest cross-entropy test error (37.7 %, against 51.6 % for the former 3,000
    images and 20 epochs) whose cross-entropy model is still clearly over-confident before
    temperature scaling (ECE 5.2 %; at least 5 % asked). The full test set halves the ECE a
    perfectly calibrated model shows by chance (about 1.1 % here, 2.4 % at 2,000 images).
    The reference augmentation makes this small network under-fit in so few epochs (the
    over-confidence the papers study disappears), so it stays off;
``gpu``
    the full data on one lent GPU: a CIFAR ResNet-18 (He et al. 2016's basic blocks in
    the 4-stage CIFAR layout of the papers' code), 30 epochs, the paper's schedule shape
    (lr 0.1 / 0.01 / 0.001 from epochs 1 / 14 / 22; FLS's gamma switches at 100/350 and
    250/350 of the run), bf16 autocast for images (float32 head, loss and optimiser;
    text stays float32). Sized from measurements (:data:`GPU_SIZING`) for GPU loans of
    15 minutes of device time: the queue's steps a-c (one seed of every CIFAR-10 method
    of the experiment chapters, :mod:`replicate.gpu_loan.queue`) take about two loans with
    four trainings at once under CUDA MPS (``replicate gpu-job --list`` prints the
    arithmetic). Why ResNet-18 and 30 epochs: the cross-entropy pilot (one H200,
    2026-11-26, seed 1, full CIFAR-10 JPEG, committed runs) measured test error / ECE
    before temperature scaling of 14.7 % / 3.4 % (ResNet-18, 15 epochs), 12.7 % / 3.8 %
    (20), 11.9 % / 5.6 % (30), 10.9 % / 6.3 % (40), 10.1 % / 6.7 % (60), 9.4 % / 6.9 %
    (80), and 21.3 % / 3.0 % (ResNet-50, 12 epochs), 13.5 % / 4.3 % (ResNet-50, 30).
    ResNet-50 learns more slowly per second under the papers' summed loss and clipping,
    and costs three times as much per epoch, so no ResNet-50 schedule fits the loans;
    no setting within about two loans reaches the target of 8 % test error
    (``replicate.protocol.GPU_REGIME``; the short schedule costs accuracy, as the
    pilot shows; what the JPEG q75 copy of CIFAR-10 costs is not measured), while every
    ResNet-18 setting from 30 epochs on is clearly over-confident before scaling (ECE
    above 5 %), the papers' regime. 30 epochs is the longest that fits about two loans.
``paper``
    the protocol as the authors' public code runs it (the book's page "The authors' code"):
    SGD, lr 0.1, momentum 0.9, weight decay 5e-4, batch 128, 350 epochs, lr x0.1
    at epochs 150 and 250, gradient-norm clipping at 2, last-epoch evaluation.

Learning-rate milestones are *fractions* of the total number of epochs
(150/350 and 250/350), so a shortened run keeps the schedule's shape. Mukhoti et
al.'s loop steps the scheduler at the start of each epoch, which makes each decay
land one epoch early; ``lr_step_at_epoch_start`` reproduces that on purpose (on in
``paper``, off elsewhere). Text data sets (20 Newsgroups) follow Mukhoti et al.,
Appendix D: Adam, lr 1e-3, betas (0.9, 0.999), 50 epochs and the model with the best
validation accuracy; the ``text`` mapping of a profile holds those overrides.

This module imports neither torch nor pandas at import time, so that the chapter
runner can validate a profile name cheaply.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

PAPER_MILESTONES = (150 / 350, 250 / 350)

#: The settings a profile fixes, each with a one-line meaning (printed by :func:`describe`).
MEANINGS = {
    "purpose": "what the profile is for",
    "n_train": "training images (None: all of the split)",
    "n_val": "validation images (None: all of the split)",
    "n_test": "test images (None: all of the split)",
    "model": "default image network",
    "model_params": "keywords of the default image network",
    "models": "image networks a chapter sweeps at this profile",
    "text_model": "network for text data sets",
    "epochs": "training epochs",
    "batch_size": "mini-batch size",
    "optimizer": "optimiser (sgd or adam)",
    "lr": "initial learning rate",
    "momentum": "SGD momentum (no Nesterov)",
    "weight_decay": "L2 weight decay",
    "milestones": "lr decay points as fractions of the epochs",
    "decayed_from": "first epoch (1-based) at each decayed lr",
    "lr_decay": "lr factor at each milestone",
    "lr_step_at_epoch_start": "Mukhoti's quirk: each decay lands one epoch early",
    "clip_grad_norm": "gradient-norm clipping threshold (None: off)",
    "augment": "random crop (4-pixel zero padding) and horizontal flip",
    "select": "which epoch's model is evaluated",
    "eval_every_epoch": "train/val/test metrics after every epoch",
    "precision": "float32, or bf16 autocast",
    "seeds": "torch seeds a chapter averages over",
    "text": "overrides for text data sets",
}


@dataclass(frozen=True, kw_only=True)
class Protocol:
    """The training protocol's fields, declared once: what a profile fixes and the training
    loop reads (:class:`Profile` and :class:`replicate.training.TrainSettings` both extend
    it). The defaults are the papers' protocol as the authors' code runs it.

    Parameters
    ----------
    epochs : int
        Training epochs, ``>= 1`` (default 350).
    batch_size : int
        Mini-batch size (default 128).
    optimizer : {"sgd", "adam"}
        The optimiser (default ``"sgd"``; SGD without Nesterov).
    lr : float
        Initial learning rate (default 0.1).
    momentum : float
        SGD momentum (default 0.9).
    weight_decay : float
        L2 weight decay (default 5e-4).
    milestones : tuple of float
        Learning-rate decay points as fractions of ``epochs`` (default ``(150/350, 250/350)``,
        the papers' epochs 150 and 250 of 350).
    lr_decay : float
        Factor applied to the learning rate at each milestone (default 0.1).
    lr_step_at_epoch_start : bool
        True steps the scheduler at the start of each epoch, so that each decay lands one
        epoch early, as Mukhoti et al.'s loop does (default False).
    clip_grad_norm : float or None
        Gradient-norm clipping threshold; None: no clipping (default 2.0).
    augment : bool
        Random crop with 4-pixel zero padding and horizontal flips of the training images
        (default True).
    select : {"last", "best_val_accuracy"}
        Which epoch's model is evaluated: the last (default) or the one with the best
        validation accuracy.
    eval_every_epoch : bool
        True records train, validation and test metrics after every epoch (default False).
    precision : {"float32", "bf16"}
        Training in float32 (default) or under bf16 autocast.

    Example
    -------
    >>> from replicate.profiles import Protocol
    >>> p = Protocol()
    >>> p.epochs, p.lr, p.clip_grad_norm
    (350, 0.1, 2.0)
    """

    epochs: int = 350
    batch_size: int = 128
    optimizer: str = "sgd"
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-4
    milestones: tuple[float, ...] = PAPER_MILESTONES
    lr_decay: float = 0.1
    lr_step_at_epoch_start: bool = False
    clip_grad_norm: float | None = 2.0
    augment: bool = True
    select: str = "last"
    eval_every_epoch: bool = False
    precision: str = "float32"


@dataclass(frozen=True, kw_only=True)
class Profile(Protocol):
    """One profile: data sizes, network and the protocol's fields (see the module docstring).

    Parameters
    ----------
    epochs, batch_size, optimizer, lr, momentum, weight_decay, milestones, lr_decay, lr_step_at_epoch_start, clip_grad_norm, augment, select, eval_every_epoch, precision
        The training protocol, as :class:`Protocol` (``epochs`` has no default here).
    name : str
        The profile's name (``"smoke"``, ``"cpu"``, ``"gpu"``, ``"paper"``).
    purpose : str
        What the profile is for, one line.
    n_train, n_val, n_test : int or None
        Training, validation and test images; None: all of the split.
    model : str
        The default image network (a name of :mod:`replicate.models`).
    models : tuple of str
        The image networks a chapter sweeps at this profile.
    model_params : dict
        Keywords of the default image network (default none).
    text_model : str
        The network for text data sets (default ``"text_cnn"``).
    seeds : tuple of int
        The torch seeds a chapter averages over (default ``(1,)``).
    text : dict
        Settings that replace the image ones for text data sets (:meth:`settings`); default none.

    Example
    -------
    >>> from replicate.profiles import get_profile
    >>> p = get_profile('smoke')
    >>> p.name, p.model, p.epochs
    ('smoke', 'tiny_cnn', 1)
    """

    name: str
    purpose: str
    n_train: int | None
    n_val: int | None
    n_test: int | None
    model: str
    models: tuple[str, ...]
    epochs: int
    model_params: dict = field(default_factory=dict)
    text_model: str = "text_cnn"
    seeds: tuple[int, ...] = (1,)
    text: dict = field(default_factory=dict)

    def settings(self, kind: str = "image") -> dict:
        """The training settings for a data set of ``kind``.

        Parameters
        ----------
        kind : {"image", "text"}
            The kind of data set (default ``"image"``).

        Returns
        -------
        dict
            A plain dict of every field except ``name``, ``purpose``, ``models``,
            ``seeds`` and ``text``, with the ``text`` overrides applied when ``kind ==
            "text"`` (``model`` is then the text network, with no ``model_params``).
        """
        if kind not in ("image", "text"):
            raise ValueError(f"kind must be 'image' or 'text', got {kind!r}")
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name not in ("name", "purpose", "models", "text", "text_model", "seeds")}
        out["model_params"] = dict(self.model_params)
        if kind == "text":
            out["model"] = self.text_model
            out["model_params"] = {}
            out.update(self.text)
        return out


def _text(epochs: int, n_train: int | None, n_val: int | None, n_test: int | None,
          data_params: dict | None = None, model_params: dict | None = None,
          batch_size: int = 128) -> dict:
    """Mukhoti et al. (2020), Appendix D, for 20 Newsgroups: Adam 1e-3, best validation accuracy.

    The paper does not state a batch size, weight decay or clipping for the text CNN;
    we use the reference script's batch size (128, ``20newsgroup_train.py``) unless a
    profile asks for smaller batches (more Adam steps per epoch), and no weight decay,
    no clipping, no lr decay.
    ``data_params`` (e.g. ``max_len``, the tokens kept per document, or the width of the
    word embeddings), ``model_params`` (e.g. a narrower CNN) and a smaller ``batch_size``
    (more steps per epoch) make the CPU profiles affordable: the paper's network on
    1000-token documents costs minutes per epoch on two cores. The word embeddings are
    the data set's default (:mod:`replicate.data.embeddings`): GloVe when its file is in
    the data directory, else word2vec trained on the training documents, frozen.
    """
    return {"optimizer": "adam", "lr": 1e-3, "momentum": 0.9, "weight_decay": 0.0,
            "milestones": (), "clip_grad_norm": None, "augment": False,
            "select": "best_val_accuracy", "epochs": epochs, "batch_size": batch_size,
            "n_train": n_train, "n_val": n_val, "n_test": n_test,
            "model_params": dict(model_params or {}), "data_params": dict(data_params or {})}


PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke", purpose="tests: seconds per run",
        n_train=1000, n_val=500, n_test=500, model="tiny_cnn", models=("tiny_cnn",),
        epochs=1, text=_text(1, 1000, 500, 500,
                             data_params={"max_len": 100, "embed_dim": 32, "word2vec": {"epochs": 1}},
                             model_params={"channels": 32, "hidden": 32})),
    "cpu": Profile(
        name="cpu", purpose="make book on 2 CPU cores: about a minute per run (benchmarks/cpu_profile.py)",
        n_train=15000, n_val=5000, n_test=None, model="tiny_cnn", models=("tiny_cnn",),
        model_params={"width": 32}, epochs=15, augment=False,
        text=_text(6, None, 1000, 2000, data_params={"max_len": 200},
                   model_params={"channels": 64, "hidden": 64}, batch_size=32)),
    "gpu": Profile(
        name="gpu", purpose="one lent GPU (15-minute loans): full data, CIFAR ResNet-18, 30 epochs, bf16; "
                            "one seed of every CIFAR-10 method in about two loans (replicate gpu-job --list)",
        n_train=None, n_val=None, n_test=None, model="resnet18",
        models=("resnet18", "resnet50", "resnet110", "wide_resnet26_10", "densenet121"),
        epochs=30, precision="bf16", text={**_text(20, None, None, None), "precision": "float32"}),
    "paper": Profile(
        name="paper", purpose="the exact protocol of the authors' code (the book's page 'The authors' code')",
        n_train=None, n_val=None, n_test=None, model="resnet50",
        models=("resnet50", "resnet110", "wide_resnet26_10", "densenet121"),
        epochs=350, lr_step_at_epoch_start=True, text=_text(50, None, None, None)),
}


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name`` (a :class:`Profile` passes through); ValueError lists the names.

    Parameters
    ----------
    name : str or Profile
        One of ``"smoke"``, ``"cpu"``, ``"gpu"``, ``"paper"``, or a profile.

    Example
    -------
    >>> from replicate.profiles import get_profile
    >>> get_profile('smoke').epochs
    1
    """
    if isinstance(name, Profile):
        return name
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; allowed profiles: {', '.join(PROFILES)}")
    return PROFILES[name]


def decayed_from(milestones, epochs: int, lr_step_at_epoch_start: bool = False) -> tuple[int, ...]:
    """The first 1-based epoch run at each decayed learning rate.

    Milestone ``f`` becomes epoch index ``m = max(1, round(f * epochs))``; a scheduler stepped
    after each epoch first uses the decayed rate in 1-based epoch ``m + 1`` (Mukhoti et
    al.: "0.1 for the first 150 epochs"), Mukhoti's loop, stepping at epoch start, in
    epoch ``m`` (see :mod:`replicate.training.schedule`).

    Parameters
    ----------
    milestones : sequence of float
        Decay points as fractions of ``epochs``, in (0, 1].
    epochs : int
        The run's length in epochs.
    lr_step_at_epoch_start : bool
        True for Mukhoti et al.'s loop, which steps the scheduler at the start of each epoch
        (each decay one epoch early); default False.

    Returns
    -------
    tuple of int
        One 1-based epoch per milestone that falls within the run.

    Example
    -------
    >>> from replicate.profiles import decayed_from
    >>> decayed_from((150 / 350, 250 / 350), epochs=35)
    (16, 26)
    """
    shift = 1 if lr_step_at_epoch_start else 0
    first = (max(1, int(round(f * epochs))) - shift + 1 for f in milestones)
    return tuple(e for e in first if e <= epochs)


def _show(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple):
        if all(isinstance(v, float) for v in value) and value:
            return "(" + ", ".join(f"{v:.4g}" for v in value) + ")"
        return ", ".join(str(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}={_show(v)}" for k, v in value.items())
    return str(value)


def describe(*names: str):
    """A table of the profiles' settings (rows) for ``names`` (columns; default all four).

    Chapters print it so that every figure can be traced to the data sizes and the
    schedule that produced it. Returns a pandas DataFrame of strings with a ``meaning``
    column; ``describe("cpu").to_markdown()`` needs the optional ``tabulate`` package,
    :func:`markdown` does not.

    Parameters
    ----------
    *names : str
        Profile names (``"smoke"``, ``"cpu"``, ``"gpu"``, ``"paper"``), one column each, in
        this order; none: all four.

    Example
    -------
    >>> from replicate.profiles import describe
    >>> list(describe('smoke', 'cpu').columns)
    ['meaning', 'smoke', 'cpu']
    """
    import pandas as pd

    chosen = [get_profile(n) for n in (names or tuple(PROFILES))]
    values = [{**asdict(p), "decayed_from": decayed_from(p.milestones, p.epochs, p.lr_step_at_epoch_start)}
              for p in chosen]
    rows = {key: [_show(v[key]) for v in values] for key in MEANINGS}
    frame = pd.DataFrame(rows, index=[p.name for p in chosen]).T
    frame.insert(0, "meaning", [MEANINGS[k] for k in frame.index])
    frame.index.name = "setting"
    return frame


def describe_table(*names: str):
    """:func:`describe` as the chapters show it: each setting's name is shown as code (the
    name a reader passes, e.g. ``n_train``), no pandas index (issue #32, item 1).

    Parameters
    ----------
    *names : str
        Profile names (``"smoke"``, ``"cpu"``, ``"gpu"``, ``"paper"``), one column each, in
        this order; none: all four.

    Example
    -------
    >>> from replicate.profiles import describe_table
    >>> "<code>n_train</code>" in describe_table("smoke").to_html()
    True
    """
    import html

    frame = describe(*names).reset_index()
    return (frame.style.hide(axis="index")
            .format({"setting": lambda v: f"<code>{html.escape(str(v))}</code>"}, escape=None))


def markdown(*names: str) -> str:
    """:func:`describe` as a GitHub-flavoured markdown table (no extra dependency).

    Parameters
    ----------
    *names : str
        Profile names (``"smoke"``, ``"cpu"``, ``"gpu"``, ``"paper"``), one column each, in
        this order; none: all four.

    Example
    -------
    >>> from replicate.profiles import markdown
    >>> markdown('smoke').splitlines()[0]
    '| setting | meaning | smoke |'
    """
    frame = describe(*names)
    header = ["setting", *frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, row in frame.iterrows():
        cells = [key, *(str(v).replace("|", "\\|") for v in row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: The measurements and assumptions that size the ``gpu`` profile and the GPU job
#: (:func:`replicate.gpu_loan.queue.sizing`). Throughputs were measured on one H200 on
#: 2026-11-26 (``benchmarks/train_speed.py --concurrent``, ResNet-18, batch 128, bf16,
#: channels-last, the engine's uncaptured steps; ``benchmarks/measured/2026-11-26-h200/``):
#: images per second over four trainings at once, without and with the CUDA MPS daemon.
#: The shares of per-epoch metrics and of the adaptive losses' validation pass are
#: estimates (a forward pass costs about a third of a training step), not measurements.
GPU_SIZING = {
    "images_per_second": 31_997,        # measured: ResNet-18, 4 trainings at once, no MPS
    "images_per_second_mps": 51_586,    # measured: the same under MPS (8 at once: 52,846)
    "workers": 4,                       # trainings at once on the GPU (more do not add throughput)
    "train_images": 45_000,             # CIFAR-10's reference training split
    "run_overhead_seconds": 10.0,       # measured in the pilot: start, data, warm-up, evaluation, record
    "history_share": 0.45,              # estimate: eval_every_epoch's passes over train/val/test
    "validation_share": 0.04,           # estimate: the adaptive losses' validation pass per epoch
    "validating_losses": ("adafocal", "calfocal", "adadual_focal"),
    "text_seconds_per_epoch": 1.0,      # estimate: 20 Newsgroups text CNN, float32 eager
    "loan_seconds": 900,                # device time of one loan
    "loan_overhead_seconds": 150,       # machine start (~30-90 s), engine check, packing, second command
}
