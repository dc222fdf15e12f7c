"""Runs: configurations, their stable keys, finished records and ``get_or_train``.

A run is a :class:`RunConfig` (data set, split, model, loss and its parameters, protocol
options, profile, seed) and its record: configuration, final metrics before and after
temperature scaling with the fitted T, per-epoch history, validation and test logits,
provenance. See :mod:`replicate.runs.layout` for the on-disk layout and
:mod:`replicate.runs.spec` for how a configuration is resolved and keyed.

    import replicate as rp
    run = rp.runs.get_or_train(rp.runs.RunConfig("cifar10", "focal", {"gamma": 3}, profile="cpu"))
    run.metrics["test"]["ece"], run.temperature, run.logits("test")

:mod:`replicate.runs.session` trains a set of runs within a time budget (commands that are
cut off resume from checkpoints); :mod:`replicate.runs.archive` packs finished runs into
archives that travel back from a GPU machine and unpacks them into ``results/``. A damaged
run (:mod:`replicate.runs.records`) does not stop a reader of many runs:
:mod:`replicate.runs.damage` (``check_store``: every damaged file at once).
"""
from . import archive, damage, ood
from .archive import pack, unpack
from .build import build, clear_data_cache
from .damage import check_store
from .layout import STORES, checkpoint_path, store_dir
from .records import Run
from .session import SessionReport, train_within
from .spec import RunConfig, canonical_json, dataset_kind, option_keys, resolve
from .store import find, get_or_train, list_runs, load, promote, seeds_in_store, write_record

__all__ = ["RunConfig", "Run", "get_or_train", "find", "load", "list_runs", "promote", "write_record",
           "seeds_in_store", "resolve", "canonical_json", "dataset_kind", "option_keys", "build", "clear_data_cache", "store_dir",
           "checkpoint_path", "STORES", "pack", "unpack", "archive", "train_within", "SessionReport", "damage", "check_store"]
