"""The experiment chapter of Liang et al. (Focal Calibration Loss, FCL), ``exp_fcl``: its
methods, settings and runs. The paper's claims, each with its test, are in :mod:`.claims`;
:mod:`.report` computes the chapter's evidence and verdicts once (it imports the others;
this module imports none of them).

Runs (:func:`plan`), all through the run store, reused wherever another chapter trained the
same configuration (Mukhoti et al.'s cross-entropy, Brier, MMCE, LS-0.05, FL-3 and FLSD-53;
Tao et al.'s DFL and its per-epoch records):

``image``
    the seven methods of Tables 1-4, 6 and 7 (weight decay = cross-entropy, Brier, MMCE,
    LS-0.05, FLSD-53, DFL, FCL), FCL with the paper's (gamma, lambda) of App. A.10 for the
    network (the authors' latest configuration, gamma 2 and lambda 1, for a network the
    paper did not train: :data:`replicate.comparison.METHODS`), over ``seeds``;
``history``
    FL-3, FLSD-53, DFL and FCL recording test metrics after every epoch (Figs. 3 and 8;
    cross-entropy's image runs record them already, as in the Mukhoti chapter), first seed;
``norm``
    App. A.15 (Table 8): FCL with the L2 (the ``image`` run) and the L1 calibration term;
``lambda``
    Fig. 6: FCL at the network's gamma over ``lambdas`` (lambda = 0 is focal loss with
    FCL's mean reduction);
``text``
    20 Newsgroups (the tables' text row), first seed.

Fig. 7 (decision boundaries of FL and FCL on a noisy two-dimensional set) trains small
networks outside the run store (:mod:`replicate.toy2d`), once: its outputs are kept as a run's
are, the ``cpu`` study committed under ``results/toy2d/`` (:func:`toy_study`).
"""
from __future__ import annotations

import dataclasses

from ... import comparison as cmp
from ...comparison import chapter

PAPER = "liang2024"
CHAPTER = "exp_fcl"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = chapter.SECTION
#: Tables 1-4, 6, 7 in the paper's column order ("Weight Decay" = cross-entropy).
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "flsd53", "dual_focal", "fcl")
SMOKE_METHODS = ("cross_entropy", "flsd53", "fcl")
#: Figs. 3 and 8: cross-entropy (its image runs record every epoch), FL-3, FLSD-53, DFL, FCL.
HISTORY_METHODS = ("fl3", "flsd53", "dual_focal", "fcl")
SMOKE_HISTORY = ("fl3", "fcl")
#: Fig. 3 (normalised test loss) and Fig. 9 (reliability diagrams), as the paper names them.
FIG3_METHODS = ("cross_entropy", "fl3", "dual_focal", "fcl")
FIG8_METHODS = ("cross_entropy", "fl3", "flsd53", "dual_focal", "fcl")
FIG9_METHODS = ("cross_entropy", "flsd53", "dual_focal", "fcl")
#: Fig. 6: lambda at the network's gamma (the paper's grid is not printed; these bracket
#: the text's 0 and 0.5 and App. A.10's values 0.5-4.5).
LAMBDAS, SMOKE_LAMBDAS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0), (0.0, 1.0)
NORMS = ("l2", "l1")


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all seven."""
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def norm_methods() -> list[cmp.Method]:
    """App. A.15's rows: FCL with the squared L2 term (the catalogue's FCL) and with L1."""
    fcl = cmp.METHODS["fcl"]
    return [fcl, fcl.variant("fcl_l1", "FCL (L1 term)", norm="l1")]


def lambda_key(lam: float) -> str:
    """The method key of the lambda-sweep row ``lam`` ("fcl_lam0.5")."""
    return f"fcl_lam{lam:g}"


def lambda_methods(lambdas) -> list[cmp.Method]:
    """Fig. 6's rows: FCL with ``lambda`` = each of ``lambdas`` at the network's gamma (its
    per-network lambda of App. A.10 dropped, its gamma kept)."""
    fcl = cmp.METHODS["fcl"]
    gammas = {k: {"gamma": v["gamma"]} for k, v in fcl.per_model.items()}
    return [dataclasses.replace(fcl.variant(lambda_key(lam), f"FCL, λ = {lam:g}", lam=float(lam)),
                                per_model=gammas) for lam in lambdas]


def _lambdas(lambdas, smoke: bool) -> tuple[float, ...]:
    lambdas = (SMOKE_LAMBDAS if smoke else LAMBDAS) if lambdas is None else lambdas
    try:
        out = tuple(lambdas)
    except TypeError:
        out = ()
    if not out or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf")
                      for v in out) or len(set(out)) != len(out):
        raise ValueError(f"lambdas must be a non-empty list of distinct numbers >= 0 (or None: the profile's "
                         f"grid); got {lambdas!r}")
    return tuple(float(v) for v in out)


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=(1,), methods=None,
         ablations: bool = True, lambdas=None, text_dataset: str | None = "20newsgroups",
         device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    Groups as in the module docstring; ``methods`` None takes :func:`default_methods`;
    ``ablations`` False leaves out the ``norm`` and ``lambda`` groups; ``lambdas`` None takes
    :data:`LAMBDAS` (:data:`SMOKE_LAMBDAS` at ``smoke``). The single-seed groups use the
    first seed. Each bad parameter raises a ValueError naming it and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile

    prof = get_profile(profile)
    smoke = prof.name == "smoke"
    seeds = cmp.check_seeds(seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    if not isinstance(ablations, bool):
        raise ValueError(f"ablations must be True or False; got {ablations!r}")
    lams = _lambdas(lambdas, smoke)
    cmp.check_datasets(dataset, text_dataset)
    dev = str(training.select_device(device))
    first = seeds[:1]
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    # cross-entropy records per-epoch metrics as in the Mukhoti chapter, so its runs are shared
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=("cross_entropy",))
    cmp.add_referenced(p, "image", chosen, image, PAPER)
    hist = [cmp.METHODS[k] for k in (SMOKE_HISTORY if smoke else HISTORY_METHODS)]
    p.add("history", hist, cmp.configs(hist, dataset, model, prof.name, first, history_methods=HISTORY_METHODS))
    if ablations:
        norms = norm_methods()
        p.add("norm", norms, cmp.configs(norms, dataset, model, prof.name, first))
        sweep = lambda_methods(lams)
        p.add("lambda", sweep, cmp.configs(sweep, dataset, model, prof.name, first))
    if text_dataset is not None:
        text = cmp.configs(chosen, text_dataset, None, prof.name, first)
        cmp.add_referenced(p, "text", chosen, text, PAPER)
    return p


def history_runs(p: cmp.Plan, runs: dict) -> dict:
    """``{method key: Run}`` of the runs with per-epoch records (Figs. 3 and 8): the first
    seed's cross-entropy image run and the ``history`` group."""
    out = {"cross_entropy": runs["image"][("cross_entropy", p.seeds[0])]} if "image" in runs else {}
    return {**out, **{k: r for (k, _), r in runs.get("history", {}).items()}}


#: Fig. 7's two-dimensional study per profile (seconds of CPU; never the run store).
TOY = {"smoke": {"seeds": (0,), "epochs": 100, "n_test": 1000}, "default": {"seeds": (0, 1, 2, 3, 4)}}


def toy_study(profile: str = "cpu", keep_test: bool = False):
    """:func:`replicate.toy2d.study` at the size of ``profile`` (:data:`TOY`), kept as the
    chapter's runs are (:func:`replicate.toy2d.stored_study`): in the committed store (the
    ``cpu`` study is committed), at ``smoke`` in the local cache; trained only where none is kept."""
    from ... import toy2d
    from ...profiles import get_profile

    name = get_profile(profile).name
    return toy2d.stored_study("cache" if name == "smoke" else "results", keep_test=keep_test,
                              **TOY.get(name, TOY["default"]))
