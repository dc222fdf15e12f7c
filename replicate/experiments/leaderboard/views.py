"""What the leaderboard chapter shows, from its report (:mod:`.report`): the sortable board
table (:func:`board_table`), the paired comparisons over seeds of every pair of methods
(:func:`paired_matrix`, :func:`matrix`, :func:`pairs_summary`), and the texts of the prose -
the best method, a paper's printed number, overlapping rank intervals, the variants that are
one model at this profile, the agreement counts. Nothing here trains or decides a claim.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats as _st

from ...comparison import stats
from .claims import labels, name  # noqa: F401  (the chapter's labels, shown by its tables)
from .report import BOARD_METRICS, HIGHER_IS_BETTER, POSTHOC_NAMES, check_metric, check_setting, printed_column


# ----------------------------------------------------------------------------- the board table
def _fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def board_table(summary: pd.DataFrame, caption: str, labels: dict | None = None, metrics=None, digits: int = 2):
    """The leaderboard as a sortable HTML table (:func:`replicate.book.tables.sortable_table`):
    one row per method and post-hoc setting, one column per metric with "mean ± sd" over seeds
    and the 95 % t interval below it, cut to the metric's range where it reaches beyond ("cut at
    0": the mean of a non-negative metric is never below 0; sorted by the mean); ``T`` and ``gamma_ev`` are the mean
    temperature and the gammas chosen per seed. ``summary`` is the report's ``summary``
    (:func:`.report.summarise_board`); ``labels`` maps method keys to names; rows come in the
    order of ``summary``. ``caption`` should say profile, data, network, seeds."""
    from ...book.tables import sortable_table

    metrics = [check_metric(m) for m in (metrics or [m for m in BOARD_METRICS if m in set(summary.metric)])]
    labels = labels or {}
    cells, keys, notes = [], [], []
    for (method, setting), g in summary.groupby(["method", "setting"], sort=False):
        by, first = g.set_index("metric"), g.iloc[0]
        row = {"method": labels.get(method, method), "post-hoc": POSTHOC_NAMES[setting],
               "T": _fmt(first["T"]) if setting != "none" else "–",
               "γ_ev": first["gammas"] if setting == "fts" else "–"}
        key, note = {"T": first["T"] if setting != "none" else math.nan}, {}
        for m in metrics:
            col = BOARD_METRICS[m][0]
            if m not in by.index:
                row[col], key[col] = "–", math.nan
                continue
            r = by.loc[m]
            sd = f" ± {_fmt(r['sd'], digits)}" if math.isfinite(r["sd"]) else ""
            row[col], key[col] = _fmt(r["mean"], digits) + sd, r["mean"]
            if math.isfinite(r["low"]):
                ends = [f"{r[e]:g}" for e in ("low", "high") if e in str(r.get("cut") or "")]
                note[col] = f"[{_fmt(r['low'], digits)}, {_fmt(r['high'], digits)}]" + (
                    f" (cut at {' and '.join(ends)})" if ends else "")
        cells.append(row), keys.append(key), notes.append(note)
    cells, keys, notes = pd.DataFrame(cells), pd.DataFrame(keys), pd.DataFrame(notes, index=range(len(cells)))
    titles = {BOARD_METRICS[m][0]: BOARD_METRICS[m][1] + (" - higher is better" if m in HIGHER_IS_BETTER else "")
              for m in metrics}
    titles.update({"T": "temperature chosen on the validation set (mean over seeds)",
                   "γ_ev": "gamma_ev chosen on the validation set, one per seed"})
    return sortable_table(cells, keys, notes.reindex(columns=cells.columns), caption=caption,
                          text_columns=("method", "post-hoc", "γ_ev"), title_row=titles)


# ----------------------------------------------------------------------------- paired tests over seeds
PAIR_COLUMNS = ["a", "b", "diff", "sd_diff", "low", "high", "t", "p", "p_bh", "significant", "significant_bh",
                "seeds_needed", "n", "reason"]


def paired_matrix(values: pd.DataFrame, alpha: float = 0.05, power: float = 0.8, level: float = 0.95,
                  max_seeds: int = 10_000) -> pd.DataFrame:
    """Every pair ``(a, b)`` of the columns (methods) of ``values`` (rows: seeds; every method
    must have every seed), by :func:`replicate.comparison.stats.paired_comparison` (a paired
    t-test over seeds): mean difference ``a - b``, the standard deviation of the per-seed
    differences, its t interval at ``level``, ``t`` and ``p``, ``p_bh`` (Benjamini-Hochberg
    over the pairs with a p-value: with m pairs tested at 5 %, about 5 % of m come out
    "significant" by chance alone), ``significant`` (p < alpha), ``significant_bh`` (p_bh <
    alpha) and ``seeds_needed``: the fewest seeds with which the test would detect a mean
    difference this large with probability ``power`` (:func:`~replicate.comparison.stats.seeds_needed`;
    NaN: more than ``max_seeds``, or no difference). One row per unordered pair."""
    if not isinstance(values, pd.DataFrame) or values.shape[1] < 2:
        raise ValueError("values must be a seeds x methods DataFrame with at least two methods")
    if values.isna().any().any():
        raise ValueError(f"values must hold every method at every seed; missing: "
                         f"{[c for c in values.columns if values[c].isna().any()]}")
    rows = []
    for a, b in itertools.combinations(values.columns, 2):
        r = stats.paired_comparison(values[a].to_numpy(), values[b].to_numpy(), level)
        d = values[a].to_numpy() - values[b].to_numpy()
        sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
        need = stats.seeds_needed(r["diff"], sd, power, alpha, max_seeds) if math.isfinite(sd) else None
        rows.append({"a": a, "b": b, "diff": r["diff"], "sd_diff": sd, "low": r["low"], "high": r["high"],
                     "t": r["t"], "p": r["p"], "n": r["n"], "reason": r["reason"],
                     "seeds_needed": math.nan if need is None else float(need)})
    out = pd.DataFrame(rows)
    tested = out["p"].notna()
    out["p_bh"] = math.nan
    if tested.any():
        out.loc[tested, "p_bh"] = _st.false_discovery_control(out.loc[tested, "p"].to_numpy(), method="bh")
    out["significant"], out["significant_bh"] = out["p"] < alpha, out["p_bh"] < alpha
    out.attrs.update(alpha=alpha, power=power, test=stats.PAIRED_TEST_ASSUMPTIONS, n_seeds=len(values))
    return out[PAIR_COLUMNS]


def matrix(pairs: pd.DataFrame, column: str = "diff", order=None) -> pd.DataFrame:
    """One column of :func:`paired_matrix` as a square methods x methods table: cell (a, b)
    holds the value for ``a - b`` (``diff`` and ``t`` change sign across the diagonal; the other
    columns are symmetric); the diagonal is NaN. ``order``: the methods' order."""
    if column not in pairs.columns:
        raise ValueError(f"column must be one of {', '.join(pairs.columns)}; got {column!r}")
    methods = list(order) if order is not None else list(dict.fromkeys([*pairs.a, *pairs.b]))
    out = pd.DataFrame(np.nan, index=methods, columns=methods, dtype=object if pairs[column].dtype == bool
                       else float)
    antisymmetric = column in ("diff", "t")
    for r in pairs.itertuples(index=False):
        v = getattr(r, column)
        if r.a in out.index and r.b in out.index:
            out.loc[r.a, r.b] = v
            out.loc[r.b, r.a] = -v if antisymmetric and isinstance(v, float) else v
    return out


def pairs_summary(pairs: pd.DataFrame) -> dict:
    """Counts for the prose: pairs, pairs tested, significant at alpha (raw and after
    Benjamini-Hochberg), the median ``seeds_needed`` of the pairs not significant (NaN when
    none), and how many of those would need more than the largest value searched."""
    tested = pairs[pairs.p.notna()]
    not_sig = tested[~tested.significant]
    need = not_sig.seeds_needed.dropna()
    return {"pairs": int(len(pairs)), "tested": int(len(tested)), "significant": int(tested.significant.sum()),
            "significant_bh": int(tested.significant_bh.sum()),
            "median_seeds_needed": float(need.median()) if len(need) else math.nan,
            "beyond_max": int(not_sig.seeds_needed.isna().sum())}


# ----------------------------------------------------------------------------- texts of the prose
def best(summary: pd.DataFrame, metric: str = "ece", setting: str = "none") -> dict:
    """The method with the best mean ``metric`` after ``setting`` (lowest; highest for the
    AUROC) and the runner-up: ``{"key", "label", "mean", "sd", "text", "second", "second_text"}``."""
    part = summary[(summary.metric == check_metric(metric)) & (summary.setting == check_setting(setting))]
    part = part.dropna(subset=["mean"]).sort_values("mean", ascending=metric not in HIGHER_IS_BETTER)
    if part.empty:
        return {"key": None, "label": "not available", "mean": math.nan, "sd": math.nan, "text": "not available",
                "second": "not available", "second_text": "not available"}

    def text(r):
        sd = f" ± {r['sd']:.2f}" if math.isfinite(r["sd"]) else ""
        return f"{name(r['method'])} ({r['mean']:.2f}{sd})"

    top = part.iloc[0]
    second = part.iloc[1] if len(part) > 1 else None
    return {"key": top.method, "label": name(top.method), "mean": float(top["mean"]), "sd": float(top["sd"]),
            "text": text(top), "second": name(second.method) if second is not None else "none",
            "second_text": text(second) if second is not None else "none"}


def printed(paper: str, method: str, metric: str = "ece", scaled: bool = False) -> str:
    """One printed number of ``paper``'s CIFAR-10 ResNet-50 row as text ("not printed" when absent)."""
    v = printed_column(paper, metric, scaled).get(method)
    return "not printed" if v is None else f"{v:.2f}"


def neighbours_overlap(ranks: pd.DataFrame) -> tuple[int, int]:
    """``(overlapping, pairs)``: of the methods next to each other in the order of their rank,
    how many pairs have overlapping rank intervals (cannot be told apart)."""
    f = ranks.sort_values(["rank", "mean_rank"]).reset_index(drop=True)
    over = sum(f.rank_high[i] >= f.rank_low[i + 1] for i in range(len(f) - 1))
    return int(over), max(len(f) - 1, 0)


def identical_models(runs: dict) -> list[tuple[str, str]]:
    """Pairs of methods whose runs have identical test logits at every seed
    (:func:`replicate.comparison.noise.fingerprint`; e.g. the two AdaFocal rules when no gamma reaches a
    bound, where the rules coincide): one model trained twice under two names."""
    from ...comparison.noise import fingerprint

    methods = list(dict.fromkeys(m for m, _ in runs))
    seeds = sorted({s for _, s in runs})
    prints = {k: fingerprint(r) for k, r in runs.items()}
    return [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:]
            if all((a, s) in prints and (b, s) in prints and prints[(a, s)] == prints[(b, s)] for s in seeds)]


def twins_text(runs: dict, profile: str) -> str:
    """The variants that are one model at this profile, as a sentence of the prose."""
    twins = identical_models(runs)
    seeds = sorted({s for _, s in runs})
    if not twins:
        return f"no two methods trained the same model at profile {profile}"
    same = "; ".join(f"{name(a)} and {name(b)}" for a, b in twins)
    return (f"the runs of {same} have identical test logits at every seed ({', '.join(map(str, seeds))}): at "
            f"profile {profile} they are one model trained twice under two names")


def readings_text(runs: dict, profile: str, keys=("adafocal_paper", "adafocal_code")) -> str:
    """Whether the two readings of the printed AdaFocal (our two rules, ``keys``) rest on one
    model at this profile (identical test logits at every seed), as a clause of the prose."""
    a, b = keys
    if not any(m == a for m, _ in runs) or not any(m == b for m, _ in runs):
        return f"at profile {profile} the chapter trained only one of the two rules or neither"
    if (a, b) in identical_models({k: r for k, r in runs.items() if k[0] in keys}):
        return (f"at profile {profile} the two rules trained identical models, so both readings rest on the same "
                f"runs and agree")
    return f"at profile {profile} the two rules trained different models"


#: The agreement tables' columns in words (issue #32, item 1).
AGREEMENT_WORDS = {"label": "paper, column", "n": "shared methods", "tau": "Kendall τ_b", "low": "τ_b 95 % low",
                   "high": "τ_b 95 % high", "p": "p-value", "pair": "papers", "column": "column",
                   "identical": "identical numbers", "methods": "methods", "note": "note"}
#: A rank table's columns in words.
RANK_WORDS = {"method": "method", "score": "score (%)", "rank": "rank", "rank_low": "rank 95 % low",
              "rank_high": "rank 95 % high"}


def words_table(frame: pd.DataFrame, words: dict, caption: str = "", digits: int = 2, labels: dict | None = None):
    """``frame``'s columns of ``words`` (in its order) headed in words, numbers to ``digits``
    decimals, "–" for a missing cell, no pandas index; ``labels`` renames a ``method`` column."""
    out = frame[[c for c in words if c in frame]].copy()
    if labels and "method" in out:
        out["method"] = out["method"].map(lambda k: labels.get(k, k))
    whole = [words[c] for c in out if pd.api.types.is_float_dtype(out[c]) and (out[c].dropna() % 1 == 0).all()]
    s = out.rename(columns=words).style.format(precision=digits, na_rep="–").hide(axis="index")
    s = s.format("{:.0f}", subset=whole, na_rep="–").format("{:.2g}", subset=[words[c] for c in ("p",) if c in out],
                                                           na_rep="–")
    return s.set_caption(caption) if caption else s


def _shown(x: float, digits: int) -> float:
    """``x`` as :func:`words_table` prints it with ``digits`` decimals (NaN stays NaN)."""
    return float(f"{x:.{digits}f}") if math.isfinite(x) else math.nan


def agreement_summary(table: pd.DataFrame, digits: int = 2) -> dict:
    """Counts and one sentence for the prose, from the agreement table the chapter shows (the
    report's ``agreement`` with a ``label`` column, as :func:`words_table` prints it): the rows
    with a tau (at least three shared methods), how many have a positive tau, how many have a
    95 % interval entirely above (below) 0, naming them, and the range of tau. The counts read
    ``tau``, ``low`` and ``high`` rounded to the ``digits`` the table prints, so the sentence
    says what a reader counts in the table (an interval printed as "0.00" is not above zero).
    A paper's printed AdaFocal read as each of our two rules gives one row per reading; the
    sentence counts rows, and says how many are such second readings."""
    t = table.dropna(subset=["tau"])
    tau = t["tau"].map(lambda x: _shown(x, digits))
    low, high = (t[c].map(lambda x: _shown(x, digits)) for c in ("low", "high"))
    labels = t["label"] if "label" in t else pd.Series([f"row {i + 1}" for i in range(len(t))], index=t.index)
    above, below = list(labels[low > 0]), list(labels[high < 0])
    readings = int(t.duplicated(subset=[c for c in ("paper", "column") if c in t]).sum()) if "paper" in t else 0
    rng = f"{tau.min():.{digits}f} to {tau.max():.{digits}f}" if len(t) else "not available"

    def rows(names):
        return f" ({'; '.join(names)})" if names else ""

    n = len(t)
    second = (f", {readings} of them a second reading of a printed AdaFocal" if readings else "")
    sentence = (f"Of the {n} rows with a τ (comparisons with at least three shared methods{second}), "
                f"{int((tau > 0).sum())} have a positive τ, and τ ranges from {rng}; {len(above)} "
                f"ha{'s' if len(above) == 1 else 've'} a 95 % interval entirely above zero{rows(above)} and "
                f"{len(below)} entirely below{rows(below)}.") if n else \
        "No row has three or more shared methods, so no τ is computed."
    return {"n": n, "positive": int((tau > 0).sum()), "above_zero": len(above), "below_zero": len(below),
            "above_rows": above, "below_rows": below, "readings": readings, "range": rng, "sentence": sentence}


def claims_frame(logs: dict) -> pd.DataFrame:
    """The rows of every paper's claims table (the report's ``claims``, ``{paper: ClaimLog}``)
    in one frame, papers in book order."""
    return pd.concat([log.frame() for log in logs.values()], ignore_index=True)


def verdicts_by_paper(logs: dict, sides=("ours", "paper")) -> dict:
    """``{"verdict_<paper>_<side>": "fails / inconclusive"}``: each paper's verdicts on each
    side, in the order of its claims (a claim beyond the paper gives its own check)."""
    out = {}
    for paper, log in logs.items():
        f = log.frame()
        for side in sides:
            out[f"verdict_{paper}_{side}"] = " / ".join(f[f.evidence.str.startswith(side)].check)
    return out
