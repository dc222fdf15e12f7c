"""The experiment chapter of Ghosh et al. (2022), ``exp_adafocal``: its methods, settings and
runs (:func:`plan`). The paper's claims, each with its test, are in :mod:`.claims`;
:mod:`.report` computes the chapter's evidence and verdicts once (this module imports
neither).

The text replicated is the ICLR 2022 submission. Its AdaFocal (Eq. 4, Algorithm 1) updates
each validation bin's gamma by ``gamma <- min(20, gamma exp(C_val - A_val))``; the authors'
final code adds lambda, gamma_min and a switch to inverse focal loss (the book's page "The authors' code"). Both are
trained: ``adafocal_paper`` (Eq. 4) and ``adafocal_code``; every number says which.

Groups of runs (:func:`plan`):

``image``
    Table 1-8 methods on ``dataset``: cross-entropy, Brier, MMCE, LS-0.05, FL-3/4/5,
    FLSD-53, both AdaFocal rules and CalFocal (Eq. 1 and 2, lambda 10 and 100). The runs of
    the Mukhoti chapter (same configuration, same key) are reused, not retrained.
``seeds``
    cross-entropy, FLSD-53 and both AdaFocal rules over ``error_bar_seeds`` with per-epoch
    records (Fig. 4a, Fig. 14, App. L.1).
``bins`` / ``gamma_max``
    the ablations of App. I (Table 9: validation bins) and App. L (gamma_max 20 / 50 /
    unbounded) for ``ablation_rule``.
``text``
    the 20 Newsgroups row of Tables 1-8.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...comparison import chapter

PAPER = "ghosh2022"
CHAPTER = "exp_adafocal"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = chapter.SECTION
ADAFOCAL_KEYS = ("adafocal_paper", "adafocal_code")
CALFOCAL_KEYS = ("calfocal1_l10", "calfocal1_l100", "calfocal2_l10", "calfocal2_l100")
BASELINE_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "flsd53")
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "fl3", "fl4", "fl5", "flsd53", *ADAFOCAL_KEYS,
               *CALFOCAL_KEYS)
#: Image methods whose runs record metrics (and validation bins) after every epoch. FLSD-53,
#: Brier, MMCE and LS-0.05 are left out so that the Mukhoti chapter's runs are reused;
#: FLSD-53's per-epoch records come from the ``seeds`` group.
HISTORY_METHODS = ("cross_entropy", "fl3", "fl4", "fl5", *ADAFOCAL_KEYS, *CALFOCAL_KEYS)
#: Methods trained over ``error_bar_seeds`` (Fig. 4a and Fig. 14, all with per-epoch records).
SEED_METHODS = ("cross_entropy", "flsd53", *ADAFOCAL_KEYS)
#: Methods of Fig. 1 (validation calibration per bin, CIFAR-10).
FIG1_METHODS = ("cross_entropy", "fl3", "fl4", "fl5", "flsd53")
#: Methods of the 20 Newsgroups row of Table 1.
TEXT_KEYS = (*BASELINE_KEYS, *ADAFOCAL_KEYS)
SMOKE_METHODS = ("cross_entropy", "flsd53", "adafocal_paper")
#: Ablation defaults: App. I's bins (15 is the main run) and App. L's gamma_max (20 is the main run).
BINS, SMOKE_BINS, MAIN_BINS = (5, 10, 20, 30, 50), (5,), 15
GAMMA_MAX, SMOKE_GAMMA_MAX, MAIN_GAMMA_MAX = (50.0, "unbounded"), (50.0,), 20.0
#: "Unbounded" gamma_max: a bound the update never reaches (the engine stops a run whose
#: |gamma| exceeds 1e6 as diverged); the chapter reports the largest gamma reached.
UNBOUNDED = 1e6
#: How each AdaFocal rule is named in claims and ablation rows.
RULE_NAMES = {"adafocal_paper": "AdaFocal Eq. 4", "adafocal_code": "AdaFocal code rule"}
ERROR_BAR_SEEDS = {"smoke": (1,), "cpu": (1, 2, 3), "gpu": (1, 2, 3, 4, 5), "paper": (1, 2, 3, 4, 5)}


def default_methods(profile: str) -> tuple[str, ...]:
    """The methods trained at ``profile``: :data:`SMOKE_METHODS` at ``smoke``, else all."""
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def _bins(bins, smoke: bool) -> tuple[int, ...]:
    bins = (SMOKE_BINS if smoke else BINS) if bins is None else bins
    try:
        bins = tuple(bins)
    except TypeError:
        bins = (bins,)
    if any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 1000 or b == MAIN_BINS for b in bins) \
            or len(set(bins)) != len(bins):
        raise ValueError(f"bins must be distinct integers in 1..1000 other than {MAIN_BINS} (the main run) or "
                         f"None; got {bins!r}")
    return tuple(sorted(bins))


def _gamma_max(values, smoke: bool) -> tuple[float, ...]:
    values = (SMOKE_GAMMA_MAX if smoke else GAMMA_MAX) if values is None else values
    values = (values,) if isinstance(values, (str, int, float)) else tuple(values)
    out = []
    for v in values:
        if v == "unbounded":
            v = UNBOUNDED
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 1 <= v <= UNBOUNDED or v == MAIN_GAMMA_MAX:
            raise ValueError(f"gamma_max must be numbers in [1, 1e6] other than {MAIN_GAMMA_MAX:g} (the main run), "
                             f"'unbounded' or None; got {values!r}")
        out.append(float(v))
    if len(set(out)) != len(out):
        raise ValueError(f"gamma_max must not repeat a value; got {values!r}")
    return tuple(sorted(out))


def bins_key(rule: str, n: int) -> str:
    return rule if n == MAIN_BINS else f"{rule}_bins{n}"


def gamma_max_key(rule: str, g: float) -> str:
    return rule if g == MAIN_GAMMA_MAX else f"{rule}_gmax{'inf' if g >= UNBOUNDED else f'{g:g}'}"


def gamma_max_label(g: float) -> str:
    return "unbounded" if g >= UNBOUNDED else f"{g:g}"


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=(1,),
         error_bar_seeds=None, methods=None, ablation_rule: str = "adafocal_paper", bins=None, gamma_max=None,
         text_dataset: str | None = "20newsgroups", device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    ``error_bar_seeds`` None: :data:`ERROR_BAR_SEEDS` of the profile; ``methods`` None:
    :func:`default_methods`; ``bins`` / ``gamma_max`` None: the paper's ablation values
    (one each at ``smoke``); ``ablation_rule`` is the AdaFocal rule of both ablations;
    ``text_dataset`` None skips the text row. Each bad parameter raises a ValueError naming
    it and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile

    prof = get_profile(profile)
    smoke = prof.name == "smoke"
    seeds = cmp.check_seeds(seeds)
    err_seeds = cmp.check_seeds(ERROR_BAR_SEEDS[prof.name] if error_bar_seeds is None else error_bar_seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    if ablation_rule not in ADAFOCAL_KEYS:
        raise ValueError(f"ablation_rule must be one of {', '.join(ADAFOCAL_KEYS)}; got {ablation_rule!r}")
    n_bins, g_max = _bins(bins, smoke), _gamma_max(gamma_max, smoke)
    dev = str(training.select_device(device))
    cmp.check_datasets(dataset, text_dataset)
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=HISTORY_METHODS)
    cmp.add_referenced(p, "image", chosen, image, PAPER)
    seed_methods = [m for m in chosen if m.key in SEED_METHODS]
    if seed_methods:
        p.add("seeds", seed_methods, cmp.configs(seed_methods, dataset, model, prof.name, err_seeds,
                                                 history_methods=SEED_METHODS))
    rule, name = cmp.METHODS[ablation_rule], RULE_NAMES[ablation_rule]
    ablations = {
        "bins": [rule.variant(bins_key(ablation_rule, n), f"{name}, {n} bins", num_bins=n) if n != MAIN_BINS
                 else rule for n in sorted((*n_bins, MAIN_BINS))],
        "gamma_max": [rule.variant(gamma_max_key(ablation_rule, g), f"{name}, γmax {gamma_max_label(g)}",
                                   gamma_max=g) if g != MAIN_GAMMA_MAX else rule
                      for g in sorted((*g_max, MAIN_GAMMA_MAX))]}
    for group, variants in ablations.items():
        p.add(group, variants, cmp.configs(variants, dataset, model, prof.name, seeds,
                                           history_methods=[v.key for v in variants]))
    if text_dataset is not None:
        text_methods = [m for m in chosen if m.key in TEXT_KEYS]
        if text_methods:
            text = cmp.configs(text_methods, text_dataset, None, prof.name, seeds)
            cmp.add_referenced(p, "text", text_methods, text, PAPER)
    return p


def setting_of(group: str, key: str) -> str:
    """The paper-table setting ("bins=5", "gamma_max=50") of an ablation run's method key."""
    if group == "bins":
        return f"bins={MAIN_BINS if key in ADAFOCAL_KEYS else int(key.rsplit('bins', 1)[1])}"
    if group == "gamma_max":
        if key in ADAFOCAL_KEYS:
            return f"gamma_max={MAIN_GAMMA_MAX:g}"
        v = key.rsplit("gmax", 1)[1]
        return "gamma_max=unbounded" if v == "inf" else f"gamma_max={v}"
    raise ValueError(f"group must be 'bins' or 'gamma_max'; got {group!r}")


def history_run(runs: dict, key: str, seed: int):
    """The run of method ``key`` at ``seed`` that has per-epoch records (``image`` or
    ``seeds`` group), or None."""
    for group in ("image", "seeds"):
        run = runs.get(group, {}).get((key, seed))
        if run is not None and run.resolved["train"]["eval_every_epoch"]:
            return run
    return None


def run_costs(p: cmp.Plan, runs: dict):
    """One row per distinct run of ``runs``: its groups, method, seed, key, training time in
    seconds when it was trained, and whether the Mukhoti chapter's default plan at the same
    profile and seeds has the same run (trained once, reused here)."""
    import pandas as pd

    from ..focal_loss import plan as mukhoti

    image = next(iter(p.image.values()))
    shared = set(mukhoti.plan(p.profile, image.dataset, image.model, p.seeds, device="cpu").configs())
    rows = {}
    for g, group in runs.items():
        for (key, seed), run in group.items():
            r = rows.setdefault(run.key, {"groups": [], "method": key, "seed": seed, "key": run.key,
                                          "data": run.resolved["dataset"], "seconds": round(run.wall_time, 1),
                                          "also in exp_focal_loss": run.key in shared})
            r["groups"].append(g)
    frame = pd.DataFrame(rows.values())
    if len(frame):
        frame["groups"] = frame["groups"].map(", ".join)
    return frame


def rule_difference(paper_run, code_run) -> dict:
    """How far the two AdaFocal rules' runs (same data, network and seed) are apart: the
    smallest ``|gamma|`` the code rule reached over training (the rules differ only once a
    gamma falls below the switch, 0.2), how many of its per-bin gammas were ever negative
    (inverse focal loss), and the largest absolute difference of the two test logits."""
    import numpy as np

    g = np.array([row["loss_state"]["gamma"] for row in code_run.history], dtype=float)
    za, zb = paper_run.logits("test")[0], code_run.logits("test")[0]
    return {"min_abs_gamma": float(np.abs(g).min()), "negative_gammas": int((g < 0).sum()),
            "max_logit_difference": float(np.abs(za - zb).max())}
