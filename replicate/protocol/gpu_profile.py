"""How the ``gpu`` profile was chosen (issue #20): the committed cross-entropy pilot, read
against the papers' regime the profile aims at (the protocol chapter's section "How the
gpu profile was chosen")."""
from __future__ import annotations


def gpu_pilot():
    """The committed cross-entropy pilot of the ``gpu`` profile (issue #20): every finished
    ``gpu`` run of cross-entropy on CIFAR-10 at seed 1 in ``results/`` that names its
    network and its length in its configuration (``model`` and the option ``epochs``: the
    pilot's candidates; the chapters' runs take the profile's, and are not the pilot), one
    row per (network, epochs), with test error, ECE (15 bins) before and after temperature
    scaling, T, training seconds, the device, and whether it is the profile's own setting.
    These runs chose the profile's network and length (:mod:`replicate.profiles`)."""
    import pandas as pd

    from .. import runs
    from ..profiles import get_profile

    gpu = get_profile("gpu")
    frame = runs.list_runs("results")
    pick = frame[(frame.profile == "gpu") & (frame.loss == "cross_entropy") & (frame.dataset == "cifar10")
                 & (frame.seed == 1)]
    rows = []
    for key in pick.key:
        run = runs.load(key, store="results")
        if run.config.model is None or "epochs" not in (run.config.options or {}):
            continue                                    # a chapter's run at the profile's setting
        r, m = run.resolved, run.metrics["test"]
        rows.append({"network": r["model"], "epochs": r["train"]["epochs"], "test error": m["error"],
                     "ECE": m["ece"], "ECE after TS": run.metrics["test_ts"]["ece"], "T": run.temperature,
                     "train s": run.record.get("train_seconds"), "device": run.provenance.get("device", ""),
                     "profile's setting": r["model"] == gpu.model and r["train"]["epochs"] == gpu.epochs,
                     "key": key})
    columns = ["network", "epochs", "test error", "ECE", "ECE after TS", "T", "train s", "device",
               "profile's setting", "key"]
    return pd.DataFrame(rows, columns=columns).sort_values(["network", "epochs"], ignore_index=True)


#: The papers' regime the ``gpu`` profile aims its cross-entropy model at: test error at
#: most ``max_error`` and ECE (15 bins) before temperature scaling at least ``min_ece``.
#: Mukhoti et al. (2020) print 4.95 % error (Table 3) and 4.35 % ECE (Table 1) for their
#: CIFAR-10 ResNet-50; the bounds leave room for a shorter schedule.
GPU_REGIME = {"max_error": 0.08, "min_ece": 0.02}


def gpu_regime(pilot=None) -> dict:
    """The pilot (:func:`gpu_pilot`) read against :data:`GPU_REGIME` and the paper.

    Returns the profile's setting (``network``, ``epochs``, ``error``, ``ece``), whether it
    meets each bound (``error_ok``, ``ece_ok``), the paper's CIFAR-10 ResNet-50
    cross-entropy error and ECE as printed (Mukhoti et al. 2020, Tables 3 and 1:
    ``paper_error``, ``paper_ece``, in %), the ratio of the two errors, and the candidate
    with the lowest error (``best``: network, epochs, error, whether it meets the error
    bound, and the training seconds it took)."""
    from .. import paper_tables

    pilot = gpu_pilot() if pilot is None else pilot
    own = pilot[pilot["profile's setting"]]
    if len(own) != 1:
        raise ValueError(f"the pilot has {len(own)} runs of the gpu profile's own setting; expected 1")
    own = own.iloc[0]

    def paper(table: str, metric: str) -> float:
        return float(paper_tables.cell("mukhoti2020", table, "cifar10", "resnet50", "cross_entropy", metric).value)

    best = pilot.loc[pilot["test error"].idxmin()]
    paper_error = paper("table3", "error")
    return {"network": own.network, "epochs": int(own.epochs), "error": float(own["test error"]),
            "ece": float(own.ECE), "error_ok": bool(own["test error"] <= GPU_REGIME["max_error"]),
            "ece_ok": bool(own.ECE >= GPU_REGIME["min_ece"]), "paper_error": paper_error,
            "paper_ece": paper("table1", "ece"), "error_ratio": float(100 * own["test error"] / paper_error),
            "best": {"network": best.network, "epochs": int(best.epochs), "error": float(best["test error"]),
                     "error_ok": bool(best["test error"] <= GPU_REGIME["max_error"]),
                     "train_s": float(best["train s"])}}


def gpu_regime_text(regime: dict) -> str:
    """One sentence saying which bound of :data:`GPU_REGIME` the profile's setting meets,
    from :func:`gpu_regime`'s dict, and, when it misses the error bound, how close the
    pilot's best candidate came."""
    err, ece = f"{100 * GPU_REGIME['max_error']:g} %", f"{100 * GPU_REGIME['min_ece']:g} %"
    ok, miss = [], []
    (ok if regime["ece_ok"] else miss).append(f"the ECE bound (at least {ece})")
    (ok if regime["error_ok"] else miss).append(f"the error bound (at most {err})")
    if not miss:
        return f"It meets both bounds we aimed for: {ok[1]} and {ok[0]}."
    head = (f"It meets {ok[0]} but not {miss[0]}" if ok
            else f"It meets neither {miss[0]} nor {miss[1]}")
    if regime["error_ok"]:
        return head + "."
    b = regime["best"]
    same = (b["network"], b["epochs"]) == (regime["network"], regime["epochs"])
    if same:
        return head + ": no candidate of the pilot came closer."
    return (head + f": the pilot's most accurate candidate, {b['network']} for {b['epochs']} epochs "
            f"({b['train_s'] / 60:.1f} min of training), reached {100 * b['error']:.1f} %"
            + ("." if b["error_ok"] else ", still above it."))


def pilot_cost_text(pilot, big: str = "resnet50", small: str = "resnet18") -> str:
    """What the pilot (:func:`gpu_pilot`) says of ``big`` against ``small``, in one clause
    read from its rows: the ratio of their training seconds per epoch at the lengths both
    ran (their median seconds per epoch when they share none) and, at the longest shared
    length, each one's test error, with "so it learns more slowly per second" only when
    ``big`` costs more per epoch and is no more accurate there. Empty when the pilot lacks
    either network."""
    per_epoch = pilot.assign(s_per_epoch=pilot["train s"] / pilot["epochs"])
    a, b = (per_epoch[per_epoch.network == n].set_index("epochs") for n in (big, small))
    if a.empty or b.empty:
        return ""
    shared = sorted(set(a.index) & set(b.index))
    if shared:
        ratio = float((a.loc[shared, "s_per_epoch"] / b.loc[shared, "s_per_epoch"]).median())
        e = shared[-1]
        return (f"an epoch of {big} costs {ratio:.1f} times one of {small} (at "
                f"{', '.join(map(str, shared))} epochs, the length{'s' if len(shared) > 1 else ''} both ran), "
                f"and after {e} epochs {big} reached {100 * a.loc[e, 'test error']:.1f} % test error, "
                f"{small} {100 * b.loc[e, 'test error']:.1f} %"
                + (f", so {big} learns more slowly per second"
                   if ratio > 1 and a.loc[e, "test error"] >= b.loc[e, "test error"] else ""))
    ratio = float(a.s_per_epoch.median() / b.s_per_epoch.median())
    return f"an epoch of {big} costs {ratio:.1f} times one of {small} (median seconds per epoch over the pilot)"


def pilot_trend_text(pilot) -> str:
    """What the pilot's rows say of the short schedule, in one sentence: that it costs
    accuracy when the test error falls at every longer schedule of every network, else
    where it does not fall."""
    rises = []
    for net, rows in pilot.sort_values("epochs").groupby("network", sort=True):
        err = rows["test error"].to_numpy()
        ep = rows["epochs"].to_numpy()
        rises += [f"{net} from {ep[i]} to {ep[i + 1]} epochs" for i in range(len(err) - 1) if err[i + 1] >= err[i]]
    if not rises:
        return ("The pilot shows that the short schedule costs accuracy: the test error falls at every longer "
                "schedule of every network.")
    return ("The pilot does not show that a longer schedule always helps: the test error does not fall for "
            + "; ".join(rises) + ".")


def pilot_confidence_text(pilot) -> str:
    """Whether the profile's own setting in the pilot (:func:`gpu_pilot`) is over- or
    under-confident before temperature scaling, read from the temperature the validation
    set chose (above 1: over-confident, as the papers' cross-entropy models; below 1:
    under-confident; 1: neither)."""
    own = pilot[pilot["profile's setting"]]
    if len(own) != 1:
        raise ValueError(f"the pilot has {len(own)} runs of the gpu profile's own setting; expected 1")
    t = float(own["T"].iloc[0])
    if t > 1:
        return f"The profile's model is over-confident like the papers' models (temperature {t:g})"
    if t < 1:
        return f"The profile's model is under-confident, unlike the papers' models (temperature {t:g})"
    return "The profile's model needs no temperature (T = 1), unlike the papers' over-confident models"


def _shared(values: list, what: str, fmt) -> str:
    """``fmt`` of the one value every profile shares, else ``what`` (when the sentence does
    not name it already) and each profile's."""
    first = values[0][1]
    if all(v == first for _, v in values):
        return fmt(first)
    each = "by profile (" + ", ".join(f"{n}: {fmt(v)}" for n, v in values) + ")"
    return f"{what} {each}" if what else each


def protocol_text(kind: str = "image") -> str:
    """The training settings every profile of :data:`replicate.profiles.PROFILES` shares for
    ``kind`` (``"image"``: the profiles' own settings; ``"text"``: their ``text`` settings),
    in words, read from the profiles; a setting the profiles do not share is named with each
    profile's value. The milestones are written as fractions of the papers' 350 epochs."""
    from ..profiles import PROFILES

    def setting(key):
        return [(n, (vars(p) if kind == "image" else p.text)[key]) for n, p in PROFILES.items()]

    def milestones(ms):
        return " and ".join(f"{round(350 * m)}/350" for m in ms)

    opt = _shared(setting("optimizer"), "the optimiser", lambda v: {"sgd": "SGD", "adam": "Adam"}.get(v, v))
    lr = _shared(setting("lr"), "the learning rate", lambda v: f"{v:g}")
    select = _shared(setting("select"), "the model kept", lambda v: {
        "last": "the model of the last epoch", "best_val_accuracy": "the epoch with the best validation accuracy"
    }.get(v, v))
    if kind == "text":
        return f"{opt}, learning rate {lr}, {select}"
    return (f"{opt} with momentum {_shared(setting('momentum'), '', lambda v: f'{v:g}')} (no Nesterov), "
            f"weight decay {_shared(setting('weight_decay'), '', lambda v: f'{v:g}')}, batch size "
            f"{_shared(setting('batch_size'), '', str)}, learning rate {lr} divided by "
            f"{_shared(setting('lr_decay'), '', lambda v: f'{1 / v:g}')} at "
            f"{_shared(setting('milestones'), '', milestones)} of the epochs, the gradient norm clipped at "
            f"{_shared(setting('clip_grad_norm'), '', lambda v: f'{v:g}')}, and {select}")
