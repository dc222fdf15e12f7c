"""Tests of replicate.losses against hand-computed values, direct formulas and autograd."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from replicate import losses as L

D = torch.float64

NAMES = ["cross_entropy", "brier", "mmce", "label_smoothing", "focal", "flsd53", "flsd532", "fls531",
         "fls532", "calfocal", "adafocal", "inverse_focal", "dual_focal", "adadual_focal", "fcl"]


def rand_batch(n=24, k=5, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, k, generator=g, dtype=D) * scale, torch.randint(0, k, (n,), generator=g)


def softmax_direct(z):
    e = torch.exp(z - z.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)


def logits_of(probs):
    return torch.log(torch.tensor(probs, dtype=torch.float64))


# ---------------------------------------------------------------- registry and validation
def test_registry_names():
    assert L.available_losses() == NAMES
    assert set(L.LOSSES) == set(NAMES)
    for n in NAMES:
        loss = L.get_loss(n)
        assert isinstance(loss, L.CalibrationLoss) and isinstance(loss, torch.nn.Module)
        cfg = loss.config()
        assert cfg["name"] == n and json.loads(json.dumps(cfg)) == cfg
        again = L.get_loss(n, **{k: v for k, v in cfg.items() if k != "name"})
        assert again.config() == cfg


def test_unknown_name_lists_available():
    with pytest.raises(ValueError, match="unknown loss 'focall'.*cross_entropy.*adadual_focal"):
        L.get_loss("focall")


@pytest.mark.parametrize("name, params, param", [
    ("focal", {"gama": 2}, "gama"),
    ("focal", {"gamma": -1.0}, "gamma"),
    ("focal", {"gamma": float("nan")}, "gamma"),
    ("focal", {"gamma": "3"}, "gamma"),
    ("cross_entropy", {"reduction": "avg"}, "reduction"),
    ("label_smoothing", {"smoothing": 1.0}, "smoothing"),
    ("mmce", {"lam": -2.0}, "lam"),
    ("mmce", {"normalization": "other"}, "normalization"),
    ("flsd53", {"thresholds": (0.5, 0.2), "gammas": (5, 3, 2)}, "thresholds"),
    ("flsd53", {"thresholds": (1.2,), "gammas": (5, 3)}, "thresholds"),
    ("fls532", {"milestones": (250, 100)}, "milestones"),
    ("calfocal", {"case": 3}, "case"),
    ("calfocal", {"case": True}, "case"),
    ("adafocal", {"num_bins": 0}, "num_bins"),
    ("adafocal", {"gamma_min": 5.0, "gamma_max": 2.0}, "gamma_max"),
    ("adafocal", {"gamma_init": 30.0}, "gamma_init"),
    ("adafocal", {"variant": "paper", "gamma_init": -1.0}, "gamma_init"),
    ("adafocal", {"variant": "ours"}, "variant"),
    ("adafocal", {"bin_rule": "closed"}, "bin_rule"),
    ("dual_focal", {"k": 0, "variant": "kth"}, "k"),
    ("dual_focal", {"variant": "largest", "k": 2}, "k"),
    ("dual_focal", {"variant": "fixed", "offset": 1.5}, "offset"),
    ("dual_focal", {"variant": "largest", "offset": 0.1}, "offset"),
    ("adadual_focal", {"bin_key": "top1"}, "bin_key"),
    ("fcl", {"brier_scale": "max"}, "brier_scale"),
])
def test_bad_parameters_rejected(name, params, param):
    with pytest.raises(ValueError, match=f"'{param}'"):
        L.get_loss(name, **params)


def test_bad_inputs_rejected():
    loss = L.get_loss("focal")
    with pytest.raises(ValueError, match="logits"):
        loss(torch.zeros(4), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="targets"):
        loss(torch.zeros(4, 3), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="integer"):
        loss(torch.zeros(4, 3), torch.zeros(4))
    with pytest.raises(ValueError, match="k = 9"):
        L.get_loss("dual_focal", variant="kth", k=9)(torch.zeros(4, 3), torch.zeros(4, dtype=torch.long))


# ---------------------------------------------------------------- hand-computed values
def test_hand_values_two_class():
    z, y = logits_of([[0.25, 0.75]]), torch.tensor([1])
    lp = math.log(0.75)
    assert float(L.get_loss("cross_entropy")(z, y)) == pytest.approx(-lp, rel=1e-12)
    assert float(L.get_loss("focal", gamma=2)(z, y)) == pytest.approx(-(0.25**2) * lp, rel=1e-12)
    assert float(L.get_loss("inverse_focal", gamma=2)(z, y)) == pytest.approx(-(1.75**2) * lp, rel=1e-12)
    assert float(L.get_loss("brier")(z, y)) == pytest.approx(2 * 0.25**2, rel=1e-12)
    ls = -(0.05 * math.log(0.25) + 0.95 * math.log(0.75))
    assert float(L.get_loss("label_smoothing", smoothing=0.1)(z, y)) == pytest.approx(ls, rel=1e-12)
    fcl = -(0.25**2) * lp + 0.5 * 2 * 0.25**2
    assert float(L.get_loss("fcl", gamma=2, lam=0.5)(z, y)) == pytest.approx(fcl, rel=1e-12)
    fcl_k = -(0.25**2) * lp + 0.5 * 2 * 0.25**2 / 2
    assert float(L.get_loss("fcl", gamma=2, lam=0.5, brier_scale="mean")(z, y)) == pytest.approx(fcl_k, rel=1e-12)


def test_hand_values_dual_focal():
    z = logits_of([[0.5, 0.3, 0.2]] * 3)
    y = torch.tensor([0, 1, 2])
    g = 2.0
    lp = [math.log(0.5), math.log(0.3), math.log(0.2)]

    def total(dual):
        return sum(-(1 - p + d) ** g * l for p, d, l in zip([0.5, 0.3, 0.2], dual, lp))

    cases = {
        ("largest", 1, 0.0): [0.3, 0.2, 0.0],
        ("kth", 2, 0.0): [0.2, 0.0, 0.0],
        ("mean_topk", 2, 0.0): [0.25, 0.2, 0.0],
        ("mean_topk", "all", 0.0): [0.25, 0.2, 0.0],
        ("fixed", 1, 0.1): [0.1, 0.1, 0.1],
        ("sum_topk", 2, 0.0): [0.5, 0.2, 0.0],
        ("batch_mean_sum_topk", 2, 0.0): [0.7 / 3] * 3,
    }
    for (variant, k, off), dual in cases.items():
        got = L.get_loss("dual_focal", gamma=g, variant=variant, k=k, offset=off, reduction="sum")(z, y)
        assert float(got) == pytest.approx(total(dual), rel=1e-12), variant


def test_dual_focal_ties_are_not_below():
    z, y = logits_of([[0.4, 0.4, 0.2]]), torch.tensor([0])
    want = -(1 - 0.4 + 0.2) ** 3 * math.log(0.4)
    assert float(L.get_loss("dual_focal", gamma=3)(z, y)) == pytest.approx(want, rel=1e-12)


def test_hand_values_mmce():
    # three samples: two correct (conf 0.9, 0.6), one incorrect (conf 0.7)
    z = logits_of([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7]])
    y = torch.tensor([0, 0, 0])
    rc, ri = [0.9, 0.6], [0.7]
    k = lambda a, b: math.exp(-abs(a - b) / 0.4)  # noqa: E731
    a = sum((1 - u) * (1 - v) * k(u, v) for u in rc for v in rc)
    b = sum(u * v * k(u, v) for u in ri for v in ri)
    x = sum((1 - u) * v * k(u, v) for u in rc for v in ri)
    m, n = 2, 1
    kumar = math.sqrt(a / m**2 + b / n**2 - 2 * x / (m * n) + 1e-10)
    ref = math.sqrt(a / m**2 / (m * m + 1e-5) + b / n**2 / (n * n + 1e-5) - 2 * x / (m * n) / (m * n + 1e-5) + 1e-10)
    assert float(L.mmce_weighted(z, y, normalization="kumar")) == pytest.approx(kumar, rel=1e-10)
    assert float(L.mmce_weighted(z, y)) == pytest.approx(ref, rel=1e-10)
    ce = -(math.log(0.9) + math.log(0.6) + math.log(0.3)) / 3
    assert float(L.get_loss("mmce", lam=2, reduction="sum")(z, y)) == pytest.approx(3 * (ce + 2 * ref), rel=1e-10)
    assert float(L.get_loss("mmce", lam=2)(z, y)) == pytest.approx(ce + 2 * ref, rel=1e-10)


def test_mmce_zero_without_incorrect_and_finite_gradient():
    z = logits_of([[0.9, 0.1], [0.6, 0.4]]).requires_grad_(True)
    y = torch.tensor([0, 0])
    assert float(L.mmce_weighted(z.detach(), y)) == 0.0
    loss = L.get_loss("mmce", reduction="sum")(z, y)
    (grad,) = torch.autograd.grad(loss, z)
    assert torch.isfinite(grad).all()
    ce_grad = torch.autograd.grad(F.cross_entropy(z, y, reduction="sum"), z)[0]
    assert torch.allclose(grad, ce_grad)


# ---------------------------------------------------------------- identities and oracles
def test_focal_gamma_zero_is_cross_entropy():
    z, y = rand_batch()
    ce = F.cross_entropy(z, y, reduction="sum")
    for loss in (L.get_loss("focal", gamma=0, reduction="sum"), L.get_loss("flsd53", gammas=(0, 0), reduction="sum"),
                 L.get_loss("adafocal", gamma_init=0.0, reduction="sum"),
                 L.get_loss("fcl", gamma=0, lam=0, reduction="sum"),
                 L.get_loss("inverse_focal", gamma=0, reduction="sum"), L.get_loss("cross_entropy", reduction="sum")):
        assert torch.allclose(loss(z, y), ce, rtol=1e-12), loss.name


def test_label_smoothing_matches_torch():
    z, y = rand_batch()
    want = F.cross_entropy(z, y, label_smoothing=0.05, reduction="sum")
    assert torch.allclose(L.get_loss("label_smoothing", reduction="sum")(z, y), want, rtol=1e-12)
    assert torch.allclose(L.get_loss("label_smoothing")(z, y), want / len(y), rtol=1e-12)


def test_dual_fixed_zero_is_focal():
    z, y = rand_batch()
    assert torch.allclose(L.get_loss("dual_focal", gamma=2.5, variant="fixed", offset=0.0)(z, y),
                          L.get_loss("focal", gamma=2.5)(z, y), rtol=1e-12)


def test_reductions():
    """mean (the default, as torch.nn), sum and none: sum = N mean = the sum of the per-sample values."""
    z, y = rand_batch(n=10)
    for n in NAMES:
        s = L.get_loss(n, reduction="sum")(z, y)
        m = L.get_loss(n, reduction="mean")(z, y)
        per = L.get_loss(n, reduction="none")(z, y)
        assert L.get_loss(n).reduction == "mean" and torch.equal(L.get_loss(n)(z, y), m), n
        assert s.shape == m.shape == () and per.shape == (10,), n
        assert torch.allclose(s, 10 * m, rtol=1e-12), n
        assert torch.allclose(per.sum(), s, rtol=1e-12) and torch.allclose(per.mean(), m, rtol=1e-12), n
    # the papers' code's reductions, which the book's runs pass explicitly
    assert {n: L.paper_reduction(n) for n in NAMES} == {n: "mean" if n in ("brier", "fcl") else "sum" for n in NAMES}
    with pytest.raises(ValueError, match=r"'reduction' must be one of \['mean', 'sum', 'none'\]; got 'avg'"):
        L.get_loss("focal", reduction="avg")
    with pytest.raises(ValueError, match="unknown loss 'focall'"):
        L.paper_reduction("focall")


# ---------------------------------------------------------------- gradients vs direct formulas
def _direct(name, z, y, **kw):
    """Per-sample losses written from the papers' formulas, with an explicit softmax."""
    p = softmax_direct(z)
    pt = p[torch.arange(len(y)), y]
    onehot = F.one_hot(y, z.shape[1]).to(z.dtype)
    if name == "focal":
        return -(1 - pt) ** kw["gamma"] * torch.log(pt)
    if name == "flsd53":
        g = torch.tensor([5.0 if float(v) < 0.2 else 3.0 for v in pt.detach()], dtype=D)
        return -(1 - pt) ** g * torch.log(pt)
    if name == "flsd532":
        g = torch.tensor([5.0 if float(v) < 0.2 else 3.0 if float(v) < 0.5 else 2.0 for v in pt.detach()], dtype=D)
        return -(1 - pt) ** g * torch.log(pt)
    if name == "brier":
        return ((p - onehot) ** 2).sum(1)
    if name == "label_smoothing":
        q = onehot * 0.95 + 0.05 / z.shape[1]
        return -(q * torch.log(p)).sum(1)
    if name == "inverse_focal":
        return -(1 + pt) ** kw["gamma"] * torch.log(pt)
    if name == "fcl":
        return -(1 - pt) ** kw["gamma"] * torch.log(pt) + kw["lam"] * ((p - onehot) ** 2).sum(1)
    if name == "dual_focal":
        rows = []
        for i in range(len(y)):
            below = [j for j in range(z.shape[1]) if p[i, j].item() < pt[i].item()]
            pj = p[i, max(below, key=lambda j: p[i, j].item())] if below else torch.zeros((), dtype=D)
            rows.append(-(1 - pt[i] + pj) ** kw["gamma"] * torch.log(pt[i]))
        return torch.stack(rows)
    raise KeyError(name)


@pytest.mark.parametrize("name, kw", [
    ("focal", {"gamma": 3.0}), ("focal", {"gamma": 0.5}), ("flsd53", {}), ("flsd532", {}), ("brier", {}),
    ("label_smoothing", {}), ("inverse_focal", {"gamma": 2.0}), ("fcl", {"gamma": 2.0, "lam": 1.0}),
    ("dual_focal", {"gamma": 2.6}),
])
def test_gradient_matches_direct_formula(name, kw):
    z, y = rand_batch(n=16, k=6, seed=3)
    z1 = z.clone().requires_grad_(True)
    z2 = z.clone().requires_grad_(True)
    loss = L.get_loss(name, reduction="sum", **kw)
    g1 = torch.autograd.grad(loss(z1, y), z1)[0]
    direct = _direct(name, z2, y, **kw)
    g2 = torch.autograd.grad(direct.sum(), z2)[0]
    assert torch.allclose(loss(z, y), direct.sum().detach(), rtol=1e-10)
    assert torch.allclose(g1, g2, rtol=1e-9, atol=1e-12)


def _mmce_direct(z, y, normalization):
    """Weighted MMCE from separate correct / incorrect confidence lists (as the reference code)."""
    p = softmax_direct(z)
    r, pred = p.max(1)
    ok = pred == y
    rc, ri = r[ok], r[~ok]
    m, n = len(rc), len(ri)
    kern = lambda a, b: torch.exp(-(a[:, None] - b[None, :]).abs() / 0.4)  # noqa: E731
    a = ((1 - rc)[:, None] * (1 - rc)[None, :] * kern(rc, rc)).sum()
    b = (ri[:, None] * ri[None, :] * kern(ri, ri)).sum()
    x = ((1 - rc)[:, None] * ri[None, :] * kern(rc, ri)).sum()
    if normalization == "kumar":
        mmd = a / m**2 + b / n**2 - 2 * x / (m * n)
    else:
        mmd = a / m**2 / (m * m + 1e-5) + b / n**2 / (n * n + 1e-5) - 2 * x / (m * n) / (m * n + 1e-5)
    ce = -torch.log(p[torch.arange(len(y)), y]).mean()
    return len(y) * (ce + 2.0 * torch.sqrt(mmd + 1e-10))


@pytest.mark.parametrize("normalization", ["reference", "kumar"])
def test_mmce_gradient_matches_direct_formula(normalization):
    z, y = rand_batch(n=20, k=4, seed=11, scale=1.5)
    z1, z2 = z.clone().requires_grad_(True), z.clone().requires_grad_(True)
    ours = L.get_loss("mmce", normalization=normalization, reduction="sum")(z1, y)
    direct = _mmce_direct(z2, y, normalization)
    assert torch.allclose(ours, direct, rtol=1e-10)
    g1, g2 = torch.autograd.grad(ours, z1)[0], torch.autograd.grad(direct, z2)[0]
    assert torch.allclose(g1, g2, rtol=1e-8, atol=1e-12)


def test_float32_agrees_with_float64():
    z, y = rand_batch(n=32, k=10, seed=12, scale=2.0)
    for n in NAMES:
        loss = L.get_loss(n)
        z64, z32 = z.clone().requires_grad_(True), z.float().requires_grad_(True)
        v64, v32 = loss(z64, y), loss(z32, y)
        g64, g32 = torch.autograd.grad(v64, z64)[0], torch.autograd.grad(v32, z32)[0]
        assert v32.dtype == torch.float32
        assert v32.item() == pytest.approx(v64.item(), rel=1e-5), n
        assert torch.allclose(g32.double(), g64, rtol=1e-3, atol=1e-5), n


def _g_direct(p, gamma):
    return (1 - p) ** gamma - gamma * p * (1 - p) ** (gamma - 1) * math.log(p)


@pytest.mark.parametrize("gamma", [1.0, 2.0, 3.0, 5.0])
def test_mukhoti_proposition_1(gamma):
    """Last-layer gradient of focal loss = g(p, gamma) x that of cross-entropy, per sample."""
    gen = torch.Generator().manual_seed(7)
    feats = torch.randn(6, 4, generator=gen, dtype=D)
    w = torch.randn(3, 4, generator=gen, dtype=D).requires_grad_(True)
    ys = torch.randint(0, 3, (6,), generator=gen)
    focal, ce = L.get_loss("focal", gamma=gamma), L.get_loss("cross_entropy")
    try:
        from replicate.theory import focal_gradient_factor
    except (ImportError, AttributeError):
        focal_gradient_factor = None
    for x, y in zip(feats, ys):
        gf = torch.autograd.grad(focal((w @ x)[None], y[None]), w)[0]
        gc = torch.autograd.grad(ce((w @ x)[None], y[None]), w)[0]
        z = (w @ x)[None].detach()
        p = float(torch.softmax(z, 1)[0, y])
        g = _g_direct(p, gamma)
        assert torch.allclose(gf, g * gc, rtol=1e-10, atol=1e-14)
        if focal_gradient_factor is not None:
            assert float(np.asarray(focal_gradient_factor(p, gamma))) == pytest.approx(g, rel=1e-9)


# ---------------------------------------------------------------- scheduled gamma
def test_scheduled_focal_switches():
    fls = L.get_loss("fls532")
    got = [fls.gamma_at(e, 350) for e in (0, 99, 100, 249, 250, 349)]
    assert got == [5.0, 5.0, 3.0, 3.0, 2.0, 2.0]
    assert [L.get_loss("fls531").gamma_at(e, 350) for e in (99, 100, 250)] == [5.0, 3.0, 1.0]
    assert [fls.gamma_at(e, 35) for e in (9, 10, 24, 25)] == [5.0, 3.0, 3.0, 2.0]
    z, y = rand_batch()
    fls.on_epoch_start(120, 350)
    assert torch.allclose(fls(z, y), L.get_loss("focal", gamma=3)(z, y))
    resumed = L.get_loss("fls532")
    resumed.load_state_dict(fls.state_dict())
    assert torch.allclose(resumed(z, y), fls(z, y))
    with pytest.raises(ValueError, match="'epoch'"):
        fls.on_epoch_start(-1, 350)


def test_flsd_boundaries_follow_reference_code():
    f53, f532 = L.get_loss("flsd53"), L.get_loss("flsd532")
    p = torch.tensor([0.0, 0.19999, 0.2, 0.49999, 0.5, 1.0], dtype=D)
    assert f53.gamma_of(p).tolist() == [5, 5, 3, 3, 3, 3]
    assert f532.gamma_of(p).tolist() == [5, 5, 3, 3, 2, 2]


# ---------------------------------------------------------------- AdaFocal gamma dynamics
def test_adafocal_gamma_update_hand_values():
    gamma = np.array([1.0, 0.25, -0.5, 19.0, -1.9, 0.1, 3.0])
    gap = np.array([0.1, -1.0, 0.3, 0.5, -1.0, 0.0, np.nan])
    want_code = [math.exp(0.1), -0.2, -0.5 * math.exp(-0.3), 20.0, -2.0, -0.2, 3.0]
    got = L.adafocal_gamma_update(gamma, gap)
    assert np.allclose(got, want_code, rtol=1e-12)
    got_t = L.adafocal_gamma_update(torch.tensor(gamma), torch.tensor(gap))
    assert isinstance(got_t, torch.Tensor) and np.allclose(got_t.numpy(), want_code, rtol=1e-12)
    want_paper = [math.exp(0.1), 0.25 * math.exp(-1), -0.5 * math.exp(0.3), 20.0, -1.9 * math.exp(-1), 0.1, 3.0]
    assert np.allclose(L.adafocal_gamma_update(gamma, gap, variant="paper"), want_paper, rtol=1e-12)
    want_lam = [2.0 * math.exp(2 * 0.05)]
    assert np.allclose(L.adafocal_gamma_update(np.array([2.0]), np.array([0.05]), lam=2.0), want_lam)
    with pytest.raises(ValueError, match="'variant'"):
        L.adafocal_gamma_update(gamma, gap, variant="x")


def _val_set(conf, correct):
    """Two-class logits with top-1 confidence ``conf`` (> 0.5) and the given correctness."""
    conf = np.asarray(conf, dtype=float)
    z = torch.tensor(np.stack([np.log(conf / (1 - conf)), np.zeros_like(conf)], axis=1))
    y = torch.tensor(np.where(correct, 0, 1))
    return z, y


def _brute_bins(conf, edges, rule):
    m = len(edges) - 1
    out = []
    for c in conf:
        b = -1
        if rule == "inclusive":
            for i in range(m):
                lo, hi = edges[i], edges[i + 1]
                if (i == 0 and c < hi) or (i == m - 1 and c >= lo) or (lo <= c < hi):
                    b = i
                    break
        else:
            for i in range(m):
                if edges[i] < c <= edges[i + 1]:
                    b = i
                    break
        out.append(b)
    return np.array(out)


def _float32_confidences(z):
    """Top-1 confidence and prediction as the AdaFocal authors' evaluation computes them:
    ``exp(max(log_softmax))`` on float32 logits (float32 results)."""
    logc, pred = torch.log_softmax(z.float(), dim=1).max(dim=1)
    return logc.exp().numpy(), pred.numpy()


def _authors_update(z, y, num_bins, gamma, lam=1.0, switch=0.2, gmin=-2.0, gmax=20.0):
    """An independent transcription of the AdaFocal authors' per-epoch update (their adaECE
    binning and update_bin_stats), with explicit float32 numpy arithmetic and Python loops:
    returns (float64 edges, float32 edges, counts, gaps, new gammas)."""
    conf, pred = _float32_confidences(z)
    y = y.numpy()
    n = len(conf)
    edges = np.interp(np.linspace(0, n, num_bins + 1), np.arange(n), np.sort(conf))
    e32 = edges.astype(np.float32)
    counts, gaps, new = [], [], []
    for b in range(num_bins):
        members = [i for i in range(n) if conf[i] > e32[b] and conf[i] <= e32[b + 1]]
        if members:
            c = float(np.mean(conf[members], dtype=np.float32))
            a = float(np.mean((pred[members] == y[members]).astype(np.float32), dtype=np.float32))
        else:
            c = a = 0.0  # their bin dictionary's zeros
        gap = c - a
        g = gamma[b]
        g = g * math.exp(lam * gap) if g > 0 else g * math.exp(-lam * gap)
        if abs(g) < switch:
            g = -switch if g > 0 else switch
        counts.append(len(members))
        gaps.append(gap)
        new.append(min(max(g, gmin), gmax))
    return edges, e32.astype(np.float64), np.array(counts), np.array(gaps), np.array(new)


def test_adafocal_update_from_constructed_validation():
    rng = np.random.default_rng(0)
    conf = np.round(rng.uniform(0.51, 0.99, 40), 3)
    conf[:4] = conf[4]  # ties
    correct = rng.uniform(size=40) < conf
    z, y = _val_set(conf, correct)
    loss = L.get_loss("adafocal", num_bins=5, bin_rule="inclusive")
    diag = loss.update_from_validation(z, y)
    edges = np.interp(np.linspace(0, 40, 6), np.arange(40), np.sort(conf))
    assert np.allclose(diag["edges"], edges, rtol=0, atol=1e-12)
    bins = _brute_bins(conf, edges, "inclusive")
    count = np.array([(bins == b).sum() for b in range(5)])
    assert np.array_equal(diag["count"], count)
    gap = np.array([conf[bins == b].mean() - correct[bins == b].mean() if count[b] else np.nan for b in range(5)])
    assert np.allclose(diag["gap"], gap, equal_nan=True, rtol=1e-12)
    want = []
    for e in gap:
        g = 1.0 if np.isnan(e) else 1.0 * math.exp(e)
        want.append(g if abs(g) >= 0.2 else -0.2)
    assert np.allclose(diag["gamma"], want, rtol=1e-12)
    assert np.allclose(loss.gamma.numpy(), want) and loss.n_updates.item() == 1
    assert set(diag) >= {"gamma", "gap", "edges", "count"}


def test_adafocal_reference_rule_is_the_authors_float32_update():
    """bin_rule="reference" on ties and ordinary confidences: edges, counts, gaps and gammas
    of the authors' float32 procedure (independent transcription above), over three epochs."""
    rng = np.random.default_rng(0)
    conf = np.round(rng.uniform(0.51, 0.99, 40), 3)
    conf[:4] = conf[4]
    z, y = _val_set(conf, rng.uniform(size=40) < conf)
    loss = L.get_loss("adafocal", num_bins=5, bin_rule="reference")
    gamma = [1.0] * 5
    for epoch in range(3):
        zz = z + 0.3 * epoch  # the top-1 class keeps its index; confidences move
        edges, e32, counts, gaps, gamma = _authors_update(zz, y, 5, gamma)
        diag = loss.update_from_validation(zz, y)
        assert np.array_equal(diag["edges"], edges) and np.array_equal(diag["edges_float32"], e32)
        assert np.array_equal(diag["count"], counts)
        assert np.allclose(np.nan_to_num(diag["gap"]), gaps, rtol=1e-6, atol=1e-7)
        assert np.allclose(diag["gamma"], gamma, rtol=1e-6)
        assert np.array_equal(loss.edges.numpy(), edges)  # training looks up the float64 edges


def test_adafocal_reference_rule_with_saturated_confidences():
    """Issue #10 item 9 / PROTOCOL.md: when most validation confidences are 1.0 in float32, the
    authors' equal-mass edges pile up at 1.0, the bins between equal edges are empty, and the
    gammas differ from the float64 computation - bin_rule="reference" does what they do."""
    rng = np.random.default_rng(7)
    n, m = 300, 15
    margin = np.where(np.arange(n) < 180, rng.uniform(20.0, 30.0, n), rng.uniform(0.5, 6.0, n))
    z = torch.tensor(np.stack([margin, np.zeros(n)], axis=1))
    correct = rng.uniform(size=n) < 0.93
    y = torch.tensor(np.where(correct, 0, 1))
    p64 = torch.softmax(z, dim=1).max(dim=1).values.numpy()
    c32, _ = _float32_confidences(z)
    assert (c32 == 1.0).sum() == 180 and (p64[:180] < 1.0).all() and len(np.unique(p64[:180])) == 180
    ref = L.get_loss("adafocal", num_bins=m, bin_rule="reference")
    f64 = L.get_loss("adafocal", num_bins=m, bin_rule="inclusive")
    d_ref, d_64 = ref.update_from_validation(z, y), f64.update_from_validation(z, y)
    edges, e32, counts, gaps, gamma = _authors_update(z, y, m, [1.0] * m)
    # the float32 edges: the top nine coincide at 1.0 ...
    assert np.array_equal(d_ref["edges_float32"], e32) and (e32 == 1.0).sum() >= 9
    # ... so the bins between them are empty and one bin takes every saturated sample
    assert np.array_equal(d_ref["count"], counts) and (counts == 0).sum() >= 8 and counts.max() >= 180
    assert np.allclose(d_ref["gamma"], gamma, rtol=1e-6)
    empty = counts == 0
    assert np.allclose(d_ref["gamma"][empty], 1.0)  # gap 0 in the authors' empty bin: gamma * exp(0)
    # float64: distinct confidences, every bin filled, other gammas where float32 left bins empty
    assert (d_64["count"] > 0).all()
    assert not np.allclose(d_64["gamma"][empty], d_ref["gamma"][empty], rtol=1e-3)


def test_adafocal_training_lookup_matches_reference_rule():
    loss = L.get_loss("adafocal", num_bins=4, reduction="sum")
    loss.edges.copy_(torch.tensor([0.55, 0.6, 0.7, 0.9, 0.95], dtype=D))
    loss.gamma.copy_(torch.tensor([4.0, -0.5, 2.0, 0.3], dtype=D))
    z, y = rand_batch(n=40, k=3, seed=5, scale=2.0)
    p = softmax_direct(z)[torch.arange(40), y]
    bins = _brute_bins(p.numpy(), loss.edges.numpy(), "inclusive")
    g = loss.gamma.numpy()[bins]
    want = [(-(1 - pi) ** gi if gi >= 0 else -(1 + pi) ** abs(gi)) * math.log(pi) for pi, gi in zip(p.tolist(), g)]
    assert np.allclose(loss.per_sample(z, y).detach().numpy(), want, rtol=1e-10)
    # gradient: gamma detached, p_true not detached
    z1 = z.clone().requires_grad_(True)
    grad = torch.autograd.grad(loss(z1, y), z1)[0]
    z2 = z.clone().requires_grad_(True)
    pt = softmax_direct(z2)[torch.arange(40), y]
    gt = torch.tensor(g, dtype=D)
    direct = torch.where(gt >= 0, (1 - pt) ** gt.abs(), (1 + pt) ** gt.abs()) * -torch.log(pt)
    assert torch.allclose(grad, torch.autograd.grad(direct.sum(), z2)[0], rtol=1e-9, atol=1e-12)


def test_adafocal_resume_is_identical():
    rng = np.random.default_rng(1)
    conf = rng.uniform(0.5, 1.0, 60)
    zv, yv = _val_set(conf, rng.uniform(size=60) < conf ** 2)
    zt, yt = rand_batch(n=32, k=2, seed=2)
    for name in ("adafocal", "adadual_focal", "calfocal"):
        a = L.get_loss(name)
        a.update_from_validation(zv, yv)
        b = L.get_loss(name)
        b.load_state_dict(a.state_dict())
        assert torch.equal(a(zt, yt), b(zt, yt)), name
        da, db = a.update_from_validation(zv[:30], yv[:30]), b.update_from_validation(zv[:30], yv[:30])
        assert all(np.array_equal(da[k], db[k], equal_nan=True) for k in da), name


def test_adafocal_paper_variant_has_no_sign_switch():
    loss = L.get_loss("adafocal", variant="paper", num_bins=1)
    zv, yv = _val_set([0.6] * 10, [True] * 10)  # gap = 0.6 - 1 = -0.4 every epoch
    for _ in range(12):
        loss.update_from_validation(zv, yv)
    assert float(loss.gamma[0]) == pytest.approx(math.exp(-0.4 * 12), rel=1e-12)
    code = L.get_loss("adafocal", variant="code", num_bins=1)
    for _ in range(12):
        code.update_from_validation(zv, yv)
    g = 1.0
    for _ in range(12):
        g = g * math.exp(-0.4) if g > 0 else g * math.exp(0.4)
        g = (-0.2 if g > 0 else 0.2) if abs(g) < 0.2 else g
        g = min(max(g, -2.0), 20.0)
    assert float(code.gamma[0]) == pytest.approx(g, rel=1e-12)


def test_calfocal_cases():
    rng = np.random.default_rng(4)
    conf = rng.uniform(0.5, 1.0, 30)
    correct = rng.uniform(size=30) < 0.7
    zv, yv = _val_set(conf, correct)
    c2 = L.get_loss("calfocal", case=2, lam=10.0, num_bins=3)
    d = c2.update_from_validation(zv, yv)
    assert np.allclose(d["gamma"], np.exp(10.0 * d["gap"]), rtol=1e-12)
    c1 = L.get_loss("calfocal", case=1, lam=5.0, num_bins=3)
    # before any update: A = bin midpoints of equal-width bins
    z, y = rand_batch(n=20, k=2, seed=9)
    p = softmax_direct(z)[torch.arange(20), y].numpy()
    b0 = np.minimum((p * 3).astype(int), 2)
    mid = (np.arange(3) + 0.5) / 3
    want = -(1 - p) ** np.exp(5.0 * (p - mid[b0])) * np.log(p)
    assert np.allclose(c1.per_sample(z, y).detach().numpy(), want, rtol=1e-10)
    d1 = c1.update_from_validation(zv, yv)
    b1 = _brute_bins(p, d1["edges"], "inclusive")
    want = -(1 - p) ** np.exp(5.0 * (p - d1["accuracy"][b1])) * np.log(p)
    assert np.allclose(c1.per_sample(z, y).detach().numpy(), want, rtol=1e-10)


def test_adadual_focal_margin_key():
    loss = L.get_loss("adadual_focal", num_bins=3, gamma_init=2.0)
    loss.edges.copy_(torch.tensor([0.0, 0.3, 0.6, 1.0], dtype=D))
    loss.gamma.copy_(torch.tensor([1.0, 2.0, 3.0], dtype=D))
    z = logits_of([[0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.45, 0.35, 0.2]])
    y = torch.tensor([0, 0, 1])
    # margins p_y - p_j: 0.2 -> bin 0, 0.5 -> bin 1, 0.15 -> bin 0
    want = [-(1 - 0.5 + 0.3) ** 1 * math.log(0.5), -(1 - 0.7 + 0.2) ** 2 * math.log(0.7),
            -(1 - 0.35 + 0.2) ** 1 * math.log(0.35)]
    assert np.allclose(loss.per_sample(z, y).detach().numpy(), want, rtol=1e-10)
    by_p = L.get_loss("adadual_focal", num_bins=3, bin_key="p_true")
    by_p.edges.copy_(loss.edges)
    by_p.gamma.copy_(loss.gamma)
    # p_y: 0.5 -> bin 1, 0.7 -> bin 2, 0.35 -> bin 1
    want = [-(0.8) ** 2 * math.log(0.5), -(0.5) ** 3 * math.log(0.7), -(0.85) ** 2 * math.log(0.35)]
    assert np.allclose(by_p.per_sample(z, y).detach().numpy(), want, rtol=1e-10)


def test_equal_mass_edges_match_numpy_interp():
    rng = np.random.default_rng(3)
    for n, m in [(1, 3), (7, 15), (100, 15), (5000, 15)]:
        c = rng.uniform(0, 1, n)
        c[: n // 3] = c[0]
        want = np.interp(np.linspace(0, n, m + 1), np.arange(n), np.sort(c))
        assert np.allclose(L.equal_mass_edges(torch.tensor(c), m).numpy(), want, rtol=0, atol=1e-15)


# ---------------------------------------------------------------- health checks
def test_check_finite_detects_nan_and_resets():
    loss = L.get_loss("focal")
    z, y = rand_batch(n=4)
    assert loss.check_finite() is True
    bad = z.clone()
    bad[0, 0] = float("nan")
    assert not torch.isfinite(loss(bad, y))
    loss(z, y)
    with pytest.raises(L.LossDivergedError, match="NaN or infinite in 1 training step"):
        loss.check_finite()
    assert loss.check_finite() is True
    ada = L.get_loss("adafocal")
    ada.gamma[3] = 50.0
    with pytest.raises(L.LossDivergedError, match="gamma"):
        ada.check_finite()
    with pytest.raises(L.LossDivergedError, match="validation logits"):
        ada.update_from_validation(bad, y)


def test_saturated_softmax_gives_finite_gradients():
    z = torch.tensor([[200.0, 0.0, -5.0], [0.0, 300.0, 1.0]], requires_grad=True)
    y = torch.tensor([0, 1])
    for n in NAMES:
        for extra in ({}, {"gamma": 0.3}) if n in ("focal", "fcl", "dual_focal") else ({},):
            loss = L.get_loss(n, **extra)
            val = loss(z, y)
            (g,) = torch.autograd.grad(val, z)
            assert torch.isfinite(val) and torch.isfinite(g).all(), (n, extra)
    ada = L.get_loss("adafocal")
    ada.gamma.fill_(0.2)
    assert torch.isfinite(torch.autograd.grad(ada(z, y), z)[0]).all()


def test_half_precision_logits():
    z, y = rand_batch(n=8)
    for n in NAMES:
        out = L.get_loss(n)(z.to(torch.bfloat16), y)
        assert out.dtype == torch.float32 and torch.isfinite(out), n


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU to detect host syncs")
def test_no_host_sync_in_forward_backward():
    dev = torch.device("cuda")
    z, y = rand_batch(n=128, k=10)
    z, y = z.float().to(dev), y.to(dev)
    for n in NAMES:
        loss = L.get_loss(n).to(dev)
        if loss.needs_validation:
            loss.update_from_validation(z, y)
        loss.on_epoch_start(3, 10)
        zz = z.clone().requires_grad_(True)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            loss(zz, y).backward()
        finally:
            torch.cuda.set_sync_debug_mode(0)
