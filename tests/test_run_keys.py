"""A library default must not change a committed run (issue #31, item 1).

The key of a run is the hash of its resolved configuration (:func:`replicate.runs.resolve`),
which spells out every loss parameter, ``reduction`` included. The losses' default reduction
is now the batch mean (``torch.nn``'s), while the papers' code sums; the book's runs get the
papers' reduction from :func:`replicate.runs.resolve` when their configuration does not name
one. Here the key of every committed run (``results/runs/<key>/record.json``), recomputed
from the configuration its record holds, must equal its folder's name.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from replicate import losses
from replicate.runs import RunConfig, canonical_json, resolve

RUNS = Path(__file__).resolve().parent.parent / "results" / "runs"
COMMITTED = sorted(p for p in RUNS.glob("*/record.json")) if RUNS.is_dir() else []


def _key(resolved: dict) -> str:
    return hashlib.sha256(canonical_json(resolved).encode()).hexdigest()[:16]


@pytest.mark.skipif(not COMMITTED, reason="no committed runs in results/runs")
def test_every_committed_run_key_is_recomputed_from_its_record():
    bad = []
    for path in COMMITTED:
        record = json.loads(path.read_text())
        resolved = resolve(RunConfig.from_dict(record["config"]))
        # data-dependent choices (20 Newsgroups' embeddings: GloVe present in the data
        # directory or not) are the record's: this test is about the code's defaults
        resolved["data"] = record["resolved"]["data"]
        if _key(resolved) != path.parent.name or resolved["loss_params"] != record["resolved"]["loss_params"]:
            bad.append(f"{path.parent.name}: {record['config']['loss']} {record['config']['loss_params']} -> "
                       f"{_key(resolved)} {resolved['loss_params']}")
    assert not bad, "\n".join(bad)
    assert len(COMMITTED) > 100


@pytest.mark.parametrize("loss", losses.available_losses())
def test_a_run_that_names_no_reduction_gets_the_papers(loss):
    implicit = RunConfig("cifar10", loss, profile="smoke")
    explicit = RunConfig("cifar10", loss, {"reduction": losses.paper_reduction(loss)}, profile="smoke")
    assert resolve(implicit)["loss_params"]["reduction"] == losses.paper_reduction(loss)
    assert implicit.key == explicit.key
    other = "sum" if losses.paper_reduction(loss) == "mean" else "mean"
    assert RunConfig("cifar10", loss, {"reduction": other}, profile="smoke").key != implicit.key
