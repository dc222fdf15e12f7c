"""Everything the FCL chapter (``exp_fcl``) computes from its plan and runs, once, as the
sections of its :class:`replicate.comparison.report.Report` (:func:`report`):

``evaluation``
    every run's table metrics, pre and post T (T by validation ECE for every metric, as the
    paper does; ``{group: frame}`` of ``image`` and ``text``);
``claims``
    the claims' verdicts on both sides (:func:`decide`): the paper's printed tables (every
    row, Tables 1-4, 6-8) and our runs (every seed the store holds of the chapter's
    configurations, within the noise model of :mod:`replicate.comparison.noise`);
``intervals``
    the 95 % interval of each of our CIFAR-10 table cells (the seeds shown), same model;
``toy``
    the two-dimensional study of Fig. 7 (:func:`.plan.toy_study`, with its test points);
``norm``, ``sweep``
    Table 8's runs evaluated and Fig. 6's metrics against lambda;
``fts_column``, ``identical``, ``scale_box``
    the "+ FTS" column, the sentence on identical runs (:func:`.views.coincidences`) and the
    box atop the page.

Our side is one row of :class:`replicate.comparison.noise.RowRuns` per data set and network (the
CIFAR-10 row also holds Table 8's L1/L2 runs as settings ``norm=l1``/``norm=l2``, the lambda
sweep's runs, and the chapter's :class:`~replicate.claims.evidence.Named` numbers: Fig. 9's
reliability gaps, with draws over the seeds and test examples; Figs. 3 and 8's per-epoch
numbers, with draws over the seeds only), one row per out-of-distribution set (Table 4), and
two rows of Named numbers only (:class:`_WithRows`): the two-dimensional study (seeds, and
its test points where a number is a sum over them) and ChestX-ray14 (not available).

:class:`_WithRows` (rows of Named quantities without runs, on either side) is an addition to
the shared machinery that lives here until another chapter needs it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import comparison as cmp
from ...claims import ClaimLog
from ...claims.claim import claims_log
from ...claims.evidence import Draws, Evidence, Missing, Named, Row
from ...comparison import chapter
from ...comparison import report as rpt
from ...comparison.layouts import paper_long, paper_rows
from ...comparison.noise import N_BOOT, RowRuns, RunsEvidence, resampling, scores
from ...comparison.noise.runs import noise_text
from . import claims as C
from .figures import FIG3_WINDOWS, FIG8_WINDOW, convergence_epochs, normalised_loss, paper_window, window_stats
from .plan import CHAPTER, LAMBDAS, PAPER, SECTION, lambda_key, plan, toy_study

TABLE_METRICS = ("ece", "smece", "smce", "adaece", "classwise_ece", "mce", "nll", "error")
#: The paper chooses T by validation ECE and reuses it for every metric (Sec. 5).
T_BY_ECE = {m: "ece" for m in TABLE_METRICS}
SWEEP_METRICS = ("nll", "ece", "adaece", "classwise_ece", "error")
#: The metrics of the CIFAR-10 tables whose cells show an interval.
SHOWN = ("ece", "smece", "adaece", "classwise_ece", "error")
PAPER_SOURCE = "Liang et al., Tables 1-4, 6-8, every printed row"
#: Our out-of-distribution sets as the paper's Table 4 keys its rows.
OOD_KEYS = {("cifar10", "cifar10c_gaussian5"): "cifar10_cifar10c", ("cifar10", "svhn"): "cifar10_svhn"}
TOY_ROW = Row("two moons, noise 0.2 (App. A.11)", C.TOY, "mlp_10_10")
CHEST_ROW = Row("ChestX-ray14, DenseNet-121 (CheXNet)", C.CHEST, "densenet121")
NO_RECORDS = "the per-epoch records keep no per-example outcomes, so the test examples are not resampled"


# ----------------------------------------------------------------------------- the two sides
class _WithRows(Evidence):
    """One side's evidence (``inner``, or None) and ``extra`` rows that hold Named numbers
    only (no table cell): ``[(Row, {key: Draws or reason}, default reason)]``."""

    def __init__(self, inner, extra, side: str, source: str, names):
        super().__init__(source, names)
        self.inner, self.side = inner, side
        self._extra = {row.name: (row, named, default) for row, named, default in extra}

    def rows(self) -> list[Row]:
        return (self.inner.rows() if self.inner else []) + [r for r, _, _ in self._extra.values()]

    def draws(self, row, q):
        if row in self._extra:
            _, named, default = self._extra[row]
            return named.get(q.key, default) if isinstance(q, Named) else default
        return self.inner.draws(row, q)

    def identical(self, row, a, b):
        return None if row in self._extra or not self.inner else self.inner.identical(row, a, b)

    def label(self, used) -> str:
        return self.inner.label(used) if self.inner is not None else super().label(used)


def _seed_draws(values: dict, row: str, who: str, why: str) -> Draws:
    """A number of each seed's run (``{seed: value}``) as Draws: its mean, resampled over the
    seeds (the same draws for every method with as many seeds); ``why`` says what is not."""
    seeds = sorted(values)
    v = np.array([values[s] for s in seeds], dtype=np.float64)
    used = ((row, who, tuple(seeds)),)
    if len(seeds) == 1:
        return Draws(float(v[0]), None, f"one run (seed {seeds[0]}): the training noise is not measured; {why}", used)
    reps = resampling.over_seeds(np.repeat(v[:, None], N_BOOT, axis=1))
    return Draws(float(v.mean()), reps, f"the {len(seeds)} seeds resampled ({N_BOOT:,} resamples, the same draws for "
                                        f"every method with as many seeds); {why}", used)


#: Figs. 3 and 8's numbers: the window each reads (None: the whole run) and the fewest epochs
#: it needs there.
HISTORY_STATS = {"fig8_error": ("fig8", 1), "fig3_converge": (None, 1), "fig3_mid_mean": ("middle", 3),
                 "fig3_mid_std": ("middle", 3), "fig3_initial_jitter": ("initial", 4)}


def _history_named(hist: dict, row: str) -> dict:
    """Figs. 3 and 8's numbers (:func:`replicate.experiments.fcl.claims.history`) of the runs
    ``{(method, seed): Run}`` that recorded test metrics after every epoch, each seed's value
    resampled over the seeds (the records hold no per-example outcomes)."""
    per: dict = {}
    for (m, s), run in hist.items():
        f = run.history_frame()
        if {"test/nll", "test/error"} <= set(f.columns) and f["test/nll"].notna().all():
            per.setdefault(s, {})[m] = run
    if not per:
        return {}
    epochs = max(r.resolved["train"]["epochs"] for g in per.values() for r in g.values())
    windows = {"fig8": paper_window(epochs, *FIG8_WINDOW),
               **{k: paper_window(epochs, *w) for k, w in FIG3_WINDOWS.items()}}
    vals: dict = {}
    for s, group in per.items():
        nl = normalised_loss(group)
        err = pd.concat([r.history_frame().assign(method=m) for m, r in group.items()])
        a, b = windows["fig8"]
        err = err[(err.epoch >= a) & (err.epoch <= b)].groupby("method")["test/error"].mean()
        mid = window_stats(nl, *windows["middle"]).set_index("method")
        initial = window_stats(nl, *windows["initial"]).set_index("method")
        for m, e in convergence_epochs(nl, C.FRACTION).items():
            got = {"fig8_error": 100 * err[m], "fig3_converge": e, "fig3_mid_mean": mid.loc[m, "mean"],
                   "fig3_mid_std": mid.loc[m, "std"], "fig3_initial_jitter": initial.loc[m, "jitter"]}
            for k, v in got.items():
                vals.setdefault((k, m), {})[s] = float(v)
    out = {}
    for (k, m), by_seed in vals.items():
        name, least = HISTORY_STATS[k]
        first, last = windows[name] if name else (1, epochs)
        if last - first + 1 < least:
            paper = FIG3_WINDOWS[name]
            out[f"{k}:{m}"] = (f"the paper's epochs {paper[0]}-{paper[1]} are our epochs {first}-{last}: fewer than "
                               f"{least} epochs, too few to compare")
        else:
            out[f"{k}:{m}"] = _seed_draws(by_seed, row, f"{C.short(m)} (per-epoch records)",
                                          f"our epochs {first}-{last} of {epochs}; {NO_RECORDS}")
    return out


def _reliability_named(ce: dict, row: str, min_share: float = 0.01) -> dict:
    """Fig. 9's numbers of cross-entropy's runs ``{seed: Run}`` (15 equal-width test bins, those
    holding at least ``min_share`` of the test set): the mean gap confidence - accuracy above
    and below confidence 0.5 and the smallest bin gap above it, in points, with the two-level
    bootstrap's draws (seeds, then the test examples: the weights of every Cell)."""
    per, bins = [], []
    for s in sorted(ce):
        z, y = ce[s].logits("test")
        z = np.asarray(z, dtype=np.float64)
        p = np.exp(z - z.max(1, keepdims=True))
        n = len(y)
        w = np.vstack([np.ones((1, n)), resampling.weights(n, N_BOOT, 0, "test")])
        cnt, conf_sum, hit_sum = scores.width_sums(p / p.sum(1, keepdims=True), y, w, 15)
        gap = conf_sum - hit_sum
        full = cnt[0] >= min_share * n
        high = full & (conf_sum[0] >= 0.5 * cnt[0])
        per.append((100 * gap[:, high].sum(1) / cnt[:, high].sum(1), 100 * gap[:, full & ~high].sum(1)
                    / cnt[:, full & ~high].sum(1), 100 * gap / np.where(cnt > 0, cnt, np.nan), n))
        bins.append(high)
    seeds, n = sorted(ce), per[0][3]
    common = np.logical_and.reduce(bins)
    used = ((row, "Cross Entropy", tuple(seeds)),)
    noise = noise_text(len(seeds), N_BOOT, f"the {n:,} test examples")

    def draws(stack):             # (seeds, 1 + B): the full test set, then the resamples
        return Draws(float(stack[:, 0].mean()), resampling.over_seeds(stack[:, 1:]), noise, used)
    out = {C.GAP_HIGH.key: draws(np.stack([g[0] for g in per])), C.GAP_LOW.key: draws(np.stack([g[1] for g in per]))}
    if common.any():
        each = [draws(np.stack([g[2][:, k] for g in per])) for k in np.flatnonzero(common)]
        low = np.min(np.stack([d.reps for d in each]), axis=0)
        out[C.GAP_MIN_HIGH.key] = Draws(min(d.point for d in each), low, noise, used)
    else:
        out[C.GAP_MIN_HIGH.key] = "cross-entropy puts no populated bin at confidence >= 0.5 in every seed"
    return out


def _toy_named(toy) -> dict:
    """Fig. 7's numbers (:func:`replicate.experiments.fcl.claims.toy`) from the study's frame,
    grids and test points: the boundary length and the uncertain share resampled over the
    seeds; the test ECE and error over the seeds, then each seed's test points."""
    frame, _, tests = toy
    seeds = sorted(int(s) for s in frame.seed.unique())
    out, used = {}, ((TOY_ROW.name, "FL, FCL", tuple(seeds)),)
    for method in ("FL", "FCL"):
        f = frame[frame.method == method].set_index("seed")
        for stat in ("boundary_length", "uncertain_share"):
            out[f"toy_{stat}:{method}"] = _seed_draws(f[stat].to_dict(), TOY_ROW.name, "FL, FCL",
                                                      "a property of each network's probabilities over a fixed grid "
                                                      "of the plane: no examples to resample")
        for metric in ("ece", "error"):
            got = []
            for s in seeds:
                p, y = tests[(method, s)]
                sc = scores.Scored(p, y, np.log(np.maximum(p[np.arange(len(y)), y], 1e-300)))
                w = np.vstack([np.ones((1, len(y))), resampling.weights(len(y), N_BOOT, 0, "test")])
                got.append(scores.replicated(sc, metric, w))
            stack = np.stack(got)
            noise = noise_text(len(seeds), N_BOOT, f"each seed's {len(y):,} test points")
            out[f"toy_{metric}:{method}"] = Draws(float(stack[:, 0].mean()), resampling.over_seeds(stack[:, 1:]),
                                                  noise, used)
    return out


def names(p: cmp.Plan):
    """The display names of the claims: the catalogue's, and "FCL λ=0.5" for the sweep's runs."""
    n = rpt.names()
    n.methods.update({m.key: f"FCL λ={m.loss_params['lam']:g}" for m in p.methods.get("lambda", [])})
    return n


def our_side(p: cmp.Plan, runs: dict, toy=None, every_seed: bool = True, named: bool = True, frames=None):
    """Our runs (``{group: {(method, seed): Run}}``) as the claims' evidence (module docstring);
    ``toy``: :func:`.plan.toy_study` with ``keep_test`` (None: not run); ``named`` False leaves
    the Named numbers out (the tables' intervals need none)."""
    wide = {g: (rpt.with_store_seeds(got, p.group(g)) if every_seed else dict(got)) for g, got in runs.items() if got}
    rows = []
    for g in ("image", "text"):
        if g not in wide:
            continue
        first = next(iter(wide[g].values()))
        ds, model = first.resolved["dataset"], first.resolved["model"]
        main = {(m, "", s): r for (m, s), r in wide[g].items()}
        temps = rpt.temperatures(frames[g]) if frames and g in frames else {}
        extra = {}
        if g == "image":
            main.update({("fcl", "norm=l1" if m == "fcl_l1" else "norm=l2", s): r
                         for (m, s), r in wide.get("norm", {}).items()})
            main.update({(m, "", s): r for (m, s), r in wide.get("lambda", {}).items()})
            if named:
                ce = {s: r for (m, s), r in wide[g].items() if m == "cross_entropy"}
                hist = {**{(m, s): r for (m, s), r in wide.get("history", {}).items()},
                        **{("cross_entropy", s): r for s, r in ce.items()}}
                extra = {**(_reliability_named(ce, f"{ds}, {model}") if ce else {}),
                         **_history_named(hist, f"{ds}, {model}")}
        rows.append(RowRuns(f"{ds}, {model}", ds, model, main, temperatures=temps, named=extra))
        if g == "image":
            for ood in sorted({o for r in wide[g].values() for o in r.ood_sets}):
                if (ds, ood) in OOD_KEYS:
                    rows.append(RowRuns(f"{ds}/{ood}, {model}", OOD_KEYS[(ds, ood)], model,
                                        {(m, "", s): r for (m, s), r in wide[g].items()}, ood_settings={"": ood}))
    n = names(p)
    reach = {k: C.UNREACHABLE[k.split(":")[0]] for k in C.named_keys() if k.startswith(("chexnet", "gradcam"))}
    extra = [(TOY_ROW, _toy_named(toy) if toy is not None and len(toy) > 2 else {},
              "the two-dimensional study was not run"), (CHEST_ROW, reach, C.UNREACHABLE["chexnet"])]
    return _WithRows(RunsEvidence(rows, p.profile, n) if rows else None, extra, "ours", p.profile, n)


def paper_side(lambdas=()):
    """The paper's printed tables (Tables 1-4, 6, 7 every row; Table 8's L1/L2 rows as settings
    ``norm=l1``/``norm=l2`` of the same rows) as evidence without noise; what it shows only
    in figures (the sweep over ``lambdas`` among them) is absent, with the reason
    (:data:`.claims.ABSENT`)."""
    main = paper_rows(PAPER)
    t8 = paper_long(PAPER, "table8")
    label = dict(zip(zip(main.dataset_key, main.model_key), main.row))
    t8 = t8.assign(row=[label[k] for k in zip(t8.dataset_key, t8.model_key)])
    absent = {**{k: C.FIGURE_ONLY for k in C.named_keys()}, **{lambda_key(v): C.FIGURE_ONLY for v in lambdas},
              "mce": C.ABSENT["mce"], "smce": C.ABSENT["smce"]}
    inner = rpt.paper_evidence(pd.concat([main, t8], ignore_index=True), PAPER_SOURCE, absent=absent)
    chest = {k: C.ABSENT[k.split(":")[0]] for k in C.named_keys() if k.startswith(("chexnet", "gradcam"))}
    return _WithRows(inner, [(TOY_ROW, {}, C.FIGURE_ONLY), (CHEST_ROW, chest, C.ABSENT["chexnet"])], "paper",
                     PAPER_SOURCE, inner.names)


def decide(p: cmp.Plan, runs: dict | None, frames: dict | None = None, toy=None) -> ClaimLog:
    """The chapter's claims table: every claim of :func:`.claims.definitions` on our runs
    (every group, every seed the store holds; or why they are missing) and on the paper's
    printed rows; ``toy``: the two-dimensional study (:func:`.plan.toy_study` with
    ``keep_test``; None: its claims not tested on ours)."""
    ours = our_side(p, runs, toy, frames=frames) if runs else Missing("ours", p.profile,
                                                                       chapter.not_in_store(p.profile, p))
    lams = [m.loss_params["lam"] for m in p.methods.get("lambda", [])] or LAMBDAS
    sides = [ours, *chapter.damaged_sides(p, runs), paper_side((*lams, 0.5))]
    return claims_log(PAPER, CHAPTER, C.definitions(lambdas=lams), sides, SECTION, names(p))


# ----------------------------------------------------------------------------- Fig. 6
def sweep_summary(p: cmp.Plan, lambda_runs: dict) -> pd.DataFrame:
    """Fig. 6's numbers: the ``lambda`` group's runs summarised (T by validation ECE, as every
    table of the paper), with a column ``lam``, sorted by lambda."""
    lams = {lambda_key(m.loss_params["lam"]): m.loss_params["lam"] for m in p.methods["lambda"]}
    s = cmp.summarise(cmp.evaluate_runs(lambda_runs, metrics=SWEEP_METRICS, t_selected_by=T_BY_ECE))
    f = s[s.method.isin(list(lams))].assign(lam=lambda d: d["method"].map(lams))
    return f.sort_values(["lam", "metric", "temperature_scaled"]).reset_index(drop=True)


# ----------------------------------------------------------------------------- the report
def _evaluation(runs: dict) -> dict:
    out = {}
    if runs.get("image"):
        out["image"] = cmp.evaluate_runs(runs["image"], metrics=TABLE_METRICS, t_selected_by=T_BY_ECE)
    if runs.get("text"):
        out["text"] = cmp.evaluate_runs(runs["text"], metrics=("ece", "error"), t_selected_by=T_BY_ECE)
    return out


def _intervals(p: cmp.Plan, runs: dict, frames: dict) -> dict:
    if not runs.get("image"):
        return {}
    shown = our_side(p, {"image": runs["image"]}, every_seed=False, named=False, frames=frames)
    return rpt.table_intervals(shown, [m.key for m in p.methods["image"]], SHOWN)


def report(p: cmp.Plan, runs: dict) -> rpt.Report:
    """The chapter's report from its plan and finished runs (``{group: {(method, seed): Run}}``)."""
    from ...book.scale import ScaleBox
    from ...comparison import scale
    from .views import coincidences

    image = runs.get("image", {})
    wide = {g: rpt.with_store_seeds(got, p.group(g)) for g, got in runs.items() if got}
    sections = {
        "evaluation": lambda r: _evaluation(runs),
        "toy": lambda r: toy_study(p.profile, keep_test=True),
        "claims": lambda r: decide(p, runs, toy=r["toy"]),
        "intervals": lambda r: _intervals(p, runs, r["evaluation"]),
        "norm": lambda r: cmp.evaluate_runs(runs["norm"], metrics=("ece", "error")) if runs.get("norm") else None,
        "sweep": lambda r: sweep_summary(p, runs["lambda"]) if runs.get("lambda") else None,
        "fts_column": lambda r: cmp.fts_column(image, p.methods["image"], metric="ece", select="ece", grid="code")
        if image else None,
        "identical": lambda r: coincidences(p, wide),
        "scale_box": lambda r: ScaleBox(scale.describe(runs)),
    }
    return rpt.Report(CHAPTER, p.profile, rpt.keys_of(wide), sections)


def claims(profile: str = "cpu") -> ClaimLog:
    """The registered claims (:data:`replicate.claims.SOURCES`): the chapter's default plan at
    ``profile``, its runs read from the store (never trained), decided on both sides, with
    the two-dimensional study of Fig. 7 (small networks trained in seconds)."""
    p = plan(profile, device="cpu")
    runs = cmp.load_groups(p)
    return decide(p, None) if not runs else report(p, runs).claims
