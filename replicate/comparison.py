"""Comparing training methods the way the papers' tables do, with the paper's numbers beside ours.

A *method* is a named loss with its parameters (:class:`Method`); :data:`MUKHOTI_METHODS`
lists the eleven of Mukhoti et al. (2020), Sec. 5 and Appendix E, under the keys that
:mod:`replicate.paper_tables` uses. The workflow of an experiment chapter:

1. :func:`plan` validates the chapter's parameters (profile, data sets, network, seeds,
   methods, device) and builds every :class:`replicate.runs.RunConfig` *before* anything
   trains; :func:`train` trains or loads them through the run store;
2. :func:`evaluate_runs` recomputes every table metric from the stored validation and
   test logits, before and after temperature scaling, with ``T`` chosen on the validation
   set by the metric the paper uses (:data:`T_SELECTED_BY`: ECE for Tables 1/4/7 and for
   the NLL and MCE Tables 10-13, AdaECE for Tables 2/5/8);
3. :func:`paper_values` gathers the paper's numbers for the closest row
   (:func:`paper_reference`); :func:`side_by_side` and :func:`s99_side_by_side` lay ours
   beside them with the difference; :func:`verdicts` tests the paper's conclusions on
   any set of numbers, ours or the paper's own.

All metric values are percentages (as the papers print them); temperatures are not.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import metrics, posthoc


@dataclass(frozen=True)
class Method:
    """A training method: key (as in the paper tables), label, loss and its parameters.

    ``text_loss_params`` replaces ``loss_params`` on text data (MMCE uses lambda = 8 there,
    Mukhoti et al., Appendix D).
    """

    key: str
    label: str
    loss: str
    loss_params: dict = field(default_factory=dict)
    text_loss_params: dict | None = None

    def params(self, kind: str = "image") -> dict:
        if kind not in ("image", "text"):
            raise ValueError(f"kind must be 'image' or 'text'; got {kind!r}")
        chosen = self.text_loss_params if kind == "text" and self.text_loss_params is not None else self.loss_params
        return dict(chosen)


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
#: Methods whose runs record metrics after every epoch (Figures 1, 3 and 4 need them).
HISTORY_METHODS = ("cross_entropy", "fl1", "fl2", "fl3")
#: Methods of Appendix F (qualitative results).
QUALITATIVE_METHODS = ("cross_entropy", "brier", "mmce", "flsd53")
#: The methods trained at the ``smoke`` profile: enough for every verdict and figure to run.
SMOKE_METHODS = ("cross_entropy", "fl3", "flsd53")

#: metric -> the metric that selects T on the validation set (as in the paper's tables)
T_SELECTED_BY = {"ece": "ece", "adaece": "adaece", "classwise_ece": "ece", "mce": "ece", "nll": "ece",
                 "error": "ece", "s99_fraction": "ece", "s99_accuracy": "ece"}
TABLE_METRICS = tuple(T_SELECTED_BY)
#: metric -> the Mukhoti et al. tables that report it (none for classwise ECE)
PAPER_TABLES = {"ece": ("table1", "table4", "table7"), "adaece": ("table2", "table5", "table8"),
                "classwise_ece": (), "mce": ("table12", "table13"), "nll": ("table10", "table11"),
                "error": ("table3", "table9"), "s99_fraction": ("table6",), "s99_accuracy": ("table6",)}
#: Table 6 names its focal model only "Focal Loss"; Appendix F and Sec. 6 use FLSD-53.
PAPER_METHOD_ALIASES = {"focal": "flsd53"}

#: Our network names -> the paper's row labels; data set names -> the paper's.
PAPER_MODEL_LABELS = {"resnet50": "ResNet 50", "resnet110": "ResNet 110",
                      "wide_resnet26_10": "Wide ResNet 26-10", "densenet121": "DenseNet 121",
                      "text_cnn": "Global Pooling CNN"}
PAPER_DATASET_LABELS = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "20newsgroups": "20 Newsgroups"}
TEXT_DATASETS = ("20newsgroups",)


def default_methods(profile: str) -> tuple[str, ...]:
    """The methods a chapter trains at ``profile``: :data:`SMOKE_METHODS` at ``smoke``, else all."""
    from .profiles import get_profile

    return SMOKE_METHODS if get_profile(profile).name == "smoke" else tuple(MUKHOTI_METHODS)


def resolve_methods(keys, registry: dict[str, Method] = MUKHOTI_METHODS) -> list[Method]:
    """The methods named by ``keys`` (all of ``registry`` for None); unknown or repeated keys are refused."""
    if keys is None:
        return list(registry.values())
    if isinstance(keys, str):
        keys = [keys]
    keys = list(keys)
    if not keys:
        raise ValueError(f"methods must name at least one method; allowed methods: {', '.join(registry)}")
    unknown = [k for k in keys if k not in registry]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; allowed methods: {', '.join(registry)}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"methods must not repeat a method; got {keys}")
    return [registry[k] for k in keys]


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

    Image runs of ``history_methods`` also record per-epoch metrics (``eval_every_epoch``),
    which the training-dynamics figures read.
    """
    from .runs import RunConfig, dataset_kind

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


@dataclass(frozen=True)
class PaperReference:
    """The row of the paper's tables that our numbers are compared with."""

    dataset: str
    model: str
    exact: bool
    note: str


def paper_reference(dataset: str, model: str) -> PaperReference:
    """The paper's row for our ``dataset`` and network ``model``; the ResNet 50 row (image
    data) or the Global Pooling CNN row (text) when our network is not one of the paper's."""
    if dataset not in PAPER_DATASET_LABELS:
        raise ValueError(f"dataset {dataset!r} has no row in Mukhoti et al.'s tables; "
                         f"allowed datasets: {', '.join(PAPER_DATASET_LABELS)}")
    d = PAPER_DATASET_LABELS[dataset]
    if model in PAPER_MODEL_LABELS and (model == "text_cnn") == (dataset in TEXT_DATASETS):
        return PaperReference(d, PAPER_MODEL_LABELS[model], True, f"paper row: {d}, {PAPER_MODEL_LABELS[model]}")
    closest = "Global Pooling CNN" if dataset in TEXT_DATASETS else "ResNet 50"
    return PaperReference(d, closest, False, f"paper row: {d}, {closest} (closest row: the paper "
                                             f"did not train our network {model})")


@dataclass
class Plan:
    """Everything a chapter will train, validated: see :func:`plan`."""

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

    ``methods`` None takes :func:`default_methods` of the profile. ``text_dataset`` None
    skips the text experiment. Each bad parameter raises a ValueError naming it and the
    allowed values.
    """
    from . import training
    from .profiles import get_profile
    from .runs import dataset_kind

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


def train_configs(cfgs: dict, store: str = "results", device=None, progress: str = "log", log=print) -> dict:
    """Train or load every configuration of ``cfgs`` (``{(key, seed): RunConfig}``) through the
    run store; returns ``{(key, seed): Run}``."""
    from .runs import get_or_train

    runs = {}
    for i, ((key, seed), cfg) in enumerate(cfgs.items(), 1):
        run = get_or_train(cfg, store=store, progress=progress, device=device)
        if log:
            log(f"[{i}/{len(cfgs)}] {cfg.dataset} {key} seed {seed}: run {run.key} "
                f"({run.wall_time:.0f} s of training when it was trained)")
        runs[(key, seed)] = run
    return runs


def train(p: Plan, store: str = "results", progress: str = "log", log=print) -> tuple[dict, dict]:
    """Train or load everything a :class:`Plan` lists: ``(image runs, text runs)``."""
    image = train_configs(p.image, store, p.device, progress, log)
    text = train_configs(p.text, store, p.device, progress, log) if p.text else {}
    return image, text


def methods_frame(methods, kind: str = "image") -> pd.DataFrame:
    """The methods as a table: key, label, loss and its parameters on ``kind`` data."""
    return pd.DataFrame([{"key": m.key, "method": m.label, "loss": m.loss,
                          "parameters": ", ".join(f"{k}={v:g}" for k, v in m.params(kind).items()) or "–"}
                         for m in methods])


def describe_runs(runs: dict, data_name: str) -> str:
    """Where our numbers come from, for captions: profile, data (``data_name``, e.g. the
    loaded data set's display name), network, schedule and seeds of ``{(key, seed): Run}``."""
    if not runs:
        raise ValueError("runs must hold at least one run")
    run = next(iter(runs.values()))
    r = run.resolved
    params = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in r["model_params"].items())
    seeds = sorted({s for _, s in runs})
    n = f"{r['n_train']:,} training samples" if r["n_train"] else "all training samples"
    return (f"ours: profile {run.config.profile} | data: {data_name} | model: {r['model']}"
            f"{f' ({params})' if params else ''} | {r['train']['epochs']} epoch{'s' if r['train']['epochs'] != 1 else ''}, {n} | "
            f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}")


def data_name(run) -> str:
    """The display name of the data a run was trained on (e.g. "CIFAR-10 (JPEG q75)"), from
    the loaded data set, so that it says which copy was found."""
    from .runs.build import load_data

    return load_data(run.resolved).info.display_name


METRIC_NAMES = {"ece": "ECE (%, 15 equal-width bins)", "adaece": "AdaECE (%, 15 equal-mass bins)",
                "classwise_ece": "classwise ECE (%, 15 bins)", "mce": "MCE (%, 15 equal-width bins)",
                "nll": "NLL (x100)", "error": "test error (%)", "s99_fraction": "|S99| (%)",
                "s99_accuracy": "accuracy on S99 (%)"}


def table_caption(metric: str, ref: PaperReference, ours: str, paper: str = "mukhoti2020") -> str:
    """Caption of a side-by-side table: the metric, how T was chosen, and both sources."""
    if metric not in T_SELECTED_BY:
        raise ValueError(f"metric must be one of {', '.join(T_SELECTED_BY)}; got {metric!r}")
    tables = ", ".join(t.replace("table", "") for t in PAPER_TABLES[metric])
    where = (f"paper: Mukhoti et al. (2020) Table{'s' if len(PAPER_TABLES[metric]) > 1 else ''} {tables}, "
             f"{ref.note.removeprefix('paper row: ')}") if tables else "paper: not reported by Mukhoti et al. (2020)"
    sel = {"ece": "ECE", "adaece": "AdaECE"}[T_SELECTED_BY[metric]]
    ts = ("temperature scaling does not change the predicted class" if metric == "error" else
          f"Post T: T chosen on the validation set by {sel} over the grid 0.1..10.0, shown in brackets")
    return f"{METRIC_NAMES[metric]}; {ts}. {where}. {ours}."


def _scores(logits: np.ndarray, labels: np.ndarray, T: float = 1.0) -> dict:
    probs = metrics.probs_from_logits(logits, temperature=T)
    frac, acc = metrics.s99(probs, labels, validate=False)
    return {"ece": metrics.ece(probs, labels, validate=False),
            "adaece": metrics.adaptive_ece(probs, labels, validate=False),
            "classwise_ece": metrics.classwise_ece(probs, labels, validate=False),
            "mce": metrics.mce(probs, labels, validate=False),
            "nll": metrics.nll(np.asarray(logits, dtype=np.float64) / T, labels),
            "error": metrics.error_rate(probs, labels, validate=False),
            "s99_fraction": frac, "s99_accuracy": acc}


def evaluate_logits(val_logits, val_labels, test_logits, test_labels, n_bins: int = 15) -> pd.DataFrame:
    """Every table metric on the test set, pre and post temperature scaling (long form, percent).

    Columns ``metric, temperature_scaled, value, T, T_selected_by``; post-T rows use the
    grid temperature (0.1..10.0) minimising the validation value of ``T_SELECTED_BY[metric]``.
    """
    val_z, test_z = (np.asarray(z, dtype=np.float64) for z in (val_logits, test_logits))
    pre = _scores(test_z, test_labels)
    temps = {sel: posthoc.fit_temperature(val_z, val_labels, method="grid", metric=sel, n_bins=n_bins).params["T"]
             for sel in sorted(set(T_SELECTED_BY.values()))}
    post = {sel: _scores(test_z, test_labels, T) for sel, T in temps.items()}
    rows = []
    for metric, sel in T_SELECTED_BY.items():
        rows.append({"metric": metric, "temperature_scaled": False, "value": 100 * pre[metric], "T": math.nan,
                     "T_selected_by": ""})
        rows.append({"metric": metric, "temperature_scaled": True, "value": 100 * post[sel][metric],
                     "T": temps[sel], "T_selected_by": sel})
    return pd.DataFrame(rows)


def evaluate_runs(runs: dict, n_bins: int = 15) -> pd.DataFrame:
    """:func:`evaluate_logits` of every run of ``{(method, seed): Run}``, with columns ``method``
    and ``seed`` in front."""
    frames = []
    for (key, seed), run in runs.items():
        f = evaluate_logits(*run.logits("val"), *run.logits("test"), n_bins=n_bins)
        f.insert(0, "seed", seed)
        f.insert(0, "method", key)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def summarise(ours: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds (std NaN with one seed) per method, metric, TS."""
    g = ours.groupby(["method", "metric", "temperature_scaled"], sort=False)
    return g.agg(mean=("value", "mean"), std=("value", "std"), T=("T", "mean"), T_std=("T", "std"),
                 n_seeds=("seed", "nunique")).reset_index()


def paper_values(ref: PaperReference, metrics_=TABLE_METRICS, paper: str = "mukhoti2020") -> pd.DataFrame:
    """The paper's numbers for the row ``ref`` in :func:`summarise`'s layout (``mean``, ``T``),
    plus ``tables``: where each number is printed. A number printed in several tables
    (Tables 1, 4 and 7 repeat columns) appears once. Table 6's "Focal Loss" is keyed
    ``flsd53`` (:data:`PAPER_METHOD_ALIASES`)."""
    from . import paper_tables

    frames = []
    for table in dict.fromkeys(t for m in metrics_ for t in PAPER_TABLES[m]):
        df = paper_tables.get(paper, table)
        frames.append(df[(df.dataset == ref.dataset) & (df.model == ref.model) & df.metric.isin(metrics_)])
    cols = ["method", "metric", "temperature_scaled", "mean", "std", "T", "T_std", "n_seeds", "tables"]
    if not frames or not sum(len(f) for f in frames):
        return pd.DataFrame(columns=cols)
    df = pd.concat(frames, ignore_index=True)
    df["method"] = df["method"].replace(PAPER_METHOD_ALIASES)
    df["tables"] = df["table"].str.replace("table", "", regex=False)
    keys = ["method", "metric", "temperature_scaled"]
    tables = df.groupby(keys, sort=False)["tables"].agg(lambda s: ", ".join(dict.fromkeys(s)))
    df = df.drop_duplicates(keys).drop(columns="tables").merge(tables.reset_index(), on=keys)
    df = df.rename(columns={"value": "mean", "optimal_T": "T"})
    df["std"], df["T_std"], df["n_seeds"] = math.nan, math.nan, 0
    return df[cols].reset_index(drop=True)


def _fmt(mean: float, std: float = math.nan, T: float = math.nan, T_std: float = math.nan, digits: int = 2) -> str:
    if mean is None or math.isnan(mean):
        return "–"
    s = f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if not math.isnan(std) else "")
    if not math.isnan(T):
        s += f" ({T:.2f}" + (f" ± {T_std:.2f}" if not math.isnan(T_std) and T_std > 0 else "") + ")"
    return s


def _cell(summ: pd.DataFrame, method: str, metric: str, scaled: bool) -> dict:
    r = summ[(summ.method == method) & (summ.metric == metric) & (summ.temperature_scaled == scaled)]
    if not len(r):
        return {"mean": math.nan, "std": math.nan, "T": math.nan, "T_std": math.nan}
    return {k: float(r[k].iloc[0]) for k in ("mean", "std", "T", "T_std")}


def _phase_cells(ours_s, paper_s, method, metric, scaled, show_T) -> dict:
    o, p = _cell(ours_s, method, metric, scaled), _cell(paper_s, method, metric, scaled)
    t = (lambda c: (c["T"], c["T_std"])) if show_T else (lambda c: (math.nan, math.nan))
    diff = o["mean"] - p["mean"]
    return {"paper": _fmt(p["mean"], math.nan, *t(p)), "ours": _fmt(o["mean"], o["std"], *t(o)),
            "ours − paper": _fmt(diff)}


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, metric: str, methods,
                 temperature: bool = True) -> pd.DataFrame:
    """One paper table beside ours: a row per method; for "Pre T" (and "Post T") the paper's
    value, ours (mean ± std over seeds) and ours minus the paper's; post-T cells carry the
    optimal T in brackets. ``ours`` is :func:`evaluate_runs` output, ``paper`` a
    :func:`paper_values` frame (None or empty: every paper cell "–")."""
    if metric not in T_SELECTED_BY:
        raise ValueError(f"metric must be one of {', '.join(T_SELECTED_BY)}; got {metric!r}")
    ours_s = summarise(ours[ours.metric == metric])
    paper_s = paper if paper is not None else pd.DataFrame(columns=["method", "metric", "temperature_scaled"])
    phases = [(False, "Pre T")] + ([(True, "Post T")] if temperature else [])
    table = {}
    for m in methods:
        table[m.label] = {(phase, k): v for scaled, phase in phases
                          for k, v in _phase_cells(ours_s, paper_s, m.key, metric, scaled, scaled).items()}
    frame = pd.DataFrame(table).T
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    frame.index.name = "method"
    return frame


def s99_side_by_side(ours: pd.DataFrame, paper: pd.DataFrame | None, methods) -> pd.DataFrame:
    """Table 6's layout: |S99| (% of the test set with confidence >= 0.99) and the accuracy
    on S99, pre and post temperature scaling (T chosen by validation ECE), paper beside ours."""
    parts = {}
    for scaled, phase in ((False, "Pre T"), (True, "Post T")):
        for metric, name in (("s99_fraction", "|S99| %"), ("s99_accuracy", "accuracy on S99 %")):
            f = side_by_side(ours, paper, metric, methods, temperature=True)
            parts[(phase, name)] = f[phase]
    return pd.concat(parts, axis=1)


def _cell_mean(summ, method, metric, scaled, col="mean") -> float:
    return _cell(summ, method, metric, scaled)[col]


def quote(summary: pd.DataFrame, method: str, metric: str, temperature_scaled: bool = False, col: str = "mean",
          digits: int = 2) -> str:
    """One number of a :func:`summarise` or :func:`paper_values` frame as text for prose
    (``col`` "mean" or "T"); "not available" when the frame does not hold it."""
    if col not in ("mean", "std", "T", "T_std"):
        raise ValueError(f"col must be one of mean, std, T, T_std; got {col!r}")
    v = _cell_mean(summary, method, metric, temperature_scaled, col)
    return "not available" if math.isnan(v) else f"{v:.{digits}f}"


def _name(key: str) -> str:
    return MUKHOTI_METHODS[key].label.split(" (")[0] if key in MUKHOTI_METHODS else key


def _claims(summ: pd.DataFrame, t_tolerance: float) -> list[tuple[str, bool | None]]:
    """``(numbers, holds)`` for each claim of :data:`CLAIMS` on one summary frame
    (``holds`` None when a method the claim needs is missing)."""
    have = {m for m in summ.method if not math.isnan(_cell_mean(summ, m, "ece", False))}
    focal = [k for k in FOCAL_KEYS if k in have]
    out = []
    ce, fl = _cell_mean(summ, "cross_entropy", "ece", False), _cell_mean(summ, "flsd53", "ece", False)
    below = sum(_cell_mean(summ, k, "ece", False) < ce for k in focal)
    ok = {"cross_entropy", "flsd53"} <= have
    out.append((f"ECE %: CE {ce:.2f}, FLSD-53 {fl:.2f}; {below} of {len(focal)} focal variants below CE" if ok
                else "–", fl < ce if ok else None))

    temps = {k: _cell_mean(summ, k, "ece", True, "T") for k in focal}
    temps = {k: t for k, t in temps.items() if not math.isnan(t)}
    near = [k for k, t in temps.items() if abs(t - 1) <= t_tolerance + 1e-9]
    ok = "flsd53" in temps
    out.append((f"T: FLSD-53 {temps['flsd53']:.1f}; {len(near)} of {len(temps)} focal variants "
                f"within {t_tolerance:g} of 1" if ok else "–", ("flsd53" in near) if ok else None))

    t_ce = _cell_mean(summ, "cross_entropy", "ece", True, "T")
    ok = "flsd53" in temps and not math.isnan(t_ce)
    out.append((f"T: CE {t_ce:.1f}, FLSD-53 {temps['flsd53']:.1f}" if ok else "–",
                t_ce > temps["flsd53"] if ok else None))

    best = {}
    for scaled in (False, True):
        vals = {k: _cell_mean(summ, k, "ece", scaled) for k in focal}
        vals = {k: v for k, v in vals.items() if not math.isnan(v)}
        best[scaled] = min(vals, key=vals.get) if len(vals) >= 2 else None
    ok = "flsd53" in focal and best[False] is not None and best[True] is not None
    out.append((f"lowest ECE of {len(focal)} focal variants: {_name(best[False])} pre T, {_name(best[True])} post T"
                if ok else "–", (best[False] == "flsd53" and best[True] == "flsd53") if ok else None))

    s_ce, s_fl = (_cell_mean(summ, k, "s99_fraction", True) for k in ("cross_entropy", "flsd53"))
    ok = not (math.isnan(s_ce) or math.isnan(s_fl))
    out.append((f"|S99| % post T: CE {s_ce:.2f}, FLSD-53 {s_fl:.2f}" if ok else "–", s_fl > s_ce if ok else None))
    return out


#: The paper's conclusions that :func:`verdicts` tests: (claim, where the paper makes it).
CLAIMS = (
    ("Focal loss (FLSD-53) has a lower test ECE than cross-entropy", "Sec. 6, Tables 1, 7"),
    ("The optimal T of the focal-loss model FLSD-53 is near 1", "Sec. 6"),
    ("Cross-entropy needs a larger optimal T than FLSD-53", "Sec. 6, Table 1"),
    ("FLSD-53 is the best focal variant (lowest ECE before and after TS)", "Sec. 5-6, Table 7"),
    ("After TS, FLSD-53 keeps more confident predictions (larger |S99|) than cross-entropy", "Sec. 6, Table 6"),
)
VERDICTS = ("holds", "fails", "not tested")


def verdicts(summaries: dict, t_tolerance: float = 0.1) -> pd.DataFrame:
    """Each claim of :data:`CLAIMS` tested on each ``{label: summary}`` (a :func:`summarise`
    or :func:`paper_values` frame), in long form: ``claim, source`` (where the paper makes
    it), ``evidence`` (the label), ``numbers`` behind the verdict and ``verdict`` ("holds",
    "fails", or "not tested" when a method it needs is missing). "Near 1" means
    ``|T - 1| <= t_tolerance`` (the paper: "mostly lying between 0.9 and 1.1")."""
    if not (isinstance(t_tolerance, (int, float)) and t_tolerance >= 0):
        raise ValueError(f"t_tolerance must be a number >= 0; got {t_tolerance!r}")
    if not isinstance(summaries, dict) or not summaries:
        raise ValueError("summaries must be a non-empty dict label -> summary frame")
    rows = []
    for label, summ in summaries.items():
        for (claim, source), (numbers, holds) in zip(CLAIMS, _claims(summ, t_tolerance)):
            rows.append({"claim": claim, "source": source, "evidence": label, "numbers": numbers,
                         "verdict": VERDICTS[2] if holds is None else VERDICTS[0 if holds else 1]})
    frame = pd.DataFrame(rows)
    order = {c: i for i, (c, _) in enumerate(CLAIMS)}
    return frame.sort_values("claim", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def styled_table(ours: pd.DataFrame, paper: pd.DataFrame | None, metric: str, methods, ref: PaperReference,
                 source: str):
    """:func:`side_by_side` (or :func:`s99_side_by_side` for ``metric="s99"``) as a pandas
    Styler captioned by :func:`table_caption`, ready to display in a chapter."""
    if metric == "s99":
        frame, cap = s99_side_by_side(ours, paper, methods), table_caption("s99_fraction", ref, source)
        cap = cap.replace("|S99| (%)", "|S99| (% of test samples with confidence >= 0.99) and accuracy on S99 (%)")
    else:
        frame = side_by_side(ours, paper, metric, methods, temperature=metric != "error")
        cap = table_caption(metric, ref, source)
    return frame.style.set_caption(cap).set_table_styles(
        [{"selector": "caption", "props": "caption-side: bottom; font-size: small; text-align: left;"}])
