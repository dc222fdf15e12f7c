"""The configuration of a run and its stable key.

:class:`RunConfig` names what a chapter asks for; :meth:`RunConfig.resolve` turns it into
the complete, validated description of the run - data sizes, network, every training
setting, the loss with all its parameters - using the profile
(:mod:`replicate.profiles`) and the modules' defaults, without loading any data. The key
is the SHA-256 of the canonical JSON of that resolved dict.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field, fields

import numpy as np

from ..profiles import get_profile

SCHEMA = 1
DATA_SIZE_KEYS = ("n_train", "n_val", "n_test")
TEXT_DATASETS = ("20newsgroups",)
#: Training settings that do not change a run's result (evaluation chunk size, divergence
#: guard) or only how it executes - the step engine (eager loop or CUDA graph, the same
#: operations on the same data) and the tensors' memory format (NCHW or channels-last:
#: the same convolutions, rounded as another cuDNN algorithm would round them): left at
#: their defaults and out of the key (``precision``, which changes the arithmetic, is in it).
EXECUTION_ONLY = ("eval_batch_size", "gamma_limit", "engine", "memory_format")


def _train_fields() -> tuple[str, ...]:
    from ..training import TrainSettings

    return tuple(f.name for f in fields(TrainSettings) if f.name not in EXECUTION_ONLY)


def option_keys() -> tuple[str, ...]:
    """Protocol options a :class:`RunConfig` may override (every result-determining training
    setting but the seed, and the data-subset sizes).

    Example
    -------
    >>> from replicate.runs import option_keys
    >>> 'augment' in option_keys()
    True
    """
    return tuple(k for k in _train_fields() if k != "seed") + DATA_SIZE_KEYS


def _canonical(obj):
    """Numbers as floats (bools kept), tuples as lists, dict keys sorted by json.dumps."""
    if isinstance(obj, dict):
        return {str(k): _canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, float, np.integer, np.floating)):
        v = float(obj)
        if not math.isfinite(v):
            raise ValueError(f"configuration values must be finite numbers; got {obj!r}")
        return v
    if obj is None or isinstance(obj, str):
        return obj
    raise ValueError(f"configuration values must be numbers, strings, booleans, None, lists or dicts; "
                     f"got {obj!r} ({type(obj).__name__})")


def _plain(obj):
    """``obj`` through JSON: tuples to lists, numpy scalars to Python numbers."""
    return json.loads(json.dumps(obj, default=lambda o: o.item() if isinstance(o, np.generic) else str(o)))


def canonical_json(obj) -> str:
    """The canonical JSON text of ``obj`` that run keys hash.

    Parameters
    ----------
    obj : object
        JSON-like data (dicts, lists, tuples, numbers, strings, None); numbers become floats,
        tuples lists, and keys are sorted, so equal configurations give equal text.

    Example
    -------
    >>> from replicate.runs import canonical_json
    >>> canonical_json({'b': 1, 'a': [1.0, 2]})
    '{"a":[1.0,2.0],"b":1.0}'
    """
    return json.dumps(_canonical(obj), sort_keys=True, separators=(",", ":"))


def dataset_kind(name: str) -> str:
    """``"image"`` or ``"text"`` for the data set ``name``; ValueError lists the known names.

    Parameters
    ----------
    name : str
        A data set name.

    Example
    -------
    >>> from replicate.runs import dataset_kind
    >>> dataset_kind('cifar10'), dataset_kind('20newsgroups')
    ('image', 'text')
    """
    from .. import data

    if name not in data.DATASETS:
        raise ValueError(f"unknown dataset {name!r}; allowed datasets: {', '.join(data.DATASETS)}")
    return "text" if name in TEXT_DATASETS else "image"


def data_arguments(name: str, split: str, data_params: dict) -> dict:
    """The keyword arguments of ``data.load`` for this run, with every default filled in.

    ``data_params`` may set the data set's options (``data.OPTIONS[name]``), ``val_size``
    and ``split_seed``; ValueError names an unknown one and lists the allowed ones.
    """
    from .. import data

    if split not in data.SPLITS:
        raise ValueError(f"unknown split {split!r}; allowed splits: {', '.join(data.SPLITS)}")
    allowed = ("val_size", "split_seed", *data.OPTIONS[name])
    unknown = [k for k in data_params if k not in allowed]
    if unknown:
        raise ValueError(f"unknown data_params {unknown} for {name!r}; allowed: {', '.join(allowed)}")
    out = {"split": split, "val_size": data.DEFAULT_VAL_SIZE[name], "split_seed": 1, **data.OPTIONS[name]}
    out.update(data_params)
    for key in ("val_size", "split_seed"):
        v = out[key]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"data_params[{key!r}] must be a non-negative integer; got {v!r}")
    # choices that depend on the data directory (20 Newsgroups: GloVe present or not) are made now
    out.update(data.resolve_options(name, {k: out[k] for k in data.OPTIONS[name]}))
    return out


def check_model(name: str, params: dict | None = None, kind: str = "image") -> str:
    """ValueError listing the models when ``name`` is not one, or naming a bad keyword."""
    import inspect

    from .. import models

    if name not in models.MODELS:
        raise ValueError(f"unknown model {name!r}; allowed models: {', '.join(models.MODELS)}")
    implicit = {"num_classes"} | ({"vocab_size"} if kind == "text" else set())
    sig = inspect.signature(models.MODELS[name])
    allowed = [p for p in sig.parameters if p not in implicit]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    unknown = [k for k in (params or {}) if k not in allowed]
    if unknown and not takes_any:
        raise ValueError(f"model {name!r}: unknown model_params {unknown}; allowed: {', '.join(allowed) or 'none'}")
    return name


@dataclass(frozen=True)
class RunConfig:
    """What to train: data set, loss and its parameters, network, profile, seed, options.

    ``model`` None takes the profile's network (its text network for text data);
    ``options`` overrides any protocol setting of the profile (``epochs``, ``lr``,
    ``milestones`` as fractions, ``clip_grad_norm``, ``lr_step_at_epoch_start``,
    ``precision``, ``eval_every_epoch``, ``n_train``, ...); ``model_params`` and
    ``data_params`` go to ``get_model`` and ``data.load``.

    Parameters
    ----------
    dataset : str
        A data set name (``"cifar10"``, ``"cifar100"``, ``"20newsgroups"``, ...;
        :func:`dataset_kind` lists them in its error).
    loss : str
        A loss name of :func:`replicate.losses.available_losses` (default ``"cross_entropy"``).
    loss_params : dict
        Keywords of the loss (:func:`replicate.losses.loss_parameters`); default none. A run
        that names no ``reduction`` gets the papers' (:func:`replicate.losses.paper_reduction`).
    model : str or None
        A network of :mod:`replicate.models`; None (default): the profile's.
    profile : {"smoke", "cpu", "gpu", "paper"}
        The compute profile (:mod:`replicate.profiles`; default ``"cpu"``).
    seed : int
        The torch seed of the initialisation and the batches (default 1).
    split : str
        The train/validation split of the data set (default ``"reference"``, the papers').
    options : dict
        Overrides of the profile's protocol settings (default none).
    model_params : dict
        Keywords of the network (default none).
    data_params : dict
        Keywords of the data set's loading: its options, ``val_size``, ``split_seed``
        (default none).

    Example
    -------
    >>> from replicate.runs import RunConfig
    >>> cfg = RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke')
    >>> cfg.loss, cfg.profile, cfg.seed
    ('focal', 'smoke', 1)
    """

    dataset: str
    loss: str = "cross_entropy"
    loss_params: dict = field(default_factory=dict)
    model: str | None = None
    profile: str = "cpu"
    seed: int = 1
    split: str = "reference"
    options: dict = field(default_factory=dict)
    model_params: dict = field(default_factory=dict)
    data_params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON types (tuples become lists, numpy scalars Python numbers)."""
        return _plain(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        """The configuration a :meth:`to_dict` wrote; ValueError names an unknown field.

        Parameters
        ----------
        d : dict
            The fields by name (those of the class; missing ones take their defaults).

        Example
        -------
        >>> from replicate.runs import RunConfig
        >>> cfg = RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke')
        >>> RunConfig.from_dict(cfg.to_dict()) == cfg
        True
        """
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown RunConfig fields {sorted(unknown)}; allowed: {', '.join(sorted(names))}")
        return cls(**d)

    def __eq__(self, other) -> bool:
        """Equal when the canonical forms agree (``(0.5, 0.75)`` == ``[0.5, 0.75]``, 3 == 3.0)."""
        if not isinstance(other, RunConfig):
            return NotImplemented
        return canonical_json(self.to_dict()) == canonical_json(other.to_dict())

    def __hash__(self) -> int:
        return hash(canonical_json(self.to_dict()))

    def replace(self, **changes) -> "RunConfig":
        """A copy with some fields changed (``dataclasses.replace``).

        Parameters
        ----------
        **changes
            New values of fields by name (``seed=2``, ``loss_params={"gamma": 2.0}``).

        Example
        -------
        >>> from replicate.runs import RunConfig
        >>> RunConfig('cifar10', profile='smoke').replace(seed=2).seed
        2
        """
        return dataclasses.replace(self, **changes)

    def resolve(self) -> dict:
        """The complete validated description of the run (see the module docstring)."""
        return resolve(self)

    @property
    def key(self) -> str:
        """16 hex digits of the SHA-256 of the canonical resolved configuration."""
        return hashlib.sha256(canonical_json(resolve(self)).encode()).hexdigest()[:16]


def _check_mapping(name: str, value) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a dict; got {value!r}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ValueError(f"{name} keys must be strings; got {bad!r}")
    return value


def resolve(cfg: RunConfig) -> dict:
    """Validate ``cfg`` and fill in every value the profile and module defaults decide.

    Checks, in order and before any data is read: profile, seed, data set, split type,
    options (names and values), network, loss name and parameters. Each failure is a
    ValueError naming the field and its allowed values. A loss whose ``loss_params`` do not
    set ``reduction`` gets the papers' code's (:func:`replicate.losses.paper_reduction`:
    the batch sum, the mean for Brier and FCL), not the library's default (the mean).

    Parameters
    ----------
    cfg : RunConfig
        What a chapter asks for.

    Example
    -------
    >>> from replicate.runs import RunConfig, resolve
    >>> r = resolve(RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke'))
    >>> r['loss'], r['loss_params']
    ('focal', {'reduction': 'sum', 'gamma': 3.0})
    """
    from ..training import TrainSettings

    profile = get_profile(cfg.profile)
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, (int, np.integer)) or cfg.seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {cfg.seed!r}")
    if not isinstance(cfg.dataset, str):
        raise ValueError(f"dataset must be a string; got {cfg.dataset!r}")
    kind = dataset_kind(cfg.dataset)
    for name in ("loss_params", "options", "model_params", "data_params"):
        _check_mapping(name, getattr(cfg, name))
    settings = profile.settings(kind)
    # the profile's data options (e.g. the text length of a CPU profile) yield to the run's own
    data_args = data_arguments(cfg.dataset, cfg.split, {**settings.pop("data_params", {}), **cfg.data_params})
    allowed = option_keys()
    unknown = [k for k in cfg.options if k not in allowed]
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; allowed options: {', '.join(allowed)}")
    settings.update(cfg.options)
    for key in DATA_SIZE_KEYS:
        v = settings[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise ValueError(f"{key} must be a positive integer or None (all); got {v!r}")
    train = {k: settings[k] for k in _train_fields() if k in settings}
    train["seed"] = int(cfg.seed)
    for k in ("milestones", "betas"):
        if isinstance(train.get(k), list):
            train[k] = tuple(train[k])
    ts = TrainSettings(**train).validate()
    model = cfg.model if cfg.model is not None else settings["model"]
    # the profile's network keywords (e.g. tiny_cnn width) go with the profile's network only
    model_params = {**(settings["model_params"] if model == settings["model"] else {}), **cfg.model_params}
    check_model(model, model_params, kind)
    from .. import losses

    # the book's protocol reduces as the papers' code does, passed explicitly (the library's
    # default is the batch mean): a run that does not name its reduction gets the papers'
    loss_params = {"reduction": losses.paper_reduction(cfg.loss), **cfg.loss_params}
    loss_config = dict(losses.get_loss(cfg.loss, **loss_params).config())
    loss_name = loss_config.pop("name", cfg.loss)
    resolved = {
        "schema": SCHEMA, "dataset": cfg.dataset, "kind": kind, "data": data_args, "subset_seed": 0,
        **{k: (int(settings[k]) if settings[k] is not None else None) for k in DATA_SIZE_KEYS},
        "model": model, "model_params": model_params,
        "loss": loss_name, "loss_params": loss_config,
        "train": {k: v for k, v in _plain(dataclasses.asdict(ts)).items() if k not in EXECUTION_ONLY},
    }
    canonical_json(resolved)  # every value must be JSON-representable and finite
    return resolved
