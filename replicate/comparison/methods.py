"""Every training method of the five papers, under one set of keys.

A :class:`Method` is a key, a label, a loss of :mod:`replicate.losses` and its
parameters. The keys are shared by our runs and by the papers' printed tables
(:mod:`replicate.paper_tables` uses the same keys for the same method), so that a chapter,
the leaderboard and the claims compare like with like. A method whose parameters depend
on the network (Dual Focal Loss's gamma, FCL's (gamma, lambda)) holds them per
``(dataset, model)``, with a stated default for networks the paper did not train.

:data:`METHODS` is the catalogue; chapters choose from it (e.g.
:data:`replicate.experiments.focal_loss.plan.METHOD_KEYS`). A variant for an ablation is made with
:meth:`Method.variant`, never by copying a method.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pandas as pd


@dataclass(frozen=True)
class Method:
    """A training method: ``key`` (as in the paper tables), ``label``, ``loss`` and its
    ``loss_params``; ``text_loss_params`` replace them on text data; ``per_model`` maps
    ``(dataset, model)`` to parameters that override them for that network (``default_note``
    says what is used elsewhere); ``paper_key`` is the key of the printed method it is
    compared with (default: its own key); ``note`` says where the method comes from."""

    key: str
    label: str
    loss: str
    loss_params: dict = field(default_factory=dict)
    text_loss_params: dict | None = None
    per_model: dict = field(default_factory=dict)
    default_note: str = ""
    paper_key: str | None = None
    note: str = ""

    def params(self, kind: str = "image", dataset: str | None = None, model: str | None = None) -> dict:
        """The loss parameters on ``kind`` ("image" or "text") data, for ``(dataset, model)``."""
        if kind not in ("image", "text"):
            raise ValueError(f"kind must be 'image' or 'text'; got {kind!r}")
        chosen = self.text_loss_params if kind == "text" and self.text_loss_params is not None else self.loss_params
        return {**chosen, **self.per_model.get((dataset, model), {})}

    def params_note(self, dataset: str | None = None, model: str | None = None) -> str:
        """Where the parameters for ``(dataset, model)`` come from ("" when not network-specific)."""
        if not self.per_model:
            return ""
        return "per the paper for this network" if (dataset, model) in self.per_model else self.default_note

    @property
    def short(self) -> str:
        """The label without the bracketed alias ("FLSD-53 (FLA-53)" -> "FLSD-53")."""
        return self.label.split(" (")[0]

    @property
    def compared_with(self) -> str:
        """The key of the printed method this one is compared with."""
        return self.paper_key or self.key

    def variant(self, key: str, label: str, **loss_params) -> "Method":
        """The same method with some loss parameters changed (for an ablation row)."""
        return dataclasses.replace(self, key=key, label=label, loss_params={**self.loss_params, **loss_params},
                                   paper_key=None)


def _focal(gamma: float) -> Method:
    g = f"{gamma:g}"
    return Method(f"fl{g}", f"FL-{g}", "focal", {"gamma": float(gamma)}, note="focal loss, fixed gamma")


#: Dual Focal Loss gammas per network, from the authors' README (the book's page "The authors' code").
_DFL = {("cifar10", "resnet50"): 5.0, ("cifar10", "resnet110"): 4.5, ("cifar10", "wide_resnet26_10"): 2.6,
        ("cifar10", "densenet121"): 5.0, ("cifar100", "resnet50"): 5.0, ("cifar100", "resnet110"): 6.1,
        ("cifar100", "wide_resnet26_10"): 3.9, ("cifar100", "densenet121"): 3.4,
        ("tiny_imagenet", "resnet50"): 2.3}

#: AdaDualFocal's initial gamma and lambda per network, read from the names of the experiment
#: folders in the DFL authors' repository (``exp/cifar10_resnet50_adadualfocal_gamma6_lamda2``,
#: ``..._resnet110_..._gamma7_lamda2``, ``..._densenet121_..._gamma6_lamda1``,
#: ``..._wide_resnet_..._gamma5_lamda0.1``); the paper prints none (Sec. 5.2, Table 3).
_ADADUAL = {("cifar10", "resnet50"): {"gamma_init": 6.0, "lam": 2.0},
            ("cifar10", "resnet110"): {"gamma_init": 7.0, "lam": 2.0},
            ("cifar10", "densenet121"): {"gamma_init": 6.0, "lam": 1.0},
            ("cifar10", "wide_resnet26_10"): {"gamma_init": 5.0, "lam": 0.1}}


def _fcl_per_model() -> dict:
    """FCL's (gamma, lambda) per ``(dataset, model)`` as printed in Liang et al., App. A.10
    (``replicate.paper_tables``, liang2024 ``PAPER["parameter_tables"]``), read from the
    stored table so that the numbers are typed once."""
    from .. import paper_tables

    (table,) = set(paper_tables.paper_info("liang2024")["parameter_tables"]["gamma"])
    df = paper_tables.get("liang2024", table)
    out: dict = {}
    for r in df.itertuples(index=False):
        out.setdefault((r.dataset_key, r.model_key), {})["gamma" if r.metric == "gamma" else "lam"] = float(r.value)
    return out


METHODS: dict[str, Method] = {m.key: m for m in (
    # Mukhoti et al. (2020), Sec. 5 and Appendix E
    Method("cross_entropy", "Cross Entropy", "cross_entropy",
           note="Tao et al. call it the weight-decay baseline"),
    Method("brier", "Brier Loss", "brier"),
    Method("mmce", "MMCE", "mmce", {"lam": 2.0}, {"lam": 8.0}, note="lambda 2 on images, 8 on text (App. D)"),
    Method("ls005", "LS-0.05", "label_smoothing", {"smoothing": 0.05}),
    *(_focal(g) for g in (1, 2, 3, 4, 5, 7)),
    Method("fls531", "FLS-531", "fls531"),
    Method("fls532", "FLS-532", "fls532"),
    Method("flsd53", "FLSD-53 (FLA-53)", "flsd53"),
    Method("flsd532", "FLSD-532 (FLA-532)", "flsd532"),
    # Ghosh et al. (2022)
    Method("adafocal_paper", "AdaFocal (Eq. 4)", "adafocal", {"variant": "paper"}, paper_key="adafocal",
           note="the ICLR 2022 submission's rule: gamma <- min(20, gamma exp(E)), no sign switch"),
    Method("adafocal_code", "AdaFocal (authors' code)", "adafocal", {"variant": "code"}, paper_key="adafocal",
           note="the authors' final code: lambda 1, gamma in [-2, 20], inverse focal below |gamma| 0.2"),
    Method("calfocal1_l10", "CalFocal Eq. 1, λ=10", "calfocal", {"case": 1, "lam": 10.0}),
    Method("calfocal1_l100", "CalFocal Eq. 1, λ=100", "calfocal", {"case": 1, "lam": 100.0}),
    Method("calfocal2_l10", "CalFocal Eq. 2, λ=10", "calfocal", {"case": 2, "lam": 10.0}),
    Method("calfocal2_l100", "CalFocal Eq. 2, λ=100", "calfocal", {"case": 2, "lam": 100.0}),
    # Tao et al. (2023)
    Method("inverse_focal", "Inverse FL", "inverse_focal", {"gamma": 1.0},
           note="Wang et al. (2021); gamma 1 is our choice: Tao et al. tune it 'on the split validation set' "
                "(Sec. 5, Baselines) and print no value, and their released code has no inverse focal loss"),
    Method("dual_focal", "DFL", "dual_focal", {"gamma": 5.0}, per_model={k: {"gamma": v} for k, v in _DFL.items()},
           default_note="gamma 5, the paper's CIFAR-10 ResNet-50 value (the paper did not train this network)"),
    Method("adadual_focal", "AdaDualFocal", "adadual_focal", per_model=_ADADUAL,
           default_note="initial gamma 1, lambda 1 (AdaFocal's defaults; the paper prints no values)",
           note="AdaFocal's per-bin gammas (Eq. 4 update, gamma_max 20) on the dual focal loss, training samples "
                "binned by the margin p_y - p_j (Tao et al., Sec. 5.2; the authors' code)"),
    # Liang et al. (2024)
    Method("fcl", "FCL", "fcl", {"gamma": 2.0, "lam": 1.0}, per_model=_fcl_per_model(),
           default_note="gamma 2, lambda 1, the authors' latest public configuration (see the book's page on "
                        "the authors' code): the paper did not train this network, and its App. A.10 values were picked per network by the "
                        "best calibration error, not by a rule that transfers"),
)}


def resolve_methods(keys, allowed=None) -> list[Method]:
    """The methods named by ``keys`` (all of ``allowed``, default every method, for None),
    from :data:`METHODS`; unknown or repeated keys are refused with the allowed list."""
    allowed = list(METHODS) if allowed is None else list(allowed)
    if keys is None:
        return [METHODS[k] for k in allowed]
    keys = [keys] if isinstance(keys, str) else list(keys)
    if not keys:
        raise ValueError(f"methods must name at least one method; allowed methods: {', '.join(allowed)}")
    unknown = [k for k in keys if k not in allowed]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; allowed methods: {', '.join(allowed)}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"methods must not repeat a method; got {keys}")
    return [METHODS[k] for k in keys]


def methods_frame(methods, kind: str = "image", dataset: str | None = None, model: str | None = None
                  ) -> pd.DataFrame:
    """The methods as a table: key, label, loss and its parameters on ``kind`` data for
    ``(dataset, model)``, and where network-specific parameters come from."""
    def show(v):
        return f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    rows = [{"key": m.key, "method": m.label, "loss": m.loss,
             "parameters": ", ".join(f"{k}={show(v)}" for k, v in m.params(kind, dataset, model).items()) or "–",
             "note": m.params_note(dataset, model) or m.note} for m in methods]
    return pd.DataFrame(rows)


def short(key: str) -> str:
    """The short label of a method key ("flsd53" -> "FLSD-53"); the key when unknown."""
    return METHODS[key].short if key in METHODS else key
