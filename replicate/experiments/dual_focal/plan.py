"""The experiment chapter of Tao, Dong & Xu (2023), Dual Focal Loss, ``exp_dual_focal``: its
methods, settings and runs.

Runs (:func:`plan`), all through the run store, reused wherever another chapter trained the
same configuration (Mukhoti et al.'s cross-entropy, Brier, MMCE, LS-0.05 and FLSD-53):

``image``
    the seven methods of Tables 1-2 and 5-8 (weight decay = cross-entropy, Brier, MMCE,
    LS-0.05, inverse focal, FLSD-53, DFL with the paper's gamma per network) over
    ``seeds`` (Table 12: mean ± standard error);
``history``
    FLSD-53 and DFL recording test metrics after every epoch (Fig. 4a; cross-entropy's
    image runs record them already, as in the Mukhoti chapter), first seed;
``table3``
    AdaFocal (the Eq. 4 rule the DFL authors' code runs) and AdaDualFocal, first seed;
``dual_logit``
    Table 4: every row's dual term, read two ways where the paper's label and the authors'
    ablation code differ (:data:`DUAL_LOGIT_ROWS`), first seed;
``gamma``
    Table 13: DFL with gamma 2, 3, 4, 5, 10 (the network's own gamma dropped), first seed;
``text``
    20 Newsgroups (Table 1-2's last row), first seed.

The numbers the claims read are built in :mod:`.evidence` (the paper's Tables
1-13 in long form and ours in the same form); the claims, their rules and the claims table
are in :mod:`.claims`, which imports them all (this module imports none of them).
"""
from __future__ import annotations

import dataclasses

from ... import comparison as cmp
from ...comparison import chapter

PAPER = "tao2023"
CHAPTER = "exp_dual_focal"
#: The chapter's section that decides the claims (the claims ledger links to it).
SECTION = chapter.SECTION
#: Tables 1-2 and 5-8, in the paper's column order (weight decay = cross-entropy).
METHOD_KEYS = ("cross_entropy", "brier", "mmce", "ls005", "inverse_focal", "flsd53", "dual_focal")
SMOKE_METHODS = ("cross_entropy", "flsd53", "dual_focal")
SEEDS, SMOKE_SEEDS = (1, 2, 3), (1,)
#: Fig. 4a: test ECE over the epochs of cross-entropy, focal loss (FLSD-53) and DFL.
HISTORY_METHODS = ("cross_entropy", "flsd53", "dual_focal")
#: Fig. 2: reliability diagrams of cross-entropy, label smoothing, focal loss and DFL.
FIG2_METHODS = ("cross_entropy", "ls005", "flsd53", "dual_focal")
#: Table 3 (our AdaFocal rule -> the paper's key "adafocal").
TABLE3_KEYS = ("adafocal_paper", "adadual_focal")
TABLE3_RENAME = {"adafocal_paper": "adafocal"}
GAMMAS = (2.0, 3.0, 4.0, 5.0, 10.0)
SMOKE_GAMMAS = (5.0,)          # the DFL run itself: no extra run at smoke

FL_ROW, _FIX, OTHER = "Focal loss: +0.0", "Focal Loss with fixed dual logit: ", "Dual Focal Loss at other logits: "
DFL_ROW = "Dual Focal Loss (Ours): + largest lower than q_gt"
#: Table 4: (our key, setting as printed, reading, loss parameters). Reading "label": the
#: printed label taken literally; "code": what the authors' ablation classes compute
#: (``Losses/dual_focal_loss_ablation.py``: classes 1-2 add the 2nd (and 3rd) largest
#: probability below p_y to p_j; classes 5, 6, 4 add the BATCH mean of the sum of the top 2,
#: 3, 9). The "+0.0" row is printed with FLSD-53's numbers and is FLSD-53 here.
DUAL_LOGIT_ROWS = (
    ("dfl_fixed_0.1", _FIX + "+0.1", "label", {"variant": "fixed", "offset": 0.1}),
    ("dfl_fixed_0.2", _FIX + "+0.2", "label", {"variant": "fixed", "offset": 0.2}),
    ("dfl_2nd", OTHER + "+2nd largest logit ranked after q_gt", "label", {"variant": "kth", "k": 2}),
    ("dfl_3rd", OTHER + "+3rd largest logit ranked after q_gt", "label", {"variant": "kth", "k": 3}),
    ("dfl_mean2", OTHER + "+mean(1st + 2nd) largest logit ranked after q_gt", "label",
     {"variant": "mean_topk", "k": 2}),
    ("dfl_mean3", OTHER + "+mean(1st + 2nd + 3rd) largest logit ranked after q_gt", "label",
     {"variant": "mean_topk", "k": 3}),
    ("dfl_mean_all", OTHER + "+mean(all other logits lower than q_gt)", "label",
     {"variant": "mean_topk", "k": "all"}),
    ("dfl_code_sum2", OTHER + "+2nd largest logit ranked after q_gt", "code", {"variant": "sum_topk", "k": 2}),
    ("dfl_code_sum3", OTHER + "+3rd largest logit ranked after q_gt", "code", {"variant": "sum_topk", "k": 3}),
    ("dfl_code_bmean2", OTHER + "+mean(1st + 2nd) largest logit ranked after q_gt", "code",
     {"variant": "batch_mean_sum_topk", "k": 2}),
    ("dfl_code_bmean3", OTHER + "+mean(1st + 2nd + 3rd) largest logit ranked after q_gt", "code",
     {"variant": "batch_mean_sum_topk", "k": 3}),
    ("dfl_code_bmean9", OTHER + "+mean(all other logits lower than q_gt)", "code",
     {"variant": "batch_mean_sum_topk", "k": 9}),
)
SMOKE_DUAL_LOGIT = ("dfl_fixed_0.1",)
#: Table 4's settings in the paper's order (the shared first and last rows included).
TABLE4_SETTINGS = (FL_ROW, *dict.fromkeys(s for _, s, _, _ in DUAL_LOGIT_ROWS), DFL_ROW)
READINGS = {"label": "dual_focal", "code": "dual_focal_code"}   # reading -> method name in the long frames


def default_methods(profile: str) -> tuple[str, ...]:
    """:data:`SMOKE_METHODS` at ``smoke``, else all seven."""
    return chapter.at_profile(profile, SMOKE_METHODS, METHOD_KEYS)


def default_seeds(profile: str) -> tuple[int, ...]:
    """:data:`SMOKE_SEEDS` at ``smoke``, else :data:`SEEDS` (Table 12 needs several)."""
    return chapter.at_profile(profile, SMOKE_SEEDS, SEEDS)


def dual_logit_methods(smoke: bool = False) -> list[tuple[cmp.Method, str, str]]:
    """Table 4's rows as ``(Method, setting, reading)``: DFL with another dual term, at the
    network's DFL gamma (:data:`DUAL_LOGIT_ROWS`; only :data:`SMOKE_DUAL_LOGIT` at smoke)."""
    dfl = cmp.METHODS["dual_focal"]
    return [(dfl.variant(key, f"DFL, {setting.split(': ', 1)[1]} ({reading})", **params), setting, reading)
            for key, setting, reading, params in DUAL_LOGIT_ROWS if not smoke or key in SMOKE_DUAL_LOGIT]


def gamma_methods(gammas=GAMMAS) -> list[cmp.Method]:
    """Table 13's rows: DFL at a fixed gamma on every network (its per-network gamma dropped)."""
    dfl = cmp.METHODS["dual_focal"]
    return [dataclasses.replace(dfl.variant(f"dfl_gamma{g:g}", f"DFL, gamma {g:g}", gamma=float(g)),
                                per_model={}, default_note="") for g in gammas]


def plan(profile: str = "cpu", dataset: str = "cifar10", model: str | None = None, seeds=None, methods=None,
         ablations: bool = True, text_dataset: str | None = "20newsgroups", device: str | None = "auto") -> cmp.Plan:
    """Validate the chapter's parameters and build its run configurations; nothing trains.

    Groups as in the module docstring; ``seeds`` None takes :func:`default_seeds`, ``methods``
    None :func:`default_methods`; ``ablations`` False leaves out Tables 3, 4 and 13. The
    single-seed groups use the first seed. Each bad parameter raises a ValueError naming it
    and the allowed values.
    """
    from ... import training
    from ...profiles import get_profile

    prof = get_profile(profile)
    seeds = cmp.check_seeds(default_seeds(prof.name) if seeds is None else seeds)
    chosen = cmp.resolve_methods(default_methods(prof.name) if methods is None else methods, METHOD_KEYS)
    if not isinstance(ablations, bool):
        raise ValueError(f"ablations must be True or False; got {ablations!r}")
    cmp.check_datasets(dataset, text_dataset)
    dev = str(training.select_device(device))
    smoke, first = prof.name == "smoke", seeds[:1]
    p = cmp.Plan(CHAPTER, prof.name, seeds, dev)
    # cross-entropy records per-epoch metrics as in the Mukhoti chapter, so its runs are shared
    image = cmp.configs(chosen, dataset, model, prof.name, seeds, history_methods=("cross_entropy",))
    cmp.add_referenced(p, "image", chosen, image, PAPER)
    hist = [cmp.METHODS[k] for k in HISTORY_METHODS if k != "cross_entropy"]
    p.add("history", hist, cmp.configs(hist, dataset, model, prof.name, first, history_methods=HISTORY_METHODS))
    if ablations:
        base = [cmp.METHODS[k] for k in ("flsd53", "dual_focal")]
        t3 = [cmp.METHODS[k] for k in TABLE3_KEYS if not smoke or k == "adadual_focal"]
        p.add("table3", base + t3, cmp.configs(base + t3, dataset, model, prof.name, first))
        rows = [m for m, _, _ in dual_logit_methods(smoke)]
        p.add("dual_logit", base + rows, cmp.configs(base + rows, dataset, model, prof.name, first))
        gam = gamma_methods(SMOKE_GAMMAS if smoke else GAMMAS)
        p.add("gamma", gam, cmp.configs(gam, dataset, model, prof.name, first))
    if text_dataset is not None:
        text = cmp.configs(chosen, text_dataset, None, prof.name, first)
        cmp.add_referenced(p, "text", chosen, text, PAPER)
    return p
