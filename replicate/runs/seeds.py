"""Every seed of a configuration in the stores (:func:`seeds_in_store`): the runs that are
the same model but for the seed, which a verdict may use whatever seeds a chapter planned."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from . import damage
from .layout import STORES, store_dir
from .spec import RunConfig


#: Options that only add measurements to a run (per-epoch metrics) and leave the trained
#: model as it is: :func:`seeds_in_store` treats runs that differ only by them as one model.
RECORD_ONLY = ("eval_every_epoch",)


def _family(config: dict) -> str:
    """A configuration's canonical JSON without its seed and record-only options."""
    from .spec import canonical_json

    c = {k: v for k, v in config.items() if k != "seed"}
    c["options"] = {k: v for k, v in (c.get("options") or {}).items() if k not in RECORD_ONLY}
    return canonical_json(c)


@functools.lru_cache(maxsize=8)
def _families(base: str, mtime: int) -> dict:
    """``{family: [(seed, options, folder)]}`` of every record in the store folder ``base``
    (read once per state of the folder: adding or removing a run changes its mtime)."""
    out: dict = {}
    for path in sorted(Path(base).iterdir()):
        rec = path / "record.json"
        if path.name.startswith(".") or not rec.exists():
            continue
        try:
            with open(rec, encoding="utf-8") as fh:
                cfg = json.load(fh).get("config", {})
            out.setdefault(_family(cfg), []).append((int(cfg["seed"]), cfg.get("options", {}), path))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


def seeds_in_store(config: RunConfig, on_damage: str = "skip") -> dict:
    """Every finished run of ``config`` at any seed: ``{seed: Run}``, the runs whose
    configuration equals ``config``'s but for the seed and the record-only options
    (:data:`RECORD_ONLY`), in ``results`` first, then ``cache``. Where a seed has several
    such runs, the one of ``config``'s own options is taken. A damaged run is left out and
    kept (``on_damage="skip"``, default; :func:`replicate.runs.find`) or stops with its error (``"raise"``).

    Parameters
    ----------
    config : RunConfig
        The configuration; its seed does not matter.
    on_damage : {"skip", "raise"}
        What a damaged run does (default ``"skip"``).

    Returns
    -------
    dict
        ``{seed: Run}``, by increasing seed.

    Example
    -------
    >>> from replicate.runs import RunConfig, seeds_in_store
    >>> found = seeds_in_store(RunConfig('cifar10', 'brier', profile='gpu', seed=99))
    >>> found[1].key
    '1bef35eabfc1ab17'
    >>> seeds_in_store(RunConfig('cifar10', 'focal', {'gamma': 3.0}, profile='smoke'))
    {}
    """
    damage.check_on_damage(on_damage)
    want = _family(config.to_dict())
    found: dict = {}
    for name in STORES:
        base = store_dir(name)
        if not base.exists():
            continue
        for seed, options, path in _families(str(base), base.stat().st_mtime_ns).get(want, []):
            own = options == config.options
            if seed not in found or (own and not found[seed][1]):
                found[seed] = (path, own)
    out = {}
    for seed, (path, _) in sorted(found.items()):
        run = damage.read(path, on_damage)
        if run is not None:
            out[seed] = run
    return out
