"""The FCL paper's claims about its figures (Figs. 3, 6, 7 and 8) as rules on an
:class:`.evidence.Evidence`; the paper prints no numbers for them, so on its side they
are "not tested" (the evidence says why), and on ours they read the per-epoch records, the
lambda sweep and the two-dimensional study. :func:`.claims.rules` lists them in the
paper's order.
"""
from __future__ import annotations

from ... import comparison as cmp
from ...claims import readings, untested
from . import plan as fcl

FCL = "fcl"
NAMES = {"ece": "ECE", "adaece": "AdaECE", "classwise_ece": "classwise ECE", "error": "error", "nll": "NLL"}


# ----------------------------------------------------------------------------- Sec. 5.5.1 (Fig. 3, Fig. 8)
def _history(ev):
    return None if ev.history is None else ev.history


def fastest_convergence(fraction: float):
    def rule(ev):
        from .evidence import convergence_epochs

        h = _history(ev)
        if h is None:
            return "–", untested(ev.why("history"))
        h = h[h.method.isin(fcl.FIG3_METHODS)]
        ep = convergence_epochs(h, fraction)
        if FCL not in ep or len(ep) < 2:
            return "–", None
        text = "epoch reaching {:.0%} of the largest drop: ".format(fraction) + ", ".join(
            f"{cmp.short(m)} {e}" for m, e in ep.items())
        return text, ep[FCL] < min(e for m, e in ep.items() if m != FCL)
    return rule


def _window(ev, name):
    from .evidence import FIG3_WINDOWS, paper_window, window_stats

    first, last = paper_window(ev.epochs, *FIG3_WINDOWS[name])
    h = ev.history[ev.history.method.isin(fcl.FIG3_METHODS)]
    return first, last, window_stats(h, first, last).set_index("method")


def middle_lowest_stable(ev):
    h = _history(ev)
    if h is None:
        return "–", untested(ev.why("history"))
    first, last, w = _window(ev, "middle")
    if len(w) < 3 or w["n_epochs"].min() < 3 or not {FCL, "dual_focal"} <= set(w.index):
        return "–", untested(f"the paper's epochs 50-150 are our epochs {first}-{last}: too few epochs or methods")
    two_mean = set(w["mean"].nsmallest(2).index)
    two_std = set(w["std"].nsmallest(2).index)
    text = (f"epochs {first}-{last}: mean " + ", ".join(f"{cmp.short(m)} {v:.3f}" for m, v in w["mean"].items())
            + "; std " + ", ".join(f"{cmp.short(m)} {v:.3f}" for m, v in w["std"].items()))
    return text, two_mean == two_std == {FCL, "dual_focal"}


def initial_ce_steadier(ev):
    h = _history(ev)
    if h is None:
        return "–", untested(ev.why("history"))
    first, last, w = _window(ev, "initial")
    if not {"cross_entropy", "fl3"} <= set(w.index) or (w.loc[["cross_entropy", "fl3"], "n_epochs"] < 4).any():
        return "–", untested(f"the paper's epochs 0-50 are our epochs {first}-{last}: fewer than four epochs, too "
                             f"few changes to compare their variability")
    ce, fl = w.loc["cross_entropy", "jitter"], w.loc["fl3", "jitter"]
    return f"epochs {first}-{last}: s.d. of epoch-to-epoch changes CE {ce:.3f}, FL-3 {fl:.3f}", fl > ce


def lowest_error_over_training(ev):
    from .evidence import FIG8_WINDOW, paper_window

    h = _history(ev)
    if h is None:
        return "–", untested(ev.why("history"))
    first, last = paper_window(ev.epochs, *FIG8_WINDOW)
    w = h[(h.epoch >= first) & (h.epoch <= last)].groupby("method")["error"].mean()
    if FCL not in w or len(w) < 2:
        return "–", None
    return (f"mean test error %, epochs {first}-{last}: " + ", ".join(f"{cmp.short(m)} {v:.1f}"
                                                                      for m, v in w.items()),
            w[FCL] <= w.drop(FCL).min())


# ----------------------------------------------------------------------------- Sec. 5.5.2 (Fig. 6)
def _sweep(ev, metric, scaled=False) -> dict:
    s = ev.sweep
    g = s[(s.metric == metric) & (s.temperature_scaled == scaled)]
    return dict(zip(g["lam"].astype(float), g["mean"].astype(float)))


def _need_sweep(ev, *lams):
    if ev.sweep is None:
        return untested(ev.why("sweep"))
    have = set(_sweep(ev, "ece"))
    lacking = [lam for lam in lams if lam not in have]
    if lacking:
        return untested(f"the sweep holds no lambda {', '.join(f'{v:g}' for v in lacking)}")
    if len(have) < 3:
        return untested("the sweep holds fewer than three values of lambda")
    return None


def sweep_falls(metric: str, lo: float = 0.0, hi: float = 0.5):
    def rule(ev):
        missing = _need_sweep(ev, lo, hi)
        if missing:
            return "–", missing
        v = _sweep(ev, metric)
        return f"{NAMES.get(metric, metric.upper())} pre T: λ={lo:g} {v[lo]:.2f}, λ={hi:g} {v[hi]:.2f}", v[hi] < v[lo]
    return rule


def post_nll_lower(ev):
    missing = _need_sweep(ev)
    if missing:
        return "–", missing
    pre, post = _sweep(ev, "nll"), _sweep(ev, "nll", True)
    ok = {lam: post[lam] < pre[lam] for lam in pre if lam in post}
    return f"λ where post-T NLL < pre-T NLL: {sum(ok.values())}/{len(ok)}", sum(ok.values()) > len(ok) / 2


def too_much_lambda(metric: str):
    def rule(ev):
        missing = _need_sweep(ev)
        if missing:
            return "–", missing
        v = _sweep(ev, metric)
        top, best = max(v), min(v, key=v.get)
        return (f"{NAMES.get(metric, metric)} pre T: lowest {v[best]:.2f} at λ={best:g}; at λ={top:g} {v[top]:.2f}",
                v[top] > v[best])
    return rule


def one_best_lambda(ev):
    missing = _need_sweep(ev)
    if missing:
        return "–", missing
    best = {f"{NAMES[m]} {'post' if s else 'pre'}": min(d := _sweep(ev, m, s), key=d.get)
            for m in ("ece", "adaece", "classwise_ece") for s in (False, True)}
    return "best λ: " + ", ".join(f"{k} {v:g}" for k, v in best.items()), len(set(best.values())) == 1


# ----------------------------------------------------------------------------- App. A.11 (Fig. 7)
def toy_smoother(ev):
    """Read two ways: the boundary's *shape* (FCL's 0.5 boundary shorter: it bends less around
    hard samples) and the *transition* (FCL's probabilities change more gradually across the
    boundary: a larger share of the plane with 0.25 < p < 0.75)."""
    if ev.toy is None:
        return "–", untested(ev.why("toy"))
    m = ev.toy.groupby("method")[["boundary_length", "uncertain_share"]].mean()
    t = ev.toy.pivot(index="seed", columns="method", values="boundary_length")
    wins = int((t["FCL"] < t["FL"]).sum())
    text = (f"mean over {len(t)} seeds: 0.5-boundary length FL {m.loc['FL', 'boundary_length']:.2f}, FCL "
            f"{m.loc['FCL', 'boundary_length']:.2f} (FCL shorter on {wins}/{len(t)} seeds); share of the plane "
            f"with 0.25 < p < 0.75: FL {m.loc['FL', 'uncertain_share']:.1f} %, "
            f"FCL {m.loc['FCL', 'uncertain_share']:.1f} %")
    return text, readings(
        boundary_shape=bool(m.loc["FCL", "boundary_length"] < m.loc["FL", "boundary_length"]),
        probability_transition=bool(m.loc["FCL", "uncertain_share"] > m.loc["FL", "uncertain_share"]))


def toy_balance(max_extra_error: float):
    def rule(ev):
        if ev.toy is None:
            return "–", untested(ev.why("toy"))
        m = ev.toy.groupby("method")[["error", "ece"]].mean()
        return (f"mean over seeds: ECE % FL {m.loc['FL', 'ece']:.2f}, FCL {m.loc['FCL', 'ece']:.2f}; error % FL "
                f"{m.loc['FL', 'error']:.2f}, FCL {m.loc['FCL', 'error']:.2f}",
                m.loc["FCL", "ece"] < m.loc["FL", "ece"] and m.loc["FCL", "error"] <= m.loc["FL", "error"]
                + max_extra_error)
    return rule
