"""What the Mukhoti chapter (``exp_focal_loss``) shows, built from its plan and runs so that
its cells stay short: the numbers glued into its prose, the runs behind its figures with
their caption, and its 20 Newsgroups tables. Nothing here trains or decides a claim (the
claims and their tests are in :mod:`.claims`, computed once in :mod:`.report`); every
function reads finished runs, a report or summary frames.
"""
from __future__ import annotations

import pandas as pd

from ... import comparison as cmp
from ...plots import caption
from .figures import FIG4_EPOCHS, scaled_epochs

#: What the prose says where the text experiment was not run (``text_dataset = None``).
TEXT_SKIPPED = "not available (text experiment skipped)"
#: Glue-name stem -> method key, for the numbers quoted from the ECE table.
QUOTED = {"ce": "cross_entropy", "flsd": "flsd53"}


def overview(p: cmp.Plan) -> str:
    """One line on what the plan will load or train."""
    return (f"profile {p.profile_text()} | device {p.device} | seeds {p.seeds} | "
            f"{len(p.configs())} runs to load or train")


def training_numbers(runs: dict) -> dict:
    """``n_runs`` and ``train_minutes`` (their recorded training time, summed) of all groups
    of ``{group: {(key, seed): Run}}``, as text for glue."""
    every = [r for group in runs.values() for r in group.values()]
    return {"n_runs": str(len(every)), "train_minutes": f"{sum(r.wall_time for r in every) / 60:.1f}"}


def ece_quotes(summary, paper) -> dict:
    """Pre-T ECE and the optimal T (by validation ECE) of cross-entropy and FLSD-53, ours
    (``summary``, :func:`replicate.comparison.summarise`) and the paper's (``paper``,
    :func:`replicate.comparison.paper_values`): glue names ``{ours|paper}_{ce|flsd}_{ece|T}``."""
    out = {}
    for name, key in QUOTED.items():
        for who, frame in (("ours", summary), ("paper", paper)):
            out[f"{who}_{name}_ece"] = cmp.quote(frame, key, "ece")
            out[f"{who}_{name}_T"] = cmp.quote(frame, key, "ece", True, "T", digits=1)
    return out


def by_label(runs: dict, keys, seed: int) -> dict:
    """``{short label: Run}`` of the methods ``keys`` (in that order) at ``seed`` that are in
    ``runs`` (``{(key, seed): Run}``); labels are the catalogue's (e.g. "Cross Entropy")."""
    return {cmp.METHODS[k].short: runs[(k, seed)] for k in keys if (k, seed) in runs}


def figure_caption(p: cmp.Plan, run, seed: int) -> str:
    """The figures' caption: the plan's profile, the run's data and network, the seed."""
    return caption(profile=p.profile, dataset=cmp.data_name(run), seed=seed, model=run.resolved["model"])


def figure4_epochs(run) -> tuple[int, ...]:
    """The paper's Figure 4 epochs (10, 100, 200 of 350) at the same fractions of ``run``'s schedule."""
    return scaled_epochs(run.resolved["train"]["epochs"], FIG4_EPOCHS)


def text_view(p: cmp.Plan, text_runs: dict, ours=None) -> dict | None:
    """The text group's tables in the making: ``{"ours", "paper", "ref", "source"}`` (our
    evaluated runs - ``ours``, the report's evaluation of the text group, or evaluated here -
    the paper's row, its reference and our caption), or None when the plan has no text runs."""
    if not text_runs:
        return None
    first = next(iter(text_runs.values()))
    ref = p.references[first.resolved["dataset"]]
    return {"ours": cmp.evaluate_runs(text_runs) if ours is None else ours, "paper": cmp.paper_values(ref),
            "ref": ref, "source": cmp.describe_runs(text_runs, cmp.data_name(first))}


def text_tables(view: dict | None, methods, metrics=("ece",)) -> list:
    """Styled side-by-side tables of ``metrics`` for the text group (empty without a view)."""
    if view is None:
        return []
    return [cmp.styled_table(view["ours"], view["paper"], m, methods, view["ref"], view["source"])
            for m in metrics]


def text_numbers(view: dict | None, text_runs: dict) -> dict:
    """Glue values of the text section: cross-entropy's test error (ours, paper's), the word
    vectors the runs used, their number (``text_n_runs``) and their mean training time in
    seconds; :data:`TEXT_SKIPPED` for each when the text experiment was not run."""
    if view is None or not text_runs:
        return dict.fromkeys(("text_ce_err", "text_ce_err_paper", "text_embeddings", "text_n_runs",
                              "text_seconds"), TEXT_SKIPPED)
    from ...data import embeddings

    first = next(iter(text_runs.values()))
    return {"text_ce_err": cmp.quote(cmp.summarise(view["ours"]), "cross_entropy", "error"),
            "text_ce_err_paper": cmp.quote(view["paper"], "cross_entropy", "error"),
            "text_embeddings": embeddings.describe(first.resolved["data"]),
            "text_n_runs": str(len(text_runs)),
            "text_seconds": f"{sum(r.wall_time for r in text_runs.values()) / len(text_runs):.0f}"}


def rule_texts() -> dict:
    """The thresholds of the chapter's rules, for its verdict prose: ``t_rule`` (the book's
    "close to 1"), ``min_s99`` (when the |S99| claim is tested) and ``paper_ce_s99`` (the
    share of the test set the paper's CIFAR-10 ResNet-50 cross-entropy model predicts with
    confidence above 0.99 before temperature scaling, Table 6 as printed)."""
    from ... import paper_tables
    from ...claims import wording
    from .claims import MIN_S99

    s99 = paper_tables.cell("mukhoti2020", "table6", "cifar10", "resnet50", "cross_entropy", "s99_fraction")
    return {"t_rule": wording.near_one_text(), "min_s99": f"{MIN_S99:g} %", "paper_ce_s99": f"{s99.printed} %"}


# ----------------------------------------------------------------------------- page notes (issue #24)
# Sentences the page glues where our runs differ from the paper's picture: never typed by
# hand, so a rebuild at another profile cannot make them false.
def training_confidence(run) -> dict:
    """The last recorded epoch of ``run`` (recorded with ``eval_every_epoch``) on its training
    set: ``epoch``, ``n_train``, ``accuracy``, ``confidence`` and ``ece`` (percent; eval mode,
    no augmentation), ``top_bin`` (percent of training images in the highest of the recorded
    training-reliability bins, with ``top_bin_from``, its lower edge) and ``direction``
    ("under-confident" when the mean confidence is below the accuracy, else "over-confident")."""
    rows = [r for r in run.history if isinstance(r.get("train"), dict) and "confidence" in r["train"]]
    if not rows:
        raise ValueError(f"run {run.key} has no per-epoch training-set metrics (trained without eval_every_epoch)")
    last = rows[-1]
    t = last["train"]
    acc, conf = 100 * (1 - float(t["error"])), 100 * float(t["confidence"])
    out = {"epoch": int(last["epoch"]), "n_train": run.resolved.get("n_train"), "accuracy": acc,
           "confidence": conf, "ece": 100 * float(t["ece"]),
           "direction": "under-confident" if conf < acc else "over-confident"}
    bins = last.get("train_reliability")
    if bins:
        count = [float(c) for c in bins["count"]]
        out["top_bin"] = 100 * count[-1] / sum(count)
        out["top_bin_from"] = float(bins["edges"][-2])
    return out


def grid_difference(ours: pd.DataFrame, other: pd.DataFrame, labels: dict | None = None) -> dict:
    """Post-TS ECE of the same models in two evaluations that chose T on different grids.

    ``ours``: a :func:`replicate.comparison.evaluate_runs` frame (rows ``metric == "ece"``,
    ``temperature_scaled``); ``other``: a :func:`replicate.comparison.evaluate_posthoc` frame
    with ``posthoc == "ts"``, ``select == "ece"``, ``metric == "ece"``. Returns
    ``n_models``, ``n_other_T`` (models whose chosen T differs) and, for the model whose ECE
    moves most, ``method`` (its label from ``labels``), ``seed``, ``ece``/``T`` in ``ours``,
    ``ece_other``/``T_other`` and ``difference`` (points of ECE)."""
    a = ours[(ours["metric"] == "ece") & ours["temperature_scaled"].astype(bool)][["method", "seed", "value", "T"]]
    b = other[(other["posthoc"] == "ts") & (other["select"] == "ece") & (other["metric"] == "ece")]
    b = b[["method", "seed", "value", "T"]].rename(columns={"value": "value_other", "T": "T_other"})
    m = a.merge(b, on=["method", "seed"])
    if m.empty:
        raise ValueError("the two frames share no (method, seed) with a post-TS ECE")
    m["difference"] = m["value_other"] - m["value"]
    worst = m.loc[m["difference"].abs().idxmax()]
    return {"n_models": len(m), "n_other_T": int((~m["T"].sub(m["T_other"]).abs().lt(1e-9)).sum()),
            "method": (labels or {}).get(worst["method"], worst["method"]), "seed": int(worst["seed"]),
            "ece": float(worst["value"]), "T": float(worst["T"]), "ece_other": float(worst["value_other"]),
            "T_other": float(worst["T_other"]), "difference": float(worst["difference"])}


def noise_example(profile: str):
    """The book's worked example of the noise model (the claims ledger quotes it): the claim
    "FLSD-53 has a lower test ECE than cross-entropy" on this chapter's CIFAR-10 runs of
    ``profile``, every stored seed, step by step (:func:`replicate.comparison.noise.example.walkthrough`),
    with ``row`` (the row's name); None when the runs are not in the store."""
    from ...claims.evidence import Cell
    from ...comparison import report as rpt
    from ...comparison.noise.example import walkthrough
    from .plan import plan

    p = plan(profile, device="cpu")
    runs = cmp.load(p, "image")
    if runs is None:
        return None
    ev = rpt.runs_evidence(p, runs, ("image",))
    row = ev.rows()[0].name
    return {**walkthrough(ev, row, Cell("flsd53"), Cell("cross_entropy")), "row": row}


def noise_example_texts(example: dict | None) -> dict:
    """The glue texts of :func:`noise_example` (``ex_point``, ``ex_low``, ``ex_high``,
    ``ex_n_boot``, ``ex_n_test``, ``ex_verdict``, ``ex_row``, and ``ex_n_shown``: how many
    resamples its table shows, in words); each says it is not available when the runs are
    not in the store."""
    keys = ("point", "low", "high", "n_boot", "n_test", "verdict", "row", "n_shown")
    if example is None:
        return {f"ex_{k}": "not available (the chapter's runs are not in the store)" for k in keys}
    out = {f"ex_{k}": f"{example[k]:.2f}" for k in ("point", "low", "high")}
    out.update({f"ex_{k}": f"{example[k]:,}" for k in ("n_boot", "n_test")})
    n = len(example["resamples"])
    shown = _WORDS[n] if n < len(_WORDS) else f"{n:,}"
    return {**out, "ex_verdict": example["verdict"], "ex_row": example["row"], "ex_n_shown": shown}


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
