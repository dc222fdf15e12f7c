"""What the training loop measures besides the loss: logits, per-split summaries, weight
and gradient norms.

``split_summary`` gives the quantities of Mukhoti et al. (2020), Figure 3: test NLL over
all, correctly and incorrectly classified samples (3a-c), the softmax entropy of the
misclassified samples (3d), the mean probability of the true class for correct and
incorrect samples (3e-f), next to the calibration metrics of :mod:`replicate.metrics`
(3g: ECE). ``fc_weight_norm`` is Figure 3(h), the L2 norm of the last linear layer's
weights. ``grad_norm_histogram`` is Figure 4(b-d): for a last layer ``z = W h + b`` the
per-sample gradient of the loss with respect to ``W`` is the outer product
``(dL_i/dz_i) h_i^T``, whose Frobenius norm is ``||dL_i/dz_i|| * ||h_i||`` - exact and
computed for every training sample from one forward pass, without per-sample backward
passes.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
import torch

#: log10 edges of the gradient-norm histograms (fixed so that epochs and losses compare).
GRAD_LOG10_EDGES = np.linspace(-8.0, 2.0, 51)


def _info(info, key, default=None):
    if isinstance(info, dict):
        return info.get(key, default)
    return getattr(info, key, default)


def autocast(device: torch.device, precision: str, cache: bool = True):
    """bf16 autocast context for ``precision == "bf16"``, else a null context (``cache=False``
    inside a CUDA-graph capture, as PyTorch requires)."""
    if precision == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16, cache_enabled=cache)
    return contextlib.nullcontext()


def forward_logits(model, xb: torch.Tensor, device: torch.device, precision: str, cache: bool = True) -> torch.Tensor:
    """float32 logits of a prepared batch.

    ``float32``: ``model(xb)``. ``bf16``: the network's trunk ``model.features`` runs under
    bf16 autocast and its last linear layer ``model.fc`` in float32 on the float32
    features, so that the logits - which the losses, the calibration metrics and
    temperature scaling read - are not rounded to bf16's 8-bit mantissa (a logit of 10
    would move in steps of 1/16). A model without ``features``/``fc`` runs whole under
    autocast.
    """
    if precision != "bf16":
        return model(xb).float()
    if not (hasattr(model, "features") and hasattr(model, "fc")):
        with autocast(device, precision, cache):
            return model(xb).float()
    with autocast(device, precision, cache):
        h = model.features(xb)
    return model.fc(h.float())


def prepare(xb: torch.Tensor, info, *, split: str = "train", augment: bool = False,
            generator=None) -> torch.Tensor:
    """A batch as the network sees it: images augmented (optional) then normalised on device
    (the test split with ``info.test_stats``, which differ only when a reference-code bug is
    switched on on purpose); text token ids unchanged."""
    if _info(info, "kind", "image") != "image":
        return xb
    from .. import data

    if augment:
        xb = data.augment(xb, generator=generator)
    mean, std = _info(info, "mean"), _info(info, "std")
    if split == "test" and hasattr(info, "test_stats"):
        mean, std = info.test_stats
    return data.normalize(xb, mean, std)


def loss_reduction(loss) -> str:
    """How ``loss`` reduces over the batch (``"sum"``, ``"mean"`` or ``"none"``; the book's page
    "The authors' code"); a loss that does not say is taken to sum.

    Parameters
    ----------
    loss : torch.nn.Module or callable
        A training loss (its ``reduction`` attribute or ``config()["reduction"]`` is read).
    """
    red = getattr(loss, "reduction", None)
    if red is None and hasattr(loss, "config"):
        red = loss.config().get("reduction")
    return red or "sum"


@torch.no_grad()
def predict(model, x: torch.Tensor, info, *, split: str = "val", batch_size: int = 1000,
            precision: str = "float32", device: torch.device | None = None) -> torch.Tensor:
    """float32 logits of ``x`` in eval mode, in chunks of ``batch_size`` (stays on device)."""
    device = device or next(model.parameters()).device
    model.eval()
    out = []
    for i in range(0, x.shape[0], batch_size):
        xb = prepare(x[i:i + batch_size].to(device), info, split=split)
        out.append(forward_logits(model, xb, device, precision))
    return torch.cat(out) if out else torch.zeros(0, device=device)


def fc_weight_norm(model) -> float:
    """L2 (Frobenius) norm of the last linear layer's weight (Mukhoti et al., Fig. 3h)."""
    return float(model.fc.weight.detach().float().norm())


def last_layer_grad_norms(model, loss, x: torch.Tensor, y: torch.Tensor, info, *, batch_size: int = 1000,
                          precision: str = "float32", return_logits: bool = False):
    """Per-sample norms ``||dL_i/dW||_F = ||dL_i/dz_i|| * ||h_i||`` of the last layer's weight.

    Each chunk's loss is differentiated with respect to its logits; for a summed loss that
    is ``dL_i/dz_i`` per sample (a mean-reduced loss is rescaled by the chunk size, so the
    norms are those of the per-sample terms). Losses coupling the samples of a batch
    (MMCE) are taken over chunks of ``batch_size``. Eval mode, no augmentation. With
    ``return_logits`` also the float32 logits ``fc(features(x))`` of the same pass.
    """
    device = next(model.parameters()).device
    model.eval()
    scale_mean = loss_reduction(loss) == "mean"
    norms, logits = [], []
    for i in range(0, x.shape[0], batch_size):
        xb = prepare(x[i:i + batch_size].to(device), info, split="train")
        yb = y[i:i + batch_size].to(device)
        with torch.no_grad():
            with autocast(device, precision):
                h = model.features(xb)
            h = h.float()
            z = model.fc(h)  # float32 head, as in training (forward_logits)
        z = z.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(loss(z, yb), z)
        if scale_mean:
            g = g * z.shape[0]
        norms.append(g.norm(dim=1) * h.float().flatten(1).norm(dim=1))
        logits.append(z.detach())
    return (torch.cat(norms), torch.cat(logits)) if return_logits else torch.cat(norms)


def norm_histogram(norms) -> dict:
    """``counts`` of ``log10(norms)`` over the fixed edges :data:`GRAD_LOG10_EDGES` (values
    outside clipped into the end bins; the edges are not repeated in every epoch's record),
    and the ``mean`` and ``median`` norm."""
    v = torch.as_tensor(norms).double().cpu().numpy()
    logv = np.log10(np.clip(v, 10 ** GRAD_LOG10_EDGES[0], 10 ** GRAD_LOG10_EDGES[-1]))
    counts, _ = np.histogram(logv, bins=GRAD_LOG10_EDGES)
    return {"counts": counts.tolist(), "mean": float(v.mean()), "median": float(np.median(v))}


def grad_norm_histogram(model, loss, x: torch.Tensor, y: torch.Tensor, info, *, batch_size: int = 1000,
                        precision: str = "float32") -> dict:
    """:func:`norm_histogram` of :func:`last_layer_grad_norms` over ``x`` (Mukhoti et al., Fig. 4b-d)."""
    return norm_histogram(last_layer_grad_norms(model, loss, x, y, info, batch_size=batch_size,
                                                precision=precision))


def split_summary(logits: torch.Tensor, labels: torch.Tensor) -> dict:
    """Calibration metrics plus Mukhoti et al.'s Figure-3 summaries of one split.

    ``nll``/``entropy``/``p_true`` over all samples and separately over the correctly
    (``_correct``) and incorrectly (``_incorrect``) classified ones (NaN when a group is
    empty), the mean top-1 ``confidence``, and everything :func:`replicate.metrics.evaluate`
    returns (error, ECE, AdaECE, classwise ECE, MCE, Brier).
    """
    from .. import metrics

    logits = logits.detach().float()
    labels = labels.to(logits.device)
    logp = torch.log_softmax(logits, dim=1)
    p = logp.exp()
    nll = -logp.gather(1, labels[:, None]).squeeze(1)
    entropy = -(p * logp).sum(1)
    p_true = p.gather(1, labels[:, None]).squeeze(1)
    correct = logits.argmax(1) == labels

    def mean(v, mask=None):
        v = v if mask is None else v[mask]
        return float(v.mean()) if v.numel() else math.nan

    out = {}
    for name, v in (("nll", nll), ("entropy", entropy), ("p_true", p_true)):
        out[name] = mean(v)
        out[f"{name}_correct"] = mean(v, correct)
        out[f"{name}_incorrect"] = mean(v, ~correct)
    out["confidence"] = mean(p.max(1).values)
    ev = metrics.evaluate(logits.cpu().numpy(), labels.cpu().numpy())
    out.update({k: float(v) for k, v in ev.items() if np.ndim(v) == 0})
    return out


#: Bins of the training-set reliability diagrams of Mukhoti et al. (2020), Figure 2.
TRAIN_RELIABILITY_BINS = 25


def train_reliability(logits: torch.Tensor, labels: torch.Tensor, n_bins: int = TRAIN_RELIABILITY_BINS) -> dict:
    """Training-set reliability statistics (Mukhoti et al., Fig. 2): per equal-width bin of the
    top-1 confidence, its edges, sample count, accuracy and mean confidence (NaN when empty)."""
    from .. import metrics

    bins = metrics.reliability_bins(metrics.probs_from_logits(logits.detach().float().cpu().numpy()),
                                    labels.cpu().numpy(), n_bins=n_bins, validate=False)
    return {"edges": bins.edges.tolist(), "count": bins.count.tolist(), "accuracy": bins.accuracy.tolist(),
            "confidence": bins.mean_confidence.tolist()}



#: Equal-mass validation bins of AdaFocal (Ghosh et al. 2022), recorded every epoch with
#: ``eval_every_epoch`` for any loss (their Fig. 1, Fig. 2(b), Fig. 9 and 12).
VALIDATION_BINS = 15


@torch.no_grad()
def validation_bins(val_logits: torch.Tensor, val_labels: torch.Tensor, train_logits: torch.Tensor | None = None,
                    train_labels: torch.Tensor | None = None, n_bins: int = VALIDATION_BINS) -> dict:
    """Per equal-mass bin of the validation top-1 confidence, binned exactly as the AdaFocal
    loss bins it (:func:`replicate.losses.gamma_bins.equal_mass_edges`, inclusive rule):
    ``edges``, ``count``, mean confidence ``confidence`` (C_val) and ``accuracy`` (A_val),
    NaN for an empty bin; the paper's gap is ``E_val = C_val - A_val`` (Ghosh et al. 2022,
    Sec. 3). With training logits, also the training samples grouped by the same edges on
    the probability of their true class ("common binning", Sec. 4): ``train_count`` and
    ``train_confidence`` (C_train, mean p_true)."""
    from ..losses.gamma_bins import assign_bins, bin_statistics, equal_mass_edges

    p = torch.softmax(val_logits.detach().double(), dim=1)
    conf, pred = p.max(dim=1)
    edges = equal_mass_edges(conf, n_bins)
    count, cmean, amean = bin_statistics(conf, pred == val_labels.to(pred.device), edges, "inclusive")
    out = {"edges": edges, "count": count, "confidence": cmean, "accuracy": amean}
    if train_logits is not None and train_labels is not None:
        pt = torch.softmax(train_logits.detach().double(), dim=1).gather(
            1, train_labels.to(train_logits.device).long()[:, None]).squeeze(1)
        idx = assign_bins(pt, edges.to(pt.device), "inclusive")
        z = torch.zeros(n_bins, dtype=torch.float64, device=pt.device)
        tc, ts = z.scatter_add(0, idx, torch.ones_like(pt)), z.scatter_add(0, idx, pt)
        out["train_count"] = tc
        out["train_confidence"] = torch.where(tc > 0, ts / tc.clamp_min(1), torch.full_like(tc, float("nan")))
    return {k: v.cpu().numpy().tolist() for k, v in out.items()}
