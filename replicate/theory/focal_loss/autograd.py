"""Prop. 1 of Mukhoti et al. 2020 ({cite}`mukhoti2020focal`) checked by autograd on a real network.

- :func:`prop1_batch`: the book's small CNN (``tiny_cnn``, untrained) with random images
  whose scale varies over three decades (the network is positively homogeneous, so the
  scale spreads the predicted probabilities over (0, 1)) and labels that are the
  predicted class for half of the images and random for the other half;
- :func:`gradient_factor_autograd`: per-sample gradients of focal loss and cross-entropy
  (``torch.autograd``), for the last layer (the paper's statement) or every parameter.
"""
from __future__ import annotations

from ... import checks

__all__ = ["prop1_batch", "gradient_factor_autograd"]


def prop1_batch(n: int, seed: int = 0, num_classes: int = 10):
    """``(model, x, y)``: ``tiny_cnn`` (untrained, eval mode) and ``n`` random 32x32 images.

    Image ``i`` is ``10^(3 i/(n-1))`` times standard normal noise (``torch.manual_seed(seed)``);
    the labels of even ``i`` are the model's predicted class, those of odd ``i`` random.
    """
    import torch

    from replicate.models import get_model

    n = checks.positive_int("n", n, lo=2)
    torch.manual_seed(seed)
    net = get_model("tiny_cnn", num_classes=num_classes).eval()
    x = torch.logspace(0, 3, n)[:, None, None, None] * torch.randn(n, 3, 32, 32)
    with torch.no_grad():
        y = net(x).argmax(1)
    y[1::2] = torch.randint(0, num_classes, (n // 2,))
    return net, x, y


def gradient_factor_autograd(model, x, y, gamma: float, *, params: str = "fc") -> dict:
    """Per-sample gradients of focal loss and CE by autograd (the Prop. 1 check).

    The model must expose ``model.features(x)`` (penultimate features) and ``model.fc``
    (the last ``nn.Linear``) with ``model(x) == model.fc(model.features(x))``. Works on a
    float64 copy in eval mode. For every sample ``n`` it differentiates
    ``-(1-p)^gamma log p`` and ``-log p`` (``p = softmax(model(x_n))[y_n]``) with respect to
    the fc weight and bias (``params="fc"``, the paper's statement) or every parameter of
    the network (``params="all"``).

    Returns a dict of numpy arrays: ``grad_focal`` and ``grad_ce`` (shape (N, P), flattened
    gradients), ``p`` (N,) and ``ratio`` = ``<grad_focal, grad_ce> / |grad_ce|^2`` (N,).
    """
    import copy

    import torch

    if params not in ("fc", "all"):
        raise ValueError(f"params must be 'fc' or 'all', got {params!r}")
    gamma = float(checks.gammas(gamma))
    net = copy.deepcopy(model).double().eval()
    x = torch.as_tensor(x).double()
    y = torch.as_tensor(y).long()
    with torch.no_grad():
        feats = net.features(x)
        full = net(x)
        if not torch.allclose(net.fc(feats), full, rtol=1e-9, atol=1e-9):
            raise ValueError("model must satisfy model(x) == model.fc(model.features(x))")
    module, inputs = (net.fc, feats) if params == "fc" else (net, x)
    names, prm = zip(*sorted(module.named_parameters()))

    def per_sample(i: int):  # one backward pass per loss and sample: plain autograd, no torch.func warm-up
        lp = torch.log_softmax(module(inputs[i:i + 1])[0], -1)[y[i]]
        out = []
        for value in (-(1.0 - lp.exp()) ** gamma * lp, -lp):
            grads = torch.autograd.grad(value, prm, retain_graph=True)
            out.append(torch.cat([g.reshape(-1) for g in grads]))
        return out

    g_f, g_c = (torch.stack(v) for v in zip(*(per_sample(i) for i in range(len(y)))))
    with torch.no_grad():
        p = torch.softmax(full, -1).gather(1, y[:, None])[:, 0]
    ratio = (g_f * g_c).sum(1) / (g_c * g_c).sum(1)
    return {"grad_focal": g_f.detach().numpy(), "grad_ce": g_c.detach().numpy(), "p": p.numpy(),
            "ratio": ratio.detach().numpy()}
