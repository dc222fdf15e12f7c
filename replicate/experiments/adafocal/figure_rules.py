"""The AdaFocal claims that the paper supports only with figures (Fig. 1, 2, 5, 14, 17-22),
as rules on our runs' per-epoch records: per-seed values, the final validation bins and
the final per-bin gammas (:class:`replicate.experiments.adafocal.evidence.Evidence`). On the
paper's side these parts are missing, and every rule answers "not tested" with the reason.
The list of claims is :func:`replicate.experiments.adafocal.claims.rules`.
"""
from __future__ import annotations

import numpy as np

from ... import comparison as cmp
from ...claims import untested

ADA = "adafocal"
FIXED_GAMMA = ("cross_entropy", "fl3", "fl4", "fl5")


def _seed_values(ev, method: str, setting: str = "", metric: str = "ece", scaled: bool = False) -> list[float]:
    if ev.per_seed is None:
        return []
    f = ev.per_seed
    f = f[(f.method == method) & (f.setting == setting) & (f.metric == metric) & (f.temperature_scaled == scaled)]
    return f.sort_values("seed")["value"].astype(float).tolist()


def runs_below_flsd(setting: str, share: float, what: str):
    """App. L: the AdaFocal runs of ``setting`` (over seeds) with ECE below FLSD-53's mean."""
    def rule(ev):
        if ev.per_seed is None:
            return "–", untested(ev.why("per_seed"))
        ada, flsd = _seed_values(ev, ADA, setting), _seed_values(ev, "flsd53")
        if not ada or not flsd:
            return "–", untested(f"needs AdaFocal runs at {setting or 'the main setting'} and FLSD-53 runs")
        ref = float(np.mean(flsd))
        k = sum(a < ref for a in ada)
        return (f"{what}: {k} of {len(ada)} AdaFocal runs below FLSD-53's mean ECE {ref:.2f} "
                f"({len(flsd)} run{'s' if len(flsd) > 1 else ''})"), k >= share * len(ada) - 1e-9
    return rule


def more_variable(ev):
    """App. L.2: gamma_max 50 varies more over seeds than gamma_max 20."""
    if ev.per_seed is None:
        return "–", untested(ev.why("per_seed"))
    a, b = _seed_values(ev, ADA, "gamma_max=50"), _seed_values(ev, ADA, "gamma_max=20")
    if len(a) < 2 or len(b) < 2:
        return (f"{len(a)} run(s) at γmax 50, {len(b)} at γmax 20",
                untested("a spread over seeds needs at least two runs of each setting (the ablation ran at "
                         f"{min(len(a), len(b))} seed)"))
    return f"ECE sd over seeds: γmax 50 {np.std(a, ddof=1):.2f}, γmax 20 {np.std(b, ddof=1):.2f}", \
        np.std(a, ddof=1) > np.std(b, ddof=1)


def error_bars_separate(ev):
    """App. H: AdaFocal's mean ECE + 1 sd below CE's and FLSD-53's mean - 1 sd (pre-T)."""
    if ev.per_seed is None:
        return "–", untested(ev.why("per_seed"))
    v = {m: _seed_values(ev, m) for m in (ADA, "flsd53", "cross_entropy")}
    if any(len(x) < 2 for x in v.values()):
        return "–", untested("error bars need at least two seeds of AdaFocal, FLSD-53 and CE")
    ms = {m: (np.mean(x), np.std(x, ddof=1)) for m, x in v.items()}
    numbers = "; ".join(f"{cmp.short(m) if m != ADA else 'AdaFocal'} {a:.2f} ± {s:.2f} ({len(v[m])} seeds)"
                        for m, (a, s) in ms.items())
    top = ms[ADA][0] + ms[ADA][1]
    return numbers, all(top < a - s for m, (a, s) in ms.items() if m != ADA)


def gamma_ends(ev):
    """Sec. 6, Fig. 5a: gamma near 20 in the lowest bin, near 1 in the highest (CIFAR-10)."""
    if ev.gammas is None:
        return "–", untested(ev.why("gammas"))
    g = ev.gammas[ev.gammas.setting == "gamma_max=20"]
    if not len(g):
        return "–", untested("no AdaFocal run at γmax 20")
    per = g.groupby("bin")["gamma"].mean()
    lo, hi = float(per.iloc[0]), float(per.iloc[-1])
    return (f"final γ (mean over {g.seed.nunique()} run(s)): lowest bin {lo:.2f}, highest bin {hi:.2f}",
            abs(lo - 20) < abs(lo - 1) and abs(hi - 1) < abs(hi - 20))


def unbounded_blows_up(ev):
    """App. L.3, Fig. 22: unconstrained gammas blow up (beyond 20) in the lower bins and
    settle in the higher ones."""
    if ev.gammas is None:
        return "–", untested(ev.why("gammas"))
    g = ev.gammas[ev.gammas.setting == "gamma_max=unbounded"]
    if not len(g):
        return "–", untested("no unbounded AdaFocal run for this rule")
    per = g.groupby("bin")["gamma"].max()
    low, high = float(per.iloc[:3].max()), float(per.iloc[-3:].max())
    return (f"largest final γ: lower three bins {low:.3g}, upper three bins {high:.3g}", low > 20 and high <= 20)


def _bin_frame(ev, method):
    f = ev.bins[ev.bins.method == method].set_index("bin")
    return f if len(f) else None


def _gap(f):
    return f["confidence"] - f["accuracy"]


def ce_overconfident_every_bin(ev):
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    ce, fl = _bin_frame(ev, "cross_entropy"), _bin_frame(ev, "flsd53")
    if ce is None or fl is None:
        return "–", None
    d = (_gap(ce) - _gap(fl)).dropna()
    return f"E_val(CE) > E_val(FLSD-53) in {int((d > 0).sum())} of {len(d)} validation bins", bool((d > 0).all())


def ada_lowest_every_bin(ev):
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    frames = {m: _bin_frame(ev, m) for m in (ADA, "cross_entropy", "flsd53")}
    if any(f is None for f in frames.values()):
        return "–", None
    gaps = {m: _gap(f).abs() for m, f in frames.items()}
    best = sum(bool(gaps[ADA][b] <= min(gaps["cross_entropy"][b], gaps["flsd53"][b])) for b in gaps[ADA].index)
    return f"AdaFocal's |E_val| lowest of AdaFocal, CE, FLSD-53 in {best} of {len(gaps[ADA])} bins", \
        best == len(gaps[ADA])


def _adaece(f) -> float:
    return float(100 * np.nansum(f["count"] * _gap(f).abs()) / f["count"].sum())


def fl4_lowest_adaece(ev):
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    vals = {m: _adaece(f) for m in FIXED_GAMMA if (f := _bin_frame(ev, m)) is not None}
    if "fl4" not in vals or len(vals) < 2:
        return "–", None
    best = min(vals, key=vals.get)
    return ("validation AdaECE %: " + ", ".join(f"{cmp.short(m)} {v:.2f}" for m, v in vals.items()),
            best == "fl4")


def _best_per_bin(ev, among):
    gaps = {m: _gap(f).abs() for m in among if (f := _bin_frame(ev, m)) is not None}
    if len(gaps) < 2:
        return None
    frame = np.vstack([g.to_numpy() for g in gaps.values()])
    ok = ~np.isnan(frame).any(axis=0)
    return [list(gaps)[i] for i in np.argmin(np.where(np.isnan(frame), np.inf, frame), axis=0)[ok]]


def no_single_gamma(ev):
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    best = _best_per_bin(ev, FIXED_GAMMA)
    if best is None:
        return "–", None
    counts = {cmp.short(m): best.count(m) for m in dict.fromkeys(best)}
    return f"best fixed γ per bin: {counts}", len(counts) > 1


def flsd_not_best(ev):
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    best = _best_per_bin(ev, (*FIXED_GAMMA, "flsd53"))
    if best is None or "flsd53" not in set(ev.bins.method):
        return "–", None
    return f"FLSD-53 best in {best.count('flsd53')} of {len(best)} bins", best.count("flsd53") < len(best)


def correspondence(ev):
    """Sec. 4, Fig. 2(b): C_train and C_val both fall as gamma rises (CE, FL-3, FL-5)."""
    if ev.bins is None:
        return "–", untested(ev.why("bins"))
    fr = [_bin_frame(ev, m) for m in ("cross_entropy", "fl3", "fl5")]
    if any(f is None for f in fr):
        return "–", None
    if any(f["train_confidence"].isna().all() for f in fr):
        return "–", untested("C_train is recorded per epoch only by runs trained since the engine records "
                             "validation bins (eval_every_epoch); CE, FL-3 or FL-5 lack it")
    n = len(fr[0])
    tr = sum(bool(fr[0].train_confidence[b] > fr[1].train_confidence[b] > fr[2].train_confidence[b])
             for b in range(n))
    va = sum(bool(fr[0].confidence[b] > fr[1].confidence[b] > fr[2].confidence[b]) for b in range(n))
    return (f"CE > FL-3 > FL-5 in C_train in {tr} of {n} bins, in C_val in {va} of {n}",
            tr > n / 2 and va > n / 2)
