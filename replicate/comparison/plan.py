"""The validated plan of the runs an experiment chapter trains, and training it.

A :class:`Plan` holds named groups of runs (``"image"``, ``"text"``, an ablation such as
``"bins"``), each mapping ``(method key, seed)`` to a :class:`replicate.runs.RunConfig`.
Every configuration is resolved (validated) when the plan is built, before anything
trains. The same plan serves the chapter (which trains or loads it), ``replicate sweep``
(which trains its missing runs in parallel) and ``replicate book`` (which asks whether
all of a profile's runs are in the store).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .methods import Method


def check_seeds(seeds) -> tuple[int, ...]:
    """``seeds`` as a tuple of distinct non-negative ints (one int allowed); else ValueError."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = (seeds,)
    try:
        seeds = tuple(seeds)
    except TypeError:
        raise ValueError(f"seeds must be a non-empty list of non-negative integers; got {seeds!r}") from None
    if not seeds or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of non-negative integers; got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must not repeat; got {seeds!r}")
    return tuple(int(s) for s in seeds)


def check_text_profile(text_profile, profile: str) -> str:
    """The profile a chapter's text rows are planned at: ``profile`` when ``text_profile`` is
    None, else ``text_profile`` if it names a profile; else a ValueError naming the parameter."""
    from ..profiles import PROFILES

    if text_profile is None:
        return profile
    if not isinstance(text_profile, str) or text_profile not in PROFILES:
        raise ValueError(f"text_profile must be one of {', '.join(PROFILES)} or None (the profile's own); "
                         f"got {text_profile!r}")
    return text_profile


def configs(methods, dataset: str = "cifar10", model: str | None = None, profile: str = "cpu", seeds=(1,),
            options: dict | None = None, history_methods=()) -> dict:
    """One validated :class:`replicate.runs.RunConfig` per ``(method key, seed)``, before any training.

    The loss parameters are the method's for the resolved network (``Method.params``);
    image runs of ``history_methods`` also record per-epoch metrics (``eval_every_epoch``).
    """
    from ..runs import RunConfig, dataset_kind

    kind = dataset_kind(dataset)
    seeds = check_seeds(seeds)
    net = RunConfig(dataset=dataset, model=model, profile=profile).resolve()["model"]
    out = {}
    for m in methods:
        opts = dict(options or {})
        if kind == "image" and m.key in history_methods:
            opts.setdefault("eval_every_epoch", True)
        for s in seeds:
            cfg = RunConfig(dataset=dataset, loss=m.loss, loss_params=m.params(kind, dataset, net), model=model,
                            profile=profile, seed=s, options=opts)
            cfg.resolve()  # validates names and values now, before anything trains
            out[(m.key, s)] = cfg
    return out


@dataclass
class Plan:
    """Everything a chapter will train, validated: ``groups`` maps a group name to
    ``{(method key, seed): RunConfig}`` and ``methods`` a group name to its methods (in
    table order); ``references`` maps a data set to its paper reference row. ``profile`` is
    the plan's profile; ``profiles`` names the groups planned at another one (a chapter
    whose image runs are at ``gpu`` while its text runs wait for their own loan shows its
    text rows at ``cpu``: ``{"text": "cpu"}``), read through :meth:`profile_of`."""

    chapter: str
    profile: str
    seeds: tuple
    device: str
    groups: dict = field(default_factory=dict)
    methods: dict = field(default_factory=dict)
    references: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)

    def profile_of(self, group: str) -> str:
        """The profile group ``group`` is planned at (the plan's own unless :attr:`profiles` says otherwise)."""
        return self.profiles.get(group, self.profile)

    def profile_text(self) -> str:
        """The plan's profile for captions: ``"gpu"``, or ``"gpu (text rows: cpu)"`` when a group
        is planned at another profile."""
        other = {g: q for g, q in self.profiles.items() if q != self.profile and g in self.groups}
        if not other:
            return self.profile
        return f"{self.profile} ({'; '.join(f'{g} rows: {q}' for g, q in other.items())})"

    def add(self, group: str, methods: list[Method], cfgs: dict) -> None:
        """Add a group of runs (refuses a group name twice)."""
        if group in self.groups:
            raise ValueError(f"plan {self.chapter}: group {group!r} added twice")
        self.groups[group], self.methods[group] = dict(cfgs), list(methods)

    def group(self, name: str) -> dict:
        """The runs of group ``name`` (empty when the plan has none)."""
        return self.groups.get(name, {})

    @property
    def image(self) -> dict:
        return self.group("image")

    @property
    def text(self) -> dict:
        return self.group("text")

    def configs(self) -> dict:
        """Every distinct configuration of the plan: ``{run key: RunConfig}``, in plan order
        (a run shared by two groups appears once)."""
        out = {}
        for cfgs in self.groups.values():
            for cfg in cfgs.values():
                out.setdefault(cfg.key, cfg)
        return out

    def frame(self) -> pd.DataFrame:
        """One row per run of every group: group, method, seed, run key, data set, network,
        loss and parameters, epochs, and whether it is finished (in a store; a damaged run is
        not, :mod:`replicate.runs.damage`)."""
        from ..runs import find

        rows = []
        for g, cfgs in self.groups.items():
            for (key, seed), cfg in cfgs.items():
                r = cfg.resolve()
                rows.append({"group": g, "method": key, "seed": seed, "key": cfg.key, "dataset": r["dataset"],
                             "model": r["model"], "loss": r["loss"],
                             "params": ", ".join(f"{k}={v}" for k, v in sorted(cfg.loss_params.items())) or "–",
                             "epochs": r["train"]["epochs"], "finished": find(cfg, on_damage="skip") is not None})
        return pd.DataFrame(rows)

    def missing(self, store: str | None = None, groups=None) -> dict:
        """The distinct configurations (of ``groups``, default all) with no finished run (in
        ``store``, or any store); a damaged run counts as missing (kept in
        :func:`replicate.runs.damage.seen`)."""
        from ..runs import find

        cfgs = self.configs() if groups is None else {c.key: c for g in groups for c in self.group(g).values()}
        out = {}
        for key, cfg in cfgs.items():
            run = find(cfg, on_damage="skip")
            if run is None or (store is not None and run.store != store):
                out[key] = cfg
        return out

    def complete(self, store: str | None = "results", groups=None) -> bool:
        """Whether every run of the plan (of ``groups``, default all) is finished in ``store``
        (default the committed one): :meth:`missing` finds none."""
        return not self.missing(store, groups)


def _train_each(cfgs: dict, store: str, device, progress: str, log) -> tuple[dict, list]:
    """``({(key, seed): Run}, [DamagedRunError])``: every configuration of ``cfgs`` trained or
    loaded, going on past the damaged finished runs (record or logits; not trained over)."""
    from ..runs import damage, get_or_train
    from ..runs.records import DamagedRunError

    runs, broken = {}, []
    for i, ((key, seed), cfg) in enumerate(cfgs.items(), 1):
        try:
            run = get_or_train(cfg, store=store, progress=progress, device=device)
            damage.check_logits_once(run.path)          # a truncated logits.npz, not only a broken record
        except DamagedRunError as err:
            broken.append(err)
            if log:
                log(f"[{i}/{len(cfgs)}] {cfg.dataset} {key} seed {seed}: {err}")
            continue
        if log:
            log(f"[{i}/{len(cfgs)}] {cfg.dataset} {key} seed {seed}: run {run.key} "
                f"({run.wall_time:.0f} s of training when it was trained)")
        runs[(key, seed)] = run
    return runs, broken


def damaged_error(errors: list):
    """One :class:`replicate.runs.records.DamagedRunError` for the damaged runs ``errors``: the
    one error itself, or for several a count followed by one line each (its ``errors``)."""
    from ..runs.records import DamagedRunError

    if len(errors) == 1:
        return errors[0]
    lines = "\n".join(f"  {e}" for e in errors)
    err = DamagedRunError(f"{len(errors)} finished runs are damaged (each line: the run, the file, the fix):\n{lines}")
    err.errors = list(errors)
    return err


def train_configs(cfgs: dict, store: str = "auto", device=None, progress: str = "log", log=print) -> dict:
    """Train or load every configuration of ``cfgs`` (``{(key, seed): RunConfig}``) through the
    run store; returns ``{(key, seed): Run}``. A damaged finished run is not trained over: the
    others are trained or loaded first, then :func:`damaged_error` names every damaged one,
    one line each, with its fix."""
    runs, broken = _train_each(cfgs, store, device, progress, log)
    if broken:
        raise damaged_error(broken)
    return runs


def train(p: Plan, groups=None, store: str = "auto", progress: str = "log", log=print) -> dict:
    """Train or load the runs of ``groups`` (default all) of plan ``p``: ``{group: {(key, seed): Run}}``.
    Every group is trained or loaded before the damaged finished runs of all of them are
    named at once (:func:`damaged_error`)."""
    names = list(p.groups) if groups is None else ([groups] if isinstance(groups, str) else list(groups))
    unknown = [g for g in names if g not in p.groups]
    if unknown:
        raise ValueError(f"unknown group(s) {unknown}; the plan has: {', '.join(p.groups) or 'none'}")
    out, broken = {}, []
    for g in names:
        out[g], errs = _train_each(p.groups[g], store, p.device, progress, log)
        broken += [e for e in errs if e.key not in {b.key for b in broken}]
    if broken:
        raise damaged_error(broken)
    return out


def load(p: Plan, groups=None) -> dict | None:
    """The finished runs of ``groups`` (default all) of plan ``p`` without training anything:
    ``{group: {(key, seed): Run}}``, or None when any run is missing from the stores. A damaged
    run (record or logits) counts as missing and is kept
    (:func:`replicate.runs.damage.seen`), so that the claims on it say "run <key> damaged"
    (:func:`replicate.comparison.chapter.not_in_store`); every run is looked up, so every
    damaged one is met."""
    from ..runs import find

    names = list(p.groups) if groups is None else ([groups] if isinstance(groups, str) else list(groups))
    out = {}
    for g in names:
        found = {k: find(cfg, on_damage="skip") for k, cfg in p.group(g).items()}
        if any(r is None for r in found.values()):
            return None
        out[g] = found
    return out


def load_groups(p: Plan) -> dict:
    """``{group: {(key, seed): Run}}`` of every group of ``p`` whose runs are all in the stores
    (never trains); a group with a missing run is left out, so that a chapter shows what is
    there and answers "not tested" for the rest (where :func:`load` gives None)."""
    out = {}
    for g in p.groups:
        got = load(p, groups=g)
        if got is not None:
            out[g] = got[g]
    return out


def check_datasets(dataset: str, text_dataset: str | None = None) -> None:
    """Refuse a ``dataset`` that is not an image data set and a ``text_dataset`` (None: no
    text row) that is not a text data set, before anything is planned: the data sets of an
    experiment chapter's image and text rows."""
    from ..runs import dataset_kind
    from .paper import TEXT_DATASETS

    if dataset_kind(dataset) != "image":
        raise ValueError(f"dataset must be an image data set; got {dataset!r} (a text data set goes in text_dataset)")
    if text_dataset is not None and dataset_kind(text_dataset) != "text":
        raise ValueError(f"text_dataset must be one of {', '.join(TEXT_DATASETS)} or None; got {text_dataset!r}")


def add_referenced(p: Plan, group: str, methods, cfgs: dict, paper: str) -> None:
    """Add group ``group`` of runs ``cfgs`` to ``p`` and record, for its data set, ``paper``'s
    row to compare with (:func:`replicate.comparison.paper_reference` of the data set and the
    network the group's first run resolves to): a chapter's image and text rows."""
    from .paper import paper_reference

    p.add(group, methods, cfgs)
    first = next(iter(cfgs.values())).resolve()
    p.references[first["dataset"]] = paper_reference(first["dataset"], first["model"], paper)


#: Options that only add measurements to a run and leave the trained model as it is: a run
#: trained with them may stand in for the same run without them (and the other way round).
RECORD_ONLY_OPTIONS = ({"eval_every_epoch": True}, {"eval_every_epoch": False})


def reuse_finished(cfgs: dict, alternatives=RECORD_ONLY_OPTIONS) -> dict:
    """``cfgs`` (``{(key, seed): RunConfig}``) with each configuration that has no finished
    run replaced by the first of its ``alternatives`` (the same configuration with some
    options changed; default :data:`RECORD_ONLY_OPTIONS`: with or without per-epoch
    metrics) that has one. A chapter that compares final models (the leaderboard) reuses
    the runs other chapters trained with per-epoch records; what is still missing is
    planned as given. Reads the stores; trains nothing."""
    from ..runs import find

    out = {}
    for k, cfg in cfgs.items():
        chosen = cfg
        if find(cfg, on_damage="skip") is None:
            for alt in alternatives:
                other = cfg.replace(options={**cfg.options, **alt})
                if other.key != cfg.key and find(other, on_damage="skip") is not None:
                    chosen = other
                    break
        out[k] = chosen
    return out
