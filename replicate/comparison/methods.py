"""Methods, and the validated plan of the runs an experiment chapter trains.

:data:`MUKHOTI_METHODS`: the eleven methods of Mukhoti et al. (2020), Sec. 5 and
Appendix E - cross-entropy, Brier score, MMCE (lambda 2 on images, 8 on text, Appendix
D), label smoothing 0.05, focal loss with gamma 1/2/3, scheduled FLS-531/532 and the
sample-dependent FLSD-53/532 (the paper's FLA-53/532).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .paper import TEXT_DATASETS, paper_reference


@dataclass(frozen=True)
class Method:
    """A training method: key (as in the paper tables), label, loss and its parameters.

    ``text_loss_params`` replaces ``loss_params`` on text data.
    """

    key: str
    label: str
    loss: str
    loss_params: dict = field(default_factory=dict)
    text_loss_params: dict | None = None

    def params(self, kind: str = "image") -> dict:
        """The loss parameters on ``kind`` ("image" or "text") data."""
        if kind not in ("image", "text"):
            raise ValueError(f"kind must be 'image' or 'text'; got {kind!r}")
        chosen = self.text_loss_params if kind == "text" and self.text_loss_params is not None else self.loss_params
        return dict(chosen)

    @property
    def short(self) -> str:
        """The label without the bracketed alias ("FLSD-53 (FLA-53)" -> "FLSD-53")."""
        return self.label.split(" (")[0]


MUKHOTI_METHODS: dict[str, Method] = {m.key: m for m in (
    Method("cross_entropy", "Cross Entropy", "cross_entropy"),
    Method("brier", "Brier Loss", "brier"),
    Method("mmce", "MMCE", "mmce", {"lam": 2.0}, {"lam": 8.0}),
    Method("ls005", "LS-0.05", "label_smoothing", {"smoothing": 0.05}),
    Method("fl1", "FL-1", "focal", {"gamma": 1.0}),
    Method("fl2", "FL-2", "focal", {"gamma": 2.0}),
    Method("fl3", "FL-3", "focal", {"gamma": 3.0}),
    Method("fls531", "FLS-531", "fls531"),
    Method("fls532", "FLS-532", "fls532"),
    Method("flsd53", "FLSD-53 (FLA-53)", "flsd53"),
    Method("flsd532", "FLSD-532 (FLA-532)", "flsd532"),
)}
FOCAL_KEYS = ("fl1", "fl2", "fl3", "fls531", "fls532", "flsd53", "flsd532")
#: Methods whose image runs record metrics after every epoch (Figures 1, 3 and 4 read them).
HISTORY_METHODS = ("cross_entropy", "fl1", "fl2", "fl3")
#: Methods of Appendix F (qualitative results).
QUALITATIVE_METHODS = ("cross_entropy", "brier", "mmce", "flsd53")
#: The methods trained at the ``smoke`` profile: enough for every table, figure and verdict to run.
SMOKE_METHODS = ("cross_entropy", "fl3", "flsd53")


def default_methods(profile: str) -> tuple[str, ...]:
    """The methods a chapter trains at ``profile``: :data:`SMOKE_METHODS` at ``smoke``, else all."""
    from ..profiles import get_profile

    return SMOKE_METHODS if get_profile(profile).name == "smoke" else tuple(MUKHOTI_METHODS)


def resolve_methods(keys, registry: dict[str, Method] = MUKHOTI_METHODS) -> list[Method]:
    """The methods named by ``keys`` (all of ``registry`` for None); unknown or repeated keys are refused."""
    if keys is None:
        return list(registry.values())
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise ValueError(f"methods must name at least one method; allowed methods: {', '.join(registry)}")
    unknown = [k for k in keys if k not in registry]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; allowed methods: {', '.join(registry)}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"methods must not repeat a method; got {keys}")
    return [registry[k] for k in keys]


def methods_frame(methods, kind: str = "image") -> pd.DataFrame:
    """The methods as a table: key, label, loss and its parameters on ``kind`` data."""
    return pd.DataFrame([{"key": m.key, "method": m.label, "loss": m.loss,
                          "parameters": ", ".join(f"{k}={v:g}" for k, v in m.params(kind).items()) or "–"}
                         for m in methods])


def _check_seeds(seeds) -> tuple[int, ...]:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = (seeds,)
    seeds = tuple(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of non-negative integers; got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must not repeat; got {seeds!r}")
    return tuple(int(s) for s in seeds)


def configs(methods, dataset: str = "cifar10", model: str | None = None, profile: str = "cpu",
            seeds=(1,), options: dict | None = None, history_methods=HISTORY_METHODS) -> dict:
    """One validated :class:`replicate.runs.RunConfig` per ``(method key, seed)``, before any training.

    Image runs of ``history_methods`` also record per-epoch metrics (``eval_every_epoch``).
    """
    from ..runs import RunConfig, dataset_kind

    kind = dataset_kind(dataset)
    out = {}
    for m in methods:
        opts = dict(options or {})
        if kind == "image" and m.key in history_methods:
            opts.setdefault("eval_every_epoch", True)
        for s in _check_seeds(seeds):
            cfg = RunConfig(dataset=dataset, loss=m.loss, loss_params=m.params(kind), model=model,
                            profile=profile, seed=s, options=opts)
            cfg.resolve()  # validates names and values now, before anything trains
            out[(m.key, s)] = cfg
    return out


@dataclass
class Plan:
    """Everything a chapter will train, validated (see :func:`plan`): ``image`` and ``text``
    map ``(method key, seed)`` to a RunConfig; ``references`` maps a data set to its
    :class:`PaperReference`."""

    profile: str
    seeds: tuple
    methods: list
    device: str
    image: dict
    text: dict
    references: dict


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=(1,), methods=None,
         text_dataset: str | None = "20newsgroups", device: str | None = "auto") -> Plan:
    """Validate a chapter's parameters and build its run configurations; nothing trains.

    ``methods`` None takes :func:`default_methods` of the profile; ``text_dataset`` None
    skips the text experiment. Each bad parameter raises a ValueError naming it and the
    allowed values.
    """
    from .. import training
    from ..profiles import get_profile
    from ..runs import dataset_kind

    prof = get_profile(profile)
    seeds = _check_seeds(seeds)
    chosen = resolve_methods(default_methods(prof.name) if methods is None else methods)
    dev = str(training.select_device(device))
    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set; got {dataset!r} (a text data set goes in text_dataset)")
    if text_dataset is not None and dataset_kind(text_dataset) != "text":
        raise ValueError(f"text_dataset must be one of {', '.join(TEXT_DATASETS)} or None; got {text_dataset!r}")
    image = configs(chosen, dataset, model, prof.name, seeds)
    text = configs(chosen, text_dataset, None, prof.name, seeds) if text_dataset is not None else {}
    refs = {dataset: paper_reference(dataset, next(iter(image.values())).resolve()["model"])}
    if text:
        refs[text_dataset] = paper_reference(text_dataset, next(iter(text.values())).resolve()["model"])
    return Plan(prof.name, seeds, chosen, dev, image, text, refs)


def train_configs(cfgs: dict, store: str = "auto", device=None, progress: str = "log", log=print) -> dict:
    """Train or load every configuration of ``cfgs`` (``{(key, seed): RunConfig}``) through the
    run store; returns ``{(key, seed): Run}``."""
    from ..runs import get_or_train

    runs = {}
    for i, ((key, seed), cfg) in enumerate(cfgs.items(), 1):
        run = get_or_train(cfg, store=store, progress=progress, device=device)
        if log:
            log(f"[{i}/{len(cfgs)}] {cfg.dataset} {key} seed {seed}: run {run.key} "
                f"({run.wall_time:.0f} s of training when it was trained)")
        runs[(key, seed)] = run
    return runs


def train(p: Plan, store: str = "auto", progress: str = "log", log=print) -> tuple[dict, dict]:
    """Train or load everything the plan ``p`` lists: ``(image runs, text runs)``."""
    image = train_configs(p.image, store, p.device, progress, log)
    text = train_configs(p.text, store, p.device, progress, log) if p.text else {}
    return image, text
